"""Release hygiene: what CI must prove before a lab can be released."""
import ast
import filecmp
import re
import sys

import nbformat
import numpy as np
import pytest

from autograder import examples, labs, notebooks
from autograder.sync import sync
from autograder.worker.invoke import execute
from conftest import ROOT, copy_course, run_tool

pytestmark = pytest.mark.full     # the full tier: releases regenerated with nbgrader and compared

LABS = list(labs.assignments())
HELD_OUT_TARGET = 2.05      # Lab 06: nats per character on the held-out names


def notebook(kind: str, assignment: str):
    return ROOT / kind / assignment / f"{assignment}.ipynb"


def test_derived_files_match_the_source_notebook():
    """The reference module and the student helper are what `attnlab sync` makes from source/."""
    assert sync(ROOT, check_only=True) == []


def test_helper_data_regenerated_on_another_cpu_is_not_stale(tmp_path):
    """NumPy's float64 exp and log round differently on CPUs with and without AVX-512: the
    last bit of a visible case's expected output is not a change; a real change is."""
    from autograder.sync import _same
    path = ROOT / "source" / LABS[0] / f"{labs.packages()[LABS[0]]}_checks.npz"
    arrays = dict(np.load(path))
    key = next(k for k, a in arrays.items() if a.dtype == np.float64 and a.size and np.all(np.isfinite(a)))

    def written(change):
        out = tmp_path / "changed.npz"
        np.savez(out, **{**arrays, key: change(arrays[key])})
        return out.read_bytes()
    assert _same(path, written(lambda a: a), written(lambda a: np.nextafter(a, np.inf)))
    assert not _same(path, written(lambda a: a), written(lambda a: a * (1 + 1e-7)))


def test_generated_directories_match_nbgrader(tmp_path):
    course = copy_course(tmp_path)
    for name in ("assignments", "solutions"):
        (course / name).rename(course / f"committed_{name}")
    for assignment in LABS:
        run_tool("nbgrader", "generate_assignment", assignment, "--force", cwd=course)
        run_tool("nbgrader", "generate_solution", assignment, "--force", cwd=course)
    for name in ("assignments", "solutions"):
        comparison = filecmp.dircmp(course / name, course / f"committed_{name}")
        assert _differences(comparison) == [], f"{name}/ differs from nbgrader's output"


def _differences(comparison) -> list:
    found = comparison.left_only + comparison.right_only + comparison.funny_files
    found += [f for f in comparison.common_files
              if not filecmp.cmp(f"{comparison.left}/{f}", f"{comparison.right}/{f}", shallow=False)]
    return found + [d for sub in comparison.subdirs.values() for d in _differences(sub)]


@pytest.mark.parametrize("assignment", LABS)
def test_cell_conventions(assignment):
    """Every graded name: one answer cell with grade_id = name, one test cell test_<name> with
    the suite's points, visible checks, and exactly one hidden-test block."""
    suite = labs.load(assignment).suite
    nb = notebooks.read(notebook("source", assignment))
    answers = {notebooks.grade_id(c): c for c in nb.cells if notebooks.is_answer(c)}
    tests = {notebooks.grade_id(c): c for c in nb.cells if notebooks.is_test(c)}
    assert list(answers) == list(suite.parts)
    assert list(tests) == [f"test_{name}" for name in suite.parts]
    for name, part in suite.parts.items():
        answer, test = answers[name].source, tests[f"test_{name}"]
        assert answer.count("### BEGIN SOLUTION") == answer.count("### END SOLUTION") == 1
        assert test.metadata.nbgrader["points"] == part.points
        assert test.metadata.nbgrader["locked"] is True
        assert f"check({name})" in test.source
        assert test.source.count("### BEGIN HIDDEN TESTS") == 1
        assert f'hidden_tests("{name}", globals())' in test.source
    assert sum(t.metadata.nbgrader["points"] for t in tests.values()) == 100


@pytest.mark.parametrize("assignment", LABS)
def test_release_holds_no_solution_and_no_hidden_test(assignment):
    """No marker, and no line of a solution or hidden-test block appears in what students get,
    more often than the source notebook has it outside those blocks (given code may share a
    line with a solution)."""
    secret, public = [], []
    for cell in notebooks.read(notebook("source", assignment)).cells:
        inside = False
        for line in cell.source.splitlines():
            if re.search(r"### (BEGIN|END) (SOLUTION|HIDDEN TESTS)", line):
                inside = "BEGIN" in line
            elif len(line.strip()) > 12:
                (secret if inside else public).append(line.strip())
    assert secret
    public = "\n".join(public)
    for path in (ROOT / "assignments" / assignment).rglob("*"):
        if path.is_file() and path.suffix in (".ipynb", ".py", ".md", ".json"):
            text = path.read_text()
            assert not re.search(r"BEGIN SOLUTION|END SOLUTION|HIDDEN TESTS|hidden_tests", text), path
            leaked = [line for line in set(secret) if text.count(line) > public.count(line)]
            assert not leaked, f"{path} contains solution lines: {leaked[:3]}"


@pytest.mark.parametrize("assignment", LABS)
def test_every_stub_raises_not_implemented(assignment):
    release = notebooks.read(notebook("assignments", assignment))
    namespace = {}
    exec("import math\nimport numpy as np", namespace)
    for cell in release.cells:
        if notebooks.is_answer(cell) or notebooks.is_support(cell):
            exec(cell.source, namespace)
    for name, cases in labs.load(assignment).CASES.items():
        with pytest.raises(NotImplementedError):
            execute(cases[0][1], namespace)


@pytest.mark.parametrize("assignment", LABS)
def test_source_notebook_executes_without_error(assignment, executed_notebook):
    """Lab 06 trains its model here, and must reach the held-out target."""
    nb = executed_notebook(assignment)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    errors = [o for o in outputs if o.output_type == "error" or o.get("name") == "stderr"]
    assert errors == []
    if assignment == "lab06_training":
        text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
        loss = float(re.findall(r"held-out loss: (\d+\.\d+)", text)[-1])
        assert loss <= HELD_OUT_TARGET


@pytest.mark.parametrize("assignment", LABS)
def test_nbgrader_autograde_gives_the_stub_0_and_the_solution_100(course, assignment):
    release = notebook("assignments", assignment)
    for student, nb in (("stub", release), ("solution", notebook("solutions", assignment))):
        dest = course / "submitted" / student / assignment
        dest.mkdir(parents=True)
        (dest / release.name).write_bytes(nb.read_bytes())
    # plain nbgrader, deliberately unsandboxed: the course refuses it unless the exporter is reset
    run_tool("nbgrader", "autograde", assignment,
             "--Autograde.exporter_class=nbconvert.exporters.NotebookExporter", cwd=course)
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        scores = {s: gb.find_submission(assignment, s).score for s in ("stub", "solution")}
    assert scores == {"stub": 0.0, "solution": 100.0}
    run_tool("nbgrader", "generate_feedback", assignment, cwd=course)
    stub = (course / "feedback" / "stub" / assignment / release.name.replace(".ipynb", ".html")).read_text()
    assert "NotImplementedError" in stub
    for page in (course / "feedback").rglob("*.html"):
        assert "hidden_tests" not in page.read_text() and "HIDDEN TESTS" not in page.read_text()


@pytest.mark.parametrize("assignment", LABS)
def test_student_helper_needs_only_numpy_and_the_standard_library(assignment):
    """The visible checks ship to students, who have NumPy and matplotlib, not this package."""
    helper = ROOT / "source" / assignment / labs.load(assignment).HELPER
    imported = set()
    for node in ast.walk(ast.parse(helper.read_text())):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "relative import"
            imported.add(node.module.split(".")[0])
    assert imported - sys.stdlib_module_names <= {"numpy"}, imported


@pytest.mark.parametrize("assignment", LABS)
def test_the_sandbox_gives_the_solution_full_marks_and_the_stub_none(assignment, tmp_path):
    """Every lab through the sandboxed worker and its oracles, as `attnlab grade` runs it."""
    from autograder.grading import Slot
    from autograder.sandbox import Limits
    release = notebook("assignments", assignment)
    answers = {k: notebooks.without_markers(v)
               for k, v in notebooks.answer_cells(notebooks.read(notebook("solutions", assignment))).items()}
    solved = tmp_path / "solved.ipynb"
    solved.write_text(nbformat.writes(examples.fill(notebooks.read(release), answers)))
    slot = Slot(assignment, release.parent, release.name, "bwrap", Limits())
    try:
        full, _ = slot.grade("solution", solved, b"any salt")
        stub, _ = slot.grade("stub", release, b"another salt")
    finally:
        slot.worker.close()
    assert full.status == "graded" and {p.name: p.score for p in full.parts} == \
        {p.name: p.max_score for p in full.parts}, [c.message for p in full.parts for c in p.checks if c.message]
    assert stub.score == 0
