"""The hidden suite's building blocks: parts, checks with points and tolerances, known mistakes.

A lab's suite registers, for every graded name, a list of checks and a catalogue of known
mistakes. A check describes calls (`Call`) to the student's code and to the reference, and
compares the results in this (trusted) process. When a check fails, every catalogued mistake of
the part is run on the same calls; a mistake whose outputs equal the student's is named in the
message. Checks of a part run with the reference versions of all earlier parts swapped in, so
that one mistake costs points in its own part only.
"""
import hashlib
import zlib
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from .compare import close, mismatch
from .worker.invoke import Call, execute, inputs
from .worker.protocol import encode


@dataclass(frozen=True)
class Tolerance:
    rtol: float
    atol: float

    def __str__(self) -> str:
        return f"rtol={self.rtol:g}, atol={self.atol:g}"


FLOAT64 = Tolerance(rtol=1e-6, atol=1e-8)   # float64 inputs, float64 reference
FLOAT32 = Tolerance(rtol=1e-4, atol=1e-5)   # float32 inputs, float64 reference
EXACT = Tolerance(rtol=0.0, atol=1e-12)     # values that must be exactly zero or unchanged


class CheckFailed(Exception):
    """The student's code ran but the check's expectation does not hold."""


class StudentError(Exception):
    """The student's code raised, or its result cannot be read."""


class PartAborted(Exception):
    """The part cannot go on: a timeout, a crash or a limit of the worker."""

    def __init__(self, status: str, message: str):
        super().__init__(message)
        self.status = status


@dataclass
class Check:
    part: str
    title: str
    points: float
    tol: Tolerance | None
    why: str
    body: Callable


@dataclass
class Mistake:
    part: str
    key: str
    message: str
    impl: Callable


@dataclass
class Part:
    name: str
    points: float
    checks: list = field(default_factory=list)
    mistakes: list = field(default_factory=list)


@dataclass
class CheckResult:
    part: str
    title: str
    score: float
    max_score: float
    status: str                 # passed, failed, not run
    message: str = ""
    diagnosis: str = ""
    tolerance: str = ""


@dataclass
class PartResult:
    name: str
    checks: list
    status: str = "graded"      # graded, timeout, crashed, limit

    @property
    def score(self) -> float:
        return sum(c.score for c in self.checks)

    @property
    def max_score(self) -> float:
        return sum(c.max_score for c in self.checks)


class Suite:
    """All parts of one lab, in notebook order, with the reference they are graded against."""

    def __init__(self, lab: str, reference: dict, points: dict, kinds: dict, output_names: dict):
        self.lab = lab
        self.reference = reference              # name -> reference object (function or class)
        self.parts = {name: Part(name, p) for name, p in points.items()}
        self.kinds = kinds                      # name -> "function" | "class"
        self.output_names = output_names        # name -> labels of the items of a tuple result
        self._cache: dict = {}

    def check(self, part: str, title: str, points: float, tol: Tolerance | None = FLOAT64):
        """Register a check; its docstring says why it matters."""
        def register(body):
            doc = " ".join((body.__doc__ or "").split())
            self.parts[part].checks.append(Check(part, title, points, tol, doc, body))
            return body
        return register

    def mistake(self, part: str, message: str):
        """Register a known mistake: a wrong version of the part (a method for classes)."""
        def register(impl):
            self.parts[part].mistakes.append(Mistake(part, impl.__name__, message, impl))
            return impl
        return register

    def earlier(self, part: str) -> list:
        names = list(self.parts)
        return names[:names.index(part)]

    def reference_result(self, call: Call):
        """The reference's result for `call`, cached: hidden inputs repeat for every student."""
        key = encode(call)
        if key not in self._cache:
            self._cache[key] = execute(call, self.reference)[0]
        return self._cache[key]

    def namespace_with(self, mistake: Mistake) -> dict:
        """The reference namespace with one part replaced by a catalogued mistake."""
        namespace = dict(self.reference)
        original = self.reference[mistake.part]
        if self.kinds[mistake.part] == "class":
            namespace[mistake.part] = type(original.__name__, (original,), {"forward": mistake.impl})
        else:
            namespace[mistake.part] = mistake.impl
        return namespace

    def validate(self) -> None:
        for part in self.parts.values():
            total = sum(c.points for c in part.checks)
            if abs(total - part.points) > 1e-9:
                raise ValueError(f"{self.lab}/{part.name}: checks give {total} points, part has {part.points}")


class Trial:
    """What a check body works with: a seeded generator, the student, and the reference.

    The generator's seed mixes the check's identity with `salt`, a per-submission secret
    (see `secrets.salt`): each student gets other hidden inputs, and a regrade the same ones.
    """

    def __init__(self, suite: Suite, check: Check, runner, salt: bytes = b""):
        self.suite, self.check, self.runner = suite, check, runner
        identity = f"{suite.lab}/{check.part}/{check.title}".encode()
        seed = zlib.crc32(identity) if not salt else \
            int.from_bytes(hashlib.blake2b(identity, key=salt[:64], digest_size=16).digest(), "little")
        self.rng = np.random.default_rng(seed)
        self.observed: list = []    # (call, student result) for diagnosis

    def normal(self, *shape, scale: float = 1.0) -> np.ndarray:
        return scale * self.rng.standard_normal(shape)

    def student(self, call: Call):
        return self.student_with_inputs(call)[0]

    def student_with_inputs(self, call: Call):
        """The student's result and the copies of the inputs it received, after the call."""
        try:
            value, given = self.runner.run(call)
        except StudentError as exc:
            raise CheckFailed(f"{call.describe()} {exc}") from None
        self.observed.append((call, value))
        return value, given

    def reference(self, call: Call):
        return self.suite.reference_result(call)

    def expect_match(self, call: Call, against: Call | None = None):
        """The student's result for `call` equals the reference's for `against` (default: `call`)."""
        tol = self.check.tol
        got = self.student(call)
        names = self.suite.output_names.get(self.check.part)
        problem = mismatch(got, self.reference(against or call), tol.rtol, tol.atol, names)
        if problem:
            raise CheckFailed(f"{call.describe()}: {problem}")
        return got

    def expect_inputs_unchanged(self, call: Call) -> None:
        """The call leaves its inputs as they were, and its result is right: code that computes
        nothing earns nothing for leaving its inputs alone."""
        got, given = self.student_with_inputs(call)
        for original, after in zip(inputs(call), given):
            if after.shape != original.shape or not np.array_equal(after, original, equal_nan=True):
                raise CheckFailed(f"{call.describe()} modified an input array of shape "
                                  f"{original.shape} in place; compute into a new array instead")
        tol = self.check.tol or FLOAT64
        problem = mismatch(got, self.reference(call), tol.rtol, tol.atol, self.suite.output_names.get(self.check.part))
        if problem:
            raise CheckFailed(f"{call.describe()}: {problem}")

    def fail(self, message: str):
        raise CheckFailed(message)


def run_part(suite: Suite, name: str, runner, salt: bytes = b"") -> PartResult:
    """Run every check of part `name` against `runner`; never raises for student behaviour.
    `salt` selects the hidden inputs (empty: the fixed inputs of the mutant bank and the docs)."""
    part = suite.parts[name]
    results, status, reason = [], "graded", ""
    with runner.part(name, suite.earlier(name)) as ready:
        if ready is not True:
            status, reason = ready
        for check in part.checks:
            base = CheckResult(name, check.title, 0.0, check.points, "not run",
                               tolerance=str(check.tol or ""))
            if status != "graded":
                base.message = reason
                results.append(base)
                continue
            trial = Trial(suite, check, runner, salt)
            try:
                check.body(trial)
                base.score, base.status = check.points, "passed"
            except CheckFailed as failure:
                base.status, base.message = "failed", str(failure)
                base.diagnosis = diagnose(suite, part, trial)
            except PartAborted as abort:
                status = abort.status
                reason = f"not run: an earlier check of this part ended with a {abort.status}"
                base.status, base.message = "failed", str(abort)
            except Exception as exc:  # a check that cannot handle what came back: fail it, say why
                base.status = "failed"
                base.message = f"the result could not be checked ({type(exc).__name__}: {exc})"
            results.append(base)
    return PartResult(name, results, status)


def diagnose(suite: Suite, part: Part, trial: Trial) -> str:
    """The first catalogued mistake that reproduces every result the student returned."""
    if not trial.observed:
        return ""
    tol = trial.check.tol or FLOAT64
    for mistake in part.mistakes:
        namespace = suite.namespace_with(mistake)
        differs_from_reference = False
        for call, got in trial.observed:
            try:
                with np.errstate(all="ignore"):
                    wrong = execute(call, namespace)[0]
            except Exception:
                break
            if not close(got, wrong, tol.rtol, tol.atol):
                break
            differs_from_reference |= not close(wrong, trial.reference(call), tol.rtol, tol.atol)
        else:
            if differs_from_reference:
                return mistake.message
    return ""
