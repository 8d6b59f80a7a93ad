"""The files a result is written to: results.json and the grades table.

`results.json` is Gradescope's results format, in one layout for `attnlab grade` and for the
Gradescope bundle (`to_json`): test `N` is part N with its score (a human's score and extra credit
included), tests `N.M` are its checks, without a score of their own (so that the scored tests add
up to the total before any late penalty), then one test per written answer (scored once graded
by hand, else without a score) and, for a late submission, a test without a score that explains
the penalty: the top-level `score` is the total after it. AttnLab's status, tampering findings
and notes are under `extra_data`. Each test name starts with its graded name ("softmax: ..."),
a written answer's with its label in the release ("Q1.2 (interpret): ...", its cell id in `tags`).
The grades table (`grades/<assignment>.csv`) has one row per student: status, total, one column
per part and per hand-graded cell (their scores without extra credit), the extra credit,
lateness, and what needs a human.
"""
import csv
import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from .messages import points
from .outcome import CheckResult, PartResult, Recorded, Result
from .text import NOTE_LIMIT, csv_cell, shown

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


def to_json(result: Result, details: str = "visible", visibility: str = "visible", written=None,
            labels=None) -> dict:
    """results.json in Gradescope's format (see the module's docstring). `details`: the checks'
    visibility; `visibility`: the whole result's (Gradescope's top-level setting); `written`:
    {grade_id: (question, answer, points)} of written answers that no gradebook holds (on
    Gradescope they are graded by hand in questions of their own); `labels`: {grade_id: 'Q1.2
    (interpret)'} of the release, which name the written answers as the bundle's do."""
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
        tests.append(_written_test(str(number), (labels or {}).get(name, name), cell, name))
    for name, (question, answer, points_) in sorted((written or {}).items()):
        number += 1
        tests.append({"number": str(number), "name": f"{question}: written answer ({points(points_)} points)",
                      "output": "Graded by hand, in a question of its own. The answer:\n"
                                + (shown(answer.strip(), ANSWER_CHARACTERS) or "(empty)"),
                      "visibility": "hidden", "tags": [name, "written"]})
    if result.late_penalty:
        tests.append({"number": str(number + 1), "name": f"late penalty: {points(result.late_penalty)} points",
                      "output": f"{late_text(result)}. The tests above add up to {points(result.recorded.raw_score)}; "
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
            "work_digest": result.work_digest, "recorded": result.recorded.to_dict() if result.recorded else {},
            "cells": result.cells,
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


def _written_test(number: str, label: str, cell, name: str) -> dict:
    """A written answer in the gradebook (a CellGrade), under its `label`: scored once a human
    graded it, else without a score (it is not a failed test)."""
    extra = [f"{points(cell.extra_credit)} points of extra credit (the score is {points(cell.score - cell.extra_credit)} "
             f"+ {points(cell.extra_credit)})."] if cell.extra_credit else []
    test = {"number": number, "name": f"{label}: written answer", "max_score": cell.max_score,
            "output": "\n".join(extra + ([cell.comment] if cell.comment else [])), "visibility": "visible",
            "tags": [name, "manual"]}
    if cell.manual_score is None and cell.auto_score is None:
        return {**test, "name": f"{label}: written answer, not graded yet ({points(cell.max_score)} points)"}
    return {**test, "score": cell.score, "status": _passed(cell.score >= cell.max_score)}


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
                  extra.get("digest", ""), extra.get("work_digest", ""), Recorded.from_dict(extra.get("recorded")),
                  extra.get("cells", []), charged=extra.get("charged_seconds", 0.0),
                  late_unknown=extra.get("late_unknown", False))


def _output(check: CheckResult) -> str:
    """A check's points (its test carries no score), what went wrong and the likely cause."""
    lines = [f"{points(check.score)} / {points(check.max_score)} points"] + ([check.message] if check.message else [])
    if check.diagnosis:
        lines.append(f"Likely cause: {check.diagnosis}")
    return "\n".join(lines)


def json_text(result: Result, labels=None) -> str:
    """results.json's text: one line (the C encoder; with indentation, Python's takes 5x as long)."""
    return json.dumps(to_json(result, labels=labels), ensure_ascii=False) + "\n"


def _one_line(text: str) -> str:
    """Student text (an error message) on one line: a row per student, also for `grep`."""
    return " ".join(text.split())


def read_json(path: Path) -> Result:
    return from_json(json.loads(Path(path).read_text()))


def digests(path: Path) -> tuple:
    """(the digest of the submission that the results.json at `path` grades, the digest of the
    student's work in it); None for what it lacks or cannot be read. A submission whose digest
    is not the first needs grading."""
    try:
        extra = json.loads(Path(path).read_text())["extra_data"]
        return extra.get("digest"), extra.get("work_digest")
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None, None


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
            cells = {name: cell.score - cell.extra_credit for name, cell in r.hand_graded().items()
                     if cell.manual_score is not None or cell.auto_score is not None}
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


def write_lms_csv(path: Path, results: list, names: dict, lms_ids: dict, column: str) -> list:
    """Canvas's gradebook import file: Student, ID, SIS User ID, SIS Login ID, Section, then the
    assignment's `column`, one row per student under the LMS's id (`lms_ids` read backwards; an
    id not listed is the LMS's own). `names`: {student: (last name, first name)} of the gradebook.
    A student not graded (an error, nothing recorded) gets an empty cell, which Canvas leaves as it
    was; one who never submitted, 0, as `nbgrader export` has it. Returns the students not in
    `lms_ids`, written under their gradebook id."""
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
    return sorted(r.student for r in results if r.student not in back)
