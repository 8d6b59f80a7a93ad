"""The nbgrader cycle around `attnlab grade`: the gradebook is the one record of a grade.

Resubmissions are regraded by content, a grade that cannot be recorded is an error, manual
scores, comments, extra credit and late penalties reach grades.csv, results.json and the
feedback exactly as `nbgrader export` shows them, and hand-graded cells are left alone.
"""
import csv
import html
import json
import os
import re
import shutil
from datetime import datetime, timedelta

import nbformat
import pytest

from autograder import examples, notebooks
from autograder.course import open_course
from conftest import ASSIGNMENT, ROOT, copy_course, run_tool

pytestmark = pytest.mark.full     # the full tier: whole nbgrader cycles

NOTEBOOK = f"{ASSIGNMENT}.ipynb"


def release():
    return notebooks.read(ROOT / "assignments" / ASSIGNMENT / NOTEBOOK)


def solved() -> str:
    key = notebooks.read(ROOT / "solutions" / ASSIGNMENT / NOTEBOOK)
    answers = {gid: notebooks.without_markers(code) for gid, code in notebooks.answer_cells(key).items()}
    return nbformat.writes(examples.fill(release(), answers))


def stub() -> str:
    return nbformat.writes(release())


def submit(course, student, text, timestamp="2026-01-10 12:00:00.000000 UTC"):
    folder = course / "submitted" / student / ASSIGNMENT
    folder.mkdir(parents=True, exist_ok=True)
    (folder / NOTEBOOK).write_text(text)
    (folder / "timestamp.txt").write_text(timestamp)
    return folder / NOTEBOOK


def grades(course) -> dict:
    return {r["student_id"]: r for r in csv.DictReader(open(course / "grades" / f"{ASSIGNMENT}.csv"))}


def exported(course) -> dict:
    run_tool("nbgrader", "export", "--to", str(course / "export.csv"), cwd=course)
    return {r["student_id"]: r for r in csv.DictReader(open(course / "export.csv"))}


def result(course, student) -> dict:
    return json.loads((course / "autograded" / student / ASSIGNMENT / "results.json").read_text())


def grade(course, *args, check=True):
    return run_tool("attnlab", "grade", ASSIGNMENT, "--quiet", "--jobs", "2", *args, cwd=course, check=check)


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    path = copy_course(tmp_path_factory.mktemp("cycle"))
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=path)
    submit(path, "ada", solved())
    submit(path, "bob", stub())
    hostile = nbformat.reads(solved(), as_version=4)
    hostile.cells.insert(1, nbformat.v4.new_markdown_cell(SCRIPT))
    submit(path, "eve", nbformat.writes(hostile))
    grade(path)
    return path


SCRIPT = 'My notes <script>alert("pwned")</script> <img src=x onerror="alert(2)">'


def test_a_resubmission_is_regraded_by_content_not_by_time(course):
    path = course / "submitted" / "bob" / ASSIGNMENT / NOTEBOOK
    assert grades(course)["bob"]["score"] == "0"
    before = path.stat()
    path.write_text(solved())                                   # collect keeps the old mtime
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    out = grade(course)
    assert "graded 1 submission(s)" in out.stderr
    assert grades(course)["bob"]["score"] == "100" and exported(course)["bob"]["score"] == "100.0"
    assert "graded 0 submission(s)" in grade(course).stderr    # unchanged: not graded again


def test_manual_grades_reach_every_output_and_survive_a_regrade(course):
    with open_course(course).gradebook() as gb:
        nb = gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, "ada")
        cells = {g.name: g for g in nb.grades}
        cells["test_softmax"].manual_score = 3
        cells["test_layer_norm"].extra_credit = 1.5
        next(c for c in nb.comments if c.name == "softmax").manual_comment = "Subtract the <b>max</b>."
        gb.db.commit()
    expected = 100 - 8 + 3 + 1.5
    for args in ((), ("--force", "--student", "ada")):
        grade(course, *args)
        row = grades(course)["ada"]
        assert (float(row["score"]), row["softmax"], row["layer_norm"]) == (expected, "3", "10")
        assert row["extra_credit"] == "1.5"                     # its own column: 11.5 for a 10-point part
        assert float(exported(course)["ada"]["score"]) == expected
        data = result(course, "ada")
        assert data["score"] == expected and sum(t.get("score", 0) for t in data["tests"]) == pytest.approx(expected)
    run_tool("attnlab", "feedback", ASSIGNMENT, "--student", "ada", cwd=course)
    page = (course / "feedback" / "ada" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    assert f"{expected:g} / {row['max_score']}" in page and "Subtract the &lt;b&gt;max&lt;/b&gt;." in page
    assert "set this part's score to 3 (the checks below gave 8)" in html.unescape(page)
    assert "The instructor added 1.5 points of extra credit (the checks below gave 10)" in page   # not "set"
    assert "extra credit" in next(t for t in data["tests"] if t["name"] == "layer_norm")["output"]


def test_late_penalty_from_nbgrader_configuration(course, tmp_path):
    late = copy_course(tmp_path / "late")
    with open(late / "nbgrader_config.py", "a") as f:
        f.write('\nc.LateSubmissionPlugin.penalty_method = "zero"\n')
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=late)
    due = datetime(2026, 1, 10, 12, 0)
    with open_course(late).gradebook() as gb:
        gb.update_or_create_assignment(ASSIGNMENT, duedate=due)
    submit(late, "ada", solved(), (due - timedelta(minutes=5)).strftime("%Y-%m-%d %H:%M:%S UTC"))
    submit(late, "cy", solved(), (due + timedelta(hours=2)).strftime("%Y-%m-%d %H:%M:%S UTC"))
    grade(late)
    rows, export = grades(late), exported(late)
    assert (rows["ada"]["score"], rows["ada"]["late"]) == ("100", "")
    assert (rows["cy"]["score"], rows["cy"]["late_penalty"]) == ("0", "100")
    assert rows["cy"]["late"].startswith("2 h 0 min late")
    assert export["cy"]["score"] == "0.0" and export["cy"]["late_submission_penalty"] == "100.0"
    data = result(late, "cy")
    assert data["score"] == 0 and "Late: 2 h 0 min late, penalty 100" in data["output"]
    run_tool("attnlab", "feedback", ASSIGNMENT, cwd=late)
    assert "2 h 0 min late, penalty 100" in (late / "feedback" / "cy" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    with open_course(late).gradebook() as gb:                           # an extension after grading
        gb.grant_extension(ASSIGNMENT, "cy", hours=3)
    run_tool("attnlab", "feedback", ASSIGNMENT, "--student", "cy", cwd=late)       # feedback alone reprices too
    page = (late / "feedback" / "cy" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    assert "penalty" not in page and f"100 / {grades(late)['cy']['max_score']}" in page
    assert (grades(late)["cy"]["score"], exported(late)["cy"]["score"]) == ("100", "100.0")
    assert "graded 0 submission(s)" in grade(late).stderr
    assert (grades(late)["cy"]["score"], grades(late)["cy"]["late"]) == ("100", "")
    assert exported(late)["cy"]["score"] == "100.0" and result(late, "cy")["score"] == 100
    with open_course(late).gradebook() as gb:
        gb.grant_extension(ASSIGNMENT, "cy", hours=0)
    grade(late)
    assert (grades(late)["cy"]["score"], exported(late)["cy"]["score"]) == ("0", "0.0")
    resubmitted = nbformat.reads(solved(), as_version=4)                  # ada resubmits, 30 minutes late
    resubmitted.cells.append(nbformat.v4.new_markdown_cell("Resubmitted."))
    submit(late, "ada", nbformat.writes(resubmitted), (due + timedelta(minutes=30)).strftime("%Y-%m-%d %H:%M:%S UTC"))
    assert "graded 1 submission(s)" in grade(late).stderr
    assert (grades(late)["ada"]["score"], exported(late)["ada"]["late_submission_penalty"]) == ("0", "100.0")
    with open_course(late).gradebook() as gb:
        gb.grant_extension(ASSIGNMENT, "ada", hours=1)
    grade(late, "--force", "--student", "ada")
    assert (grades(late)["ada"]["score"], grades(late)["ada"]["late"]) == ("100", "")
    assert exported(late)["ada"]["score"] == "100.0" and result(late, "ada")["score"] == 100
    (submit(late, "cy", nbformat.writes(resubmitted)).parent / "timestamp.txt").unlink()   # placed by hand:
    assert "graded 1 submission(s)" in grade(late).stderr              # lateness is not judged, nor
    assert (grades(late)["cy"]["score"], grades(late)["cy"]["late"]) == ("100", "")    # taken from the
    assert exported(late)["cy"]["late_submission_penalty"] == "0.0"                     # earlier work


def test_a_grade_that_cannot_be_recorded_is_an_error(tmp_path):
    path = copy_course(tmp_path / "unregistered")
    run_tool("nbgrader", "db", "assignment", "add", ASSIGNMENT, cwd=path)   # no notebooks
    submit(path, "ada", solved())
    for _ in range(2):
        out = grade(path, check=False)
        assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
        assert "without its notebook" in out.stderr and "generate_assignment" in out.stderr
    assert not (path / "autograded").exists() and not (path / "grades").exists()


def test_before_grading_feedback_and_report_say_so(tmp_path):
    path = copy_course(tmp_path / "fresh")
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=path)
    for command in ("feedback", "report"):
        out = run_tool("attnlab", command, ASSIGNMENT, cwd=path, check=False)
        assert out.returncode == 2 and "nothing of lab05_transformers is graded yet" in out.stderr


def test_autograded_folder_is_laid_out_as_nbgrader_does(course):
    folder = course / "autograded" / "ada" / ASSIGNMENT
    assert (folder / "timestamp.txt").read_text() == "2026-01-10 12:00:00.000000 UTC"
    assert len((folder / "submission_secret.txt").read_text()) == 128


def test_nbgrader_autograde_is_refused_and_touches_nothing(course):
    folder = course / "autograded" / "ada" / ASSIGNMENT
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    scores = exported(course)
    out = run_tool("nbgrader", "autograde", ASSIGNMENT, "--force", cwd=course, check=False)
    assert out.returncode == 1 and f"run `attnlab grade {ASSIGNMENT}`" in out.stderr
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    assert exported(course) == scores


def test_nbgrader_feedback_carries_no_student_html(course):
    run_tool("nbgrader", "generate_feedback", ASSIGNMENT, "--force", cwd=course)
    page = (course / "feedback" / "eve" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    assert "My notes" in page
    assert "<script>alert" not in page and not re.search(r"<img[^>]*onerror", page)


def test_hand_graded_cells_count_and_are_never_overwritten(tmp_path):
    path = copy_course(tmp_path / "written")
    source = path / "source" / ASSIGNMENT / NOTEBOOK
    nb = nbformat.read(source, as_version=4)
    question = nbformat.v4.new_markdown_cell("Why scale by √d_k?\n\nYOUR ANSWER HERE")
    question.metadata["nbgrader"] = {"grade": True, "solution": True, "locked": False, "points": 4,
                                     "grade_id": "why_scale", "schema_version": 3}
    nb.cells.append(question)
    nbformat.write(nb, source)
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=path)
    answered = nbformat.reads(solved(), as_version=4)
    answered.cells.append(nbformat.v4.new_markdown_cell("To keep the softmax out of saturation.",
                                                        metadata={"nbgrader": dict(question.metadata.nbgrader)}))
    submit(path, "ada", nbformat.writes(answered))
    grade(path)
    release_points = sum(notebooks.nbgrader(c).get("points", 0) for c in
                         notebooks.read(path / "assignments" / ASSIGNMENT / NOTEBOOK).cells
                         if notebooks.nbgrader(c).get("grade"))
    row = grades(path)["ada"]
    assert (row["score"], row["max_score"], row["why_scale"]) == ("100", f"{release_points:g}", "")
    assert "to grade by hand" in row["needs_attention"]
    with open_course(path).gradebook() as gb:
        nb = gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, "ada")
        written = next(g for g in nb.grades if g.name == "why_scale")
        assert written.auto_score is None and written.needs_manual_grade
        written.manual_score, written.needs_manual_grade = 3, False
        gb.db.commit()
    grade(path, "--force")
    row = grades(path)["ada"]
    assert (row["score"], row["why_scale"]) == ("103", "3") and "why_scale" not in row["needs_attention"]
    assert float(exported(path)["ada"]["score"]) == 103
    answered.cells[-1].source = "Another answer, and other code."                # ada resubmits
    submit(path, "ada", nbformat.writes(answered))
    run_tool("nbgrader", "db", "student", "add", "erin", cwd=path)                # erin never submits
    assert "graded 1 submission(s)" in grade(path).stderr
    rows = grades(path)
    assert (rows["ada"]["score"], rows["ada"]["why_scale"]) == ("103", "3")      # kept, to be looked at again
    assert "to review by hand (scored before a resubmission): why_scale" in rows["ada"]["needs_attention"]
    with open_course(path).gradebook() as gb:
        nb = gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, "ada")
        assert next(g for g in nb.grades if g.name == "why_scale").needs_manual_grade
    assert (rows["erin"]["status"], rows["erin"]["score"], rows["erin"]["max_score"]) == (
        "missing", "0", f"{release_points:g}")
    submit(path, "ada", "{ not a notebook")                                       # a damaged resubmission
    grade(path)
    row = grades(path)["ada"]
    assert (row["status"], row["score"], row["why_scale"]) == ("unreadable", "3", "3")
    assert "to review by hand (scored before a resubmission): why_scale" in row["needs_attention"]
    with open_course(path).gradebook() as gb:                                    # enrolled, then refused
        gb.add_student("o'brien")
    submit(path, "o'brien", solved())
    grade(path)
    row = grades(path)["o'brien"]
    assert row["status"] == "error" and "submitted, but the folder is not graded" in row["needs_attention"]
    submit(path, "bea", solved())
    added = "added to the gradebook (a submission, and no entry there, as nbgrader's autograde adds them): "
    assert added + "bea\n" in grade(path).stderr                                   # said when it happens
    with open_course(path).gradebook() as gb:                                    # a student dropped
        gb.remove_student("ada")
    run_tool("attnlab", "report", ASSIGNMENT, cwd=path)
    row = grades(path)["ada"]
    assert row["status"] == "error" and "adds back a student with a submission: to drop them" in row["needs_attention"]
    assert added + "ada\n" in grade(path).stderr


def test_course_settings_and_a_busy_gradebook_are_one_line_each(tmp_path):
    """A penalty plugin kept beside nbgrader_config.py is found, as nbgrader's apps find it (the
    Gradescope bundle carries it); a broken setting and a gradebook that
    another program holds are one line each, not a traceback."""
    import sqlite3
    path = copy_course(tmp_path / "plugin")
    (path / "late.py").write_text("from nbgrader.plugins import LateSubmissionPlugin\n\n\n"
                                  "class FivePoints(LateSubmissionPlugin):\n"
                                  "    def late_submission_penalty(self, student_id, score, total_seconds_late):\n"
                                  "        return 5.0\n")
    config = (path / "nbgrader_config.py").read_text()
    (path / "nbgrader_config.py").write_text(config + '\nc.AssignLatePenalties.plugin_class = "late.FivePoints"\n')
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=path)
    due = datetime(2026, 1, 10, 12, 0)
    with open_course(path).gradebook() as gb:
        gb.update_or_create_assignment(ASSIGNMENT, duedate=due)
    submit(path, "cy", solved(), (due + timedelta(hours=1)).strftime("%Y-%m-%d %H:%M:%S UTC"))
    grade(path)
    assert (grades(path)["cy"]["score"], exported(path)["cy"]["late_submission_penalty"]) == ("95", "5.0")
    out = run_tool("attnlab", "gradescope", ASSIGNMENT, "-o", str(tmp_path / "gs.zip"), cwd=path, check=False)
    assert out.returncode == 0 and "(late.FivePoints) is bundled from late.py" in out.stdout, out.stderr
    for setting, words in (('c.AssignLatePenalties.plugin_class = "late.Missing"', "the late penalty cannot be set up"),
                           ('c.LateSubmissionPlugin.penalty_method = "bogus"', "the late penalty cannot be set up"),
                           ("c.CourseDirectory.root = (", "nbgrader_config.py cannot be read")):
        (path / "nbgrader_config.py").write_text(config + "\n" + setting + "\n")
        out = grade(path, "--force", check=False)
        assert out.returncode == 2 and out.stderr.count("\n") == 1 and words in out.stderr, out.stderr
    (path / "nbgrader_config.py").write_text(config)
    holder = sqlite3.connect(path / "gradebook.db")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        for command in (("grade", ASSIGNMENT, "--force"), ("feedback", ASSIGNMENT), ("report", ASSIGNMENT)):
            out = run_tool("attnlab", *command, cwd=path, check=False)
            assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
            assert "the gradebook cannot be used" in out.stderr
    finally:
        holder.rollback()
        holder.close()
    assert grades(path)["cy"]["score"] == "95"
    folder = path / "submitted" / "hal" / ASSIGNMENT                 # placed by hand: no timestamp.txt
    folder.mkdir(parents=True)
    (folder / NOTEBOOK).write_text(solved())
    grade(path)
    run_tool("attnlab", "feedback", ASSIGNMENT, "--student", "hal", cwd=path)
    for step in ("autograded", "feedback"):                          # nbgrader's release_feedback needs it
        stamp = (path / step / "hal" / ASSIGNMENT / "timestamp.txt").read_text()
        assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6} UTC", stamp), stamp
    assert (grades(path)["hal"]["score"], grades(path)["hal"]["late"]) == ("100", "")


def test_a_review_mark_and_a_flag_stay_until_a_grader_clears_them(tmp_path):
    """A score given before a resubmission stays marked for review through later regrades, also
    when results.json is gone (then a new submission time tells); a grader's flag stays. The same
    work collected again with a new time (a re-collected LMS download after the due date moved)
    is regraded for its time but is no resubmission: the score given stands, unmarked."""
    path = copy_course(tmp_path / "review")
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=path)
    for student in ("ada", "kim", "bob", "lee"):
        submit(path, student, solved())
    grade(path)
    with open_course(path).gradebook() as gb:
        for student in ("ada", "kim", "lee"):
            nb = gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, student)
            cell = next(g for g in nb.grades if g.name == "test_softmax")
            cell.manual_score, cell.needs_manual_grade = 7, False       # as formgrader saves it
        gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, "bob").flagged = True
        gb.db.commit()
    again = nbformat.reads(solved(), as_version=4)
    again.cells.append(nbformat.v4.new_markdown_cell("Resubmitted."))
    for student in ("ada", "kim"):
        submit(path, student, nbformat.writes(again), "2026-01-11 09:00:00.000000 UTC")
    shutil.rmtree(path / "autograded" / "kim")
    submit(path, "lee", solved(), "2026-01-11 09:00:00.000000 UTC")
    for args in ((), ("--force",)):
        assert f"graded {4 if args else 3} submission(s)" in grade(path, *args).stderr
        rows = grades(path)
        with open_course(path).gradebook() as gb:
            lee = gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, "lee")
            assert not next(g for g in lee.grades if g.name == "test_softmax").needs_manual_grade, args
            assert "to review" not in rows["lee"]["needs_attention"] and rows["lee"]["score"] == "99", rows["lee"]
            assert gb.find_submission(ASSIGNMENT, "lee").timestamp.day == 11
            for student in ("ada", "kim"):
                nb = gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, student)
                assert next(g for g in nb.grades if g.name == "test_softmax").needs_manual_grade, (args, student)
                assert "to review by hand (scored before a resubmission): test_softmax" in rows[student]["needs_attention"]
                assert rows[student]["score"] == "99"
            assert gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, "bob").flagged, args


def test_a_grader_failure_records_nothing_and_the_grade_stands(tmp_path, monkeypatch):
    """When the grader fails on a submission (not the student's doing), nothing is recorded or
    written: a grade recorded before stands everywhere, and a submission never graded is graded
    by the next run."""
    from concurrent.futures import Future

    from autograder import engine, grading, labs, outcome
    path = copy_course(tmp_path / "failure")
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=path)
    submit(path, "kim", solved())
    grade(path)
    before = (path / "autograded" / "kim" / ASSIGNMENT / "results.json").read_text()
    submit(path, "lee", solved())
    real = grading.submit

    def failing(pool, tasks, early):
        futures = real(pool, tasks, early)
        for student in futures:
            futures[student] = Future()
            futures[student].set_result((outcome.ungraded(student, ASSIGNMENT, labs.load(ASSIGNMENT).suite, "error",
                                                          "internal grading error: RuntimeError: boom"), None))
        return futures
    monkeypatch.setattr(grading, "submit", failing)
    batch = engine.grade(open_course(path), ASSIGNMENT, jobs=1, force=True, progress=False)
    assert (batch.graded, batch.failed) == ([], ["kim", "lee"])
    rows = grades(path)
    assert (rows["kim"]["status"], rows["kim"]["score"]) == ("error", "100")
    assert rows["kim"]["needs_attention"] == ("error: internal grading error: RuntimeError: boom; the gradebook's "
                                              f"grade stands: run `attnlab grade {ASSIGNMENT}`")
    assert (rows["lee"]["status"], rows["lee"]["score"]) == ("error", "0")
    assert "nothing was recorded" in rows["lee"]["needs_attention"]
    assert exported(path)["kim"]["score"] == "100.0" and "lee" not in exported(path)
    assert (path / "autograded" / "kim" / ASSIGNMENT / "results.json").read_text() == before
    monkeypatch.undo()
    assert "graded 1 submission(s)" in grade(path).stderr                      # lee, not kim again
    assert grades(path)["lee"]["score"] == "100" and grades(path)["kim"]["status"] == "graded"


def test_feedback_and_report_name_what_they_cannot_do_in_one_line(tmp_path):
    path = copy_course(tmp_path / "oneline")
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=path)
    for command in ("feedback", "report"):                                      # a lab never generated here
        out = run_tool("attnlab", command, "lab06_training", cwd=path, check=False)
        assert out.returncode == 2 and out.stderr.count("\n") == 1 and "generate_assignment" in out.stderr, out.stderr
    submit(path, "kim", solved())
    submit(path, "ada", solved())
    out = grade(path, "--student", "kim")
    assert "already graded" not in out.stderr                                   # ada was never graded
    shutil.rmtree(path / "autograded" / "kim")
    out = run_tool("attnlab", "feedback", ASSIGNMENT, cwd=path)
    assert out.stderr.startswith("NO FEEDBACK for kim: autograded/ has no readable results.json; the gradebook's grade stands")
    assert (grades(path)["kim"]["status"], grades(path)["kim"]["score"]) == ("error", "100")
    out = run_tool("attnlab", "report", ASSIGNMENT, "-o", "/proc/nope/report", cwd=path, check=False)
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "cannot write the report" in out.stderr, out.stderr
    (path / "gradebook.db").write_bytes(b"not a database" * 100)
    for command in (("grade", ASSIGNMENT), ("feedback", ASSIGNMENT), ("report", ASSIGNMENT)):
        out = run_tool("attnlab", *command, cwd=path, check=False)
        assert out.returncode == 2 and out.stderr.count("\n") == 1 and "the gradebook cannot be used" in out.stderr, out.stderr


def test_every_command_shows_the_newest_submission_state(tmp_path):
    """A newer submission not graded yet, a damaged results.json and a student who never
    submitted are named, by every command; the gradebook's grade stands meanwhile."""
    path = copy_course(tmp_path / "newest")
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=path)
    for student in ("ada", "bob", "cy"):
        submit(path, student, solved())
    run_tool("nbgrader", "db", "student", "add", "dan", cwd=path)
    grade(path)
    again = nbformat.reads(stub(), as_version=4)
    submit(path, "ada", nbformat.writes(again), "2026-01-11 09:00:00.000000 UTC")
    out = grade(path, "--student", "cy", "--force")
    assert "already graded" not in out.stderr
    waiting = f"a newer submission is not graded yet; the gradebook's grade stands: run `attnlab grade {ASSIGNMENT}`"
    assert (grades(path)["ada"]["status"], grades(path)["ada"]["score"]) == ("error", "100")
    assert grades(path)["ada"]["needs_attention"] == f"error: {waiting}"
    out = run_tool("attnlab", "feedback", ASSIGNMENT, "--student", "ada", "--student", "bob", "--student", "dan", cwd=path)
    assert out.stderr.splitlines() == [f"NO FEEDBACK for ada: {waiting}", "NO FEEDBACK for dan: no submission"]
    out = run_tool("attnlab", "feedback", ASSIGNMENT, "--student", "dan", cwd=path, check=False)
    assert out.returncode == 2 and out.stderr.splitlines() == [           # not "run attnlab grade first"
        f"attnlab: no submission of {ASSIGNMENT} from dan: there is nothing to give feedback on"], out.stderr
    (path / "autograded" / "bob" / ASSIGNMENT / "results.json").write_text('{"score": 10')
    out = run_tool("attnlab", "report", ASSIGNMENT, cwd=path)
    assert (grades(path)["bob"]["status"], grades(path)["bob"]["score"]) == ("error", "100")
    assert "autograded/ has no readable results.json" in grades(path)["bob"]["needs_attention"]
    with open_course(path).gradebook() as gb:                 # a TA scores ada's standing grade meanwhile
        nb = gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, "ada")
        next(g for g in nb.grades if g.name == "test_softmax").manual_score = 3
        gb.db.commit()
    run_tool("attnlab", "report", ASSIGNMENT, cwd=path)
    assert (grades(path)["ada"]["status"], grades(path)["ada"]["score"]) == ("error", "95")
    assert result(path, "ada")["score"] == 95                  # results.json shows the grade that stands
    out = grade(path).stderr
    assert "graded 2 submission(s)" in out
    assert "the feedback pages of 1 student(s) predate this grading (bob): run `attnlab feedback" in out
    assert {s: (r["status"], r["score"]) for s, r in grades(path).items()} == {
        "ada": ("graded", "3"), "bob": ("graded", "100"), "cy": ("graded", "100"), "dan": ("missing", "0")}
    assert "to review by hand (scored before a resubmission): test_softmax" in grades(path)["ada"]["needs_attention"]


def test_a_regrade_of_the_same_work_keeps_what_a_grader_decided(tmp_path):
    """A part that timed out, scored by a TA who also cleared the flag: `--force` on the same
    submission changes neither."""
    path = copy_course(tmp_path / "decided")
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=path)
    key = notebooks.read(ROOT / "solutions" / ASSIGNMENT / NOTEBOOK)
    answers = {gid: notebooks.without_markers(code) for gid, code in notebooks.answer_cells(key).items()}
    answers["layer_norm"] = "import time\n" + answers["layer_norm"].replace(
        "def layer_norm(", "def _layer_norm(") + "\ndef layer_norm(*a, **k):\n    time.sleep(5)\n    return _layer_norm(*a, **k)\n"
    submit(path, "eli", nbformat.writes(examples.fill(release(), answers)))
    grade(path)
    with open_course(path).gradebook() as gb:
        nb = gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, "eli")
        cell = next(g for g in nb.grades if g.name == "test_layer_norm")
        assert cell.needs_manual_grade and nb.flagged and cell.auto_score < 10
        cell.manual_score, cell.needs_manual_grade, nb.flagged = 10, False, False
        gb.db.commit()
    grade(path, "--force")
    with open_course(path).gradebook() as gb:
        nb = gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, "eli")
        cell = next(g for g in nb.grades if g.name == "test_layer_norm")
        assert (cell.manual_score, cell.needs_manual_grade, nb.flagged) == (10, False, False)
    assert "to review" not in grades(path)["eli"]["needs_attention"]


def test_students_the_gradebook_lacks_are_refused_when_create_student_is_off(tmp_path):
    """With nbgrader's `Autograde.create_student = False`, nbgrader's autograde refuses a student
    who is not in the gradebook; so does attnlab, instead of adding them back (a student an
    instructor removed reappeared in `nbgrader export`), and the class report lists the folder."""
    path = copy_course(tmp_path / "closed")
    with open(path / "nbgrader_config.py", "a") as f:
        f.write("\nc.Autograde.create_student = False\n")
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=path)
    run_tool("nbgrader", "db", "student", "add", "ada", cwd=path)
    submit(path, "ada", solved())
    submit(path, "zed", solved())
    out = grade(path)
    assert "graded 1 submission(s)" in out.stderr
    assert f"NOT GRADED {path / 'submitted' / 'zed' / ASSIGNMENT}: not in the gradebook, and " in out.stderr
    assert set(grades(path)) == {"ada"} and set(exported(path)) == {"ada"}
    with open_course(path).gradebook() as gb:
        assert [s.id for s in gb.students] == ["ada"]
    refused = grade(path, "--student", "zed", check=False)
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert "zed: not in the gradebook, and nbgrader_config.py sets Autograde.create_student" in refused.stderr
    run_tool("attnlab", "report", ASSIGNMENT, cwd=path)      # the instructor sees it in the report too
    page = (path / "report" / ASSIGNMENT / "index.html").read_text()
    row = page[page.index('data-student="zed"'):]
    assert 'data-status="not graded"' in row[:60] and "not in the gradebook" in row[:row.index("</tr>")]


def test_a_release_with_other_points_than_the_hidden_tests_is_refused(tmp_path):
    """A test cell's points changed in source/ and the release regenerated: the gradebook's
    maximum would say 12 and the feedback 8, and every student would look like a tamperer."""
    path = copy_course(tmp_path / "points")
    source = path / "source" / ASSIGNMENT / NOTEBOOK
    nb = nbformat.read(source, as_version=4)
    next(c for c in nb.cells if notebooks.grade_id(c) == "test_softmax").metadata.nbgrader["points"] = 12
    nbformat.write(nb, source)
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=path)
    submit(path, "ada", solved())
    for command in ("grade", "feedback", "report"):
        out = run_tool("attnlab", command, ASSIGNMENT, cwd=path, check=False)
        assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
        assert "test_softmax is worth 12 there and 8 in the hidden tests" in out.stderr


def test_a_student_another_writer_added_meanwhile_is_recorded(tmp_path):
    """Two graders at once (or `nbgrader db student add` during grading): a student added by the
    other writer after this one opened the gradebook is recorded, not refused with nbgrader's
    InvalidEntry (UNIQUE constraint failed: student.id) and a traceback."""
    from autograder import labs
    from autograder.gradebook import GradebookWriter
    from autograder.results import from_json
    path = copy_course(tmp_path / "writers")
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=path)
    submit(path, "ada", solved())
    grade(path)
    result = from_json(json.loads((path / "autograded" / "ada" / ASSIGNMENT / "results.json").read_text()))
    result.student = "zed"
    course = open_course(path)
    with GradebookWriter(course, ASSIGNMENT, ASSIGNMENT, labs.load(ASSIGNMENT).suite.parts) as writer:
        run_tool("nbgrader", "db", "student", "add", "zed", cwd=path)       # the other writer
        recorded = writer.record_batch([result])
    assert recorded["zed"].score == 100


def test_a_renamed_notebooks_feedback_reaches_the_student_through_the_exchange(tmp_path):
    """nbgrader's fetch_feedback finds a page by the name of the notebook submitted: the page of
    lab05_transformers-Copy1.ipynb was written as lab05_transformers.html and never fetched."""
    exchange, cache = tmp_path / "exchange", tmp_path / "cache"
    settings = f"\nc.Exchange.root = {str(exchange)!r}\nc.Exchange.cache = {str(cache)!r}\n"
    course = copy_course(tmp_path / "course")
    with open(course / "nbgrader_config.py", "a") as f:
        f.write(settings)
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=course)
    run_tool("nbgrader", "release_assignment", ASSIGNMENT, cwd=course)
    home = tmp_path / "ada"
    home.mkdir()
    (home / "nbgrader_config.py").write_text('c = get_config()\nc.CourseDirectory.course_id = "attnlab"' + settings)
    run_tool("nbgrader", "fetch_assignment", ASSIGNMENT, "--student", "ada", cwd=home)
    (home / ASSIGNMENT / NOTEBOOK).unlink()
    (home / ASSIGNMENT / f"{ASSIGNMENT}-Copy1.ipynb").write_text(solved())
    run_tool("nbgrader", "submit", ASSIGNMENT, "--student", "ada", cwd=home)
    run_tool("nbgrader", "collect", "--update", ASSIGNMENT, cwd=course)
    grade(course)
    out = run_tool("attnlab", "feedback", ASSIGNMENT, cwd=course)
    assert (f"renamed notebook, ada: the page is named {ASSIGNMENT}-Copy1.html after the notebook submitted "
            f"({ASSIGNMENT}-Copy1.ipynb), as nbgrader fetch_feedback finds it") in out.stderr
    run_tool("nbgrader", "release_feedback", ASSIGNMENT, cwd=course)
    run_tool("nbgrader", "fetch_feedback", ASSIGNMENT, "--student", "ada", cwd=home)
    fetched = list((home / ASSIGNMENT / "feedback").glob(f"*/{ASSIGNMENT}-Copy1.html"))
    assert len(fetched) == 1 and "100 / 118" in fetched[0].read_text()


def test_the_feedback_names_written_answers_by_their_question_and_shows_times_with_a_zone(tmp_path):
    path = copy_course(tmp_path / "written")
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=path)
    with open_course(path).gradebook() as gb:
        gb.update_or_create_assignment(ASSIGNMENT, duedate=datetime(2026, 1, 11, 23, 59))
    answered = nbformat.reads(solved(), as_version=4)
    cell = next(c for c in answered.cells if notebooks.grade_id(c) == "q1_2_interpret")
    cell.source = "Without the scaling the rows would be <b>one-hot</b>."
    submit(path, "ada", nbformat.writes(answered))
    grade(path)
    with open_course(path).gradebook() as gb:
        nb = gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, "ada")
        next(g for g in nb.grades if g.name == "q1_2_interpret").manual_score = 2
        gb.db.commit()
    run_tool("attnlab", "feedback", ASSIGNMENT, cwd=path)
    page = (path / "feedback" / "ada" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    section = page[page.index('data-cell="q1_2_interpret"'):]
    section = section[:section.index("</section>")]
    assert "<span>Q1.2 (interpret)</span>" in section and "Suppose the scores" in section
    assert "Without the scaling the rows would be &lt;b&gt;one-hot&lt;/b&gt;." in section and "2 / 2" in section
    assert 'data-testid="submitted">2026-01-10 12:00:00 UTC<' in page and 'data-testid="due">2026-01-11 23:59:00 UTC<' in page
    assert grades(path)["ada"]["timestamp"] == "2026-01-10 12:00:00 UTC"


def test_an_override_after_a_fixed_resubmission_makes_sense(tmp_path):
    """A TA scored a part by hand and commented; the student resubmits a fix. The score stays,
    marked for review; the comment is marked as written for the earlier submission (in the
    gradebook, so formgrader shows the mark too); emptying the score box (as formgrader does)
    brings back the automatic score everywhere and clears the review mark."""
    path = copy_course(tmp_path / "override")
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=path)
    answers = {gid: notebooks.without_markers(code) for gid, code in
               notebooks.answer_cells(notebooks.read(ROOT / "solutions" / ASSIGNMENT / NOTEBOOK)).items()}
    broken = {**answers, "softmax": "def softmax(z):\n    return np.exp(z) / np.exp(z).sum(-1, keepdims=True)\n"}
    submit(path, "ada", nbformat.writes(examples.fill(release(), broken)))
    grade(path)
    with open_course(path).gradebook() as gb:
        nb = gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, "ada")
        next(g for g in nb.grades if g.name == "test_softmax").manual_score = 6
        next(c for c in nb.comments if c.name == "softmax").manual_comment = "Overflows for large logits."
        gb.db.commit()
    submit(path, "ada", solved(), "2026-01-11 09:00:00.000000 UTC")
    grade(path)
    row = grades(path)["ada"]
    assert (row["softmax"], row["score"]) == ("6", "98") and "to review by hand" in row["needs_attention"]
    with open_course(path).gradebook() as gb:
        nb = gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, "ada")
        comment = next(c for c in nb.comments if c.name == "softmax").manual_comment
        assert comment == "[written for an earlier submission (submitted 2026-01-10 12:00 UTC)] Overflows for large logits."
        cell = next(g for g in nb.grades if g.name == "test_softmax")
        cell.manual_score = None                            # the box emptied, as formgrader saves it
        cell.needs_manual_grade = cell.auto_score is None
        gb.db.commit()
    assert "graded 0 submission(s)" in grade(path).stderr
    row = grades(path)["ada"]
    assert (row["softmax"], row["score"]) == ("8", "100") and "to review" not in row["needs_attention"]
    run_tool("attnlab", "feedback", ASSIGNMENT, cwd=path)
    page = (path / "feedback" / "ada" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    assert "[written for an earlier submission (submitted 2026-01-10 12:00 UTC)] Overflows" in page
    grade(path, "--force")                                  # marked once, not again
    with open_course(path).gradebook() as gb:
        nb = gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, "ada")
        assert next(c for c in nb.comments if c.name == "softmax").manual_comment.count("[written for") == 1


def test_formgrader_reads_the_gradebook_as_it_is_now(tmp_path):
    """formgrader keeps one gradebook session for the server's life: after a regrade it showed the
    earlier automatic score, and emptying the box left needs_manual_grade set (unchanged in its
    memory). With attnlab's server extension loaded, its session reads every row anew."""
    from nbgrader.api import Gradebook

    from autograder import nbgrader_plugins
    path = copy_course(tmp_path / "formgrader")
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=path)
    broken = nbformat.reads(stub(), as_version=4)
    submit(path, "ada", nbformat.writes(broken))
    grade(path)
    course = open_course(path)
    nbgrader_plugins._load_jupyter_server_extension(None)
    formgrader = Gradebook(course.dirs.db_url, course.dirs.course_id)      # the server's session
    try:
        nb = formgrader.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, "ada")
        grade_id = next(g for g in nb.grades if g.name == "test_softmax").id
        shown = formgrader.find_grade_by_id(grade_id)
        shown.manual_score, shown.needs_manual_grade = 6, False              # a TA's score, saved
        formgrader.db.commit()
        assert shown.auto_score == 0
        submit(path, "ada", solved(), "2026-01-11 09:00:00.000000 UTC")      # a fixed resubmission
        grade(path)
        shown = formgrader.find_grade_by_id(grade_id)                        # the page, loaded again
        assert (shown.auto_score, shown.needs_manual_grade) == (8, True)
        shown.manual_score = None                                            # the box emptied
        shown.needs_manual_grade = shown.manual_score is None and shown.auto_score is None
        formgrader.db.commit()
    finally:
        formgrader.close()
    with open_course(path).gradebook() as gb:
        cell = next(g for g in gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, "ada").grades
                    if g.name == "test_softmax")
        assert (cell.manual_score, cell.needs_manual_grade, cell.score) == (None, False, 8)
    grade(path)
    assert "to review" not in grades(path)["ada"]["needs_attention"]


def test_git_ignores_what_nbgrader_export_writes():
    import subprocess
    for name in ("grades.csv", "grades/lab05_transformers.csv", "grades/lab05_transformers-lms.csv"):
        assert subprocess.run(["git", "check-ignore", "-q", name], cwd=ROOT).returncode == 0, name
