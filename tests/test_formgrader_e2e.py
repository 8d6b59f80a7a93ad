"""Browser end to end, the instructor's side: after `attnlab grade`, formgrader (served by Jupyter
on localhost, driven in Debian's Chromium through Playwright) lists every submission, the
unreadable one included, with the scores of grades.csv; a score and a comment a grader types into
formgrader then appear in grades.csv and the feedback page."""
import csv
import os
import re
import subprocess
import time

import pytest

from autograder import demo
from autograder.course import open_course
from conftest import ASSIGNMENT, BIN, ROOT, fixed_secret, run_tool
from test_e2e import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, TOKEN, _free_port, _stop_server, _wait_for_server

pytestmark = [pytest.mark.full, pytest.mark.e2e,
              pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")]


def grades(course) -> dict:
    return {r["student_id"]: r for r in csv.DictReader(open(course / "grades" / f"{ASSIGNMENT}.csv"))}


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    path = fixed_secret(demo.build_course(ROOT, tmp_path_factory.mktemp("formgrader") / "course"))
    run_tool("attnlab", "grade", ASSIGNMENT, "--jobs", "2", "--quiet", cwd=path)
    return path


@pytest.fixture(scope="module")
def server(course, tmp_path_factory):
    """Jupyter Server with nbgrader's formgrader on a free localhost port; yields its base URL."""
    home = tmp_path_factory.mktemp("jupyter")
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
           "JUPYTER_CONFIG_DIR": str(home / "config"), "JUPYTER_RUNTIME_DIR": str(home / "runtime")}
    port = _free_port()
    log = open(home / "server.log", "w")
    process = subprocess.Popen([str(BIN / "jupyter"), "server", f"--port={port}", "--no-browser", "--allow-root",
                                "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={TOKEN}",
                                f"--ServerApp.root_dir={course}"], cwd=course, env=env, stdout=log,
                               stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_for_server(process, base, home / "server.log")
        yield base
    finally:
        _stop_server(process, base)
        log.close()


@pytest.fixture(scope="module")
def page(server):
    from playwright.sync_api import sync_playwright
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        context = browser.new_context(extra_http_headers={"Authorization": f"token {TOKEN}"},
                                      viewport={"width": 1280, "height": 900})
        page = context.new_page()
        page.set_default_timeout(60_000)
        yield page
        browser.close()


def submissions(page, server) -> dict:
    """{student: (score shown, link)} from formgrader's Manual Grading list of the notebook."""
    page.goto(f"{server}/formgrader/gradebook/{ASSIGNMENT}/{ASSIGNMENT}")
    page.locator("#main-table a.name-shown").first.wait_for(state="attached")
    shown = {}
    for row in page.locator("#main-table tr").all():
        name = row.locator("a.name-shown").text_content().split(",")[1].strip().lower()
        shown[name] = (row.locator("td.score").inner_text().split(" / ")[0], row.locator("a.name-shown").get_attribute("href"))
    return shown


def test_formgrader_lists_every_submission_with_the_scores_of_grades_csv(page, server, course):
    from playwright.sync_api import expect
    shown = submissions(page, server)
    rows = grades(course)
    assert set(shown) == {s for s, r in rows.items() if r["status"] != "missing"}
    assert rows["gus"]["status"] == "unreadable"
    assert {s: score for s, (score, _) in shown.items()} == {s: rows[s]["score"] for s in shown}
    page.screenshot(path=ARTIFACTS / "formgrader-submissions.png", full_page=True)
    page.goto(f"{server}{shown['gus'][1]}")             # the unreadable one opens, with its reason
    assert "this submission is unreadable" in page.locator("body").inner_text()
    page.goto(f"{server}{shown['fay'][1]}")             # the tampering, in the first answer's comment box
    tampering = re.compile(r"attnlab: tampering: locked cell 'test_softmax' was changed.*points 8 -> 100", re.S)
    expect(page.locator("#softmax-comment")).to_have_attribute("placeholder", tampering, timeout=30_000)


def test_a_manual_score_and_comment_reach_grades_csv_and_the_feedback(page, server, course):
    _, link = submissions(page, server)["ben"]
    # formgrader binds its inputs once it has fetched the grades; a score typed before is not saved.
    # The fetch is slowed down, so that typing too early fails every time, not now and then
    page.route("**/formgrader/api/grades?*", lambda route: (time.sleep(1), route.continue_()))
    page.goto(f"{server}{link}")
    page.wait_for_function("formgrader.grades.loaded && formgrader.comments.loaded")
    page.unroute("**/formgrader/api/grades?*")
    page.locator("#test_softmax").fill("7")
    page.locator("#softmax-comment").fill("Subtract the row maximum first.")
    page.locator("#test_softmax_extra_credit").click()     # leaving a field saves it
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with open_course(course).gradebook() as gb:
            nb = gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, "ben")
            grade = next(g for g in nb.grades if g.name == "test_softmax").manual_score
            comment = next(c for c in nb.comments if c.name == "softmax").manual_comment
        if grade == 7 and comment:
            break
        time.sleep(0.5)
    assert (grade, comment) == (7, "Subtract the row maximum first.")
    before = float(grades(course)["ben"]["score"])
    run_tool("attnlab", "feedback", ASSIGNMENT, "--student", "ben", cwd=course)
    row = grades(course)["ben"]
    assert row["softmax"] == "7" and float(row["score"]) == before - 5.5 + 7
    page.goto(f"{server}/files/feedback/ben/{ASSIGNMENT}/{ASSIGNMENT}.html")
    assert page.get_by_test_id("total").inner_text() == f"{before - 5.5 + 7:g} / {row['max_score']}"
    assert "Subtract the row maximum first." in page.get_by_test_id("comment").first.inner_text()
    page.screenshot(path=ARTIFACTS / "feedback-after-manual-grading.png", full_page=True)


def test_after_a_regrade_formgrader_shows_the_new_automatic_score_and_emptying_the_box_restores_it(page, server, course):
    """formgrader kept the rows it had loaded: after ben's fixed resubmission was graded, his page
    still showed the earlier automatic score, and emptying the score box left the part marked
    for review. (The previous test loaded ben's page and saved a score of 7.)"""
    from test_cycle import solved
    _, link = submissions(page, server)["ben"]
    page.goto(f"{server}{link}")
    page.wait_for_function("formgrader.grades.loaded && formgrader.comments.loaded")
    assert page.locator("#test_softmax").get_attribute("placeholder") == "5.5"
    (course / "submitted" / "ben" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").write_text(solved())
    run_tool("attnlab", "grade", ASSIGNMENT, "--quiet", cwd=course)
    page.goto(f"{server}{link}")
    page.wait_for_function("formgrader.grades.loaded && formgrader.comments.loaded")
    box = page.locator("#test_softmax")
    assert (box.get_attribute("placeholder"), box.input_value()) == ("8", "7")
    assert "needs_manual_grade" in box.get_attribute("class")            # to review: scored before
    box.fill("")
    page.locator("#test_softmax_extra_credit").click()                   # leaving the field saves it
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with open_course(course).gradebook() as gb:
            cell = next(g for g in gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, "ben").grades
                        if g.name == "test_softmax")
            state = (cell.manual_score, cell.needs_manual_grade)
        if state == (None, False):
            break
        time.sleep(0.5)
    assert state == (None, False)
    run_tool("attnlab", "feedback", ASSIGNMENT, "--student", "ben", cwd=course)
    row = grades(course)["ben"]
    assert row["softmax"] == "8" and "to review" not in row["needs_attention"]
