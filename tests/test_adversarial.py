"""Exploit submissions graded in one batch with honest ones: nobody gains a point by cheating,
nobody's honest work is lost, and the batch completes."""
import copy
import json
import sqlite3

import nbformat
import pytest

from autograder import examples, notebooks
from conftest import ASSIGNMENT, ROOT, copy_course, grade_class, run_tool
from exploits import EXPLOITS

RELEASE = notebooks.read(ROOT / "assignments" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
SOLVED = notebooks.answer_cells(notebooks.read(ROOT / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"))
HONEST_CLASS = {"correct": (SOLVED, 100.0), "stub": ({}, 0.0),
                "half": ({k: v for k, v in SOLVED.items() if k in ("softmax", "layer_norm", "feedforward")}, 24.0)}


def apply_edit(nb, edit: str) -> str:
    if edit == "tamper":
        return nbformat.writes(examples.tamper(nb))
    if edit == "delete_tests":
        nb.cells = [c for c in nb.cells if not notebooks.is_test(c)]
    if edit == "duplicate":
        test = next(c for c in nb.cells if notebooks.is_test(c))
        nb.cells.insert(nb.cells.index(test), copy.deepcopy(test))
        for cell in nb.cells:
            cell["id"] = "same"
    if edit == "move_setup":
        setup = next(c for c in nb.cells if notebooks.is_locked(c) and not notebooks.is_test(c) and c.cell_type == "code")
        nb.cells.remove(setup)
        nb.cells.append(setup)
    text = json.dumps(nb, indent=1)
    return text[: len(text) // 2] if edit == "corrupt" else text


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    course = copy_course(tmp_path_factory.mktemp("adversarial"))
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=course)
    submissions = {name: nbformat.writes(examples.fill(RELEASE, answers))
                   for name, (answers, _) in HONEST_CLASS.items()}
    for exploit in EXPLOITS:
        nb = examples.fill(RELEASE, {"softmax": SOLVED["softmax"], **exploit.cells})
        submissions[exploit.name] = apply_edit(nb, exploit.edit)
    return course, grade_class(course, submissions, "--jobs", "2")


@pytest.mark.parametrize("exploit", EXPLOITS, ids=lambda e: e.name)
def test_exploit_earns_only_what_it_honestly_earned(graded, exploit):
    _, results = graded
    result = results[exploit.name]
    assert result["score"] == exploit.expected, result["output"]
    assert result["extra_data"]["status"] in exploit.statuses
    assert bool(result["extra_data"]["tampering"]) == exploit.tampering
    assert result["extra_data"]["charged_seconds"] < 20 + 1


@pytest.mark.parametrize("student", HONEST_CLASS)
def test_honest_students_are_graded_correctly(graded, student):
    _, results = graded
    assert results[student]["score"] == HONEST_CLASS[student][1]
    assert results[student]["extra_data"]["status"] == "graded"


def test_the_gradebook_holds_the_true_scores(graded):
    course, results = graded
    with sqlite3.connect(course / "gradebook.db") as db:
        rows = db.execute("SELECT student.id, SUM(grade.auto_score) FROM grade "
                          "JOIN submitted_notebook ON grade.notebook_id = submitted_notebook.id "
                          "JOIN submitted_assignment ON submitted_notebook.assignment_id = submitted_assignment.id "
                          "JOIN student ON submitted_assignment.student_id = student.id GROUP BY student.id").fetchall()
    assert {student: score for student, score in rows} == {s: r["score"] for s, r in results.items()}


def test_a_forked_process_that_returns_is_not_blamed_on_a_later_cell(tmp_path):
    """Student code that forks a child which does not exit (a fork bomb's children, or
    `if os.fork() == 0: pass`): the child came back into the worker and answered the grader too,
    and the later, innocent cell or check was reported as writing to the grader's channel. Such a
    child now ends silently; the student's work is graded as it is."""
    course = copy_course(tmp_path / "fork")
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=course)
    forks = "\nimport os\nif os.fork() == 0:\n    pass\n"
    softmax = SOLVED["softmax"].replace("### END SOLUTION", "### END SOLUTION" + forks) if "### END SOLUTION" \
        in SOLVED["softmax"] else SOLVED["softmax"] + forks
    forked_call = "\n_real_layer_norm = layer_norm\ndef layer_norm(*args, **kwargs):\n" \
                  "    os.fork()\n    return _real_layer_norm(*args, **kwargs)\n"
    answers = {**SOLVED, "softmax": softmax, "layer_norm": SOLVED["layer_norm"] + forked_call}
    result = grade_class(course, {"forker": nbformat.writes(examples.fill(RELEASE, answers))})["forker"]
    assert (result["score"], result["extra_data"]["status"], result["extra_data"]["cells"]) == (100.0, "graded", []), \
        result["output"]
