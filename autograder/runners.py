"""Runners execute the suite's calls against student code.

`LocalRunner` works in this process, on a namespace (a notebook's globals, a module): it runs
the nbgrader hidden-test cells and the project's mutant bank. It is not a security boundary.
`SandboxRunner` is the runner of `attnlab grade`: student code runs in the sandboxed worker and
only values come back. Both pass results through the wire format, so they judge the same values.
"""
import contextlib
import io
import warnings

import numpy as np

from . import budget, sandbox
from .references import References
from .worker.invoke import describe_exception, execute, inputs as _inputs
from .worker.protocol import ProtocolError, decode, encode
from .worker.rebind import rebind

_UNASKED = "a message that answers nothing the grader asked"


class StudentError(Exception):
    """The student's code raised, or its result cannot be read."""


class PartAborted(Exception):
    """The part cannot go on: a timeout, a crash or a limit of the worker."""

    def __init__(self, status: str, message: str):
        super().__init__(message)
        self.status = status


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
        undo = rebind(self.namespace, {n: self.reference[n] for n in oracles})
        try:
            yield True
        finally:
            for action in reversed(undo):
                action()

    def run(self, call, inputs: bool = False):
        try:
            with quiet():
                value, given = execute(call, self.namespace)
        except (Exception, SystemExit) as exc:
            raise StudentError(describe_exception(exc)) from None
        try:
            return decode(encode(value)), given if inputs else []
        except ProtocolError as exc:
            raise StudentError(f"returned a value that cannot be graded: {exc}") from None

    def run_many(self, calls, inputs: bool = False) -> tuple:
        results = []
        for call in calls:
            try:
                results.append(self.run(call, inputs))
            except StudentError as exc:
                return results, exc
        return results, None


class SandboxRunner:
    """Runs a submission in the sandboxed worker: its cells first, then the suite's calls.

    The submission runs in a context of its own (`Worker.spawn`), which is ended whole when a
    cell or a call hangs or crashes, and when grading is over (`finish`). A cell that hung or
    crashed is recorded, and the context is rebuilt by replaying the other cells. Every wait is
    bounded by the call or cell limit and by what is left of the submission's time budget,
    cleanup included, charged as `budget` says: what a busy machine takes is not charged. When
    the machine starves a wait past its wall-clock backstop, grading stops (`starved` says why):
    the submission is not graded, rather than graded lower. The earlier parts that the student's
    code calls are answered by `References`. Anything on the channel that is not the reply awaited
    can only come from the submission's own code: it ends the part with status `protocol`.
    """

    TEXT = 400                # longest student-controlled text kept (an exception message)

    def __init__(self, worker, suite, cells: list, limits):
        self.worker, self.suite, self.cells, self.limits = worker, suite, cells, limits
        self.meter = budget.Meter(lambda: worker.process.pid if worker.process else 0)
        self.clock = budget.Clock(self.meter, limits.submission_seconds, limits.wall_factor)
        self.starved = ""          # why the machine could not grade this submission in time
        self.cell_log: list = [None] * len(cells)   # per cell: (status, error text)
        self.notes: list = []
        self.ready = False
        self.slow = False          # a cell timed out: later cells get the short limit
        self.seq = 0
        self.part_seq = None
        self.current = None        # index of the cell being run
        self.reference = References(suite)

    # -- cells ------------------------------------------------------------------------
    def start(self) -> None:
        """A notebook process with every cell run that has not hung or crashed it before, and
        nothing else left running from the cells."""
        while not self.ready:
            try:
                if not self.worker.alive:
                    self.worker.restart()
                self.worker.spawn()
                self.meter.walk()       # the notebook process: its time counts from now
                self._run_cells()
                self.worker.seal()
                self.ready = True
            except sandbox.Timeout:
                self._mark_current("timeout")
                self.slow = True
                self._end_context()
            except (sandbox.NotebookDied, sandbox.WorkerDied, sandbox.Malformed) as exc:
                self._mark_current("protocol" if isinstance(exc, sandbox.Malformed) else "crashed")
                self._end_context()
            except budget.Starved as exc:
                self._starve(exc)
                return
            if self.left() <= 0 and not self.ready:
                note = "the time limit was used up while running the notebook's cells"
                if note not in self.notes:
                    self.notes.append(note)
                return

    def _run_cells(self) -> None:
        for index, source in enumerate(self.cells):
            if self.cell_log[index] and self.cell_log[index][0] in ("timeout", "crashed", "skipped", "protocol"):
                continue
            if self.left() <= 0:
                self.cell_log[index] = ("skipped", "time limit")
                continue
            self.current = index
            seconds = self.limits.cell_seconds_after_timeout if self.slow else self.limits.cell_seconds
            reply = self._ask({"op": "cell", "source": source}, seconds)
            if self.cell_log[index] is None:
                kind = reply.get("kind") if reply.get("kind") in ("memory", "syntax") else "error"
                self.cell_log[index] = ("ok", "") if reply.get("ok") is True else (kind, self._text(reply.get("error")))
        self.current = None

    def _mark_current(self, status: str) -> None:
        if self.current is not None:
            self.cell_log[self.current] = (status, "")
            self.current = None

    def _end_context(self) -> None:
        """Kill everything of this submission; the next part starts from a replay of the cells."""
        self.ready = False
        self.part_seq = None
        try:
            if self.worker.alive:
                self.worker.kill()
                return
        except (sandbox.WorkerDied, sandbox.Timeout):
            pass
        self.worker.restart()

    def finish(self) -> None:
        """End the submission's context (its cost is part of the submission's time)."""
        try:
            if self.worker.data is not None or self.ready:
                self._end_context()
        finally:
            self.meter.close()

    def _starve(self, exc: budget.Starved) -> None:
        self.starved = f"the machine was too busy: {exc}"
        self._end_context()

    # -- parts ------------------------------------------------------------------------
    @contextlib.contextmanager
    def part(self, name: str, oracles: list):
        if not self.ready and not self.starved:
            self.start()
        if self.starved:
            yield ("busy", f"not run: {self.starved}")
            return
        if not self.ready or self.left() <= 0:
            yield ("limit", f"not run: the submission's {self.limits.submission_seconds:g} s time limit was used up")
            return
        specs = self.reference.serve(oracles)
        try:
            self.part_seq = self._send({"op": "part", "oracles": specs})
            self._await({"seq": self.part_seq, "event": "ready"}, self.limits.call_seconds + 10)
            self.meter.walk()           # the part process: its time counts from now
        except (sandbox.Timeout, sandbox.NotebookDied, sandbox.WorkerDied, sandbox.Malformed, PartAborted):
            self._end_context()
            yield ("crashed", "not run: the worker could not start this part")
            return
        except budget.Starved as exc:
            self._starve(exc)
            yield ("busy", f"not run: {self.starved}")
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
            self.part_seq = None
        except (sandbox.Timeout, sandbox.NotebookDied, sandbox.WorkerDied, sandbox.Malformed, PartAborted):
            self._end_context()
        except budget.Starved as exc:
            self._starve(exc)

    def run(self, call, inputs: bool = False):
        results, error = self.run_many([call], inputs)
        if error:
            raise error
        return results[0]

    def run_many(self, calls, inputs: bool = False) -> tuple:
        """Independent calls, sent in one message: the worker runs them in turn and replies to
        each as it returns, and stops at the first that raises. Each call has the call limit of
        its own. (the results until the first failure: (value, the copies of the call's input
        arrays after it if `inputs`, else []); its StudentError or None)"""
        calls, results = list(calls), []
        seq = self._send_calls(calls, inputs)
        for index, call in enumerate(calls):
            message = self._reply(seq, index, call)
            try:
                results.append(self._result(call, message, inputs))
            except StudentError as exc:
                if "error" not in message:          # the worker goes on: read its other replies
                    for later in range(index + 1, len(calls)):
                        self._reply(seq, later, calls[later])
                return results, exc
        return results, None

    def _send_calls(self, calls: list, inputs: bool) -> int:
        try:
            return self._send({"op": "invoke", "calls": calls, "inputs": inputs})
        except (sandbox.NotebookDied, sandbox.WorkerDied):
            self._end_context()
            raise PartAborted("crashed", f"{calls[0].describe()} crashed the worker; the rest of this "
                                         "part was not run") from None

    def _reply(self, seq: int, index: int, call):
        """The worker's reply to call `index` of request `seq`, answering the oracle requests
        the call makes meanwhile."""
        def receive(deadline: float) -> dict:
            while True:
                size, message = self.worker.receive(deadline, self.reference.build)
                if message.get("op") != "oracle":
                    return message
                self.worker.send(self.reference.answer(message, size), self.reference.describe)
        limit = min(self.limits.call_seconds, self.left())
        try:
            message = self.clock.wait(receive, self.limits.call_seconds)
            if message.get("seq") == seq and message.get("i") == index and "event" not in message:
                return message
            if message.get("seq") == self.part_seq and message.get("event") == "part_end":
                self.part_seq = None
                raise PartAborted("crashed", f"{call.describe()} ended the process (exit status "
                                             f"{message.get('status')}); the rest of this part was not run")
            raise sandbox.Malformed(_UNASKED)
        except sandbox.Timeout:
            self._end_context()
            said = "the submission's time limit" if limit < self.limits.call_seconds else f"{self.limits.call_seconds:g} s"
            raise PartAborted("timeout", f"{call.describe()} did not return within {said}; "
                                         "the rest of this part was not run") from None
        except budget.Starved as exc:
            self._starve(exc)
            raise PartAborted("busy", f"{call.describe()} was not graded: {self.starved}") from None
        except sandbox.Malformed as exc:
            self._end_context()
            raise PartAborted("protocol", f"during {call.describe()} the submission's code wrote to the "
                                          f"grader's channel ({exc}); the rest of this part was not run") from None
        except (sandbox.NotebookDied, sandbox.WorkerDied):
            self._end_context()
            raise PartAborted("crashed", f"{call.describe()} crashed the worker; the rest of this "
                                         "part was not run") from None

    def _result(self, call, message: dict, inputs: bool):
        if "error" in message:
            if message.get("kind") == "memory":
                raise PartAborted("memory", f"{call.describe()} ran out of memory (the limit is "
                                            f"{self.limits.memory_bytes / 2**20:g} MiB); the rest of "
                                            "this part was not run")
            raise StudentError(self._text(message["error"]))
        given = message.get("given")
        if "value" not in message or not isinstance(given, list) or \
                not all(isinstance(a, np.ndarray) for a in given) or len(given) != (len(_inputs(call)) if inputs else 0):
            raise StudentError("sent back a malformed reply")
        return message["value"], given

    def _text(self, text) -> str:
        """Student-controlled text, bounded (it reaches the feedback)."""
        text = text if isinstance(text, str) else ""
        return text if len(text) <= self.TEXT else text[:self.TEXT] + "..."

    # -- plumbing ---------------------------------------------------------------------
    def left(self) -> float:
        """Seconds left of the submission's budget."""
        return self.clock.left()

    def _send(self, message: dict) -> int:
        self.seq += 1
        self.worker.send({**message, "seq": self.seq})
        return self.seq

    def _ask(self, message: dict, seconds: float) -> dict:
        return self._await({"seq": self._send(message)}, seconds)

    def _await(self, expected: dict, seconds: float) -> dict:
        """The next message, which must have the fields of `expected`: the channel is this
        submission's alone, so anything else was written by its code (`Malformed`)."""
        _, message = self.clock.wait(lambda deadline: self.worker.receive(deadline, self.reference.build), seconds)
        if not all(message.get(k) == v for k, v in expected.items()):
            raise sandbox.Malformed(_UNASKED)
        return message
