"""Browser end to end: `attnlab demo` builds and grades the example class in a temporary course;
JupyterLab serves that course on localhost, and Debian's Chromium, driven by Playwright, runs the
release and solution notebooks and opens a feedback page and the class report, as a student and an
instructor would. Screenshots are saved to artifacts/e2e/."""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from autograder import labs
from autograder.messages import points
from conftest import ASSIGNMENT, BIN, ROOT, fixed_secret, run_tool

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = [pytest.mark.full, pytest.mark.e2e,
              pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium "
                                                              "(bash scripts/setup.sh installs it)")]

ARTIFACTS = ROOT / "artifacts" / "e2e"
NOTEBOOK = f"{ASSIGNMENT}/{ASSIGNMENT}.ipynb"
SUITE = labs.load(ASSIGNMENT).suite
TOKEN = "attnlab-e2e"
LAB_SETTINGS = {    # user settings of this JupyterLab only: every cell in the DOM, nothing fetched
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/extensionmanager-extension/plugin": {"enabled": False},
}
LAB_OPTIONS = ["--no-browser", "--allow-root", "--ServerApp.ip=127.0.0.1", f"--IdentityProvider.token={TOKEN}",
               "--ServerApp.terminals_enabled=False", "--LabApp.news_url=None",
               "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
               "--LabApp.extension_manager=readonly"]
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-dev-shm-usage", "--no-first-run", "--disable-component-update", "--disable-sync"]
RUN_SECONDS = 150       # a generous bound for "Run All Cells" on 2 busy cores


# -- the course, JupyterLab and the browser ----------------------------------------------------

@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The example class built, graded, with feedback pages and the class report, by `attnlab demo`."""
    course = fixed_secret(tmp_path_factory.mktemp("e2e") / "course")
    out = run_tool("attnlab", "demo", "--dir", str(course), "--jobs", "2", cwd=ROOT)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return course, out.stdout


@pytest.fixture(scope="module")
def lab(demo, tmp_path_factory):
    """JupyterLab serving the demo course on a free localhost port; yields its base URL."""
    course, _ = demo
    home = tmp_path_factory.mktemp("jupyter")
    for name, values in LAB_SETTINGS.items():
        path = home / "settings" / f"{name}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
           "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"), "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
           "JUPYTER_CONFIG_DIR": str(home / "config"), "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
           "IPYTHONDIR": str(home / "ipython")}
    port = _free_port()
    log = open(home / "jupyterlab.log", "w")
    server = subprocess.Popen([str(BIN / "jupyter"), "lab", f"--port={port}", f"--ServerApp.root_dir={course}",
                               *LAB_OPTIONS], cwd=course, env=env, stdout=log, stderr=subprocess.STDOUT,
                              stdin=subprocess.DEVNULL, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_for_server(server, base, home / "jupyterlab.log")
        yield base
    finally:
        _stop_server(server, base)
        log.close()
        shutil.copy(home / "jupyterlab.log", ARTIFACTS / "jupyterlab.log")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _api(base: str, path: str, method: str = "GET"):
    request = urllib.request.Request(f"{base}{path}", method=method, headers={"Authorization": f"token {TOKEN}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status


def _wait_for_server(server, base: str, log: Path, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert server.poll() is None, f"JupyterLab exited:\n{log.read_text()[-3000:]}"
        try:
            if _api(base, "/api/status") == 200:
                return
        except OSError:
            time.sleep(0.3)
    pytest.fail(f"JupyterLab did not answer within {seconds} s:\n{log.read_text()[-3000:]}")


def _stop_server(server, base: str) -> None:
    """Ask JupyterLab to shut down (it stops its kernels); end its process group if it does not."""
    if server.poll() is not None:
        return
    try:
        _api(base, "/api/shutdown", "POST")
        server.wait(timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()


@pytest.fixture(scope="module")
def browser(lab, tmp_path_factory):
    """Debian's Chromium with a fresh profile; every request it makes is recorded."""
    from playwright.sync_api import sync_playwright
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")), executable_path=str(CHROMIUM), headless=True,
            args=CHROMIUM_ARGS, viewport={"width": 1280, "height": 900})
        context.requests = []
        context.on("request", lambda request: context.requests.append(request.url))
        yield context
        context.close()


@pytest.fixture
def page(browser):
    page = browser.new_page()
    page.set_default_timeout(60_000)
    yield page
    page.close()


# -- driving JupyterLab ------------------------------------------------------------------------

def open_notebook(page, base: str, path: str, workspace: str):
    """Open `path` in its own JupyterLab workspace and wait for its kernel; returns the notebook."""
    page.goto(f"{base}/lab/workspaces/{workspace}/tree/{path}?token={TOKEN}")
    notebook = page.locator(".jp-NotebookPanel .jp-Notebook")
    notebook.locator(".jp-Cell").first.wait_for()
    page.locator("#jp-main-statusbar", has_text="Idle").wait_for()
    return notebook


def run_all(page) -> None:
    page.locator("#jp-MainMenu").get_by_text("Run", exact=True).click()
    page.locator("li[data-command='runmenu:run-all']").click()


def wait_for_kernel(page, notebook, last_cell_runs: bool) -> None:
    """Wait until no cell is queued or running and the kernel is idle (and, for a notebook that
    runs to its end, until the last code cell has its execution count)."""
    page.wait_for_function("""([notebook, lastCellRuns]) => {
        const prompts = [...notebook.querySelectorAll('.jp-CodeCell .jp-InputPrompt')].map(p => p.textContent.trim());
        const idle = document.querySelector('#jp-main-statusbar').textContent.includes('Idle');
        return idle && !prompts.some(p => p.includes('*')) && (!lastCellRuns || /\\[\\d+\\]/.test(prompts.at(-1)));
    }""", arg=[notebook.element_handle(), last_cell_runs], timeout=RUN_SECONDS * 1000, polling=250)


def cell_after(notebook, source: str):
    """The first code cell after the code cell that contains `source`."""
    index = notebook.evaluate("""(notebook, source) => {
        const cells = [...notebook.querySelectorAll('.jp-Cell')];
        const at = cells.findIndex(c => c.classList.contains('jp-CodeCell')
                                        && c.querySelector('.jp-InputArea').textContent.includes(source));
        return at < 0 ? -1 : cells.findIndex((c, i) => i > at && c.classList.contains('jp-CodeCell'));
    }""", source)
    assert index >= 0, f"no code cell after the one with {source!r}"
    return notebook.locator(".jp-Cell").nth(index)


# -- the tests ---------------------------------------------------------------------------------

def test_demo_points_to_the_grades_the_feedback_and_the_report(demo):
    course, stdout = demo
    last = stdout.strip().splitlines()[-3:]
    assert [line.split(":")[0] for line in last] == ["grades table", "feedback pages", "class report"]
    assert (course / "grades" / f"{ASSIGNMENT}.csv").is_file() and (course / "report" / ASSIGNMENT / "index.html").is_file()
    assert last[2].split()[-1] == str(course / "report" / ASSIGNMENT / "index.html")
    assert "(9 written)" in last[1] and (course / "feedback" / "ben" / ASSIGNMENT / f"{ASSIGNMENT}.html").is_file()


def test_release_notebook_stops_at_the_first_stub(page, lab):
    notebook = open_notebook(page, lab, f"assignments/{NOTEBOOK}", "release")
    run_all(page)
    check = cell_after(notebook, "def softmax(")
    check.locator(".jp-OutputArea-output").first.wait_for()
    wait_for_kernel(page, notebook, last_cell_runs=False)
    assert "check(softmax)" in check.locator(".jp-InputArea").inner_text()
    output = check.locator(".jp-OutputArea").inner_text()
    assert "NotImplementedError" in output and "softmax is still the stub" in output
    assert "replace `raise NotImplementedError()` with your code" in output
    check.scroll_into_view_if_needed()
    page.screenshot(path=ARTIFACTS / "release-notebook.png")


def test_solution_notebook_runs_without_errors_and_draws_its_plots(page, lab, demo):
    notebook = open_notebook(page, lab, f"solutions/{NOTEBOOK}", "solution")
    run_all(page)
    wait_for_kernel(page, notebook, last_cell_runs=True)
    outputs = notebook.locator(".jp-OutputArea-output")
    assert outputs.filter(has_text="Traceback").count() == 0
    text = "\n".join(outputs.all_inner_texts())
    for name, part in SUITE.parts.items():           # the hidden tests ran in the kernel, full marks
        assert f"{name}: {points(part.points)} / {points(part.points)}" in text, name
    images = notebook.locator(".jp-OutputArea-output img")
    assert images.count() >= 7
    assert all(images.evaluate_all("imgs => imgs.map(i => i.complete && i.naturalWidth > 100)"))
    page.keyboard.press("Control+s")                 # the saved notebook has no error outputs either
    saved = _wait_for_saved(demo[0] / "solutions" / NOTEBOOK)
    assert not [o for c in saved["cells"] for o in c.get("outputs", []) if o["output_type"] == "error"]
    images.nth(1).scroll_into_view_if_needed()
    page.screenshot(path=ARTIFACTS / "solution-notebook.png")


def _wait_for_saved(path: Path, seconds: float = 180) -> dict:
    """The notebook as JupyterLab saved it, once every code cell has run (a file caught mid-write
    is read again)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            nb = json.loads(path.read_text())
        except json.JSONDecodeError:
            nb = None
        if nb and all(c["execution_count"] for c in nb["cells"] if c["cell_type"] == "code"):
            return nb
        time.sleep(0.3)
    pytest.fail(f"{path} was not saved with every code cell run within {seconds} s")


def test_feedback_page_shows_scores_and_diagnoses_but_no_hidden_tests(page, lab, demo):
    course, _ = demo
    result = json.loads((course / "autograded" / "ben" / ASSIGNMENT / "results.json").read_text())
    page.goto(f"{lab}/files/feedback/ben/{ASSIGNMENT}/{ASSIGNMENT}.html?token={TOKEN}")
    checks = page.get_by_test_id("check")
    graded = [c for part in result["extra_data"]["parts"] for c in part["checks"]]
    assert checks.count() == len(graded) == sum(len(p.checks) for p in SUITE.parts.values())
    for row, check in zip(checks.all(), graded):
        shown = f"{points(check['score'])} / {points(check['max_score'])}"
        assert re.search(rf"{re.escape(shown)}\s*$", row.inner_text()), (check["title"], shown)
    diagnoses = page.get_by_test_id("diagnosis").all_inner_texts()
    assert len(diagnoses) == sum(bool(c["diagnosis"]) for c in graded) >= 2
    assert any("no maximum is subtracted" in d for d in diagnoses)
    assert any("divided by d_k instead of √d_k" in d for d in diagnoses)
    total = f"{points(result['score'])} / {points(result['extra_data']['max_score'])}"
    assert page.get_by_test_id("total").inner_text() == total
    html = page.content()
    assert "hidden_tests" not in html and "HIDDEN TESTS" not in html
    page.screenshot(path=ARTIFACTS / "feedback-page.png", full_page=True)


def test_class_report_renders_with_its_plots(page, demo):
    course, _ = demo
    page.goto((course / "report" / ASSIGNMENT / "index.html").as_uri())
    plots = page.get_by_test_id("plot")
    assert plots.count() == 4
    assert all(plots.evaluate_all("imgs => imgs.map(i => i.complete && i.naturalWidth > 300)"))
    humans = {h.get_attribute("data-student"): h.inner_text() for h in page.get_by_test_id("human").all()}
    assert {"eli", "fay", "gus", "hana"} <= set(humans) and "to grade by hand" in humans["ada"]
    page.screenshot(path=ARTIFACTS / "class-report.png", full_page=True)


def test_the_browser_stayed_on_this_machine(browser):
    outside = [url for url in browser.requests
               if not re.match(r"(http://127\.0\.0\.1:\d+/|file://|data:|blob:|about:)", url)]
    assert not outside
