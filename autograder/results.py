"""What grading produces for one student, and the files it is written to.

`results.json` follows Gradescope's results format (score, tests with name, score, max_score,
status, output, visibility), with AttnLab's status, tampering findings and notes under
`extra_data`. Each test name starts with its graded name ("softmax: ..."). The grades table
(`grades/<assignment>.csv`) has one row per student: status, total, one column per part and
per hand-graded cell, lateness, and what needs a human.

Scores shown anywhere come from nbgrader's gradebook (`Result.recorded`, see gradebook.py) once
the submission is recorded there: a human's score or extra credit replaces the part's checks'
sum, and the late penalty is taken off the total, as `nbgrader export` does.
"""
import csv
import json
from dataclasses import dataclass, field
from pathlib import Path

from .checks import CheckResult, PartResult
from .messages import points
from .text import NOTE_LIMIT, csv_cell, shown

STATUSES = ("graded", "partly graded", "unreadable", "missing", "error", "busy")
UNRECORDED = ("error", "busy")      # not graded: the grader failed, or the machine was too busy


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
    digest: str = ""                                    # of the graded submission (course.digest)
    work_digest: str = ""                               # of the student's work in it (course.work_digest)
    recorded: dict = field(default_factory=dict)        # the gradebook's grades (gradebook.recorded)
    cells: list = field(default_factory=list)           # cells that hit a limit or could not run
    assignment_points: float = 0.0                      # the gradebook's, for a student with nothing recorded
    charged: float = 0.0                                # seconds charged to its time budget (`budget`)

    def __post_init__(self):
        """Every text a student's files or code could have put in is bounded and shown safely
        (`text.shown`), wherever it goes from here."""
        self.notes, self.tampering, self.cells = (
            [shown(t, NOTE_LIMIT) for t in texts] for texts in (self.notes, self.tampering, self.cells))
        for part in self.parts:
            for check in part.checks:
                check.message = shown(check.message, NOTE_LIMIT)

    @property
    def score(self) -> float:
        return self.recorded["score"] if self.recorded else sum(p.score for p in self.parts)

    @property
    def max_score(self) -> float:
        if self.recorded:
            return self.recorded["max_score"]
        return self.assignment_points or sum(p.max_score for p in self.parts)

    @property
    def late_penalty(self) -> float:
        return self.recorded.get("late_penalty", 0.0)

    @property
    def seconds_late(self) -> float:
        return self.recorded.get("seconds_late", 0.0)

    def part_score(self, part) -> float:
        """The part's score in the gradebook (a human's score wins), else its checks' sum."""
        cell = self.recorded.get("cells", {}).get(f"test_{part.name}")
        return part.score if cell is None else cell["score"]

    def adjustment(self, part) -> str:
        """What a human changed of `part`'s score in the gradebook, in words ('' if nothing)."""
        cell = self.recorded.get("cells", {}).get(f"test_{part.name}") or {}
        manual, extra = cell.get("manual_score"), cell.get("extra_credit") or 0.0
        said = ([f"set this part's score to {points(manual)}"] if manual is not None else []) + \
               ([f"added {points(extra)} point{'s' * (extra != 1)} of extra credit"] if extra else [])
        return f"The instructor {' and '.join(said)}" if said else ""

    def comment(self, name: str) -> str:
        return self.recorded.get("comments", {}).get(name, "")

    def hand_graded(self) -> dict:
        """{grade_id: gradebook cell} of the cells graded by hand (written answers)."""
        return {name: cell for name, cell in self.recorded.get("cells", {}).items()
                if not name.startswith("test_")}

    def attention(self) -> list:
        """The problems but the written answers still to grade, which formgrader lists anyway."""
        return [p for p in self.problems() if not p.startswith("to grade by hand")]

    def problems(self) -> list:
        """Why a human should look: parts not fully run, tampering, unreadable or missing,
        cells still to be graded by hand."""
        if self.status in ("unreadable", "missing", *UNRECORDED):
            found = [f"{self.status}: {self.notes[0]}" if self.notes else self.status]
        else:
            found = [f"{p.name}: {p.status}" for p in self.parts if p.status != "graded"]
            if self.tampering:
                found.append(f"tampering ({len(self.tampering)})")
            found += [f"cell: {problem}" for problem in self.cells]
            pending = [name for name, cell in self.hand_graded().items()
                       if cell["needs_manual_grade"] and cell["manual_score"] is None]
            if pending:
                found.append(f"to grade by hand: {', '.join(sorted(pending))}" if len(pending) <= 3
                             else f"to grade by hand: {len(pending)} written answers")
        review = sorted(name for name, cell in self.recorded.get("cells", {}).items()
                        if cell["needs_manual_grade"] and cell["manual_score"] is not None)
        if review:
            found.append(f"to review by hand (scored before a resubmission): {', '.join(review)}")
        return found


def ungraded(student: str, assignment: str, suite, status: str, reason: str) -> Result:
    """A result with every check 'not run' (unreadable, missing, internal error)."""
    parts = [PartResult(name, [CheckResult(name, c.title, 0.0, c.points, "not run", reason)
                               for c in part.checks], status=status)
             for name, part in suite.parts.items()]
    return Result(student, assignment, status, parts, notes=[reason])


def late_text(result: Result) -> str:
    """'' when on time, else how late and the penalty."""
    if result.seconds_late <= 0:
        return ""
    hours, rest = divmod(round(result.seconds_late), 3600)
    late = f"{hours} h {rest // 60} min late" if hours else f"{rest // 60} min {rest % 60} s late"
    return late + (f", penalty {points(result.late_penalty)}" if result.late_penalty else ", no penalty")


def _test(name: str, score: float, max_score: float, output: str, tags: list, passed: bool) -> dict:
    return {"name": name, "score": score, "max_score": max_score, "status": "passed" if passed else "failed",
            "output": output, "visibility": "visible", "tags": tags}


def _tests(result: Result) -> list:
    """One test per check; then what the gradebook changed: a human's score for a part, the
    hand-graded cells, the late penalty (so the tests add up to the total)."""
    tests = []
    for p in result.parts:
        tests += [_test(f"{c.part}: {c.title}", c.score, c.max_score, _output(c),
                        [c.part] + (["not run"] if c.status == "not run" else []), c.status == "passed")
                  for c in p.checks]
        said = result.adjustment(p)
        if said:
            tests.append(_test(f"{p.name}: changed by the instructor", result.part_score(p) - p.score, 0,
                               "\n".join(filter(None, (said + ".", result.comment(p.name)))),
                               [p.name, "manual"], True))
    for name, cell in sorted(result.hand_graded().items()):
        tests.append(_test(f"{name}: graded by hand", cell["score"], cell["max_score"] or 0,
                           cell["comment"], [name, "manual"], cell["score"] >= (cell["max_score"] or 0)))
    if result.late_penalty:
        tests.append(_test("late penalty", -result.late_penalty, 0, late_text(result), ["late"], False))
    return tests


def to_json(result: Result) -> dict:
    tests = _tests(result)
    summary = [f"Status: {result.status}. Score: {points(result.score)} / {points(result.max_score)}."]
    summary += [f"Late: {late_text(result)}."] if late_text(result) else []
    summary += [f"Tampering: {t}" for t in result.tampering] + [f"Cell: {c}" for c in result.cells]
    summary += [f"Note: {n}" for n in result.notes]
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
            "tampering": result.tampering, "notes": result.notes, "digest": result.digest,
            "work_digest": result.work_digest, "recorded": result.recorded, "cells": result.cells,
            "charged_seconds": round(result.charged, 3),
            "parts": [{"name": p.name, "score": p.score, "max_score": p.max_score, "status": p.status,
                       "checks": [dict(vars(c)) for c in p.checks]} for p in result.parts],   # flat
        },
    }


def from_json(data: dict) -> Result:
    extra = data["extra_data"]
    parts = [PartResult(p["name"], [CheckResult(**c) for c in p["checks"]], p["status"]) for p in extra["parts"]]
    return Result(extra["student"], extra["assignment"], extra["status"], parts, extra["tampering"],
                  extra["notes"], data.get("execution_time", 0.0), extra["sandbox"], extra["timestamp"],
                  extra.get("digest", ""), extra.get("work_digest", ""), extra.get("recorded", {}),
                  extra.get("cells", []), charged=extra.get("charged_seconds", 0.0))


def _output(check: CheckResult) -> str:
    lines = [check.message] if check.message else []
    if check.diagnosis:
        lines.append(f"Likely cause: {check.diagnosis}")
    return "\n".join(lines)


def json_text(result: Result) -> str:
    """results.json's text: one line (the C encoder; with indentation, Python's takes 5x as long)."""
    return json.dumps(to_json(result), ensure_ascii=False) + "\n"


def _one_line(text: str) -> str:
    """Student text (an error message) on one line: a row per student, also for `grep`."""
    return " ".join(text.split())


def read_json(path: Path) -> Result:
    return from_json(json.loads(Path(path).read_text()))


def write_csv(path: Path, results: list, part_names: list) -> None:
    """The grades table (grades/<assignment>.csv), written to a temporary file and moved into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    by_hand = sorted({name for r in results for name in r.hand_graded()})
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["student_id", "status", "score", "max_score", *part_names, *by_hand,
                      "timestamp", "late_penalty", "late", "needs_attention"])
        for r in sorted(results, key=lambda r: r.student):
            parts = {p.name: r.part_score(p) for p in r.parts}
            cells = {name: cell["score"] for name, cell in r.hand_graded().items()
                     if cell["manual_score"] is not None or cell["auto_score"] is not None}
            out.writerow([csv_cell(r.student), r.status, points(r.score), points(r.max_score),
                          *(points(parts.get(n, 0.0)) for n in part_names),
                          *(points(cells[n]) if n in cells else "" for n in by_hand),
                          csv_cell(r.timestamp), points(r.late_penalty), late_text(r),
                          csv_cell(_one_line("; ".join(r.problems())), limit=4 * NOTE_LIMIT)])
    tmp.replace(path)
