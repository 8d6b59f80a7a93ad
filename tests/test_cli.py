"""The command line: every error is one clear line, limits are validated, every option has help."""
import argparse
import json
import os
import shutil
import subprocess

import pytest

from autograder import __version__, cli
from conftest import ASSIGNMENT, BIN, ROOT, copy_course, orphan_memory_groups, run_tool


def one_line_error(out, *words):
    assert out.returncode == 2 and out.stdout == "" and out.stderr.count("\n") == 1, out.stderr
    for word in words:
        assert word in out.stderr, (word, out.stderr)


@pytest.mark.parametrize("args, words", [
    (["grade", ASSIGNMENT, "--memory", "0"], ["--memory", "at least"]),
    (["grade", ASSIGNMENT, "--call-timeout", "-1"], ["--call-timeout", "positive"]),
    (["grade", ASSIGNMENT, "--cell-timeout", "nan"], ["--cell-timeout", "positive"]),
    (["grade", ASSIGNMENT, "--jobs", "-3"], ["--jobs", "positive"]),
    (["gradescope", ASSIGNMENT, "--submission-timeout", "0"], ["--submission-timeout"]),
    (["grade"], ["assignment"]),
    (["grade", f"{ASSIGNMENT}/"], ["unknown assignment", f"known: {ASSIGNMENT}"]),          # a tab-completed slash
    (["feedback", f"assignments/{ASSIGNMENT}"], ["unknown assignment", f"known: {ASSIGNMENT}"]),
    (["report", ASSIGNMENT[:-1]], ["unknown assignment", f"known: {ASSIGNMENT}"]),
    (["gradescope", "lab99"], ["unknown assignment", f"known: {ASSIGNMENT}"]),
])
def test_bad_options_are_refused_in_one_line(tmp_path, args, words):
    one_line_error(run_tool("attnlab", *args, cwd=tmp_path, check=False), *words)


def test_commands_outside_a_checkout_say_so_in_one_line(tmp_path):
    one_line_error(run_tool("attnlab", "sync", cwd=tmp_path, check=False), "not an AttnLab checkout")
    one_line_error(run_tool("attnlab", "demo", cwd=tmp_path, check=False), "not an AttnLab checkout")
    one_line_error(run_tool("attnlab", "gradescope-run", "--root", str(tmp_path / "missing"), cwd=tmp_path,
                            check=False), "not a Gradescope autograder folder")
    one_line_error(run_tool("attnlab", "grade", ASSIGNMENT, cwd=tmp_path, check=False),
                   "not an nbgrader course directory")


def test_unknown_student_is_refused(course):
    one_line_error(run_tool("attnlab", "grade", ASSIGNMENT, "--student", "nobody-here", cwd=course, check=False),
                   "unknown student(s) 'nobody-here'")
    one_line_error(run_tool("attnlab", "grade", ASSIGNMENT, "--student", "", cwd=course, check=False),
                   "unknown student(s) ''")


def test_version_and_help_on_every_option():
    assert run_tool("attnlab", "--version", cwd=ROOT).stdout.strip() == f"attnlab {__version__}"
    parser = cli._parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, sub in subparsers.choices.items():
        for action in sub._actions:
            assert action.help, (name, action.dest)


def test_grading_leaves_nothing_in_the_temporary_directory(tmp_path):
    """The slots stage the worker's code in a temporary directory and end with os._exit, which
    skips atexit: what they staged must go all the same (it piled up, two copies per run)."""
    course = copy_course(tmp_path / "course")
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=course)
    for student in ("tmp-a", "tmp-b"):
        folder = course / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / "assignments" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", folder)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run([str(BIN / "attnlab"), "grade", ASSIGNMENT, "--quiet", "--jobs", "2", "--force",
                           "--student", "tmp-a", "--student", "tmp-b"], cwd=course, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    graded = json.loads((course / "autograded" / "tmp-b" / ASSIGNMENT / "results.json").read_text())
    assert graded["extra_data"]["status"] == "graded" and list(tmp.iterdir()) == []


def test_an_output_path_that_cannot_be_written_is_one_line(course, tmp_path):
    """A folder given as the bundle's file, or a file as the demo's folder."""
    (tmp_path / "folder").mkdir()
    (tmp_path / "file").write_text("")
    one_line_error(run_tool("attnlab", "gradescope", ASSIGNMENT, "-o", str(tmp_path / "folder"), cwd=course,
                            check=False), "cannot write the bundle", "Is a directory")
    for where, words in ((tmp_path / "file", "File exists"), (tmp_path / "file" / "sub", "Not a directory")):
        out = run_tool("attnlab", "demo", "--dir", str(where), cwd=ROOT, check=False)
        assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
        assert "cannot make the course folder" in out.stderr and words in out.stderr


def _descendants(root: int) -> set:
    children = {}
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
        except (OSError, ValueError, IndexError):
            continue
    found, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.full
@pytest.mark.parametrize("sig", ["SIGTERM", "SIGKILL", "SIGINT"])
def test_a_killed_grade_leaves_no_process_behind(tmp_path, sig):
    """`timeout`, CI and systemd end a command with SIGTERM, then SIGKILL: the grading slots and
    their sandboxed workers end with it (they waited for work for good, holding its output open).
    Ctrl-C (SIGINT to the terminal's process group) ends it with one line, not a traceback."""
    import signal
    import time
    from test_cycle import solved, submit
    course = copy_course(tmp_path / "killed")
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=course)
    for i in range(24):
        submit(course, f"s{i:02d}", solved())
    grading = subprocess.Popen([str(BIN / "attnlab"), "grade", ASSIGNMENT, "--quiet", "--jobs", "2"], cwd=course,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
                               env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"})
    deadline = time.monotonic() + 600              # bounds that only a hang reaches, even on a busy machine
    while not list(course.glob(f"autograded/*/{ASSIGNMENT}/results.json")) and time.monotonic() < deadline:
        time.sleep(0.05)
    below = _descendants(grading.pid)
    assert len(below) >= 4, below                    # two slots, each with its worker
    if sig == "SIGINT":
        os.killpg(grading.pid, signal.SIGINT)          # as a terminal's Ctrl-C
    else:
        grading.send_signal(getattr(signal, sig))     # the command's own process only
    _, stderr = grading.communicate(timeout=120)
    if sig == "SIGINT":
        assert grading.returncode == 130 and stderr.strip().splitlines() == [
            "attnlab: interrupted; what was recorded stands: run the command again for the rest"], stderr
    deadline = time.monotonic() + 60
    while any(map(_running, below)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in below if _running(pid)]
    run_tool("attnlab", "grade", ASSIGNMENT, "--quiet", "--student", "s00", "--force", cwd=course)
    assert orphan_memory_groups() == []        # the killed slots' groups went with the next run



def test_an_unwritable_folder_a_bad_setting_and_a_damaged_gradebook_are_one_line_each(tmp_path):
    """A folder the command writes to that is a file, a CourseDirectory setting of the wrong
    type, and a gradebook file that is not a database: one line each, naming what to fix (a
    damaged file is not 'another program writing'); what was recorded stands."""
    from test_cycle import grades, solved, submit
    course = copy_course(tmp_path / "bad")
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=course)
    submit(course, "ada", solved())
    (course / "grades").write_text("not a folder")
    one_line_error(run_tool("attnlab", "grade", ASSIGNMENT, "--quiet", cwd=course, check=False),
                   f"cannot use {course / 'grades'}", "run the command again")
    (course / "grades").unlink()
    run_tool("attnlab", "grade", ASSIGNMENT, "--quiet", cwd=course)
    assert grades(course)["ada"]["score"] == "100"
    config = (course / "nbgrader_config.py").read_text()
    (course / "nbgrader_config.py").write_text(config + "\nc.CourseDirectory.submitted_directory = 5\n")
    for command in ("grade", "feedback", "report"):
        one_line_error(run_tool("attnlab", command, ASSIGNMENT, cwd=course, check=False),
                       "nbgrader_config.py:", "submitted_directory")
    (course / "nbgrader_config.py").write_text(config)
    (course / "gradebook.db").write_bytes(b"not a database" * 100)
    for command in ("grade", "feedback", "report"):
        one_line_error(run_tool("attnlab", command, ASSIGNMENT, "--force" if command == "grade" else "--course=.",
                                cwd=course, check=False), "damaged or cannot be opened")


# attnlab grade --zip-collect: an id in neither lms_ids nor the gradebook is named with the closest known
@pytest.mark.parametrize("typo, known, named", [
    ("1030", {"1001", "1002", "1003", "1004", "1005", "1006"}, ["1003", "1006", "1005"]),   # two digits swapped
    ("20021", {"20020", "20001", "ada"}, ["20020", "20001"]),
])
def test_a_typo_in_an_lms_id_is_named_with_the_id_it_was_meant_to_be(typo, known, named):
    from autograder.nbgrader_plugins import closest_ids
    assert closest_ids(typo, known) == named
