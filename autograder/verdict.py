"""The rules of a verdict, the same for the hidden checks (checks.py) and the visible ones in the
student's notebook (student_checks.py): the tolerance a result is held to, what a failed check
raises, when an input was modified in place, when randomness does not come from `rng`, when a
student's outcome is a catalogued mistake's, and when a mistake may be named at all.

This module needs only NumPy and is copied verbatim into the student helper.
"""
from dataclasses import dataclass

import numpy as np

from .compare import close
from .worker.invoke import inputs

# float64 inputs, float64 reference. Correct float64 computations differ by far less on the
# hidden inputs (75 written to round differently: 1e-10 relative, 2e-11 absolute at most; a check
# states a looser tolerance where a sound formula loses more), while a result computed in
# float32 is off by up to 6e-8: it fails on every input, not on some.
TOL = {"rtol": 1e-8, "atol": 1e-10}
FLOAT32 = {"rtol": 1e-4, "atol": 1e-5}     # a result expected in float32: float32's precision


def tolerance(expected) -> dict:
    """The tolerance a result is held to: float32's precision where the expected result is in
    float32 (any of a tuple's items), else TOL."""
    items = expected if isinstance(expected, tuple) else (expected,)
    return FLOAT32 if any(getattr(item, "dtype", None) == np.float32 for item in items) else TOL

# The messages of the mistakes that a check recognises itself (no catalogue entry reproduces them)
IN_PLACE = ("the function writes into an array it was given (an augmented assignment such as -= or "
            "/=, or an assignment into a slice of an argument), so the caller's array changes too",
            "compute into a new array: write z = z - m instead of z -= m, or work on z.copy()")
FOREIGN_RNG = ("the random draws do not come from the generator passed in as `rng` (np.random, or a "
               "generator made inside the function), so the same seed does not give the same result",
               "draw with the argument: rng.choice(...), rng.integers(...) or rng.random()")
SEED_IGNORED = ("the result does not depend on the generator passed in as `rng`: nothing random is drawn "
                "from it (or what is drawn is not used), a generator with a fixed seed of its own is "
                "made inside the function, or what was drawn on an earlier call (a mask) is kept and "
                "reused, so every seed gives the same result",
                "draw with the argument: rng.choice(...), rng.integers(...) or rng.random()")


# Exceptions that name their construct whatever code raises them: (what the message holds, cause, fix)
KNOWN_EXCEPTIONS = (
    (("'bitwise_xor' not supported",), "`^` is Python's bitwise exclusive or, not a power, and floats do not have "
     "it", "write a power as a ** b (or np.power(a, b))"),
    (("arrays can be converted to Python scalars",), "a function that takes one number (from `math`, or float() "
     "or int()) is given an array", "use NumPy's elementwise forms: np.exp, np.sqrt, a ** b"),
    (("cannot convert float infinity to integer", "cannot convert float NaN to integer"), "inf or NaN is stored "
     "into an array of integers (dtype=int, or made like an integer array)", "make it float: dtype=float"),
    (("truth value of an array with more than one element is ambiguous",), "an array is used where Python needs "
     "one True or False: `if`, `and`, `or`, `not`, the built-in max or min, or a default tested as `x or ...`",
     "use np.maximum or np.where for entries, & and | for masks, `is None` for a default"),
    (("object is not callable",), "something that is not a function is called: a layer object (run it with its "
     "forward method) or a name that an assignment has rebound to a value", ""),
    (("'int' object is not iterable", "'float' object is not iterable", "int64' object is not iterable",
      "float64' object is not iterable"), "a single number is iterated over: a `for` over it, list() of it, or `list += "
     "number` (+= extends a list by the items of what it is given; append adds one)", ""),
    (("'list' object has no attribute",), "a NumPy array's method or attribute (.shape, .T, .tolist()) is used on "
     "a Python list: the argument may be a list", "make an array of it first: np.asarray(...)"),
    (("got an unexpected keyword argument",), "a function is given a keyword that its definition does not have: "
     "the notebook's own helpers (softmax, ...) do not take NumPy's keywords", "call it as its signature says"),
    (("'NoneType'",), "a value that is None is used as an array: an argument left at its default None (replace it "
     "by what the docstring says None stands for), or the result of a call that returns nothing (list.sort)", ""),
)


def known_exception(text: str):
    """The (cause, fix) of a KNOWN_EXCEPTIONS entry whose message `text` (an exception's) holds."""
    return next(((cause, fix) for parts, cause, fix in KNOWN_EXCEPTIONS if any(p in text for p in parts)), None)


class CheckFailed(AssertionError):
    """A check's expectation does not hold for the student's code. `cause`: a (message, fix) the
    check itself recognises (an input modified in place); `firm`: shown against the reference
    or the required form, whatever the student's other results hold (any other failure may
    rest on comparing the student's own results with each other, which NaN defeats)."""

    def __init__(self, message: str, cause=None, firm: bool = False):
        super().__init__(message)
        self.cause = cause
        self.firm = firm or cause is not None


@dataclass(frozen=True)
class Raised:
    """The student's call raised: `text` is `raised Type: message (where)` (invoke.describe_exception)."""
    text: str

    def matches(self, exc) -> bool:
        """`exc` (an exception, or a mistake's Raised) is the same exception: its type and
        message start the student's text."""
        head = exc.text if isinstance(exc, Raised) else f"raised {type(exc).__name__}: {exc}"
        return self.text == head or self.text.startswith(head + " (") or (
            self.text.endswith("...") and head.startswith(self.text[:-3]))


def modified_input(call, given) -> str | None:
    """What `call` did to its input arrays, of which `given` holds the copies after the call
    (None if it left them as they were)."""
    for original, after in zip(inputs(call), given):
        if after.shape != original.shape or not np.array_equal(after, original, equal_nan=True):
            return f"an input array of shape {original.shape} was modified in place"
    return None


def rng_problem(same_seed: list, other_seeds: list):
    """The property of code that draws from the generator it is given, judged on its results:
    `same_seed`, results from generators made from one seed (with np.random's global state
    moved in between); `other_seeds`, results from other seeds. FOREIGN_RNG, SEED_IGNORED or
    None."""
    if any(not _equal(same_seed[0], other) for other in same_seed[1:]):
        return FOREIGN_RNG
    if other_seeds and all(_equal(same_seed[0], other) for other in other_seeds):
        return SEED_IGNORED
    return None


def _equal(a, b) -> bool:
    items = (lambda v: list(v) if isinstance(v, tuple) else [v])
    first, second = items(a), items(b)
    return len(first) == len(second) and all(np.array_equal(x, y) for x, y in zip(first, second))


def same_outcome(got, mistake, rtol: float, atol: float, overflow_alike: bool = False) -> bool:
    """The student's outcome (a value, or the Raised of their exception) is a mistake's (a value,
    or its exception or Raised). `overflow_alike`: inf and nan count as one (an overflow leaves
    either)."""
    if isinstance(got, Raised) or isinstance(mistake, (BaseException, Raised)):
        return isinstance(got, Raised) and isinstance(mistake, (BaseException, Raised)) and got.matches(mistake)
    if overflow_alike:
        got, mistake = _overflowed(got), _overflowed(mistake)
    return close(got, mistake, rtol, atol)


def shows(mistake, expected, rtol: float, atol: float, nonfinite: bool = False) -> bool:
    """A mistake's outcome differs from the expected one in a way that names it: it raises, has
    another structure, or differs where it holds a number (NaN or inf where a number is expected
    is any overflow's or 0/0's, not one idea's), unless it is `nonfinite` (about such values)."""
    if isinstance(mistake, (BaseException, Raised)) or nonfinite and not close(mistake, expected, rtol, atol):
        return True
    if isinstance(expected, tuple):
        return not isinstance(mistake, tuple) or len(mistake) != len(expected) or any(
            shows(m, e, rtol, atol) for m, e in zip(mistake, expected))
    try:
        got, want = np.asarray(mistake, dtype=complex), np.asarray(expected, dtype=complex)
    except (TypeError, ValueError):
        return not close(mistake, expected, rtol, atol)
    return got.shape != want.shape or bool((np.isfinite(got) & ~np.isclose(got, want, rtol, atol, True)).any())


def _overflowed(value):
    if isinstance(value, tuple):
        return tuple(_overflowed(v) for v in value)
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return value
    return np.where(np.isfinite(array), array, np.nan)


def only_fit(fits: list):
    """The (message, fix) to name, of the catalogued mistakes that fit the student's outcomes
    (`fits`): the one message they share, or None when none fits or two that say different
    things do (the inputs cannot tell them apart: naming one would mislead half the students
    who made the other). "X; also, Y" (X with a second mistake) says X too: beside X, X is named."""
    shared = [m for m, _ in fits if all(o == m or o.startswith(m + "; also, ") for o, _ in fits)]
    return min(f for f in fits if f[0] == shared[0]) if shared else None
