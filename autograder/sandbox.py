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
import atexit
import functools
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

from .worker.protocol import Channel, ProtocolError, decode, encode

PACKAGE = Path(__file__).parent
WORKER_PACKAGE = PACKAGE / "worker"
NOBODY = 65534
SANDBOX_ROOT = "/opt/attnlab"
WORKDIR = "/home/student/work"


@dataclass(frozen=True)
class Limits:
    """Per-submission limits. An infinite loop costs at most `submission_seconds` in total."""
    call_seconds: float = 2.0
    cell_seconds: float = 5.0
    cell_seconds_after_timeout: float = 1.0
    submission_seconds: float = 20.0
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


class Timeout(Exception):
    pass


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


def _drop_privileges() -> list:
    """As root: become `nobody` with no capabilities before any student code runs."""
    if os.geteuid() != 0:
        return []
    return [shutil.which("setpriv") or "/usr/bin/setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}",
            "--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs"]


def command(mode: str, workdir: Path, limits: Limits) -> tuple:
    """(argv, cwd, env) that start the worker in `mode`."""
    env = {
        "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/tmp",
        "MPLCONFIGDIR": "/tmp/.matplotlib", "IPYTHONDIR": "/tmp/.ipython", "MPLBACKEND": "Agg",
        "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
        "PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1",
        "NBGRADER_EXECUTION": "autograde",     # notebooks skip long demos (training) when graded
    }
    python = [sys.executable, "-m", "worker"]
    if mode != "bwrap":
        scratch = _scratch(mode)
        env.update({"PYTHONPATH": str(_staged_worker()), "ATTNLAB_SCRATCH": scratch, "HOME": scratch,
                    "TMPDIR": scratch, "MPLCONFIGDIR": f"{scratch}/.matplotlib",
                    "IPYTHONDIR": f"{scratch}/.ipython"})
        return (_drop_privileges() if mode == "user" else []) + python, str(workdir), env
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
    args += ["--proc", "/proc", "--dev", "/dev", "--chdir", WORKDIR]
    env.update({"PYTHONPATH": SANDBOX_ROOT, "ATTNLAB_SCRATCH": f"/tmp{os.pathsep}/dev/shm"})
    return args + _drop_privileges() + python, None, env


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


def _scratch(mode: str) -> str:
    """A private, writable directory for a worker without its own /tmp (emptied between students)."""
    path = tempfile.mkdtemp(prefix="attnlab-scratch-")
    atexit.register(shutil.rmtree, path, True)
    if mode == "user":
        os.chown(path, NOBODY, NOBODY)
    return path


@functools.cache
def _staged_worker() -> Path:
    """A copy of the worker package alone, readable by everyone (the installed package is not)."""
    stage = Path(tempfile.mkdtemp(prefix="attnlab-worker-"))
    atexit.register(shutil.rmtree, stage, True)
    shutil.copytree(WORKER_PACKAGE, stage / "worker", ignore=shutil.ignore_patterns("__pycache__"))
    for path in [stage, *stage.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return stage


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
    """One sandboxed worker (its zygote process) with a control and a data channel."""

    def __init__(self, mode: str, workdir: Path, limits: Limits, start_timeout: float = 60.0):
        self.mode, self.workdir, self.limits = mode, Path(workdir), limits
        self.start_timeout = start_timeout
        self.process = None
        self.restarts = 0

    # -- lifecycle --------------------------------------------------------------------
    def start(self) -> None:
        ctl, ctl_child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        data, data_child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        argv, cwd, env = command(self.mode, self.workdir, self.limits)

        def place_fds():  # the worker expects the channels on fds 3 and 4
            os.dup2(ctl_child.fileno(), 3)
            os.dup2(data_child.fileno(), 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)

        self.process = subprocess.Popen(argv, cwd=cwd, env=env, preexec_fn=place_fds, pass_fds=(3, 4),
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE, start_new_session=True)
        ctl_child.close()
        data_child.close()
        self.ctl, self.data = Channel(ctl), Channel(data)
        if self._event(time.monotonic() + self.start_timeout) != "ready":
            raise WorkerDied("the worker did not start")

    def close(self) -> None:
        if self.process and self.process.poll() is None:
            try:
                self.ctl.send(encode({"op": "exit"}))
                self.process.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()
        self.process = None

    def restart(self) -> None:
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
        """A fresh notebook process (killing whatever else runs in the sandbox)."""
        limits = {k: v for k, v in asdict(self.limits).items() if k.endswith("bytes")}
        if self.mode != "none":
            limits["processes"] = self.limits.processes + (0 if os.geteuid() == 0 else _own_processes())
        self._control({"op": "spawn", "limits": limits}, "spawned")

    def kill_part(self) -> None:
        self._control({"op": "kill_part"}, "killed")

    def kill(self) -> None:
        self._control({"op": "kill"}, "killed")

    def _control(self, message: dict, expected: str) -> None:
        try:
            self.ctl.send(encode(message))
        except OSError:
            raise WorkerDied("the worker is gone") from None
        deadline = time.monotonic() + 30
        while True:
            event = self._event(deadline)
            if event == expected:
                return

    def _event(self, deadline: float):
        """The next control event (ignoring notebook exits, which callers learn from `receive`)."""
        message = self._recv(self.ctl, deadline)
        return message.get("event")

    # -- data -------------------------------------------------------------------------
    def send(self, message: dict, describe=None) -> None:
        try:
            self.data.send(encode(message, describe))
        except (OSError, ProtocolError) as exc:
            raise WorkerDied(f"cannot reach the worker: {exc}") from None

    def receive(self, deadline: float, build=None) -> tuple:
        """Next message from the notebook or part process, as (raw size, message).

        Raises Timeout, NotebookDied (the notebook process exited) or WorkerDied.
        """
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
                except EOFError:
                    raise WorkerDied("the worker closed its channel") from None
                except ProtocolError as exc:
                    return 0, {"malformed": str(exc)}
                try:
                    message = decode(raw, build)
                except ProtocolError as exc:
                    return len(raw), {"malformed": str(exc)}
                if isinstance(message, dict):
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
