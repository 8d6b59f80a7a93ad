"""What grading produces for one student, and the files it is written to.

`results.json` is Gradescope's results format, in one layout for `attnlab grade` and for the
Gradescope bundle (`to_json`): test `N` is part N with its score (a human's score and extra credit
included), tests `N.M` are its checks, without a score of their own (so that the scored tests add
up to the total before any late penalty), then one test per written answer (scored once graded
by hand, else without a score) and, for a late submission, a test without a score that explains
the penalty: the top-level `score` is the total after it. AttnLab's status, tampering findings
and notes are under `extra_data`. Each test name starts with its graded name ("softmax: ...").
The grades table (`grades/<assignment>.csv`) has one row per student: status, total, one column
per part and per hand-graded cell (their scores without extra credit), the extra credit,
lateness, and what needs a human.

Scores shown anywhere come from nbgrader's gradebook (`Result.recorded`, see gradebook.py) once
the submission is recorded there: a human's score or extra credit replaces the part's checks'
sum, and the late penalty is taken off the total, as `nbgrader export` does.
"""
import csv
import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
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
    late_unknown: bool = False                          # the LMS marks it late without its time
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

    def extra_credit(self, cell: str | None = None) -> float:
        """The extra credit a human gave in the gradebook, to `cell` or in all."""
        cells = self.recorded.get("cells", {})
        return sum((cells[name].get("extra_credit") or 0.0) for name in ([cell] if cell else cells) if name in cells)

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
            if self.late_unknown and not self.timestamp:
                found.append("late, time unknown")
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


LATE_UNKNOWN = "late by the LMS's mark, time unknown: no penalty (put the time in timestamp.txt and grade again)"


def late_text(result: Result) -> str:
    """'' when on time, else how late and the penalty."""
    if result.late_unknown and not result.timestamp:
        return LATE_UNKNOWN
    if result.seconds_late <= 0:
        return ""
    hours, rest = divmod(round(result.seconds_late), 3600)
    late = f"{hours} h {rest // 60} min late" if hours else f"{rest // 60} min {rest % 60} s late"
    return late + (f", penalty {points(result.late_penalty)}" if result.late_penalty else ", no penalty")


DETAILS_WORDS = {"visible": "below", "after_due_date": "shown after the due date",
                 "after_published": "shown once grades are published", "hidden": "not shown"}
ANSWER_CHARACTERS = 4000      # of a written answer quoted in a test's output


def to_json(result: Result, details: str = "visible", visibility: str = "visible", written=None) -> dict:
    """results.json in Gradescope's format (see the module's docstring). `details`: the checks'
    visibility; `visibility`: the whole result's (Gradescope's top-level setting); `written`:
    {grade_id: (question, answer, points)} of written answers that no gradebook holds (on
    Gradescope they are graded by hand in questions of their own)."""
    tests = []
    for i, part in enumerate(result.parts, 1):
        tests.append(_part_test(result, part, str(i), details))
        tests += [{"number": f"{i}.{j}", "name": f"{c.part}: {c.title}", "status": _passed(c.status == "passed"),
                   "output": _output(c), "visibility": details,
                   "tags": [c.part] + (["not run"] if c.status == "not run" else [])}
                  for j, c in enumerate(part.checks, 1)]
    number = len(result.parts)
    for name, cell in sorted(result.hand_graded().items()):
        number += 1
        tests.append(_written_test(str(number), name, cell))
    for name, (question, answer, points_) in sorted((written or {}).items()):
        number += 1
        tests.append({"number": str(number), "name": f"{question}: written answer ({points(points_)} points)",
                      "output": "Graded by hand, in a question of its own. The answer:\n"
                                + (shown(answer.strip(), ANSWER_CHARACTERS) or "(empty)"),
                      "visibility": "hidden", "tags": [name, "written"]})
    if result.late_penalty:
        tests.append({"number": str(number + 1), "name": f"late penalty: {points(result.late_penalty)} points",
                      "output": f"{late_text(result)}. The tests above add up to {points(result.recorded['raw_score'])}; "
                                f"the score, {points(result.score)}, is after the penalty.",
                      "visibility": "visible", "tags": ["late"]})
    return {
        "score": result.score,
        "execution_time": round(result.seconds, 3),
        "output": _summary(result),
        "visibility": visibility,
        "stdout_visibility": "hidden",
        "tests": tests,
        "extra_data": {
            "student": result.student, "assignment": result.assignment, "status": result.status,
            "max_score": result.max_score, "sandbox": result.sandbox, "timestamp": result.timestamp,
            "tampering": result.tampering, "notes": result.notes, "digest": result.digest,
            "work_digest": result.work_digest, "recorded": result.recorded, "cells": result.cells,
            "charged_seconds": round(result.charged, 3),
            "late_unknown": result.late_unknown,
            "parts": [{"name": p.name, "score": p.score, "max_score": p.max_score, "status": p.status,
                       "checks": [dict(vars(c)) for c in p.checks]} for p in result.parts],   # flat
        },
    }


def _passed(passed: bool) -> str:
    return "passed" if passed else "failed"


def _part_test(result: Result, part, number: str, details: str) -> dict:
    """Part N: its score in the gradebook (a human's score and extra credit included), and
    what a human changed, in words."""
    score = result.part_score(part)
    status = "" if part.status == "graded" else f" [{part.status}: needs a human]"
    said = result.adjustment(part)
    lines = [f"{len(part.checks)} hidden checks, {points(part.score)} / {points(part.max_score)}; "
             f"their details: {DETAILS_WORDS[details]}."]
    lines += [f"{said} (the checks gave {points(part.score)})."] if said else []
    lines += [f"Comment: {result.comment(part.name)}"] if result.comment(part.name) else []
    return {"number": number, "name": f"{part.name}{status}", "score": score, "max_score": part.max_score,
            "status": _passed(score >= part.max_score), "output": "\n".join(lines), "visibility": "visible",
            "tags": [part.name] + (["manual"] if said else [])}


def _written_test(number: str, name: str, cell: dict) -> dict:
    """A written answer in the gradebook: scored once a human graded it, else without a score
    (it is not a failed test)."""
    test = {"number": number, "name": f"{name}: written answer", "max_score": cell["max_score"],
            "output": cell["comment"], "visibility": "visible", "tags": [name, "manual"]}
    if cell["manual_score"] is None and cell["auto_score"] is None:
        return {**test, "name": f"{name}: written answer, not graded yet ({points(cell['max_score'])} points)"}
    return {**test, "score": cell["score"], "status": _passed(cell["score"] >= cell["max_score"])}


def _summary(result: Result) -> str:
    summary = [f"Status: {result.status}. Score: {points(result.score)} / {points(result.max_score)}."]
    summary += [f"Late: {late_text(result)}."] if late_text(result) else []
    summary += [f"Tampering: {t}" for t in result.tampering] + [f"Cell: {c}" for c in result.cells]
    return "\n".join(summary + [f"Note: {n}" for n in result.notes])


def from_json(data: dict) -> Result:
    extra = data["extra_data"]
    parts = [PartResult(p["name"], [CheckResult(**c) for c in p["checks"]], p["status"]) for p in extra["parts"]]
    return Result(extra["student"], extra["assignment"], extra["status"], parts, extra["tampering"],
                  extra["notes"], data.get("execution_time", 0.0), extra["sandbox"], extra["timestamp"],
                  extra.get("digest", ""), extra.get("work_digest", ""), extra.get("recorded", {}),
                  extra.get("cells", []), charged=extra.get("charged_seconds", 0.0),
                  late_unknown=extra.get("late_unknown", False))


def _output(check: CheckResult) -> str:
    """A check's points (its test carries no score), what went wrong and the likely cause."""
    lines = [f"{points(check.score)} / {points(check.max_score)} points"] + ([check.message] if check.message else [])
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
        out.writerow(["student_id", "status", "score", "max_score", *part_names, *by_hand, "extra_credit",
                      "timestamp", "late_penalty", "late", "needs_attention"])
        for r in sorted(results, key=lambda r: r.student):
            parts = {p.name: r.part_score(p) - r.extra_credit(f"test_{p.name}") for p in r.parts}
            cells = {name: cell["score"] - cell["extra_credit"] for name, cell in r.hand_graded().items()
                     if cell["manual_score"] is not None or cell["auto_score"] is not None}
            out.writerow([csv_cell(r.student), r.status, points(r.score), points(r.max_score),
                          *(points(parts.get(n, 0.0)) for n in part_names),
                          *(points(cells[n]) if n in cells else "" for n in by_hand), points(r.extra_credit()),
                          csv_cell(utc_text(r.timestamp)), points(r.late_penalty), late_text(r),
                          csv_cell(_one_line("; ".join(r.problems())), limit=4 * NOTE_LIMIT)])
    tmp.replace(path)


def utc_text(when: str) -> str:
    """An ISO time as '2026-01-10 12:00:00 UTC' (one without an offset is UTC, as nbgrader keeps
    times); '' stays ''."""
    if not when:
        return ""
    moment = datetime.fromisoformat(when)
    moment = moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment.astimezone(timezone.utc)
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def write_lms_csv(path: Path, results: list, names: dict, lms_ids: dict, column: str) -> None:
    """Canvas's gradebook import file: Student, ID, SIS User ID, SIS Login ID, Section, then the
    assignment's `column`, one row per student under the LMS's id (`lms_ids` read backwards; an
    id not listed is the LMS's own). `names`: {student: (last name, first name)} of the gradebook.
    A student not graded (an error, nothing recorded) gets an empty cell, which Canvas leaves as it
    was; one who never submitted, 0, as `nbgrader export` has it."""
    back = {student: lms for lms, student in lms_ids.items()}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", column])
        for r in sorted(results, key=lambda r: r.student):
            last, first = names.get(r.student) or (None, None)
            name = f"{last}, {first}" if last and first else r.student
            score = points(r.score) if r.recorded or r.status == "missing" else ""
            out.writerow([csv_cell(name), csv_cell(back.get(r.student, r.student)), "", "", "", score])
    tmp.replace(path)
