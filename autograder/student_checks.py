"""The visible checks that run in the student's notebook: `check(obj)`.

`check` runs the visible cases of the graded name `obj.__name__` on the student's code, with the
student's own versions of every other part, then its visible properties (the same seed gives the
same result whatever np.random's global state). The verdict follows the hidden checks' rules
(`verdict`): their tolerance, in-place check, rng property, and likely causes named only when
exactly one idea fits the student's outcomes on every case. A failure says which case failed,
how, and the likely cause; the exact fix once `FIX_AFTER` different attempts have failed the
case (running the same code again is not another attempt). The error shows this message and
the student's own frames, never a frame of this helper, which holds no reference code: only the
visible inputs, the expected outputs and the mistakes' outcomes on them.

This module is copied, with `compare`, `invoke`, `verdict` and `visible_data`, into the helper
beside each lab notebook (`attnlab sync` writes it and its data files); it needs only NumPy.
"""
import dis
import functools
import marshal
import os
import sys
import traceback
import warnings

import numpy as np

from .compare import mismatch
from .verdict import (IN_PLACE, TOL, CheckFailed, Raised, known_exception, modified_input, only_fit, rng_problem,
                      same_outcome, shows, tolerance)
from .worker.invoke import execute

FIX_AFTER = 3       # the exact fix is shown once this many different attempts failed a case
CASES: dict = {}    # name -> [(description, call, names, expected, [(message, fix, outcome), ...])]
PROPERTIES: dict = {}   # name -> [(description, [call with seed 0, with seed 1, ...])]
_attempts: dict = {}    # (name, description) -> the attempts that failed it (see `_attempt`)


class Failed(CheckFailed):
    """A visible check failed. IPython shows the message and the student's frames only."""
    shown_as = "AssertionError"

    def __init__(self, message: str, frames=()):
        super().__init__(message)
        self.frames = list(frames)

    def _render_traceback_(self):
        lines = []
        if self.frames:
            lines += ["Traceback (your code only):"] + [line.rstrip("\n") for line in traceback.format_list(self.frames)]
        return lines + [f"{self.shown_as}: {self}"]


class StillAStub(Failed, NotImplementedError):
    shown_as = "NotImplementedError"


def check(obj) -> None:
    """Run the visible checks of one graded function or class."""
    name = getattr(obj, "__name__", None)
    if name not in CASES:
        raise ValueError(f"no visible checks for {obj!r}; pass the function or class itself")
    namespace = {**_namespace_of(obj), name: obj}
    runs = [_run(name, obj, case, namespace) for case in CASES[name]]
    failed = [run for run in runs if run[2]]
    if failed:
        _fail(name, obj, failed[0], runs, namespace)
    for case in CASES[name]:
        _attempts.pop((name, case[0]), None)     # passed: the count starts again
    for description, calls in PROPERTIES.get(name, []):
        problem = _property(calls, namespace)
        if problem:
            raise Failed(f"{name} failed the visible check '{description}'.\n  problem: {problem[0]}\n"
                         f"  likely cause: {problem[1]}")
    count = len(CASES[name]) + len(PROPERTIES.get(name, []))
    print(f"✔ {name}: {count} visible check{'s' * (count > 1)} passed. "
          "The hidden tests check more cases and edge cases when you submit.")


def _run(name: str, obj, case, namespace) -> tuple:
    """(case, the student's outcome: their value or the Raised of their exception, the problem
    or '', the exception if one was raised)."""
    description, call, names, expected, _ = case
    try:
        got, given = _quietly(execute, call, namespace)
    except NotImplementedError as exc:
        if not str(exc) and _raised_in(exc, obj):
            raise StillAStub(f"{name} is still the stub: replace `raise NotImplementedError()` "
                             "with your code, then run this cell again.") from None
        return case, _raised(exc), f"raised NotImplementedError: {exc}", exc
    except Exception as exc:
        return case, _raised(exc), f"raised {type(exc).__name__}: {exc}", exc
    problem = mismatch(got, expected, names=names, **tolerance(expected))
    moved = not problem and modified_input(call, given)
    return case, got, problem or (f"{moved}; return a new array" if moved else ""), None


def _raised(exc) -> Raised:
    return Raised(f"raised {type(exc).__name__}: {exc}")


def _fail(name: str, obj, failed, runs, namespace) -> None:
    """Raise the report of the first failed case: the likely cause, and the exact fix once the
    case has failed FIX_AFTER different attempts. While an earlier graded name fails its own
    cases, no cause is named: this one may call it, and a correct function fed a wrong helper's
    result looks like one of its own mistakes."""
    (description, call, _, _, _), outcome, problem, exc = failed
    lines = [f"{name} failed the visible check '{description}'.",
             f"  call:    {call.describe()}",
             f"  problem: {problem}"]
    frames = _own_frames(exc) if exc else []
    if frames:
        lines.append(f"  where:   line {frames[-1].lineno} of {frames[-1].name}: {(frames[-1].line or '').strip()}")
    earlier = _earlier_failing(name, namespace)
    if earlier:
        lines.append(f"  note:    {earlier} does not pass its own visible checks yet; if {name} uses it, "
                     f"fix {earlier} first (no likely cause is named until it passes)")
        raise Failed("\n".join(lines), frames) from None
    attempts = _attempts.setdefault((name, description), set())
    attempts.add(_attempt(obj, outcome))
    cause = IN_PLACE if problem.endswith("; return a new array") else _cause(runs)
    if cause is None and exc is not None:
        cause = known_exception(f"{type(exc).__name__}: {exc}")
    if cause:
        lines.append(f"  likely cause: {cause[0]}")
        if cause[1] and len(attempts) >= FIX_AFTER:
            lines.append(f"  fix (shown after {FIX_AFTER} different attempts failed this check): {cause[1]}")
        elif cause[1]:
            left = FIX_AFTER - len(attempts)
            lines.append(f"  (the exact fix is shown if {left} more different attempt{'s' * (left > 1)} "
                         "fail this check)")
    raise Failed("\n".join(lines), frames) from None


def _cause(runs):
    """(message, fix) of the catalogued mistake that explains the student's outcomes on every
    case (the same outcome where it is wrong, a pass where it is right), exactly or else with inf
    and nan alike, if exactly one idea does (`verdict.only_fit`); None otherwise."""
    known = {}      # (message, fix, ...) -> {case description: (the mistake's kind, its outcome)}
    for (description, _, _, _, mistakes), _, _, _ in runs:
        for message, fix, *more, outcome in mistakes:       # more: its kind (checks.Mistake), its index
            known.setdefault((message, fix, *more[1:]), {})[description] = ((more or [""])[0], outcome)
    for overflow_alike in (False, True):
        fits = [mistake for mistake, outcomes in known.items()
                if all(same_outcome(got, outcomes[case[0]][1], overflow_alike=overflow_alike, **tolerance(case[3]))
                       if case[0] in outcomes else not problem for case, got, problem, _ in runs)
                and any(shows(outcome, case[3], **tolerance(case[3]), nonfinite=kind == "nonfinite")
                        for case, _, _, _ in runs for kind, outcome in [outcomes.get(case[0], ("", case[3]))])]
        if fits:
            return only_fit([(message, fix) for message, fix, *_ in fits])
    return None


def _attempt(obj, outcome) -> tuple:
    """What tells one attempt from another: the code of `obj` (its methods for a class), without
    file names or line numbers, and what it gave."""
    members = vars(obj).values() if isinstance(obj, type) else [obj]
    codes = [getattr(getattr(m, "__func__", m), "__code__", None) for m in members]
    return tuple(_code_key(c) for c in codes if c is not None), repr(outcome)[:2000]


def _code_key(code) -> bytes:
    consts = tuple(_code_key(c) if hasattr(c, "co_code") else c for c in code.co_consts)
    return marshal.dumps((code.co_code, code.co_names, code.co_varnames, repr(consts)))


def _property(calls, namespace):
    """(what happened, the likely cause) when the randomised function does not draw only from the
    `rng` it is given: each call (one seed each) runs twice, under two global np.random states."""
    saved = np.random.get_state()
    try:
        runs = []
        for global_seed in (1, 2):
            np.random.seed(global_seed)
            runs.append([_quietly(execute, call, namespace)[0] for call in calls])
    except Exception as exc:
        return f"raised {type(exc).__name__}: {exc}", "see the message"
    finally:
        np.random.set_state(saved)
    for same_seed in zip(*runs):
        problem = rng_problem(list(same_seed), [])
        if problem:
            return "the same seed gave another result once np.random's global state changed", problem[0]
    problem = rng_problem([runs[0][0]], runs[0][1:])
    return ("every seed gave the same result", problem[0]) if problem else None


def _quietly(function, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return function(*args)


def _namespace_of(obj) -> dict:
    """The globals the student's code runs in (the notebook's namespace)."""
    functions = [obj] if callable(obj) and hasattr(obj, "__globals__") else list(vars(obj).values())
    for f in functions:
        if hasattr(f, "__globals__"):
            return f.__globals__
    return vars(sys.modules.get(getattr(obj, "__module__", "__main__"), sys.modules["__main__"]))


def _earlier_failing(name: str, namespace: dict) -> str | None:
    """The first graded name before `name` (in notebook order) that `name`'s code uses, directly
    or through functions of the notebook, and that fails one of its own visible cases; None if
    there is none."""
    used = _names_used(namespace[name], namespace)
    for earlier, cases in CASES.items():
        if earlier == name:
            return None
        if earlier not in used:
            continue
        for _, call, names, expected, _ in cases:
            try:
                got, _ = _quietly(execute, call, namespace)
            except Exception:
                return earlier
            if mismatch(got, expected, names=names, **tolerance(expected)):
                return earlier
    return None


def _names_used(obj, namespace: dict) -> set:
    """The names of `namespace` whose objects the code of `obj` reaches: the globals its code
    loads, the objects held in its default arguments, closures and `functools.partial`s, and
    those in the lists, tuples and dicts among them; then what those reach in turn."""
    named = {id(value): key for key, value in namespace.items()}
    found, todo, seen = set(), [obj], set()
    while todo:
        item = todo.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if id(item) in named and item is not obj:
            found.add(named[id(item)])
        if isinstance(item, (list, tuple, set, frozenset)):
            todo += list(item)
        elif isinstance(item, dict):
            todo += list(item.values())
        elif isinstance(item, functools.partial):
            todo += [item.func, *item.args, *item.keywords.values()]
        elif isinstance(item, type):
            todo += [getattr(m, "__func__", getattr(m, "fget", m)) for m in vars(item).values()]
        elif hasattr(item, "__code__"):
            todo += [*(item.__defaults__ or ()), *(item.__kwdefaults__ or {}).values(),
                     *(c.cell_contents for c in item.__closure__ or () if _filled(c)),
                     *(namespace[n] for n in _globals_loaded(item.__code__) if n in namespace)]
    return found


def _filled(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _globals_loaded(code) -> set:
    """The global names that `code` and the code nested in it load (attribute names aside)."""
    names = {i.argval for i in dis.get_instructions(code) if i.opname in ("LOAD_GLOBAL", "LOAD_NAME")}
    for const in code.co_consts:
        if hasattr(const, "co_code"):
            names |= _globals_loaded(const)
    return names


def _own_frames(exc) -> list:
    """The frames of the student's code in an exception's traceback: not this helper's, and not
    those of NumPy or any installed or standard library."""
    libraries = tuple({sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(np.__file__)})
    return [f for f in traceback.extract_tb(exc.__traceback__)
            if f.filename != __file__ and not f.filename.startswith(libraries)]


def _raised_in(exc, obj) -> bool:
    """Whether `exc` was raised by the code of `obj` (a function, or a method of the class)."""
    tb = exc.__traceback__
    while tb.tb_next:
        tb = tb.tb_next
    members = vars(obj).values() if isinstance(obj, type) else [obj]
    codes = {getattr(getattr(m, "__func__", m), "__code__", None) for m in members}
    return tb.tb_frame.f_code in codes
