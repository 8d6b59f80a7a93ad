"""One writer at a time per assignment: `attnlab grade`, `feedback`, `report` and `serve`.

Each of them writes what every other one reads (submitted/ by collecting, the gradebook, the
autograded/ files, the grades table, the feedback pages), so each holds the assignment's lock,
`.attnlab/<assignment>.lock`, while it does: `attnlab grade` for its whole run, the service for
one collection or one batch of recordings at a time. The service also holds the course's lock
`serve` while it runs: one service per course. A lock is the kernel's (a POSIX record
lock): a holder that dies, even by SIGKILL, releases it, and the processes it forks (grading
slots) never hold it. Within one process it is reentrant.
"""
import errno
import fcntl
import os
import sys
from contextlib import contextmanager
from pathlib import Path

_held: dict = {}        # path -> [file descriptor, depth] of the locks this process holds


class Busy(Exception):
    """Another process holds the lock (`holder` says which)."""

    def __init__(self, name: str, holder: str):
        super().__init__(f"{name} is in use by {holder}")
        self.holder = holder


def lock_path(root: Path, name: str) -> Path:
    return Path(root) / ".attnlab" / f"{name}.lock"


@contextmanager
def hold(root: Path, name: str, holder: str, wait: bool = True):
    """Hold the lock `name` (an assignment's) of the course at `root`. Held by another process:
    with `wait`, say so in one line and wait; without, raise Busy. `holder` names this process's
    use of it."""
    path = lock_path(root, name)
    if str(path) in _held:
        _held[str(path)][1] += 1
    else:
        _held[str(path)] = [_acquire(path, holder, wait), 1]
    try:
        yield
    finally:
        entry = _held[str(path)]
        entry[1] -= 1
        if not entry[1]:
            del _held[str(path)]
            os.close(entry[0])      # closing releases it


def _acquire(path: Path, holder: str, wait: bool) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EACCES, errno.EAGAIN):
                raise
            other = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "another program"
            if not wait:
                raise Busy(path.stem, other) from None
            print(f"attnlab: waiting for {other}, which is writing the grades of {path.stem}", file=sys.stderr)
            fcntl.lockf(fd, fcntl.LOCK_EX)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{holder} (pid {os.getpid()})\n".encode(), 0)
        return fd
    except BaseException:
        os.close(fd)
        raise
