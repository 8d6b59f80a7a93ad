"""Release hygiene: what CI must prove before a lab can be released."""
import filecmp
import re

import nbformat
import pytest
from nbclient import NotebookClient

from autograder import labs, notebooks
from autograder.sync import sync
from autograder.worker.invoke import execute
from conftest import ASSIGNMENT, ROOT, copy_course, run_tool

SOURCE = ROOT / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
RELEASE = ROOT / "assignments" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
SOLUTION = ROOT / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
suite = labs.load(ASSIGNMENT).suite


def test_derived_files_match_the_source_notebook():
    """The reference module and the student helper are what `attnlab sync` makes from source/."""
    assert sync(ROOT, check_only=True) == []


def test_generated_directories_match_nbgrader(tmp_path):
    course = copy_course(tmp_path)
    for name in ("assignments", "solutions"):
        (course / name).rename(course / f"committed_{name}")
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=course)
    run_tool("nbgrader", "generate_solution", ASSIGNMENT, "--force", cwd=course)
    for name in ("assignments", "solutions"):
        comparison = filecmp.dircmp(course / name / ASSIGNMENT, course / f"committed_{name}" / ASSIGNMENT)
        assert comparison.left_only == comparison.right_only == [], name
        mismatch, errors = filecmp.cmpfiles(course / name / ASSIGNMENT,
                                            course / f"committed_{name}" / ASSIGNMENT,
                                            comparison.common_files, shallow=False)[1:]
        assert mismatch == errors == [], f"{name}/ differs from nbgrader's output: {mismatch}"


def test_cell_conventions():
    """Every graded name: one answer cell with grade_id = name, one test cell test_<name> with
    the suite's points, visible checks, and exactly one hidden-test block."""
    nb = notebooks.read(SOURCE)
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


def test_release_holds_no_solution_and_no_hidden_test():
    source = notebooks.read(SOURCE)
    solution_lines = set()
    for cell in source.cells:
        inside = False
        for line in cell.source.splitlines():
            if re.search(r"### (BEGIN|END) (SOLUTION|HIDDEN TESTS)", line):
                inside = "BEGIN" in line
            elif inside and len(line.strip()) > 12:
                solution_lines.add(line.strip())
    assert solution_lines
    for path in (ROOT / "assignments").rglob("*"):
        if path.is_file():
            text = path.read_text()
            assert not re.search(r"BEGIN SOLUTION|END SOLUTION|HIDDEN TESTS|hidden_tests", text), path
            leaked = [line for line in solution_lines if line in text]
            assert not leaked, f"{path} contains solution lines: {leaked[:3]}"


def test_every_stub_raises_not_implemented():
    release = notebooks.read(RELEASE)
    namespace = {}
    exec("import numpy as np", namespace)
    for source in notebooks.answer_cells(release).values():
        exec(source, namespace)
    lab = labs.load(ASSIGNMENT)
    for name, cases in lab.CASES.items():
        with pytest.raises(NotImplementedError):
            execute(cases[0][1], namespace)


def test_source_notebook_executes_without_error(tmp_path):
    nb = notebooks.read(SOURCE)
    NotebookClient(nb, timeout=120, resources={"metadata": {"path": str(SOURCE.parent)}}).execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if o.output_type == "error" or o.get("name") == "stderr"]
    assert errors == []


def test_nbgrader_autograde_gives_the_stub_0_and_the_solution_100(course):
    for student, notebook in (("stub", RELEASE), ("solution", SOLUTION)):
        dest = course / "submitted" / student / ASSIGNMENT
        dest.mkdir(parents=True)
        (dest / RELEASE.name).write_bytes(notebook.read_bytes())
    run_tool("nbgrader", "autograde", ASSIGNMENT, cwd=course)
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        scores = {s: gb.find_submission(ASSIGNMENT, s).score for s in ("stub", "solution")}
    assert scores == {"stub": 0.0, "solution": 100.0}
    run_tool("nbgrader", "generate_feedback", ASSIGNMENT, cwd=course)
    stub = (course / "feedback" / "stub" / ASSIGNMENT / RELEASE.name.replace(".ipynb", ".html")).read_text()
    assert "NotImplementedError" in stub
    for page in (course / "feedback").rglob("*.html"):
        assert "hidden_tests" not in page.read_text() and "HIDDEN TESTS" not in page.read_text()
