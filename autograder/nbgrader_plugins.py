"""nbgrader plugins that the course configures in nbgrader_config.py."""
import contextlib
import difflib
import hashlib
import json
import os
import re
import shutil
import tempfile
import zipfile
import zlib
from collections import Counter, defaultdict
from datetime import datetime
from pathlib import Path

try:
    import pwd
except ImportError:     # Windows: no users to check owners against
    pwd = None

from nbconvert.exporters import NotebookExporter
from nbgrader import utils
from nbgrader.api import Gradebook
from nbgrader.converters.base import NbGraderException
from nbgrader.exchange.default import ExchangeCollect
from nbgrader.plugins import ExtractorPlugin, FileNameCollectorPlugin
from nbgrader.preprocessors import ClearHiddenTests

from . import student_files
from .config import AttnLab
from .student_files import StudentFileError, note_set_back, snapshot, submission_time, unsafe_id

REFUSAL = ("this course is graded in attnlab's sandbox, not by `nbgrader autograde` (which would run "
           "the hidden tests in the student's kernel, as you): run `attnlab grade {assignment}` in the "
           "course directory; it records the grades in this gradebook, so formgrader, feedback and "
           "export work as usual")


class ScrubHiddenTests(ClearHiddenTests):
    """ClearHiddenTests for feedback, plus tracebacks of test cells cut to their last line.

    Under plain `nbgrader autograde` the hidden tests run in the notebook; a failing visible
    check prints a traceback whose context lines quote the hidden block that follows it.
    """

    def preprocess_cell(self, cell, resources, index):
        cell, resources = super().preprocess_cell(cell, resources, index)
        if utils.is_grade(cell) and cell.cell_type == "code":
            for output in cell.outputs:
                if output.output_type == "error":
                    output.traceback = [f"{output.ename}: {output.evalue}"]
        return cell, resources


class RefuseUnsandboxedAutograde(NotebookExporter):
    """The exporter of `nbgrader autograde` (and of formgrader's Autograde button) in this course.

    nbgrader builds its exporter before it touches any file, so refusing here leaves the gradebook,
    submitted/ and autograded/ exactly as they were.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        converter = self.parent
        message = REFUSAL.format(assignment=getattr(converter.coursedir, "assignment_id", "") or "ASSIGNMENT")
        converter.log.error(message)
        raise NbGraderException(message)


def unsafe_name(text: str) -> str:
    """Why `text` cannot be a file name inside a submission folder ('' if it can)."""
    if not text or text.startswith(".") or any(c in text for c in "/\\") or any(ord(c) < 32 for c in text):
        return f"{text!r} is not a plain file name"
    return ""


class SafeCollect(ExchangeCollect):
    """nbgrader's collect (`c.ExchangeFactory.collect`), for what students put in the exchange's
    inbound folder. An entry is skipped, with a warning, when its student id could not be shown
    safely (formgrader prints ids unescaped), its name or its timestamp.txt holds no time (nbgrader
    stops the whole collection at a timestamp.txt that is not one, and judges no lateness without
    one: `nbgrader submit` always writes it), it is not a folder (a link to a classmate's folder or to
    solutions/, a file), or it names a user of this machine but belongs to another (nbgrader's
    `check_owner` only warns; with `check_owner` off, as where every user has one uid, or for ids
    that are no user of this machine, owners are not checked). Of a student's entries, the newest
    that is not skipped is collected. Links and special files inside a folder are copied as links
    or left out, never followed (nbgrader's copy runs as the instructor; attnlab refuses a link);
    an entry that cannot be copied is skipped alone. A student can still change an entry after it
    was checked: what is copied is a snapshot (`student_files.snapshot`), checked again."""

    def _path_to_record(self, path):
        try:
            return super()._path_to_record(path)
        except Exception as exc:    # a time nbgrader cannot parse: the record is skipped below
            return {"username": "", "filename": os.path.basename(path), "timestamp": datetime.min,
                    "why": f"its name holds no submission time ({type(exc).__name__})"}

    def _sort_by_timestamp(self, records):
        """A student's entries that are not skipped, newest first (one skipped entry if all are,
        which init_src drops): a decoy (a file, another user's folder) newer than the student's
        real entry, or dated before the due date with `before_duedate`, must not hide it."""
        for record in records:
            if "checked" not in record:
                record.update(checked=True, why=record.get("why") or self._refused(record))
                if record["why"]:
                    self.log.warning("Skipped %r: %s", record["filename"], record["why"])
                    self.skipped[record["filename"]] = record["why"]
        ordered = super()._sort_by_timestamp(records)
        return [record for record in ordered if not record["why"]] or ordered[:1]

    def init_src(self):
        self.skipped = {}       # {inbound entry: why} of the entries not collected (`attnlab serve` reads it)
        super().init_src()
        self.src_records = [record for record in self.src_records if not record["why"]]
        self.claimed = {os.path.join(self.inbound_path, r["filename"]): r["username"] for r in self.src_records}

    def copy_files(self):
        """nbgrader's copy, with its owner warning given here, for the owner the entry had when it
        was checked: nbgrader's own stats the entry outside any guard (an entry its student renamed
        away in between stopped the collection of everyone after them) and prints its name raw.
        For an id that is no user of this machine, the owner is what tells a classmate's forged
        entry from the student's own."""
        self.owners_checked, self.check_owner = self.check_owner, False
        for record in self.src_records if self.owners_checked else ():
            owner = _user_name(record["uid"])
            if owner != record["username"]:
                self.log.warning("%r claims to be submitted by %s but is owned by %s; cheating attempt?",
                                 record["filename"], record["username"], owner)
        try:
            super().copy_files()
        finally:
            self.check_owner = self.owners_checked

    def _refused(self, record: dict) -> str:
        """Why an inbound entry is not collected ('' if it is)."""
        path = os.path.join(self.inbound_path, record["filename"])
        student = record["username"]
        if unsafe_id(student):
            return unsafe_id(student)
        if any(ord(c) < 32 or 127 <= ord(c) < 160 for c in record["filename"]):
            return "its name holds control characters"
        try:
            if os.path.islink(path) or not os.path.isdir(path):
                return "not a folder"
            collected = self.coursedir.format_path(self.coursedir.submitted_directory, student,
                                                   self.coursedir.assignment_id)
            info = os.lstat(path)
            record["uid"] = info.st_uid
            return self._impostor(student, info) or _no_time(path, required=True) or _no_time(collected)
        except OSError as exc:
            return f"it changed while it was checked ({type(exc).__name__})"

    def _impostor(self, student: str, info: os.stat_result) -> str:
        """Why an entry that names `student` is not theirs ('' if it may be)."""
        if not getattr(self, "owners_checked", self.check_owner):
            return ""
        try:
            uid = pwd.getpwnam(student).pw_uid
        except (AttributeError, KeyError):  # an id that is no user here: the owner is only warned of
            return ""
        if info.st_uid != uid:
            return f"it names the user {student} but belongs to the user with uid {info.st_uid}"
        return ""

    def do_copy(self, src, dest, log=None):
        """Copy a snapshot of `src`: the student may change the entry after it was checked (swap
        it for a link to a classmate's entry, a file for a link, write another timestamp.txt),
        so the checks are made again on the snapshot, which no student can change."""
        # staged in the course (a world-writable /tmp, filled by a student, failed the copies
        # of classmates whose earlier submission nbgrader had already removed)
        private = os.path.join(self.coursedir.root, ".attnlab")
        os.makedirs(private, exist_ok=True)
        staging = tempfile.mkdtemp(prefix="collect-", dir=private)
        try:
            entry = os.path.join(staging, "entry")
            info, left_out, changed = snapshot(src, entry, 1000 * self.coursedir.max_dir_size)
            why = self._impostor(self.claimed[src], info) or _no_time(entry, src, required=True)
            if why:
                raise StudentFileError(why)
            set_back = note_set_back(entry, changed)
            if set_back:
                self.log.warning("%r: %s", src, set_back)
            if left_out:
                self.log.warning("%r holds files that are neither regular files of one name, folders nor "
                                 "links; they are left out: %r", src, left_out)
            if not any(os.path.islink(os.path.join(top, name)) for top, dirs, files in os.walk(entry)
                       for name in dirs + files):
                return super().do_copy(entry, dest, log)
            self.log.warning("%r holds links: they are copied as links, which attnlab does not follow", src)
            shutil.copytree(entry, dest, symlinks=True, ignore=utils.ignore_patterns(
                exclude=self.coursedir.ignore, include=self.coursedir.include,
                max_file_size=self.coursedir.max_file_size, log=self.log))
        except Exception as exc:
            shutil.rmtree(dest, ignore_errors=True)
            with contextlib.suppress(OSError):
                os.rmdir(os.path.dirname(dest))      # the student's folder, if nothing else is in it
            self.log.warning("Skipped %r: it cannot be copied (%s: %r)", src, type(exc).__name__, str(exc))
            self.skipped[os.path.basename(src)] = f"it cannot be copied ({type(exc).__name__}: {exc})"
        finally:
            shutil.rmtree(staging, ignore_errors=True)


def _user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except (AttributeError, KeyError):
        return f"uid {uid}"


def _no_time(folder: str, shown: str | None = None, required: bool = False) -> str:
    """Why `folder`/timestamp.txt (named `shown`/timestamp.txt) stops nbgrader, or holds no time
    where one is `required` ('' if neither). An inbound entry requires one: `nbgrader submit`
    always writes it, and a late student who deleted or emptied it was not judged for lateness."""
    name = os.path.join(shown or folder, "timestamp.txt")
    try:
        when = submission_time(Path(folder))
    except OSError:
        return f"{name} is not a submission time"
    return f"{name} is missing or empty (nbgrader submit always writes one)" if required and when is None else ""


class LmsExtractor(ExtractorPlugin):
    """Unpack the LMS's own archives in downloaded/<assignment>/archive/, one level only.

    The folder holds the LMS's download zips, the download's files laid out loose, or both (a
    file added by hand beside a download), also in a folder (a download unzipped by double-click).
    A file named as the LMS names a student's file is that student's: an archive a student
    uploaded is never opened, whatever its name ends in, so no name chosen by a student becomes
    a student id or a path. Members inside folders of a zip, links, and folders two levels down
    are skipped, and of two files with the same name the first is kept, with a warning.
    """

    def extract(self, archive_path: str, extracted_path: str) -> None:
        os.makedirs(extracted_path, exist_ok=True)
        pattern = LmsCollector(config=self.config).named_regexp
        for source in self._download_files(archive_path):
            students = re.match(pattern, os.path.splitext(source)[0] + ".ipynb") if pattern else None
            if zipfile.is_zipfile(source) and not students:
                self._unpack(source, extracted_path)
            elif source.lower().endswith(".zip") and not students:     # a download cut short
                self.log.warning("Skipped %s: a damaged zip archive; its students are not collected", source)
            elif self._free(os.path.basename(source), source, extracted_path):
                shutil.copyfile(source, os.path.join(extracted_path, os.path.basename(source)))

    def _download_files(self, folder: str, depth: int = 0) -> list:
        """The files of the download in `folder` and in its folders (not theirs), leaving out
        what archivers add (dot files, __MACOSX/); whatever else is skipped is named."""
        files = []
        for name in sorted(os.listdir(folder)):
            path = os.path.join(folder, name)
            if name.startswith(".") or name == "__MACOSX":
                continue
            if os.path.islink(path):
                self.log.warning("Skipped %s: a link (links are not followed); its students are not collected", path)
            elif os.path.isdir(path) and depth == 0:
                files += self._download_files(path, 1)
            elif os.path.isfile(path):
                files.append(path)
            else:
                self.log.warning("Skipped %s: %s; its students are not collected", path,
                                 "a folder in a folder of the download" if os.path.isdir(path) else "not a file")
        return files

    def _free(self, name: str, where: str, extracted_path: str) -> bool:
        if os.path.exists(os.path.join(extracted_path, name)):
            self.log.warning("Skipped %r in %s: another file of the download has that name (the first is kept)",
                             name, where)
            return False
        return True

    def _unpack(self, archive: str, extracted_path: str) -> None:
        """The top-level files of one of the LMS's zips, each charged to its student (the id in
        its name, else the file itself): a student whose files number more than STUDENT_FILES or
        unpack to more than STUDENT_BYTES in all is skipped whole, with a warning, and everyone
        else is collected (a 1 MiB member that unpacked to 1 GiB wrote 2 GiB)."""
        try:
            z = zipfile.ZipFile(archive)
        except (zipfile.BadZipFile, OSError) as exc:
            self.log.warning("Skipped %s: a damaged zip archive (%s); its students are not collected", archive, exc)
            return
        with z:
            members = [m for m in z.infolist() if not m.is_dir()]
            if len(members) > ARCHIVE_FILES:
                self.log.warning("Skipped %s: more than %d files; its students are not collected", archive, ARCHIVE_FILES)
                return
            pattern = LmsCollector(config=self.config).named_regexp
            owners = {m.filename: _owner(m.filename, pattern) for m in members}
            over = {who for who, n in Counter(owners.values()).items() if n > STUDENT_FILES}
            for who in sorted(over):
                self.log.warning("Skipped the files of %r in %s: more than %d files of one student", who, archive,
                                 STUDENT_FILES)
            spent, unpacked = Counter(), defaultdict(list)
            for member in members:
                name, who = member.filename, owners[member.filename]
                if who in over:
                    continue
                if "/" in name or "\\" in name or name.startswith(".") or any(ord(ch) < 32 for ch in name):
                    self.log.warning("Skipped %r in %s: not a top-level file of the LMS download", name, archive)
                    continue
                if not self._free(name, archive, extracted_path):
                    continue
                target = os.path.join(extracted_path, name)
                try:
                    spent[who] += _copy_at_most(z, member, target, STUDENT_BYTES - spent[who])
                    unpacked[who].append(target)
                except _TooLarge:
                    for path in unpacked.pop(who, []) + [target]:
                        os.unlink(path)
                    over.add(who)
                    self.log.warning("Skipped the files of %r in %s: they unpack to more than %d MiB", who, archive,
                                     STUDENT_BYTES // 2**20)
                except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as exc:   # one damaged entry
                    if os.path.exists(target):
                        os.unlink(target)
                    self.log.warning("Skipped %r in %s: a damaged entry (%s)", name, archive, exc)


def _owner(name: str, pattern: str) -> str:
    """Whose file a member of the download is: the LMS id in its name, else the name itself."""
    found = re.match(pattern, "/" + name) if pattern else None
    return (found.groupdict().get("student_id") if found else None) or name


ARCHIVE_FILES = 100_000                  # files in one of the LMS's zips
STUDENT_FILES = 100                      # files of one student in it
STUDENT_BYTES = student_files.MAX_BYTES  # what one student's files unpack to, in all


class _TooLarge(Exception):
    pass


def _copy_at_most(z: zipfile.ZipFile, member: zipfile.ZipInfo, target: str, room: int) -> int:
    """Unpack `member` to `target`, at most `room` bytes (_TooLarge, the part written left for the
    caller to remove, past that); the bytes written."""
    written = 0
    with z.open(member) as src, open(target, "wb") as dest:
        while chunk := src.read(2**20):
            written += len(chunk)
            if written > room:
                raise _TooLarge
            dest.write(chunk)
    return written



def closest_ids(lms_id: str, known: set) -> list:
    """The three known ids most like `lms_id` (a typo's), those with its very characters first
    (two digits swapped: 1030 for 1003), then by difflib's likeness."""
    close = difflib.get_close_matches(lms_id, sorted(known), n=len(known), cutoff=0.5)
    return sorted(close, key=lambda k: sorted(k) != sorted(lms_id))[:3]

class LmsCollector(FileNameCollectorPlugin):
    """nbgrader's file-name collector, with ids checked and mapped (`AttnLab.lms_ids`), and the
    LMS's late marker (a `late` group of the pattern) recorded.

    An entry with an invalid id, or a second entry for the same student and file, is skipped
    with a warning that names it; every other student is collected. An id that is neither in
    `lms_ids` nor a student of the gradebook (a typo in `lms_ids` made a real student look
    missing) is named with the closest known ids, and collected or skipped as
    `AttnLab.lms_unknown_ids` says. A file the LMS marks late is judged by the time the download
    carries (a `timestamp` group of the pattern); without one, its lateness is unknown and the
    grades table says so (`lms_late_unknown`): no time is made up.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        settings = AttnLab(config=self.config)
        self.ids, self.unknown_ids = settings.lms_ids, settings.lms_unknown_ids
        self.seen: set = set()
        self.known: set | None = None
        self.late_unknown: dict = {}
        dirs = getattr(self.parent, "coursedir", None)
        if dirs is not None:       # a new collection: the files marked late are recorded anew
            _late_record(dirs.root, dirs.assignment_id).unlink(missing_ok=True)

    def collect(self, submitted_file: str):
        info = super().collect(submitted_file)
        if not info:
            return info
        lms_id = info["student_id"]
        info["student_id"] = self.ids.get(lms_id, lms_id)
        why = unsafe_id(info["student_id"]) or unsafe_name(info["file_id"])
        if why:
            self.log.warning("Skipped %s: %s", os.path.basename(submitted_file), why)
            return None
        if not self._known(lms_id, info["student_id"], submitted_file):
            return None
        key = (info["student_id"], info["file_id"])
        if key in self.seen:
            self.log.warning("Skipped %s: a second submission of %s for student %s",
                             os.path.basename(submitted_file), info["file_id"], info["student_id"])
            return None
        self.seen.add(key)
        if info.pop("late", None) and not info.get("timestamp"):
            self._late_unknown(info["student_id"], submitted_file)
        return info

    def _known(self, lms_id: str, student: str, submitted_file: str) -> bool:
        """Whether to collect an id: warned of, and skipped with lms_unknown_ids = 'skip', when
        it is neither in lms_ids nor in the gradebook (once the gradebook has a roster)."""
        if self.known is None:
            dirs = self.parent.coursedir
            with Gradebook(dirs.db_url, dirs.course_id) as gb:
                self.known = {s.id for s in gb.students}
        if lms_id in self.ids or student in self.known or not (self.known or self.ids):
            return True
        close = closest_ids(lms_id, set(self.ids) | self.known)
        skip = self.unknown_ids == "skip"
        self.log.warning("%s %s: the id %r is neither in c.AttnLab.lms_ids nor a student of the gradebook "
                         "(closest known: %s); %s", "Skipped" if skip else "Collected",
                         os.path.basename(submitted_file), lms_id, ", ".join(close) or "none",
                         "c.AttnLab.lms_unknown_ids is 'skip'" if skip else
                         "it is graded as a new student (c.AttnLab.lms_unknown_ids = 'skip' skips such files)")
        return not skip

    def _late_unknown(self, student: str, submitted_file: str) -> None:
        """A file the LMS marks late without saying when: recorded (by the digest of its bytes)
        for `attnlab grade`, which shows its lateness as unknown; nothing is made up."""
        with open(submitted_file, "rb") as f:
            self.late_unknown[student] = hashlib.sha256(f.read()).hexdigest()
        path = _late_record(self.parent.coursedir.root, self.parent.coursedir.assignment_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.late_unknown, indent=1) + "\n")
        self.log.warning("%s: the LMS marks it late without its time: its lateness is unknown (no penalty); "
                         "put the time in its timestamp.txt and grade again", os.path.basename(submitted_file))


def _late_record(root: str, assignment: str) -> Path:
    return Path(root) / ".attnlab" / f"{assignment}-lms-late.json"


def lms_late_unknown(root: Path, assignment: str, student: str, notebook: Path) -> bool:
    """Whether the LMS marked this student's collected notebook late without its time (the last
    `zip_collect` recorded it, and the file is still the one it collected)."""
    try:
        recorded = json.loads(_late_record(root, assignment).read_text()).get(student)
        return recorded is not None and recorded == hashlib.sha256(student_files.read(notebook)).hexdigest()
    except (OSError, ValueError, AttributeError):
        return False


# -- formgrader ------------------------------------------------------------------------------

def _jupyter_server_extension_points():
    """A Jupyter server extension, enabled by scripts/setup.sh in the environment's
    etc/jupyter/jupyter_server_config.d/attnlab.json."""
    return [{"module": "autograder.nbgrader_plugins"}]


def _load_jupyter_server_extension(serverapp) -> None:
    """formgrader keeps one gradebook session for the server's life, and SQLAlchemy serves the
    rows it loaded once from that session's memory: after `attnlab grade` changed them, formgrader
    showed the earlier automatic score, and emptying a score box wrote no `needs_manual_grade`
    (unchanged in its memory, set in the database). Every query of the server's sessions reads
    the rows as they are now."""
    from sqlalchemy import event
    from sqlalchemy.orm import Session
    if not event.contains(Session, "do_orm_execute", _fresh_rows):
        event.listen(Session, "do_orm_execute", _fresh_rows)


def _fresh_rows(state) -> None:
    if state.is_select:
        state.update_execution_options(populate_existing=True)
