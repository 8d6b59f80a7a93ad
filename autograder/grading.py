"""Grading one submission: inspect the notebook, run it in the sandboxed worker, run the suite.

This needs no nbgrader course: `attnlab grade` runs one `Slot` per parallel worker, and the
Gradescope bundle runs one for its single submission.
"""
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat

from . import labs, notebooks, results, submission
from .checks import run_part
from .messages import part_text
from .results import Result
from .runners import SandboxRunner
from .sandbox import Limits, Worker, slot_uid


@dataclass
class Slot:
    """One grading process: the suite, the release notebook and a sandboxed worker that runs as
    the slot's own user."""
    assignment: str
    release_dir: Path
    notebook: str
    mode: str
    limits: Limits
    index: int = 0

    def __post_init__(self):
        self.suite = labs.load(self.assignment).suite
        self.release = notebooks.read(self.release_dir / self.notebook)
        self.worker = Worker(self.mode, self.release_dir, self.limits, slot_uid(self.index))

    def grade(self, student: str, path: Path, salt: bytes = b"") -> tuple:
        """(Result, the restored notebook with the reports as outputs, or None). `salt` selects
        the hidden inputs. A grader error restarts the worker before it propagates."""
        try:
            return self._grade(student, path, salt)
        except BaseException:
            self.worker.close()
            raise

    def _grade(self, student: str, path: Path, salt: bytes) -> tuple:
        start = time.monotonic()
        try:
            if not path.exists():
                found = sorted(p.name for p in path.parent.glob("*.ipynb"))
                raise submission.Unreadable(f"expected {path.name} in the submission; found {found or 'no notebook'}")
            nb, id_notes = submission.load(path)   # duplicated cell ids count as tampering
            inspection = submission.inspect(nb, self.release)
        except submission.Unreadable as exc:
            return results.ungraded(student, self.assignment, self.suite, "unreadable", str(exc)), None
        if not self.worker.alive:       # the slot's start-up is not the submission's time
            started = time.monotonic()
            self.worker.start()
            start += time.monotonic() - started
        runner = SandboxRunner(self.worker, self.suite, inspection.cells, self.limits)
        runner.start()
        parts = [run_part(self.suite, name, runner, salt) for name in self.suite.parts]
        runner.finish()
        cells = _cell_notes(runner)
        status = "graded" if all(p.status == "graded" for p in parts) and not cells else "partly graded"
        result = Result(student, self.assignment, status, parts, id_notes + inspection.tampering,
                        inspection.notes + runner.notes, time.monotonic() - start, self.mode, cells=cells)
        return result, _with_reports(inspection.notebook, parts)


CELL_PROBLEMS = {"timeout": "did not finish in time and was skipped",
                 "crashed": "ended the notebook process and was skipped",
                 "skipped": "was not run: the time limit was used up",
                 "memory": "ran out of memory",
                 "syntax": "has a syntax error",
                 "protocol": "wrote to the grader's channel and was skipped"}


def _cell_notes(runner) -> list:
    """Cells that did not finish or could not run, in words, with the error where there is one
    (other errors in demo cells are the student's business)."""
    notes = []
    for source, entry in zip(runner.cells, runner.cell_log):
        if entry and entry[0] in CELL_PROBLEMS:
            first = next((line.strip() for line in source.splitlines() if line.strip()), "")
            detail = f": {entry[1]}" if entry[1] else ""
            notes.append(f"the cell starting `{first[:60]}` {CELL_PROBLEMS[entry[0]]}{detail}")
    return notes


def _with_reports(nb, parts) -> str:
    """The restored notebook (changed here), each test cell's output replaced by its part's
    report. Its cells were validated when it was read: it is written without validating again."""
    by_cell = {f"test_{p.name}": p for p in parts}
    for cell in nb.cells:
        part = by_cell.get(notebooks.grade_id(cell))
        if part is not None:
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=part_text(part) + "\n")]
    return nbformat.v4.writes(nb)
