"""AttnLab's settings in nbgrader_config.py, as traitlets beside nbgrader's own (`c.AttnLab.*`).

    c.AttnLab.call_timeout = 2.0                    # seconds per call of a student function (CPU, not load)
    c.AttnLab.memory = 2048                         # MiB for the student's process
    c.AttnLab.gradescope_details = "after_due_date" # when Gradescope shows the hidden checks' details
    c.AttnLab.lms_ids = {"2001": "ada"}             # LMS user id -> student id in the gradebook
    c.AttnLab.gradescope_visibility = "after_due_date"  # when Gradescope shows the whole result

    c.AttnLabService.attempts = 5                   # `attnlab serve`: gradings per student per hour

Command-line options override the limits; the Gradescope bundle carries all of them.
"""
from traitlets import Bool, Dict, Enum, Float, Int, List, TraitError, Unicode, validate
from traitlets.config import Configurable

from .sandbox import Limits

MIN_MEMORY_MIB = 64
MAX_SECONDS = 86400       # a time limit longer than a day is a typo (and inf overflows the clock)


_CHARGED = ("(charged: CPU time, or wall time not spent waiting for a CPU; the machine's other "
            "work is not charged)")


class AttnLab(Configurable):
    call_timeout = Float(Limits.call_seconds, help=f"Seconds per call of a student function {_CHARGED}.",
                         ).tag(config=True)
    cell_timeout = Float(Limits.cell_seconds, help=f"Seconds per notebook cell {_CHARGED}.").tag(config=True)
    submission_timeout = Float(Limits.submission_seconds,
                               help=f"Seconds per submission in all {_CHARGED}: an infinite loop costs at most "
                                    "this, on a busy machine as on an idle one.").tag(config=True)
    wall_factor = Float(Limits.wall_factor, help="A submission still within its time limits after this many times "
                        "them in wall time was starved by a busy machine: it is graded again at the end of the "
                        "run, then left ungraded (status busy, nothing recorded) rather than graded lower.",
                        ).tag(config=True)
    memory = Int(Limits.memory_bytes // 2**20, help="MiB of memory for the student's process.").tag(config=True)
    gradescope_details = Enum(
        ("visible", "after_due_date", "after_published", "hidden"), "after_due_date",
        help="When Gradescope shows a hidden check's details (what came back, what was expected, the "
             "likely cause); its name and points are always visible.").tag(config=True)
    gradescope_visibility = Enum(
        ("visible", "after_due_date", "after_published", "hidden"), "visible",
        help="When Gradescope shows the whole autograder result (score and tests) to the student: "
             "Gradescope's top-level visibility.").tag(config=True)
    lms_ids = Dict(value_trait=Unicode(), help="LMS user id -> student id in the gradebook, for "
                   "`attnlab grade --zip-collect` (ids not listed are used as they are) and back, for "
                   "`attnlab lms-grades`.").tag(config=True)
    lms_unknown_ids = Enum(
        ("warn", "skip"), "warn",
        help="An LMS id that is neither in lms_ids nor a student of the gradebook: collected as a new "
             "student with a warning naming the file and the closest known ids ('warn'), or skipped "
             "with that warning ('skip').").tag(config=True)
    lms_columns = Dict(value_trait=Unicode(), help="assignment -> the column of the LMS's gradebook "
                       "that `attnlab lms-grades` fills, as the LMS's export names it (Canvas: "
                       "'Lab 05 (123456)'); default: the assignment's name.").tag(config=True)

    @validate("wall_factor")
    def _at_least_one(self, proposal):
        if not 1 <= proposal.value <= 1000:
            raise TraitError(f"AttnLab.wall_factor must be between 1 and 1000, got {proposal.value}")
        return proposal.value

    @validate("call_timeout", "cell_timeout", "submission_timeout")
    def _positive(self, proposal):
        if not 0 < proposal.value <= MAX_SECONDS:
            raise TraitError(f"AttnLab.{proposal.trait.name} must be positive and at most {MAX_SECONDS} "
                             f"(a day), got {proposal.value}")
        return proposal.value

    @validate("memory")
    def _enough_memory(self, proposal):
        if proposal.value < MIN_MEMORY_MIB:
            raise TraitError(f"AttnLab.memory must be at least {MIN_MEMORY_MIB} MiB, got {proposal.value}")
        return proposal.value

    def limits(self) -> Limits:
        return Limits(call_seconds=self.call_timeout, cell_seconds=self.cell_timeout,
                      submission_seconds=self.submission_timeout, memory_bytes=self.memory * 2**20,
                      wall_factor=self.wall_factor)

    def as_dict(self) -> dict:
        return {name: getattr(self, name) for name in self.class_trait_names(config=True)}


class AttnLabService(Configurable):
    """The policies of `attnlab serve`, which grades each submission as it arrives in nbgrader's
    exchange."""
    assignments = List(Unicode(), help="The assignments graded on arrival (default: every lab released "
                       "to the exchange when the service starts).").tag(config=True)
    slots = Int(0, help="Grading slots per assignment, each with a sandboxed worker kept warm "
                "(0: one per core).").tag(config=True)
    before_due_date = Enum(
        ("score", "checks", "full"), "checks",
        help="What a student's page shows before their due date: 'score' (the total and each part's "
             "score), 'checks' (also every check's name, points and whether it passed) or 'full' (also "
             "what came back and the likely cause). After the due date the page is full, with the "
             "exact fixes.").tag(config=True)
    attempts = Int(0, help="Gradings per student and assignment within `attempt_window` (0: no limit). "
                   "A submission beyond it is kept and graded once the window allows (or by "
                   "`attnlab grade`), and the student is told when.").tag(config=True)
    attempt_window = Float(3600.0, help="Seconds over which `attempts` are counted.").tag(config=True)
    grade_late = Bool(True, help="Grade a submission made after the student's due date on arrival "
                      "(with nbgrader's late penalty); if False it is collected and left for "
                      "`attnlab grade`, and the student is told.").tag(config=True)
    rescan = Float(30.0, help="Seconds between rescans of the exchange, a backstop for missed "
                   "file-system events.").tag(config=True)

    @validate("assignments")
    def _known(self, proposal):
        from . import labs
        unknown = [a for a in proposal.value if a not in labs.assignments()]
        if unknown:
            raise TraitError(f"AttnLabService.assignments: {', '.join(map(repr, unknown))} is not one of "
                             f"AttnLab's labs ({', '.join(labs.assignments())})")
        return proposal.value

    @validate("slots", "attempts")
    def _not_negative(self, proposal):
        if not 0 <= proposal.value <= 1024:
            raise TraitError(f"AttnLabService.{proposal.trait.name} must be between 0 and 1024, got {proposal.value}")
        return proposal.value

    @validate("attempt_window", "rescan")
    def _seconds(self, proposal):
        if not 0 < proposal.value <= 366 * MAX_SECONDS:
            raise TraitError(f"AttnLabService.{proposal.trait.name} must be positive and at most a year, "
                             f"got {proposal.value}")
        return proposal.value
