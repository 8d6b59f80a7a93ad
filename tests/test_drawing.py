"""Plots cost nothing when graded (autograder/worker/drawing.py), and nothing else changes.

Each scenario runs notebook cells in the worker's own IPython shell (`prepare()`), in a fresh
process, twice: with the drawing layer (as under `attnlab grade`) and with real matplotlib
(ATTNLAB_DRAWING=real). Everything the cells read back must be identical, and cells that only
draw must build no matplotlib artist at all.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder import examples, labs, notebooks, sandbox
from autograder.grading import Slot
from conftest import ROOT

HARNESS = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import matplotlib.artist
from worker import drawing
from worker.__main__ import prepare

built = [0]
init = matplotlib.artist.Artist.__init__
def counting(self, *args, **kwargs):
    built[0] += 1
    init(self, *args, **kwargs)
matplotlib.artist.Artist.__init__ = counting

shell, _ = prepare()
report = {"cells": []}
for source in json.load(sys.stdin):
    before = built[0]
    result = shell.run_cell(source, store_history=False)
    error = result.error_before_exec or result.error_in_exec
    report["cells"].append({"artists": built[0] - before, "replays": drawing.replays,
                            "error": repr(error) if error else None})
report["seen"] = shell.user_ns.get("seen")
if len(sys.argv) > 2:   # then every part's start: the earlier parts bound to oracles by `rebind`
    from worker.rebind import rebind
    names = json.loads(sys.argv[2])
    for i in range(len(names)):
        rebind(dict(shell.user_ns), {name: lambda *a, **k: None for name in names[:i]})
    report["replays after the parts"] = drawing.replays
sys.__stdout__.write("\n" + json.dumps(report, default=repr))
"""


def run_cells(cells: list, cwd: Path, drawing: str = "null", execution: str = "autograde", parts=None) -> dict:
    env = {**os.environ, "NBGRADER_EXECUTION": execution, "MPLBACKEND": "Agg", "ATTNLAB_DRAWING": drawing}
    extra = [json.dumps(parts)] if parts is not None else []
    done = subprocess.run([sys.executable, "-c", HARNESS, str(ROOT / "autograder"), *extra], input=json.dumps(cells),
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.rsplit("\n", 1)[-1])


DRAW_ONLY = [
    """
import hashlib, io
import numpy as np
import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure

seen = {}
rng = np.random.default_rng(0)
w = rng.random((6, 6))
    """,
    """
fig, axes = plt.subplots(2, 3, figsize=(9, 5))
for k, ax in enumerate(axes.flat):
    im = ax.imshow(w * (k + 1), cmap="Blues", vmin=0, vmax=6)
    for i in range(6):
        for j in range(6):
            ax.text(j, i, f"{w[i, j]:.1f}", ha="center", fontsize=6).set_color("gray")
    ax.set_xticks(range(6), list("abcdef"), rotation=45)
    ax.set_title(f"panel {k}")
cbar = fig.colorbar(im, ax=axes, fraction=0.02)
cbar.set_label("value")
cbar.ax.tick_params(labelsize=7)
axes[1, 2].set_xlabel("key $j$")
twin = axes[0, 0].twinx()
twin.plot(np.arange(6), np.arange(6) ** 2, "r--")
fig.suptitle("a grid of annotated heat maps")
plt.tight_layout()
plt.show()
    """,
    """
plt.figure(figsize=(4, 3))
plt.plot([1, 2, 3], [2, 4, 1], "o-", label="a")
plt.bar(["x", "y"], [1, 2])
plt.xlabel("x"); plt.title("pyplot state functions"); plt.legend(); plt.grid(True)
plt.gca().axhline(0.5, color="gray")
plt.gcf().set_size_inches(5, 3)
plt.show()
    """,
]

READ_BACK = [
    """
fig2, ax2 = plt.subplots()
ax2.imshow(w)
seen["xlim"] = [float(v) for v in ax2.get_xlim()]
seen["ylim"] = list(map(float, ax2.get_ylim()))
seen["number"] = fig2.number
seen["gcf is current"] = plt.gcf() == fig2
seen["isinstance"] = [isinstance(fig2, Figure), isinstance(ax2, Axes), isinstance(axes[0, 0], Axes)]
seen["fignums"] = plt.get_fignums()
    """,
    """
line, = ax2.plot([0, 1, 2], [3.0, 1.0, 2.0])
seen["ydata"] = line.get_ydata().tolist()
data = np.arange(4.0)
handles = plt.subplots()[1].plot(data, label=["before"])
data[:] = -1
seen["plotted before the change"] = handles[0].get_ydata().tolist()
twin2 = ax2.twinx()
twin2.plot(np.arange(5), np.arange(5) ** 2)
seen["twin ylim"] = [round(float(v), 9) for v in twin2.get_ylim()]
seen["text"] = ax2.text(0, 0, "hello").get_text()
seen["repr"] = repr(ax2.set_title("x"))
seen["cbar ylim"] = [float(v) for v in cbar.ax.get_ylim()]
seen["axes in the grid figure"] = len(fig.axes)
seen["panel titles"] = [ax.get_title() for ax in axes.flat]
buf = io.BytesIO()
fig.savefig(buf, format="png", dpi=20)
seen["png"] = hashlib.sha1(buf.getvalue()).hexdigest()
    """,
    """
plt.close("all")
fig3, ax3 = plt.subplots()
ax3.plot([0, 10], [0, 5])
lo, hi = ax3.get_xlim()
def width():
    return hi - lo
seen["width"] = width()
seen["number after close"] = fig3.number
plt.title("state")
seen["title via gca"] = plt.gca().get_title()
seen["xlim via pyplot"] = [float(v) for v in plt.xlim()]
seen["shape"] = [np.shape(plt.subplots(3, 1)[1]), np.shape(plt.subplots(1, 1, squeeze=False)[1])]
with plt.style.context("ggplot"):
    styled = plt.subplots()[1]
    styled.plot([1, 2])
seen["styled"] = [styled.get_facecolor(), styled.get_lines()[0].get_color()]
    """,
]


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    cwd = tmp_path_factory.mktemp("plots")
    cells = DRAW_ONLY + READ_BACK
    return run_cells(cells, cwd), run_cells(cells, cwd, drawing="real")


def test_what_student_code_reads_back_is_what_matplotlib_gives(both):
    null, real = both
    assert [c["error"] for c in real["cells"]] == [None] * len(real["cells"])
    assert [c["error"] for c in null["cells"]] == [None] * len(null["cells"])
    assert null["seen"] == real["seen"]
    assert real["seen"]["xlim"] == [-0.5, 5.5] and real["seen"]["number after close"] == 1


def test_cells_that_only_draw_build_nothing(both):
    null, real = both
    drawing = slice(1, len(DRAW_ONLY))
    assert all(c["artists"] > 50 for c in real["cells"][drawing])
    assert [c["artists"] for c in null["cells"][drawing]] == [0] * (len(DRAW_ONLY) - 1)
    assert null["cells"][len(DRAW_ONLY) - 1]["replays"] == 0
    assert null["cells"][-1]["replays"] > 0      # reading back built the figures


def test_a_rejected_drawing_call_raises_where_its_result_is_used(tmp_path):
    cells = ["""
import numpy as np
import matplotlib.pyplot as plt
fig, ax = plt.subplots()
image = ax.imshow(np.zeros(3))
ax.set_title("still running")
    """, "image.get_array()"]
    null = run_cells(cells, tmp_path)
    assert null["cells"][0]["error"] is None
    assert null["cells"][1]["error"].startswith("TypeError('Invalid shape")
    real = run_cells(cells, tmp_path, drawing="real")
    assert real["cells"][0]["error"].startswith("TypeError('Invalid shape")


def test_outside_autograde_every_plot_is_drawn(tmp_path):
    """In JupyterLab (and under any other NBGRADER_EXECUTION) matplotlib is left alone."""
    report = run_cells(DRAW_ONLY, tmp_path, execution="")
    assert all(c["artists"] > 50 for c in report["cells"][1:])


@pytest.mark.parametrize("lab", labs.assignments())
def test_the_labs_plots_build_nothing_when_graded(lab):
    """Nor when the parts start: binding the earlier parts (`rebind`) looks at every value of
    the notebook, and a plot being recorded must not be built by being looked at (it was, by
    isinstance: 0.1 s a part, 1.1 of a Lab 05 submission's 1.3 s)."""
    release = notebooks.read(ROOT / "assignments" / lab / f"{lab}.ipynb")
    key = notebooks.read(ROOT / "solutions" / lab / f"{lab}.ipynb")
    solved = examples.fill(release, {g: notebooks.without_markers(c) for g, c in notebooks.answer_cells(key).items()})
    cells = [c.source for c in solved.cells if c.cell_type == "code" and not notebooks.is_test(c)]
    report = run_cells(cells, ROOT / "assignments" / lab, parts=list(labs.load(lab).suite.parts))
    assert [c["error"] for c in report["cells"]] == [None] * len(cells)
    assert sum(c["artists"] for c in report["cells"]) == 0
    assert report["cells"][-1]["replays"] == 0
    assert report["replays after the parts"] == 0


# -- graded end to end, in the sandbox ----------------------------------------------------

OWN_PLOTS = '''
import io
fig, axes = plt.subplots(2, 2)
for ax in axes.flat:
    image = ax.imshow(np.eye(4))
    for i in range(4):
        ax.text(i, i, "1")
fig.colorbar(image, ax=axes)
axes[0, 1].twinx().plot([0, 1], [0, 1])
buffer = io.BytesIO()
fig.savefig(buffer, format="png", dpi=10)
SCALE = (axes[1, 1].get_xlim()[1] + 0.5) / 4 * (fig.number == 1) * (buffer.getvalue()[:4] == b"\\x89PNG")
plt.show()

'''


def _grade(lab: str, answers: dict, monkeypatch, tmp_path: Path, drawing: str):
    command = sandbox.command

    def with_drawing(*args):
        argv, cwd, env = command(*args)
        return argv, cwd, {**env, "ATTNLAB_DRAWING": drawing}
    monkeypatch.setattr(sandbox, "command", with_drawing)
    release = ROOT / "assignments" / lab
    nb = examples.fill(notebooks.read(release / f"{lab}.ipynb"), answers)
    path = tmp_path / f"{lab}.ipynb"
    path.write_text(nbformat.writes(nb))
    slot = Slot(lab, release, f"{lab}.ipynb", sandbox.probe_mode("auto"), sandbox.Limits())
    try:
        result, _ = slot.grade("student", path)
    finally:
        slot.worker.close()
    return [(p.name, p.status, p.score, [(c.score, c.message) for c in p.checks]) for p in result.parts]


def solution_answers(lab: str) -> dict:
    key = notebooks.read(ROOT / "solutions" / lab / f"{lab}.ipynb")
    return {g: notebooks.without_markers(c) for g, c in notebooks.answer_cells(key).items()}


@pytest.mark.parametrize("lab", ["lab05_transformers", "lab06_training"])
def test_the_solutions_grade_identically_with_and_without_the_layer(lab, monkeypatch, tmp_path):
    answers = solution_answers(lab)
    null = _grade(lab, answers, monkeypatch, tmp_path, "null")
    assert null == _grade(lab, answers, monkeypatch, tmp_path, "real")
    assert all(status == "graded" for _, status, _, _ in null)
    assert sum(score for _, _, score, _ in null) == sum(p.points for p in labs.load(lab).suite.parts.values())


def test_a_notebook_that_reads_its_own_plots_back_grades_correctly(monkeypatch, tmp_path):
    """The softmax cell draws with its own code and scales its result by values read back from
    the figure (1.0 only if they are matplotlib's real ones)."""
    answers = solution_answers("lab05_transformers")
    answers["softmax"] = OWN_PLOTS + answers["softmax"].replace(
        "return e / np.sum(e, axis=-1, keepdims=True)", "return SCALE * e / np.sum(e, axis=-1, keepdims=True)")
    graded = _grade("lab05_transformers", answers, monkeypatch, tmp_path, "null")
    assert graded == _grade("lab05_transformers", answers, monkeypatch, tmp_path, "real")
    assert sum(score for _, _, score, _ in graded) == 100
