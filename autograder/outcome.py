"""What grading a submission comes to: its checks and parts (`run_part`), the result for one student
(`grading.Slot`), and the grade nbgrader's gradebook records for it (`Recorded`, made by
gradebook.py alone).

Scores shown anywhere come from the gradebook once the submission is recorded there: a human's
score or extra credit replaces the part's checks' sum, and the late penalty is taken off the
total, as `nbgrader export` does. How results are written to files is results.py's business.
"""
from dataclasses import asdict, dataclass, field

from .messages import points
from .text import NOTE_LIMIT, shown

STATUSES = ("graded", "partly graded", "unreadable", "missing", "error", "busy")
UNRECORDED = ("error", "busy")      # not graded: the grader failed, or the machine was too busy


@dataclass
class CheckResult:
    part: str
    title: str
    score: float
    max_score: float
    status: str                 # passed, failed, not credited, not run
    message: str = ""
    diagnosis: str = ""         # tier 1 hint
    tolerance: str = ""
    fix: str = ""               # tier 2 hint


@dataclass
class PartResult:
    name: str
    checks: list
    status: str = "graded"      # graded, timeout, crashed, limit, memory, protocol, busy

    @property
    def score(self) -> float:
        return sum(c.score for c in self.checks)

    @property
    def max_score(self) -> float:
        return sum(c.max_score for c in self.checks)


@dataclass(frozen=True)
class CellGrade:
    """One graded cell of a recorded submission (a part's test cell, or a written answer)."""
    score: float                        # nbgrader's: the manual score if any, else the auto score, plus extra credit
    max_score: float
    auto_score: float | None = None
    manual_score: float | None = None
    extra_credit: float = 0.0
    needs_manual_grade: bool = False
    comment: str = ""                   # a grader's


@dataclass(frozen=True)
class Recorded:
    """A submission's grade as nbgrader's gradebook holds it."""
    score: float                        # after the late penalty
    raw_score: float
    max_score: float
    late_penalty: float = 0.0
    seconds_late: float = 0.0
    timestamp: str = ""                 # ISO times, UTC
    duedate: str = ""
    cells: dict = field(default_factory=dict)       # grade_id -> CellGrade
    comments: dict = field(default_factory=dict)    # grade_id -> a grader's comment

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "Recorded | None":
        if not data:
            return None
        return cls(**{**data, "cells": {name: CellGrade(**cell) for name, cell in data.get("cells", {}).items()}})


@dataclass
class Result:
    student: str
    assignment: str
    status: str
    parts: list
    tampering: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    seconds: float = 0.0
    sandbox: str = ""
    timestamp: str = ""
    digest: str = ""                                    # of the graded submission (course.digest)
    work_digest: str = ""                               # of the student's work in it (course.work_digest)
    recorded: Recorded | None = None                    # the gradebook's grade (gradebook.read)
    cells: list = field(default_factory=list)           # cells that hit a limit or could not run
    assignment_points: float = 0.0                      # the gradebook's, for a student with nothing recorded
    late_unknown: bool = False                          # the LMS marks it late without its time
    charged: float = 0.0                                # seconds charged to its time budget (`budget`)

    def __post_init__(self):
        """Every text a student's files or code could have put in is bounded and shown safely
        (`text.shown`), wherever it goes from here."""
        self.notes, self.tampering, self.cells = (
            [shown(t, NOTE_LIMIT) for t in texts] for texts in (self.notes, self.tampering, self.cells))
        for part in self.parts:
            for check in part.checks:
                check.message = shown(check.message, NOTE_LIMIT)

    @property
    def score(self) -> float:
        return self.recorded.score if self.recorded else sum(p.score for p in self.parts)

    @property
    def max_score(self) -> float:
        if self.recorded:
            return self.recorded.max_score
        return self.assignment_points or sum(p.max_score for p in self.parts)

    @property
    def late_penalty(self) -> float:
        return self.recorded.late_penalty if self.recorded else 0.0

    @property
    def seconds_late(self) -> float:
        return self.recorded.seconds_late if self.recorded else 0.0

    def _cells(self) -> dict:
        return self.recorded.cells if self.recorded else {}

    def part_score(self, part) -> float:
        """The part's score in the gradebook (a human's score wins), else its checks' sum."""
        cell = self._cells().get(f"test_{part.name}")
        return part.score if cell is None else cell.score

    def adjustment(self, part) -> str:
        """What a human changed of `part`'s score in the gradebook, in words ('' if nothing)."""
        cell = self._cells().get(f"test_{part.name}") or CellGrade(0.0, 0.0)
        manual, extra = cell.manual_score, cell.extra_credit
        said = ([f"set this part's score to {points(manual)}"] if manual is not None else []) + \
               ([f"added {points(extra)} point{'s' * (extra != 1)} of extra credit"] if extra else [])
        return f"The instructor {' and '.join(said)}" if said else ""

    def extra_credit(self, cell: str | None = None) -> float:
        """The extra credit a human gave in the gradebook, to `cell` or in all."""
        cells = self._cells()
        return sum(cells[name].extra_credit for name in ([cell] if cell else cells) if name in cells)

    def comment(self, name: str) -> str:
        return self.recorded.comments.get(name, "") if self.recorded else ""

    def hand_graded(self) -> dict:
        """{grade_id: CellGrade} of the cells graded by hand (written answers)."""
        return {name: cell for name, cell in self._cells().items() if not name.startswith("test_")}

    def attention(self) -> list:
        """The problems but the written answers still to grade, which formgrader lists anyway."""
        return [p for p in self.problems() if not p.startswith("to grade by hand")]

    def problems(self) -> list:
        """Why a human should look: parts not fully run, tampering, unreadable or missing,
        cells still to be graded by hand."""
        if self.status in ("unreadable", "missing", *UNRECORDED):
            found = [f"{self.status}: {self.notes[0]}" if self.notes else self.status]
        else:
            found = [f"{p.name}: {p.status}" for p in self.parts if p.status != "graded"]
            if self.tampering:
                found.append(f"tampering ({len(self.tampering)})")
            if self.late_unknown and not self.timestamp:
                found.append("late, time unknown")
            found += [f"cell: {problem}" for problem in self.cells]
            pending = [name for name, cell in self.hand_graded().items()
                       if cell.needs_manual_grade and cell.manual_score is None]
            if pending:
                found.append(f"to grade by hand: {', '.join(sorted(pending))}" if len(pending) <= 3
                             else f"to grade by hand: {len(pending)} written answers")
        review = sorted(name for name, cell in self._cells().items()
                        if cell.needs_manual_grade and cell.manual_score is not None)
        if review:
            found.append(f"to review by hand (scored before a resubmission): {', '.join(review)}")
        return found


def ungraded(student: str, assignment: str, suite, status: str, reason: str) -> Result:
    """A result with every check 'not run' (unreadable, missing, not graded)."""
    parts = [PartResult(name, [CheckResult(name, c.title, 0.0, c.points, "not run", reason)
                               for c in part.checks], status=status)
             for name, part in suite.parts.items()]
    return Result(student, assignment, status, parts, notes=[reason])
