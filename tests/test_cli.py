"""The command line: every error is one clear line, limits are validated, every option has help."""
import argparse
import json
import os
import shutil
import subprocess

import pytest

from autograder import __version__, cli
from conftest import ASSIGNMENT, BIN, ROOT, copy_course, run_tool


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
                   "unknown student(s) nobody-here")


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
