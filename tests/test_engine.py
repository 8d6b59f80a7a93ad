"""`attnlab grade` end to end on the bundled example class: scores, statuses, every output
file, nbgrader's own tools on the results, determinism, and parity with in-process grading."""
import copy
import csv
import json
import shutil
import zipfile

import nbformat
import pytest

from autograder import demo, examples, labs, notebooks, sandbox, secret, submission
from autograder.checks import run_part
from autograder.course import submitted_notebook
from autograder.grading import Slot
from autograder.runners import LocalRunner
from conftest import ASSIGNMENT, ROOT, copy_of, fixed_secret, run_tool

NOTEBOOK = f"{ASSIGNMENT}.ipynb"

suite = labs.load(ASSIGNMENT).suite
POINTS = {name: part.points for name, part in suite.parts.items()}


def load_results(course):
    return {p.parent.parent.name: json.loads(p.read_text())
            for p in (course / "autograded").glob(f"*/{ASSIGNMENT}/results.json")}


@pytest.fixture(scope="module")
def course(tmp_path_factory, graded_example_class):
    return copy_of(graded_example_class, tmp_path_factory.mktemp("engine") / "class")


def part_scores(result) -> dict:
    return {p["name"]: p["score"] for p in result["extra_data"]["parts"]}


def test_each_mistake_costs_points_in_its_own_parts_only(course):
    results = load_results(course)
    wrong_parts = {"ada": set(), "ben": {"softmax", "scaled_dot_product_attention"},
                   "cleo": {"MultiHeadAttention", "positional_encoding"},
                   "eli": {"layer_norm"}, "ivy": {"TransformerBlock", "MiniTransformerLM"},
                   "jon": {"layer_norm", "feedforward"}}
    for student, wrong in wrong_parts.items():
        scores = part_scores(results[student])
        assert {n for n, s in scores.items() if s < POINTS[n]} == wrong, student


def test_statuses_are_explicit(course):
    results = load_results(course)
    assert results["dev"]["score"] == POINTS["softmax"] + POINTS["scaled_dot_product_attention"] + \
        POINTS["causal_attention"]
    eli = results["eli"]["extra_data"]
    assert eli["status"] == "partly graded"
    assert [p["status"] for p in eli["parts"] if p["name"] == "layer_norm"] == ["timeout"]
    assert results["eli"]["extra_data"]["charged_seconds"] < 20 + 0.5
    fay = results["fay"]["extra_data"]
    assert results["fay"]["score"] == 0 and any("points 8 -> 100" in t for t in fay["tampering"])
    assert results["gus"]["extra_data"]["status"] == "unreadable"
    assert "hana" not in results        # missing: no submission, no results.json ...
    rows = {r["student_id"]: r for r in csv.DictReader(open(course / "grades" / f"{ASSIGNMENT}.csv"))}
    assert rows["hana"]["status"] == "missing"                     # ... but a row that says so
    assert rows["gus"]["status"] == "unreadable" and "unreadable" in rows["gus"]["needs_attention"]
    assert "tampering" in rows["fay"]["needs_attention"]
    assert float(rows["eli"]["layer_norm"]) < 10 and "layer_norm: timeout" in rows["eli"]["needs_attention"]
    assert set(rows) == {"ada", "ben", "cleo", "dev", "eli", "fay", "gus", "hana", "ivy", "jon"}
    assert list(rows["ada"])[4:13] == list(suite.parts)


def test_results_json_follows_gradescope_format(course):
    """One layout (results.to_json): test N is part N with its score, tests N.M its checks with
    none, so that the scored tests add up to the score (no late penalty in this class)."""
    for student, result in load_results(course).items():
        assert set(result) >= {"score", "execution_time", "output", "tests", "visibility"}
        assert sum(t.get("score", 0) for t in result["tests"]) == pytest.approx(result["score"])
        parts = [t for t in result["tests"] if "." not in t["number"] and "manual" not in t["tags"]]
        assert [t["name"].split(" [")[0] for t in parts] == list(suite.parts)
        assert sum(t["max_score"] for t in parts) == 100       # the rest: written answers, graded by hand
        for test in parts:
            assert test["status"] in ("passed", "failed") and test["visibility"] == "visible"
            assert 0 <= test["score"] <= test["max_score"]
        for test in (t for t in result["tests"] if "." in t["number"]):
            assert "score" not in test and test["name"].split(": ", 1)[0] in suite.parts
            assert isinstance(test["output"], str)
        written = [t["name"] for t in result["tests"] if "manual" in t["tags"] and t["tags"][0] not in suite.parts]
        assert written[:2] in ([], ["Q1.1 (predict): written answer, not graded yet (1 points)",   # as the bundle
                                    "Q1.2 (interpret): written answer, not graded yet (2 points)"]), written[:2]


def test_nbgrader_export_and_feedback_work_on_the_results(course):
    run_tool("nbgrader", "export", "--to", str(course / "export.csv"), cwd=course)
    exported = {r["student_id"]: float(r["raw_score"]) for r in csv.DictReader(open(course / "export.csv"))}
    results = load_results(course)
    assert {s: exported[s] for s in results} == {s: r["score"] for s, r in results.items()}
    run_tool("nbgrader", "generate_feedback", ASSIGNMENT, cwd=course)
    html = (course / "feedback" / "ben" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    assert "likely cause: no maximum is subtracted" in html
    for page in (course / "feedback").rglob("*.html"):
        text = page.read_text()
        assert "hidden_tests" not in text and "HIDDEN TESTS" not in text


def test_attnlab_feedback_pages(course):
    run_tool("attnlab", "feedback", ASSIGNMENT, cwd=course)
    ben = (course / "feedback" / "ben" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    result = load_results(course)["ben"]
    total = f'{result["score"]:g} / {result["extra_data"]["max_score"]:g}'
    assert "Likely cause: no maximum is subtracted" in ben and total in ben
    fay = (course / "feedback" / "fay" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    assert "points 8 -&gt; 100" in fay
    for page in (course / "feedback").rglob(f"{ASSIGNMENT}.html"):
        assert "hidden_tests" not in page.read_text()


def test_regrading_is_deterministic_and_skips_graded_work(course):
    def stable(results):     # but the times measured
        return {s: {**{k: v for k, v in r.items() if k != "execution_time"},
                    "extra_data": {k: v for k, v in r["extra_data"].items() if k != "charged_seconds"}}
                for s, r in results.items()}
    before = stable(load_results(course))
    out = run_tool("attnlab", "grade", ASSIGNMENT, cwd=course)
    assert "graded 0 submission(s)" in out.stderr and "9 already graded" in out.stderr
    run_tool("attnlab", "grade", ASSIGNMENT, "--force", "--student", "ben", "--student", "cleo", cwd=course)
    assert stable(load_results(course)) == before


def test_sandboxed_and_in_process_grading_agree(course):
    """The same checks give the same verdicts and messages whether the student's code runs in the
    sandbox or in this process."""
    results = load_results(course)
    release = notebooks.read(course / "assignments" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    course_secret = secret.course_secret(course)
    for student in ("ada", "ben", "cleo", "ivy", "jon"):
        path = course / "submitted" / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
        salt = secret.salt(course_secret, ASSIGNMENT, student, path.read_bytes())
        nb, _ = submission.load(path)
        namespace = {}
        exec("import numpy as np", namespace)
        for cell in submission.inspect(nb, release).notebook.cells:
            if notebooks.is_answer(cell):
                exec(cell.source, namespace)
        local = [run_part(suite, name, LocalRunner(namespace, suite.reference), salt) for name in suite.parts]
        remote = results[student]["extra_data"]["parts"]
        for mine, theirs in zip(local, remote):
            assert [(c.score, c.message, c.diagnosis) for c in mine.checks] == \
                [(c["score"], c["message"], c["diagnosis"]) for c in theirs["checks"]], (student, mine.name)


def test_a_part_holding_an_earlier_part_is_graded_with_the_official_one(tmp_path):
    """Each part is graded with the official earlier parts, also where the student's code holds
    the earlier function itself (a default argument, a functools.partial, a dict), not its name:
    a correct sample_token and attention_backward lost points (and got a wrong diagnosis) for a
    wrong next_token_probs and linear_backward. In the sandbox and in this process alike."""
    lab = "lab06_training"
    key = notebooks.read(ROOT / "solutions" / lab / f"{lab}.ipynb")
    answers = {g: notebooks.without_markers(c) for g, c in notebooks.answer_cells(key).items()}
    answers["next_token_probs"] = answers["next_token_probs"].replace("def next_token_probs(", "def _ntp(") + \
        "\ndef next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):\n" \
        "    return _ntp(logits, 2 * temperature, top_k, top_p)\n"
    answers["sample_token"] = "import functools\n" + answers["sample_token"].replace(
        "top_p=None, greedy=False):", "top_p=None, greedy=False, dist=next_token_probs):").replace(
        "probs = next_token_probs(", "probs = TOOLS['probs'](") + "\nTOOLS = {'probs': functools.partial(next_token_probs)}\n"
    answers["linear_backward"] = answers["linear_backward"].replace("dy2.sum(axis=0)", "2 * dy2.sum(axis=0)")
    answers["attention_backward"] = answers["attention_backward"].replace(
        "W_O, n_heads):", "W_O, n_heads, lin=linear_backward):", 1)
    nb = examples.fill(notebooks.read(ROOT / "assignments" / lab / f"{lab}.ipynb"), answers)
    path = tmp_path / f"{lab}.ipynb"
    path.write_text(nbformat.writes(nb))
    slot = Slot(lab, ROOT / "assignments" / lab, f"{lab}.ipynb", "bwrap", sandbox.Limits())
    try:
        sandboxed, _ = slot.grade("student", path)
    finally:
        slot.worker.close()
    lab_suite = labs.load(lab).suite
    namespace = {}
    for source in (labs.reference_path(lab).read_text(), *answers.values()):   # the reference, then the answers
        exec(source, namespace)
    local = [run_part(lab_suite, name, LocalRunner(namespace, lab_suite.reference)) for name in lab_suite.parts]
    for parts in (sandboxed.parts, local):
        lost = {p.name: p.max_score - p.score for p in parts if p.score < p.max_score}
        assert set(lost) == {"next_token_probs", "linear_backward"}, lost


def test_zip_collect_takes_an_lms_download(tmp_path):
    path = fixed_secret(demo.build_course(ROOT, tmp_path))
    shutil.rmtree(path / "submitted")
    archive = path / "downloaded" / ASSIGNMENT / "archive"
    archive.mkdir(parents=True)
    ada = (ROOT / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    release = path / "assignments" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    with zipfile.ZipFile(archive / "submissions.zip", "w") as z:
        z.write(release, f"lovelaceada_ada_1001_{ASSIGNMENT}.ipynb")
        z.write(release, f"babbagecharles_charles_1002_{ASSIGNMENT}-1.ipynb")
    run_tool("attnlab", "grade", ASSIGNMENT, "--zip-collect", "--quiet", cwd=path)
    assert ada.exists()
    results = load_results(path)
    assert set(results) == {"ada", "charles"}
    assert results["ada"]["score"] == 0.0 and results["ada"]["extra_data"]["status"] == "graded"


def test_grades_csv_has_one_line_per_student_whatever_the_error_text(tmp_path):
    """A student's error message with newlines cannot make a line that reads as another row."""
    from autograder import outcome, results
    suite = labs.load(ASSIGNMENT).suite
    forged = outcome.ungraded("a_attacker", ASSIGNMENT, suite, "unreadable", "bad\nb_honest,graded,0\r\n=1+1")
    honest = outcome.ungraded("b_honest", ASSIGNMENT, suite, "missing", "")
    results.write_csv(tmp_path / "grades.csv", [forged, honest], list(suite.parts))
    lines = (tmp_path / "grades.csv").read_text().splitlines()
    assert len(lines) == 3 and [line.split(",")[0] for line in lines[1:]] == ["a_attacker", "b_honest"]
    assert "unreadable: bad b_honest,graded,0\\x0d =1+1" in lines[1]      # a carriage return, shown


def test_moved_cells_run_in_the_release_order():
    """A moved cell runs where the release has it, with the student's own cells that followed it.
    Nothing is gained by moving cells: a note names the fewest cells that explain the new order,
    the student's answers rather than locked cells when either would."""
    release = notebooks.read(ROOT / "assignments" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    ids = [notebooks.grade_id(c) for c in release.cells if notebooks.grade_id(c)]

    def moved(*edits):
        nb = copy.deepcopy(release)
        for gid, after in edits:        # the cell `gid` dragged to just after `after` (None: the end)
            cell = next(c for c in nb.cells if notebooks.grade_id(c) == gid)
            nb.cells.remove(cell)
            at = len(nb.cells) if after is None else \
                1 + next(i for i, c in enumerate(nb.cells) if notebooks.grade_id(c) == after)
            nb.cells.insert(at, cell)
        inspection = submission.inspect(nb, release)
        assert [notebooks.grade_id(c) for c in inspection.notebook.cells if notebooks.grade_id(c)] == ids
        assert inspection.tampering == []
        return inspection.notes

    def note(*names):
        return [f"cells were moved out of the release's order ({', '.join(map(repr, names))}); the "
                "notebook was run in the release's order"]

    assert moved(("setup", None)) == note("setup")
    assert moved(("softmax", "test_softmax")) == note("softmax")     # not the test cell it passed
    assert moved(("setup", "softmax")) == note("softmax")
    assert moved() == []

    nb = copy.deepcopy(release)
    answer = next(c for c in nb.cells if notebooks.grade_id(c) == "softmax")
    nb.cells.remove(answer)
    nb.cells += [answer, nbformat.v4.new_code_cell("helper = 1")]
    cells = submission.inspect(nb, release).notebook.cells
    assert cells[[notebooks.grade_id(c) for c in cells].index("softmax") + 1].source == "helper = 1"
    nb.cells.reverse()
    assert submission.inspect(nb, release).notes[0].startswith("cells were moved")


@pytest.mark.parametrize("edit, note", [
    (lambda d, i: d.update(metadata=[1]), "the notebook's metadata was not a dictionary; it was dropped"),
    (lambda d, i: d["cells"][i].update(metadata=None), "the metadata of cell {} was not a dictionary; it was dropped"),
    (lambda d, i: d["cells"][i]["metadata"].update(nbgrader="x"),
     "the nbgrader metadata of cell {} was not a dictionary; it was dropped"),
    (lambda d, i: d["cells"][i].pop("metadata"), None),
])
def test_metadata_that_is_not_a_dictionary_is_dropped_and_reported(tmp_path, edit, note):
    """The locked setup cell's metadata spoiled: the cell counts as the student's own, and the
    setup cell is put back."""
    release = notebooks.read(ROOT / "assignments" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    data = json.loads(nbformat.writes(release))
    setup = [notebooks.grade_id(c) for c in release.cells].index("setup")
    edit(data, setup)
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(data))
    nb, notes = submission.load(path)
    assert notes == ([note.format(setup + 1)] if note else [])
    inspection = submission.inspect(nb, release)
    ids = [notebooks.grade_id(c) for c in inspection.notebook.cells if notebooks.grade_id(c)]
    assert ids == [notebooks.grade_id(c) for c in release.cells if notebooks.grade_id(c)]


def test_a_version_3_notebook_is_upgraded(tmp_path):
    release = notebooks.read(ROOT / "assignments" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    path = tmp_path / "nb.ipynb"
    path.write_text(nbformat.writes(nbformat.convert(copy.deepcopy(release), 3)))
    nb, notes = submission.load(path)
    inspection = submission.inspect(nb, release)
    assert notes == [] and inspection.tampering == []
    assert [c.source for c in inspection.notebook.cells] == [c.source for c in release.cells]
    assert [c.id for c in submission.load(path)[0].cells] == [c.id for c in nb.cells]   # not drawn at random


@pytest.mark.parametrize("files, graded", [
    (["Lab05 (1).ipynb", "._Lab05 (1).ipynb", "__MACOSX/._Lab05 (1).ipynb", ".ipynb_checkpoints/a-checkpoint.ipynb"],
     "Lab05 (1).ipynb"),
    (["mine.ipynb", "scratch/other.ipynb"], "mine.ipynb"),
    (["upload/mine.ipynb"], "upload/mine.ipynb"),
    (["one.ipynb", "two.ipynb"], NOTEBOOK),
    ([NOTEBOOK, "other.ipynb"], NOTEBOOK),
    (["LAB05.IPYNB", "notes.txt"], "LAB05.IPYNB"),                 # an upload from Windows
])
def test_the_notebook_of_a_submission_folder(tmp_path, files, graded):
    """The expected notebook, or the student's only one, wherever an archiver or an editor put
    files of its own beside it (attnlab grade and the Gradescope bundle find it alike)."""
    for name in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}")
    assert submitted_notebook(tmp_path, NOTEBOOK) == tmp_path / graded
