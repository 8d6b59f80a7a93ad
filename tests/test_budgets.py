"""Time limits charged from the scheduler's accounting (autograder/budget.py): the same code costs
the same on a busy machine as on an idle one, and a machine too busy to grade a submission leaves
it ungraded, never graded lower.

"Busy" is what a shared JupyterHub server is: CPU-bound processes, each in a session of its own
(the scheduler shares the CPU between sessions: in one session, a dozen processes take no more
than one would).
"""
import contextlib
import json
import os
import subprocess
import sys
import time

import pytest

from autograder import budget, examples, labs, notebooks
from conftest import ROOT, copy_course, run_tool

SPIN = "while True: pass"


@contextlib.contextmanager
def busy_machine(processes: int = 12, core: int | None = None):
    """`processes` CPU-bound processes, each in a session of its own (all on `core` if given)."""
    pin = [] if core is None else ["taskset", "-c", str(core)]
    spinners = [subprocess.Popen(pin + [sys.executable, "-c", SPIN], start_new_session=True)
                for _ in range(processes)]
    try:
        time.sleep(0.2)
        yield
    finally:
        for p in spinners:
            p.kill()
            p.wait()


def charged_run(code: str) -> tuple:
    """(seconds charged, CPU seconds, wall seconds) of a child running `code`, on core 0."""
    child = subprocess.Popen(["taskset", "-c", "0", sys.executable, "-c", code])
    meter = budget.Meter(lambda: child.pid)
    since = meter.reading()
    os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)    # ended, not yet reaped: still readable
    charged = meter.charged(since)
    _, _, usage = os.wait4(child.pid, 0)
    child.returncode = 0
    meter.close()
    return charged, usage.ru_utime + usage.ru_stime, time.monotonic() - since[0]


BURN = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.6: pass\n"


@pytest.fixture
def on_core_zero():
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {0})      # the measuring thread shares the core, as a grading slot does
    yield
    os.sched_setaffinity(0, before)


def test_spinning_code_is_charged_its_cpu_time_not_its_wait_for_a_cpu(on_core_zero):
    with busy_machine(1, core=0):
        charged, cpu, wall = charged_run(BURN)
    assert wall > 1.5 * cpu                      # it shared its core with the spinner
    assert charged == pytest.approx(cpu, rel=0.15, abs=0.05)


def test_sleeping_code_is_charged_its_wall_time(on_core_zero):
    with busy_machine(1, core=0):
        charged, cpu, wall = charged_run("import time; time.sleep(0.8)")
    # The sleep in full, and only the waits for a CPU not; the meter's own waits, which can overlap
    # the child's run, come off too (a few ms on a busy core, in the student's favour).
    assert cpu < 0.2 and 0.75 <= charged <= wall


def test_a_process_that_ends_unseen_is_charged_the_wall_time_it_took(on_core_zero):
    """A child that burns CPU and is gone before anyone looks took its CPU time with it; the
    time it made its parent wait is charged instead."""
    code = f"import subprocess, sys\nsubprocess.run([sys.executable, '-c', {BURN!r}])\n"
    charged, cpu, wall = charged_run(code)
    assert 0.6 <= charged <= wall      # at least the CPU time the child took with it, seen as its parent's wait


# -- end to end ---------------------------------------------------------------------------

def _answers(lab: str) -> dict:
    key = notebooks.read(ROOT / "solutions" / lab / f"{lab}.ipynb")
    return {g: notebooks.without_markers(c) for g, c in notebooks.answer_cells(key).items()}


def _submit(course, lab: str, students: dict) -> None:
    release = notebooks.read(course / "assignments" / lab / f"{lab}.ipynb")
    for student, answers in students.items():
        folder = course / "submitted" / student / lab
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{lab}.ipynb").write_text(json.dumps(examples.fill(release, answers)))


def _grade(course, lab: str, *args) -> tuple:
    done = run_tool("attnlab", "grade", lab, "--quiet", "--force", *args, cwd=course, timeout=1800)
    found = {p.parent.parent.name: json.loads(p.read_text())
             for p in (course / "autograded").glob(f"*/{lab}/results.json")}
    return found, done.stderr


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    path = copy_course(tmp_path_factory.mktemp("budgets"))
    for lab in ("lab05_transformers", "lab06_training"):
        run_tool("nbgrader", "generate_assignment", lab, "--force", cwd=path)
    return path


@pytest.mark.full
def test_correct_submissions_score_in_full_on_a_busy_machine(course):
    lab = "lab06_training"
    _submit(course, lab, {f"s{i}": _answers(lab) for i in range(6)})
    with busy_machine():
        graded, _ = _grade(course, lab, "--jobs", "2")
    assert {s: (r["extra_data"]["status"], r["score"]) for s, r in graded.items()} == \
        {f"s{i}": ("graded", 100.0) for i in range(6)}


SLOW_SOFTMAX = '''
import time

def softmax(z):
    start = time.process_time()
    while time.process_time() - start < 0.15:     # a slow but right answer
        pass
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
'''


LOOPS = {
    # the example class's infinite loop, in a function that later cells and every check call
    "loop_in_a_call": examples.parse_answers((labs.folder("lab05_transformers") / "examples" / "eli.py").read_text()),
    "loop_in_a_cell": {"layer_norm": _answers("lab05_transformers")["layer_norm"] + "\nwhile True:\n    pass\n"},
}
LIMITS = ("--call-timeout", "1", "--cell-timeout", "1", "--submission-timeout", "12")


@pytest.mark.full
def test_an_infinite_loop_costs_the_same_on_a_busy_machine(course):
    """With wall-clock limits, what a busy machine took from the rest of the notebook was
    charged too, and the parts after the loop were cut off (a term run: 82 of 100 once, 90
    five times)."""
    lab = "lab05_transformers"
    # each also has a slow but right softmax: what a busy machine takes from it must not be charged
    _submit(course, lab, {s: {**_answers(lab), "softmax": SLOW_SOFTMAX, **loop} for s, loop in LOOPS.items()})

    def scores(graded):
        return {s: [(p["name"], p["status"], p["score"]) for p in graded[s]["extra_data"]["parts"]]
                for s in LOOPS}
    idle, _ = _grade(course, lab, "--jobs", "1", *LIMITS)
    with busy_machine():
        busy, _ = _grade(course, lab, "--jobs", "1", *LIMITS)
    assert scores(busy) == scores(idle)
    assert all(r["extra_data"]["status"] == "partly graded" for s, r in busy.items() if s in LOOPS)
    assert max(r["extra_data"]["charged_seconds"] for r in busy.values()) < 12 + 1


@pytest.mark.full
def test_a_machine_too_busy_to_grade_a_submission_leaves_its_grade_standing(course):
    lab = "lab05_transformers"
    _submit(course, lab, {"slow": {**_answers(lab), "softmax": SLOW_SOFTMAX}})
    idle, _ = _grade(course, lab, "--student", "slow")
    assert idle["slow"]["score"] == 100.0
    config = course / "nbgrader_config.py"
    kept = config.read_text()
    config.write_text(kept + "\nc.AttnLab.wall_factor = 1.0\n")     # no slack for a busy machine
    try:
        with busy_machine():
            busy, said = _grade(course, lab, "--student", "slow", "--jobs", "1", "--call-timeout", "0.5")
    finally:
        config.write_text(kept)
    assert busy["slow"]["score"] == 100.0 and busy["slow"]["extra_data"]["status"] == "graded"  # untouched
    assert "NOT GRADED slow: the machine was too busy" in said and "less busy" in said
    table = (course / "grades" / f"{lab}.csv").read_text()
    assert "busy: the machine was too busy" in table
