"""The grader's shortcuts give exactly what the long way gives, and its start-up stays light.

* Slots: a slot imports no nbgrader and keeps to one core with its worker; slots started early
  for other settings are not used, and of the grading they began only what the engine asks for
  is kept; a worker that cannot start is reported per submission.
* Release cells: the zygote transforms, parses and compiles the release notebook's cells once
  (autograder/worker/cells.py). A notebook must run the same with and without that memory,
  including when student code changes how IPython reads cells.
* Oracle replies: a part asks the grader once per distinct request (autograder/worker/__main__.py,
  `_Oracle`); every answer is a fresh value.
* Batched calls: a check's independent calls reach the worker in one message; each is answered
  as it returns, the worker stops at the first that raises, and each call keeps its own limit.
* Font list: matplotlib scans the fonts once per machine; later workers start from the list the
  first one made (`sandbox.font_list_dir`), and a list matplotlib refuses is made again.
"""
import ctypes
import dataclasses
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import time

import nbformat
import numpy as np
import pytest

from autograder import cli, engine, grading, labs, sandbox, secret
from autograder.runners import PartAborted, StudentError
from autograder.course import open_course
from autograder.runners import SandboxRunner
from autograder.worker.invoke import Call
from autograder.sandbox import Limits
from autograder.worker import __main__ as worker
from autograder.worker.protocol import decode, encode
from conftest import ASSIGNMENT, ROOT, copy_course, run_tool

HARNESS = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from IPython.core.compilerop import CachingCompiler
from worker.__main__ import prepare
from worker.invoke import describe_exception

shell, _ = prepare()
parsed = [0]
parse = CachingCompiler.ast_parse
def counting(self, *args, **kwargs):
    parsed[0] += 1
    return parse(self, *args, **kwargs)
CachingCompiler.ast_parse = counting
errors = []
for source in json.load(sys.stdin):
    result = shell.run_cell(source, store_history=False)
    error = result.error_before_exec or result.error_in_exec
    errors.append(describe_exception(error) if error else None)
names = ("x", "y", "z", "shown", "doubled")
report = {"ns": {k: repr(shell.user_ns.get(k)) for k in names}, "errors": errors, "parsed": parsed[0],
          "last": repr(getattr(sys, "last_value", None))}
sys.__stdout__.write("\n" + json.dumps(report))
"""

RELEASE = [
    "import numpy as np\nx = np.arange(3)\n",
    "%matplotlib inline\ny = x * 2\ny.sum()\n",
    "def double(v):\n    return 2 * v\n\ndoubled = double(21)\n",
    "z = 1\nz = z + 1\n",
    "shown = 0\nfor k in range(3):\n    shown += k\n",
    "z = 10\nraise ValueError(f'bad {z}')\n",
]


def run(cells: list, folder, release=None) -> dict:
    if release is not None:
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in release])
        nbformat.write(nb, str(folder / "release.ipynb"))
    done = subprocess.run([sys.executable, "-c", HARNESS, str(ROOT / "autograder")], input=json.dumps(cells),
                          cwd=folder, capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "MPLBACKEND": "Agg", "HOME": str(folder)})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.rsplit("\n", 1)[-1])


def both(cells: list, tmp_path) -> tuple:
    (tmp_path / "plain").mkdir()
    (tmp_path / "known").mkdir()
    return run(cells, tmp_path / "plain"), run(cells, tmp_path / "known", RELEASE)


def test_release_cells_run_as_ipython_runs_them_without_being_parsed_again(tmp_path):
    plain, known = both(RELEASE, tmp_path)
    assert known["ns"] == plain["ns"] and known["errors"] == plain["errors"]
    assert known["errors"][-1] == plain["errors"][-1] == \
        "raised ValueError: bad 10 (line 2 of <module>: raise ValueError(f'bad {z}'))"
    assert plain["parsed"] == len(RELEASE) and known["parsed"] == 0
    assert known["last"] == "ValueError('bad 10')"    # IPython's own record of the error is kept


def test_changed_cells_and_changed_readers_take_the_long_way(tmp_path):
    cells = [RELEASE[0],
             RELEASE[1].replace("x * 2", "x * 3"),         # a cell the student edited
             "get_ipython().input_transformers_post.append(lambda lines: [l.replace('21', '5') for l in lines])",
             RELEASE[2],                                    # read differently now: doubled = 10
             RELEASE[3]]
    plain, known = both(cells, tmp_path)
    assert known["ns"] == plain["ns"]
    assert known["ns"]["y"] == "array([0, 3, 6])" and known["ns"]["doubled"] == "10"
    assert plain["parsed"] == len(cells) and known["parsed"] == len(cells) - 1   # all but the first


class _Wire:
    """The part's end of the data channel, with the grader answering from `answer`."""

    def __init__(self, answer):
        self.answer, self.sent = answer, []

    def send(self, data: bytes) -> None:
        self.sent.append(decode(data))

    def recv(self) -> bytes:
        return encode(self.answer(self.sent[-1]))


def test_a_repeated_oracle_request_is_answered_from_memory_with_a_fresh_value():
    wire = _Wire(lambda request: {"value": np.asarray(request["args"][0]) * 2.0})
    softmax = worker._Oracle(wire).proxy({"name": "softmax", "kind": "function"})
    x = np.arange(4.0)
    first = softmax(x)
    first[:] = -1.0                                  # the student writes into the result
    again = softmax(x)
    other = softmax(x + 1)
    assert len(wire.sent) == 2
    np.testing.assert_array_equal(again, [0.0, 2.0, 4.0, 6.0])
    np.testing.assert_array_equal(other, [2.0, 4.0, 6.0, 8.0])


def test_oracle_memory_is_bounded():
    wire = _Wire(lambda request: {"value": np.zeros(2**16)})
    oracle = worker._Oracle(wire)
    oracle.MEMORY_BYTES = 7 * 2**18      # room for three replies of 512 KiB and their requests
    zeros = oracle.proxy({"name": "zeros", "kind": "function"})
    for _ in range(2):
        for n in range(6):
            zeros(n)
    assert oracle.remembered <= oracle.MEMORY_BYTES and len(oracle.replies) == 3
    assert len(wire.sent) == 6 + 3


def python(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip()


def test_a_slot_imports_no_nbgrader():
    """Slots fork from a server that imported grading and the CLI (which every slot re-runs as
    its main module): importing nbgrader there would cost every slot a second."""
    loaded = python("import json, sys, autograder.grading, autograder.cli\n"
                    "print(json.dumps([m for m, v in sys.modules.items() if v is not None]))")
    heavy = {"nbgrader", "sqlalchemy", "jupyter_server", "tornado", "rfc3987_syntax"}
    assert not heavy & {name.split(".")[0] for name in json.loads(loaded)}


def test_a_slot_keeps_to_one_core_in_turn():
    cores = sorted(os.sched_getaffinity(0))
    for index in (1, 2, len(cores) + 1):
        pinned = python(f"import json, os\nfrom autograder import grading\ngrading._pin({index})\n"
                        "print(json.dumps(sorted(os.sched_getaffinity(0))))")
        assert json.loads(pinned) == [cores[(index - 1) % len(cores)]]


def test_slots_of_two_grading_runs_never_share_a_user():
    """The kernel counts processes per user: two runs at once (the service beside `attnlab
    grade`) whose slots shared a uid shared one process limit, which a fork bomb in one used up
    for the other (slot 1 of every run was uid 2,000,000,001)."""
    users = [python("from autograder import sandbox\nprint(sandbox.slot_uid())") for _ in range(2)]
    assert users[0] != users[1]


def test_slots_started_for_other_settings_are_stopped_and_grading_goes_on(tmp_path):
    """The CLI starts slots before the course opens, for the release folder nbgrader's defaults
    give; slots that turn out to be for another folder or other settings are not used."""
    course_dir = copy_course(tmp_path / "course")
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=course_dir)
    folder = course_dir / "submitted" / "ada" / ASSIGNMENT
    folder.mkdir(parents=True)
    shutil.copy(ROOT / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", folder)
    course = open_course(course_dir)
    notebook = f"{ASSIGNMENT}.ipynb"
    other = dataclasses.replace(Limits(), call_seconds=3.0)
    before = set(multiprocessing.active_children())
    early = grading.start_slots(1, (ASSIGNMENT, course.release(ASSIGNMENT), notebook, "bwrap", other))
    started = set(multiprocessing.active_children()) - before
    batch = engine.grade(course, ASSIGNMENT, jobs=1, mode="bwrap", progress=False, slots=early)
    assert [(r.student, r.status, r.score) for r in batch.results] == [("ada", "graded", 100.0)]
    assert len(started) == 1
    for process in started:
        process.join(30)
        assert not process.is_alive()


def test_grading_begun_before_the_course_opened_is_kept_only_where_it_is_what_the_engine_asks(tmp_path):
    """The CLI's slots begin grading before nbgrader loads: the engine keeps a grading begun for
    the same student, notebook and salt, and grades again one begun for anything else."""
    course_dir = copy_course(tmp_path / "course")
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=course_dir)
    notebook = f"{ASSIGNMENT}.ipynb"
    for student in ("ada", "bob"):
        folder = course_dir / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        shutil.copy(ROOT / "solutions" / ASSIGNMENT / notebook, folder)
    course = open_course(course_dir)
    key = secret.course_secret(course.root)
    ada = course.path("submitted", "ada", ASSIGNMENT) / notebook
    stub = course.release(ASSIGNMENT) / notebook       # not what bob submitted
    early = grading.start_slots(1, (ASSIGNMENT, course.release(ASSIGNMENT), notebook, "bwrap", Limits()), [
        grading.Task("ada", str(ada), secret.submission_salt(key, ASSIGNMENT, "ada", ada)),
        grading.Task("bob", str(stub), secret.submission_salt(key, ASSIGNMENT, "bob", stub))])
    batch = engine.grade(course, ASSIGNMENT, jobs=1, mode="bwrap", progress=False, slots=early)
    assert [(r.student, r.status, r.score) for r in batch.results] == [("ada", "graded", 100.0), ("bob", "graded", 100.0)]
    kept, _ = early.early["ada"][1].result()
    assert kept.seconds == batch.results[0].seconds     # the same grading, not a second one
    dropped = early.early["bob"][1]
    assert dropped.cancelled() or dropped.result()[0].score == 0.0


def test_the_cli_begins_what_the_engine_asks_for_and_nothing_for_a_list_with_a_typo(tmp_path):
    """`attnlab grade` begins grading the changed submissions before nbgrader loads, with the
    notebook and salt the engine will ask for; a --student without a submission (a typo, which
    the engine refuses) begins nothing, so that the refusal does not wait for a grading."""
    course_dir = copy_course(tmp_path / "course")
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=course_dir)
    folder = course_dir / "submitted" / "ada" / ASSIGNMENT
    folder.mkdir(parents=True)
    shutil.copy(ROOT / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", folder)
    grade = ["grade", ASSIGNMENT, "--course", str(course_dir), "--jobs", "1", "--student", "ada"]
    typo = cli._early_slots(cli._parser().parse_args(grade + ["--student", "adda"]))
    assert typo is not None and typo.early == {}
    grading.stop_slots(typo)
    early = cli._early_slots(cli._parser().parse_args(grade))
    assert set(early.early) == {"ada"}
    batch = engine.grade(open_course(course_dir), ASSIGNMENT, jobs=1, mode="bwrap", progress=False, slots=early)
    kept, _ = early.early["ada"][1].result()
    assert kept.seconds == batch.results[0].seconds > 0       # the grading begun by the CLI, kept


def test_a_worker_that_cannot_start_is_reported_per_submission():
    """Slots start their worker as they start; if it cannot start, each submission says why
    (as when the worker is started by the first submission), instead of breaking the pool."""
    code = f"""
import json
from pathlib import Path
from autograder import grading, sandbox

def broken(self):
    raise sandbox.WorkerDied("no sandbox here")
sandbox.Worker.start = broken
grading.start_slot("{ASSIGNMENT}", Path("{ROOT}/assignments/{ASSIGNMENT}"), "{ASSIGNMENT}.ipynb", "bwrap",
                   sandbox.Limits())
result, notebook = grading.grade_in_slot("ada", "{ROOT}/solutions/{ASSIGNMENT}/{ASSIGNMENT}.ipynb", b"")
print(json.dumps([result.status, result.notes, notebook]))
"""
    status, notes, notebook = json.loads(python(code).splitlines()[-1])
    assert status == "error" and notebook is None
    assert notes == ["internal grading error: WorkerDied: no sandbox here"]


def _start_worker() -> bool:
    """Start and stop a worker; whether it had to scan the fonts."""
    worker_ = sandbox.Worker("bwrap", ROOT / "assignments" / ASSIGNMENT, Limits(), sandbox.slot_uid())
    try:
        worker_.start()
        return worker_.fonts_scanned
    finally:
        worker_.close()


def test_workers_start_from_the_font_list_the_first_one_made(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert _start_worker() is True
    [kept] = sandbox.font_list_dir("bwrap").glob("fontlist-*.json")
    made = kept.read_text()
    assert _fonts(made)
    assert _start_worker() is False and kept.read_text() == made
    kept.write_text('{"_version": "not this matplotlib"')      # matplotlib refuses it: made again
    assert _start_worker() is True and _fonts(kept.read_text()) == _fonts(made)


def _fonts(text: str) -> set:
    font_list = json.loads(text)
    return {entry["fname"] for entry in font_list["ttflist"] + font_list["afmlist"]}


def test_only_font_lists_are_kept(tmp_path, monkeypatch):
    """The list comes from a worker before any student code runs; even so, only a font list's
    file name is written, and only inside the cache folder."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    sandbox._keep_font_list("bwrap", {"../fontlist-up.json": "{}", "fontlist-a/../../b.json": "{}",
                                      "matplotlibrc.json": "{}", "fontlist-v1.json": 3})
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []
    sandbox._keep_font_list("bwrap", {"fontlist-v1.json": "{}"})
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == ["fontlist-v1.json"]


BATCH_CELL = """
import time
calls = []
def f(x):
    calls.append(x)
    if x == 3:
        raise ValueError("three")
    if x == 5:
        time.sleep(60)
    return (x * 10, list(calls))
"""


def test_a_batch_of_calls_is_answered_call_by_call_and_stops_at_the_first_failure():
    limits = Limits()
    suite = labs.load(ASSIGNMENT).suite
    worker_ = sandbox.Worker("bwrap", ROOT / "assignments" / ASSIGNMENT, limits, sandbox.slot_uid())
    worker_.start()
    runner = SandboxRunner(worker_, suite, [BATCH_CELL], limits)
    f = [Call("f", (x,), {}, None) for x in range(8)]
    try:
        with runner.part(next(iter(suite.parts)), []) as ready:
            assert ready is True
            results, error = runner.run_many([f[1], f[2], f[3], f[4]])
            assert [value for value, _ in results] == [(10, [1]), (20, [1, 2])]
            assert "ValueError: three" in str(error)
            assert runner.run(f[6])[0] == (60, [1, 2, 3, 6])        # 4 never ran; the channel is in step
            start = time.monotonic()
            with pytest.raises(PartAborted) as aborted:
                runner.run_many([f[4], f[5], f[6], f[7]])
            assert aborted.value.status == "timeout"
            assert f"did not return within {limits.call_seconds:g} s" in str(aborted.value)
            assert time.monotonic() - start < 2 * limits.call_seconds + 1     # one call's limit, not four
    finally:
        runner.finish()
        worker_.close()


SCALE_CELL = """
def scale(x):
    x *= 2            # in place
    return x.sum()
"""


def test_the_inputs_of_a_call_come_back_only_when_a_check_asks_for_them():
    """Only the in-place checks look at the inputs after a call: other replies carry none (they
    were 80 % of a Lab 05 submission's reply bytes), and a reply without the inputs asked for
    is malformed."""
    limits = Limits()
    suite = labs.load(ASSIGNMENT).suite
    worker_ = sandbox.Worker("bwrap", ROOT / "assignments" / ASSIGNMENT, limits, sandbox.slot_uid())
    worker_.start()
    runner = SandboxRunner(worker_, suite, [SCALE_CELL], limits)
    received, receive = [], worker_.receive

    def counted(*args, **kwargs):
        size, message = receive(*args, **kwargs)
        received.append(size)
        return size, message
    worker_.receive = counted
    x = np.ones((64, 64))
    call = Call("scale", (x,), {}, None)
    try:
        with runner.part(next(iter(suite.parts)), []):
            assert runner.run(call) == (8192.0, [])
            assert received[-1] < 1000
            value, given = runner.run(call, inputs=True)
            assert value == 8192.0 and len(given) == 1 and np.array_equal(given[0], 2 * x)
            assert received[-1] > x.nbytes
            assert np.array_equal(x, np.ones((64, 64)))          # the caller's array is untouched
            assert runner._result(call, {"value": 1.0, "given": []}, inputs=False) == (1.0, [])
            with pytest.raises(StudentError, match="malformed"):
                runner._result(call, {"value": 1.0, "given": []}, inputs=True)
    finally:
        runner.finish()
        worker_.close()


HUGE = r"""
import ctypes, mmap, sys
sys.path.insert(0, sys.argv[1])
from worker import __main__ as worker
probe = mmap.mmap(-1, 4 * worker._HUGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
start = ctypes.addressof(ctypes.c_char.from_buffer(probe))
first = -(-start // worker._HUGE) * worker._HUGE
probe[first - start] = 1
if worker._libc.madvise(ctypes.c_void_p(first), ctypes.c_size_t(worker._HUGE), worker._MADV_COLLAPSE):
    print("unsupported")
    sys.exit()
held = [str(i) * 8 for i in range(400_000)]      # a heap like the zygote's: small objects
def huge():
    with open("/proc/self/smaps_rollup") as f:
        return sum(int(line.split()[1]) for line in f if line.startswith("AnonHugePages:"))
before = huge()
worker._huge_pages()
print(huge() - before)
"""


def test_the_zygote_heap_is_backed_by_huge_pages():
    """Every submission forks three processes and one per part from the zygote: with its heap
    in 2 MiB pages, each fork copies and each exit frees 512 times fewer page-table entries."""
    done = subprocess.run([sys.executable, "-c", HUGE, str(ROOT / "autograder")], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    if done.stdout.strip() == "unsupported":
        pytest.skip("this kernel cannot collapse memory into huge pages (MADV_COLLAPSE, Linux 6.1)")
    assert int(done.stdout) >= 16 * 1024      # kB: the 30 MB of small objects, mostly


def test_a_part_finds_the_shared_writable_mappings_it_must_privatise_without_reading_the_map(monkeypatch):
    """The kernel is asked for them one by one (0.03 ms, not 0.9 ms a part); where it cannot be
    asked, /proc/self/maps is read: both give every shared writable mapping, and only those."""
    import mmap

    from autograder.worker import __main__ as worker
    shared = [mmap.mmap(-1, 4096 * k) for k in (1, 3)]
    private = mmap.mmap(-1, 4096, flags=mmap.MAP_PRIVATE)
    listed = [(start, end) for start, end, perms, _ in worker._mappings() if perms.endswith("s") and "w" in perms]
    assert len(listed) >= 2 and worker._shared_writable() == listed
    monkeypatch.setattr(worker, "_PROCMAP_QUERY", ctypes.c_ulong(0))      # a kernel without the query
    assert worker._shared_writable() == listed
    del shared, private
