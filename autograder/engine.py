"""Batch grading: sandboxed worker slots in parallel, one gradebook writer, a progress bar.

Each slot is a process that owns one sandboxed worker and grades one submission at a time:
it inspects the notebook, runs its cells in the worker, then runs the hidden suite through
the worker and computes every verdict itself. The main process collects results, writes the
autograded notebook, results.json and the gradebook, and finally grades.csv.
"""
import copy
import multiprocessing
import os
import resource
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

import nbformat
from tqdm import tqdm

from . import labs, notebooks, results, submission
from .checks import run_part
from .course import Course
from .gradebook import GradebookWriter
from .messages import part_text
from .results import Result
from .runners import SandboxRunner
from .sandbox import Limits, Worker

GRADER_MEMORY = 4 * 2**30   # a slot's own cap: oracle requests evaluate the reference on student input


@dataclass
class Slot:
    """One grading process: the suite, the release notebook and a sandboxed worker."""
    assignment: str
    release_dir: Path
    notebook: str
    mode: str
    limits: Limits

    def __post_init__(self):
        self.suite = labs.load(self.assignment).suite
        self.release = notebooks.read(self.release_dir / self.notebook)
        self.worker = Worker(self.mode, self.release_dir, self.limits)

    def grade(self, student: str, path: Path) -> tuple:
        """(Result, the restored notebook with the reports as outputs, or None)."""
        start = time.monotonic()
        try:
            if not path.exists():
                found = sorted(p.name for p in path.parent.glob("*.ipynb"))
                raise submission.Unreadable(f"expected {path.name} in the submission; found {found or 'no notebook'}")
            nb, id_notes = submission.load(path)   # duplicated cell ids count as tampering
            inspection = submission.inspect(nb, self.release)
        except submission.Unreadable as exc:
            return results.ungraded(student, self.assignment, self.suite, "unreadable", str(exc)), None
        if not self.worker.alive:
            self.worker.start()
        runner = SandboxRunner(self.worker, self.suite, inspection.cells, self.limits)
        runner.start()
        parts = [run_part(self.suite, name, runner) for name in self.suite.parts]
        status = "graded" if all(p.status == "graded" for p in parts) else "partly graded"
        notes = inspection.notes + _cell_notes(runner) + runner.notes
        result = Result(student, self.assignment, status, parts, id_notes + inspection.tampering, notes,
                        time.monotonic() - start, self.mode)
        return result, _with_reports(inspection.notebook, parts)


def _cell_notes(runner) -> list:
    """Cells that did not finish, in words (errors in demo cells are the student's business)."""
    words = {"timeout": "did not finish in time and was skipped",
             "crashed": "ended the notebook process and was skipped",
             "skipped": "was not run: the time limit was used up"}
    notes = []
    for source, entry in zip(runner.cells, runner.cell_log):
        if entry and entry[0] in words:
            first = next((line.strip() for line in source.splitlines() if line.strip()), "")
            notes.append(f"the cell starting `{first[:60]}` {words[entry[0]]}")
    return notes


def _with_reports(nb, parts) -> str:
    """The restored notebook, each test cell's output replaced by its part's report."""
    nb = copy.deepcopy(nb)
    by_cell = {f"test_{p.name}": p for p in parts}
    for cell in nb.cells:
        part = by_cell.get(notebooks.grade_id(cell))
        if part is not None:
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=part_text(part) + "\n")]
    return nbformat.writes(nb)


# -- the slot process ------------------------------------------------------------------------

_slot: Slot | None = None


def _start_slot(*args) -> None:
    global _slot
    os.environ.update({"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
    resource.setrlimit(resource.RLIMIT_AS, (GRADER_MEMORY, GRADER_MEMORY))
    _slot = Slot(*args)


def _grade_in_slot(student: str, path: str) -> tuple:
    try:
        return _slot.grade(student, Path(path))
    except Exception as exc:  # a grader bug must not lose the batch: say so, per student
        reason = f"internal grading error: {type(exc).__name__}: {exc}"
        return results.ungraded(student, _slot.assignment, _slot.suite, "error", reason), None


# -- the batch -------------------------------------------------------------------------------

@dataclass
class Batch:
    results: list         # every student on the roster, graded now or before, missing included
    graded: list          # the students graded by this run
    seconds: float        # wall time of this run
    jobs: int


def grade(course: Course, assignment: str, students=None, jobs: int | None = None, force: bool = False,
          limits: Limits = Limits(), mode: str = "bwrap", progress: bool = True) -> Batch:
    """Grade the submissions of `assignment` (or of `students`) not graded yet (all with `force`)."""
    start = time.monotonic()
    course.check_assignment(assignment)
    notebook = course.notebook_name(assignment)
    suite = labs.load(assignment).suite
    roster = course.roster(assignment) if students is None else sorted(students)
    submitted = set(course.submitted_students(assignment))
    todo = [s for s in roster if s in submitted and (force or _stale(course, s, assignment, notebook))]
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(todo) or 1))
    done: dict = {}
    slot_args = (assignment, course.release(assignment), notebook, mode, limits)
    with ProcessPoolExecutor(jobs, multiprocessing.get_context("forkserver"), _start_slot, slot_args) as pool, \
            GradebookWriter(course, assignment, Path(notebook).stem) as gradebook:
        futures = {pool.submit(_grade_in_slot, s, str(course.path("submitted", s, assignment) / notebook)): s
                   for s in todo}
        bar = tqdm(as_completed(futures), total=len(futures), desc=f"grading {assignment}", unit="nb",
                   disable=not progress, dynamic_ncols=True)
        for future in bar:
            result, graded_notebook = future.result()
            timestamp = course.timestamp(result.student, assignment)
            result.timestamp = timestamp.isoformat() if timestamp else ""
            _write(course, assignment, notebook, result, graded_notebook)
            gradebook.record(result)
            done[result.student] = result
    everyone = []
    for student in roster:
        if student in done:
            everyone.append(done[student])
        elif student not in submitted:
            everyone.append(results.ungraded(student, assignment, suite, "missing", "no submission"))
        else:
            everyone.append(results.read_json(_results_path(course, student, assignment)))
    results.write_csv(course.root / "grades.csv", everyone, list(suite.parts))
    return Batch(everyone, sorted(done), time.monotonic() - start, jobs)


def _results_path(course: Course, student: str, assignment: str) -> Path:
    return course.path("autograded", student, assignment) / "results.json"


def _stale(course: Course, student: str, assignment: str, notebook: str) -> bool:
    """True unless results.json exists and is newer than the submitted notebook."""
    graded = _results_path(course, student, assignment)
    source = course.path("submitted", student, assignment) / notebook
    return not graded.exists() or (source.exists() and source.stat().st_mtime > graded.stat().st_mtime)


def _write(course: Course, assignment: str, notebook: str, result: Result, graded_notebook) -> None:
    out = course.path("autograded", result.student, assignment)
    out.mkdir(parents=True, exist_ok=True)
    if graded_notebook is not None:
        (out / notebook).write_text(graded_notebook)
    results.write_json(out / "results.json", result)
