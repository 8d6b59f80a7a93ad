"""The Gradescope autograder bundle, and the command it runs for each submission.

The zip holds `setup.sh` and `run_autograder` (Gradescope's entry points), this package's
source, the assignment's release files and config.json: the course's AttnLab settings from
nbgrader_config.py (limits, when the hidden checks' details and the whole result are shown) and
its late policy (nbgrader's LateSubmissionPlugin, or the course's own plugin class when it is a
file beside nbgrader_config.py, which is bundled), applied to Gradescope's
submission_metadata.json. In the container the student's code runs as user `nobody`, inside
bubblewrap when the container allows it; the answer key (the installed package), the bundle,
the submission folder and its metadata are readable by root only. The hidden inputs are salted
with every file of the upload.

results.json has the layout of `attnlab grade`'s (results.to_json): test `N` is part N with its
score, tests `N.M` its checks (no score; their details visible as `AttnLab.gradescope_details`
says), and the written answers, which Gradescope grades by hand in questions of their own, are
quoted for the graders in hidden tests without a score.
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
from traitlets.config import Config
from traitlets.utils.importstring import import_item

from . import gradebook, grading, labs, notebooks, results, sandbox, secret, student_files, submission
from .config import AttnLab
from .course import CourseError, notebook_notes, submitted_notebook
from .outcome import Recorded, Result, ungraded

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


def build(course, assignment: str, out: Path, limits: sandbox.Limits | None = None) -> tuple:
    """Write the autograder zip for `assignment` of `course` to `out` (limits: the course's
    configured ones unless given); returns (`out`, what the instructor must know: the late
    policy where it differs from the course's, the written answers to add as questions)."""
    if not (PROJECT / "pyproject.toml").exists():
        raise CourseError("the Gradescope bundle is built from a source checkout of AttnLab")
    release = course.release(assignment)
    settings = AttnLab(config=course.config)
    limits = limits or settings.limits()
    notebook = course.notebook_name(assignment)
    late, plugin_files, notes = _late_policy(course)
    config = {"assignment": assignment, "notebook": notebook,
              "limits": {"call_seconds": limits.call_seconds, "cell_seconds": limits.cell_seconds,
                         "submission_seconds": limits.submission_seconds, "memory_bytes": limits.memory_bytes,
                         "wall_factor": limits.wall_factor},
              "details": settings.gradescope_details, "visibility": settings.gradescope_visibility, **late}
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
        for name, path in plugin_files.items():
            z.write(path, f"plugins/{name}")
        for name in ("pyproject.toml", "README.md"):
            z.write(PROJECT / name, f"attnlab/{name}")
        for path in sorted(PACKAGE.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                z.write(path, f"attnlab/autograder/{path.relative_to(PACKAGE)}")
    return out, notes + _questions_note(release / notebook)


def _questions_note(release: Path) -> list:
    """The written answers, which the autograder does not score: Gradescope grades them by hand,
    in questions the instructor adds to the assignment's outline."""
    nb = notebooks.read(release)
    asked = notebooks.questions(nb)
    worth = {notebooks.grade_id(c): notebooks.nbgrader(c).get("points", 0) for c in nb.cells if notebooks.is_written(c)}
    if not worth:
        return []
    auto = sum(notebooks.nbgrader(c).get("points", 0) for c in nb.cells if notebooks.is_test(c))
    listed = "; ".join(f"{asked[gid][0]} ({gid}): {points:g}" for gid, points in worth.items())
    return [f"the autograder scores {auto:g} points; the {len(worth)} written answers "
            f"({sum(worth.values()):g} points) are graded by hand on Gradescope: in the assignment's "
            f"outline, add one manually graded question per answer, with these points: {listed}"]


def _late_policy(course) -> tuple:
    """(config.json's late entries, {name in plugins/: file} to bundle, notes). nbgrader's own
    LateSubmissionPlugin runs as configured; a plugin class of the course's own is bundled when
    its module is a file (or a package folder) beside nbgrader_config.py, as nbgrader finds it;
    otherwise the bundle applies no penalty, and says so."""
    config = course.config
    try:
        method = LateSubmissionPlugin(config=config).penalty_method
    except TraitError as exc:
        raise CourseError(f"nbgrader_config.py: {exc}") from None
    plugin = config.get("AssignLatePenalties", {}).get("plugin_class", LateSubmissionPlugin)
    name = plugin if isinstance(plugin, str) else f"{plugin.__module__}.{plugin.__qualname__}"
    if name in ("nbgrader.plugins.LateSubmissionPlugin", "nbgrader.plugins.latesubmission.LateSubmissionPlugin"):
        return {"late_penalty_method": method}, {}, []
    top = name.split(".")[0]
    found = [course.root / f"{top}.py"] if (course.root / f"{top}.py").is_file() else \
        sorted(p for p in (course.root / top).rglob("*.py") if "__pycache__" not in p.parts) \
        if (course.root / top / "__init__.py").is_file() else []
    if not found:
        return {"late_penalty_method": "none"}, {}, [
            f"the course's late penalty is computed by {name} (AssignLatePenalties.plugin_class), which is not "
            "a file beside nbgrader_config.py, so the bundle cannot carry it: on Gradescope the autograder "
            "applies no late penalty; set one in Gradescope's assignment settings (late submissions) instead"]
    sections = {section: dict(config[section]) for section in (name.rsplit(".", 1)[-1], "LateSubmissionPlugin")
                if section in config}
    try:
        json.dumps(sections)
    except TypeError:
        raise CourseError(f"nbgrader_config.py: the settings of {name} cannot be carried to Gradescope "
                          "(they are not plain values)") from None
    files = {str(p.relative_to(course.root)): p for p in found}
    return {"late_penalty_method": method, "late_plugin": name, "late_plugin_config": sections}, files, [
        f"the course's late penalty ({name}) is bundled from {', '.join(files)} and applied to Gradescope's "
        "submission time and due date (the student's own due date, an extension, where Gradescope has one)"]


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


def run(root: Path) -> Result:
    """Grade /autograder/submission and write /autograder/results/results.json, whole: if the
    grader itself fails, a result that says so (status error, every check 'not run'), with the
    traceback on stderr for the instructor."""
    config = json.loads((root / "source" / "config.json").read_text())
    written = {}
    try:
        result, written = _graded(root, config)
    except Exception as exc:
        traceback.print_exc()
        result = ungraded(_student(_metadata(root)), config["assignment"],
                                  labs.load(config["assignment"]).suite, "error",
                                  f"the autograder failed on this submission ({type(exc).__name__}); "
                                  "nothing of yours is lost: ask your instructor to run it again")
    _write_whole(root / "results" / "results.json", for_gradescope(result, config, written))
    return result


def _graded(root: Path, config: dict) -> tuple:
    """(the result, the written answers {grade_id: (question, answer, points)})."""
    mode = sandbox.probe_mode(os.environ.get("ATTNLAB_SANDBOX", "auto"))
    if mode != "bwrap":
        print(f"WARNING: this container does not allow bubblewrap; student code runs as an unprivileged "
              f"user without bubblewrap (sandbox mode '{mode}').", file=sys.stderr)
    folder = root / "submission"
    _private(folder, root / "submission_metadata.json")
    metadata = _metadata(root)
    slot = _slot(root, config, mode)
    try:
        path = submitted_notebook(folder, config["notebook"])
        salt = _salt(root, config["assignment"], metadata)
        result, _ = slot.grade(_student(metadata), path, salt)
        if result.status == "busy":     # the machine starved it: once more, then say so
            result, _ = slot.grade(_student(metadata), path, salt)
    finally:
        slot.worker.close()
    if result.status != "unreadable":
        result.notes += notebook_notes(folder, path, config["notebook"], root / "release" / config["notebook"])
    if metadata is not None:
        result.recorded = lateness(result, metadata, _late_plugin(root, config))
    elif (root / "submission_metadata.json").exists():
        result.notes.append("Gradescope's submission_metadata.json could not be read: lateness was not judged")
    return result, _written(root / "release" / config["notebook"], path)


def _private(folder: Path, metadata: Path) -> None:
    """The upload and its metadata, readable by root only: in sandbox mode `user` student code
    runs as an unprivileged user that sees the file system, and would read the other uploaded
    files (which then salt nothing it could not see) and the metadata of the submission."""
    for path, mode in ((folder, 0o700), (metadata, 0o600)):
        try:
            os.chmod(path, mode, follow_symlinks=False)
        except (FileNotFoundError, NotImplementedError):
            pass


def _written(release: Path, path: Path) -> dict:
    """{grade_id: (question, the student's answer, points)} of the written answers."""
    nb = notebooks.read(release)
    try:
        answers = notebooks.written_answers(submission.load(path)[0])
    except Exception:        # unreadable: said in the result
        answers = {}
    asked = notebooks.questions(nb)
    return {notebooks.grade_id(c): (asked[notebooks.grade_id(c)][0], answers.get(notebooks.grade_id(c), ""),
                                    notebooks.nbgrader(c).get("points", 0))
            for c in nb.cells if notebooks.is_written(c)}


def _write_whole(out: Path, data: dict) -> None:
    """Write a new file beside `out`, then rename it over `out`: Gradescope never reads half a
    file, and a link planted at `out` is replaced, not followed."""
    out.parent.mkdir(parents=True, exist_ok=True)
    new = out.with_name(f".{out.name}.{os.getpid()}")
    new.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    os.replace(new, out)


def _users(metadata: dict | None) -> list:
    users = (metadata or {}).get("users")
    return [u for u in users if isinstance(u, dict)] if isinstance(users, list) else []


def _student(metadata: dict | None) -> str:
    """Who submitted, from Gradescope's metadata: the users' emails (names, ids where there is
    none), joined for a group; 'submission' without metadata."""
    named = sorted(str(u.get("email") or u.get("name") or u.get("id", "")) for u in _users(metadata))
    return ", ".join(n for n in named if n) or "submission"


def _salt(root: Path, assignment: str, metadata: dict | None) -> bytes:
    """The hidden inputs' salt: the bundle's secret, the student (Gradescope's user ids) and every
    uploaded file (names and bytes), as `attnlab grade` salts a submission with its notebook."""
    student = ",".join(sorted(str(u.get("id", u.get("email", ""))) for u in _users(metadata)))
    key = bytes.fromhex((root / "source" / "secret").read_text().strip())
    return secret.salt(key, assignment, student, student_files.digest(root / "submission").encode())


def _late_plugin(root: Path, config: dict):
    """The late penalty plugin the bundle carries: nbgrader's LateSubmissionPlugin with the
    course's method, or the course's own class from plugins/ with its settings."""
    name = config.get("late_plugin")
    if not name:
        return LateSubmissionPlugin(penalty_method=config.get("late_penalty_method", "none"))
    plugins = str(root / "source" / "plugins")
    if plugins not in sys.path:
        sys.path.insert(0, plugins)
    return import_item(name)(config=Config(config.get("late_plugin_config", {})))


def _metadata(root: Path) -> dict | None:
    """Gradescope's submission_metadata.json (None: missing, or not a JSON object)."""
    try:
        data = json.loads((root / "submission_metadata.json").read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def lateness(result: Result, metadata: dict, plugin) -> Recorded:
    """The grade with the late penalty of `plugin` (nbgrader's LateSubmissionPlugin or the
    course's own), from Gradescope's submission metadata (created_at against the assignment's
    due_date)."""
    try:
        submitted = _utc(metadata["created_at"])
        # a student's own due date (an extension) is under users[]; of a group, the latest counts
        own = [_utc(u["assignment"]["due_date"]) for u in _users(metadata)
               if (u.get("assignment") or {}).get("due_date")]
        due = max(own) if own else _utc(metadata["assignment"]["due_date"])
    except (KeyError, TypeError, ValueError, AttributeError):
        result.notes.append("Gradescope's submission_metadata.json gives no submission time or due date: "
                            "lateness was not judged")
        return gradebook.unrecorded(result)
    result.timestamp = submitted.isoformat()
    return gradebook.unrecorded(result, submitted, due, plugin)


def _utc(text: str) -> datetime:
    """An ISO time; one without an offset is taken as UTC."""
    when = datetime.fromisoformat(text)
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def for_gradescope(result: Result, config: dict, written=None) -> dict:
    """results.json for Gradescope: `attnlab grade`'s layout, with the bundle's visibilities and
    the written answers quoted for the graders."""
    return results.to_json(result, config.get("details", "visible"), config.get("visibility", "visible"), written)
