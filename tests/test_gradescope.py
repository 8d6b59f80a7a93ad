"""The Gradescope bundle in a simulated /autograder layout: setup.sh builds a fresh environment,
run_autograder grades a submission as a non-root user and writes a valid results.json."""
import json
import os
import shutil
import stat
import subprocess
import tempfile
import zipfile
from pathlib import Path

import pytest

from autograder import examples, gradescope, labs, notebooks
from conftest import ASSIGNMENT, ROOT, copy_course, run_tool
from exploits import FIND_ANSWER_KEY

DEBIAN_PYTHON = Path("/usr/bin/python3.11")
RELEASE = notebooks.read(ROOT / "assignments" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
SOLVED = notebooks.answer_cells(notebooks.read(ROOT / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"))
SUBMISSIONS = {
    "correct": (SOLVED, 100.0),
    # a message with a lone surrogate (valid in JSON, not in UTF-8): results.json was left empty
    "surrogate": ({**SOLVED, "softmax": "def softmax(z, *args, **kwargs):\n    raise ValueError(chr(0xD800))\n"}, 92.0),
    "key_thief": ({"softmax": SOLVED["softmax"],
                   "scaled_dot_product_attention": FIND_ANSWER_KEY + "\nimport os\nIS_ROOT = os.getuid() == 0\n"}, 8.0),
}


@pytest.fixture(scope="module")
def autograder_root(tmp_path_factory):
    """/autograder as Gradescope lays it out, after setup.sh ran (world-traversable, like /)."""
    course = copy_course(tmp_path_factory.mktemp("course"))
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=course)
    bundle = course / "bundle.zip"
    run_tool("attnlab", "gradescope", ASSIGNMENT, "-o", str(bundle), cwd=course)
    root = Path(tempfile.mkdtemp(prefix="autograder-"))
    os.chmod(root, 0o755)
    with zipfile.ZipFile(bundle) as z:
        z.extractall(root / "source")
        for info in z.infolist():         # zipfile does not restore modes
            mode = info.external_attr >> 16
            if mode:
                os.chmod(root / "source" / info.filename, mode)
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "ATTNLAB_SKIP_APT": "1"}
    if DEBIAN_PYTHON.exists():
        env["ATTNLAB_PYTHON"] = str(DEBIAN_PYTHON)
    subprocess.run(["bash", str(root / "source" / "setup.sh")], env=env, check=True, timeout=900)
    shutil.copy(root / "source" / "run_autograder", root / "run_autograder")   # as Gradescope does
    yield root
    shutil.rmtree(root, ignore_errors=True)


def grade(root: Path, answers: dict, sandbox: str) -> dict:
    submission = root / "submission"
    shutil.rmtree(submission, ignore_errors=True)
    submission.mkdir()
    (submission / "my_lab05.ipynb").write_text(__import__("nbformat").writes(examples.fill(RELEASE, answers)))
    (root / "results").mkdir(exist_ok=True)
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "ATTNLAB_SANDBOX": sandbox}
    subprocess.run([str(root / "run_autograder")], env=env, check=True, timeout=300, capture_output=True)
    return json.loads((root / "results" / "results.json").read_text())


def _font_lists(root: Path) -> dict:
    return {path: path.stat().st_mtime_ns for path in (root / "cache").rglob("fontlist-*.json")}


def test_workers_start_from_the_font_list_that_setup_made(autograder_root):
    """setup.sh starts a worker once per sandbox mode: matplotlib's font list is kept in the
    image, readable by user nobody, and no submission's worker scans the fonts again."""
    made = _font_lists(autograder_root)
    modes = {path.parent.name.split("-")[1] for path in made}
    assert "bwrap" in modes and ("user" in modes or not DEBIAN_PYTHON.exists())
    for mode in modes:
        grade(autograder_root, SOLVED, mode)
    assert _font_lists(autograder_root) == made     # a worker that scanned would replace its list


def test_setup_locks_the_answer_key_away(autograder_root):
    key = next((autograder_root / "venv").rglob("labs/lab05/reference.py"))
    for path in (key.parent.parent.parent, autograder_root / "source"):
        assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0, path


@pytest.mark.parametrize("sandbox", ["bwrap", "user"])
@pytest.mark.parametrize("student", SUBMISSIONS)
def test_run_autograder_writes_valid_results(autograder_root, sandbox, student):
    if sandbox == "user" and not DEBIAN_PYTHON.exists():
        pytest.skip("user mode needs an interpreter that user nobody can run")
    answers, expected = SUBMISSIONS[student]
    result = grade(autograder_root, answers, sandbox)
    assert result["score"] == expected
    assert result["extra_data"]["sandbox"] == sandbox
    suite = labs.load(ASSIGNMENT).suite
    checks = [t for t in result["tests"] if "." in t["number"]]
    assert len(checks) == sum(len(p.checks) for p in suite.parts.values())
    assert [t["name"] for t in result["tests"] if "." not in t["number"]] == list(suite.parts)
    for test in result["tests"]:
        assert test["name"].split(": ")[0] in suite.parts
        assert set(test) >= {"name", "score", "max_score", "status", "output", "visibility"}


def test_the_bundle_carries_the_course_settings(tmp_path):
    course = copy_course(tmp_path / "course")
    with open(course / "nbgrader_config.py", "a") as f:
        f.write('\nc.AttnLab.call_timeout = 3.5\nc.AttnLab.gradescope_details = "hidden"\n'
                'c.LateSubmissionPlugin.penalty_method = "zero"\n')
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=course)
    run_tool("attnlab", "gradescope", ASSIGNMENT, "-o", "b.zip", "--memory", "512", cwd=course)
    with zipfile.ZipFile(course / "b.zip") as z:
        config = json.loads(z.read("config.json"))
        z.extract("setup.sh", tmp_path)
    assert config["limits"]["call_seconds"] == 3.5 and config["limits"]["memory_bytes"] == 512 * 2**20
    assert (config["details"], config["late_penalty_method"]) == ("hidden", "zero")
    old = tmp_path / "python3"
    old.write_text('#!/bin/sh\n[ "$1" = -V ] && echo "Python 3.9.2" && exit 0\nexit 1\n')
    old.chmod(0o755)
    env = {**os.environ, "ATTNLAB_SKIP_APT": "1", "ATTNLAB_PYTHON": str(old), "AUTOGRADER_ROOT": str(tmp_path)}
    done = subprocess.run(["bash", str(tmp_path / "setup.sh")], env=env, capture_output=True, text=True)
    assert done.returncode == 1 and "needs Python >= 3.11" in done.stderr and "3.9.2" in done.stderr


def test_gradescope_results_are_numbered_with_late_penalty_and_hidden_details():
    from autograder import gradescope, results
    from autograder.checks import CheckResult, PartResult
    suite = labs.load(ASSIGNMENT).suite
    parts = [PartResult(name, [CheckResult(name, c.title, c.points, c.points, "passed") for c in part.checks])
             for name, part in suite.parts.items()]
    result = results.Result("submission", ASSIGNMENT, "graded", parts)
    metadata = {"created_at": "2026-03-02T14:00:00+00:00", "assignment": {"due_date": "2026-03-02T12:00:00+00:00"}}
    result.recorded = gradescope.lateness(result, metadata, "zero")
    data = gradescope.for_gradescope(result, "after_due_date")
    assert data["score"] == 0 and result.late_penalty == 100
    numbers = [t["number"] for t in data["tests"]]
    assert numbers[:3] == ["1", "1.1", "1.2"] and numbers[-1] == str(len(suite.parts) + 1)
    assert {t["visibility"] for t in data["tests"] if "." in t["number"]} == {"after_due_date"}
    assert {t["visibility"] for t in data["tests"] if "." not in t["number"]} == {"visible"}
    on_time = {**metadata, "created_at": "2026-03-02T11:00:00+00:00"}
    result.recorded = gradescope.lateness(result, on_time, "zero")
    assert gradescope.for_gradescope(result, "visible")["score"] == 100
    extended = {**metadata, "users": [{"name": "Ada", "assignment": {"due_date": "2026-03-04T12:00:00+00:00"}}]}
    result.recorded = gradescope.lateness(result, extended, "zero")      # her own due date: an extension
    assert gradescope.for_gradescope(result, "visible")["score"] == 100 and result.late_penalty == 0
    naive = {"created_at": "2026-03-02T14:00:00", "assignment": {"due_date": "2026-03-02T12:00:00+00:00"}}
    result.recorded = gradescope.lateness(result, naive, "zero")         # no offset: UTC
    assert result.seconds_late == 7200 and result.notes == []
    result.recorded = gradescope.lateness(result, {"assignment": {}}, "zero")   # nothing to judge by: said
    assert result.late_penalty == 0 and result.notes == [
        "Gradescope's submission_metadata.json gives no submission time or due date: lateness was not judged"]


def test_hidden_inputs_are_salted_per_gradescope_user(autograder_root, tmp_path):
    """The bundle carries the course secret, locked away with the answer key; two users with the
    same notebook get other hidden inputs, the same user the same ones."""
    assert stat.S_IMODE((autograder_root / "source" / "secret").stat().st_mode) & 0o077 == 0
    notebook = tmp_path / "lab.ipynb"
    notebook.write_text("{}")
    salts = []
    for user in ("101", "202", "101"):
        (autograder_root / "submission_metadata.json").write_text(json.dumps({"users": [{"id": user}]}))
        salts.append(gradescope._salt(autograder_root, ASSIGNMENT, notebook))
    (autograder_root / "submission_metadata.json").unlink()
    assert salts[0] != salts[1] and salts[0] == salts[2]


def test_an_upload_with_checkpoints_and_macos_files_is_graded(autograder_root):
    """Jupyter's checkpoints and the files macOS adds to an archive are not the student's notebooks
    (the upload was refused as holding two); a metadata file that is not JSON leaves lateness
    unjudged, and says so, instead of stopping the autograder."""
    submission = autograder_root / "submission"
    shutil.rmtree(submission, ignore_errors=True)
    text = __import__("nbformat").writes(examples.fill(RELEASE, SOLVED))
    for name in ("Lab05 (1).ipynb", ".ipynb_checkpoints/Lab05 (1)-checkpoint.ipynb", "__MACOSX/._Lab05 (1).ipynb"):
        (submission / name).parent.mkdir(parents=True, exist_ok=True)
        (submission / name).write_text(text)
    (autograder_root / "submission_metadata.json").write_text("{not json")
    env = {**os.environ, "AUTOGRADER_ROOT": str(autograder_root), "ATTNLAB_SANDBOX": "bwrap"}
    try:
        subprocess.run([str(autograder_root / "run_autograder")], env=env, check=True, timeout=300, capture_output=True)
    finally:
        (autograder_root / "submission_metadata.json").unlink()
    result = json.loads((autograder_root / "results" / "results.json").read_text())
    assert result["score"] == 100.0
    assert "submission_metadata.json could not be read: lateness was not judged" in result["output"]


def test_the_output_of_thousands_of_broken_cells_is_bounded(autograder_root):
    """Each cell that could not run is named, up to 20, then counted: 20,000 broken cells made a
    7 MB results.json."""
    nb = examples.fill(RELEASE, SOLVED)
    nb.cells += [__import__("nbformat").v4.new_code_cell(f"def broken_{i}(:") for i in range(2000)]
    submission = autograder_root / "submission"
    shutil.rmtree(submission, ignore_errors=True)
    submission.mkdir()
    (submission / "lab05.ipynb").write_text(__import__("nbformat").writes(nb))
    env = {**os.environ, "AUTOGRADER_ROOT": str(autograder_root), "ATTNLAB_SANDBOX": "bwrap"}
    subprocess.run([str(autograder_root / "run_autograder")], env=env, check=True, timeout=300, capture_output=True)
    text = (autograder_root / "results" / "results.json").read_text()
    result = json.loads(text)
    assert result["score"] == 100.0 and "... and 1980 more like these" in result["output"]
    assert len(text) < 100_000, len(text)


def test_a_grader_failure_still_writes_a_whole_results_json(autograder_root, tmp_path, monkeypatch):
    """If the grader itself fails, Gradescope still reads a result, and it says so; the file is
    written beside and renamed, so a link planted in its place is replaced, not followed."""
    (tmp_path / "source").mkdir()
    shutil.copy(autograder_root / "source" / "config.json", tmp_path / "source" / "config.json")
    (tmp_path / "results").mkdir()
    planted = tmp_path / "elsewhere.json"
    (tmp_path / "results" / "results.json").symlink_to(planted)

    def fails(root, config):
        raise RuntimeError("a bug")
    monkeypatch.setattr(gradescope, "_graded", fails)
    gradescope.run(tmp_path)
    result = json.loads((tmp_path / "results" / "results.json").read_text())
    assert result["score"] == 0 and result["extra_data"]["status"] == "error"
    assert "the autograder failed on this submission (RuntimeError)" in result["output"]
    assert not planted.exists() and not (tmp_path / "results" / "results.json").is_symlink()


def test_a_bad_penalty_setting_is_one_line(tmp_path):
    course = copy_course(tmp_path / "course")
    with open(course / "nbgrader_config.py", "a") as f:
        f.write('\nc.LateSubmissionPlugin.penalty_method = "half"\n')
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=course)
    out = run_tool("attnlab", "gradescope", ASSIGNMENT, "-o", "b.zip", cwd=course, check=False)
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert "nbgrader_config.py:" in out.stderr and "penalty_method" in out.stderr
