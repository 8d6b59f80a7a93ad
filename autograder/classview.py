"""The class as it stands, read-only: one result per student on the roster, with the gradebook's grades.

feedback, the class report and the LMS grade file read the class from here; nothing here writes.
What `attnlab grade` recorded is read back from the gradebook (a human's scores in formgrader
included) beside each student's results.json; a student is shown as not graded where the two
disagree (the grader failed on the newest submission, results.json is gone, a newer submission
waits). To give every recorded submission today's late penalty first, `engine.reprice`.
"""
from pathlib import Path

from . import gradebook, labs, results
from .autograded import results_path
from .course import Course
from .outcome import Result, ungraded


def results_of(course: Course, assignment: str, suite, fresh: dict | None = None, failed: dict | None = None,
                  digests: dict | None = None) -> list:
    """One result per student on the roster, with the gradebook's current scores: graded now
    (`fresh`), graded before, not graded (the grader `failed`, results.json is gone or damaged,
    a newer submission waits, it was never graded, or its folder is refused), or missing.
    `digests`: the submissions' digests, where the caller has them."""
    fresh, failed, digests = fresh or {}, failed or {}, digests or {}
    submitted = set(course.submitted_students(assignment))
    refused = course.refused_students(assignment)
    roster = course.roster(assignment)
    notebook = Path(course.notebook_name(assignment)).stem
    recorded, points = gradebook.read_all(course, assignment, notebook, [s for s in roster if s not in fresh])
    again = f"run `attnlab grade {assignment}`"
    found = []
    for student in roster:
        result = fresh.get(student) or read_result(results_path(course, student, assignment))
        why = _not_current(course, assignment, student, result, failed, digests) \
            if student in recorded and student not in fresh else None
        if student in fresh:
            found.append(result)
        elif why or student in failed:
            kept = "the gradebook's grade stands" if student in recorded else "nothing was recorded"
            status = failed[student].status if student in failed else "error"
            when = " when the machine is less busy" if status == "busy" else ""
            found.append(ungraded(student, assignment, suite, status,
                                          f"{why or failed[student].notes[0]}; {kept}: {again}{when}"))
            found[-1].recorded = recorded.get(student)
        elif result is not None and student in recorded:
            result.recorded = recorded[student]
            found.append(result)
        elif result is not None:
            found.append(ungraded(student, assignment, suite, "error",
                                          "graded, but not in the gradebook (removed from it?), so nbgrader export "
                                          "leaves them out; `attnlab grade` adds back a student with a submission: "
                                          f"to drop them, also remove {course.path('submitted', student, assignment)}"))
        elif student in submitted:
            found.append(ungraded(student, assignment, suite, "error", f"submitted but not graded yet: {again}"))
        elif student in refused:
            found.append(ungraded(student, assignment, suite, "error",
                                          f"submitted, but the folder is not graded: {refused[student]}"))
        else:
            found.append(ungraded(student, assignment, suite, "missing", "no submission"))
        found[-1].assignment_points = points
    return found


def read_result(path: Path) -> Result | None:
    try:
        return results.read_json(path)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _not_current(course: Course, assignment: str, student: str, result, failed: dict, digests: dict) -> str | None:
    """Why a recorded grade's results.json does not show it: the grader failed on the newest
    submission, results.json is gone or damaged, or the submission changed since."""
    if student in failed:
        return failed[student].notes[0]
    if result is None:
        return "autograded/ has no readable results.json"
    if result.digest and course.path("submitted", student, assignment).is_dir():
        digest = digests.get(student) or course.digest(student, assignment)
        if digest != result.digest:
            return "a newer submission is not graded yet"
    return None


def current(course: Course, assignment: str) -> list:
    """Every student's result with the gradebook's grades as they stand now."""
    return results_of(course, assignment, labs.load(assignment).suite)
