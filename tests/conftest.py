"""Shared fixtures: the course root, throw-away course copies, and nbgrader on the command line."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell

from autograder import labs, notebooks

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENT = "lab05_transformers"
BIN = Path(sys.executable).parent


def run_tool(*args, cwd, check=True, timeout=600):
    """Run a console script of this environment (nbgrader, attnlab) in `cwd`."""
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run([str(BIN / args[0]), *args[1:]], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)
    if check and done.returncode:
        pytest.fail(f"{' '.join(args)} exited {done.returncode}\n"
                    f"stdout:\n{done.stdout[-3000:]}\nstderr:\n{done.stderr[-3000:]}", pytrace=False)
    return done


TEST_SECRET = "5e" * 32      # every test course salts hidden inputs alike: verdicts are repeatable


def fixed_secret(course: Path) -> Path:
    """Give `course` the tests' course secret (instead of a new random one)."""
    (course / ".attnlab").mkdir(parents=True, exist_ok=True)
    (course / ".attnlab" / "secret").write_text(TEST_SECRET + "\n")
    return course


def copy_course(dest: Path) -> Path:
    """A fresh course directory with this repository's sources and generated files."""
    dest.mkdir(parents=True, exist_ok=True)
    fixed_secret(dest)
    shutil.copy(ROOT / "nbgrader_config.py", dest)
    for name in ("source", "assignments", "solutions"):
        shutil.copytree(ROOT / name, dest / name)
    return dest


@pytest.fixture(scope="session")
def example_class(tmp_path_factory) -> Path:
    """Lab 05's example class (`attnlab demo`'s), built once per session, not graded: copy it."""
    from autograder import demo
    return fixed_secret(demo.build_course(ROOT, tmp_path_factory.mktemp("example")))


@pytest.fixture(scope="session")
def graded_example_class(tmp_path_factory, example_class) -> Path:
    """The example class graded once per session (`attnlab grade --jobs 2`): copy it with
    `copy_of` before changing anything in it."""
    path = copy_of(example_class, tmp_path_factory.mktemp("graded") / "class")
    run_tool("attnlab", "grade", ASSIGNMENT, "--jobs", "2", "--quiet", cwd=path)
    return path


def copy_of(course: Path, dest: Path) -> Path:
    """A copy of a course directory (its gradebook, submissions and graded files included)."""
    shutil.copytree(course, dest, symlinks=True)
    return dest


@pytest.fixture(scope="session")
def course(tmp_path_factory) -> Path:
    """A course with the assignment registered in a fresh gradebook."""
    path = copy_course(tmp_path_factory.mktemp("course"))
    for assignment in labs.assignments():
        run_tool("nbgrader", "generate_assignment", assignment, "--force", cwd=path)
    return path


def grade_class(course: Path, submissions: dict, *args) -> dict:
    """Write `submissions` ({student: notebook text}) into `course`, run `attnlab grade`, and
    return {student: results.json as a dict}."""
    import json
    for student, text in submissions.items():
        folder = course / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{ASSIGNMENT}.ipynb").write_text(text)
    run_tool("attnlab", "grade", ASSIGNMENT, "--quiet", *args, cwd=course)
    return {student: json.loads((course / "autograded" / student / ASSIGNMENT / "results.json").read_text())
            for student in submissions}


_EXECUTED: dict = {}


@pytest.fixture(scope="session")
def executed_notebook():
    """A lab's source notebook run top to bottom, once per session (Labs 06 and 07 train models,
    and tests/test_claims.py checks the numbers their text quotes from that training):
    `run(assignment, extra)` appends the code `extra` as a last cell on that one run."""
    def run(assignment: str, extra: str = ""):
        cached = _EXECUTED.get(assignment)
        if cached is None or (extra and cached.cells[-1].source != extra):
            path = ROOT / "source" / assignment / f"{assignment}.ipynb"
            nb = notebooks.read(path)
            if extra:
                nb.cells.append(new_code_cell(extra))
            NotebookClient(nb, timeout=3600, resources={"metadata": {"path": str(path.parent)}}).execute()
            _EXECUTED[assignment] = nb
        return _EXECUTED[assignment]
    return run


def orphan_memory_groups() -> list:
    """The slots' memory cgroups (attnlab-<slot's pid>-<uid>) whose slot is gone."""
    from autograder import memory_group
    return [p for parent, _ in memory_group._parents() if parent.is_dir()
            for p in parent.glob("attnlab-*") if not Path(f"/proc/{p.name.split('-')[1]}").exists()]
