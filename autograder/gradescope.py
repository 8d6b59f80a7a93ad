"""The Gradescope autograder bundle, and the command it runs for each submission.

The zip holds `setup.sh` and `run_autograder` (Gradescope's entry points), this package's
source, the assignment's release files and a small config. In the container the student's
code runs as user `nobody`, inside bubblewrap when the container allows it; the answer key
(the installed package) and the bundle are readable by root only.
"""
import json
import os
import sys
import zipfile
from pathlib import Path

from . import grading, results, sandbox

PACKAGE = Path(__file__).resolve().parent
PROJECT = PACKAGE.parent

SETUP = r"""#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image.
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
cd /
if [ -z "${ATTNLAB_SKIP_APT:-}" ]; then
  apt-get update -qq
  apt-get install -y -qq bubblewrap python3.11 python3.11-venv \
    || apt-get install -y -qq bubblewrap python3 python3-venv
fi
PYTHON="${ATTNLAB_PYTHON:-$(command -v python3.12 || command -v python3.11 || command -v python3)}"
"$PYTHON" -m venv "$ROOT/venv"
"$ROOT/venv/bin/python" -m pip install -q "$ROOT/source/attnlab"
# Student code runs as nobody: it may read Python and the release, not the answer key.
install -d -m 755 "$ROOT/release"
cp -r "$ROOT/source/release/." "$ROOT/release/"
chmod -R a+rX "$ROOT/release" "$ROOT/venv"
KEY="$("$ROOT/venv/bin/python" -I -c 'import autograder, os; print(os.path.dirname(autograder.__file__))')"
chmod -R go-rwx "$ROOT/source" "$KEY"
"""

RUN = r"""#!/usr/bin/env bash
# Gradescope runs this for every submission, as root.
ROOT="${AUTOGRADER_ROOT:-/autograder}"
exec "$ROOT/venv/bin/attnlab" gradescope-run --root "$ROOT"
"""


def build(course, assignment: str, out: Path) -> Path:
    """Write the autograder zip for `assignment` of `course` to `out`."""
    if not (PROJECT / "pyproject.toml").exists():
        raise RuntimeError("the Gradescope bundle is built from a source checkout of AttnLab")
    release = course.release(assignment)
    config = {"assignment": assignment, "notebook": course.notebook_name(assignment)}
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        _add_text(z, "setup.sh", SETUP)
        _add_text(z, "run_autograder", RUN)
        z.writestr("config.json", json.dumps(config, indent=1))
        for path in sorted(release.rglob("*")):
            if path.is_file():
                z.write(path, f"release/{path.relative_to(release)}")
        for name in ("pyproject.toml", "README.md"):
            z.write(PROJECT / name, f"attnlab/{name}")
        for path in sorted(PACKAGE.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                z.write(path, f"attnlab/autograder/{path.relative_to(PACKAGE)}")
    return out


def _add_text(z: zipfile.ZipFile, name: str, text: str) -> None:
    info = zipfile.ZipInfo(name)
    info.external_attr = 0o755 << 16
    z.writestr(info, text)


def run(root: Path) -> results.Result:
    """Grade /autograder/submission and write /autograder/results/results.json."""
    config = json.loads((root / "source" / "config.json").read_text())
    mode = sandbox.probe_mode(os.environ.get("ATTNLAB_SANDBOX", "auto"))
    if mode != "bwrap":
        print(f"WARNING: this container does not allow bubblewrap; student code runs as user nobody "
              f"without namespaces (sandbox mode '{mode}').", file=sys.stderr)
    slot = grading.Slot(config["assignment"], root / "release", config["notebook"], mode, sandbox.Limits())
    try:
        result, _ = slot.grade("submission", _find_notebook(root / "submission", config["notebook"]))
    finally:
        slot.worker.close()
    results.write_json(root / "results" / "results.json", result)
    return result


def _find_notebook(folder: Path, name: str) -> Path:
    """The expected notebook, or the only notebook uploaded under another name."""
    others = sorted(folder.rglob("*.ipynb"))
    return folder / name if (folder / name).exists() or len(others) != 1 else others[0]
