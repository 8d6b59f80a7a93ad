"""Private namespaces for one submission, and for each of its parts, without privileges.

A process that calls `enter()` gets its own user, mount, IPC, network and PID namespaces (the
next child it forks is PID 1 there), with fresh, empty tmpfs mounts on the scratch directories
and a loopback device of its own: sockets, their ports and the kernel state they leave (a
TIME_WAIT entry in /proc/net/tcp) belong to one context.
When that PID 1 exits, the kernel kills every process left in the namespace, and the scratch
mounts vanish with the last process that sees them: nothing of one context can outlive it, and
nothing needs to be found and cleaned. A part, which runs inside a submission, takes all but
the PID namespace: the submission's PID 1 kills what the part leaves when it ends.
`drop_capabilities()` then removes the capabilities the new user namespace granted, before any
student code runs.

Unprivileged user namespaces are needed; `available()` probes for them once (the grader
falls back to killing descendants and emptying scratch directories where they are missing).

Namespaces do not separate what two sandboxes can observe of the files they both read (the
Python installation): watching who opens a file (inotify, dnotify), locking or leasing it,
evicting its pages from the page cache and asking which are cached (fadvise, madvise,
preadv2's flags such as RWF_NOWAIT, mincore, cachestat), and kernel keys make fast channels between
submissions graded side by side; moving to another core (sched_setaffinity, or io_uring's
worker threads) lets one slot's student code starve the other's; and network devices, which
student code could make in namespaces of its own (netlink, or the ioctls that make bridges, VLANs
and tunnels), are made and removed under one lock of the whole machine that every part takes
to start (thousands of them held another slot's parts up for seconds). `restrict_syscalls()`
makes those calls, and perf events and BPF, fail with EPERM for the zygote and everything it
forks.
"""
import ctypes
import errno
import fcntl
import os
import platform
import socket
import struct

CLONE_NEWNS, CLONE_NEWIPC = 0x00020000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
_SIOCSIFFLAGS, _IFF_UP = 0x8914, 0x1
_PR_SET_PDEATHSIG, _PR_CAPBSET_DROP, _PR_SET_DUMPABLE = 1, 24, 4
_CAP_LAST = 63
_SYS_CAPSET = {"x86_64": 126, "aarch64": 91}.get(platform.machine())
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
_MS_NOSUID, _MS_NODEV, _MS_BIND, _MS_REC = 2, 4, 4096, 16384

_libc = ctypes.CDLL(None, use_errno=True)


class IsolationError(OSError):
    pass


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise IsolationError(errno, f"{what}: {os.strerror(errno)}")


def enter(scratch: list, tmp_bytes: int, keep: list = (), pid_namespace: bool = True) -> None:
    """Move this process into new user, mount, IPC, network and (unless not `pid_namespace`)
    PID namespaces (the PID namespace takes effect for its children) and mount an empty tmpfs
    on each directory of `scratch`; the directories of `keep` below them (a Python installation
    bound under /tmp) stay visible."""
    uid, gid = os.getuid(), os.getgid()
    _libc.prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0)     # /proc/self/uid_map is writable only so
    flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWNET | (CLONE_NEWPID if pid_namespace else 0)
    _check(_libc.unshare(flags), "unshare")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as f:
            f.write(text)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:   # lo is down in a new namespace
        fcntl.ioctl(probe, _SIOCSIFFLAGS, struct.pack("16sh22x", b"lo", _IFF_UP))
    kept = [(path, os.open(path, os.O_PATH | os.O_DIRECTORY)) for path in keep if os.path.isdir(path)]
    options = f"size={int(tmp_bytes)},mode=1777".encode()
    for path in scratch:
        if os.path.isdir(path):
            _check(_libc.mount(b"tmpfs", path.encode(), b"tmpfs", _MS_NOSUID | _MS_NODEV, options),
                   f"mount tmpfs on {path}")
    for path, fd in kept:
        os.makedirs(path, exist_ok=True)
        _check(_libc.mount(f"/proc/self/fd/{fd}".encode(), path.encode(), None, _MS_BIND | _MS_REC, None),
               f"bind {path}")
        os.close(fd)
    undumpable()


def drop_capabilities() -> None:
    """No capabilities left, now or after exec (no_new_privs is set by the sandbox already)."""
    for cap in range(_CAP_LAST + 1):
        _libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)       # EINVAL past the kernel's last cap
    if _SYS_CAPSET is not None:
        header = (ctypes.c_uint32 * 2)(_LINUX_CAPABILITY_VERSION_3, 0)
        data = (ctypes.c_uint32 * 6)()
        _check(_libc.syscall(_SYS_CAPSET, header, data), "capset")


def die_with_parent() -> None:
    """SIGKILL this process when the process that forked it exits (closing the race first)."""
    parent = os.getppid()
    _libc.prctl(_PR_SET_PDEATHSIG, 9, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


def undumpable() -> None:
    """No ptrace and no /proc/<pid>/mem of this process by its siblings or children."""
    _libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)


def available(scratch: list, tmp_bytes: int, keep: list = ()) -> bool:
    """Whether `enter` works here for a submission and, inside it, for a part (probed in
    throw-away children). As root, the part's cannot: mapping uid 0 into a nested user
    namespace takes CAP_SETFCAP, which the submission dropped (Linux 5.12)."""
    def part():
        enter(scratch, tmp_bytes, keep, pid_namespace=False)
        drop_capabilities()

    def submission():
        enter(scratch, tmp_bytes, keep)
        drop_capabilities()
        if not _in_child(part):
            raise IsolationError(errno.EPERM, "a part cannot have namespaces of its own")
    return _in_child(submission)


def _in_child(action) -> bool:
    """Whether `action` runs in a forked child without raising."""
    pid = os.fork()
    if pid == 0:
        try:
            action()
            os._exit(0)
        except BaseException:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


# System calls refused to student code, per machine: (AUDIT_ARCH, {name: number}, and for calls
# refused only with some arguments, {name: (number, the argument's index, refused values, or
# None: any but 0)}).
_FCNTL = (5, 6, 7, 36, 37, 38, 1024, 1025, 1026)   # record locks (F_*LK*, F_OFD_*), leases, F_NOTIFY
_MADVISE = (20, 21)                                 # MADV_COLD, MADV_PAGEOUT: evict file pages
_NETLINK = (16,)                                    # AF_NETLINK: how network devices are made
# the ioctls that make network devices: bridges (SIOC[GS]IFBR, SIOCBR*), VLANs (SIOCSIFVLAN) and
# tunnels (SIOCDEVPRIVATE's range, SIOCADDTUNNEL among them)
_DEVICE_IOCTLS = (0x8940, 0x8941, 0x89A0, 0x89A1, 0x89A2, 0x89A3, 0x8983, *range(0x89F0, 0x8A00))
_SYSCALLS = {
    "x86_64": (0xC000003E, {"inotify_init": 253, "inotify_init1": 294, "fanotify_init": 300, "flock": 73,
                            "fadvise64": 221, "mincore": 27, "cachestat": 451,
                            "sched_setaffinity": 203, "io_uring_setup": 425, "add_key": 248,
                            "request_key": 249, "keyctl": 250, "perf_event_open": 298, "bpf": 321},
               {"fcntl": (72, 1, _FCNTL), "madvise": (28, 2, _MADVISE), "preadv2": (327, 5, None),
                "pwritev2": (328, 5, None), "socket": (41, 0, _NETLINK), "ioctl": (16, 1, _DEVICE_IOCTLS)}),
    "aarch64": (0xC00000B7, {"inotify_init1": 26, "fanotify_init": 262, "flock": 32, "fadvise64": 223,
                             "mincore": 232, "cachestat": 451,
                             "sched_setaffinity": 122, "io_uring_setup": 425, "add_key": 217,
                             "request_key": 218, "keyctl": 219, "perf_event_open": 241, "bpf": 280},
                {"fcntl": (25, 1, _FCNTL), "madvise": (233, 2, _MADVISE), "preadv2": (286, 5, None),
                 "pwritev2": (287, 5, None), "socket": (198, 0, _NETLINK), "ioctl": (29, 1, _DEVICE_IOCTLS)}),
}.get(platform.machine())
_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2
_LD, _JEQ, _JGE, _RET = 0x20, 0x15, 0x35, 0x06           # BPF_LD|W|ABS, BPF_JMP|JEQ|K, |JGE|K, BPF_RET|K
_ALLOW, _REFUSE = 0x7FFF0000, 0x00050000 | errno.EPERM   # SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO


def seccomp_program() -> bytes | None:
    """The classic BPF program of `restrict_syscalls` (None on other machines). It reads
    struct seccomp_data: nr at offset 0, arch at 4, the low half of args[i] at 16 + 8 i.
    Another calling convention (32-bit, x32) is refused whole."""
    if _SYSCALLS is None:
        return None
    arch, refused, by_argument = _SYSCALLS
    code = [(_LD, 0, 0, 4), (_JEQ, 0, "refuse", arch), (_LD, 0, 0, 0), (_JGE, "refuse", 0, 0x40000000)]
    code += [(_JEQ, "refuse", 0, number) for number in refused.values()]
    for number, index, values in by_argument.values():
        test = [(_JEQ, 0, "refuse", 0)] if values is None else [(_JEQ, "refuse", 0, v) for v in values]
        block = [(_LD, 0, 0, 16 + 8 * index), *test, (_RET, 0, 0, _ALLOW)]
        code += [(_JEQ, 0, len(block), number), *block]
    code += [(_RET, 0, 0, _ALLOW), (_RET, 0, 0, _REFUSE)]
    refuse = len(code) - 1

    def offset(i, jump):
        return refuse - i - 1 if jump == "refuse" else jump
    return b"".join(struct.pack("=HBBI", op, offset(i, jt), offset(i, jf), k) for i, (op, jt, jf, k) in enumerate(code))


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def restrict_syscalls() -> bool:
    """Install the filter for this process and every process it forks from now on, for good.
    False where the machine is not one of `_SYSCALLS`'s."""
    program = seccomp_program()
    if program is None:
        return False
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _Program(len(program) // 8, ctypes.addressof(buffer))
    _check(_libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    _check(_libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0), "seccomp")
    return True
