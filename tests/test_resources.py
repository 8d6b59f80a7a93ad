"""Resource failures are named, not graded as wrong answers: a part that runs out of memory ends
with status `memory`; a cell that times out, runs out of memory or has a syntax error is
reported with its error; the honest parts of the same submission keep their points."""
import nbformat
import pytest

from autograder import examples, notebooks
from autograder.grading import Slot
from autograder.sandbox import Limits
from conftest import ASSIGNMENT, ROOT

RELEASE_DIR = ROOT / "assignments" / ASSIGNMENT
RELEASE = notebooks.read(RELEASE_DIR / f"{ASSIGNMENT}.ipynb")
SOLVED = {k: notebooks.without_markers(v) for k, v in
          notebooks.answer_cells(notebooks.read(ROOT / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")).items()}


@pytest.fixture(scope="module")
def slot():
    slot = Slot(ASSIGNMENT, RELEASE_DIR, f"{ASSIGNMENT}.ipynb", "bwrap", Limits(memory_bytes=1 * 2**30))
    yield slot
    slot.worker.close()


def grade(slot, tmp_path, **answers):
    path = tmp_path / "submission.ipynb"
    path.write_text(nbformat.writes(examples.fill(RELEASE, {**SOLVED, **answers})))
    result, _ = slot.grade("student", path, b"salt")
    return result, {p.name: p for p in result.parts}


def test_a_part_that_runs_out_of_memory_is_flagged_not_failed(slot, tmp_path):
    hog = SOLVED["layer_norm"] + "\n_ln = layer_norm\ndef layer_norm(*a, **k):\n" \
        "    import numpy as np\n    np.ones(2**31)\n    return _ln(*a, **k)\n"
    result, parts = grade(slot, tmp_path, layer_norm=hog)
    assert parts["layer_norm"].status == "memory"
    assert "ran out of memory" in parts["layer_norm"].checks[0].message
    assert result.status == "partly graded"
    assert all(p.score == p.max_score for name, p in parts.items() if name != "layer_norm")
    assert "layer_norm: memory" in result.problems()


def test_a_syntax_error_in_an_answer_cell_is_shown(slot, tmp_path):
    result, parts = grade(slot, tmp_path, feedforward="def feedforward(x, W1, b1, W2, b2)\n    return x\n")
    notes = " ".join(result.cells)
    assert "has a syntax error" in notes and "SyntaxError" in notes
    assert parts["feedforward"].score == 0
    assert parts["softmax"].score == parts["softmax"].max_score


def test_a_cell_out_of_memory_and_a_cell_that_hangs_are_named(slot, tmp_path):
    result, parts = grade(slot, tmp_path,
                          softmax=SOLVED["softmax"] + "\nimport numpy as np\n_big = np.ones(2**31)\n",
                          feedforward="while True:\n    pass\n")
    notes = " ".join(result.cells)
    assert "ran out of memory" in notes
    assert "did not finish in time" in notes
    assert result.status == "partly graded" and any(p.startswith("cell: ") for p in result.problems())
    assert parts["softmax"].score == parts["softmax"].max_score
    assert parts["layer_norm"].score == parts["layer_norm"].max_score
    assert parts["feedforward"].score == 0


def test_printing_a_lot_costs_nothing(slot, tmp_path):
    """Printed output is dropped past the output limit, not kept: IPython 9 keeps a copy of
    everything a cell prints (960 MB here, against a 1 GiB limit) unless the worker stops it."""
    chatty = SOLVED["softmax"] + '\n_softmax = softmax\ndef softmax(z):\n    print("d" * 2_400_000)\n' \
        '    return _softmax(z)\nfor _ in range(400):\n    softmax(np.zeros(3))\n'
    result, parts = grade(slot, tmp_path, softmax=chatty)
    assert result.cells == [] and result.status == "graded"
    assert all(p.score == p.max_score for p in parts.values()), result.problems()


def test_an_earlier_part_called_beyond_its_signature_is_named_as_the_official_one(slot, tmp_path):
    """MultiHeadAttention is graded with the official softmax: when the student's forward passes it
    an argument only their own softmax takes, the message says whose softmax failed."""
    own = SOLVED["softmax"].replace("def softmax(z: np.ndarray)", "def softmax(z: np.ndarray, axis: int = -1)")
    mha = SOLVED["MultiHeadAttention"].replace("softmax(scores)", "softmax(scores, axis=-1)")
    assert own != SOLVED["softmax"] and mha != SOLVED["MultiHeadAttention"]
    result, parts = grade(slot, tmp_path, softmax=own, MultiHeadAttention=mha)
    assert parts["softmax"].score == parts["softmax"].max_score
    failed = [c.message for c in parts["MultiHeadAttention"].checks if c.status == "failed"]
    assert failed and all("the official softmax, used in place of yours while this part is graded, could not "
                          "evaluate this call (it takes the arguments of the release's signature): TypeError: "
                          "softmax() got an unexpected keyword argument 'axis'" in m for m in failed), failed[0]


def test_memory_past_the_slot_limit_costs_the_submission_not_the_worker(slot, tmp_path):
    """Memory no process maps (memfd files handed to a tiny process) pushes the slot's memory
    cgroup over its limit: the kernel kills the submission's processes, which rank first, not
    the zygote (the largest process), so the worker goes on without a restart."""
    grade(slot, tmp_path)
    assert slot.worker.memory is not None, "no memory cgroup: run as root with a memory controller"
    restarts = slot.worker.restarts
    hold = '''
import os
_fds = []
for _i in range(100):
    _fd = os.memfd_create("m")
    os.posix_fallocate(_fd, 0, 16 << 20)
    _fds.append(_fd)
if os.fork() == 0:
    os.execv("/bin/sleep", ["sleep", "100"])
for _fd in _fds:
    os.close(_fd)
for _i in range(100):
    _fd = os.memfd_create("n")
    os.posix_fallocate(_fd, 0, 16 << 20)
''' + SOLVED["softmax"]
    result, parts = grade(slot, tmp_path, softmax=hold)
    assert any("ended the notebook process" in cell for cell in result.cells), result.cells
    assert slot.worker.restarts == restarts
    result, parts = grade(slot, tmp_path)
    assert result.status == "graded" and result.score == 100.0
