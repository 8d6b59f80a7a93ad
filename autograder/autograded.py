"""nbgrader's autograded/ layout: what `attnlab grade` and `attnlab serve` write of a recorded result.

autograded/<student>/<assignment>/ holds the graded notebook (the restored notebook with each part's
report as its test cell's output), nbgrader's timestamp.txt and submission_secret.txt (by which
`nbgrader release_feedback` names the page), and results.json (results.to_json). Each file is
replaced whole, so a reader never sees half of one.
"""
import functools
import html
import os
import secrets
import stat
import time
from datetime import datetime, timezone
from pathlib import Path

import nbformat

from . import notebooks, results, student_files
from .course import Course
from .outcome import Result


def results_path(course: Course, student: str, assignment: str) -> Path:
    return course.path("autograded", student, assignment) / "results.json"


def placeholder(release: str, result: Result) -> str:
    """For a submission that could not be read: the release notebook, headed by the reason, so
    that formgrader lists it under Manual Grading like every other submission."""
    nb = nbformat.reads(release, as_version=4)
    reason = "; ".join(result.notes) or result.status
    nb.cells.insert(0, nbformat.v4.new_markdown_cell(
        f"**attnlab: this submission is {result.status}** ({_escape_md(reason)}). "
        "Below is the release notebook, not the student's work.", id="attnlab-status"))
    return nbformat.writes(nb)


_MARKDOWN = {ord(c): f"&#{ord(c)};" for c in "`*_[]()!\\"}     # markdown's syntax, as HTML entities


def _escape_md(text: str) -> str:
    return html.escape(text).translate(_MARKDOWN)


def nbgrader_files(course: Course, student: str, assignment: str) -> tuple:
    """(submission time as ISO text or "", tampering found): timestamp.txt and
    submission_secret.txt are nbgrader's, so one that is not a regular file, or not a time, was
    put there by hand; the grader reads neither then."""
    problems, folder = [], course.path("submitted", student, assignment)
    try:
        timestamp = course.timestamp(student, assignment)
    except OSError as exc:
        timestamp = None
        problems.append(f"{exc}: lateness was not judged")
    set_back = student_files.set_back(folder)
    if set_back:
        problems.append(set_back)
    try:
        _submitted_text(folder / "submission_secret.txt")
    except OSError as exc:
        problems.append(f"{exc}: the feedback gets a secret of its own")
    return (timestamp.isoformat() if timestamp else ""), problems


def _submitted_text(path: Path) -> str | None:
    """A small file of a submission, None if it is missing; read without following a link."""
    return student_files.read(path, limit=4096).decode("utf-8", "replace") if os.path.lexists(path) else None


def _copied(path: Path) -> str | None:
    try:
        return _submitted_text(path)
    except OSError:     # found by nbgrader_files, and reported
        return None


def write(course: Course, assignment: str, notebook: str, result: Result, graded_notebook: str) -> None:
    """autograded/<student>/<assignment>/ as nbgrader lays it out (the notebook, timestamp.txt,
    submission_secret.txt), plus results.json; each file replaced atomically."""
    out = course.path("autograded", result.student, assignment)
    out.mkdir(parents=True, exist_ok=True)
    replace_text(out / notebook, graded_notebook)
    source = course.path("submitted", result.student, assignment)
    secret = _copied(source / "submission_secret.txt")
    if secret is not None or not (out / "submission_secret.txt").is_file():   # release_feedback needs one
        replace_text(out / "submission_secret.txt", secret if secret is not None else secrets.token_hex(64))
    # ... and a time: nbgrader's, or for a submission without a valid one (placed by hand, or
    # tampered with) the files' latest modification (lateness is not judged then)
    timestamp = _copied(source / "timestamp.txt") if result.timestamp else None
    replace_text(out / "timestamp.txt", timestamp or _modified(source))
    replace_text(out / "results.json", results.json_text(result, labels(course, assignment)))


def labels(course: Course, assignment: str) -> dict:
    """{grade_id: 'Q1.2 (interpret)'} of the release's written answers, by which results.json
    names them (as the Gradescope bundle does)."""
    release = course.release(assignment) / course.notebook_name(assignment)
    return _labels(release, release.stat().st_mtime_ns)


@functools.lru_cache(maxsize=8)
def _labels(release: Path, mtime: int) -> dict:
    return {grade_id: label for grade_id, (label, _) in notebooks.questions(notebooks.read(release)).items()}


def _modified(folder: Path) -> str:
    """The latest modification time of the regular files in `folder`, as nbgrader writes a timestamp."""
    files = [p.lstat() for p in folder.iterdir()] if folder.is_dir() else []
    latest = max((f.st_mtime for f in files if stat.S_ISREG(f.st_mode)), default=time.time())
    return datetime.fromtimestamp(latest, timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f %Z")


def replace_text(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8", errors="backslashreplace")   # student text never stops a write
    tmp.replace(path)
