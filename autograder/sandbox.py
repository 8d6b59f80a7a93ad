"""Starting the grading worker in a sandbox, and talking to it.

The worker runs under bubblewrap in fresh PID, network, IPC, UTS and mount namespaces. Its
filesystem holds the Python installation (read-only, with this package's directory masked),
the worker's own code, the assignment's release files, and a small /tmp: no course
directory, no gradebook, no answer key, no other student's files, no network. As root, the
worker drops to user `nobody` with no capabilities; otherwise a user namespace confines it.

Modes: `bwrap` (the default when it works), `user` (root only: a separate unprivileged user,
no namespaces, for containers that forbid them, such as Gradescope's), and `none` (a plain
subprocess: nothing is hidden from student code; only for trusted notebooks).
"""
import compileall
import functools
import hashlib
import multiprocessing.util
import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from . import memory_group
from .budget import Timeout
from .worker.protocol import Channel, ProtocolError, decode, encode

PACKAGE = Path(__file__).parent
WORKER_PACKAGE = PACKAGE / "worker"
NOBODY = 65534
SLOT_UID_BASE = 2_000_000_000   # as root, a slot runs as uid BASE + its pid (no such user exists)
SANDBOX_ROOT = "/opt/attnlab"
WORKDIR = "/home/student/work"
FONT_LIST = f"{SANDBOX_ROOT}/fonts"    # where a bwrap worker finds the kept font list
SLOT_MEMORY_HEADROOM = 2**29           # a slot's memory cgroup: the student's limit plus the zygote's


@dataclass(frozen=True)
class Limits:
    """Per-submission limits. Seconds are charged as `budget` says (CPU time, or wall time that
    is not spent waiting for a CPU): an infinite loop costs at most `submission_seconds` in total,
    on a busy machine as on an idle one. A submission still within its budget after `wall_factor`
    times it in wall time was starved by the machine, and is not graded."""
    call_seconds: float = 2.0
    cell_seconds: float = 5.0
    cell_seconds_after_timeout: float = 1.0
    submission_seconds: float = 20.0
    wall_factor: float = 10.0
    memory_bytes: int = 2 * 2**30
    output_bytes: int = 2**20
    file_bytes: int = 16 * 2**20
    tmp_bytes: int = 64 * 2**20
    processes: int = 64


class SandboxUnavailable(RuntimeError):
    pass


class WorkerDied(Exception):
    """The worker (the whole sandbox) is gone."""


class NotebookDied(Exception):
    """The student's notebook process exited."""

    def __init__(self, status):
        super().__init__(f"exit status {status}")
        self.status = status


class Malformed(Exception):
    """The submission's code put something on the data channel that is not a valid message."""


def probe_mode(requested: str = "auto") -> str:
    """The sandbox mode to use: `requested`, or for `auto` the strongest that works here."""
    if requested in ("user", "none"):
        if requested == "user" and os.geteuid() != 0:
            raise SandboxUnavailable("sandbox mode 'user' needs root (it switches to user nobody)")
        return requested
    if shutil.which("bwrap"):
        probe = subprocess.run(_bwrap_prefix() + ["--ro-bind", "/", "/", "true"], capture_output=True)
        if probe.returncode == 0:
            return "bwrap"
        reason = probe.stderr.decode(errors="replace").strip()
    else:
        reason = "bubblewrap is not installed (apt-get install bubblewrap)"
    if requested == "bwrap":
        raise SandboxUnavailable(f"bubblewrap cannot run here: {reason}")
    if os.geteuid() == 0:
        return "user"
    raise SandboxUnavailable(f"no sandbox is possible ({reason}); pass --sandbox none to run "
                             "student code unconfined, only for notebooks you trust")


def _bwrap_prefix() -> list:
    namespaces = ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
    if os.geteuid() != 0:
        namespaces.append("--unshare-user")
    return ["bwrap", *namespaces, "--die-with-parent", "--new-session"]


def slot_uid() -> int:
    """The user the worker of the grading slot in this process runs as (as root): its own, so
    that process, file and memory limits that the kernel counts per user are the slot's alone,
    also beside the slots of another grading run (the service beside `attnlab grade`, two
    courses): no two live processes share a pid (pid_max is at most 2**22)."""
    return SLOT_UID_BASE + os.getpid()


def _drop_privileges(uid: int = NOBODY) -> list:
    """As root: become `uid` with no capabilities before any student code runs."""
    if os.geteuid() != 0:
        return []
    return [shutil.which("setpriv") or "/usr/bin/setpriv", f"--reuid={uid}", f"--regid={uid}",
            "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs"]


def command(mode: str, workdir: Path, limits: Limits, uid: int = NOBODY) -> tuple:
    """(argv, cwd, env) that start the worker in `mode`, as `uid` when run as root."""
    env = {
        "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/tmp",
        "MPLCONFIGDIR": "/tmp/.matplotlib", "IPYTHONDIR": "/tmp/.ipython", "MPLBACKEND": "Agg",
        "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
        "PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1",
        "NBGRADER_EXECUTION": "autograde",     # notebooks skip long demos (training) when graded
        "ATTNLAB_ISOLATE": "1", "ATTNLAB_TMP_BYTES": str(limits.tmp_bytes),
    }
    python = [sys.executable, "-m", "worker"]
    fonts = font_list_dir(mode)
    if mode != "bwrap":
        scratch = _scratch(mode, uid)
        env.update({"PYTHONPATH": str(_staged_worker()), "ATTNLAB_SCRATCH": scratch, "HOME": scratch,
                    "TMPDIR": scratch, "MPLCONFIGDIR": f"{scratch}/.matplotlib",
                    "IPYTHONDIR": f"{scratch}/.ipython", "ATTNLAB_FONTS": str(fonts or "")})
        return (_drop_privileges(uid) if mode == "user" else []) + python, str(workdir), env
    # /tmp first: binds below it (a venv in /tmp) must land on top of the fresh tmpfs
    args = _bwrap_prefix() + ["--perms", "1777", "--size", str(limits.tmp_bytes), "--tmpfs", "/tmp"]
    made = {"/tmp"}
    for source, dest in _binds(workdir):
        for parent in reversed(Path(dest).parents[:-1]):
            if str(parent) not in made:
                args += ["--perms", "0755", "--dir", str(parent)]
                made.add(str(parent))
        args += ["--ro-bind", str(source), str(dest)]
    for link, target in (("/bin", "usr/bin"), ("/lib", "usr/lib"), ("/lib64", "usr/lib64"), ("/sbin", "usr/sbin")):
        if os.path.islink(link):
            args += ["--symlink", target, link]
    if _inside(PACKAGE, _python_roots()):
        args += ["--tmpfs", str(PACKAGE)]          # an installed copy of this package holds the answer key
    if fonts and fonts.is_dir():
        args += ["--ro-bind", str(fonts), FONT_LIST]
        env["ATTNLAB_FONTS"] = FONT_LIST
    args += ["--proc", "/proc", "--dev", "/dev", "--chdir", WORKDIR]
    kept = [dest for _, dest in _binds(workdir) if _inside(dest, ["/tmp", "/dev/shm"])]
    env.update({"PYTHONPATH": SANDBOX_ROOT, "ATTNLAB_SCRATCH": f"/tmp{os.pathsep}/dev/shm",
                "ATTNLAB_KEEP": os.pathsep.join(kept)})
    return args + _drop_privileges(uid) + python, None, env


def _binds(workdir: Path):
    """(host path, sandbox path): the Python installation, the worker code, the release files."""
    yield "/usr", "/usr"
    for root in _python_roots():
        if root != "/usr" and not root.startswith("/usr/"):
            yield root, root
    yield _staged_worker() / "worker", f"{SANDBOX_ROOT}/worker"
    yield workdir, WORKDIR


def _python_roots() -> list:
    """The interpreter's prefixes and every site-packages on sys.path, outermost first."""
    found = {os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix), sys.prefix}
    found |= {p for p in sys.path if p.endswith(("site-packages", "dist-packages")) and os.path.isdir(p)}
    roots = []
    for path in sorted(found):
        if not any(path.startswith(root + os.sep) for root in roots):
            roots.append(path)
    return roots


def _inside(path: Path, roots) -> bool:
    path = os.path.realpath(path)
    return any(path.startswith(os.path.realpath(r) + os.sep) for r in roots)


def _scratch(mode: str, uid: int) -> str:
    """A private, writable directory for a worker without its own /tmp (a fresh mount, or
    emptied, for each submission)."""
    path = tempfile.mkdtemp(prefix="attnlab-scratch-")
    _remove_at_exit(path)
    if mode == "user":
        os.chown(path, uid, uid)
    return path


def _remove_at_exit(path) -> None:
    """Remove `path` when this process exits, also when it is a grading slot (slots end with
    os._exit, which skips atexit; multiprocessing runs its finalizers first)."""
    multiprocessing.util.Finalize(None, shutil.rmtree, args=(path, True), exitpriority=0)


@functools.cache
def _staged_worker() -> Path:
    """A copy of the worker package alone, readable by everyone (the installed package is not),
    with this interpreter's bytecode: the worker, which writes none, would compile its modules
    at every start (0.016 s). The bytecode is brought up to date first where the package is
    writable (an installed one was compiled by pip); Python checks it against the source."""
    compileall.compile_dir(WORKER_PACKAGE, quiet=2)
    stage = Path(tempfile.mkdtemp(prefix="attnlab-worker-"))
    _remove_at_exit(stage)
    shutil.copytree(WORKER_PACKAGE, stage / "worker", ignore=_other_bytecode)
    for path in [stage, *stage.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return stage


def _other_bytecode(folder: str, names: list) -> list:
    """What the stage leaves out: bytecode of other interpreters (and of files that are gone)."""
    if os.path.basename(folder) != "__pycache__":
        return []
    sources = set(os.listdir(os.path.dirname(folder)))
    return [name for name in names if name.split(".")[1:3] != [sys.implementation.cache_tag, "pyc"]
            or name.split(".")[0] + ".py" not in sources]


def font_list_dir(mode: str) -> Path | None:
    """Where matplotlib's list of the fonts a worker sees is kept between runs, per sandbox mode
    and interpreter: a worker that starts from it skips scanning the fonts (0.4 s of its start).
    None without a home directory."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"))
    if not base.is_absolute():
        return None
    return base / "attnlab" / f"fonts-{mode}-{hashlib.sha256(sys.prefix.encode()).hexdigest()[:12]}"


def _keep_font_list(mode: str, files) -> None:
    """Keep the font list a new worker made (it reports it when ready, before any student code
    has run). A cache: whatever fails here only means the next worker scans the fonts again."""
    folder = font_list_dir(mode)
    if folder is None or not isinstance(files, dict):
        return
    try:
        folder.mkdir(mode=0o755, parents=True, exist_ok=True)
        for name, text in files.items():
            if isinstance(name, str) and name.startswith("fontlist-") and name.endswith(".json") \
                    and os.sep not in name and isinstance(text, str):
                with tempfile.NamedTemporaryFile("w", dir=folder, delete=False) as f:
                    f.write(text)
                os.chmod(f.name, 0o644)
                os.replace(f.name, folder / name)
    except OSError:
        pass


def _own_processes() -> int:
    """Processes of this user: RLIMIT_NPROC counts them all, not only the sandbox's."""
    uid, count = os.getuid(), 0
    for entry in os.scandir("/proc"):
        try:
            count += entry.name.isdigit() and entry.stat().st_uid == uid
        except OSError:
            pass
    return count


class Worker:
    """One sandboxed worker (its zygote process), its control channel, and the data channel of
    the submission being graded (a new socket pair for each submission)."""

    def __init__(self, mode: str, workdir: Path, limits: Limits, uid: int = NOBODY,
                 start_timeout: float = 60.0):
        self.mode, self.workdir, self.limits, self.uid = mode, Path(workdir), limits, uid
        self.start_timeout = start_timeout
        self.process = None
        self.data = None
        self.isolated = False       # each submission and part in namespaces of its own
        self.fonts_scanned = False  # the worker found no kept font list (or matplotlib refused it)
        self.restarts = 0
        self.memory = None          # the slot's memory cgroup (None: RLIMIT_AS is the only limit)
        self.finalizer = None       # removes it when the process exits

    # -- lifecycle --------------------------------------------------------------------
    def start(self) -> None:
        ctl, ctl_child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        argv, cwd, env = command(self.mode, self.workdir, self.limits, self.uid)
        if self.memory is None:
            self.memory = memory_group.create(f"attnlab-{os.getpid()}-{self.uid}",
                                              self.limits.memory_bytes + SLOT_MEMORY_HEADROOM)
            if self.memory is not None and self.finalizer is None:
                self.finalizer = multiprocessing.util.Finalize(self, self._end, exitpriority=0)
        memory = self.memory

        def place_fd():  # the worker expects its control channel on fd 3
            os.dup2(ctl_child.fileno(), 3)
            os.set_inheritable(3, True)
            if memory is not None:
                try:
                    memory.add(os.getpid())
                except OSError:       # no cap for this worker; it still starts
                    pass

        self.process = subprocess.Popen(argv, cwd=cwd, env=env, preexec_fn=place_fd, pass_fds=(3,),
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE, start_new_session=True)
        ctl_child.close()
        self.ctl = Channel(ctl)
        ready = self._recv(self.ctl, time.monotonic() + self.start_timeout)
        if ready.get("event") != "ready":
            raise WorkerDied("the worker did not start")
        self.isolated = bool(ready.get("isolated"))
        self.fonts_scanned = bool(ready.get("fonts"))
        if self.fonts_scanned:
            _keep_font_list(self.mode, ready["fonts"])

    def close(self) -> None:
        self._drop_data()
        if self.process and self.process.poll() is None:
            try:
                self.ctl.send(encode({"op": "exit"}))
                self.process.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()
        self.process = None
        if self.memory is not None:
            self.memory.remove()
            self.memory = None

    def _end(self) -> None:
        """At exit: the worker first (its processes hold the group), then its memory group."""
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        if self.memory is not None:
            self.memory.remove()

    def restart(self) -> None:
        self._drop_data()
        if self.process:
            self.process.kill()
            self.process.wait()
            self.process = None
        self.restarts += 1
        self.start()

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    # -- control ----------------------------------------------------------------------
    def spawn(self) -> None:
        """A fresh notebook process in a fresh context, on a new data channel (whatever the
        previous one still holds is never read)."""
        limits = {k: v for k, v in asdict(self.limits).items() if k.endswith("bytes")}
        if self.mode != "none":
            limits["processes"] = self.limits.processes + (0 if os.geteuid() == 0 else _own_processes())
        self._drop_data()
        data, data_child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self.ctl.send_with_fds(encode({"op": "spawn", "limits": limits}), [data_child.fileno()])
        except OSError:
            data.close()
            raise WorkerDied("the worker is gone") from None
        finally:
            data_child.close()
        self.data = Channel(data)
        self._await_event("spawned")

    def seal(self) -> None:
        """Kill whatever the notebook's cells left running (the notebook process stays)."""
        self._control({"op": "seal"}, "sealed")

    def kill(self) -> None:
        """End the submission's context: every process of it, and its channel."""
        self._drop_data()
        self._control({"op": "kill"}, "killed")

    def _drop_data(self) -> None:
        if self.data is not None:
            self.data.sock.close()
            self.data = None

    def _control(self, message: dict, expected: str) -> None:
        try:
            self.ctl.send(encode(message))
        except OSError:
            raise WorkerDied("the worker is gone") from None
        self._await_event(expected)

    def _await_event(self, expected: str) -> None:
        deadline = time.monotonic() + 30 * self.limits.wall_factor   # the zygote's own work, however busy the machine
        while self._recv(self.ctl, deadline).get("event") != expected:
            pass

    # -- data -------------------------------------------------------------------------
    def send(self, message: dict, describe=None) -> None:
        if self.data is None:
            raise NotebookDied(None)
        try:
            self.data.send(encode(message, describe))
        except (OSError, ProtocolError) as exc:
            raise WorkerDied(f"cannot reach the worker: {exc}") from None

    def receive(self, deadline: float, build=None) -> tuple:
        """Next message from the notebook or part process, as (raw size, message).

        Raises Timeout, NotebookDied (the notebook process exited), WorkerDied, or Malformed
        (bytes that are not a message: only the submission's own code sends those).
        """
        if self.data is None:
            raise NotebookDied(None)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise Timeout()
            try:
                ready = select.select([self.data.sock, self.ctl.sock], [], [], remaining)[0]
            except (OSError, ValueError):
                raise WorkerDied("the worker is gone") from None
            if self.ctl.sock in ready:
                event = self._recv(self.ctl, deadline)
                if event.get("event") == "notebook_exit":
                    raise NotebookDied(event.get("status"))
                continue
            if self.data.sock in ready:
                try:
                    raw = self.data.recv()
                    message = decode(raw, build)
                except EOFError:
                    raise NotebookDied(None) from None
                except (ProtocolError, OSError) as exc:
                    raise Malformed(str(exc)[:200]) from None
                if not isinstance(message, dict):
                    raise Malformed(f"a message of type {type(message).__name__}")
                return len(raw), message

    def _recv(self, channel: Channel, deadline: float) -> dict:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([channel.sock], [], [], remaining)[0]:
            if not self.alive:
                raise WorkerDied(self._exit_reason())
            raise Timeout()
        try:
            message = decode(channel.recv())
        except (EOFError, OSError, ProtocolError):
            raise WorkerDied(self._exit_reason()) from None
        return message if isinstance(message, dict) else {}

    def _exit_reason(self) -> str:
        if self.process is None:
            return "the worker is not running"
        if self.process.poll() is None:
            return "the worker stopped answering"
        err = self.process.stderr.read().decode(errors="replace")[-2000:] if self.process.stderr else ""
        return f"the worker exited with status {self.process.returncode}: {err.strip()}"
