"""Batch grading of an nbgrader course: grading slots in parallel, one gradebook writer.

Each slot is a process that owns one sandboxed worker and grades one submission at a time
(see `grading.Slot`). The main process collects the results, writes the autograded notebook,
results.json and the gradebook, shows a progress bar, and finally writes grades.csv.
"""
import json
import multiprocessing
import os
import resource
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from tqdm import tqdm

from . import labs, results, secret
from .course import Course
from .gradebook import GradebookWriter
from .grading import Slot
from .results import Result
from .sandbox import Limits

GRADER_MEMORY = 4 * 2**30   # a slot's own cap: oracle requests evaluate the reference on student input


# -- the slot process ------------------------------------------------------------------------

_slot: Slot | None = None


def _start_slot(*args) -> None:
    global _slot
    os.environ.update({"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
    resource.setrlimit(resource.RLIMIT_AS, (GRADER_MEMORY, GRADER_MEMORY))
    index = (multiprocessing.current_process()._identity or (0,))[0]   # 1..jobs in the pool
    _slot = Slot(*args, index=index)


def _grade_in_slot(student: str, path: str, salt: bytes) -> tuple:
    try:
        return _slot.grade(student, Path(path), salt)
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
    candidates = course.roster(assignment) if students is None else sorted(students)
    submitted = set(course.submitted_students(assignment))
    todo = [s for s in candidates if s in submitted and (force or _stale(course, s, assignment, notebook))]
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(todo) or 1))
    done: dict = {}
    slot_args = (assignment, course.release(assignment), notebook, mode, limits)
    with ProcessPoolExecutor(jobs, multiprocessing.get_context("forkserver"), _start_slot, slot_args) as pool, \
            GradebookWriter(course, assignment, Path(notebook).stem) as gradebook:
        course_secret = secret.course_secret(course.root)
        futures = {}
        for s in todo:
            path = course.path("submitted", s, assignment) / notebook
            salt = secret.salt(course_secret, assignment, s, path.read_bytes() if path.is_file() else b"")
            futures[pool.submit(_grade_in_slot, s, str(path), salt)] = s
        bar = tqdm(as_completed(futures), total=len(futures), desc=f"grading {assignment}", unit="nb",
                   disable=not progress, dynamic_ncols=True)
        for future in bar:
            result, graded_notebook = future.result()
            timestamp = course.timestamp(result.student, assignment)
            result.timestamp = timestamp.isoformat() if timestamp else ""
            _write(course, assignment, notebook, result, graded_notebook)
            gradebook.record(result)
            done[result.student] = result
    everyone = class_results(course, assignment, suite, done)
    results.write_csv(course.root / "grades.csv", everyone, list(suite.parts))
    batch = Batch(everyone, sorted(done), time.monotonic() - start, jobs)
    _write_last_run(course, assignment, batch, mode)
    return batch


def class_results(course: Course, assignment: str, suite, fresh: dict | None = None) -> list:
    """One result per student on the roster: graded now (`fresh`), graded before, submitted but
    not graded yet, or missing."""
    fresh = fresh or {}
    submitted = set(course.submitted_students(assignment))
    found = []
    for student in course.roster(assignment):
        path = _results_path(course, student, assignment)
        if student in fresh:
            found.append(fresh[student])
        elif path.exists():
            found.append(results.read_json(path))
        elif student in submitted:
            found.append(results.ungraded(student, assignment, suite, "error",
                                          f"submitted but not graded yet: run `attnlab grade {assignment}`"))
        else:
            found.append(results.ungraded(student, assignment, suite, "missing", "no submission"))
    return found


def last_run_path(course: Course, assignment: str) -> Path:
    """A small summary of the last `attnlab grade` run of `assignment` (read by the class report)."""
    return course.root / ".attnlab" / f"{assignment}-last-run.json"


def _write_last_run(course: Course, assignment: str, batch: Batch, mode: str) -> None:
    path = last_run_path(course, assignment)
    path.parent.mkdir(exist_ok=True)
    summary = {"assignment": assignment, "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
               "seconds": round(batch.seconds, 3), "jobs": batch.jobs, "graded": len(batch.graded),
               "sandbox": mode}
    path.write_text(json.dumps(summary, indent=1) + "\n")


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
