"""Runners execute the suite's calls against student code.

`LocalRunner` works in this process, on a namespace (a notebook's globals, a module): it runs
the nbgrader hidden-test cells and the project's mutant bank. It is not a security boundary.
`SandboxRunner` is the runner of `attnlab grade`: student code runs in the sandboxed worker and
only values come back. Both pass results through the wire format, so they judge the same values.
"""
import contextlib
import io
import time
import warnings

import numpy as np

from . import sandbox
from .checks import PartAborted, StudentError
from .worker.invoke import describe_exception, execute
from .worker.protocol import Described, ProtocolError, decode, encode

_MISSING = object()


@contextlib.contextmanager
def quiet():
    """Silence the student's prints and NumPy warnings (stderr output zeroes an nbgrader cell)."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), \
            warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        yield


class LocalRunner:
    def __init__(self, namespace: dict, reference: dict):
        self.namespace, self.reference = namespace, reference

    @contextlib.contextmanager
    def part(self, name: str, oracles: list):
        """Swap in the reference versions of `oracles` (the earlier parts) while `name` is checked."""
        saved = {n: self.namespace.get(n, _MISSING) for n in oracles}
        self.namespace.update({n: self.reference[n] for n in oracles})
        try:
            yield True
        finally:
            for n, value in saved.items():
                if value is _MISSING:
                    self.namespace.pop(n, None)
                else:
                    self.namespace[n] = value

    def run(self, call):
        try:
            with quiet():
                value, given = execute(call, self.namespace)
        except (Exception, SystemExit) as exc:
            raise StudentError(describe_exception(exc)) from None
        try:
            return decode(encode(value)), given
        except ProtocolError as exc:
            raise StudentError(f"returned a value that cannot be graded: {exc}") from None


class SandboxRunner:
    """Runs a submission in the sandboxed worker: its cells first, then the suite's calls.

    A cell that hangs or crashes the notebook process is recorded, and the notebook is rebuilt
    by replaying the other cells. Every wait is bounded by the call or cell limit and by what
    is left of the submission's time budget. Oracle requests from the worker (the earlier
    parts, called by the student's code) are answered here from the reference.
    """

    ORACLE_BYTES = 2**20      # largest oracle request accepted
    ORACLE_INT = 4096         # largest integer (size) accepted in an oracle request

    def __init__(self, worker, suite, cells: list, limits):
        self.worker, self.suite, self.cells, self.limits = worker, suite, cells, limits
        self.end = time.monotonic() + limits.submission_seconds
        self.cell_log: list = [None] * len(cells)   # per cell: ok, error, timeout, crashed, skipped
        self.notes: list = []
        self.ready = False
        self.slow = False          # a cell timed out: later cells get the short limit
        self.seq = 0
        self.part_seq = None
        self.current = None        # index of the cell being run
        self.oracles: set = set()

    # -- cells ------------------------------------------------------------------------
    def start(self) -> None:
        """A notebook process with every cell run that has not hung or crashed it before."""
        while not self.ready:
            try:
                if not self.worker.alive:
                    self.worker.restart()
                self.worker.spawn()
                self._run_cells()
                self.ready = True
            except sandbox.Timeout:
                self._mark_current("timeout")
                self.slow = True
                self._kill_notebook()
            except (sandbox.NotebookDied, sandbox.WorkerDied):
                self._mark_current("crashed")
            if self.left() <= 0 and not self.ready:
                note = "the time limit was used up while running the notebook's cells"
                if note not in self.notes:
                    self.notes.append(note)
                return

    def _run_cells(self) -> None:
        for index, source in enumerate(self.cells):
            if self.cell_log[index] and self.cell_log[index][0] in ("timeout", "crashed", "skipped"):
                continue
            if self.left() <= 0:
                self.cell_log[index] = ("skipped", "time limit")
                continue
            self.current = index
            seconds = self.limits.cell_seconds_after_timeout if self.slow else self.limits.cell_seconds
            reply = self._ask({"op": "cell", "source": source}, seconds)
            if self.cell_log[index] is None:
                self.cell_log[index] = ("ok", "") if reply.get("ok") else ("error", str(reply.get("error", "")))

    def _mark_current(self, status: str) -> None:
        if self.current is not None:
            self.cell_log[self.current] = (status, "")
            self.current = None

    def _kill_notebook(self) -> None:
        try:
            self.worker.kill()
        except (sandbox.WorkerDied, sandbox.Timeout):
            self.worker.restart()

    # -- parts ------------------------------------------------------------------------
    @contextlib.contextmanager
    def part(self, name: str, oracles: list):
        if not self.ready:
            self.start()
        if not self.ready or self.left() <= 0:
            yield ("limit", f"not run: the submission's {self.limits.submission_seconds:g} s time limit was used up")
            return
        self.oracles = set(oracles)
        specs = [{"name": n, "kind": self.suite.kinds[n],
                  "methods": _public_methods(self.suite.reference[n])} for n in oracles]
        try:
            self.part_seq = self._send({"op": "part", "oracles": specs})
            self._await({"seq": self.part_seq, "event": "ready"}, self.limits.call_seconds + 10)
        except (sandbox.Timeout, sandbox.NotebookDied, sandbox.WorkerDied) as exc:
            self._recover(exc)
            yield ("crashed", "not run: the worker could not start this part")
            return
        try:
            yield True
        finally:
            self._end_part()

    def _end_part(self) -> None:
        if self.part_seq is None:
            return
        try:
            self.worker.send({"op": "end", "seq": self.part_seq})
            self._await({"seq": self.part_seq, "event": "part_end"}, self.limits.call_seconds)
        except sandbox.Timeout:
            self._kill_part()
        except (sandbox.NotebookDied, sandbox.WorkerDied) as exc:
            self._recover(exc)
        self.part_seq = None

    def _kill_part(self) -> None:
        try:
            self.worker.kill_part()
            self._await({"seq": self.part_seq, "event": "part_end"}, 5.0, budget=False)
        except (sandbox.Timeout, sandbox.NotebookDied, sandbox.WorkerDied) as exc:
            self._recover(exc)
        self.part_seq = None

    def _recover(self, exc) -> None:
        """The notebook (or the whole worker) is gone or stuck: rebuild it before the next part."""
        self.ready = False
        self.part_seq = None
        if isinstance(exc, sandbox.WorkerDied):
            self.worker.restart()
        else:
            self._kill_notebook()

    def run(self, call):
        deadline = self._deadline(self.limits.call_seconds)
        try:
            seq = self._send({"op": "invoke", "call": call})
            while True:
                size, message = self.worker.receive(deadline, self._build)
                if message.get("op") == "oracle":
                    reply = self._oracle(message) if size <= self.ORACLE_BYTES else \
                        {"error": f"the request of {size} bytes is too large for the reference"}
                    self.worker.send(reply, self._describe)
                elif message.get("seq") == seq:
                    return self._result(message)
                elif message.get("seq") == self.part_seq and message.get("event") == "part_end":
                    self.part_seq = None
                    raise PartAborted("crashed", f"{call.describe()} ended the process (exit status "
                                                 f"{message.get('status')}); the rest of this part was not run")
        except sandbox.Timeout:
            self._kill_part()
            limit = "the submission's time limit" if deadline >= self.end else f"{self.limits.call_seconds:g} s"
            raise PartAborted("timeout", f"{call.describe()} did not return within {limit}; "
                                         "the rest of this part was not run") from None
        except (sandbox.NotebookDied, sandbox.WorkerDied) as exc:
            self._recover(exc)
            raise PartAborted("crashed", f"{call.describe()} crashed the worker; the rest of this "
                                         "part was not run") from None

    @staticmethod
    def _result(message: dict):
        if "error" in message:
            raise StudentError(str(message["error"]))
        given = message.get("given")
        if "value" not in message or not isinstance(given, list) or \
                not all(isinstance(a, np.ndarray) for a in given):
            raise StudentError("sent back a malformed reply")
        return message["value"], given

    # -- oracles ----------------------------------------------------------------------
    def _oracle(self, message: dict) -> dict:
        try:
            _check_sizes(message, self.ORACLE_INT)
            with np.errstate(all="ignore"):
                value = self._evaluate(message)
            return {"value": value}
        except Exception as exc:  # the reference on arguments the student chose
            return {"error": f"the reference could not evaluate this call: {type(exc).__name__}: {exc}"}

    def _evaluate(self, message: dict):
        reference = self.suite.reference
        args, kwargs = tuple(message.get("args", ())), dict(message.get("kwargs", {}))
        if "fn" in message:
            name = message["fn"]
            if name not in self.oracles or self.suite.kinds[name] != "function":
                raise PermissionError(f"{name} is not available")
            return reference[name](*args, **kwargs)
        if "new" in message:
            name = message["new"]
            if name not in self.oracles or self.suite.kinds[name] != "class":
                raise PermissionError(f"{name} is not available")
            return dict(vars(reference[name](*args, **kwargs)))
        obj, method = message.get("obj"), message.get("method")
        if type(obj).__name__ not in self.oracles or method not in _public_methods(type(obj)):
            raise PermissionError("method not available")
        return getattr(obj, method)(*args, **kwargs)

    def _build(self, cls: str, attrs):
        """A reference object from attributes the worker sent (only classes of this part's oracles)."""
        if cls not in self.oracles or self.suite.kinds.get(cls) != "class" or not isinstance(attrs, dict):
            raise ProtocolError(f"unexpected object of class {cls}")
        obj = object.__new__(self.suite.reference[cls])
        obj.__dict__.update(attrs)
        return obj

    def _describe(self, obj):
        name = type(obj).__name__
        if self.suite.reference.get(name) is type(obj):
            return Described(name, dict(vars(obj)))
        return None

    # -- plumbing ---------------------------------------------------------------------
    def left(self) -> float:
        return self.end - time.monotonic()

    def _deadline(self, seconds: float) -> float:
        return min(time.monotonic() + seconds, self.end)

    def _send(self, message: dict) -> int:
        self.seq += 1
        self.worker.send({**message, "seq": self.seq})
        return self.seq

    def _ask(self, message: dict, seconds: float) -> dict:
        return self._await({"seq": self._send(message)}, seconds)

    def _await(self, expected: dict, seconds: float, budget: bool = True) -> dict:
        """The next message whose fields include `expected`; others are stale and dropped."""
        deadline = self._deadline(seconds) if budget else time.monotonic() + seconds
        while True:
            _, message = self.worker.receive(deadline, self._build)
            if all(message.get(k) == v for k, v in expected.items()):
                return message


def _public_methods(cls) -> list:
    return [name for name, value in vars(cls).items() if callable(value) and not name.startswith("_")]


def _check_sizes(value, limit: int, depth: int = 0) -> None:
    """Refuse oracle requests whose integers would make the reference allocate without bound."""
    if isinstance(value, bool):
        return
    if isinstance(value, (int, np.integer)) and abs(int(value)) > limit:
        raise ValueError(f"size {int(value)} is too large")
    if isinstance(value, dict):
        value = list(value.values())
    elif hasattr(value, "__dict__") and not isinstance(value, np.ndarray):
        value = list(vars(value).values())
    if isinstance(value, (list, tuple)):
        for item in value:
            _check_sizes(item, limit, depth + 1)
