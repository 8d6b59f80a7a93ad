"""A memory cgroup per grading slot: one limit on every page the slot's sandbox holds.

`RLIMIT_AS` caps each process's address space, and pages that no process maps escape it: a
memfd, or files on a tmpfs that student code mounted in a user namespace of its own, held
gigabytes past the limit. The kernel charges those pages to the cgroup of the process that
made them, as it charges anonymous memory and page tables. A slot that goes over its limit
has its own processes killed by the kernel; the slot beside it and the machine keep theirs.

Creating one needs a writable memory controller: cgroup v1's memory hierarchy, or cgroup v2
with the memory controller enabled for the new group (as root, usually). Elsewhere `create`
returns None and `RLIMIT_AS` is the only memory limit.
"""
import os
import signal
import time
from pathlib import Path


class MemoryGroup:
    def __init__(self, path: Path):
        self.path = path

    def add(self, pid: int) -> None:
        """Move process `pid` (and what it starts from then on) into the group."""
        (self.path / "cgroup.procs").write_text(str(pid))

    def remove(self, attempts: int = 500) -> None:
        """Remove the group once its processes are gone: they are being killed, and whatever is
        still in it after a moment (a process that escaped the worker's kill) is killed here.
        Gives up after `attempts` tries, 20 ms apart."""
        for attempt in range(attempts):
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                if attempt % 50 == 49:
                    self._kill()
                time.sleep(0.02)

    def _kill(self) -> None:
        try:
            pids = (self.path / "cgroup.procs").read_text().split()
        except OSError:
            return
        for pid in pids:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except (OSError, ValueError):
                pass


def create(name: str, limit_bytes: int) -> MemoryGroup | None:
    """A new group `name` whose processes share `limit_bytes` of memory and no swap, or None."""
    for parent, version in _parents():
        path = parent / name
        _remove_orphans(parent)
        try:
            path.mkdir(exist_ok=True)
            if version == 2:
                (path / "memory.max").write_text(str(limit_bytes))
                _write_if_present(path / "memory.swap.max", "0")
            else:
                (path / "memory.limit_in_bytes").write_text(str(limit_bytes))
                _write_if_present(path / "memory.memsw.limit_in_bytes", str(limit_bytes))
            return MemoryGroup(path)
        except OSError:
            try:
                path.rmdir()
            except OSError:
                pass
    return None


def _remove_orphans(parent: Path) -> None:
    """Remove the groups of slots that were killed (SIGKILL leaves a slot no time to remove its
    own): named attnlab-<slot's pid>-<uid>, their slot gone or a zombie. What is still in one is
    what the killed slot's sandbox left, still dying: it is killed, and waited for a second at most."""
    for group in parent.glob("attnlab-*-*"):
        creator = group.name.split("-")[1]
        if creator.isdigit() and not _alive(int(creator)):
            orphan = MemoryGroup(group)
            orphan._kill()
            orphan.remove(attempts=50)


def _alive(pid: int) -> bool:
    """Whether process `pid` runs: a killed slot stays a zombie until init reaps it."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def _write_if_present(path: Path, value: str) -> None:
    """Swap limits exist only where the kernel accounts swap."""
    try:
        path.write_text(value)
    except FileNotFoundError:
        pass


def _parents():
    """(folder, cgroup version) where a group with a memory limit may be made: v1's memory
    hierarchy below this process's group; in v2 (where a group with processes cannot hand a
    controller to its children) the parent of this process's group, then the root."""
    try:
        mounts = [line.split() for line in Path("/proc/self/mounts").read_text().splitlines()]
        own = [line.split(":", 2) for line in Path("/proc/self/cgroup").read_text().splitlines()]
    except OSError:
        return
    for _, where, kind, options, *_ in mounts:
        if kind == "cgroup" and "memory" in options.split(","):
            path = next((p for _, names, p in own if "memory" in names.split(",")), None)
            if path is not None:
                yield Path(where) / path.lstrip("/"), 1
        elif kind == "cgroup2":
            path = next((p for number, names, p in own if number == "0" and not names), None)
            candidates = [Path(where) / path.lstrip("/")] if path not in (None, "/") else []
            for folder in [c.parent for c in candidates] + [Path(where)]:
                if _enabled(folder):
                    yield folder, 2


def _enabled(folder: Path) -> bool:
    """Whether groups made in `folder` (v2) get the memory controller."""
    try:
        return "memory" in (folder / "cgroup.subtree_control").read_text().split()
    except OSError:
        return False
