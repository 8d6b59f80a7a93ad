"""Whatever a student controls is bounded, shown as text, and charged to them (issue: hostile text
and hostile sizes). One batch per lab: attackers beside honest students, in one slot and in two,
whose exact scores are asserted; then every place student text reaches: the instructor's
terminal, the grades table (a CSV opened in spreadsheets), results.json, the feedback page and
the gradebook."""
import csv
import json
import re

import nbformat
import pytest

from autograder import examples, notebooks
from conftest import ROOT, copy_course, run_tool

pytestmark = pytest.mark.full     # the full tier: batches of attackers, a 600,000-cell notebook among them

CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
OSC = "\x1b]52;c;aGk=\x07\x1b[2K\r\u202egraded 100/118"     # sets the clipboard, rewrites the line


def solved(lab: str) -> dict:
    key = notebooks.read(ROOT / "solutions" / lab / f"{lab}.ipynb")
    return {g: notebooks.without_markers(c) for g, c in notebooks.answer_cells(key).items()}


def filled(lab: str, answers: dict):
    return examples.fill(notebooks.read(ROOT / "assignments" / lab / f"{lab}.ipynb"), answers)


def lab05_class() -> dict:
    lab = "lab05_transformers"
    right = solved(lab)
    half = {k: v for k, v in right.items() if k in ("softmax", "layer_norm", "feedforward")}
    escapes = filled(lab, {**right, "layer_norm": f"def layer_norm(x, gamma=None, beta=None, eps=1e-5):\n"
                                                  f"    raise ValueError({OSC!r})\n"})
    escapes.cells.append(nbformat.v4.new_code_cell(f"# {OSC}\nthis is not python"))   # a syntax error, named
    many = filled(lab, right)
    many.cells += [nbformat.v4.new_markdown_cell("", id=f"m{i}") for i in range(600_000)]
    long_id = json.loads(nbformat.writes(filled(lab, right)))
    twin = {"cell_type": "code", "id": "i" * 20_000_000, "metadata": {}, "outputs": [], "execution_count": None}
    long_id["cells"] += [{**twin, "source": "x = 1"}, {**twin, "source": "y = 2"}]    # a repeated id, reported
    odd_format = nbformat.writes(filled(lab, right)).replace('"nbformat": 4,', f'"nbformat": {json.dumps(OSC)},')
    return {"h_correct": nbformat.writes(filled(lab, right)), "h_half": nbformat.writes(filled(lab, half)),
            "x1_escapes": nbformat.writes(escapes), "x2_many_cells": nbformat.writes(many),
            "x3_long_id": json.dumps(long_id), "x4_odd_format": odd_format,
            "@SUM(A1)": nbformat.writes(filled(lab, right)), "+cmd": nbformat.writes(filled(lab, right))}


def grade(course, lab: str, submissions: dict, jobs: int) -> tuple:
    for student, text in submissions.items():
        folder = course / "submitted" / student / lab
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{lab}.ipynb").write_text(text)
    done = run_tool("attnlab", "grade", lab, "--force", "--jobs", str(jobs), cwd=course, timeout=1800)
    found = {p.parent.parent.name: json.loads(p.read_text())
             for p in (course / "autograded").glob(f"*/{lab}/results.json")}
    return found, done


@pytest.fixture(scope="module", params=[1, 2], ids=["one slot", "two slots"])
def lab05(tmp_path_factory, request):
    course = copy_course(tmp_path_factory.mktemp("hostile"))
    run_tool("nbgrader", "generate_assignment", "lab05_transformers", "--force", cwd=course)
    found, done = grade(course, "lab05_transformers", lab05_class(), request.param)
    return course, found, done


def test_honest_students_keep_their_exact_scores_and_attackers_earn_what_their_code_earns(lab05):
    _, found, _ = lab05
    assert {s: (r["extra_data"]["status"], r["score"]) for s, r in found.items()} == {
        "h_correct": ("graded", 100.0), "h_half": ("graded", 24.0),
        "x1_escapes": ("partly graded", 90.0), "x2_many_cells": ("unreadable", 0.0),
        "x3_long_id": ("graded", 100.0), "x4_odd_format": ("unreadable", 0.0)}


def test_ids_that_a_spreadsheet_reads_as_formulas_are_refused(lab05):
    course, found, done = lab05
    assert "@SUM(A1)" not in found and "+cmd" not in found
    assert "NOT GRADED" in done.stderr and "'@SUM(A1)' is not a valid id" in done.stderr


def test_no_control_character_reaches_the_terminal_the_table_or_a_page(lab05):
    course, _, done = lab05
    assert not CONTROL.search(done.stdout + done.stderr)
    assert "\\x1b]52;c;aGk=\\x07" in done.stdout            # shown, as text
    table = (course / "grades" / "lab05_transformers.csv").read_text()
    assert not CONTROL.search(table.replace("\r\n", ""))
    assert all(not cell.startswith(("=", "+", "-", "@")) for row in csv.reader(table.splitlines()) for cell in row)
    run_tool("attnlab", "feedback", "lab05_transformers", "--student", "x1_escapes", cwd=course)
    page = (course / "feedback" / "x1_escapes" / "lab05_transformers" / "lab05_transformers.html").read_text()
    assert not CONTROL.search(page.replace("\n", "")) and "\\x1b]52;c;aGk=\\x07" in page


def test_what_a_student_sizes_is_bounded_and_recorded_once(lab05):
    course, found, _ = lab05
    assert "has 600,0" in found["x2_many_cells"]["extra_data"]["notes"][0]
    for student in ("x1_escapes", "x2_many_cells", "x3_long_id", "x4_odd_format"):
        assert (course / "autograded" / student / "lab05_transformers" / "results.json").stat().st_size < 200_000
    assert (course / "gradebook.db").stat().st_size < 5_000_000
    again = run_tool("attnlab", "grade", "lab05_transformers", "--quiet", cwd=course)
    assert "graded 0 submission(s)" in again.stderr          # an unreadable notebook is not tried again


HUGE_KEYS = '''
def build_vocab(names):
    itos = ["."] + sorted(set("".join(names)) - {"."})
    stoi = {ch: i for i, ch in enumerate(itos)}
    for k in "abc":
        stoi[k * 5_000_000] = -1            # three keys of five million characters
    return stoi, itos
'''


def test_values_a_student_returns_are_quoted_briefly(tmp_path):
    lab = "lab06_training"
    course = copy_course(tmp_path / "course")
    run_tool("nbgrader", "generate_assignment", lab, "--force", cwd=course)
    right = solved(lab)
    found, _ = grade(course, lab, {"h_correct": nbformat.writes(filled(lab, right)),
                                   "x5_huge_keys": nbformat.writes(filled(lab, {**right, "build_vocab": HUGE_KEYS}))}, 2)
    assert found["h_correct"]["score"] == 100.0
    assert found["x5_huge_keys"]["score"] < 100.0
    results = course / "autograded" / "x5_huge_keys" / lab / "results.json"
    assert results.stat().st_size < 200_000
    run_tool("attnlab", "feedback", lab, "--student", "x5_huge_keys", cwd=course)
    assert (course / "feedback" / "x5_huge_keys" / lab / f"{lab}.html").stat().st_size < 500_000
