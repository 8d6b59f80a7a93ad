"""The nbgrader course directory, read through nbgrader's own configuration.

nbgrader is imported where it is used: importing it takes a second, and grading slots, which
import this module through the CLI, never open the course."""
from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from traitlets import TraitError
from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

from . import student_files

if TYPE_CHECKING:
    from nbgrader.api import Gradebook
    from nbgrader.coursedir import CourseDirectory


class CourseError(Exception):
    """The course directory is not ready for what was asked (a message for the instructor)."""


@dataclass
class Course:
    root: Path
    dirs: CourseDirectory
    config: Config

    def path(self, step: str, student: str, assignment: str) -> Path:
        return Path(self.dirs.format_path(getattr(self.dirs, f"{step}_directory"), student, assignment))

    def grades_table(self, assignment: str) -> Path:
        """attnlab's table of the assignment (nbgrader export writes grades.csv, every assignment)."""
        return self.root / "grades" / f"{assignment}.csv"

    def release(self, assignment: str) -> Path:
        return Path(self.dirs.format_path(self.dirs.release_directory, ".", assignment))

    def notebook_name(self, assignment: str) -> str:
        """The assignment's single notebook (Lab notebooks are one file each)."""
        found = sorted(p.name for p in self.release(assignment).glob("*.ipynb"))
        if len(found) != 1:
            raise CourseError(f"expected one notebook in {self.release(assignment)}, found {found or 'none'}; "
                              f"run `nbgrader generate_assignment {assignment}` first")
        return found[0]

    def gradebook(self) -> Gradebook:
        from nbgrader.api import Gradebook
        return Gradebook(self.dirs.db_url, self.dirs.course_id)

    def check_assignment(self, assignment: str) -> None:
        from nbgrader.api import MissingEntry
        with self.gradebook() as gb:
            try:
                gb.find_assignment(assignment)
            except MissingEntry:
                raise CourseError(f"assignment {assignment!r} is not in the gradebook; run "
                                  f"`nbgrader generate_assignment {assignment}` in {self.root}") from None

    def submitted_students(self, assignment: str) -> list:
        """The students with a submission folder that is graded (see `refused_students`)."""
        return self._sorted_out(assignment)[0]

    def refused_students(self, assignment: str) -> dict:
        """{folder name: why} of the submission folders that are not graded: an id formgrader
        could not show safely (it prints ids unescaped), a link instead of a folder, or, with
        nbgrader's `Autograde.create_student` off, a student the gradebook does not have (as
        nbgrader's autograde refuses them)."""
        return self._sorted_out(assignment)[1]

    def roster(self, assignment: str) -> list:
        """Students in the gradebook, and anyone who submitted."""
        known = self._students()
        return sorted(known | set(self._sorted_out(assignment, known)[0]))

    def _sorted_out(self, assignment: str, known: set | None = None) -> tuple:
        """(the submission folders graded, {those refused: why}); `known`: the gradebook's students."""
        strict = not self.config.get("Autograde", {}).get("create_student", True)
        known = self._students() if strict and known is None else known
        graded, refused = [], {}
        for s, link in self._submission_folders(assignment):
            why = student_files.unsafe_id(s) or ("a link, not a folder" if link else "")
            if not why and strict and s not in known:
                why = ("not in the gradebook, and nbgrader_config.py sets Autograde.create_student "
                       f"to False: add the student (`nbgrader db student add {s}`) to grade it")
            if why:
                refused[s] = why
            else:
                graded.append(s)
        return graded, refused

    def _submission_folders(self, assignment: str) -> list:
        """[(student folder name, whether it or its assignment folder is a link)]"""
        base = Path(self.dirs.format_path(self.dirs.submitted_directory, ".", "."))
        if not base.is_dir():
            return []
        return sorted((p.name, p.is_symlink() or (p / assignment).is_symlink())
                      for p in base.iterdir() if (p / assignment).is_dir())

    def _students(self) -> set:
        with self.gradebook() as gb:
            return {s.id for s in gb.students}

    def timestamp(self, student: str, assignment: str):
        """The submission time that lateness is judged at (`student_files.judged_time`: nbgrader's
        timestamp.txt, unless it claims an earlier time than the submission last changed), None
        without one; StudentFileError when the file is there but is not a time."""
        return student_files.judged_time(self.path("submitted", student, assignment))

    def last_run_path(self, assignment: str) -> Path:
        """A small summary of the last `attnlab grade` run of `assignment` (read by the class report)."""
        return self.root / ".attnlab" / f"{assignment}-last-run.json"

    def digest(self, student: str, assignment: str) -> str:
        return student_files.digest(self.path("submitted", student, assignment))

    def work_digest(self, student: str, assignment: str) -> str:
        """The digest of the student's work: nbgrader's timestamp.txt aside, which a collection
        writes anew (a re-collected LMS download gets the current due date's time)."""
        return student_files.digest(self.path("submitted", student, assignment), ("timestamp.txt",))


def submitted_notebook(folder: Path, notebook: str) -> Path:
    """The expected notebook in a submission `folder`, or the only notebook submitted under
    another name (an LMS renames `lab05_transformers.ipynb` to `Lab05 Transformers (1).ipynb`),
    at the top of the folder or, if none is there, below it (an uploaded folder)."""
    found = student_files.notebooks_in(folder)
    only = [p for p in found if len(p.parts) == 1] or found
    return folder / notebook if (folder / notebook).exists() or len(only) != 1 else folder / only[0]


def notebook_notes(folder: Path, graded: Path, expected: str, release: Path) -> list:
    """What the grader and the student should know of the notebooks in a submission `folder`:
    `graded` has another name than `expected` (the only notebook submitted), or other notebooks
    were left ungraded, in words that say so when the one graded is the release's starter
    notebook unchanged (a stub uploaded beside renamed work)."""
    others = [str(p) for p in student_files.notebooks_in(folder) if folder / p != graded]
    if graded.name != expected:
        return [f"graded {graded.name}, the only notebook submitted (expected {expected})"]
    if not others:
        return []
    from . import notebooks, submission
    try:
        stub = notebooks.answer_cells(submission.load(graded)[0]) == notebooks.answer_cells(notebooks.read(release))
    except Exception:   # an unreadable notebook is said so elsewhere
        stub = False
    named = ", ".join(others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
    if stub:
        return [f"graded {expected}, the starter notebook unchanged; not graded: {named} (submit your work as "
                f"{expected})"]
    return [f"graded {expected}; not graded: {named}"]


def scripts_on_path() -> None:
    """nbgrader shells out to `alembic`: this environment's scripts must be on PATH, also when
    the virtual environment is not activated."""
    scripts = str(Path(sys.executable).parent)
    if scripts not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = scripts + os.pathsep + os.environ.get("PATH", "")


def load_config(root: Path) -> Config:
    """The course's nbgrader_config.py (read without nbgrader)."""
    config_file = root / "nbgrader_config.py"
    if not config_file.exists():
        raise CourseError(f"{root} is not an nbgrader course directory (no nbgrader_config.py)")
    try:
        return PyFileConfigLoader(config_file.name, path=str(root)).load_config()
    except Exception as exc:  # the instructor's Python file: whatever it raises, say where
        raise CourseError(f"{config_file} cannot be read: {type(exc).__name__}: {exc}") from None


def open_course(root=".") -> Course:
    from nbgrader.coursedir import CourseDirectory
    scripts_on_path()
    root = Path(root).resolve()
    config = load_config(root)
    if str(root) not in sys.path:     # as nbgrader's apps do: plugins kept beside the configuration
        sys.path.insert(0, str(root))
    cwd = os.getcwd()
    try:
        os.chdir(root)     # nbgrader resolves relative paths (the gradebook URL) from here
        dirs = CourseDirectory(config=config)
        dirs.root = str(root)
        dirs.db_url  # noqa: B018  (evaluate the default while in the course)
    except TraitError as exc:
        raise CourseError(f"nbgrader_config.py: {exc}") from None
    finally:
        os.chdir(cwd)
    return Course(root, dirs, config)
