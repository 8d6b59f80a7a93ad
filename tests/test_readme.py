"""What the README tells a new instructor to type works as typed."""
import re

from conftest import ROOT


def test_the_environment_is_active_before_the_first_bare_command():
    """`nbgrader` and `attnlab` without `.venv/bin/` are the venv's: the README activates it
    before the first one (after setup.sh, `nbgrader: command not found` otherwise)."""
    readme = (ROOT / "README.md").read_text()
    bare = re.search(r"^(nbgrader|attnlab) ", readme, re.M)
    activate = readme.find(". .venv/bin/activate")
    assert bare and 0 <= activate < bare.start(), "the README's first bare command runs before the venv is active"


def test_ci_runs_the_readmes_full_tier_command():
    """CI runs exactly what the README calls the full tier, options and all."""
    command = (ROOT / ".ci" / "run").read_text().strip().splitlines()[-1]
    assert command.startswith("bash scripts/setup.sh && ") and "full or not full" in command
    assert command in (ROOT / "README.md").read_text().splitlines()
