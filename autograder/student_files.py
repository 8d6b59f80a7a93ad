"""Reading a submission folder, whose every file a student chose.

What nbgrader's collect or an LMS download puts in submitted/<student>/<assignment>/ comes from
the student, names and links included. A symbolic link there could point at a classmate's
notebook, the answer key or gradebook.db, and a link to a pipe or to /proc would block or fail
the grader. So the grader opens a student's file only through `read`, which does not follow a
link, accepts only a regular file, never blocks and reads at most `limit` bytes, and names a
folder only through `digest`, which follows nothing and reads any file name. A folder that a
student can still change while it is copied (nbgrader's inbound folder) is copied by `snapshot`.
"""
import datetime
import errno
import hashlib
import json
import os
import re
import shutil
import stat
from pathlib import Path

from .text import shown

MAX_BYTES = 64 * 2**20      # a lab notebook is under 1 MB; a larger file is not read


_SAFE_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._@+-]{0,99}")


def unsafe_id(text: str) -> str:
    """Why `text` cannot name a student or a file of a submission ('' if it can). An id starts
    with a letter, a digit or _: spreadsheets read a cell that starts with = + - @ as a formula,
    and nbgrader export writes ids as they are."""
    if not _SAFE_ID.fullmatch(text) or ".." in text:
        return (f"{shown(repr(text), 120)} is not a valid id (letters, digits and . _ @ + - only, starting "
                "with a letter, a digit or _; no '..')")
    return ""


class StudentFileError(OSError):
    """A file of a submission that is not a regular file the grader may read (the message says why)."""


def read(path: Path, limit: int = MAX_BYTES) -> bytes:
    """The bytes of the regular file `path`, read without following a link."""
    with _open(Path(path)) as file:
        data = file.read(limit + 1)
    if len(data) > limit:
        raise StudentFileError(f"{Path(path).name} is larger than {limit // 2**20} MiB")
    return data


def submission_time(folder: Path):
    """nbgrader's submission time, from `folder`/timestamp.txt: None without one (or an empty
    one); StudentFileError when it is there but is not a regular file holding a time."""
    from nbgrader.utils import parse_utc
    path = Path(folder) / "timestamp.txt"
    if not os.path.lexists(path):
        return None
    data = read(path, limit=4096)
    text = data.decode("utf-8", "replace").strip()
    try:
        data.decode("utf-8")        # nbgrader reads it as text, and stops at bytes that are not
        return parse_utc(text) if text else None
    except Exception:   # dateutil's zoo: ValueError, OverflowError, ...
        raise StudentFileError(f"timestamp.txt holds {text[:40]!r}, not a time") from None


def notebooks_in(folder: Path) -> list:
    """The notebooks under `folder` (.ipynb in any case: an upload from Windows may say .IPYNB),
    as paths relative to it, leaving out what editors and archivers add beside a student's work
    (.ipynb_checkpoints/, macOS's __MACOSX/ and ._ files)."""
    return sorted(p.relative_to(folder) for p in Path(folder).rglob("*.[iI][pP][yY][nN][bB]")
                  if not any(part.startswith(".") or part == "__MACOSX" for part in p.relative_to(folder).parts))


def digest(folder: Path, leave_out: tuple = ()) -> str:
    """What identifies a submission: the names and bytes of its regular files, and the names and
    targets of its links (not followed), whatever their modification times; the top-level files
    named in `leave_out` aside."""
    h = hashlib.sha256()
    for path in sorted(_entries(Path(folder))):
        if str(path.relative_to(folder)) in leave_out:
            continue
        h.update(os.fsencode(path.relative_to(folder)) + b"\0")
        info = path.lstat()
        if stat.S_ISLNK(info.st_mode):
            h.update(b"link " + os.fsencode(os.readlink(path)))
        elif not stat.S_ISREG(info.st_mode):
            h.update(b"special " + str(stat.S_IFMT(info.st_mode)).encode())
        else:
            try:
                with _open(path) as file:
                    while chunk := file.read(2**20):
                        h.update(chunk)
            except OSError as exc:
                h.update(b"unreadable " + str(exc.errno).encode())
        h.update(b"\0")
    return h.hexdigest()


MAX_DEPTH, MAX_FOLDERS, MAX_ENTRIES = 32, 256, 10_000    # a submission is a few files in one folder
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def snapshot(src: str, dest: str, limit: int) -> tuple:
    """Copy the folder `src`, which a student may change while it is copied, to the new folder
    `dest`, without following any link: every folder and file is opened from its folder's
    descriptor, refusing a link and never blocking; a link is copied as a link; a file that is
    neither a folder, a link nor a regular file of one name (a hard link may be a classmate's)
    is left out. Modes keep no set-id bits and no write for others. StudentFileError past
    `limit` bytes, MAX_ENTRIES entries, MAX_FOLDERS folders or MAX_DEPTH levels.
    (The stat of `src` as it was opened, on which what is checked of the folder is checked;
    the paths left out; the latest change of anything in it, as a ctime, which no student sets.)"""
    try:
        top = os.open(src, _FOLDER)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise StudentFileError(f"{os.path.basename(src)!r} is not a folder") from None
        raise
    copy = _Snapshot(limit)
    copy.todo.append((top, dest, "", 0))
    try:
        info = os.fstat(top)
        os.mkdir(dest, 0o700)
        copy.folders.append((dest, info))
        while copy.todo:
            copy.folder(*copy.todo.pop())
    finally:
        for fd, *_ in copy.todo:
            os.close(fd)
    for folder, entry in reversed(copy.folders):   # as copytree does, modes once the folder is filled
        os.chmod(folder, stat.S_IMODE(entry.st_mode) & 0o755 | stat.S_IRWXU)
    return info, copy.left_out, max(info.st_ctime, copy.changed)


class _Snapshot:
    """What `snapshot` has copied so far, and the folders it has opened but not yet copied."""

    def __init__(self, limit: int):
        self.room, self.count, self.changed = limit, 0, 0.0
        self.todo: list = []        # (open folder, where to copy it, its path in the entry, depth)
        self.folders: list = []     # (copy, stat of the original)
        self.left_out: list = []

    def folder(self, fd: int, target: str, where: str, depth: int) -> None:
        try:
            with os.scandir(fd) as entries:
                names = [entry.name for entry in entries]
            for name in names:
                self.count += 1
                if self.count > MAX_ENTRIES:
                    raise StudentFileError(f"more than {MAX_ENTRIES} files")
                if not self.entry(name, fd, os.path.join(target, name), os.path.join(where, name), depth):
                    self.left_out.append(os.path.join(where, name))
        finally:
            os.close(fd)

    def entry(self, name: str, fd: int, path: str, shown: str, depth: int) -> bool:
        """Copy `name` (`shown` in the entry) of the open folder `fd` to `path`; False if it is
        left out."""
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        self.changed = max(self.changed, info.st_ctime)
        if stat.S_ISLNK(info.st_mode):
            os.symlink(os.readlink(name, dir_fd=fd), path)
        elif stat.S_ISDIR(info.st_mode):
            if depth >= MAX_DEPTH:
                raise StudentFileError(f"folders nested more than {MAX_DEPTH} deep")
            if len(self.folders) >= MAX_FOLDERS:      # each is open until it is copied
                raise StudentFileError(f"more than {MAX_FOLDERS} folders")
            sub = os.open(name, _FOLDER, dir_fd=fd)
            self.todo.append((sub, path, shown, depth + 1))
            os.mkdir(path, 0o700)
            self.folders.append((path, os.fstat(sub)))
        elif stat.S_ISREG(info.st_mode):
            copied = _copy_file(name, fd, path, self.room)
            if copied is None:
                return False
            self.room -= copied
        else:
            return False
        return True


COLLECTED = "attnlab_collect.json"   # what SafeCollect saw of a submission's time, if it is odd
SKEW = 5        # seconds two clocks may disagree by: nbgrader submit's (timestamp.txt) and the
                # file system's (ctime; over NFS, the file server's clock)


def note_set_back(folder: str, changed: float) -> str:
    """Where `folder`/timestamp.txt (a snapshot's, read already) says the submission was made
    more than SKEW seconds before anything in it last changed (its ctime, which the kernel sets
    and no student can), keep both times in COLLECTED: lateness is then judged at the later one
    (`judged_time`). A COLLECTED the student wrote is removed. The warning for the log ('' if
    the times agree)."""
    path = os.path.join(folder, COLLECTED)
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.unlink(path)
    claimed = submission_time(Path(folder))
    changed_at = datetime.datetime.fromtimestamp(changed, datetime.timezone.utc).replace(tzinfo=None)
    if claimed is None or claimed >= changed_at - datetime.timedelta(seconds=SKEW):
        return ""
    with open(path, "x") as file:
        json.dump({"timestamp": claimed.isoformat(" "), "changed": changed_at.isoformat(" ")}, file)
    return set_back(Path(folder))


def _collected(folder: Path) -> dict | None:
    """What SafeCollect saw of a submission's time (COLLECTED), None without it."""
    try:
        seen = json.loads(read(Path(folder) / COLLECTED, limit=4096))
        return {"timestamp": datetime.datetime.fromisoformat(seen["timestamp"]),
                "changed": datetime.datetime.fromisoformat(seen["changed"])}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def judged_time(folder: Path):
    """The time lateness is judged at: timestamp.txt's, or where SafeCollect found that it
    claims an earlier time than the submission last changed, the later of the two (a claim
    that disagrees with the kernel never scores better than what the kernel saw). None and
    StudentFileError as `submission_time`."""
    claimed, seen = submission_time(folder), _collected(folder)
    return claimed if claimed is None or seen is None else max(claimed, seen["changed"])


def set_back(folder: Path) -> str:
    """What COLLECTED in a submission folder says ('' without one, or one that is not SafeCollect's)."""
    seen = _collected(folder)
    if seen is None:
        return ""
    return (f"timestamp.txt says {seen['timestamp']} UTC, but when nbgrader collect copied the submission "
            f"it had last changed at {seen['changed']} UTC (the kernel's time, which no student sets): the "
            "time may have been set back, and lateness is judged at the later time (if the exchange was "
            f"copied or restored after the submission, which renews every such time, delete {COLLECTED} "
            "from the submission folder to judge by timestamp.txt)")


def _copy_file(name: str, dir_fd: int, dest: str, room: int) -> int | None:
    """Copy the regular file `name` of the folder `dir_fd`, as it is now, to `dest` with its times
    and a safe mode; the bytes copied (None: not a regular file of one name, not copied)."""
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:     # (a folder since it was stat'ed)
        os.close(fd)
        return None
    with os.fdopen(fd, "rb") as source:
        data = source.read(room + 1)
        if len(data) > room:
            raise StudentFileError(f"{name!r} makes the submission larger than the exchange accepts")
    with open(dest, "xb") as copy:
        copy.write(data)
    os.chmod(dest, stat.S_IMODE(info.st_mode) & 0o755 | stat.S_IRUSR | stat.S_IWUSR)
    os.utime(dest, ns=(info.st_atime_ns, info.st_mtime_ns))
    return len(data)


def _open(path: Path):
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise StudentFileError(f"{path.name} is a symbolic link; a submission's files must be "
                                   "regular files") from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise StudentFileError(f"{path.name} is not a regular file")
    return os.fdopen(fd, "rb")


def _entries(folder: Path):
    """Every entry below `folder` but the folders themselves; links to folders are not entered."""
    for top, dirs, files in os.walk(folder):
        for name in files + [d for d in dirs if os.path.islink(os.path.join(top, d))]:
            yield Path(top) / name
