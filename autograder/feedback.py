"""Feedback pages: per check, its points and what went wrong; the gradebook's final scores.

The page is built from results.json, the gradebook (a human's scores and comments, the hand-graded
cells, the late penalty) and the student's own answer cells; the hidden tests' source and inputs
are never part of any. It is written where nbgrader keeps feedback,
feedback/<student>/<assignment>/<notebook>.html, beside nbgrader's timestamp.txt and
submission_secret.txt, so `nbgrader release_feedback` hands it out and `nbgrader fetch_feedback`
brings it to the student. Everything the student wrote is escaped.
"""
import shutil
from datetime import datetime, timezone
from pathlib import Path

import jinja2

from . import engine, labs, notebooks, results, text
from .course import Course, CourseError
from .messages import points

_TEMPLATES = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
                                autoescape=True, trim_blocks=True, lstrip_blocks=True,
                                finalize=text.for_page)


def page(result, code: dict, show_fix: bool = False) -> str:
    return _TEMPLATES.get_template("feedback.html.j2").render(
        r=result, code=code, pts=points, late=results.late_text(result), show_fix=show_fix)


def past_due(result) -> bool:
    """Exact fixes (tier-2 hints) are shown only once the assignment's due date has passed."""
    due = result.recorded.get("duedate")
    return bool(due) and datetime.now(timezone.utc) > datetime.fromisoformat(due).replace(tzinfo=timezone.utc)


def write_all(course: Course, assignment: str, students=None) -> tuple:
    """The feedback page of every graded student (or of `students`); returns the paths, and
    {student: why} of those asked for, or with a grade in the gradebook, who get no page (not
    graded, results.json gone, a newer submission not graded yet)."""
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
    written, unwritten = [], {r.student: r.notes[0] for r in graded + asked if r.status in ("missing", *results.UNRECORDED)}
    for result in (r for r in graded if r.student not in unwritten):
        source = course.path("autograded", result.student, assignment)
        out = course.path("feedback", result.student, assignment) / f"{Path(notebook).stem}.html"
        out.parent.mkdir(parents=True, exist_ok=True)
        for name in ("timestamp.txt", "submission_secret.txt"):
            if (source / name).is_file():
                shutil.copyfile(source / name, out.parent / name)
        code = notebooks.answer_cells(notebooks.read(source / notebook)) if result.status != "unreadable" else {}
        out.write_text(page(result, code, past_due(result)))
        written.append(out)
    return written, unwritten
