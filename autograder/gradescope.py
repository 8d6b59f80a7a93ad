"""The Gradescope autograder bundle, and the command it runs for each submission.

The zip holds `setup.sh` and `run_autograder` (Gradescope's entry points), this package's
source, the assignment's release files and config.json: the course's AttnLab settings from
nbgrader_config.py (limits, when the hidden checks' details are shown) and its late policy
(nbgrader's LateSubmissionPlugin), applied to Gradescope's submission_metadata.json. In the
container the student's code runs as user `nobody`, inside bubblewrap when the container allows
it; the answer key (the installed package) and the bundle are readable by root only.

Tests are numbered: `N` is part N (its score, always visible), `N.M` its checks (their details
visible as `AttnLab.gradescope_details` says, e.g. only after the due date).
"""
import json
import os
import sys
import traceback
import zipfile
from datetime import datetime, timezone
from pathlib import Path

from nbgrader.plugins import LateSubmissionPlugin
from traitlets import TraitError

from . import grading, labs, results, sandbox, secret
from .config import AttnLab
from .course import CourseError, submitted_notebook

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
PYTHON="${ATTNLAB_PYTHON:-$(command -v python3.13 || command -v python3.12 || command -v python3.11 || command -v python3)}"
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "setup.sh: AttnLab needs Python >= 3.11; $PYTHON is $("$PYTHON" -V 2>&1)" >&2
  exit 1
fi
"$PYTHON" -m venv "$ROOT/venv"
"$ROOT/venv/bin/python" -m pip install -q "$ROOT/source/attnlab"
# Student code runs as nobody: it may read Python and the release, not the answer key.
install -d -m 755 "$ROOT/release"
cp -r "$ROOT/source/release/." "$ROOT/release/"
chmod -R a+rX "$ROOT/release" "$ROOT/venv"
KEY="$("$ROOT/venv/bin/python" -I -c 'import autograder, os; print(os.path.dirname(autograder.__file__))')"
chmod -R go-rwx "$ROOT/source" "$KEY"
# matplotlib's font list, made once here for the workers of every submission (user nobody reads it)
export XDG_CACHE_HOME="$ROOT/cache"
install -d -m 755 "$XDG_CACHE_HOME"
"$ROOT/venv/bin/attnlab" gradescope-run --root "$ROOT" --warm
chmod -R a+rX "$XDG_CACHE_HOME"
"""

RUN = r"""#!/usr/bin/env bash
# Gradescope runs this for every submission, as root.
ROOT="${AUTOGRADER_ROOT:-/autograder}"
export XDG_CACHE_HOME="$ROOT/cache"
exec "$ROOT/venv/bin/attnlab" gradescope-run --root "$ROOT"
"""


def build(course, assignment: str, out: Path, limits: sandbox.Limits | None = None) -> Path:
    """Write the autograder zip for `assignment` of `course` to `out` (limits: the course's
    configured ones unless given)."""
    if not (PROJECT / "pyproject.toml").exists():
        raise CourseError("the Gradescope bundle is built from a source checkout of AttnLab")
    release = course.release(assignment)
    settings = AttnLab(config=course.config)
    limits = limits or settings.limits()
    config = {"assignment": assignment, "notebook": course.notebook_name(assignment),
              "limits": {"call_seconds": limits.call_seconds, "cell_seconds": limits.cell_seconds,
                         "submission_seconds": limits.submission_seconds, "memory_bytes": limits.memory_bytes,
                         "wall_factor": limits.wall_factor},
              "details": settings.gradescope_details,
              "late_penalty_method": _penalty_method(course.config)}
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        handle = open(out, "wb")
    except OSError as exc:
        raise CourseError(f"cannot write the bundle {out}: {exc.strerror}") from None
    with handle, zipfile.ZipFile(handle, "w", zipfile.ZIP_DEFLATED) as z:
        _add_text(z, "setup.sh", SETUP)
        _add_text(z, "run_autograder", RUN)
        z.writestr("config.json", json.dumps(config, indent=1))
        z.writestr("secret", secret.course_secret(course.root).hex() + "\n")   # root-only after setup.sh
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


def warm(root: Path) -> list:
    """Start and stop a worker in every sandbox mode that works here (setup.sh, as the image is
    built), so that matplotlib's font list is made once and kept (`sandbox.font_list_dir`), not
    made again by the worker of each submission (a scan of the fonts: 0.3-0.4 s). The modes
    warmed."""
    config = json.loads((root / "source" / "config.json").read_text())
    warmed = []
    for requested in ("bwrap", "user"):
        try:
            worker = _slot(root, config, sandbox.probe_mode(requested)).worker
        except sandbox.SandboxUnavailable:
            continue
        try:
            worker.start()
            warmed.append(requested)
        except Exception:      # a cache only: the workers of the submissions make the list then
            pass
        finally:
            worker.close()
    return warmed


def _slot(root: Path, config: dict, mode: str) -> grading.Slot:
    limits = sandbox.Limits(**config.get("limits", {}))
    return grading.Slot(config["assignment"], root / "release", config["notebook"], mode, limits)


def run(root: Path) -> results.Result:
    """Grade /autograder/submission and write /autograder/results/results.json, whole: if the
    grader itself fails, a result that says so (status error, every check 'not run'), with the
    traceback on stderr for the instructor."""
    config = json.loads((root / "source" / "config.json").read_text())
    try:
        result = _graded(root, config)
    except Exception as exc:
        traceback.print_exc()
        result = results.ungraded("submission", config["assignment"], labs.load(config["assignment"]).suite,
                                  "error", f"the autograder failed on this submission ({type(exc).__name__}); "
                                  "nothing of yours is lost: ask your instructor to run it again")
    _write_whole(root / "results" / "results.json", for_gradescope(result, config.get("details", "visible")))
    return result


def _graded(root: Path, config: dict) -> results.Result:
    mode = sandbox.probe_mode(os.environ.get("ATTNLAB_SANDBOX", "auto"))
    if mode != "bwrap":
        print(f"WARNING: this container does not allow bubblewrap; student code runs as an unprivileged "
              f"user without bubblewrap (sandbox mode '{mode}').", file=sys.stderr)
    slot = _slot(root, config, mode)
    try:
        path = submitted_notebook(root / "submission", config["notebook"])
        salt = _salt(root, config["assignment"], path)
        result, _ = slot.grade("submission", path, salt)
        if result.status == "busy":     # the machine starved it: once more, then say so
            result, _ = slot.grade("submission", path, salt)
    finally:
        slot.worker.close()
    metadata = _metadata(root)
    if metadata is not None:
        result.recorded = lateness(result, metadata, config.get("late_penalty_method", "none"))
    elif (root / "submission_metadata.json").exists():
        result.notes.append("Gradescope's submission_metadata.json could not be read: lateness was not judged")
    return result


def _write_whole(out: Path, data: dict) -> None:
    """Write a new file beside `out`, then rename it over `out`: Gradescope never reads half a
    file, and a link planted at `out` is replaced, not followed."""
    out.parent.mkdir(parents=True, exist_ok=True)
    new = out.with_name(f".{out.name}.{os.getpid()}")
    new.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    os.replace(new, out)


def _salt(root: Path, assignment: str, notebook: Path) -> bytes:
    """The hidden inputs' salt: the bundle's secret, the student (Gradescope's user ids) and the
    notebook, as `attnlab grade` salts them."""
    users = (_metadata(root) or {}).get("users")
    users = users if isinstance(users, list) else []
    student = ",".join(sorted(str(u.get("id", u.get("email", ""))) for u in users if isinstance(u, dict)))
    key = bytes.fromhex((root / "source" / "secret").read_text().strip())
    return secret.submission_salt(key, assignment, student, notebook)


def _penalty_method(config) -> str:
    """The penalty method of nbgrader's own LateSubmissionPlugin; a plugin of the course's own
    (AssignLatePenalties.plugin_class) cannot run on Gradescope, and is refused in one line."""
    plugin = config.get("AssignLatePenalties", {}).get("plugin_class", LateSubmissionPlugin)
    name = plugin if isinstance(plugin, str) else f"{plugin.__module__}.{plugin.__qualname__}"
    if name not in ("nbgrader.plugins.LateSubmissionPlugin", "nbgrader.plugins.latesubmission.LateSubmissionPlugin"):
        raise CourseError(f"the course's late penalty is computed by {name} (AssignLatePenalties.plugin_class), "
                          "which the Gradescope bundle cannot run; use LateSubmissionPlugin.penalty_method "
                          "or Gradescope's own late policy")
    try:
        return LateSubmissionPlugin(config=config).penalty_method
    except TraitError as exc:
        raise CourseError(f"nbgrader_config.py: {exc}") from None


def _metadata(root: Path) -> dict | None:
    """Gradescope's submission_metadata.json (None: missing, or not a JSON object)."""
    try:
        data = json.loads((root / "submission_metadata.json").read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def lateness(result: results.Result, metadata: dict, method: str) -> dict:
    """The late penalty of nbgrader's LateSubmissionPlugin, from Gradescope's submission metadata
    (created_at against the assignment's due_date), as a grade record (see results.Result)."""
    raw = sum(p.score for p in result.parts)
    record = {"score": raw, "raw_score": raw, "late_penalty": 0.0, "max_score": result.max_score,
              "seconds_late": 0.0, "cells": {}, "comments": {}, "duedate": "", "timestamp": ""}
    try:
        submitted = _utc(metadata["created_at"])
        # a student's own due date (an extension) is under users[]; of a group, the latest counts
        own = [_utc(u["assignment"]["due_date"]) for u in metadata.get("users") or ()
               if isinstance(u, dict) and (u.get("assignment") or {}).get("due_date")]
        due = max(own) if own else _utc(metadata["assignment"]["due_date"])
    except (KeyError, TypeError, ValueError, AttributeError):
        result.notes.append("Gradescope's submission_metadata.json gives no submission time or due date: "
                            "lateness was not judged")
        return record
    seconds = max(0.0, (submitted - due).total_seconds())
    plugin = LateSubmissionPlugin(penalty_method=method)
    penalty = plugin.late_submission_penalty(result.student, raw, seconds) if seconds > 0 else None
    penalty = 0.0 if penalty is None else min(max(penalty, 0.0), raw)
    result.timestamp = submitted.isoformat()
    record.update(score=raw - penalty, late_penalty=penalty, seconds_late=seconds, duedate=due.isoformat(),
                  timestamp=submitted.isoformat())
    return record


def _utc(text: str) -> datetime:
    """An ISO time; one without an offset is taken as UTC."""
    when = datetime.fromisoformat(text)
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def for_gradescope(result: results.Result, details: str) -> dict:
    """results.json for Gradescope: per part N a visible summary, per check N.M its details with
    the configured visibility; the total (after any late penalty) is the top-level score."""
    data = results.to_json(result)
    tests = []
    for i, part in enumerate(result.parts, 1):
        status = "" if part.status == "graded" else f" [{part.status}: needs a human]"
        tests.append({"number": str(i), "name": f"{part.name}{status}", "score": part.score,
                      "max_score": part.max_score, "visibility": "visible",
                      "status": "passed" if part.score >= part.max_score else "failed",
                      "output": f"{len(part.checks)} hidden checks; their details: "
                                + DETAILS_WORDS[details]})
        for j, (check, test) in enumerate(zip(part.checks, (t for t in data["tests"]
                                                             if t["tags"][0] == part.name
                                                             and "manual" not in t["tags"])), 1):
            tests.append({**test, "number": f"{i}.{j}", "visibility": details})
    if result.late_penalty:
        tests.append({"number": str(len(result.parts) + 1), "name": "late penalty", "score": -result.late_penalty,
                      "max_score": 0, "status": "failed", "visibility": "visible",
                      "output": results.late_text(result)})
    data["tests"] = tests
    return data


DETAILS_WORDS = {"visible": "below", "after_due_date": "shown after the due date",
                 "after_published": "shown once grades are published", "hidden": "not shown"}
