"""nbgrader's gradebook: the one record of a grade.

`attnlab grade` records each part's score as the auto score of its test cell `test_<part>`,
a batch of submissions per transaction, and only then writes results.json and the grades table
(grades/<assignment>.csv). Everything attnlab shows afterwards (the grades table, results.json,
feedback, the class report) reads the scores back from here, so a manual score, extra credit, a
comment or a late penalty given in formgrader appears everywhere as `nbgrader export` shows it. Cells graded by hand (written
answers) are never touched. Anything a human should look at flags the notebook in formgrader
(a flag only a grader clears), marks the affected cells as needing a manual grade and says why
in their comments.
"""
import warnings
from contextlib import contextmanager

from nbgrader.api import Assignment, InvalidEntry, MissingEntry, SubmittedAssignment, SubmittedNotebook
from nbgrader.preprocessors import AssignLatePenalties
from nbgrader.utils import parse_utc
from sqlalchemy.exc import SAWarning, SQLAlchemyError
from sqlalchemy.orm import selectinload

from .course import Course, CourseError
from .outcome import CellGrade, Recorded, Result


class RecordingError(CourseError):
    """The gradebook could not record a batch; nothing of that batch was written anywhere."""


def check_recordable(gb, assignment: str, notebook: str, parts) -> None:
    """Refuse to grade what the gradebook cannot hold: the notebook and a test cell per part, worth
    the part's points (a release regenerated with other points would show two maximums)."""
    fix = f"run `nbgrader generate_assignment {assignment} --force` in the course directory"
    try:
        known = gb.find_assignment(assignment)
    except MissingEntry:
        raise CourseError(f"assignment {assignment!r} is not in the gradebook; {fix}") from None
    source = next((nb for nb in known.notebooks if nb.name == notebook), None)
    if source is None:
        raise CourseError(f"assignment {assignment!r} is in the gradebook without its notebook "
                          f"{notebook!r} (registered before it was generated?); {fix}")
    cells = {c.name: c for c in source.grade_cells}
    missing = sorted(f"test_{p}" for p in parts if f"test_{p}" not in cells)
    if missing:
        raise CourseError(f"the gradebook's {notebook!r} lacks the test cells {', '.join(missing)}; {fix}")
    changed = [f"test_{name} is worth {cells[f'test_{name}'].max_score:g} there and {part.points:g} in the "
               "hidden tests" for name, part in parts.items() if cells[f"test_{name}"].max_score != part.points]
    if changed:
        raise CourseError(f"the release of {assignment} gives other points than attnlab's hidden tests "
                          f"({'; '.join(changed)}): a part's points are the hidden tests' (autograder/labs/); "
                          f"restore them in source/{assignment}/ and {fix}")


@contextmanager
def transaction(gb):
    """One commit for everything recorded inside; a failure rolls all of it back.

    nbgrader's Gradebook commits after each call; inside this block those commits only flush.
    """
    gb.db.commit = gb.db.flush
    try:
        with warnings.catch_warnings():
            # nbgrader's add_submission trips SQLAlchemy's autoflush warning; it is harmless
            warnings.simplefilter("ignore", SAWarning)
            yield
        del gb.db.commit
        gb.db.commit()
    except Exception as exc:
        gb.db.__dict__.pop("commit", None)
        gb.db.rollback()
        # InvalidEntry: nbgrader's word for a row another writer added first (the same student)
        if isinstance(exc, (SQLAlchemyError, MissingEntry, InvalidEntry, RecordingError)):
            raise RecordingError(f"the gradebook did not record this batch ({type(exc).__name__}: "
                                 f"{str(exc).splitlines()[0][:200]}); nothing was written, run the "
                                 "same command again") from None
        raise


class GradebookWriter:
    """The main process's only connection that writes: records results, reads back grades."""

    def __init__(self, course: Course, assignment: str, notebook: str, parts):
        self.assignment, self.notebook = assignment, notebook
        self.gb = course.gradebook()
        try:
            check_recordable(self.gb, assignment, notebook, parts)
        except CourseError:
            self.gb.close()
            raise
        try:
            late = AssignLatePenalties(config=course.config)
            late.init_plugin()
        except Exception as exc:  # the course's own plugin and settings: say which, in one line
            self.gb.close()
            raise CourseError(f"nbgrader_config.py: the late penalty cannot be set up "
                              f"({type(exc).__name__}: {str(exc).splitlines()[0][:300]})") from None
        self.late_plugin = late.plugin_inst
        self.added: list = []       # the students this writer added to the gradebook

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.gb.close()

    def submitted(self) -> dict:
        """{student: submission time or None} of the submissions of the assignment in the gradebook."""
        return {s.student.id: s.timestamp for s in self.gb.find_assignment(self.assignment).submissions}

    def record_batch(self, batch: list, resubmitted=frozenset(), also=None) -> dict:
        """Record every result of `batch` in one transaction; returns {student: recorded grades}.
        For the `resubmitted` students (a new notebook since the last grading), every cell a
        human has scored is marked for review again, as nbgrader's autograde marks it: that
        score was given to other work. `also(session)` adds the caller's own statements to the
        transaction (the grading service's journal)."""
        students = [r.student for r in batch]
        with transaction(self.gb):
            held = _hold(self.gb, self.assignment, self.notebook)
            self.students = {s.id for s in self.gb.students}     # another writer may have added some
            found = submissions(self.gb, self.assignment, students)
            for result in batch:
                self._record(result, found.get(result.student), result.student in resubmitted)
            if also:
                also(self.gb.db)
        del held
        return read(self.gb, self.assignment, self.notebook, students)   # the commit expired what was loaded

    def reprice(self, students) -> None:
        """Give the recorded submissions of `students` (not graded in this run) the late penalty
        that the gradebook's due date and extensions give them now: nbgrader fixes a penalty
        when it grades, so an extension granted later would not show until a regrade."""
        with transaction(self.gb):
            held = _hold(self.gb, self.assignment, self.notebook)
            for student, submission in submissions(self.gb, self.assignment, students).items():
                nb = _notebook(submission, self.notebook)
                if nb is not None:
                    nb.late_submission_penalty = self._penalty(student, _raw(nb), submission.total_seconds_late)
        del held

    def _record(self, result: Result, submission, resubmitted: bool) -> None:
        if result.student not in self.students:
            self.gb.add_student(result.student)
            self.students.add(result.student)
            self.added.append(result.student)
        new = submission is None or resubmitted     # work no human has looked at yet
        earlier = submission.timestamp if submission is not None else None
        if submission is None:
            extra = {"timestamp": result.timestamp} if result.timestamp else {}
            submission = self.gb.add_submission(self.assignment, result.student, **extra)
        else:   # nbgrader keeps the earlier work's time when a resubmission has none; here lateness
            submission.timestamp = parse_utc(result.timestamp) if result.timestamp else None   # is not judged
        nb = _notebook(submission, self.notebook)
        if nb is None:
            raise RecordingError(f"no notebook {self.notebook} in the submission")
        grades = {g.name: g for g in nb.grades}
        comments = {c.name: c for c in nb.comments}
        if resubmitted:
            for grade in grades.values():
                grade.needs_manual_grade = grade.needs_manual_grade or grade.manual_score is not None
            for comment in comments.values():     # shown beside the new work's scores, in formgrader too
                comment.manual_comment = marked_earlier(comment.manual_comment, earlier)
        tampering = [f"attnlab: tampering: {t}" for t in result.tampering]
        for part in result.parts:
            grade = grades.get(f"test_{part.name}")
            if grade is None:
                raise RecordingError(f"no grade cell test_{part.name}")
            grade.auto_score = part.score
            # a part that did not run to the end needs a human, unless one scored it; a score a
            # human gave stays marked for review, after a resubmission, until one saves it again
            grade.needs_manual_grade = (part.status != "graded" and grade.manual_score is None) or (
                grade.manual_score is not None and (resubmitted or grade.needs_manual_grade))
            if part.name in comments:     # formgrader shows it in the answer's comment box
                why = tampering + ([_why(part)] if part.status != "graded" else [])
                comments[part.name].auto_comment = "\n".join(why) or None
                tampering = []
        if result.attention() and new:     # a flag is the graders' own: set for new work, cleared only by them
            nb.flagged = True
        nb.late_submission_penalty = self._penalty(result.student, _raw(nb), submission.total_seconds_late)

    def _penalty(self, student: str, score: float, seconds_late: float):
        return late_penalty(self.late_plugin, student, score, seconds_late)


EARLIER = "[written for an earlier submission"


def marked_earlier(comment: str | None, submitted) -> str | None:
    """A grader's comment on work since replaced, marked as such once (the grader edits or
    removes the mark in formgrader)."""
    if not comment or comment.startswith(EARLIER):
        return comment
    return f"{EARLIER}{f' (submitted {submitted:%Y-%m-%d %H:%M} UTC)' if submitted else ''}] {comment}"


def _why(part) -> str:
    reasons = sorted({c.message for c in part.checks if c.status == "not run" and c.message})
    return f"attnlab: {part.status}" + (f": {reasons[0]}" if reasons else "")


def _score(grade) -> float:
    """nbgrader's Grade.score, computed here because the session may hold unflushed changes."""
    base = grade.manual_score if grade.manual_score is not None else grade.auto_score
    return 0.0 if base is None else base + (grade.extra_credit or 0.0)


def _raw(nb) -> float:
    return sum(_score(g) for g in nb.grades)


def _hold(gb, assignment: str, notebook: str) -> list:
    """The assignment, the notebook and its cells, loaded once. While the caller holds them,
    each submission, grade and comment finds these in the session instead of loading them one
    at a time (over 40 queries per submission)."""
    nb = gb.find_notebook(notebook, assignment)
    return [nb.assignment, nb, *nb.grade_cells, *nb.solution_cells, *nb.task_cells]


def submissions(gb, assignment: str, students) -> dict:
    """{student: SubmittedAssignment} of `students` with a submission of `assignment`, with
    their notebooks, grades and comments (four queries per 500 students)."""
    students, found = list(students), {}
    for start in range(0, len(students), 500):
        query = gb.db.query(SubmittedAssignment).join(Assignment).filter(
            Assignment.name == assignment, SubmittedAssignment.student_id.in_(students[start:start + 500]))
        notebooks = selectinload(SubmittedAssignment.notebooks)
        query = query.options(notebooks.selectinload(SubmittedNotebook.grades),
                              notebooks.selectinload(SubmittedNotebook.comments))
        found.update((s.student_id, s) for s in query)
    return found


def _notebook(submission, notebook: str):
    return next((nb for nb in submission.notebooks if nb.name == notebook), None)


def _recorded(submission, nb) -> Recorded:
    """What the gradebook holds for one submission."""
    comments = {c.name: c.manual_comment for c in nb.comments if c.manual_comment}
    cells = {g.name: CellGrade(_score(g), g.cell.max_score or 0.0, g.auto_score, g.manual_score,
                               g.extra_credit or 0.0, bool(g.needs_manual_grade), comments.get(g.name, ""))
             for g in nb.grades}
    raw = _raw(nb)
    penalty = nb.late_submission_penalty or 0.0
    duedate = submission.duedate
    return Recorded(max(0.0, raw - penalty), raw, submission.assignment.max_score, penalty,
                    submission.total_seconds_late, submission.timestamp.isoformat() if submission.timestamp else "",
                    duedate.isoformat() if duedate else "", cells, comments)


def unrecorded(result: Result, submitted=None, due=None, plugin=None) -> Recorded:
    """The grade of a submission that no gradebook holds (the Gradescope bundle's): the checks'
    sum, less `plugin`'s late penalty for a submission at `submitted` (aware datetimes) after `due`."""
    raw = sum(p.score for p in result.parts)
    if submitted is None or due is None:
        return Recorded(raw, raw, result.max_score)
    seconds = max(0.0, (submitted - due).total_seconds())
    penalty = late_penalty(plugin, result.student, raw, seconds) or 0.0
    return Recorded(raw - penalty, raw, result.max_score, penalty, seconds, submitted.isoformat(), due.isoformat())


def late_penalty(plugin, student: str, score: float, seconds_late: float):
    """The penalty of nbgrader's configured LateSubmissionPlugin (or the course's own), bounded as
    nbgrader bounds it (None: no penalty)."""
    if seconds_late <= 0:
        return None
    penalty = plugin.late_submission_penalty(student, score, seconds_late)
    return None if penalty is None else min(max(penalty, 0.0), score)


def read(gb, assignment: str, notebook: str, students) -> dict:
    """{student: Recorded} for the `students` with a submission in the gradebook."""
    try:
        held = _hold(gb, assignment, notebook)
    except MissingEntry:
        return {}
    found = {}
    for student, submission in submissions(gb, assignment, students).items():
        nb = _notebook(submission, notebook)
        if nb is not None:
            found[student] = _recorded(submission, nb)
    del held
    return found


def read_all(course: Course, assignment: str, notebook: str, students) -> tuple:
    """({student: Recorded} for the students with a submission in the gradebook, the
    assignment's points there, hand-graded cells included)."""
    with course.gradebook() as gb:
        return read(gb, assignment, notebook, students), gb.find_assignment(assignment).max_score
