"""The hidden suite's building blocks: parts, checks with points and tolerances, known mistakes.

A lab's suite registers, for every graded name, a list of checks and a catalogue of known
mistakes. A check describes calls (`Call`) to the student's code and to the reference, and
compares the results in this (trusted) process. Checks of a part run with the reference versions
of all earlier parts swapped in, so that one mistake costs points in its own part only.

Value checks compare results with the reference. Property checks (inputs left unchanged,
float32 or int32 inputs) test one property of the student's own code; a property is worth its
points only on a right result, so when the property holds but the result is wrong the check is
"not credited" and names the value check to fix, instead of failing for a reason it does not test.

When a check fails, every catalogued mistake of the part is run on the calls of every check of
the part; a mistake is named only if it reproduces the student's results (values, or the
exception raised) on the failed check and on every other check where the mistake would give a
wrong result, so that a look-alike mistake is never named. A mistake has a hint in two tiers:
`message` names the mistake and the idea, `fix` (optional) the exact change.
"""
import contextlib
import hashlib
import zlib
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from . import conditions, verdict
from .compare import close, kind, mismatch
from .derived import derive, paired
from .relations import lazy, relations
from .outcome import CheckResult, PartResult
from .runners import LocalRunner, PartAborted, StudentError
from .verdict import CheckFailed, Raised
from .worker.invoke import Call, Rng, execute, inputs
from .worker.protocol import encode


@dataclass(frozen=True)
class Tolerance:
    rtol: float
    atol: float

    def __str__(self) -> str:
        return f"rtol={self.rtol:g}, atol={self.atol:g}"


FLOAT64 = Tolerance(**verdict.TOL)       # the default, the visible checks' too
SINGLE_RTOL = 4 * float(np.finfo(np.float32).eps)   # a float32 result where no input asked for float64
FLOAT32 = Tolerance(**verdict.FLOAT32)   # float32 inputs, float64 reference
# A result from inputs in another dtype (float32) may be off by this many times the largest error
# the reference itself makes on those inputs: rounding the inputs, and computing in float32,
# cost badly conditioned inputs (a row with a large mean and a small spread) more than `atol`.
ROUNDING = 8
EXACT = Tolerance(rtol=0.0, atol=1e-12)     # values that must be exactly zero or unchanged


class NotCredited(Exception):
    """A property check's property holds, but the result it was observed on is wrong."""


@dataclass
class Check:
    part: str
    title: str
    points: float
    tol: Tolerance | None
    why: str
    body: Callable
    needs: str = ""             # property checks: the value check whose right result they need


@dataclass
class Mistake:
    part: str
    key: str
    message: str                # tier 1: the mistake and the idea, never the literal code fix
    impl: Callable | None       # None: recognised by a check itself, not by reproducing outputs
    fix: str = ""               # tier 2: the exact fix
    nonfinite: bool = False     # its idea is an overflow, a 0 log 0 or a division by 0: NaN or inf
    #                             where the reference has numbers is evidence for it (verdict.shows)
    rounding: bool = False      # its idea is a lower precision (float32): the student's results
    #                             are its own if they are off from the reference by as much as its
    #                             own are (rounding_alike), wherever the code rounds
    rewrite: object = None      # a derived mistake's rewrite of the reference (derived.Derived)


IN_PLACE = Mistake("*", "in_place", *verdict.IN_PLACE[:1], None, verdict.IN_PLACE[1])
FOREIGN_RNG = Mistake("*", "foreign_rng", *verdict.FOREIGN_RNG[:1], None, verdict.FOREIGN_RNG[1])
SEED_IGNORED = Mistake("*", "seed_ignored", *verdict.SEED_IGNORED[:1], None, verdict.SEED_IGNORED[1])
NO_RETURN = Mistake("*", "no_return", "the function returns None: a return statement is missing (or "
                    "it returns the result of an in-place method such as list.sort)", None,
                    "end the function with return followed by the result")
GENERIC = (IN_PLACE, FOREIGN_RNG, SEED_IGNORED, NO_RETURN)


@dataclass
class Part:
    name: str
    points: float
    checks: list = field(default_factory=list)
    mistakes: list = field(default_factory=list)


# Trial methods that raise NotCredited: a check that calls one says in `needs` which check to fix.
CREDITED_ON_A_RIGHT_RESULT = {"expect_inputs_unchanged", "needs_right_result", "credit_if_right",
                              "expect_same_as", "expect_float32_close"}


class Suite:
    """All parts of one lab, in notebook order, with the reference they are graded against."""

    def __init__(self, lab: str, reference: dict, points: dict, kinds: dict, output_names: dict):
        self.lab = lab
        self.reference = reference              # name -> reference object (function or class)
        self.parts = {name: Part(name, p) for name, p in points.items()}
        self.kinds = kinds                      # name -> "function" | "class"
        self.output_names = output_names        # name -> labels of the items of a tuple result
        self._cache: dict = {}
        self._derived: dict = {}
        self._probes: dict = {}     # part -> the calls its checks make under another salt

    def check(self, part: str, title: str, points: float, tol: Tolerance | None = FLOAT64,
              needs: str = ""):
        """Register a check; its docstring says why it matters. A property check names in
        `needs` the value check whose right result it is credited on."""
        def register(body):
            doc = " ".join((body.__doc__ or "").split())
            if needs and needs not in {c.title for c in self.parts[part].checks}:
                raise ValueError(f"{self.lab}/{part}: {title!r} needs an unknown check {needs!r}")
            if not needs and CREDITED_ON_A_RIGHT_RESULT & set(body.__code__.co_names):
                raise ValueError(f"{self.lab}/{part}: {title!r} is credited on a right result: name "
                                 "the value check it points to in `needs`")
            self.parts[part].checks.append(Check(part, title, points, tol, doc, body, needs))
            return body
        return register

    def mistake(self, part: str, message: str, fix: str = "", nonfinite: bool = False):
        """Register a known mistake: a wrong version of the part (a method for classes), with
        its tier-1 `message` and tier-2 `fix`. `nonfinite`: the mistake is about values that
        overflow or are undefined (NaN or inf where the reference has numbers is its sign);
        any other is shown only by wrong numbers (verdict.shows)."""
        def register(impl):
            self.parts[part].mistakes.append(Mistake(part, impl.__name__, message, impl, fix, nonfinite))
            return impl
        return register

    def rounding(self, part: str, *keys: str) -> None:
        """Mark catalogued mistakes of `part` as computing in float32: other code with the same
        idea rounds at other places, so the student's results need only be as far from the
        reference as the mistake's (rounding_alike)."""
        catalogue = {m.key: m for m in self.parts[part].mistakes}
        for key in keys:
            catalogue[key].rounding = True

    def nonfinite(self, part: str, *keys: str) -> None:
        """Mark catalogued mistakes of `part` as being about values that overflow or are undefined
        (see `mistake`)."""
        catalogue = {m.key: m for m in self.parts[part].mistakes}
        for key in keys:
            catalogue[key].nonfinite = True

    def recognised(self, part: str, key: str, message: str, fix: str = "") -> Mistake:
        """Register a mistake of `part` that one of its checks recognises itself (raising
        CheckFailed with it as the cause) rather than by reproducing the student's results: one
        whose results depend on the student's own random draws, or on the type returned."""
        mistake = Mistake(part, key, message, None, fix)
        self.parts[part].mistakes.append(mistake)
        return mistake

    def earlier(self, part: str) -> list:
        names = list(self.parts)
        return names[:names.index(part)]

    def reference_result(self, call: Call):
        """The reference's result for `call`, cached: hidden inputs repeat for every student."""
        key = encode(call)
        if key not in self._cache:
            self._cache[key] = execute(call, self.reference)[0]
        return self._cache[key]

    def derived(self, part: str) -> list:
        """The mistakes derived from the reference's `part` by the mutation operators
        (derived.derive), built on first use."""
        if part not in self._derived:
            target = self._target(part)
            module = target.__globals__
            names = {n for n, v in module.items() if getattr(v, "__module__", None) == target.__module__}
            self._derived[part] = [Mistake(part, f"derived-{i}", d.idea, d.impl, nonfinite=d.nonfinite, rewrite=d)
                                   for i, d in enumerate(derive(target, names))]
        return self._derived[part]

    def _target(self, part: str):
        """The function whose rewrites are `part`'s derived mistakes (a class's forward)."""
        reference = self.reference[part]
        return reference.forward if self.kinds[part] == "class" else reference

    def pairs(self, mistakes: list) -> list:
        """The derived mistakes made two at a time (derived.paired): one function's rewrites at places apart."""
        out = []
        for i, first in enumerate(mistakes):
            for second in mistakes[i + 1:]:
                if (both := paired(self._target(first.part), first.rewrite, second.rewrite)):
                    out.append(Mistake(first.part, f"{first.key}+{second.key}", both.idea, both.impl,
                                       nonfinite=both.nonfinite, rewrite=both))
        return out

    def one_program(self, mistakes: list) -> bool:
        """The mistakes (at most MAX_ALIKE ideas) return the same values on the hidden calls of
        another salt too: in effect they are one program, described in several ways. (Raising
        alike is no evidence: a shape error is every broadcasting mistake's.)"""
        if len({m.message for m in mistakes}) > MAX_ALIKE:
            return False
        if mistakes[0].part not in self._probes:
            recorder = _Recorder(self.reference)
            run_part(self, mistakes[0].part, recorder, b"derived-probe")
            self._probes[mistakes[0].part] = recorder.calls
        outcomes = [[_outcome(self.namespace_with(m), call) for call in self._probes[m.part]] for m in mistakes]
        return not any(isinstance(o, Raised) for row in outcomes for o in row) and all(
            verdict.same_outcome(a, b, FLOAT32.rtol, FLOAT32.atol) for other in outcomes[1:] for a, b in zip(outcomes[0], other))

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


MAX_ALIKE = 3
ALIKE = "; or, which gives the same results, "


class _Recorder(LocalRunner):
    """The reference run as a submission, keeping every call the checks make."""

    def __init__(self, reference: dict):
        super().__init__(dict(reference), reference)
        self.calls: list = []

    def run(self, call, inputs: bool = False):
        self.calls.append(call)
        return super().run(call, inputs)


def _outcome(namespace: dict, call: Call):
    """The result of `call`, or the Raised of its exception."""
    try:
        with np.errstate(all="ignore"):
            return execute(call, namespace)[0]
    except Exception as exc:
        return Raised(f"raised {type(exc).__name__}: {exc}")


def halfway_float32(x: np.ndarray) -> np.ndarray:
    """`x` moved (by less than a float32 step) to halfway between its two nearest float32
    numbers: a float32 result that passes it through misses it by half a step, at least 3e-8 of
    it, three times FLOAT64's rtol, whatever the draw (nearer a float32 number, it may not)."""
    nearest = x.astype(np.float32)
    below = np.where(nearest > x, np.nextafter(nearest, np.float32(-np.inf)), nearest)
    return (below.astype(float) + np.nextafter(below, np.float32(np.inf)).astype(float)) / 2


def float32_numbers(value) -> bool:
    """A float array of float32 numbers: float32 itself, or float32 values stored wider."""
    if not isinstance(value, np.ndarray) or value.dtype.kind != "f":
        return False
    finite = value[np.isfinite(value)]
    with np.errstate(over="ignore"):
        return value.dtype == np.float32 or bool(np.all(finite.astype(np.float32) == finite))


class Trial:
    """What a check body works with: a seeded generator, the student, the reference, and the
    expectations every lab's suite shares (`expect_*`), which fail the check with one line.

    The generator's seed mixes the check's identity with `salt`, a per-submission secret
    (see `secret.submission_salt`): each student gets other hidden inputs, and a regrade the same ones.
    """

    def __init__(self, suite: Suite, check: Check, runner, salt: bytes = b""):
        self.suite, self.check, self.runner = suite, check, runner
        identity = f"{suite.lab}/{check.part}/{check.title}".encode()
        seed = zlib.crc32(identity) if not salt else \
            int.from_bytes(hashlib.blake2b(identity, key=salt[:64], digest_size=16).digest(), "little")
        self.rng = np.random.default_rng(seed)
        self.observed: list = []    # (call, student result or Raised) for diagnosis

    def normal(self, *shape, scale: float = 1.0) -> np.ndarray:
        return scale * self.rng.standard_normal(shape)

    def student(self, call: Call):
        return self.student_with_inputs(call, inputs=False)[0]

    def student_with_inputs(self, call: Call, inputs: bool = True):
        """The student's result and the copies of the inputs it received, after the call (sent
        back only when asked for: [] if not `inputs`)."""
        try:
            value, given = self.runner.run(call, inputs)
        except StudentError as exc:
            self.observed.append((call, Raised(str(exc))))
            raise CheckFailed(f"{call.describe()} {exc}", firm=True) from None
        self.observed.append((call, value))
        return value, given

    def students(self, calls) -> list:
        """The student's results for independent `calls`, asked for at once (one round trip to
        the worker instead of one per call); fails as `student` does at the first that raises."""
        calls = list(calls)
        results, error = self.runner.run_many(calls)
        self.observed += [(call, value) for call, (value, _) in zip(calls, results)]
        if error is not None:
            failed = calls[len(results)]
            self.observed.append((failed, Raised(str(error))))
            raise CheckFailed(f"{failed.describe()} {error}", firm=True)
        return [value for value, _ in results]

    def reference(self, call: Call):
        return self.suite.reference_result(call)

    def expect_match(self, call: Call, against: Call | None = None):
        """The student's result for `call` equals the reference's for `against` (default: `call`).
        Float32 numbers computed from no float array (a table from sizes: RoPE frequencies) are
        judged to float32's precision, whatever the array's dtype: float64 was not asked for."""
        tol = self.check.tol
        got = self.student(call)
        names = self.suite.output_names.get(self.check.part)
        chosen = float32_numbers(got) and not any(a.dtype.kind == "f" for a in inputs(call))
        rtol = max(tol.rtol, SINGLE_RTOL) if chosen else tol.rtol
        problem = mismatch(got, self.reference(against or call), rtol, tol.atol, names)
        if problem:
            raise CheckFailed(f"{call.describe()}: {problem}", firm=True)
        return got

    def expect_matches(self, calls: list) -> None:
        """`expect_match` for every call, all run before the first difference is reported, so
        that the diagnosis sees every result."""
        problems = []
        for call in calls:
            try:
                self.expect_match(call)
            except CheckFailed as failure:
                problems.append(failure)
        if problems:
            raise problems[0]

    def expect_items(self, call: Call, items):
        """The student's result for `call` matches the reference's in the tuple items `items`
        (indices): a mistake in one output costs the checks of that output only."""
        tol, names = self.check.tol, self.suite.output_names[self.check.part]
        got, expected = self.student(call), self.reference(call)
        if not isinstance(got, tuple) or len(got) != len(expected):
            self.fail(f"{call.describe()}: {mismatch(got, expected, tol.rtol, tol.atol, names)}", firm=True)
        for i in items:
            problem = mismatch(got[i], expected[i], tol.rtol, tol.atol)
            if problem:
                self.fail(f"{call.describe()}: {names[i]}: {problem}", firm=True)
        return got

    def expect_array(self, got, shape: tuple, what: str = "the result", *, kinds: str = "f") -> None:
        """`got` (named `what` in a failure) is a NumPy array of `shape` whose dtype kind is in
        `kinds` ("f": floating point, "iu": integer); its values are other checks' business."""
        if not isinstance(got, np.ndarray):
            self.fail(f"{what} is {kind(got)}; expected a NumPy array of shape {shape}", firm=True)
        if got.shape != shape:
            self.fail(f"{what} has shape {got.shape}; expected {shape}", firm=True)
        if got.dtype.kind not in kinds:
            wanted = "integer" if kinds == "iu" else "floating-point"
            self.fail(f"{what} has dtype {got.dtype}; expected {wanted} numbers", firm=True)

    def expect_tuple(self, got, call: Call | None = None) -> None:
        """`got` is a tuple of as many items as the part has named outputs."""
        names = self.suite.output_names[self.check.part]
        if not isinstance(got, tuple) or len(got) != len(names):
            where = f"{call.describe()} " if call else ""
            self.fail(f"{where}returned {kind(got)}; expected a tuple ({', '.join(names)})", firm=True)

    def expect_arrays(self, got, shapes: list, *, kinds: str = "f") -> None:
        """`got` is a tuple of arrays of `shapes` (`expect_array`), named after the part's outputs."""
        self.expect_tuple(got)
        for name, item, shape in zip(self.suite.output_names[self.check.part], got, shapes):
            self.expect_array(item, shape, name, kinds=kinds)

    def expect_float32_close(self, build: Callable, *args) -> None:
        """`expect_same_as` for `build(*args)` (a Call) with its float arrays in float32."""
        self.expect_same_as(build(*map(as_float32, args)), build(*args))

    def expect_inputs_unchanged(self, call: Call) -> None:
        """The property: the call leaves its inputs as they were. It is credited on a right
        result only: code that computes nothing earns nothing for leaving its inputs alone."""
        with self.needs_right_result():     # code that raises has no result to credit
            got, given = self.student_with_inputs(call)
        problem = verdict.modified_input(call, given)
        if problem:
            raise CheckFailed(f"{call.describe()}: {problem}", cause=IN_PLACE)
        self.credit_if_right(call, got)

    def expect_same_as(self, call: Call, base: Call) -> None:
        """The property: `call` (the inputs of `base` in another dtype) gives the result that the
        reference gives for `base`, credited only if the student's own result for `base` is right."""
        tol, names = self.check.tol or FLOAT64, self.suite.output_names.get(self.check.part)
        with self.needs_right_result():
            right = self.student(base)
        self.credit_if_right(base, right)
        got, expected = self.student(call), self.reference(base)
        atol = rounding_slack(tol.atol, self.reference(call), expected)
        problem = mismatch(got, expected, tol.rtol, atol, names)
        if problem:
            raise CheckFailed(f"{call.describe()}: {problem} (the same inputs in float64 give the "
                              "right result: in this precision the computation loses more than it needs to, "
                              "through a cast to a lower precision or a difference of nearly equal numbers)",
                              firm=True)

    def credit_if_right(self, call: Call, got) -> None:
        """NotCredited unless `got` is the reference's result for `call`."""
        tol = self.check.tol or FLOAT64
        problem = mismatch(got, self.reference(call), tol.rtol, tol.atol, self.suite.output_names.get(self.check.part))
        if problem:
            raise NotCredited(f"{call.describe()}: {problem}")

    @contextlib.contextmanager
    def needs_right_result(self):
        """What fails inside is the result, not the property: the check is not credited."""
        try:
            yield
        except CheckFailed as failure:
            raise NotCredited(str(failure)) from None

    def fail(self, message: str, cause: "Mistake | None" = None, firm: bool = False):
        raise CheckFailed(message, cause, firm)


def rounding_slack(atol: float, rounded, expected):
    """`atol`, plus ROUNDING times the reference's largest error on the inputs in the other dtype
    (`rounded`, against `expected`), per item of a tuple."""
    if isinstance(expected, tuple):
        if not isinstance(rounded, tuple) or len(rounded) != len(expected):
            return atol
        return tuple(rounding_slack(atol, r, e) for r, e in zip(rounded, expected))
    try:
        error = np.abs(np.asarray(rounded, dtype=float) - np.asarray(expected, dtype=float))
    except (TypeError, ValueError):
        return atol
    error = error[np.isfinite(error)]
    return atol + ROUNDING * float(error.max()) if error.size else atol


def as_float32(value):
    """Float arrays (also inside a tuple) in single precision; everything else as it is."""
    if isinstance(value, tuple):
        return tuple(map(as_float32, value))
    return value.astype(np.float32) if isinstance(value, np.ndarray) and value.dtype.kind == "f" else value


def run_part(suite: Suite, name: str, runner, salt: bytes = b"") -> PartResult:
    """Run every check of part `name` against `runner`; never raises for student behaviour.
    `salt` selects the hidden inputs (empty: the fixed inputs of the mutant bank and the docs)."""
    part = suite.parts[name]
    results, trials, status, reason = [], [], "graded", ""
    with runner.part(name, suite.earlier(name)) as ready:
        if ready is not True:
            status, reason = ready
        for check in part.checks:
            base = CheckResult(name, check.title, 0.0, check.points, "not run",
                               tolerance=str(check.tol or ""))
            results.append(base)
            if status != "graded":
                base.message = reason
                continue
            trial = Trial(suite, check, runner, salt)
            trials.append((trial, base))
            try:
                check.body(trial)
                base.score, base.status = check.points, "passed"
            except CheckFailed as failure:
                base.status, base.message = "failed", str(failure)
                if failure.cause:
                    base.diagnosis, base.fix = failure.cause.message, failure.cause.fix
                elif not failure.firm and (undefined := _not_a_number(suite, trial)):
                    base.status, base.message = "not credited", undefined
            except NotCredited as wrong:
                base.status, base.message = "not credited", str(wrong)
            except PartAborted as abort:
                status = abort.status
                reason = f"not run: an earlier check of this part ended with a {abort.status}"
                base.status, base.message = "failed", str(abort)
            except Exception as exc:  # a check that cannot handle what came back: fail it, say why
                base.status = "failed"
                base.message = f"the result could not be checked ({type(exc).__name__}: {exc})"
    _point_to_failures(part, results)
    if status == "graded":
        diagnose_part(suite, part, trials)
    return PartResult(name, results, status)


def _not_a_number(suite: Suite, trial: Trial) -> str:
    """Why the student's results cannot show a property ('' if they can): one of them holds NaN
    or infinite values where the reference's result for the same call has none."""
    for call, got in trial.observed:
        if isinstance(got, Raised):
            continue
        try:
            expected = suite.reference_result(call)
        except Exception:  # a call the reference cannot make alone (it is part of a property)
            continue
        if _spoiled(got, expected):
            return (f"{call.describe()} returned NaN or infinite values where the right result has "
                    "none: the property is judged on numbers only")
    return ""


def _spoiled(got, expected) -> bool:
    """`got` holds a NaN or infinity where `expected` (same shape) has a number, or anywhere
    when the shapes differ and `expected` is all numbers."""
    if isinstance(got, (tuple, list)) and isinstance(expected, (tuple, list)):
        return any(_spoiled(g, e) for g, e in zip(got, expected))
    try:
        got, expected = np.asarray(got), np.asarray(expected)
    except (TypeError, ValueError):
        return False
    if got.dtype.kind not in "fc" or expected.dtype.kind not in "biufc":
        return False
    bad = ~np.isfinite(got)
    if got.shape == expected.shape:
        return bool((bad & np.isfinite(expected)).any())
    return bool(bad.any() and np.isfinite(expected).all())


def _point_to_failures(part: Part, results: list) -> None:
    """A check not credited points to the check to fix: its `needs` if that one failed, else the
    first check of the part that failed (the property's own inputs may show a mistake that its
    `needs` does not), else none (only these inputs show it)."""
    failed = [r.title for r in results if r.status == "failed"]
    for check, result in zip(part.checks, results):
        if result.status == "not credited":
            see = check.needs if check.needs in failed else next(iter(failed), "")
            pointer = f", see '{see}'" if see else ""
            result.message = f"not credited: needs a right result{pointer} ({result.message})"


def diagnose_part(suite: Suite, part: Part, trials: list) -> None:
    """Name a mistake under every failed check it explains (see `explains`), unless another that
    says something else explains it too: the inputs cannot tell them apart, and naming one would
    be wrong for half the students who made the other. The catalogue is asked first; the mistakes
    derived from the reference only where no catalogued one fits. Derived rewrites that say
    different things of one program (a step left out, or its input read in place of its output)
    are named together (at most MAX_ALIKE of them). Where none is named, an exception that names its
    construct (`^` on floats, `math` on an array) is explained; else a relation every wrong
    result bears to the right one (transposed, rearranged, scaled, shifted: relations.py) is said
    instead, or else the condition that the calls with wrong results alone meet (conditions.py)."""
    failed = [(t, r) for t, r in trials if r.status == "failed" and not r.diagnosis and t.observed]
    if not failed:
        return
    outputs: dict = {}      # (mistake key, call) -> the mistake's result, or the exception
    for trial, result in failed:
        if all(got is None for _, got in trial.observed):
            result.diagnosis, result.fix = NO_RETURN.message, NO_RETURN.fix
            continue
        for mistakes in _candidates(suite, part, trial, [t for t, _ in failed], outputs):
            if fits := [m for m in mistakes if explains(suite, m, trial, trials, outputs)]:
                break
        named = verdict.only_fit([(m.message, m.fix) for m in fits])
        if not named and fits and fits[0].rewrite and suite.one_program(fits):
            named = (ALIKE.join(dict.fromkeys(m.message for m in fits)), "")
        if not named:
            named = _known_exception(trial)
        if not named and (shared := relations(_against_reference(suite, trial)) or lazy(trial.observed)):
            named = (shared, "")
        if not named and conditions.wrong_on(_compared(trial)):
            if "condition" not in outputs:      # one for the part: it is read from every check's calls
                every = [seen for t, _ in trials for seen in _compared(t)]
                outputs["condition"] = conditions.condition(suite.reference, every)
            named = outputs["condition"] and (outputs["condition"], "")
        if named:
            result.diagnosis, result.fix = named


def _known_exception(trial: "Trial"):
    """The (cause, fix) of the exception whose message names its construct (verdict.KNOWN_EXCEPTIONS)
    that the calls of `trial` raised, when they all raised that one."""
    causes = {verdict.known_exception(got.text) for _, got in trial.observed if isinstance(got, Raised)}
    return causes.pop() if len(causes) == 1 else None


def _candidates(suite: Suite, part: Part, trial: "Trial", failed: list, outputs: dict):
    """The catalogue; where the student's results are of the reference's sort, the derived
    mistakes; then the derived mistakes nearest the student's results, two at a time."""
    yield [m for m in part.mistakes if m.impl]
    if _like_reference(trial):
        derived = suite.derived(part.name)
        yield derived
        if ("pairs", part.name) not in outputs:
            outputs["pairs", part.name] = suite.pairs(_nearest(suite, derived, failed, outputs))
        yield outputs["pairs", part.name]


PAIRED = 12     # how many of the derived mistakes nearest a student's results are tried two at a time
APART = 1e3     # how far a number is from NaN or inf, for _nearest


def _nearest(suite: Suite, mistakes: list, failed: list, outputs: dict) -> list:
    """The PAIRED mistakes whose results on the failed checks are nearest the student's, and
    nearer than the reference's, nearest first (two alike here may differ once paired)."""
    scored = []
    for mistake in mistakes:
        near = far = 0.0
        for trial, (call, got) in ((trial, observed) for trial in failed for observed in trial.observed):
            values = [_reals(v) for v in (_mistake_result(suite, mistake, call, outputs), got, _reference(trial, call))]
            if any(v is None for v in values) or len({v.shape for v in values}) > 1:
                break
            wrong, got, expected = values
            near, far = near + _apart(wrong, got), far + _apart(expected, got)
        else:
            if near < far:
                scored.append((near / far, len(scored), mistake))
    return [mistake for *_, mistake in sorted(scored)[:PAIRED]]


def _reals(value):
    """A result's real numbers, flattened (a tuple's items one after another), or None."""
    items = value if isinstance(value, tuple) else (value,)
    if not items or not all(isinstance(v, (np.ndarray, np.number, int, float)) and np.asarray(v).dtype.kind in "biuf"
                            for v in items):
        return None
    return np.concatenate([np.asarray(v, dtype=float).ravel() for v in items])


def _apart(a: np.ndarray, b: np.ndarray) -> float:
    """The summed distance of two results, a NaN or inf APART from any other value and 0 from its like."""
    both = np.isfinite(a) & np.isfinite(b)
    alike = ~both & ((a == b) | np.isnan(a) & np.isnan(b))
    return float(np.abs(a[both] - b[both]).sum() + APART * np.count_nonzero(~both & ~alike))


def _reference(trial: "Trial", call: Call):
    try:
        return trial.reference(call)
    except Exception:  # a call the reference cannot make alone (it is part of a property)
        return None


def _like_reference(trial: "Trial") -> bool:
    """Every result the student returned is of the reference's sort (real numbers for real numbers,
    a tuple of as many items, a string for a string): only then may a rewrite of the reference give it."""
    for call, got in trial.observed:
        expected = _reference(trial, call)
        if expected is not None and not isinstance(got, Raised) and _sort(got) != _sort(expected):
            return False
    return True


def _sort(value):
    if isinstance(value, tuple):
        return tuple(_sort(v) for v in value)
    if isinstance(value, (np.ndarray, np.number, int, float)) and np.asarray(value).dtype.kind in "biuf":
        return "real numbers"
    return type(value).__name__


def _against_reference(suite: Suite, trial: "Trial") -> list:
    """(the student's result, the reference's, the call's arrays by name) for each compared call
    that returned a value."""
    return [(got, expected, {name: value for name, _, _, value in conditions.named_arguments(suite.reference, call) or ()
                             if isinstance(value, np.ndarray)})
            for call, got, expected, *_ in _compared(trial) if not isinstance(got, Raised)]


def _compared(trial: "Trial") -> list:
    """(call, the student's outcome, the reference's result, rtol, atol) for each call of the trial
    that the reference makes alone and that draws nothing (a draw is one of many right ones: no
    relation to it, and no condition on it, says anything)."""
    seen = [(call, got, _reference(trial, call)) for call, got in trial.observed if not _draws(call)]
    return [(call, got, expected, *_tolerances(trial.check.tol)) for call, got, expected in seen
            if expected is not None]


def _draws(call: Call) -> bool:
    """Whether `call` is given a random generator (`Rng`), itself or through the object it is made on."""
    given = [*call.args, *call.kwargs.values()]
    if call.obj is not None:
        given += [*call.obj.args, *(value for _, value in call.obj.attrs)]
    return any(isinstance(value, Rng) for value in given)


def explains(suite: Suite, mistake: Mistake, failed: Trial, trials: list, outputs: dict) -> bool:
    """`mistake` reproduces every result of the failed check and differs from the reference on
    one of them in a way that shows it (`verdict.shows`: NaN or inf where the reference has
    numbers shows only a mistake about such values; any other code that divides by zero or
    overflows leaves the same). On the other checks it reproduces every value the student returned, except
    where the student passed and the mistake gives the reference's result too (a draw made
    another way) or where both raised, another exception (a second mistake may raise first).
    Where the student's code raised and the mistake returns a value, the mistake is not what
    the student made (an index out of range on one axis is not one on another). An exception that
    only repeats an argument shows nothing (`_echoes`)."""
    differs = False
    for call, got in failed.observed:
        wrong = _mistake_result(suite, mistake, call, outputs)
        if not _alike(mistake, got, wrong, failed, call):
            return False
        differs |= verdict.shows(wrong, failed.reference(call), *_tolerances(failed.check.tol),
                                 nonfinite=mistake.nonfinite) and not _echoes(wrong, call)
    if not differs:
        return False
    for trial, result in trials:
        if trial is failed:
            continue
        for call, got in trial.observed:
            wrong = _mistake_result(suite, mistake, call, outputs)
            if isinstance(got, Raised) and isinstance(wrong, BaseException) or _alike(mistake, got, wrong, trial, call):
                continue
            if result.status != "passed" or isinstance(wrong, BaseException) or not close(
                    wrong, trial.reference(call), *_tolerances(trial.check.tol)):
                return False
    return True


def _echoes(outcome, call: Call) -> bool:
    """`outcome` is an exception whose message is only an argument of `call` (the KeyError of
    a text looked up whole): it says which key was missing, not why, and any code that looks
    that argument up whole raises it too."""
    scalars = [a for a in (*call.args, *call.kwargs.values()) if isinstance(a, (str, int))]
    return isinstance(outcome, BaseException) and str(outcome) in map(repr, scalars)


def _mistake_result(suite: Suite, mistake: Mistake, call: Call, outputs: dict):
    key = (id(mistake), id(call))       # the calls live in the trials as long as `outputs`
    if key not in outputs:
        if id(mistake) not in outputs:
            outputs[id(mistake)] = suite.namespace_with(mistake)
        try:
            with np.errstate(all="ignore"):
                outputs[key] = execute(call, outputs[id(mistake)])[0]
        except Exception as exc:    # a mistake may raise: that reproduces a student's exception
            outputs[key] = exc
    return outputs[key]


def _alike(mistake: Mistake, got, wrong, trial: Trial, call: Call) -> bool:
    """The student's outcome `got` is the mistake's `wrong` for `call` (see Mistake.rounding)."""
    if _same(got, wrong, trial.check.tol):
        return not _whole_alone(got, wrong, _reference(trial, call))
    return mistake.rounding and rounding_alike(got, wrong, trial.reference(call), _tolerances(trial.check.tol)[1])


def _whole_alone(got, wrong, expected) -> bool:
    """The student's result is whole numbers where the expected one is not, and the mistake's is
    not: its fractions were cut off, which a mistake whose small values only round to the same
    within the tolerance (1e-40 for 0) does not do."""
    if isinstance(expected, tuple):
        return isinstance(got, tuple) and isinstance(wrong, tuple) and any(
            _whole_alone(g, w, e) for g, w, e in zip(got, wrong, expected))
    return _whole(got) is True and _whole(expected) is False and _whole(wrong) is False


def _whole(value) -> bool | None:
    """Whether an array holds whole numbers only (None: not an array of numbers, or not finite)."""
    if not isinstance(value, np.ndarray) or value.dtype.kind not in "iuf" or not np.isfinite(value).all():
        return None
    return bool(np.all(value == np.trunc(value)))


def _same(got, wrong, tol) -> bool:
    return verdict.same_outcome(got, wrong, *_tolerances(tol))


def _tolerances(tol) -> tuple:
    tol = tol or FLOAT64
    return tol.rtol, tol.atol


ROUNDING_ALIKE = 10     # how many times a precision mistake's own error the student's may be


def rounding_alike(got, mistake, expected, atol: float) -> bool:
    """The student's result is a precision mistake's (float32 arithmetic) in effect: finite, and
    at most ROUNDING_ALIKE times as far from the expected one as the mistake's, array by array."""
    if isinstance(expected, tuple):
        return (isinstance(got, tuple) and isinstance(mistake, tuple) and len(got) == len(mistake) == len(expected)
                and all(rounding_alike(g, m, e, atol) for g, m, e in zip(got, mistake, expected)))
    try:
        g, m, e = (np.asarray(v) for v in (got, mistake, expected))
        if any(a.dtype.kind not in "biuf" for a in (g, m, e)):
            return False
        g, m, e = (a.astype(float) for a in (g, m, e))
    except (TypeError, ValueError):
        return False
    return g.shape == m.shape == e.shape and bool(np.isfinite(g).all() and np.isfinite(m).all()) and (
        g.size == 0 or bool(np.max(np.abs(g - e)) <= ROUNDING_ALIKE * np.max(np.abs(m - e)) + atol))
