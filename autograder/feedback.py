"""Feedback pages: per check, its points and what went wrong; the gradebook's final scores.

The page is built from results.json, the gradebook (a human's scores and comments, the hand-graded
cells, the late penalty) and the student's own answer cells, written answers included (named by
their question); the hidden tests' source and inputs are never part of any. It is written where
nbgrader keeps feedback, feedback/<student>/<assignment>/<notebook>.html, beside nbgrader's
timestamp.txt and submission_secret.txt, so `nbgrader release_feedback` hands it out and
`nbgrader fetch_feedback` brings it to the student. `<notebook>` is the name of the notebook the
student submitted (fetch_feedback finds a page by it), also when it was renamed. Everything the
student wrote is escaped.
"""
from datetime import datetime, timezone
from pathlib import Path

import jinja2

from . import classview, course_lock, notebooks, results, student_files, text
from .course import Course, CourseError, submitted_notebook
from .messages import points
from .outcome import UNRECORDED

_TEMPLATES = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
                                autoescape=True, trim_blocks=True, lstrip_blocks=True,
                                finalize=text.for_page)


def page(result, code: dict, show_fix: bool = False, written: dict | None = None, questions: dict | None = None,
         detail: str = "full") -> str:
    """`code`: {part: the student's code}; `written`: {grade_id: the student's written answer};
    `questions`: {grade_id: (label, question)} of the release; `detail`: what the page shows of
    each part, "full", "checks" (each check's name, points and verdict) or "score" (the part's
    score): see AttnLabService.before_due_date."""
    return _TEMPLATES.get_template("feedback.html.j2").render(
        r=result, code=code, pts=points, late=results.late_text(result), show_fix=show_fix, utc=results.utc_text,
        written=written or {}, questions=questions or {}, detail=detail)


def past_due(result) -> bool:
    """Exact fixes (tier-2 hints) are shown only once the assignment's due date has passed."""
    due = result.recorded.duedate if result.recorded else ""
    return bool(due) and datetime.now(timezone.utc) > datetime.fromisoformat(due).replace(tzinfo=timezone.utc)


def write_all(course: Course, assignment: str, students=None) -> tuple:
    """The feedback page of every graded student (or of `students`); returns the paths, {student:
    why} of those asked for, or with a grade in the gradebook, who get no page (not graded,
    results.json gone, a newer submission not graded yet), and {student: note} for the pages
    named after a renamed notebook."""
    with course_lock.hold(course.root, assignment, "attnlab feedback"):
        return _write_all(course, assignment, students)


def _write_all(course: Course, assignment: str, students) -> tuple:
    notebook = course.notebook_name(assignment)
    everyone = {r.student: r for r in classview.current(course, assignment)}
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
    unwritten = {r.student: r.notes[0] for r in graded + asked if r.status in ("missing", *UNRECORDED)}
    written, renamed = [], {}
    for result in (r for r in graded if r.student not in unwritten):
        path, renamed[result.student] = write_page(course, assignment, notebook, result)
        written.append(path)
    return written, unwritten, {s: note for s, note in renamed.items() if note}


def write_page(course: Course, assignment: str, notebook: str, result, before_due: str = "full") -> tuple:
    """The page of a recorded `result` (autograded/ written), where nbgrader keeps feedback,
    named as `nbgrader fetch_feedback` finds it (`_page_name`); before the student's due date (or
    while there is none) it shows `before_due` (see `page`). (its path, a note for the instructor or '')"""
    source = course.path("autograded", result.student, assignment)
    graded = notebooks.read(source / notebook) if result.status != "unreadable" else None
    due = past_due(result)
    questions = notebooks.questions(notebooks.read(course.release(assignment) / notebook))
    html = page(result, notebooks.answer_cells(graded) if graded else {}, due,
                notebooks.written_answers(graded) if graded else {}, questions, "full" if due else before_due)
    name, note = _page_name(course, assignment, result.student, notebook)
    stamps = {kept: (source / kept).read_bytes() for kept in STAMPS if (source / kept).is_file()}
    return _put(course, assignment, name, result.student, html, stamps), note


def write_notice(course: Course, assignment: str, notebook: str, student: str, message: str) -> Path | None:
    """A page for the submission in submitted/ that says why it is not graded now (`message`),
    to be released like feedback; None if the submission has no submission_secret.txt (read as
    a student's file: never through a link) to release it by."""
    source = course.path("submitted", student, assignment)
    try:
        stamps = {name: student_files.read(source / name, limit=4096) for name in STAMPS}
    except OSError:
        return None
    html = _TEMPLATES.get_template("notice.html.j2").render(assignment=assignment, student=student, message=message)
    return _put(course, assignment, _page_name(course, assignment, student, notebook)[0], student, html, stamps)


STAMPS = ("timestamp.txt", "submission_secret.txt")   # by which `nbgrader release_feedback` names a page


def _put(course: Course, assignment: str, name: str, student: str, html: str, stamps: dict) -> Path:
    out = course.path("feedback", student, assignment) / name
    out.parent.mkdir(parents=True, exist_ok=True)
    for old in out.parent.glob("*.html"):      # a page under the name of an earlier submission
        if old != out:
            old.unlink()
    for stamp, data in stamps.items():
        _replace(out.parent / stamp, data)
    _replace(out, html.encode())
    return out


def _replace(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    tmp.replace(path)


def _page_name(course: Course, assignment: str, student: str, notebook: str) -> tuple:
    """(the page's file name, a note for the instructor or ''): nbgrader's fetch_feedback finds a
    page by the name of the notebook the student submitted, so a renamed notebook's page has its
    name; one submitted in a folder is not found by fetch_feedback at all."""
    submitted = submitted_notebook(course.path("submitted", student, assignment), notebook)
    relative = submitted.relative_to(course.path("submitted", student, assignment))
    if submitted.name == notebook:
        return f"{Path(notebook).stem}.html", ""
    if len(relative.parts) > 1:
        return (f"{Path(notebook).stem}.html",
                f"the notebook graded is {relative}, in a folder of the submission: nbgrader fetch_feedback "
                "cannot find its page; hand out the page yourself")
    return (f"{submitted.stem}.html", f"the page is named {submitted.stem}.html after the notebook submitted "
            f"({submitted.name}), as nbgrader fetch_feedback finds it")
