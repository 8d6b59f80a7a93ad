"""Batch grading of an nbgrader course: grading slots in parallel, one gradebook writer.

Each slot is a process that owns one sandboxed worker and grades one submission at a time
(see `grading.start_slot`). The main process collects the results, records them in nbgrader's
gradebook a batch per transaction, then writes the autograded notebook and results.json with
the gradebook's scores, shows a progress bar, and finally writes the grades table. A submission is
graded again when its files changed (by content, not modification time).
"""
import gc
import json
import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path

from tqdm import tqdm

from . import autograded, classview, course_lock, grading, labs, results, secret
from .autograded import results_path
from .course import Course, CourseError, notebook_notes, submitted_notebook
from .gradebook import GradebookWriter
from .nbgrader_plugins import lms_late_unknown
from .outcome import UNRECORDED, Result
from .sandbox import Limits

# -- the batch -------------------------------------------------------------------------------

BATCH_SIZE = 16         # submissions per gradebook transaction ...
BATCH_SECONDS = 2.0     # ... or whatever arrived in this long


@dataclass
class Batch:
    results: list         # every student on the roster, graded now or before, missing included
    graded: list          # the students graded by this run
    seconds: float        # wall time of this run
    jobs: int
    failed: list = ()     # the students the grader itself failed on: nothing of theirs was recorded
    added: list = ()      # the students with a submission that this run added to the gradebook


def grade(course: Course, assignment: str, students=None, jobs: int | None = None, force: bool = False,
          limits: Limits = Limits(), mode: str = "bwrap", progress: bool = True, slots=None) -> Batch:
    """Grade the submissions of `assignment` (or of `students`) that changed since they were
    graded (all with `force`): record them in the gradebook, then write their files. The
    assignment's lock is held throughout (`attnlab serve` waits meanwhile).

    `slots`: slots the caller started early (`grading.start_slots`), used if they were started
    for this course's release, and stopped otherwise; of the grading they began, what this run
    grades is kept, the rest dropped."""
    with course_lock.hold(course.root, assignment, "attnlab grade"):
        return _grade(course, assignment, students, jobs, force, limits, mode, progress, slots)


def _grade(course: Course, assignment: str, students, jobs, force: bool, limits: Limits, mode: str,
           progress: bool, slots) -> Batch:
    start = time.monotonic()
    course.check_assignment(assignment)
    notebook = course.notebook_name(assignment)
    suite = labs.load(assignment).suite
    roster = course.roster(assignment)
    unknown = sorted(set(students or ()) - set(roster))
    refused = course.refused_students(assignment) if unknown else {}
    if set(unknown) & set(refused):
        raise CourseError("; ".join(f"{s}: {refused[s]}" for s in unknown if s in refused))
    if unknown:
        raise CourseError(f"unknown student(s) {', '.join(map(repr, unknown))}: not in the gradebook and nothing in "
                          f"{course.path('submitted', '<student>', assignment)}")
    candidates = roster if students is None else sorted(set(students))
    submitted = set(course.submitted_students(assignment))
    done, failed = {}, {}
    with GradebookWriter(course, assignment, Path(notebook).stem, suite.parts) as gradebook:
        digests = {s: course.digest(s, assignment) for s in candidates if s in submitted}
        recorded = gradebook.submitted()
        graded = {s: results.digests(results_path(course, s, assignment)) for s in digests}   # what results.json grades
        todo = [s for s, d in digests.items() if force or s not in recorded or graded[s][0] != d]
        works = {s: course.work_digest(s, assignment) for s in todo}
        resubmitted = {s for s in todo if s in recorded and _resubmitted(course, assignment, s, graded[s],
                                                                        (digests[s], works[s]), recorded[s])}
        jobs = max(1, min(jobs or os.cpu_count() or 1, len(todo) or 1))
        slot_args = (assignment, course.release(assignment), notebook, mode, limits)
        release = (course.release(assignment) / notebook).read_text()
        if slots is not None and (slots.args != slot_args or not todo):
            grading.stop_slots(slots)
            slots = None
        jobs = slots.jobs if slots else jobs
        with slots.pool if slots else ProcessPoolExecutor(jobs, grading.slot_context(), grading.start_slot,
                                                          slot_args) as pool:
            paths = {s: submitted_notebook(course.path("submitted", s, assignment), notebook) for s in todo}
            course_secret = secret.course_secret(course.root)
            tasks = {s: grading.Task(s, str(path), secret.submission_salt(course_secret, assignment, s, path))
                     for s, path in paths.items()}
            futures = {future: s for s, future in grading.submit(pool, tasks, slots.early if slots else {}).items()}
            gc.freeze()     # what is loaded by now lives to the end: collections leave it alone
            bar = tqdm(as_completed(futures), total=len(futures), desc=f"grading {assignment}", unit="nb",
                       disable=not progress, dynamic_ncols=True)
            pending, since = [], time.monotonic()

            def take(result, graded_notebook) -> None:
                nonlocal pending, since
                if result.status in UNRECORDED:
                    failed[result.student] = result
                    return
                student = result.student
                pending.append(complete(course, assignment, notebook, release, result, graded_notebook,
                                        paths[student], (digests[student], works[student])))
                if len(pending) >= BATCH_SIZE or time.monotonic() - since > BATCH_SECONDS:
                    done.update(record_and_write(course, assignment, notebook, gradebook, pending, resubmitted))
                    pending, since = [], time.monotonic()

            starved = []
            for future in bar:
                result, graded_notebook = future.result()
                if result.status == "busy":     # once more, when the rest of the run is done
                    starved.append(result.student)
                else:
                    take(result, graded_notebook)
            for future in as_completed([pool.submit(grading.grade_in_slot, *tasks[s]) for s in starved]):
                take(*future.result())
            done.update(record_and_write(course, assignment, notebook, gradebook, pending, resubmitted))
        gradebook.reprice(sorted(set(recorded) - set(todo)))
    everyone = classview.results_of(course, assignment, suite, done, failed, digests)
    refresh(course, assignment, everyone, written=done)
    batch = Batch(everyone, sorted(done), time.monotonic() - start, jobs, sorted(failed), sorted(gradebook.added))
    _write_last_run(course, assignment, batch, mode)
    return batch


def _resubmitted(course: Course, assignment: str, student: str, graded: tuple, now: tuple, recorded_time) -> bool:
    """Whether a recorded submission was replaced since it was graded, from the (digest, work
    digest) that results.json recorded and those of the submission `now`: by the student's work
    (a timestamp.txt written anew alone is a new time, not new work), else by the whole digest,
    else by nbgrader's submission time; unsure counts as replaced (a human then reviews the
    scores they gave)."""
    (graded_digest, graded_work), (digest, work) = graded, now
    if graded_work:
        return graded_work != work
    if graded_digest is not None:
        return graded_digest != digest
    try:
        submitted = course.timestamp(student, assignment)
    except OSError:
        return True
    return submitted is None or submitted != recorded_time


def is_resubmission(course: Course, assignment: str, student: str, recorded: dict, now: tuple) -> bool:
    """Whether the student's submission `now` ((digest, work digest)) replaces one that the
    gradebook holds (`recorded`: GradebookWriter.submitted())."""
    return student in recorded and _resubmitted(course, assignment, student,
                                                results.digests(results_path(course, student, assignment)),
                                                now, recorded[student])


def complete(course: Course, assignment: str, notebook: str, release: str, result: Result,
             graded_notebook: str | None, path: Path, digests: tuple) -> tuple:
    """(`result`, the notebook to write) of a submission graded from `path`, ready to record: with
    nbgrader's submission time, tampering with nbgrader's files, the submission's (digest, work
    digest), and a placeholder for a `notebook` that could not be read (`release`: its text)."""
    result.timestamp, problems = autograded.nbgrader_files(course, result.student, assignment)
    result.late_unknown = lms_late_unknown(course.root, assignment, result.student, path)
    result.tampering += problems
    result.digest, result.work_digest = digests
    if result.status != "unreadable":
        result.notes += notebook_notes(course.path("submitted", result.student, assignment), path, notebook,
                                       course.release(assignment) / notebook)
    return result, graded_notebook or autograded.placeholder(release, result)


def record_and_write(course: Course, assignment: str, notebook: str, gradebook, pending: list,
                     resubmitted: set, also=None) -> dict:
    """Record `pending` ([(result, notebook text)]) in the gradebook in one transaction (with
    `also(session)`, the caller's own statements), then write each one's files."""
    if not pending:
        return {}
    recorded = gradebook.record_batch([result for result, _ in pending], resubmitted, also)
    for result, graded_notebook in pending:
        result.recorded = recorded[result.student]
        autograded.write(course, assignment, notebook, result, graded_notebook)
    return {result.student: result for result, _ in pending}


def reprice(course: Course, assignment: str) -> list:
    """Give every recorded submission the late penalty of today's due date and extensions (nbgrader
    fixes a penalty when it grades, so an extension granted later, or a score a grader changed in
    formgrader, shows only once it is repriced), then bring the grades table and results.json up
    to date: what `attnlab feedback`, `report` and `lms-grades` do first. The class as it then stands."""
    suite = labs.load(assignment).suite
    with course_lock.hold(course.root, assignment, "attnlab: repricing"):
        with GradebookWriter(course, assignment, Path(course.notebook_name(assignment)).stem, suite.parts) as writer:
            writer.reprice(sorted(writer.submitted()))
        everyone = classview.results_of(course, assignment, suite)
        refresh(course, assignment, everyone)
    return everyone


def refresh(course: Course, assignment: str, everyone: list, written=()) -> None:
    """Write the grades table, and rewrite the results.json files (but those just `written`) whose
    gradebook scores changed since they were written (a human graded in formgrader), also where
    a newer submission waits: the graded work's results.json shows the grade that stands."""
    results.write_csv(course.grades_table(assignment), everyone, list(labs.load(assignment).suite.parts))
    for result in everyone:
        path = results_path(course, result.student, assignment)
        if result.student in written or not result.recorded or not path.exists():
            continue
        if result.status in UNRECORDED:   # not graded now: the graded work's file, with today's scores
            result = replace(classview.read_result(path) or result, recorded=result.recorded)
            if result.status in UNRECORDED:
                continue
        text = results.json_text(result, autograded.labels(course, assignment))
        if path.read_text() != text:
            autograded.replace_text(path, text)


def _write_last_run(course: Course, assignment: str, batch: Batch, mode: str) -> None:
    path = course.last_run_path(assignment)
    path.parent.mkdir(exist_ok=True)
    summary = {"assignment": assignment, "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
               "seconds": round(batch.seconds, 3), "jobs": batch.jobs, "graded": len(batch.graded),
               "sandbox": mode}
    path.write_text(json.dumps(summary, indent=1) + "\n")
