"""Feedback pages: per check, its points and what went wrong; the gradebook's final scores.

The page is built from results.json, the gradebook (a human's scores and comments, the hand-graded
cells, the late penalty) and the student's own answer cells; the hidden tests' source and inputs
are never part of any. It is written where nbgrader keeps feedback,
feedback/<student>/<assignment>/<notebook>.html, beside nbgrader's timestamp.txt and
submission_secret.txt, so `nbgrader release_feedback` hands it out and `nbgrader fetch_feedback`
brings it to the student. Everything the student wrote is escaped.
"""
from datetime import datetime, timezone
from pathlib import Path

import jinja2

from . import course_lock, engine, notebooks, results, student_files
from .course import Course, CourseError
from .messages import points

_TEMPLATES = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
                                autoescape=True, trim_blocks=True, lstrip_blocks=True)


def page(result, code: dict, show_fix: bool = False, detail: str = "full") -> str:
    """`detail`: what the page shows of each part, "full", "checks" (each check's name, points
    and verdict) or "score" (the part's score): see AttnLabService.before_due_date."""
    return _TEMPLATES.get_template("feedback.html.j2").render(
        r=result, code=code, pts=points, late=results.late_text(result), show_fix=show_fix, detail=detail)


def past_due(result) -> bool:
    """Exact fixes (tier-2 hints) are shown only once the assignment's due date has passed."""
    due = result.recorded.get("duedate")
    return bool(due) and datetime.now(timezone.utc) > datetime.fromisoformat(due).replace(tzinfo=timezone.utc)


def write_all(course: Course, assignment: str, students=None) -> tuple:
    """The feedback page of every graded student (or of `students`); returns the paths, and
    {student: why} of those asked for, or with a grade in the gradebook, who get no page (not
    graded, results.json gone, a newer submission not graded yet)."""
    with course_lock.hold(course.root, assignment, "attnlab feedback"):
        return _write_all(course, assignment, students)


def _write_all(course: Course, assignment: str, students) -> tuple:
    notebook = course.notebook_name(assignment)
    everyone = {r.student: r for r in engine.current(course, assignment)}
    unknown = sorted(set(students or ()) - set(everyone))
    if unknown:
        raise CourseError(f"unknown student(s) {', '.join(unknown)} for {assignment}")
    graded = [everyone[s] for s in (students or everyone) if everyone[s].recorded]
    if students and not graded and all(everyone[s].status == "missing" for s in students):
        raise CourseError(f"no submission of {assignment} from {', '.join(students)}: there is nothing to "
                          "give feedback on")
    if not graded:
        raise CourseError(f"nothing of {assignment} is graded yet"
                          + (f" for {', '.join(students)}" if students else "")
                          + f": run `attnlab grade {assignment}` first")
    asked = [everyone[s] for s in students or () if not everyone[s].recorded]
    unwritten = {r.student: r.notes[0] for r in graded + asked if r.status in ("error", "missing")}
    written = [write_page(course, assignment, notebook, r) for r in graded if r.student not in unwritten]
    return written, unwritten


def write_page(course: Course, assignment: str, notebook: str, result, before_due: str = "full") -> Path:
    """The page of a recorded `result` (autograded/ written), where nbgrader keeps feedback;
    before the student's due date (or while there is none) it shows `before_due` (see `page`)."""
    source = course.path("autograded", result.student, assignment)
    code = notebooks.answer_cells(notebooks.read(source / notebook)) if result.status != "unreadable" else {}
    due = past_due(result)
    return _put(course, assignment, notebook, result.student, page(result, code, due, "full" if due else before_due),
                {name: (source / name).read_bytes() for name in STAMPS if (source / name).is_file()})


def write_notice(course: Course, assignment: str, notebook: str, student: str, message: str) -> Path | None:
    """A page for the submission in submitted/ that says why it is not graded now (`message`),
    to be released like feedback; None if the submission has no submission_secret.txt (read as
    a student's file: never through a link) to release it by."""
    source = course.path("submitted", student, assignment)
    try:
        stamps = {name: student_files.read(source / name, limit=4096) for name in STAMPS}
    except OSError:
        return None
    text = _TEMPLATES.get_template("notice.html.j2").render(assignment=assignment, student=student, message=message)
    return _put(course, assignment, notebook, student, text, stamps)


STAMPS = ("timestamp.txt", "submission_secret.txt")   # by which `nbgrader release_feedback` names a page


def _put(course: Course, assignment: str, notebook: str, student: str, text: str, stamps: dict) -> Path:
    out = course.path("feedback", student, assignment) / f"{Path(notebook).stem}.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    for name, data in stamps.items():
        _replace(out.parent / name, data)
    _replace(out, text.encode())
    return out


def _replace(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    tmp.replace(path)
