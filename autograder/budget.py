"""Time limits charged from the scheduler's own accounting: a busy machine costs a submission nothing.

A wait for student code (a cell, a call, a part's start) is charged

    max(CPU time, wall time - time spent waiting for a CPU)

summed over every thread of the sandbox's process tree and the grading slot's own thread (which
evaluates the reference for oracle requests), read from the kernel's per-task scheduler
statistics (/proc/<pid>/task/<tid>/schedstat: time on a CPU, time runnable but waiting for one).
An infinite loop is charged its CPU time, code that sleeps or blocks its wall time, and what the
machine's other work takes from either is not charged: the same code costs the same on an idle
and on a busy machine. Student code cannot make a wait cheaper: threads it adds run on the same
core (the slot is pinned to one, and the sandbox may not move), so their CPU time is charged,
and a task that ends before it is seen takes its waiting time with it, which only adds to
`wall - waiting`.

A wall-clock backstop, `wall_factor` times the budget, ends a submission whose budget has not run
out when the machine starves it: `Starved`, the grader's problem, never the student's. Where the
kernel keeps no scheduler statistics, every wait is charged its wall time.
"""
import os
import threading
import time

_NS = 1e-9


class Timeout(Exception):
    """A wait used up its time."""


class Starved(Exception):
    """The wall-clock backstop ended a wait whose charged time was within its budget."""


class Meter:
    """Scheduler statistics of the tasks of a process tree (the sandbox under `root()`) and of
    the calling thread, summed. Tasks are found by `walk()`; a reading re-reads the ones found,
    through file descriptors kept open (about 1 µs a task). A task that has ended keeps its last
    reading in the sums, and a task found later counts from 0 (it started after earlier readings)."""

    def __init__(self, root):
        self.root = root          # () -> the pid at the top of the tree (the worker may restart)
        self.live: dict = {}      # tid -> [fd, run ns, waiting ns] of the tasks not known to have ended
        self.run = self.waiting = 0   # ns, over every task found, ended ones included
        me = threading.get_native_id()
        self.available = self._track(me, f"/proc/self/task/{me}")
        self.walk()

    def walk(self) -> None:
        """Find the tasks of the tree that started since the last walk."""
        if not self.available:
            return
        for pid in _tree(self.root()):
            try:
                tids = os.listdir(f"/proc/{pid}/task")
            except OSError:
                continue
            for tid in map(int, tids):
                if tid not in self.live:
                    self._track(tid, f"/proc/{pid}/task/{tid}")

    def _track(self, tid: int, folder: str) -> bool:
        try:
            fd = os.open(f"{folder}/schedstat", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return False
        self.live[tid] = [fd, 0, 0]
        return self._read(tid)

    def _read(self, tid: int) -> bool:
        task = self.live[tid]
        try:
            run, waiting = map(int, os.pread(task[0], 64, 0).split()[:2])
        except (OSError, ValueError):
            os.close(task[0])
            del self.live[tid]
            return False
        self.run += run - task[1]
        self.waiting += waiting - task[2]
        task[1], task[2] = run, waiting
        return True

    def reading(self) -> tuple:
        """(monotonic time, run ns, waiting ns) summed over the tasks found."""
        for tid in list(self.live):
            self._read(tid)
        return time.monotonic(), self.run, self.waiting

    def charged(self, since: tuple, walk: bool = False) -> float:
        """Seconds charged since the reading `since`."""
        if walk:
            self.walk()
        now, run, waiting = self.reading()
        wall = now - since[0]
        if not self.available:
            return wall
        return max((run - since[1]) * _NS, wall - (waiting - since[2]) * _NS, 0.0)

    def close(self) -> None:
        for fd, _, _ in self.live.values():
            os.close(fd)
        self.live.clear()


def _tree(root: int) -> list:
    """`root` and its descendants (each thread's children file lists the children it made)."""
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                    todo += map(int, f.read().split())
            except OSError:
                continue
    return found


class Clock:
    """A submission's time budget: `seconds` charged in all, each wait within its own limit too,
    and no wait longer than `wall_factor` times its budget in wall time."""

    def __init__(self, meter: Meter | None, seconds: float, wall_factor: float):
        self.meter, self.seconds, self.wall_factor = meter, seconds, wall_factor
        self.spent = 0.0

    def left(self) -> float:
        return self.seconds - self.spent

    def wait(self, receive, limit: float):
        """`receive(deadline)` (a monotonic deadline; raises `timeout` when it passes) until it
        returns, charged to this budget. Raises Timeout when the wait has used `limit` (or what is
        left of the submission's budget), Starved when the backstop ends it first."""
        budget = min(limit, self.left())
        since = self.meter.reading() if self.meter else (time.monotonic(), 0, 0)
        backstop = since[0] + self.wall_factor * max(budget, 0.0)
        charged = 0.0
        try:
            while True:
                # what is charged grows no faster than the wall clock (one core): wait at least
                # until it could have reached the budget, then look at what it really is
                deadline = min(time.monotonic() + budget - charged, backstop)
                try:
                    return receive(deadline)
                except Timeout:
                    charged = self._charged(since, walk=True)
                    if charged >= budget:
                        raise
                    if time.monotonic() >= backstop:
                        raise Starved(f"{budget:.3g} s of time took over {self.wall_factor * budget:.3g} s "
                                      "of wall time") from None
        finally:
            self.spent += self._charged(since)

    def _charged(self, since: tuple, walk: bool = False) -> float:
        return self.meter.charged(since, walk) if self.meter else time.monotonic() - since[0]
