"""`attnlab serve`: each submission graded as it arrives in nbgrader's exchange, its feedback released.

The service watches the exchange's inbound folder (watchdog's events, and a rescan every
`AttnLabService.rescan` seconds in case one is missed). For each new entry it collects the
student's newest entry as `nbgrader collect --update` does (exchange.py), applies the course's
policies (`AttnLabService`: late work, attempts per window), grades the submission in one of the
assignment's warm slots (the slots and their sandboxed workers start once; each submission is
graded exactly as `attnlab grade` grades it), records it in the gradebook in one transaction
with the journal's note that it did (journal.py), writes autograded/ and results.json, writes
the feedback page and releases it into the exchange, where `nbgrader fetch_feedback` finds it.
Collecting and recording hold the assignment's lock (course_lock.py): `attnlab grade` on the
same course waits for them, and they for it; what the other one graded is not graded again.
"""
import gc
import logging
import os
import shutil
import signal
import threading
import time
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from sqlalchemy import select

from . import autograded, classview, course_lock, engine, feedback, grading, labs, results, secret
from .config import AttnLabService
from .course import Course, CourseError, submitted_notebook
from .student_files import unsafe_id
from .exchange import Exchange
from .gradebook import GradebookWriter, read, submissions
from .journal import OPEN, Journal
from .messages import points
from .outcome import ungraded
from .sandbox import Limits

RETRIES = 3             # gradings the grader may fail on before the instructor is left the submission
RETRY_SECONDS = 10.0    # the pause before grading again after a failure (or a machine too busy)
REFRESH_SECONDS = 30.0  # the grades table is rewritten at most this often while submissions arrive
TICK = 0.5              # the longest the service sleeps (how soon it sees SIGTERM)
UNFINISHED_SCAN = 0.25  # how soon the inbound folder is looked at again while an entry is being written
HOLDER = "attnlab serve"


@dataclass
class Flight:
    """A submission being graded in a slot."""
    row: int
    student: str
    path: Path
    digests: tuple          # (digest, work digest) of submitted/<student>/<assignment> when collected
    seen: float             # when it arrived (seconds since the epoch)
    future: object


class Lab:
    """An assignment served: its release, its hidden suite and its warm grading slots."""

    def __init__(self, course: Course, assignment: str, mode: str, limits: Limits, jobs: int):
        self.assignment = assignment
        self.notebook = course.notebook_name(assignment)
        self.release = (course.release(assignment) / self.notebook).read_text()
        self.suite = labs.load(assignment).suite
        # refused now, in one line, if the gradebook cannot record it; kept open, so that its
        # statements are compiled and the late penalty plugin is set up once
        self.writer = GradebookWriter(course, assignment, Path(self.notebook).stem, self.suite.parts)
        self.writer.gb.engine.dispose()     # no connection open while the slots fork
        self.args = (assignment, course.release(assignment), self.notebook, mode, limits)
        self.jobs = jobs
        self.slots = grading.start_slots(jobs, self.args)
        self.flights: dict = {}     # student -> Flight
        self.graded: dict = {}      # student -> (Flight, result, notebook text): to record
        self.changed = False        # since the grades table was written
        self.refreshed = 0.0
        self.undelivered = False    # recorded grades whose files or page may be unwritten
        self.paused_until = 0.0     # recording failed: tried again then
        self.failures = 0           # recordings failed in a row

    def busy(self) -> int:
        return len(self.flights) + len(self.graded)

    @contextmanager
    def gradebook(self):
        """The gradebook writer, with nothing loaded before: what formgrader changed is read anew."""
        try:
            yield self.writer
        finally:
            self.writer.gb.db.close()

    def restart(self) -> None:
        """New slots for a pool that broke (a slot died)."""
        grading.stop_slots(self.slots)
        self.slots = grading.start_slots(self.jobs, self.args)


class Service:
    def __init__(self, course: Course, settings: AttnLabService, mode: str, limits: Limits, once: bool = False,
                 log: logging.Logger | None = None):
        self.course, self.settings, self.once = course, settings, once
        self.mode, self.limits = mode, limits
        self.log = log or logging.getLogger("attnlab.serve")
        self.exchange = Exchange(course, self.log)
        self.assignments = list(settings.assignments) or [a for a in self.exchange.released()
                                                         if a in labs.assignments()]
        if not self.assignments:
            raise CourseError(f"no lab is released in the exchange ({self.exchange.outbound}): run `nbgrader "
                              "release_assignment LAB`, or name the labs in c.AttnLabService.assignments")
        self.journal: Journal | None = None
        self.staging = course.root / ".attnlab" / "service"
        self.secret = secret.course_secret(course.root)
        self.wake = threading.Event()
        self.stopping = 0
        self.next_scan = 0.0
        self.known: dict = {}
        self.labs: dict = {}

    # -- the loop ---------------------------------------------------------------------------

    def run(self) -> int:
        """Serve until SIGTERM (or, with `once`, until nothing is left to do now)."""
        try:
            with course_lock.hold(self.course.root, "serve", HOLDER, wait=False):
                return self._serve()
        except course_lock.Busy as exc:
            raise CourseError(f"this course is served already, by {exc.holder}") from None

    def _serve(self) -> int:
        self.staging.mkdir(parents=True, exist_ok=True)
        jobs = self.settings.slots or os.cpu_count() or 1
        try:
            for assignment in self.assignments:      # forked before any thread or connection: sooner ready
                self.labs[assignment] = Lab(self.course, assignment, self.mode, self.limits, jobs)
            self.journal = Journal(self.course.dirs.db_url)
            self.log.info("serving %s with %d warm slot(s) each, sandbox %s; exchange %s",
                          ", ".join(self.assignments), jobs, self.mode, self.exchange.inbound)
            self._recover()
            gc.freeze()     # what is loaded by now lives to the end: collections leave it alone
            observer = None if self.once else self.exchange.watch(self._changed)
            previous = {s: signal.signal(s, self._stop) for s in (signal.SIGTERM, signal.SIGINT)}
            try:
                done = self._loop()
            finally:
                for number, handler in previous.items():
                    signal.signal(number, handler)
                if observer:
                    observer.stop()
        finally:
            for lab in self.labs.values():
                lab.slots.pool.shutdown(wait=True, cancel_futures=True)
                lab.writer.gb.close()
            if self.journal:
                self.journal.close()
        return 0 if done else 1

    def _changed(self) -> None:
        """(watchdog's thread) The inbound folder changed: look at it now."""
        self.next_scan = 0.0
        self.wake.set()

    def _stop(self, number, frame) -> None:
        self.stopping += 1
        if self.stopping > 1:
            raise KeyboardInterrupt
        self.wake.set()

    def _loop(self) -> bool:
        """Whether it ended with everything recorded (with `once`, recording may keep failing)."""
        said_stopping = False
        while True:
            self._harvest()
            if self.stopping and not said_stopping:
                said_stopping = True
                self.log.info("stopping: finishing %d submission(s) being graded",
                              sum(lab.busy() for lab in self.labs.values()))
            if not self.stopping:
                if time.time() >= self.next_scan:
                    self._scan()
                self._schedule()        # before recording: the slots grade meanwhile
            self._record_all()
            busy = sum(lab.busy() + lab.undelivered for lab in self.labs.values())
            self._refresh_tables(force=not busy)
            if not busy and (self.stopping or (self.once and not self._due())):
                return True
            if self.once and any(lab.failures >= RETRIES for lab in self.labs.values()):
                self.log.error("recording keeps failing: stopping; the next run grades what is not recorded")
                return False
            self.wake.wait(min(TICK, max(0.0, self.next_scan - time.time())))
            self.wake.clear()

    def _due(self) -> bool:
        """Whether any entry is to be taken now (for `once`)."""
        now = time.time()
        return any(r.not_before is None or r.not_before <= now
                   for a in self.labs for r in self.journal.rows(a, OPEN))

    # -- arrivals -------------------------------------------------------------------------

    def _scan(self) -> None:
        self.next_scan = time.time() + self.settings.rescan     # set first: a change from now on asks again
        try:
            entries, unfinished = self.exchange.entries(set(self.labs))
        except OSError as exc:      # the exchange unmounted, say: looked at again at the next rescan
            self.log.error("cannot read the exchange's inbound folder %s: %s", self.exchange.inbound, exc)
            return
        for assignment in self.labs:
            known = self.known.setdefault(assignment, self.journal.known(assignment))
            new = [(e.student, e.name) for e in sorted(entries, key=lambda e: e.time)
                   if e.assignment == assignment and e.name not in known]
            self.journal.accept(assignment, new)
            known.update(name for _, name in new)
        if unfinished:
            self.next_scan = min(self.next_scan, time.time() + UNFINISHED_SCAN)

    def _schedule(self) -> None:
        """Start grading the students with entries due, oldest arrival first, while slots are free."""
        now = time.time()
        for assignment, lab in self.labs.items():
            due: dict = {}
            for row in self.journal.rows(assignment, OPEN):
                due.setdefault(row.student, []).append(row)
            for student, rows in due.items():
                if len(lab.flights) >= 2 * lab.jobs:     # one waits per slot: no slot waits for this loop
                    break
                if student not in lab.flights and student not in lab.graded and \
                        any(r.not_before is None or r.not_before <= now for r in rows):
                    try:
                        with course_lock.hold(self.course.root, assignment, HOLDER, wait=False):
                            try:
                                self._take(lab, student, rows)
                            except Exception as exc:    # not the student's doing: a full disk, ...
                                self._again_later(lab, student, exc)
                    except course_lock.Busy:
                        return      # `attnlab grade` runs: its end is seen at the next tick

    def _take(self, lab: Lab, student: str, rows: list) -> None:
        """Collect `student`'s newest entry and, as the policies allow, start grading it."""
        assignment, journal = lab.assignment, self.journal
        if unsafe_id(student):
            chosen, skipped = None, {r.entry: unsafe_id(student) for r in rows}
        else:
            journal.set([r.id for r in rows], "collecting")
            chosen, skipped = self.exchange.collect(assignment, student)
        for row in rows:
            why = skipped.get(row.entry) or ("" if chosen else "removed from the exchange before it was collected")
            if why:
                journal.set([row.id], "refused", outcome=why)
                self._said(row, f"not collected: {why}")
        rows = [r for r in rows if r.entry not in skipped and chosen]
        row = next((r for r in rows if r.entry == chosen), None)
        for other in rows:
            if other is not row:        # older (or a newer one arrived since the scan: it is taken next)
                journal.set([other.id], "superseded", outcome=f"superseded by {chosen}")
                self._said(other, "superseded by a newer submission")
        if row is None:
            return
        digests = (self.course.digest(student, assignment), self.course.work_digest(student, assignment))
        results_path = autograded.results_path(self.course, student, assignment)
        recorded = self._recorded(lab, student) if results.digests(results_path)[0] == digests[0] else None
        if recorded:            # graded by `attnlab grade` meanwhile (or before a restart)
            result = results.read_json(results_path)
            result.recorded = recorded
            self._deliver(lab, row, result, "graded by another run (attnlab grade)")
            return
        if self._held(lab, row):
            return
        path = submitted_notebook(self.course.path("submitted", student, assignment), lab.notebook)
        task = grading.Task(student, str(path), secret.submission_salt(self.secret, assignment, student, path))
        journal.set([row.id], "grading", started=time.time(), not_before=None)
        future = lab.slots.pool.submit(grading.grade_in_slot, *task)
        future.add_done_callback(lambda _: self.wake.set())
        lab.flights[student] = Flight(row.id, student, path, digests, row.seen, future)

    def _held(self, lab: Lab, row) -> bool:
        """Whether a policy keeps the collected submission from being graded now: it is late and
        late work waits for the instructor, or the student used up their attempts."""
        assignment, student, settings = lab.assignment, row.student, self.settings
        late = self._seconds_late(assignment, student)
        if late and not settings.grade_late:
            message = (f"This submission arrived {_duration(late)} after your due date. It is kept, and your "
                       "instructor grades it with the course's late policy.")
            self.journal.set([row.id], "late", outcome="late: left for attnlab grade")
            self._notice(lab, row, message, f"late ({_duration(late)} after the due date): left for `attnlab grade`")
            return True
        if not settings.attempts:
            return False
        began = self.journal.attempts(assignment, student, time.time() - settings.attempt_window)
        if len(began) < settings.attempts:
            return False
        until = began[-settings.attempts] + settings.attempt_window
        self.journal.set([row.id], "held", not_before=until, outcome=f"held until {_clock(until)}")
        if row.state != "held":
            window = _duration(settings.attempt_window)
            self._notice(lab, row, f"You have had {len(began)} gradings of {assignment} in the last {window} (the "
                                   f"limit is {settings.attempts}). This submission is kept: it is graded after "
                                   f"{_clock(until)}, unless you submit again (then your newest one is), or "
                                   "your instructor grades it first. Fetch your feedback again then.",
                         f"held: {len(began)} gradings in the last {window} (limit {settings.attempts}); "
                         f"graded after {_clock(until)}")
        return True

    def _seconds_late(self, assignment: str, student: str) -> float:
        """How late the collected submission is, by nbgrader's rules (its timestamp.txt against
        the due date and the student's extension in the gradebook); 0 if not judged."""
        from nbgrader.api import Assignment, SubmittedAssignment
        try:
            submitted = self.course.timestamp(student, assignment)
        except OSError:
            return 0.0
        with self.journal.engine.connect() as db:
            due = db.scalar(select(Assignment.duedate).where(Assignment.name == assignment))
            extension = db.scalar(select(SubmittedAssignment.extension).join(Assignment).where(
                Assignment.name == assignment, SubmittedAssignment.student_id == student))
        if submitted is None or due is None:
            return 0.0
        return max(0.0, (submitted - due - (extension or timedelta(0))).total_seconds())

    # -- results --------------------------------------------------------------------------

    def _harvest(self) -> None:
        """Take what the slots have graded."""
        for lab in self.labs.values():
            broken = False
            for student, flight in list(lab.flights.items()):
                if not flight.future.done():
                    continue
                del lab.flights[student]
                try:
                    result, graded_notebook = flight.future.result()
                except Exception as exc:     # a slot died (the pool is gone then), or the grader failed
                    broken = broken or isinstance(exc, BrokenProcessPool)
                    result, graded_notebook = ungraded(student, lab.assignment, lab.suite, "error",
                                                               f"the grading slot failed ({exc})"), None
                if result.status in ("error", "busy"):     # the grader's failure (or the machine's): again
                    self._retry(lab, [self.journal.row(flight.row)], result.notes[0] if result.notes else
                                result.status, counted=result.status == "error", notice=True)
                else:
                    lab.graded[student] = (flight, result, graded_notebook)
            if broken:
                lab.restart()

    def _record_all(self) -> None:
        for lab in self.labs.values():
            if (lab.graded or lab.undelivered) and time.time() >= lab.paused_until:
                try:
                    with course_lock.hold(self.course.root, lab.assignment, HOLDER, wait=False):
                        try:
                            self._deliver_recorded(lab)
                            self._record(lab)
                        except Exception as exc:    # the gradebook locked for a minute, a full disk, ...
                            self._unrecorded(lab, exc)
                except course_lock.Busy:
                    pass        # recorded once `attnlab grade` is done

    def _retry(self, lab: Lab, rows: list, why: str, counted: bool = True, notice: bool = False) -> None:
        """Take `rows` (a student's entries) again in a while: a failure that is not the
        student's; after RETRIES of them (`counted`), the instructor is left the submission (and
        with `notice`, the student told)."""
        row, tries = rows[-1], max(r.tries for r in rows) + counted
        if tries < RETRIES:
            pause = RETRY_SECONDS * max(tries, 1)
            self.journal.set([r.id for r in rows], "accepted", started=None, tries=tries,
                             not_before=time.time() + pause)
            self._said(row, f"not graded ({why}), try {tries} of {RETRIES}: again in {_duration(pause)}",
                       logging.WARNING)
            return
        self.journal.set([r.id for r in rows], "failed", started=None, tries=tries, outcome=f"not graded: {why}")
        said = f"NOT GRADED after {tries} tries ({why}): run `attnlab grade {lab.assignment}`"
        if notice:
            self._notice(lab, row, "The grader could not grade this submission. It is kept, and your "
                                   "instructor grades it.", said, logging.ERROR)
        else:
            self._said(row, said, logging.ERROR)

    def _again_later(self, lab: Lab, student: str, exc: Exception) -> None:
        """Taking `student`'s entries failed: what a collection may have half copied is removed."""
        rows = self.journal.rows(lab.assignment, ("collecting", "grading"), student)
        if student in lab.flights or not rows:
            return
        if any(r.state == "collecting" for r in rows):
            shutil.rmtree(self.course.path("submitted", student, lab.assignment), ignore_errors=True)
        if isinstance(exc, BrokenProcessPool):
            lab.restart()
        self._retry(lab, rows, f"{type(exc).__name__}: {exc}")

    def _unrecorded(self, lab: Lab, exc: Exception) -> None:
        """Recording failed, or what follows it: said in one line, tried again in a while. What the
        transaction recorded is finished from its staged files (`_deliver_recorded`); the rest
        waits in memory (a restart grades it again)."""
        lab.paused_until = time.time() + RETRY_SECONDS
        lab.undelivered = True
        lab.failures += 1
        recorded = {r.id for r in self.journal.rows(lab.assignment, ["recorded"])}
        for student, (flight, _, _) in list(lab.graded.items()):
            if flight.row in recorded:
                del lab.graded[student]
        for row in self.journal.rows(lab.assignment, ["grading"]):     # graded by another run: taken again
            if row.student not in lab.flights and row.student not in lab.graded:
                self.journal.set([row.id], "accepted", started=None)
        self.log.error("%s: recording failed (%s: %s); tried again in %s", lab.assignment, type(exc).__name__,
                       str(exc)[:300], _duration(RETRY_SECONDS))

    def _record(self, lab: Lab) -> None:
        """Record what the slots graded in one transaction (the journal's notes in it), then write
        autograded/ and results.json, and deliver each page."""
        assignment, course = lab.assignment, self.course
        if not lab.graded:
            return
        fresh, known = [], []
        with lab.gradebook() as writer:
            recorded = {s.student_id: s.timestamp for s in submissions(writer.gb, assignment, lab.graded).values()}
            for student, (flight, result, graded_notebook) in lab.graded.items():
                now = (course.digest(student, assignment), course.work_digest(student, assignment))
                if now != flight.digests:       # changed meanwhile (by hand): graded again
                    self.journal.set([flight.row], "accepted", started=None)
                elif results.digests(autograded.results_path(course, student, assignment))[0] == now[0] \
                        and student in recorded:
                    known.append((flight, results.read_json(autograded.results_path(course, student, assignment))))
                else:
                    fresh.append((flight, *engine.complete(course, assignment, lab.notebook, lab.release, result,
                                                          graded_notebook, flight.path, now)))
            again = {f.student for f, result, _ in fresh
                     if engine.is_resubmission(course, assignment, f.student, recorded, (result.digest,
                                                                                         result.work_digest))}
            for flight, result, text in fresh:
                self._stage(flight.row, result, text)
            ids = [flight.row for flight, _, _ in fresh]
            engine.record_and_write(course, assignment, lab.notebook, writer, [(r, t) for _, r, t in fresh], again,
                                    lambda db: self.journal.update(db, ids, "recorded"))
            grades = read(writer.gb, assignment, Path(lab.notebook).stem, [f.student for f, _ in known])
        lab.graded.clear()
        lab.changed, lab.failures = True, 0
        for flight, result in known:
            result.recorded = grades.get(flight.student)
            self._deliver(lab, self.journal.row(flight.row), result, "graded by another run (attnlab grade)")
        for flight, result, _ in fresh:
            self._deliver(lab, self.journal.row(flight.row), result, "", flight.seen)

    def _recorded(self, lab: Lab, student: str):
        """The gradebook's grade of `student`'s submission (None if none)."""
        with lab.gradebook() as writer:
            return read(writer.gb, lab.assignment, Path(lab.notebook).stem, [student]).get(student)

    def _deliver(self, lab: Lab, row, result, how: str, seen: float | None = None) -> None:
        """The page of a recorded `result`, released; the entry done; its log line (with the
        time from its arrival, `seen`, when it was graded now)."""
        assignment = lab.assignment
        feedback.write_page(self.course, assignment, lab.notebook, result, self.settings.before_due_date)
        problem = self._release(assignment, row.student)
        verdict = f"{result.status} {points(result.score)} / {points(result.max_score)}"
        self.journal.set([row.id], "done", outcome=verdict)
        for path in self._staged(row.id):
            path.unlink(missing_ok=True)
        waited = time.time() - seen - result.seconds if seen else 0.0     # all but the grading, up to the page
        timing = f" (waited {waited:.1f} s, graded in {result.seconds:.1f} s)" if seen else ""
        self._said(row, f"{verdict}{how and ', ' + how}{timing}{problem}")

    def _notice(self, lab: Lab, row, message: str, said: str, level: int = logging.INFO) -> None:
        """Tell the student, on a page for the collected submission, why it is not graded now."""
        page = feedback.write_notice(self.course, lab.assignment, lab.notebook, row.student, message)
        problem = self._release(lab.assignment, row.student) if page else "; no page: the submission has no secret"
        self._said(row, said + problem, level)

    def _release(self, assignment: str, student: str) -> str:
        """'' once the student's page is in the exchange, else why not (for the log line)."""
        try:
            self.exchange.release_feedback(assignment, student)
            return ""
        except Exception as exc:    # nbgrader's ExchangeError, a full disk: the grade stands
            return f"; the page was NOT released ({type(exc).__name__}: {exc}): run `nbgrader release_feedback`"

    def _said(self, row, text: str, level: int = logging.INFO) -> None:
        self.log.log(level, "%s %s: %s", row.assignment, row.student, text)

    # -- crash safety -------------------------------------------------------------------

    def _stage(self, row: int, result, graded_notebook: str) -> None:
        """Keep what a recording needs to write its files, for a restart after it."""
        result_path, notebook_path = self._staged(row)
        notebook_path.write_text(graded_notebook, encoding="utf-8", errors="backslashreplace")
        result_path.write_text(results.json_text(result))

    def _staged(self, row: int) -> tuple:
        return self.staging / f"{row}.json", self.staging / f"{row}.ipynb"

    def _recover(self) -> None:
        """Put every entry a previous run left unfinished back where its work is redone: a
        collection is made again (what it copied may be partial), a grading is graded again
        (nothing of it was recorded), and a recorded grade's files are written and its page
        released (from what was staged before it was recorded)."""
        for assignment, lab in self.labs.items():
            with course_lock.hold(self.course.root, assignment, HOLDER):
                for row in self.journal.rows(assignment, ["collecting"]):
                    shutil.rmtree(self.course.path("submitted", row.student, assignment), ignore_errors=True)
                    self.journal.set([row.id], "accepted", started=None)
                for row in self.journal.rows(assignment, ["grading"]):
                    self.journal.set([row.id], "accepted", started=None)
                lab.undelivered = True
        live = {str(p) for a in self.labs for r in self.journal.rows(a, ["recorded"]) for p in self._staged(r.id)}
        for path in self.staging.iterdir():
            if str(path) not in live:
                path.unlink()

    def _deliver_recorded(self, lab: Lab) -> None:
        """Finish the recordings whose files or page were not written (a crash, a full disk):
        from what was staged before they were recorded, never recording them again."""
        if not lab.undelivered:
            return
        for row in self.journal.rows(lab.assignment, ["recorded"]):
            result_path, notebook_path = self._staged(row.id)
            try:
                result = results.read_json(result_path)
                text = notebook_path.read_text()
            except (OSError, ValueError, KeyError, TypeError):  # removed by hand: it is graded again
                self._said(row, f"what was recorded is gone from {self.staging}: graded again", logging.WARNING)
                self.journal.set([row.id], "accepted", started=None)
                continue
            result.recorded = self._recorded(lab, row.student)
            autograded.write(self.course, lab.assignment, lab.notebook, result, text)
            self._deliver(lab, row, result, "recorded before a restart")
            lab.changed = True
        lab.undelivered = False

    def _refresh_tables(self, force: bool = False) -> None:
        """The grades table of each assignment graded since it was written (and results.json
        files whose gradebook scores a human changed), as `attnlab grade` leaves them."""
        for assignment, lab in self.labs.items():
            if lab.changed and (force or time.monotonic() - lab.refreshed > REFRESH_SECONDS):
                try:
                    with course_lock.hold(self.course.root, assignment, HOLDER, wait=False):
                        engine.refresh(self.course, assignment, classview.results_of(self.course, assignment,
                                                                                     lab.suite))
                except course_lock.Busy:
                    continue
                except Exception as exc:        # a full disk, ...: the grades stand in the gradebook
                    self.log.error("%s: the grades table was not written (%s: %s)", assignment,
                                   type(exc).__name__, str(exc)[:300])
                lab.changed, lab.refreshed = False, time.monotonic()


def _duration(seconds: float) -> str:
    minutes = round(seconds / 60)
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{minutes // 60} h {minutes % 60} min" if minutes >= 60 else f"{minutes} min"


def _clock(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


class EscapingFormatter(logging.Formatter):
    """One line per record, with every character that is not printable (control characters of
    a student's id or file name, a newline) escaped, so none reaches the terminal raw."""

    def format(self, record) -> str:
        return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in super().format(record))


def logger() -> logging.Logger:
    log = logging.getLogger("attnlab.serve")
    if not log.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(EscapingFormatter("%(asctime)s %(levelname)s %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)
        log.propagate = False
    return log
