"""Grading one submission: inspect the notebook, run it in the sandboxed worker, run the suite.

This needs no nbgrader course: `attnlab grade` runs one `Slot` per parallel worker, and the
Gradescope bundle runs one for its single submission.
"""
import multiprocessing
import multiprocessing.forkserver
import os
import resource
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import nbformat

from . import labs, notebooks, student_files, submission
from .checks import run_part
from .messages import part_text
from .outcome import Result, ungraded
from .runners import SandboxRunner
from .sandbox import Limits, Worker, slot_uid
from .worker.isolation import die_with_parent


@dataclass
class Slot:
    """One grading process: the suite, the release notebook and a sandboxed worker that runs as
    the slot's own user."""
    assignment: str
    release_dir: Path
    notebook: str
    mode: str
    limits: Limits

    def __post_init__(self):
        self.suite = labs.load(self.assignment).suite
        self.release = notebooks.read(self.release_dir / self.notebook)
        self.worker = Worker(self.mode, self.release_dir, self.limits, slot_uid())

    def grade(self, student: str, path: Path, salt: bytes = b"") -> tuple:
        """(Result, the restored notebook with the reports as outputs, or None). `salt` selects
        the hidden inputs. A grader error restarts the worker before it propagates."""
        try:
            return self._grade(student, path, salt)
        except BaseException:
            self.worker.close()
            raise

    def _grade(self, student: str, path: Path, salt: bytes) -> tuple:
        start = time.monotonic()
        try:
            if not path.exists():
                found = [str(p) for p in student_files.notebooks_in(path.parent)]
                raise submission.Unreadable(f"expected {path.name} in the submission; found {found or 'no notebook'}")
            most = len(self.release.cells) + submission.EXTRA_CELLS
            nb, id_notes = submission.load(path, most)   # duplicated cell ids count as tampering
            inspection = submission.inspect(nb, self.release)
        except submission.Unreadable as exc:
            return ungraded(student, self.assignment, self.suite, "unreadable", str(exc)), None
        except Exception as exc:   # the student's file, not the grader, is odd: theirs to fix, not a retry
            reason = f"not a notebook the grader can read: {type(exc).__name__}: {str(exc)[:200]}"
            return ungraded(student, self.assignment, self.suite, "unreadable", reason), None
        if not self.worker.alive:       # the slot's start-up is not the submission's time
            started = time.monotonic()
            self.worker.start()
            start += time.monotonic() - started
        runner = SandboxRunner(self.worker, self.suite, inspection.cells, self.limits)
        try:
            runner.start()
            parts = [run_part(self.suite, name, runner, salt) for name in self.suite.parts]
        finally:
            runner.finish()
        if runner.starved:      # not the student's doing: no score rather than a lower one
            return ungraded(student, self.assignment, self.suite, "busy", runner.starved), None
        cells = _cell_notes(runner)
        status = "graded" if all(p.status == "graded" for p in parts) and not cells else "partly graded"
        result = Result(student, self.assignment, status, parts, _bounded(id_notes + inspection.tampering),
                        _bounded(inspection.notes + runner.notes), time.monotonic() - start, self.mode,
                        cells=_bounded(cells), charged=runner.clock.spent)
        return result, _with_reports(inspection.notebook, parts)


CELL_PROBLEMS = {"timeout": "did not finish in time and was skipped",
                 "crashed": "ended the notebook process and was skipped",
                 "skipped": "was not run: the time limit was used up",
                 "memory": "ran out of memory",
                 "syntax": "has a syntax error",
                 "protocol": "wrote to the grader's channel and was skipped"}


NOTES = 20      # notes of one kind kept per submission: a notebook of 20,000 broken cells made 7 MB


def _bounded(notes: list) -> list:
    """The first NOTES notes, and how many more there were."""
    return notes if len(notes) <= NOTES else notes[:NOTES] + [f"... and {len(notes) - NOTES} more like these"]


def _cell_notes(runner) -> list:
    """Cells that did not finish or could not run, in words, with the error where there is one
    (other errors in demo cells are the student's business)."""
    notes = []
    for source, entry in zip(runner.cells, runner.cell_log):
        if entry and entry[0] in CELL_PROBLEMS:
            first = next((line.strip() for line in source.splitlines() if line.strip()), "")
            detail = f": {entry[1]}" if entry[1] else ""
            notes.append(f"the cell starting `{first[:60]}` {CELL_PROBLEMS[entry[0]]}{detail}")
    return notes


def _with_reports(nb, parts) -> str:
    """The restored notebook (changed here), each test cell's output replaced by its part's
    report. Its cells were validated when it was read: it is written without validating again."""
    by_cell = {f"test_{p.name}": p for p in parts}
    for cell in nb.cells:
        part = by_cell.get(notebooks.grade_id(cell))
        if part is not None:
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=part_text(part) + "\n")]
    return nbformat.v4.writes(nb)


# -- a slot of `attnlab grade`'s pool -------------------------------------------------------

def slot_context():
    """How grading slots start: forked from a server that imported their code once. Each slot
    also re-runs the main module (the `attnlab` script imports the CLI), which the server
    imported too. The server starts at the first call and imports while the caller goes on."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["autograder.grading", "autograder.cli"])
    multiprocessing.forkserver.ensure_running()
    return context


GRADER_MEMORY = 4 * 2**30   # a slot's own cap: oracle requests evaluate the reference on student input

_slot: Slot | None = None


class Task(NamedTuple):
    """One submission to grade: `grade_in_slot(*task)`."""
    student: str
    path: str
    salt: bytes


class Slots(NamedTuple):
    pool: ProcessPoolExecutor
    args: tuple                   # Slot(*args)
    jobs: int
    early: dict                   # {student: (Task, future)}: grading begun before it was asked for


def start_slots(jobs: int, args: tuple, tasks=()) -> Slots:
    """A pool of `jobs` slots `Slot(*args)`, each starting its worker now, then grading `tasks`
    (what the caller expects to be asked for: `submit` keeps what it is asked for). While this
    process runs no other thread (the CLI starts the slots before nbgrader loads), the slots are
    forked from it: they are ready 0.3 s sooner than from the server, which would import their
    code again."""
    context = multiprocessing.get_context("fork") if threading.active_count() == 1 else slot_context()
    pool = ProcessPoolExecutor(jobs, context, start_slot, args)
    for _ in range(jobs):
        pool.submit(int)          # while no slot is idle, each task starts one
    return Slots(pool, args, jobs, {t.student: (t, pool.submit(grade_in_slot, *t)) for t in tasks})


def submit(pool: ProcessPoolExecutor, tasks: dict, early: dict) -> dict:
    """{student: future} of `tasks` ({student: Task}): a grading begun `early` for exactly that
    task is kept, every other one is cancelled (or, begun already, its result is dropped)."""
    futures = {}
    for student, task in tasks.items():
        begun, future = early.get(student, (None, None))
        futures[student] = future if begun == task else pool.submit(grade_in_slot, *task)
    for student, (_, future) in early.items():
        if futures.get(student) is not future:
            future.cancel()
    return futures


def stop_slots(slots: Slots) -> None:
    """Slots that will not be used end once their worker has started, or once the submission
    they grade is graded (not waited for here)."""
    slots.pool.shutdown(wait=False, cancel_futures=True)


def start_slot(*args) -> None:
    """The pool's initializer: this process becomes a slot, with `Slot(*args)`, and starts its
    worker (the slot's start-up, not a submission's). It dies with the process that started it
    (a killed `attnlab grade` leaves no slot waiting for work), and its worker with it."""
    global _slot
    die_with_parent()
    os.environ.update({"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
    resource.setrlimit(resource.RLIMIT_AS, (GRADER_MEMORY, GRADER_MEMORY))
    index = (multiprocessing.current_process()._identity or (0,))[0]   # 1..jobs in the pool
    _pin(index)
    _slot = Slot(*args)
    try:
        _slot.worker.start()
    except Exception:   # the first submission starts it again, and reports why it cannot
        _slot.worker.close()


def _pin(index: int) -> None:
    """Keep slot `index`, and the worker it starts, on one core of their own (in turn): a slot
    and its worker take turns, message by message, and waking a process on another core costs
    more than the message (13 % of the CPU time of a Lab 05 submission)."""
    if hasattr(os, "sched_setaffinity"):
        cores = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cores[(index - 1) % len(cores)]})


def grade_in_slot(student: str, path: str, salt: bytes) -> tuple:
    try:
        return _slot.grade(student, Path(path), salt)
    except Exception as exc:  # a grader bug must not lose the batch: say so, per student
        reason = f"internal grading error: {type(exc).__name__}: {exc}"
        return ungraded(student, _slot.assignment, _slot.suite, "error", reason), None
