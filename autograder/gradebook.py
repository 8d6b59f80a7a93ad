"""Recording results in nbgrader's gradebook, so that formgrader, generate_feedback and export work.

Only the main process writes (one writer, no SQLite lock contention). Each part's score becomes
the auto score of its test cell `test_<part>`. Anything a human should look at (a part that
timed out or crashed, tampering, an unreadable notebook) flags the notebook in formgrader and
marks the affected cells as needing a manual grade.
"""
import warnings

from nbgrader.api import MissingEntry
from sqlalchemy.exc import SAWarning

from .course import Course
from .results import Result


class GradebookWriter:
    def __init__(self, course: Course, assignment: str, notebook: str):
        self.assignment, self.notebook = assignment, notebook
        self.gb = course.gradebook()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.gb.close()

    def record(self, result: Result) -> None:
        if result.status == "missing":
            return
        with warnings.catch_warnings():
            # nbgrader's add_submission trips SQLAlchemy's autoflush warning; it is harmless
            warnings.simplefilter("ignore", SAWarning)
            self._record(result)

    def _record(self, result: Result) -> None:
        self.gb.update_or_create_student(result.student)
        extra = {"timestamp": result.timestamp} if result.timestamp else {}
        self.gb.update_or_create_submission(self.assignment, result.student, **extra)
        for part in result.parts:
            try:
                grade = self.gb.find_grade(f"test_{part.name}", self.notebook, self.assignment, result.student)
            except MissingEntry:
                continue
            grade.auto_score = part.score
            grade.needs_manual_grade = part.status != "graded" or grade.manual_score is not None
        submitted = self.gb.find_submission_notebook(self.notebook, self.assignment, result.student)
        submitted.flagged = bool(result.problems())
        self.gb.db.commit()
