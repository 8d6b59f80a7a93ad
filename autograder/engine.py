"""Batch grading of an nbgrader course: grading slots in parallel, one gradebook writer.

Each slot is a process that owns one sandboxed worker and grades one submission at a time
(see `grading.start_slot`). The main process collects the results, records them in nbgrader's
gradebook a batch per transaction, then writes the autograded notebook and results.json with
the gradebook's scores, shows a progress bar, and finally writes the grades table. A submission is
graded again when its files changed (by content, not modification time).
"""
import gc
import html
import json
import os
import secrets
import stat
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path

import nbformat
from tqdm import tqdm

from . import course_lock, gradebook, grading, labs, results, secret, student_files
from .course import Course, CourseError, graded_digests, notebook_notes, submitted_notebook
from .gradebook import GradebookWriter
from .nbgrader_plugins import lms_late_unknown
from .results import Result
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
        graded = {s: graded_digests(results_path(course, s, assignment)) for s in digests}   # what results.json grades
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
                if result.status in results.UNRECORDED:
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
    everyone = class_results(course, assignment, suite, done, failed, digests)
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
                                                graded_digests(results_path(course, student, assignment)),
                                                now, recorded[student])


def complete(course: Course, assignment: str, notebook: str, release: str, result: Result,
             graded_notebook: str | None, path: Path, digests: tuple) -> tuple:
    """(`result`, the notebook to write) of a submission graded from `path`, ready to record: with
    nbgrader's submission time, tampering with nbgrader's files, the submission's (digest, work
    digest), and a placeholder for a `notebook` that could not be read (`release`: its text)."""
    result.timestamp, problems = _nbgrader_files(course, result.student, assignment)
    result.late_unknown = lms_late_unknown(course.root, assignment, result.student, path)
    result.tampering += problems
    result.digest, result.work_digest = digests
    if result.status != "unreadable":
        result.notes += notebook_notes(course.path("submitted", result.student, assignment), path, notebook,
                                       course.release(assignment) / notebook)
    return result, graded_notebook or _placeholder(release, result)


def record_and_write(course: Course, assignment: str, notebook: str, gradebook, pending: list,
                     resubmitted: set, also=None) -> dict:
    """Record `pending` ([(result, notebook text)]) in the gradebook in one transaction (with
    `also(session)`, the caller's own statements), then write each one's files."""
    if not pending:
        return {}
    recorded = gradebook.record_batch([result for result, _ in pending], resubmitted, also)
    for result, graded_notebook in pending:
        result.recorded = recorded[result.student]
        write_autograded(course, assignment, notebook, result, graded_notebook)
    return {result.student: result for result, _ in pending}


def class_results(course: Course, assignment: str, suite, fresh: dict | None = None, failed: dict | None = None,
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
        result = fresh.get(student) or _read_result(results_path(course, student, assignment))
        why = _not_current(course, assignment, student, result, failed, digests) \
            if student in recorded and student not in fresh else None
        if student in fresh:
            found.append(result)
        elif why or student in failed:
            kept = "the gradebook's grade stands" if student in recorded else "nothing was recorded"
            status = failed[student].status if student in failed else "error"
            when = " when the machine is less busy" if status == "busy" else ""
            found.append(results.ungraded(student, assignment, suite, status,
                                          f"{why or failed[student].notes[0]}; {kept}: {again}{when}"))
            found[-1].recorded = recorded.get(student, {})
        elif result is not None and student in recorded:
            result.recorded = recorded[student]
            found.append(result)
        elif result is not None:
            found.append(results.ungraded(student, assignment, suite, "error",
                                          "graded, but not in the gradebook (removed from it?), so nbgrader export "
                                          "leaves them out; `attnlab grade` adds back a student with a submission: "
                                          f"to drop them, also remove {course.path('submitted', student, assignment)}"))
        elif student in submitted:
            found.append(results.ungraded(student, assignment, suite, "error", f"submitted but not graded yet: {again}"))
        elif student in refused:
            found.append(results.ungraded(student, assignment, suite, "error",
                                          f"submitted, but the folder is not graded: {refused[student]}"))
        else:
            found.append(results.ungraded(student, assignment, suite, "missing", "no submission"))
        found[-1].assignment_points = points
    return found


def _read_result(path: Path) -> Result | None:
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
    """Every student's result with the gradebook's grades as they stand now (for feedback and
    the report): the recorded submissions get the late penalty of today's due date and
    extensions, as `grade` gives them, then the grades table and results.json are brought up to date."""
    suite = labs.load(assignment).suite
    with course_lock.hold(course.root, assignment, "attnlab report"):   # (feedback holds it already)
        with GradebookWriter(course, assignment, Path(course.notebook_name(assignment)).stem, suite.parts) as gradebook:
            gradebook.reprice(sorted(gradebook.submitted()))
        everyone = class_results(course, assignment, suite)
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
        if result.status in results.UNRECORDED:   # not graded now: the graded work's file, with today's scores
            result = replace(_read_result(path) or result, recorded=result.recorded)
            if result.status in results.UNRECORDED:
                continue
        text = results.json_text(result)
        if path.read_text() != text:
            _replace(path, text)


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


def results_path(course: Course, student: str, assignment: str) -> Path:
    return course.path("autograded", student, assignment) / "results.json"


def _placeholder(release: str, result: Result) -> str:
    """For a submission that could not be read: the release notebook, headed by the reason, so
    that formgrader lists it under Manual Grading like every other submission."""
    nb = nbformat.reads(release, as_version=4)
    reason = "; ".join(result.notes) or result.status
    nb.cells.insert(0, nbformat.v4.new_markdown_cell(
        f"**attnlab: this submission is {result.status}** ({_escape_md(reason)}). "
        "Below is the release notebook, not the student's work.", id="attnlab-status"))
    return nbformat.writes(nb)


_MARKDOWN = {ord(c): f"&#{ord(c)};" for c in "`*_[]()!\\"}     # markdown's syntax, as HTML entities


def _escape_md(text: str) -> str:
    return html.escape(text).translate(_MARKDOWN)


def _nbgrader_files(course: Course, student: str, assignment: str) -> tuple:
    """(submission time as ISO text or "", tampering found): timestamp.txt and
    submission_secret.txt are nbgrader's, so one that is not a regular file, or not a time, was
    put there by hand; the grader reads neither then."""
    problems, folder = [], course.path("submitted", student, assignment)
    try:
        timestamp = course.timestamp(student, assignment)
    except OSError as exc:
        timestamp = None
        problems.append(f"{exc}: lateness was not judged")
    set_back = student_files.set_back(folder)
    if set_back:
        problems.append(set_back)
    try:
        _submitted_text(folder / "submission_secret.txt")
    except OSError as exc:
        problems.append(f"{exc}: the feedback gets a secret of its own")
    return (timestamp.isoformat() if timestamp else ""), problems


def _submitted_text(path: Path) -> str | None:
    """A small file of a submission, None if it is missing; read without following a link."""
    return student_files.read(path, limit=4096).decode("utf-8", "replace") if os.path.lexists(path) else None


def _copied(path: Path) -> str | None:
    try:
        return _submitted_text(path)
    except OSError:     # found by _nbgrader_files, and reported
        return None


def write_autograded(course: Course, assignment: str, notebook: str, result: Result, graded_notebook: str) -> None:
    """autograded/<student>/<assignment>/ as nbgrader lays it out (the notebook, timestamp.txt,
    submission_secret.txt), plus results.json; each file replaced atomically."""
    out = course.path("autograded", result.student, assignment)
    out.mkdir(parents=True, exist_ok=True)
    _replace(out / notebook, graded_notebook)
    source = course.path("submitted", result.student, assignment)
    secret = _copied(source / "submission_secret.txt")
    if secret is not None or not (out / "submission_secret.txt").is_file():   # release_feedback needs one
        _replace(out / "submission_secret.txt", secret if secret is not None else secrets.token_hex(64))
    # ... and a time: nbgrader's, or for a submission without a valid one (placed by hand, or
    # tampered with) the files' latest modification (lateness is not judged then)
    timestamp = _copied(source / "timestamp.txt") if result.timestamp else None
    _replace(out / "timestamp.txt", timestamp or _modified(source))
    _replace(out / "results.json", results.json_text(result))


def _modified(folder: Path) -> str:
    """The latest modification time of the regular files in `folder`, as nbgrader writes a timestamp."""
    files = [p.lstat() for p in folder.iterdir()] if folder.is_dir() else []
    latest = max((f.st_mtime for f in files if stat.S_ISREG(f.st_mode)), default=time.time())
    return datetime.fromtimestamp(latest, timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f %Z")


def _replace(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8", errors="backslashreplace")   # student text never stops a write
    tmp.replace(path)
