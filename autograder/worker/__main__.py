"""The sandboxed worker: runs a student's notebook and answers the grader's calls.

Processes inside the sandbox, all as one unprivileged user:

  zygote    imports NumPy, matplotlib and IPython once, then forks one notebook process per
            submission. It never runs student code, and it alone holds the control channel.
            Between submissions it kills every process below it and empties the scratch
            directories (/tmp), so nothing of one student survives into the next.
  notebook  runs the submission's cells in an IPython shell, then forks one part process
            per graded part: a part that hangs or crashes is killed without losing the
            notebook's state, and no part sees another part's side effects.
  part      replaces the earlier parts by oracle proxies, then executes the grader's calls.
            A proxy asks the grader to evaluate the reference; no reference code ever
            enters the sandbox.

The grader computes every verdict from the values sent back; nothing the student code does
in here (patching NumPy, IPython hooks, replacing builtins) reaches the grader's process.
"""
import ctypes
import os
import resource
import select
import shutil
import signal
import socket
import sys
import time

from .invoke import describe_exception, execute
from .protocol import Channel, Described, ProtocolError, decode, encode

CTL_FD, DATA_FD = 3, 4
_PR_SET_DUMPABLE, _PR_SET_CHILD_SUBREAPER = 4, 36
_libc = ctypes.CDLL(None, use_errno=True)


def main() -> None:
    ctl = Channel(socket.socket(fileno=CTL_FD))
    shell = prepare()
    _libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)        # no ptrace or /proc/<pid>/mem by children
    _libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)  # orphans come back here to be reaped
    ctl.send(encode({"event": "ready"}))
    zygote(ctl, shell)


def prepare():
    """Import what notebooks use, once; plots go off-screen and `%matplotlib` does nothing."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.figure
    import matplotlib.pyplot as plt
    import numpy  # noqa: F401
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    # Figures are never shown: warm matplotlib's caches once here (children inherit them),
    # then make showing and layout free; everything else draws off-screen as usual.
    fig, ax = plt.subplots()
    ax.set_title(r"$\alpha_{ij}\ \mathbf{x}$")
    ax.text(0, 0, "0.50")
    fig.tight_layout()
    fig.canvas.draw()
    plt.close("all")
    plt.show = lambda *args, **kwargs: plt.close("all")
    plt.tight_layout = lambda *args, **kwargs: None
    matplotlib.figure.Figure.tight_layout = lambda self, *args, **kwargs: None
    for helper in sorted(os.listdir(".")):   # the release's own modules (trusted), imported once
        if helper.endswith(".py") and helper[:-3].isidentifier():
            try:
                __import__(helper[:-3])
            except Exception:
                pass
    config = Config()
    config.HistoryManager.enabled = False
    shell = InteractiveShell.instance(config=config)
    shell.register_magic_function(lambda line="": None, "line", "matplotlib")
    from .drawing import install
    install(shell)    # under autograde, plots are recorded, and built only if student code reads them
    import gc
    import numpy.random  # noqa: F401 -- loaded on first use otherwise: once per notebook, not once here
    shell.run_cell("pass", store_history=False)   # the first cell imports more of IPython
    gc.freeze()       # notebooks share these pages with the zygote: their collections leave them alone
    return shell


# --------------------------------------------------------------------------------- zygote

def zygote(ctl: Channel, shell) -> None:
    notebook = None  # (pid, pidfd)
    while True:
        watched = [ctl.sock] + ([notebook[1]] if notebook else [])
        ready = select.select(watched, [], [])[0]
        if notebook and notebook[1] in ready:
            status = _reap(notebook[0])
            os.close(notebook[1])
            notebook = None
            ctl.send(encode({"event": "notebook_exit", "status": status}))
            continue
        msg = decode(ctl.recv())
        op = msg["op"]
        if op == "spawn":
            if notebook:
                os.close(notebook[1])
            clear(keep=())
            pid = _fork_notebook(shell, msg["limits"])
            notebook = (pid, os.pidfd_open(pid))
            ctl.send(encode({"event": "spawned"}))
        elif op == "kill_part":
            clear(keep=(notebook[0],) if notebook else ())
            ctl.send(encode({"event": "killed"}))
        elif op == "kill":
            if notebook:
                os.close(notebook[1])
                notebook = None
            clear(keep=())
            ctl.send(encode({"event": "killed"}))
        elif op == "exit":
            clear(keep=())
            return


def clear(keep) -> None:
    """Kill every descendant of this process but `keep`; then empty the scratch directories."""
    me, killed = os.getpid(), set()
    for _ in range(1000):
        others = [pid for pid in _descendants(me) if pid not in keep]
        if not others:
            break
        for pid in others:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            killed.add(pid)
        time.sleep(0.001)
    for pid in killed:
        _reap(pid, block=False)
    for root in os.environ.get("ATTNLAB_SCRATCH", "").split(os.pathsep):
        for name in os.listdir(root) if root and os.access(root, os.W_OK) else ():
            path = os.path.join(root, name)
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                try:
                    os.unlink(path)
                except OSError:
                    pass


def _descendants(root: int) -> list:
    """Live processes below `root` (orphans come back to us: we are a subreaper)."""
    children: dict = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if fields[0] not in ("Z", "X"):
                children.setdefault(int(fields[1]), []).append(int(name))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


def _reap(pid: int, block: bool = True):
    try:
        _, status = os.waitpid(pid, 0 if block else os.WNOHANG)
        return os.waitstatus_to_exitcode(status)
    except ChildProcessError:
        return None


# ------------------------------------------------------------------------------- notebook

def _fork() -> int:
    """os.fork, waiting out a moment when the process limit is reached (by a fork bomb that the
    grader is about to kill, possibly in another sandbox of the same user)."""
    for _ in range(200):
        try:
            return os.fork()
        except BlockingIOError:
            time.sleep(0.05)
    raise RuntimeError("cannot fork: the process limit stays reached")


def _fork_notebook(shell, limits: dict) -> int:
    pid = _fork()
    if pid:
        return pid
    try:
        os.close(CTL_FD)
        _limit(limits)
        _silence(limits["output_bytes"])
        notebook(Channel(socket.socket(fileno=DATA_FD)), shell)
    finally:
        os._exit(0)


def _limit(limits: dict) -> None:
    """Resource limits for everything the student's code runs in."""
    caps = {resource.RLIMIT_AS: limits["memory_bytes"], resource.RLIMIT_CORE: 0,
            resource.RLIMIT_FSIZE: limits["file_bytes"], resource.RLIMIT_NOFILE: 256}
    if limits.get("processes"):
        caps[resource.RLIMIT_NPROC] = limits["processes"]
    for which, value in caps.items():
        resource.setrlimit(which, (value, value))


class _Sink:
    """A write-only stream that keeps at most `limit` characters (student output is not graded)."""

    def __init__(self, limit: int):
        self.limit, self.size = limit, 0
        self.encoding = "utf-8"

    def write(self, text) -> int:
        self.size = min(self.size + len(text), self.limit)
        return len(text)

    def flush(self):
        pass

    def isatty(self):
        return False


def _silence(limit: int) -> None:
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    sys.stdout = sys.stderr = _Sink(limit)


def notebook(data: Channel, shell) -> None:
    while True:
        msg = decode(data.recv())
        op, seq = msg["op"], msg["seq"]
        if op == "cell":
            data.send(encode({"seq": seq, **_run_cell(shell, msg["source"])}))
        elif op == "part":
            pid = _fork()
            if pid == 0:
                try:
                    part(data, shell.user_ns, msg)
                finally:
                    os._exit(0)
            status = _reap(pid)
            data.send(encode({"seq": seq, "event": "part_end", "status": status}))
        elif op == "end":
            return


def _run_cell(shell, source: str) -> dict:
    try:
        result = shell.run_cell(source, store_history=False)
    except BaseException as exc:  # the student may have broken the shell itself
        return {"ok": False, "error": describe_exception(exc)}
    error = result.error_before_exec or result.error_in_exec
    return {"ok": error is None, "error": describe_exception(error) if error else ""}


# ----------------------------------------------------------------------------------- part

def part(data: Channel, namespace: dict, msg: dict) -> None:
    oracle = _Oracle(data)
    for spec in msg["oracles"]:
        namespace[spec["name"]] = oracle.proxy(spec)
    data.send(encode({"seq": msg["seq"], "event": "ready"}))
    while True:
        request = decode(data.recv())
        if request["op"] != "invoke":
            return
        try:
            value, given = execute(request["call"], namespace)
            reply = encode({"seq": request["seq"], "value": value, "given": given}, oracle.describe)
        except ProtocolError as exc:
            reply = encode({"seq": request["seq"], "error": f"returned a value that cannot be graded: {exc}"})
        except BaseException as exc:
            reply = encode({"seq": request["seq"], "error": describe_exception(exc)})
        data.send(reply)


class OracleError(RuntimeError):
    """The grader could not evaluate a reference part on the arguments it was given."""


class _Oracle:
    """Proxies for earlier parts: each call is evaluated by the grader, from the reference."""

    def __init__(self, data: Channel):
        self.data = data
        self.classes: dict = {}

    def ask(self, request: dict):
        self.data.send(encode({"op": "oracle", **request}, self.describe))
        reply = decode(self.data.recv(), self.build)
        if "error" in reply:
            raise OracleError(reply["error"])
        return reply["value"]

    def proxy(self, spec: dict):
        name = spec["name"]
        if spec["kind"] == "function":
            def function(*args, **kwargs):
                return self.ask({"fn": name, "args": args, "kwargs": kwargs})
            function.__name__ = function.__qualname__ = name
            return function
        oracle = self

        def __init__(self, *args, **kwargs):
            self.__dict__.update(oracle.ask({"new": name, "args": args, "kwargs": kwargs}))

        def method(method_name):
            def call(self, *args, **kwargs):
                return oracle.ask({"obj": self, "method": method_name, "args": args, "kwargs": kwargs})
            call.__name__ = method_name
            return call

        body = {"__init__": __init__, **{m: method(m) for m in spec["methods"]}}
        cls = type(name, (), body)
        self.classes[name] = cls
        return cls

    def describe(self, obj):
        if type(obj).__name__ in self.classes and type(obj) is self.classes[type(obj).__name__]:
            return Described(type(obj).__name__, dict(vars(obj)))
        return None

    def build(self, cls: str, attrs: dict):
        if cls not in self.classes:
            raise ProtocolError(f"unknown class {cls}")
        obj = object.__new__(self.classes[cls])
        obj.__dict__.update(attrs)
        return obj


if __name__ == "__main__":
    sys.exit(main())
