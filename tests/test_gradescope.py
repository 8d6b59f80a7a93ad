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
from autograder.outcome import Recorded, Result
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


@pytest.mark.full
def test_workers_start_from_the_font_list_that_setup_made(autograder_root):
    """setup.sh starts a worker once per sandbox mode: matplotlib's font list is kept in the
    image, readable by user nobody, and no submission's worker scans the fonts again."""
    made = _font_lists(autograder_root)
    modes = {path.parent.name.split("-")[1] for path in made}
    assert "bwrap" in modes and ("user" in modes or not DEBIAN_PYTHON.exists())
    for mode in modes:
        grade(autograder_root, SOLVED, mode)
    assert _font_lists(autograder_root) == made     # a worker that scanned would replace its list


@pytest.mark.full
def test_setup_locks_the_answer_key_away(autograder_root):
    key = next((autograder_root / "venv").rglob("labs/lab05/reference.py"))
    for path in (key.parent.parent.parent, autograder_root / "source"):
        assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0, path


@pytest.mark.full
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
    assert [t["name"] for t in result["tests"] if "." not in t["number"]][:len(suite.parts)] == list(suite.parts)
    assert sum(t.get("score", 0) for t in result["tests"]) == expected     # no late penalty here
    for test in result["tests"]:
        assert set(test) >= {"name", "output", "visibility"}
        assert ("score" in test) == (test["number"] in map(str, range(1, len(suite.parts) + 1))), test
    written = [t for t in result["tests"] if "written" in t["tags"]]
    assert len(written) == 12 and {t["visibility"] for t in written} == {"hidden"}


@pytest.mark.full
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


def _all_passed(student="submission"):
    from autograder import results
    from autograder.outcome import CheckResult, PartResult
    suite = labs.load(ASSIGNMENT).suite
    parts = [PartResult(name, [CheckResult(name, c.title, c.points, c.points, "passed") for c in part.checks])
             for name, part in suite.parts.items()]
    return Result(student, ASSIGNMENT, "graded", parts)


def test_gradescope_results_are_numbered_with_late_penalty_and_hidden_details():
    from nbgrader.plugins import LateSubmissionPlugin
    zero = LateSubmissionPlugin(penalty_method="zero")
    suite = labs.load(ASSIGNMENT).suite
    result = _all_passed()
    metadata = {"created_at": "2026-03-02T14:00:00+00:00", "assignment": {"due_date": "2026-03-02T12:00:00+00:00"}}
    result.recorded = gradescope.lateness(result, metadata, zero)
    config = {"details": "after_due_date", "visibility": "after_due_date"}
    data = gradescope.for_gradescope(result, config)
    assert data["score"] == 0 and result.late_penalty == 100 and data["visibility"] == "after_due_date"
    numbers = [t["number"] for t in data["tests"]]
    assert numbers[:3] == ["1", "1.1", "1.2"] and numbers[-1] == str(len(suite.parts) + 1)
    assert {t["visibility"] for t in data["tests"] if "." in t["number"]} == {"after_due_date"}
    assert {t["visibility"] for t in data["tests"] if "." not in t["number"]} == {"visible"}
    # the parts carry the scores, the checks none (they added up to twice the total), the
    # penalty is a test without a score that explains the top-level score
    assert sum(t.get("score", 0) for t in data["tests"]) == 100
    assert not any("score" in t for t in data["tests"] if "." in t["number"])
    penalty = data["tests"][-1]
    assert "score" not in penalty and "2 h 0 min late, penalty 100" in penalty["output"]
    on_time = {**metadata, "created_at": "2026-03-02T11:00:00+00:00"}
    result.recorded = gradescope.lateness(result, on_time, zero)
    assert gradescope.for_gradescope(result, {})["score"] == 100
    extended = {**metadata, "users": [{"name": "Ada", "assignment": {"due_date": "2026-03-04T12:00:00+00:00"}}]}
    result.recorded = gradescope.lateness(result, extended, zero)      # her own due date: an extension
    assert gradescope.for_gradescope(result, {})["score"] == 100 and result.late_penalty == 0
    naive = {"created_at": "2026-03-02T14:00:00", "assignment": {"due_date": "2026-03-02T12:00:00+00:00"}}
    result.recorded = gradescope.lateness(result, naive, zero)         # no offset: UTC
    assert result.seconds_late == 7200 and result.notes == []
    result.recorded = gradescope.lateness(result, {"assignment": {}}, zero)   # nothing to judge by: said
    assert result.late_penalty == 0 and result.notes == [
        "Gradescope's submission_metadata.json gives no submission time or due date: lateness was not judged"]


def test_the_nbgrader_results_json_has_the_gradescope_layout():
    """attnlab grade's results.json and the bundle's share one layout: a written answer not yet
    graded is a test without a score (not a failed 0/N test), a graded one carries its score, a
    human's score is the part's, and the penalty is explained by a test without a score."""
    from autograder import results
    result = _all_passed("ada")
    cells = {f"test_{p.name}": {"score": p.score, "max_score": p.max_score, "auto_score": p.score,
                                "manual_score": None, "extra_credit": 0.0, "needs_manual_grade": False,
                                "comment": ""} for p in result.parts}
    cells["test_softmax"].update(score=4.0, manual_score=3.0, extra_credit=1.0)
    cells["why"] = {"score": 0.0, "max_score": 2.0, "auto_score": None, "manual_score": None, "extra_credit": 0.0,
                    "needs_manual_grade": True, "comment": ""}
    cells["how"] = {"score": 1.0, "max_score": 2.0, "auto_score": None, "manual_score": 1.0, "extra_credit": 0.0,
                    "needs_manual_grade": False, "comment": "Half right."}
    result.recorded = Recorded.from_dict({"score": 90.0, "raw_score": 97.0, "late_penalty": 7.0, "max_score": 104.0,
                                          "seconds_late": 3600.0, "cells": cells, "comments": {"softmax": "Subtract the max."}})
    data = results.to_json(result)
    tests = {t["name"].split(":")[0]: t for t in data["tests"] if "." not in t["number"]}
    assert data["score"] == 90 and sum(t.get("score", 0) for t in data["tests"]) == 97
    assert tests["softmax"]["score"] == 4 and "set this part's score to 3" in tests["softmax"]["output"]
    assert "Subtract the max." in tests["softmax"]["output"]
    assert "score" not in tests["why"] and "status" not in tests["why"] and "not graded yet" in tests["why"]["name"]
    assert (tests["how"]["score"], tests["how"]["status"], tests["how"]["output"]) == (1.0, "failed", "Half right.")
    cells["how"].update(score=2.5, extra_credit=1.5)        # a written answer's extra credit is said, as a part's
    result.recorded = Recorded.from_dict({**result.recorded.to_dict(), "cells": cells})
    how = next(t for t in results.to_json(result)["tests"] if t["name"].startswith("how:"))
    assert how["output"] == "1.5 points of extra credit (the score is 1 + 1.5).\nHalf right.", how["output"]
    assert "score" not in tests["late penalty"] and "penalty 7" in tests["late penalty"]["output"]


@pytest.mark.full
def test_the_result_names_the_gradescope_student_and_can_be_hidden_whole(tmp_path):
    """extra_data.student is who submitted (it was "submission"); the course's
    gradescope_visibility is the whole result's visibility; the bundle lists the written answers
    to add as manually graded questions."""
    course = copy_course(tmp_path / "course")
    with open(course / "nbgrader_config.py", "a") as f:
        f.write('\nc.AttnLab.gradescope_visibility = "after_due_date"\n')
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=course)
    out = run_tool("attnlab", "gradescope", ASSIGNMENT, "-o", "b.zip", cwd=course)
    assert "the 12 written answers (18 points) are graded by hand on Gradescope" in out.stdout
    assert "Q1.2 (interpret) (q1_2_interpret): 2" in out.stdout and "autograder scores 100 points" in out.stdout
    with zipfile.ZipFile(course / "b.zip") as z:
        config = json.loads(z.read("config.json"))
    assert config["visibility"] == "after_due_date"
    metadata = {"users": [{"email": "ada@uni.edu", "name": "Ada", "id": 7}, {"email": "bob@uni.edu", "id": 8}]}
    assert gradescope._student(metadata) == "ada@uni.edu, bob@uni.edu"
    assert gradescope.for_gradescope(_all_passed(gradescope._student(metadata)), config)["extra_data"]["student"] \
        == "ada@uni.edu, bob@uni.edu"
    assert gradescope.for_gradescope(_all_passed(), config)["visibility"] == "after_due_date"


@pytest.mark.full
def test_a_course_with_its_own_late_plugin_builds_the_bundle(tmp_path):
    """The plugin kept beside nbgrader_config.py is bundled and computes Gradescope's penalty
    (the build stopped with exit 2); one the bundle cannot carry is said, and the bundle built."""
    course = copy_course(tmp_path / "course")
    (course / "late.py").write_text("from nbgrader.plugins import LateSubmissionPlugin\n\n\n"
                                    "class PerDay(LateSubmissionPlugin):\n"
                                    "    def late_submission_penalty(self, student_id, score, total_seconds_late):\n"
                                    "        return 0.1 * score * -(-total_seconds_late // 86400)\n")
    config = (course / "nbgrader_config.py").read_text()
    (course / "nbgrader_config.py").write_text(config + '\nc.AssignLatePenalties.plugin_class = "late.PerDay"\n')
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=course)
    out = run_tool("attnlab", "gradescope", ASSIGNMENT, "-o", "b.zip", cwd=course)
    assert "late.PerDay) is bundled from late.py" in out.stdout
    root = tmp_path / "autograder"
    with zipfile.ZipFile(course / "b.zip") as z:
        z.extractall(root / "source")
    bundled = json.loads((root / "source" / "config.json").read_text())
    result = _all_passed()
    two_days = {"created_at": "2026-03-04T11:00:00+00:00", "assignment": {"due_date": "2026-03-02T12:00:00+00:00"}}
    result.recorded = gradescope.lateness(result, two_days, gradescope._late_plugin(root, bundled))
    assert (result.late_penalty, result.score) == (20, 80)
    (course / "nbgrader_config.py").write_text(config + '\nc.AssignLatePenalties.plugin_class = '
                                               '"nbgrader.plugins.ExtractorPlugin"\n')       # not a file here
    out = run_tool("attnlab", "gradescope", ASSIGNMENT, "-o", "c.zip", cwd=course)
    assert out.returncode == 0 and "the bundle cannot carry it" in out.stdout
    with zipfile.ZipFile(course / "c.zip") as z:
        assert json.loads(z.read("config.json"))["late_penalty_method"] == "none"


@pytest.mark.full
def test_hidden_inputs_are_salted_per_gradescope_user_and_every_uploaded_file(autograder_root):
    """The bundle carries the course secret, locked away with the answer key; two users with the
    same notebook get other hidden inputs, the same user the same ones; a side file uploaded
    beside the same notebook changes them too (the same inputs, read by other code, could be
    harvested across submissions)."""
    assert stat.S_IMODE((autograder_root / "source" / "secret").stat().st_mode) & 0o077 == 0
    submission = autograder_root / "submission"
    shutil.rmtree(submission, ignore_errors=True)
    submission.mkdir()
    (submission / "lab.ipynb").write_text("{}")
    salts = [gradescope._salt(autograder_root, ASSIGNMENT, {"users": [{"id": user}]}) for user in ("101", "202", "101")]
    assert salts[0] != salts[1] and salts[0] == salts[2]
    (submission / "helper.py").write_text("x = 1\n")
    assert gradescope._salt(autograder_root, ASSIGNMENT, {"users": [{"id": "101"}]}) != salts[0]


@pytest.mark.full
def test_in_user_mode_student_code_cannot_read_the_upload(autograder_root):
    """In sandbox mode `user` the student's code runs as an unprivileged user that sees the file
    system: the other uploaded files and Gradescope's metadata are readable by root only."""
    if not DEBIAN_PYTHON.exists():
        pytest.skip("user mode needs an interpreter that user nobody can run")
    probe = (f"import os\nLEAKED = [p for p in ({str(autograder_root / 'submission' / 'notes.txt')!r}, "
             f"{str(autograder_root / 'submission_metadata.json')!r}) if os.access(p, os.R_OK)]\n")
    softmax = probe + SOLVED["softmax"] + "\n_softmax = softmax\ndef softmax(*a, **k):\n" \
        "    assert not LEAKED, LEAKED\n    return _softmax(*a, **k)\n"
    (autograder_root / "submission_metadata.json").write_text(json.dumps({"users": [{"id": 5}]}))
    try:
        submission = autograder_root / "submission"
        shutil.rmtree(submission, ignore_errors=True)
        submission.mkdir()
        (submission / "notes.txt").write_text("side file")
        (submission / "lab.ipynb").write_text(__import__("nbformat").writes(examples.fill(RELEASE, {**SOLVED, "softmax": softmax})))
        env = {**os.environ, "AUTOGRADER_ROOT": str(autograder_root), "ATTNLAB_SANDBOX": "user"}
        subprocess.run([str(autograder_root / "run_autograder")], env=env, check=True, timeout=300, capture_output=True)
    finally:
        (autograder_root / "submission_metadata.json").unlink()
    result = json.loads((autograder_root / "results" / "results.json").read_text())
    assert result["extra_data"]["sandbox"] == "user" and result["score"] == 100, result["tests"][0]


@pytest.mark.full
def test_a_stub_uploaded_beside_renamed_work_gets_a_note(autograder_root):
    submission = autograder_root / "submission"
    shutil.rmtree(submission, ignore_errors=True)
    submission.mkdir()
    nbformat = __import__("nbformat")
    (submission / f"{ASSIGNMENT}.ipynb").write_text(nbformat.writes(RELEASE))
    (submission / "Lab05 mine.ipynb").write_text(nbformat.writes(examples.fill(RELEASE, SOLVED)))
    env = {**os.environ, "AUTOGRADER_ROOT": str(autograder_root), "ATTNLAB_SANDBOX": "bwrap"}
    subprocess.run([str(autograder_root / "run_autograder")], env=env, check=True, timeout=300, capture_output=True)
    result = json.loads((autograder_root / "results" / "results.json").read_text())
    assert result["score"] == 0
    assert (f"Note: graded {ASSIGNMENT}.ipynb, the starter notebook unchanged; not graded: Lab05 mine.ipynb "
            f"(submit your work as {ASSIGNMENT}.ipynb)") in result["output"]


@pytest.mark.full
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


@pytest.mark.full
def test_the_output_of_thousands_of_broken_cells_is_bounded(autograder_root):
    """Each cell that could not run is named, up to 20, then counted: 20,000 broken cells made a
    7 MB results.json."""
    nb = examples.fill(RELEASE, SOLVED)
    nb.cells += [__import__("nbformat").v4.new_code_cell(f"def broken_{i}(:") for i in range(900)]   # graded: < 1000 added
    submission = autograder_root / "submission"
    shutil.rmtree(submission, ignore_errors=True)
    submission.mkdir()
    (submission / "lab05.ipynb").write_text(__import__("nbformat").writes(nb))
    env = {**os.environ, "AUTOGRADER_ROOT": str(autograder_root), "ATTNLAB_SANDBOX": "bwrap"}
    subprocess.run([str(autograder_root / "run_autograder")], env=env, check=True, timeout=300, capture_output=True)
    text = (autograder_root / "results" / "results.json").read_text()
    result = json.loads(text)
    assert result["score"] == 100.0 and "... and 880 more like these" in result["output"]
    assert len(text) < 100_000, len(text)


@pytest.mark.full
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


@pytest.mark.full
def test_a_bad_penalty_setting_is_one_line(tmp_path):
    course = copy_course(tmp_path / "course")
    with open(course / "nbgrader_config.py", "a") as f:
        f.write('\nc.LateSubmissionPlugin.penalty_method = "half"\n')
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=course)
    out = run_tool("attnlab", "gradescope", ASSIGNMENT, "-o", "b.zip", cwd=course, check=False)
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert "nbgrader_config.py:" in out.stderr and "penalty_method" in out.stderr


def test_the_bundles_the_readme_builds_are_kept_out_of_git():
    """The bundle carries the course secret: every zip the README tells an instructor to build in
    the course directory, and the command's default name, is ignored by git."""
    import re
    readme = (ROOT / "README.md").read_text()
    names = re.findall(r"attnlab gradescope \S+ -o (\S+)", readme) + [f"{ASSIGNMENT}-gradescope.zip"]
    for name in names:
        ignored = subprocess.run(["git", "check-ignore", "-q", "--no-index", name], cwd=ROOT)
        assert ignored.returncode == 0, f"{name} (with the course secret) is not in .gitignore"
