"""`attnlab serve` on a real nbgrader exchange: students submit with nbgrader's own code and fetch
their feedback while the service runs; the scores are `attnlab grade`'s; SIGKILL at any point
loses nothing and records nothing twice; attempt limits, late work and what a student sees before
the due date follow the course's policies; `attnlab grade` alongside the service waits for it.
"""
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import nbformat
import pytest
from traitlets.config import Config

from autograder import course_lock, examples, feedback, notebooks, results
from autograder.course import open_course
from conftest import ASSIGNMENT, BIN, ROOT, copy_course, run_tool

pytestmark = pytest.mark.full     # the full tier: the service on a real exchange

NOTEBOOK = f"{ASSIGNMENT}.ipynb"
HERE = Path(__file__).parent


def release():
    return notebooks.read(ROOT / "assignments" / ASSIGNMENT / NOTEBOOK)


def answers(share: float = 1.0) -> str:
    """The release with the first `share` of the answer key's answers filled in."""
    key = notebooks.read(ROOT / "solutions" / ASSIGNMENT / NOTEBOOK)
    solved = [(gid, notebooks.without_markers(code)) for gid, code in notebooks.answer_cells(key).items()]
    return nbformat.writes(examples.fill(release(), dict(solved[: round(len(solved) * share)])))


def variant(text: str, n: int) -> str:
    """`text` with a note of the student's own: another submission, the same answers."""
    nb = nbformat.reads(text, as_version=4)
    nb.cells.append(nbformat.v4.new_markdown_cell(f"Attempt {n}."))
    return nbformat.writes(nb)


def exchange_course(tmp_path, config: str = "") -> tuple:
    """A course with an exchange of its own and the lab released: (course, exchange root)."""
    course = copy_course(tmp_path / "course")
    exchange = tmp_path / "exchange"
    exchange.mkdir()
    exchange.chmod(0o777)
    with open(course / "nbgrader_config.py", "a") as f:
        f.write(f"\nc.Exchange.root = {str(exchange)!r}\nc.ExchangeCollect.check_owner = False\n"
                f"c.AttnLabService.slots = 2\n{config}\n")
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=course)
    run_tool("nbgrader", "release_assignment", ASSIGNMENT, cwd=course)
    return course, exchange


def utc_now() -> datetime:
    """Now, as nbgrader's gradebook keeps times (UTC, naive)."""
    return datetime.now(timezone.utc).replace(tzinfo=None)


def configure(course: Path, line: str) -> None:
    with open(course / "nbgrader_config.py", "a") as f:
        f.write(line + "\n")


class Student:
    """A student's home with the fetched lab; submits and fetches feedback with nbgrader's own
    exchange classes (in this process: a few ms), or its commands (`cli=True`)."""

    def __init__(self, tmp_path: Path, name: str, exchange: Path):
        self.name, self.home = name, tmp_path / "students" / name
        self.config = Config({"Exchange": {"root": str(exchange), "cache": str(self.home / ".cache"),
                                           "assignment_dir": str(self.home)},
                              "CourseDirectory": {"course_id": "attnlab"}})
        self.home.mkdir(parents=True)
        (self.home / "nbgrader_config.py").write_text(
            f"c = get_config()\nc.Exchange.root = {str(exchange)!r}\n"
            f"c.Exchange.cache = {str(self.home / '.cache')!r}\nc.CourseDirectory.course_id = 'attnlab'\n")

    def _app(self, kind: str):
        from nbgrader.auth import Authenticator
        from nbgrader.coursedir import CourseDirectory
        from nbgrader.exchange import default
        dirs = CourseDirectory(config=self.config, root=str(self.home), assignment_id=ASSIGNMENT, student_id=self.name)
        return getattr(default, kind)(coursedir=dirs, authenticator=Authenticator(config=self.config),
                                      config=self.config)

    def submit(self, text: str, cli: bool = False) -> str:
        """Submit `text` as the lab's notebook; returns nbgrader's submission time."""
        if not (self.home / ASSIGNMENT).exists():
            if cli:
                run_tool("nbgrader", "fetch_assignment", ASSIGNMENT, cwd=self.home)
            else:
                self._app("ExchangeFetchAssignment").start()
        (self.home / ASSIGNMENT / NOTEBOOK).write_text(text)
        if cli:
            out = run_tool("nbgrader", "submit", ASSIGNMENT, "--student", self.name, cwd=self.home)
            return re.search(r"Submitted as: attnlab \S+ (.+)", out.stderr).group(1).strip()
        submit = self._app("ExchangeSubmit")
        submit.start()
        return submit.timestamp

    def feedback(self, cli: bool = False) -> dict:
        """{submission time: feedback page} of what `nbgrader fetch_feedback` brings."""
        if cli:
            run_tool("nbgrader", "fetch_feedback", ASSIGNMENT, "--student", self.name, cwd=self.home)
        else:
            self._app("ExchangeFetchFeedback").start()
        folder = self.home / ASSIGNMENT / "feedback"
        return {p.name: (p / f"{ASSIGNMENT}.html").read_text() for p in folder.iterdir()} if folder.is_dir() else {}


class Served:
    """`attnlab serve` in a process of its own (through tests/crashing_service.py: every
    recording is noted in `audit`, and `crash` kills it at that point)."""

    def __init__(self, course: Path, *args, crash: str = "", **env):
        self.course = course
        self.log_path = course / f"serve-{time.monotonic_ns()}.log"
        env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
               "PYTHONPATH": str(ROOT), **env}
        command = [sys.executable, str(HERE / "crashing_service.py"), str(course / "audit.txt"),
                   *([crash] if crash else []), "--", *args]
        with open(self.log_path, "w") as log:
            self.process = subprocess.Popen(command, cwd=course, env=env, stdout=log, stderr=log)

    def log(self) -> str:
        return self.log_path.read_text()

    def stop(self, sig=signal.SIGTERM, timeout: float = 300) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        return self.process.wait(timeout)

    def wait(self, timeout: float = 600) -> int:
        return self.process.wait(timeout)


def journal(course: Path) -> list:
    """[(student, entry, state, started, outcome)] of the service's journal."""
    with sqlite3.connect(course / "gradebook.db") as db:
        try:
            return db.execute("select student, entry, state, started, outcome from attnlab_service order by id"
                              ).fetchall()
        except sqlite3.OperationalError:        # the service has not made its table yet
            return []


def wait_until(what, served: Served | None = None, timeout: float = 600):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        found = what()
        if found:
            return found
        if served and served.process.poll() is not None:
            pytest.fail(f"the service ended ({served.process.returncode}):\n{served.log()}")
        time.sleep(0.1)
    pytest.fail(f"timed out{': ' + served.log() if served else ''}")


def settled(course: Path, entries: int):
    rows = journal(course)
    final = ("done", "superseded", "refused", "late", "held", "failed")
    return len(rows) >= entries and all(r[2] in final for r in rows)


def gradebook_scores(course: Path) -> dict:
    from autograder import gradebook
    with open_course(course).gradebook() as gb:
        recorded = gradebook.read(gb, ASSIGNMENT, ASSIGNMENT, [s.id for s in gb.students])
    return {s: r.score for s, r in recorded.items()}


def result(course: Path, student: str) -> dict:
    return json.loads((course / "autograded" / student / ASSIGNMENT / "results.json").read_text())


def page_total(html: str) -> str:
    return re.search(r'data-testid="total">([^<]+)<', html).group(1)


def exchange_pages(exchange: Path) -> dict:
    return {p.name: p.read_text() for p in (exchange / "attnlab" / "feedback").glob("*.html")}


def test_students_get_their_feedback_while_the_service_runs_and_the_scores_are_the_batch_commands(tmp_path):
    """Three students submit with `nbgrader submit` and fetch a per-check page with `nbgrader
    fetch_feedback` while the service runs; the scores equal `attnlab grade`'s on the same files.
    An entry whose name holds control characters is refused, and its name reaches the log escaped."""
    course, exchange = exchange_course(tmp_path)
    forged = exchange / "attnlab" / "inbound" / f"\x1b]0;owned\x07+{ASSIGNMENT}+2026-01-10 12:00:00 UTC+x"
    forged.mkdir()
    served = Served(course)
    texts = {"ada": answers(), "bob": nbformat.writes(release()), "cy": answers(0.5)}
    students = {name: Student(tmp_path, name, exchange) for name in texts}
    times = {name: students[name].submit(text, cli=True) for name, text in texts.items()}
    wait_until(lambda: settled(course, 4), served)
    pages = {name: students[name].feedback(cli=True) for name in texts}     # the service still runs
    assert served.process.poll() is None
    assert served.stop() == 0
    log = served.log()
    for name, page in pages.items():
        assert list(page) == [times[name]]
        html = page[times[name]]
        assert page_total(html) == f"{result(course, name)['score']:g} / 118"
        assert html.count('data-testid="check"') > 30 and "While the assignment is open" in html   # no due date
        assert re.search(rf"INFO {ASSIGNMENT} {name}: (graded|partly graded) [\d.]+ / 118 \(waited ", log), log
    assert "\x1b" not in log and "\x07" not in log and "\\x1b]0;owned\\x07" in log
    assert "not collected: " in log
    scores = gradebook_scores(course)
    assert scores == {name: result(course, name)["score"] for name in texts}
    assert scores["ada"] == 100 and scores["bob"] == 0 and 0 < scores["cy"] < 100

    batch = copy_course(tmp_path / "batch")                    # the batch command on the same files
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=batch)
    for name in texts:
        source = course / "submitted" / name / ASSIGNMENT
        target = batch / "submitted" / name / ASSIGNMENT
        target.mkdir(parents=True)
        for path in source.iterdir():
            (target / path.name).write_bytes(path.read_bytes())
    run_tool("attnlab", "grade", ASSIGNMENT, "--quiet", "--jobs", "2", cwd=batch)
    for name in texts:
        ours, theirs = result(course, name), result(batch, name)
        assert ours["score"] == theirs["score"]
        assert [(t["name"], t.get("score")) for t in ours["tests"]] == [(t["name"], t.get("score")) for t in theirs["tests"]]


CRASH_POINTS = ["exchange.Exchange.collect:partial",              # submitted/ half copied
                "gradebook.GradebookWriter._record:before",       # inside the recording transaction
                "autograded.write:before",                 # recorded, no files yet
                "feedback.write_page:before",                     # files written, no page
                "exchange.Exchange.release_feedback:before"]      # page written, not released


def test_sigkill_at_any_point_of_a_burst_loses_nothing_and_records_nothing_twice(tmp_path):
    course, exchange = exchange_course(tmp_path)
    texts = {f"s{i}": [answers(), answers(0.5), nbformat.writes(release())][i % 3] for i in range(6)}
    students = {name: Student(tmp_path, name, exchange) for name in texts}
    for name, text in texts.items():
        students[name].submit(text)
    students["s0"].submit(variant(texts["s0"], 2))           # s0 and s1 submit again at once
    students["s1"].submit(variant(answers(), 2))
    entries = len(texts) + 2
    for crash in CRASH_POINTS:                                  # each kills the service at that point
        served = Served(course, "--once", crash=crash)
        assert served.wait() == -signal.SIGKILL, served.log()
        assert not (journal(course) and settled(course, entries))
    served = Served(course)                                    # and once from outside, while grading
    wait_until(lambda: any(r[2] == "grading" for r in journal(course)), served)
    served.stop(signal.SIGKILL)
    students["s2"].submit(answers())                           # arrives while it is down
    served = Served(course)
    wait_until(lambda: settled(course, entries + 1), served)
    assert served.stop() == 0

    rows = journal(course)
    newest = {}
    for student, entry, state, _, _ in sorted(rows, key=lambda r: r[1].split("+")[2]):   # by submission time
        newest[student] = state
    assert set(newest.values()) == {"done"} and {r[2] for r in rows} <= {"done", "superseded"}, rows
    audit = (course / "audit.txt").read_text().splitlines()
    assert len(audit) == len(set(audit)), audit                # no submission recorded twice
    submitted = {name: open_course(course).digest(name, ASSIGNMENT) for name in texts}
    assert {line.split()[0]: line.split()[1] for line in audit} == submitted   # the newest of each
    scores = gradebook_scores(course)
    pages = exchange_pages(exchange)
    for name in texts:
        assert result(course, name)["extra_data"]["digest"] == submitted[name]
        assert result(course, name)["score"] == scores[name]
        fetched = students[name].feedback()
        assert page_total(fetched[max(fetched)]) == f"{scores[name]:g} / 118"
    assert scores["s0"] == scores["s1"] == scores["s2"] == scores["s3"] == 100    # none graded from a cut copy
    assert len(pages) == sum(r[2] == "done" for r in rows)
    assert not list((course / ".attnlab" / "service").iterdir())


def test_a_grading_the_grader_failed_is_never_recorded_and_is_tried_again(tmp_path):
    """The grader's own error (and later a machine too busy) is not the student's: nothing is
    recorded, and the submission is graded again; after three failures it is left for the
    instructor, and the student is told."""
    course, exchange = exchange_course(tmp_path)
    fails = course / "grader-fails"
    fails.touch()
    served = Served(course, GRADER_FAILS=str(fails), RETRY_SECONDS="0.5")
    Student(tmp_path, "ada", exchange).submit(answers())
    wait_until(lambda: "try 1 of 3" in served.log(), served)
    assert not (course / "audit.txt").exists() and "ada" not in gradebook_scores(course)
    fails.unlink()
    wait_until(lambda: settled(course, 1), served)
    assert gradebook_scores(course) == {"ada": 100}
    assert (course / "audit.txt").read_text().count("ada ") == 1
    fails.touch()
    bob = Student(tmp_path, "bob", exchange)
    bob.submit(answers())
    wait_until(lambda: settled(course, 2), served)
    assert served.stop() == 0
    assert [r[2] for r in journal(course)] == ["done", "failed"]
    assert re.search(r"ERROR lab05_transformers bob: NOT GRADED after 3 tries \(internal grading error: test\): "
                     r"run `attnlab grade lab05_transformers`", served.log()), served.log()
    assert "The grader could not grade this submission" in next(iter(bob.feedback().values()))
    assert "bob" not in gradebook_scores(course) and not (course / "autograded" / "bob").exists()


def test_attempts_beyond_the_limit_are_kept_and_graded_when_the_window_allows(tmp_path):
    """A student submits 20 times in a minute under a limit of 3 gradings per 10 minutes: three
    are graded, the newest of the rest is held, with a page saying until when, the others are
    superseded; once the window allows, the held one is graded."""
    course, exchange = exchange_course(tmp_path, "c.AttnLabService.attempts = 3\n"
                                                 "c.AttnLabService.attempt_window = 600")
    eager = Student(tmp_path, "eager", exchange)
    times = []
    for n in range(1, 21):
        times.append(eager.submit(variant(answers(0.5 if n < 20 else 1.0), n)))
        if n <= 4:
            assert Served(course, "--once").wait() == 0
    log = Served(course, "--once")
    assert log.wait() == 0
    rows = journal(course)
    assert [r[2] for r in rows] == ["done"] * 3 + ["superseded"] * 16 + ["held"], rows
    held = eager.feedback()[times[-1]]
    assert "You have had 3 gradings of lab05_transformers in the last 10 min (the limit is 3)" in held
    assert "This submission is kept: it is graded after" in held
    assert re.search(rf"{ASSIGNMENT} eager: held: 3 gradings in the last 10 min \(limit 3\); graded after", log.log())
    assert gradebook_scores(course)["eager"] < 100           # the held one is not graded
    with sqlite3.connect(course / "gradebook.db") as db:      # ten minutes pass
        db.execute("update attnlab_service set started = started - 600, not_before = not_before - 600")
    assert Served(course, "--once").wait() == 0
    assert [r[2] for r in journal(course)][-1] == "done"
    assert gradebook_scores(course)["eager"] == 100
    assert page_total(eager.feedback()[times[-1]]) == "100 / 118"
    started = sorted(r[3] for r in journal(course) if r[3])
    assert len(started) == 4


def test_before_the_due_date_a_student_sees_what_the_course_allows_and_late_work_follows_its_policy(tmp_path):
    course, exchange = exchange_course(tmp_path)
    with open_course(course).gradebook() as gb:
        gb.update_or_create_assignment(ASSIGNMENT, duedate=utc_now() + timedelta(days=1))
    configure(course, "c.AttnLabService.before_due_date = 'score'")
    sam = Student(tmp_path, "sam", exchange)
    sam.submit(answers(0.5))
    assert Served(course, "--once").wait() == 0
    pages = {"score": next(iter(sam.feedback().values()))}       # what sam fetched; the other two levels:
    graded = results.read_json(course / "autograded" / "sam" / ASSIGNMENT / "results.json")
    pages.update((shown, feedback.page(graded, {}, feedback.past_due(graded), detail=shown)) for shown in ("checks", "full"))
    assert len({page_total(p) for p in pages.values()}) == 1 and page_total(pages["score"]) != "0 / 118"
    assert 'data-testid="check"' not in pages["score"] and 'data-testid="before-due"' in pages["score"]
    assert pages["checks"].count('data-testid="check"') > 30 and "Likely cause" not in pages["checks"]
    assert 'class="msg"' not in pages["checks"] and 'data-testid="before-due"' in pages["checks"]
    assert 'class="msg"' in pages["full"]
    assert 'data-testid="fix"' not in pages["full"]            # exact fixes only after the due date

    with open_course(course).gradebook() as gb:                 # the due date passes
        gb.update_or_create_assignment(ASSIGNMENT, duedate=utc_now() - timedelta(hours=1))
    configure(course, "c.AttnLabService.grade_late = False")
    late = Student(tmp_path, "lou", exchange)
    late.submit(answers())
    served = Served(course, "--once")
    assert served.wait() == 0
    assert re.search(rf"{ASSIGNMENT} lou: late \(1 h 0 min after the due date\): left for `attnlab grade`",
                     served.log()), served.log()
    assert "arrived 1 h 0 min after your due date" in next(iter(late.feedback().values()))
    assert "lou" not in gradebook_scores(course)
    run_tool("attnlab", "grade", ASSIGNMENT, "--quiet", cwd=course)     # the instructor's batch
    assert gradebook_scores(course)["lou"] == 100
    configure(course, "c.AttnLabService.grade_late = True")
    later = Student(tmp_path, "liv", exchange)
    later.submit(answers(0.5))
    assert Served(course, "--once").wait() == 0
    page = next(iter(later.feedback().values()))
    assert 'data-testid="late"' in page and 'data-testid="before-due"' not in page and 'class="msg"' in page


def test_attnlab_grade_beside_the_service_waits_for_it_and_nothing_is_graded_twice(tmp_path):
    course, exchange = exchange_course(tmp_path)
    served = Served(course)
    names = ["ada", "bob", "cy", "dan"]
    for name in names:
        Student(tmp_path, name, exchange).submit(answers(0.5) if name == "bob" else answers())
    wait_until(lambda: (course / "submitted").is_dir() and any((course / "submitted").iterdir()), served)
    batch = run_tool("attnlab", "grade", ASSIGNMENT, "--quiet", cwd=course)     # while the service grades
    wait_until(lambda: settled(course, len(names)), served)
    assert served.stop() == 0
    by_batch = int(re.search(r"graded (\d+) submission", batch.stderr).group(1))
    by_service = len((course / "audit.txt").read_text().splitlines())
    assert by_batch + by_service == len(names), (batch.stderr, served.log())
    scores = gradebook_scores(course)
    assert scores == {n: result(course, n)["score"] for n in names}
    assert scores["ada"] == scores["cy"] == scores["dan"] == 100 and scores["bob"] < 100
    for name in names:
        assert result(course, name)["extra_data"]["digest"] == open_course(course).digest(name, ASSIGNMENT)
    assert len(exchange_pages(exchange)) == len(names)


def test_a_busy_assignment_is_said_in_one_line_and_waited_for(tmp_path):
    """`attnlab grade` while another program holds the assignment's lock: one line naming it, then
    the grading, once it is released. The lock is released only after the line is read, so a slow
    start under load cannot find the assignment already free."""
    course = copy_course(tmp_path / "course")
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=course)
    with course_lock.hold(course, ASSIGNMENT, "attnlab serve"):
        grading = subprocess.Popen([str(BIN / "attnlab"), "grade", ASSIGNMENT, "--quiet"], cwd=course,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        first = grading.stderr.readline()
    rest = grading.stderr.read()
    assert grading.wait(timeout=600) == 0, first + rest
    assert first == (f"attnlab: waiting for attnlab serve (pid {os.getpid()}), which is writing the grades "
                     f"of {ASSIGNMENT}\n"), first + rest
    assert "waiting" not in rest and "graded 0 submission(s)" in rest, rest


def test_sigterm_finishes_the_submission_being_graded_and_a_second_service_is_refused(tmp_path):
    course, exchange = exchange_course(tmp_path)
    served = Served(course)
    wait_until(lambda: "serving" in served.log(), served)
    second = run_tool("attnlab", "serve", "--once", cwd=course, check=False)
    assert second.returncode == 2 and second.stderr.count("\n") == 1, second.stderr
    assert f"this course is served already, by attnlab serve (pid {served.process.pid})" in second.stderr
    Student(tmp_path, "ada", exchange).submit(answers())
    wait_until(lambda: any(r[2] == "grading" for r in journal(course)), served)
    assert served.stop() == 0
    assert [r[2] for r in journal(course)] == ["done"]
    assert "stopping: finishing 1 submission(s) being graded" in served.log()


@pytest.mark.parametrize("setting, said", [
    ("c.AttnLabService.attempts = -1", "AttnLabService.attempts must be between 0 and 1024, got -1"),
    ("c.AttnLabService.before_due_date = 'all'", "before_due_date"),
    ("c.AttnLabService.assignments = ['lab99']", "'lab99' is not one of AttnLab's labs"),
    ("c.Exchange.root = '/no/such/exchange'", "the exchange has no inbound folder /no/such/exchange/attnlab/inbound")])
def test_a_bad_policy_is_one_line(tmp_path, setting, said):
    course = copy_course(tmp_path / "course")
    configure(course, setting)
    out = run_tool("attnlab", "serve", "--once", cwd=course, check=False)
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and said in out.stderr, out.stderr
