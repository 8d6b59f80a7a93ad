"""nbgrader's filesystem exchange, as the grading service uses it: the entries students put in
its inbound folder, collecting one student's newest entry with the course's collector
(`SafeCollect`: `nbgrader collect --update`'s rules and AttnLab's checks), releasing one
student's feedback page with nbgrader's own release, and watching the inbound folder.

The exchange's settings are read as nbgrader's commands read them: the Jupyter configuration
folders' nbgrader_config.py (where JupyterHub deployments set `c.Exchange.root`), then the
course's.
"""
import logging
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

from .course import Course, CourseError
from .student_files import unsafe_id

SETTLE_SECONDS = 2.0    # an entry not made by `nbgrader submit` is taken once it is this long unchanged


@dataclass(frozen=True)
class Entry:
    name: str           # student+assignment+time+random, as `nbgrader submit` names it
    student: str
    assignment: str
    time: str           # as the name gives it (nbgrader's format sorts in time order)


class Exchange:
    def __init__(self, course: Course, log: logging.Logger):
        from jupyter_core.paths import jupyter_config_path
        from nbgrader.exchange.default import Exchange as Default
        self.course = course
        self.log = log.getChild("nbgrader")        # nbgrader's warnings (what it skipped, and why) only
        self.log.setLevel(logging.WARNING)
        self.config = Config()
        for folder in reversed(jupyter_config_path()):      # the lowest priority first
            if (Path(folder) / "nbgrader_config.py").is_file():
                try:
                    self.config.merge(PyFileConfigLoader("nbgrader_config.py", path=folder).load_config())
                except Exception as exc:    # an administrator's Python file: whatever it raises, say where
                    raise CourseError(f"{Path(folder) / 'nbgrader_config.py'} cannot be read: "
                                      f"{type(exc).__name__}: {exc}") from None
        self.config.merge(course.config)
        root = Path(Default(config=self.config).root)
        self.inbound = root / course.dirs.course_id / "inbound"
        self.outbound = root / course.dirs.course_id / "outbound"
        if not self.inbound.is_dir():
            raise CourseError(f"the exchange has no inbound folder {self.inbound}: set c.Exchange.root and "
                              "release an assignment (`nbgrader release_assignment`) first")

    def released(self) -> list:
        """The assignments released to students (the exchange's outbound folder)."""
        return sorted(p.name for p in self.outbound.iterdir() if p.is_dir()) if self.outbound.is_dir() else []

    def entries(self, assignments) -> tuple:
        """([Entry] in the inbound folder for `assignments` that are complete, whether any is not
        complete yet). An entry is complete when `nbgrader submit` has finished it (its last step
        opens the folder to everyone), else once nothing in it changed for SETTLE_SECONDS."""
        found, unfinished = [], False
        for name in os.listdir(self.inbound):
            parts = name.rsplit("+", 3)
            if len(parts) < 3 or parts[1] not in assignments:
                continue
            if _complete(self.inbound / name):
                found.append(Entry(name, parts[0], parts[1], parts[2]))
            else:
                unfinished = True
        return found, unfinished

    def collect(self, assignment: str, student: str) -> tuple:
        """Collect `student`'s newest entry of `assignment` into submitted/ as `nbgrader collect
        --update` does (with the course's collector); returns (the name of the entry that
        submitted/ now holds, or None, {entry name: why not collected})."""
        if unsafe_id(student):      # the collector globs by the id: '*' would collect everyone
            raise ValueError(unsafe_id(student))
        collector = self._app("Collect", assignment, student)
        collector.update = True
        collector.start()
        chosen = [r["filename"] for r in collector.src_records if r["username"] == student]
        return (chosen or [None])[0], getattr(collector, "skipped", {})

    def release_feedback(self, assignment: str, student: str) -> None:
        """`nbgrader release_feedback --student`: the page in feedback/ goes to the exchange, named
        by its submission's secret, so that `nbgrader fetch_feedback` finds it."""
        self._app("ReleaseFeedback", assignment, student).start()

    def _app(self, kind: str, assignment: str, student: str):
        from nbgrader.auth import Authenticator
        from nbgrader.coursedir import CourseDirectory
        from nbgrader.exchange import ExchangeFactory
        dirs = CourseDirectory(config=self.config, root=str(self.course.root), assignment_id=assignment,
                               student_id=student)
        factory = ExchangeFactory(config=self.config)
        return getattr(factory, kind)(coursedir=dirs, authenticator=Authenticator(config=self.config),
                                      config=self.config, log=self.log)

    def watch(self, wake):
        """Call `wake()` on every change in the inbound folder (from a thread of watchdog's)."""
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers import Observer

        class Changed(FileSystemEventHandler):
            def on_any_event(self, event):
                wake()

        observer = Observer()
        observer.schedule(Changed(), str(self.inbound), recursive=False)
        observer.daemon = True
        observer.start()
        return observer


def _complete(path: Path) -> bool:
    try:
        info = os.lstat(path)
        if not stat.S_ISDIR(info.st_mode):
            return True         # not a folder: the collector refuses it, with why
        if stat.S_IMODE(info.st_mode) == 0o777 and os.path.lexists(path / "submission_secret.txt"):
            return True
        changed = max([info.st_ctime] + [os.lstat(p).st_ctime for p in path.iterdir()])
        return time.time() - changed > SETTLE_SECONDS
    except OSError:             # gone, or unreadable: a rescan sees it again
        return False
