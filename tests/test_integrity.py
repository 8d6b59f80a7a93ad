"""Integrity between students: hostile submissions graded in one batch with honest ones.

Each batch is graded by `attnlab grade`, once with one slot (the attackers and the honest
students take turns in the same worker, in the order of their names) and once with two (the
honest students also share the machine with an attacker in the other slot). The honest
students' scores and statuses are asserted exactly. Canaries are attackers that earn points
only if they can see something another submission, or an earlier part, left behind.
"""
import json

import nbformat
import pytest

from autograder import examples, notebooks
from conftest import ASSIGNMENT, ROOT, copy_course, orphan_memory_groups, run_tool

RELEASE = notebooks.read(ROOT / "assignments" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
SOLVED = {k: notebooks.without_markers(v) for k, v in
          notebooks.answer_cells(notebooks.read(ROOT / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")).items()}
SOFTMAX = SOLVED["softmax"]
STUB = "def {name}(*args, **kwargs):\n    raise NotImplementedError()\n"

# A daemon that outlives its cell: double fork, new session, and a first thread that exits
# while the second goes on (the process then looks like a zombie to a scan of /proc).
DAEMON = '''
import ctypes, os, sys, threading

pytestmark = pytest.mark.full     # the full tier: the integrity batch
def _daemonise(body):
    if os.fork():
        return
    os.setsid()
    if os.fork():
        os._exit(0)
    threading.Thread(target=body).start()
    ctypes.CDLL(None).pthread_exit(None)
'''

# Forges replies on every socket it holds: the grader must never read them for someone else.
FORGER = DAEMON + '''
def _forge():
    import socket, time
    import numpy as np
    from worker.protocol import Channel, encode
    socks = []
    for fd in range(3, 64):
        try:
            socks.append(Channel(socket.socket(fileno=os.dup(fd))))
        except OSError:
            pass
    junk = [encode({"seq": n, "value": np.zeros(3), "given": []}) for n in range(1, 300)]
    junk += [encode({"seq": n, "event": "ready"}) for n in range(1, 300)]
    end = time.time() + 40
    while time.time() < end:
        for sock in socks:
            for message in junk:
                try:
                    sock.send(message)
                except OSError:
                    break
        time.sleep(0.02)
_daemonise(_forge)
'''

# Kills every process it can signal, over and over.
KILLER = DAEMON + '''
def _kill():
    import signal, time
    end = time.time() + 40
    while time.time() < end:
        try:
            os.kill(-1, signal.SIGKILL)
        except OSError:
            pass
        time.sleep(0.005)
_daemonise(_kill)
'''

# Records what arrives on its sockets (the next student's cells) and leaves it in the scratch
# space, in a directory its owner made unreadable.
RECORDER = DAEMON + '''
def _record():
    import socket, time
    socks = []
    for fd in range(3, 64):
        try:
            s = socket.socket(fileno=os.dup(fd))
            s.setblocking(False)
            socks.append(s)
        except OSError:
            pass
    end = time.time() + 40
    n = 0
    while time.time() < end:
        for s in socks:
            try:
                data = s.recv(1 << 20)
            except OSError:
                continue
            for root in ("/tmp", "/dev/shm"):
                try:
                    os.makedirs(f"{root}/.rec", exist_ok=True)
                    with open(f"{root}/.rec/{n}", "wb") as f:
                        f.write(data)
                    os.chmod(f"{root}/.rec", 0o000)
                except OSError:
                    pass
            n += 1
        time.sleep(0.005)
_daemonise(_record)
'''

# Replays recorded cells: gets every point that the recorded student got, if anything leaked.
REPLAYER = '''
import os, re
for _root in ("/tmp", "/dev/shm"):
    _dir = f"{_root}/.rec"
    try:
        os.chmod(_dir, 0o700)
        _names = os.listdir(_dir)
    except OSError:
        continue
    for _name in _names:
        _text = open(f"{_dir}/{_name}", "rb").read().decode("utf-8", "replace")
        for _source in re.findall(r'"source": "((?:[^"\\\\]|\\\\.)*)"', _text):
            try:
                exec(__import__("json").loads(f'"{_source}"'), globals())
            except Exception:
                pass
'''

# Fills the process limit with sleepers and keeps them while its cells run.
HOARDER = '''
import os, time
_kids = []
for _ in range(500):
    try:
        _pid = os.fork()
    except OSError:
        break
    if _pid == 0:
        time.sleep(30)
        os._exit(0)
    _kids.append(_pid)
time.sleep(4.5)
'''

# A message that broke the old decoder with something other than ProtocolError.
MALFORMED = '''
def _write_malformed():
    import os, socket, struct
    head = b'{"t": "rng", "seed": 1e400}'
    body = struct.pack("<Q", len(head)) + head
    packet = struct.pack("<IB", 7, 0) + body
    for fd in range(3, 64):
        try:
            s = socket.socket(fileno=os.dup(fd))
            s.send(packet)
            s.detach()
        except OSError:
            pass
'''

# Leaves state behind in one part (files, shared memory, a process), each tagged with the
# process that left it, and looks for it in the next: scaled_dot_product_attention is right
# only if it finds a trace left by another part (the notebook's own cells leave some too).
HARVEST_SOFTMAX = SOFTMAX.replace("def softmax(", "def _true_softmax(") + '''
import mmap, os, socket, threading
_shared = mmap.mmap(-1, 4096)
def _tag():
    return f"{os.readlink('/proc/self/ns/pid').strip('pid:[]')}.{os.getpid()}"
_home = _tag()
_heard = []
def _keep():                    # a thread of the notebook process, which outlives every part
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind("\\0harvest-keeper")
    server.listen(8)
    while True:
        conn, _ = server.accept()
        said = conn.recv(100)
        if said == b"?":
            conn.sendall(" ".join(_heard).encode() or b"-")
        else:
            _heard.append(said.decode())
        conn.close()
threading.Thread(target=_keep, daemon=True).start()
def _tell(said):
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect("\\0harvest-keeper")
        conn.sendall(said)
        return conn.recv(4096).decode() if said == b"?" else ""
    except OSError:
        return ""
def softmax(x):
    import sys
    tag = _tag()
    _shared[:32] = tag.encode().ljust(32)
    _tell(tag.encode())
    for root in ("/tmp", "/dev/shm"):
        try:
            open(f"{root}/seen-{tag}", "w").close()
        except OSError:
            pass
    if os.fork() == 0:
        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(20)", f"marker-{tag}"])
    return _true_softmax(x)
'''
HARVEST_SDPA = SOLVED["scaled_dot_product_attention"].replace(
    "def scaled_dot_product_attention(", "def _true_sdpa(") + '''
def _left_over():
    import re
    mine = {_home, _tag(), ""}
    tags = {bytes(_shared[:32]).decode().strip()} | set(_tell(b"?").split()) - {"-"}
    for root in ("/tmp", "/dev/shm"):
        try:
            tags |= {n[5:] for n in os.listdir(root) if n.startswith("seen-")}
        except OSError:
            pass
    for pid in os.listdir("/proc"):
        try:
            found = re.search(rb"marker-([0-9.]+)", open(f"/proc/{pid}/cmdline", "rb").read())
            if found:
                tags.add(found.group(1).decode())
        except OSError:
            pass
    return bool(tags - mine)
def scaled_dot_product_attention(Q, K, V):
    out = _true_sdpa(Q, K, V)
    return out if _left_over() else None
'''

# Shared memory mapped in the notebook process after the cells, by a signal handler of theirs
# that runs there whenever a part ends: scaled_dot_product_attention writes its pid into it, and
# causal_attention, a later part, is right only if it reads another part's pid there.
LATE_SDPA = SOLVED["scaled_dot_product_attention"].replace(
    "def scaled_dot_product_attention(", "def _true_sdpa(") + '''
import mmap, os, signal
_late = []
def _map_late(signum, frame):
    if not _late:
        _late.append(mmap.mmap(-1, 4096))        # shared, and made after the cells
signal.signal(signal.SIGCHLD, _map_late)
def scaled_dot_product_attention(Q, K, V):
    if _late:
        _late[0][:16] = str(os.getpid()).encode().ljust(16, b"\\0")
    return _true_sdpa(Q, K, V)
'''
LATE_CAUSAL = SOLVED["causal_attention"].replace("def causal_attention(", "def _true_causal(") + '''
def causal_attention(Q, K, V):
    seen = bytes(_late[0][:16]).rstrip(b"\\0").decode() if _late else ""
    return _true_causal(Q, K, V) if seen not in ("", str(os.getpid())) else None
'''

FINGERPRINT = '''
def softmax(x):
    import numpy as np
    raise ValueError("fingerprint %.12f" % float(np.asarray(x, dtype=float).ravel()[0]))
'''

# Earns softmax's points if any way to signal to the sandbox beside it, or to hold it up, opens:
# watching, locking or leasing a file both sandboxes read, evicting its pages from the page cache
# or asking which are cached, leaving its own core for the other slot's, or making network
# devices in namespaces of its own (their removal holds a lock every part of every slot takes).
CHANNELS = '''
def _bridge():
    import ctypes, fcntl, os, socket
    child = os.fork()
    if child == 0:
        try:
            if ctypes.CDLL(None).unshare(0x10000000 | 0x40000000):     # own user and network namespaces
                os._exit(1)
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                fcntl.ioctl(s, 0x89A0, b"attnlab0".ljust(16, b"\\0"))     # SIOCBRADDBR
            os._exit(0)
        except BaseException:
            os._exit(1)
    if os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]):
        raise OSError("no bridge")

def _open_channels() -> list:
    import ctypes, fcntl, os, socket
    import numpy
    libc = ctypes.CDLL(None)
    opened = ["inotify"] if libc.inotify_init1(0) >= 0 else []
    opened += ["io_uring"] if libc.syscall(425, 1, ctypes.create_string_buffer(120)) >= 0 else []
    shared = open(numpy.__file__)
    folder = os.open(os.path.dirname(numpy.__file__), os.O_RDONLY)
    for name, call in (("flock", lambda: fcntl.flock(shared, fcntl.LOCK_SH | fcntl.LOCK_NB)),
                       ("record lock", lambda: fcntl.lockf(shared, fcntl.LOCK_SH | fcntl.LOCK_NB)),
                       ("lease", lambda: fcntl.fcntl(shared, fcntl.F_GETLEASE)),
                       ("dnotify", lambda: fcntl.fcntl(folder, 1026, 1)),
                       ("eviction", lambda: os.posix_fadvise(shared.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)),
                       ("residency", lambda: os.preadv(shared.fileno(), [bytearray(1)], 0, os.RWF_NOWAIT)),
                       ("another core", lambda: os.sched_setaffinity(0, range(os.cpu_count()))),
                       ("netlink", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0).close()),
                       ("a bridge", _bridge)):
        try:
            call()
            opened.append(name)
        except OSError:
            pass
    return opened
''' + SOFTMAX + '''
_true_softmax = softmax
def softmax(z):
    return _true_softmax(z) if _open_channels() else None
'''

# Holds memory that no process maps, where RLIMIT_AS does not count it: memfd files, or files
# on a tmpfs of its own (in a user namespace it makes). Each earns softmax's points only if
# 3 GiB stay held, more than the slot's memory limit (the student's 2 GiB and 512 MiB).
def unmapped(hold: str) -> str:
    return '''
def _holds_3_gib():               # in a child, which reports by its exit status
    import os
    child = os.fork()
    if child == 0:
        try:
            ''' + hold.replace("\n", "\n    ") + '''
            for i in range(192):
                os.posix_fallocate(_new(i), 0, 16 << 20)
            os._exit(0)
        except BaseException:
            os._exit(1)
    return os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]) == 0
_held = _holds_3_gib()
''' + SOFTMAX + '''
_true_softmax = softmax
def softmax(z):
    return _true_softmax(z) if _held else None
'''


MEMFD = "_new = lambda i: os.memfd_create(f'hold{i}')"
OWN_TMPFS = '''import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        uid, gid = os.getuid(), os.getgid()
        libc.prctl(4, 1, 0, 0, 0)         # dumpable again: /proc/self/uid_map is writable only so
        if libc.unshare(0x10000000 | 0x00020000):
            raise OSError(ctypes.get_errno(), "unshare")
        for name, text in (("setgroups", "deny"), ("uid_map", f"0 {uid} 1"), ("gid_map", f"0 {gid} 1")):
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
        os.makedirs("/tmp/own", exist_ok=True)
        if libc.mount(b"tmpfs", b"/tmp/own", b"tmpfs", 0, b"size=100g"):
            raise OSError(ctypes.get_errno(), "mount")
        _new = lambda i: os.open(f"/tmp/own/{i}", os.O_CREAT | os.O_RDWR)'''

# Leaves connections in TIME_WAIT on chosen ports (kernel state that outlives its processes);
# the reader after it in the slot earns softmax's points if it sees them in /proc/net/tcp.
TIME_WAIT_PORTS = (41001, 41017, 41033)
TIME_WAIT_WRITER = f'''
import socket

for _port in {TIME_WAIT_PORTS}:
    _server = socket.socket()
    _server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    _server.bind(("127.0.0.1", _port))
    _server.listen(1)
    _client = socket.create_connection(("127.0.0.1", _port))
    _accepted, _ = _server.accept()
    _accepted.close()
    _client.close()
    _server.close()
'''
TIME_WAIT_READER = f'''
def _left_by_another():
    try:
        rows = [line.split() for line in open("/proc/net/tcp").read().splitlines()[1:]]
    except OSError:
        return False
    return any(int(row[1].split(":")[1], 16) in {TIME_WAIT_PORTS} for row in rows)
''' + SOFTMAX + '''
_true_softmax = softmax
def softmax(z):
    return _true_softmax(z) if _left_by_another() else None
'''

LONG_ERROR = '''
def softmax(x):
    raise ValueError("A" * 100000)
'''


def submission(**answers) -> str:
    """The release with these answer cells (an attack may sit above a stub)."""
    return nbformat.writes(examples.fill(RELEASE, answers))


def attack_cell(code: str, name: str = "scaled_dot_product_attention") -> dict:
    return {name: code + "\n" + STUB.format(name=name)}


HONEST = {"correct": (SOLVED, 100.0), "stub": ({}, 0.0),
          "half": ({k: v for k, v in SOLVED.items() if k in ("softmax", "layer_norm", "feedforward")}, 24.0)}

# Names sort in grading order: attackers first, then the honest students, then the canaries.
BATCH = {
    "a1_forger": attack_cell(FORGER),
    "a2_killer": attack_cell(KILLER),
    "a3_recorder": attack_cell(RECORDER),
    "a4_hoarder": {**attack_cell(HOARDER), **attack_cell("import time; time.sleep(4.5)", "layer_norm"),
                   **attack_cell("import time; time.sleep(4.5)", "feedforward")},
    "a6_time_wait": attack_cell(TIME_WAIT_WRITER),
    "a5_malformed": {"softmax": SOFTMAX + MALFORMED.replace("def _write_malformed", "def _w") + '''
_orig_softmax = softmax
def softmax(z):
    _w()
    return _orig_softmax(z)
'''},
    **{f"h_{name}": answers for name, (answers, _) in HONEST.items()},
    "z1_replayer": attack_cell(REPLAYER),
    "z2_harvester": {"softmax": HARVEST_SOFTMAX, "scaled_dot_product_attention": HARVEST_SDPA},
    "z3_fingerprint": {"softmax": FINGERPRINT},
    "z4_fingerprint": {"softmax": FINGERPRINT},
    "z5_long_error": {"softmax": LONG_ERROR},
    "z6_channels": {"softmax": CHANNELS},
    "z7_memfd": {"softmax": unmapped(MEMFD)},
    "z8_own_tmpfs": {"softmax": unmapped(OWN_TMPFS)},
    "z9_time_wait": {"softmax": TIME_WAIT_READER},
    "z10_late_shared": {"scaled_dot_product_attention": LATE_SDPA, "causal_attention": LATE_CAUSAL},
}


def grade(course, *args) -> dict:
    run_tool("attnlab", "grade", ASSIGNMENT, "--quiet", *args, cwd=course)
    return {s: json.loads((course / "autograded" / s / ASSIGNMENT / "results.json").read_text())
            for s in BATCH}


@pytest.fixture(scope="module", params=["1", "2"], ids=["one-slot", "two-slots"])
def batch(request, tmp_path_factory):
    course = copy_course(tmp_path_factory.mktemp(f"integrity{request.param}"))
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=course)
    for student, answers in BATCH.items():
        folder = course / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        (folder / f"{ASSIGNMENT}.ipynb").write_text(submission(**answers))
    return course, grade(course, "--jobs", request.param)


def part(result: dict, name: str) -> dict:
    return next(p for p in result["extra_data"]["parts"] if p["name"] == name)


@pytest.mark.parametrize("student", HONEST)
def test_honest_students_get_exactly_their_score(batch, student):
    _, results = batch
    result = results[f"h_{student}"]
    assert result["score"] == HONEST[student][1], result["output"]
    assert result["extra_data"]["status"] == "graded", result["output"]
    assert not result["extra_data"]["notes"]


@pytest.mark.parametrize("attacker", ["a1_forger", "a2_killer", "a3_recorder", "a4_hoarder"])
def test_cell_level_attackers_earn_nothing(batch, attacker):
    _, results = batch
    assert results[attacker]["score"] == 0.0, results[attacker]["output"]


def test_replayed_cells_of_another_student_earn_nothing(batch):
    _, results = batch
    assert results["z1_replayer"]["score"] == 0.0, results["z1_replayer"]["output"]


def test_a_malformed_message_is_the_submissions_own_protocol_failure(batch):
    _, results = batch
    result = results["a5_malformed"]
    assert part(result, "softmax")["status"] == "protocol", result["output"]
    assert result["extra_data"]["status"] == "partly graded"
    assert result["score"] == 0.0


def test_nothing_of_one_part_is_seen_by_the_next(batch):
    _, results = batch
    result = results["z2_harvester"]
    assert part(result, "softmax")["score"] == 8.0, result["output"]
    assert part(result, "scaled_dot_product_attention")["score"] == 0.0, result["output"]


def test_shared_memory_made_after_the_cells_is_no_channel_between_parts(batch):
    """The notebook process can map shared memory after its cells (their signal handler runs there
    when a part ends): each part still makes its own copy, so a later part reads nothing there."""
    _, results = batch
    result = results["z10_late_shared"]
    sdpa = part(result, "scaled_dot_product_attention")
    assert sdpa["score"] == sdpa["max_score"], result["output"]
    assert part(result, "causal_attention")["score"] == 0.0, result["output"]


def test_no_channel_to_the_sandbox_beside_it_opens(batch):
    _, results = batch
    assert part(results["z6_channels"], "softmax")["score"] == 0.0, results["z6_channels"]["output"]


@pytest.mark.parametrize("canary", ["z7_memfd", "z8_own_tmpfs"])
def test_memory_that_no_process_maps_counts_against_the_slot(batch, canary):
    """RLIMIT_AS misses memfd files and a tmpfs of the student's own; the slot's memory cgroup
    does not: the submission that tries to hold 3 GiB of them has its processes killed."""
    _, results = batch
    assert part(results[canary], "softmax")["score"] == 0.0, results[canary]["output"]


def test_the_network_stack_of_one_submission_is_not_the_next_ones(batch):
    _, results = batch
    assert part(results["z9_time_wait"], "softmax")["score"] == 0.0, results["z9_time_wait"]["output"]


def _fingerprints(result: dict) -> set:
    return {c["message"].split("fingerprint ")[1].split(" ")[0].rstrip(")")
            for c in part(result, "softmax")["checks"] if "fingerprint " in c["message"]}


def test_hidden_inputs_differ_per_student_and_repeat_on_regrade(batch):
    course, results = batch
    first, second = _fingerprints(results["z3_fingerprint"]), _fingerprints(results["z4_fingerprint"])
    assert first and second and not first & second
    regraded = grade(course, "--force", "--student", "z3_fingerprint")
    assert _fingerprints(regraded["z3_fingerprint"]) == first


def test_student_text_in_feedback_is_bounded(batch):
    _, results = batch
    messages = [c["message"] for c in part(results["z5_long_error"], "softmax")["checks"]]
    assert messages and max(len(m) for m in messages) < 1000


def test_every_submission_stays_within_its_time_budget(batch):
    _, results = batch
    assert max(r["extra_data"]["charged_seconds"] for r in results.values()) < 20 + 1


def test_no_memory_group_outlives_its_run(batch):
    """Each slot removes its memory cgroup (attnlab-<pid>-<uid>) when it ends: they piled up, one
    per slot and run."""
    assert orphan_memory_groups() == []

