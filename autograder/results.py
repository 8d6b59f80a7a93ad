"""What grading produces for one student, and the files it is written to.

`results.json` follows Gradescope's results format (score, tests with name, score, max_score,
status, output, visibility), with AttnLab's status, tampering findings and notes under
`extra_data`. Each test name starts with its graded name ("softmax: ..."). `grades.csv` has
one row per student: status, total, one column per part, and what needs a human.
"""
import csv
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .checks import CheckResult, PartResult
from .messages import points

STATUSES = ("graded", "partly graded", "unreadable", "missing", "error")


@dataclass
class Result:
    student: str
    assignment: str
    status: str
    parts: list
    tampering: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    seconds: float = 0.0
    sandbox: str = ""
    timestamp: str = ""

    @property
    def score(self) -> float:
        return sum(p.score for p in self.parts)

    @property
    def max_score(self) -> float:
        return sum(p.max_score for p in self.parts)

    def problems(self) -> list:
        """Why a human should look: parts not fully run, tampering, unreadable or missing."""
        if self.status in ("unreadable", "missing", "error"):
            return [f"{self.status}: {self.notes[0]}" if self.notes else self.status]
        found = [f"{p.name}: {p.status}" for p in self.parts if p.status != "graded"]
        if self.tampering:
            found.append(f"tampering ({len(self.tampering)})")
        return found


def ungraded(student: str, assignment: str, suite, status: str, reason: str) -> Result:
    """A result with every check 'not run' (unreadable, missing, internal error)."""
    parts = [PartResult(name, [CheckResult(name, c.title, 0.0, c.points, "not run", reason)
                               for c in part.checks], status=status)
             for name, part in suite.parts.items()]
    return Result(student, assignment, status, parts, notes=[reason])


def to_json(result: Result) -> dict:
    tests = [{"name": f"{c.part}: {c.title}", "score": c.score, "max_score": c.max_score,
              "status": "passed" if c.status == "passed" else "failed",
              "output": _output(c), "visibility": "visible",
              "tags": [c.part] + ([] if c.status != "not run" else ["not run"])}
             for p in result.parts for c in p.checks]
    summary = [f"Status: {result.status}. Score: {points(result.score)} / {points(result.max_score)}."]
    summary += [f"Tampering: {t}" for t in result.tampering] + [f"Note: {n}" for n in result.notes]
    return {
        "score": result.score,
        "execution_time": round(result.seconds, 3),
        "output": "\n".join(summary),
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
        "extra_data": {
            "student": result.student, "assignment": result.assignment, "status": result.status,
            "max_score": result.max_score, "sandbox": result.sandbox, "timestamp": result.timestamp,
            "tampering": result.tampering, "notes": result.notes,
            "parts": [{"name": p.name, "score": p.score, "max_score": p.max_score, "status": p.status,
                       "checks": [asdict(c) for c in p.checks]} for p in result.parts],
        },
    }


def from_json(data: dict) -> Result:
    extra = data["extra_data"]
    parts = [PartResult(p["name"], [CheckResult(**c) for c in p["checks"]], p["status"]) for p in extra["parts"]]
    return Result(extra["student"], extra["assignment"], extra["status"], parts, extra["tampering"],
                  extra["notes"], data.get("execution_time", 0.0), extra["sandbox"], extra["timestamp"])


def _output(check: CheckResult) -> str:
    lines = [check.message] if check.message else []
    if check.diagnosis:
        lines.append(f"Likely cause: {check.diagnosis}")
    return "\n".join(lines)


def write_json(path: Path, result: Result) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(to_json(result), indent=1, ensure_ascii=False) + "\n")


def read_json(path: Path) -> Result:
    return from_json(json.loads(Path(path).read_text()))


def write_csv(path: Path, results: list, part_names: list) -> None:
    with open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["student_id", "status", "score", "max_score", *part_names, "needs_attention"])
        for r in sorted(results, key=lambda r: r.student):
            by_name = {p.name: p.score for p in r.parts}
            out.writerow([r.student, r.status, points(r.score), points(r.max_score),
                          *(points(by_name.get(n, 0.0)) for n in part_names), "; ".join(r.problems())])
