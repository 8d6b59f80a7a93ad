"""The visible checks that run in the student's notebook.

`check(obj)` runs the visible cases of the graded name `obj.__name__` against the student's
code, with the student's own versions of every other part, then its visible properties (e.g. a
seed reproduces a result whatever the global `np.random` state). A failure is reported in tiers:
the first time, which case failed, how the result differs and, when the result equals a
catalogued mistake's output (or raises the same error), the idea that mistake misses; once the
same case has failed `FIX_AFTER` times in a row, also the mistake's exact fix. The error shows
only this message and the student's own frames, never a frame of this helper. It holds no
reference code: only the visible inputs, the expected outputs and the mistakes' outputs on them.

This module is copied, with `compare`, `invoke` and `visible_data`, into the helper that ships
next to each lab notebook (`attnlab sync` writes it, and its data files); it needs only NumPy.
"""
import dis
import functools
import os
import sys
import traceback
import warnings

import numpy as np

from .compare import close, mismatch
from .worker.invoke import execute, inputs

TOL = dict(rtol=1e-6, atol=1e-8)
FIX_AFTER = 3       # the exact fix is shown from this many failures of the same case in a row
CASES: dict = {}    # name -> [(description, call, names, expected, [(message, fix, outcome), ...])]
PROPERTIES: dict = {}   # name -> [(description, [call, ...], not_reproducible, ignores_rng)]
_failures: dict = {}    # (name, description) -> failures in a row


class CheckFailed(AssertionError):
    """A visible check failed. IPython shows the message (and the student's frames) only."""
    shown_as = "AssertionError"

    def __init__(self, message: str, frames=()):
        super().__init__(message)
        self.frames = list(frames)

    def _render_traceback_(self):
        lines = []
        if self.frames:
            lines += ["Traceback (your code only):"] + [line.rstrip("\n") for line in traceback.format_list(self.frames)]
        return lines + [f"{self.shown_as}: {self}"]


class StillAStub(CheckFailed, NotImplementedError):
    shown_as = "NotImplementedError"


def check(obj) -> None:
    """Run the visible checks of one graded function or class."""
    name = getattr(obj, "__name__", None)
    if name not in CASES:
        raise ValueError(f"no visible checks for {obj!r}; pass the function or class itself")
    namespace = {**_namespace_of(obj), name: obj}
    for description, call, names, expected, mistakes in CASES[name]:
        try:
            got, given = _quietly(execute, call, namespace)
        except NotImplementedError as exc:
            if not str(exc) and _raised_in(exc, obj):
                raise StillAStub(f"{name} is still the stub: replace `raise NotImplementedError()` "
                                 "with your code, then run this cell again.") from None
            _fail(name, description, call, f"raised NotImplementedError: {exc}", exc, mistakes, namespace)
        except Exception as exc:
            _fail(name, description, call, f"raised {type(exc).__name__}: {exc}", exc, mistakes, namespace)
        else:
            problem = mismatch(got, expected, names=names, **TOL) or _modified_input(call, given)
            if problem:
                _fail(name, description, call, problem, got, mistakes, namespace)
            _failures.pop((name, description), None)
    for description, calls, not_reproducible, ignores_rng in PROPERTIES.get(name, []):
        problem = _property(calls, namespace, not_reproducible, ignores_rng)
        if problem:
            raise CheckFailed(f"{name} failed the visible check '{description}'.\n  problem: {problem}")
    count = len(CASES[name]) + len(PROPERTIES.get(name, []))
    print(f"✔ {name}: {count} visible check{'s' * (count > 1)} passed. "
          "The hidden tests check more cases and edge cases when you submit.")


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


def _modified_input(call, given) -> str | None:
    for original, after in zip(inputs(call), given):
        if after.shape != original.shape or not np.array_equal(after, original, equal_nan=True):
            return f"an input array of shape {original.shape} was modified in place; return a new array"
    return None


def _fail(name, description, call, problem, outcome, mistakes, namespace):
    """Raise the tiered report of a failed case: the idea first, the exact fix after FIX_AFTER.
    While an earlier graded name fails its own cases, no cause is named: this one may call it,
    and a correct function fed a wrong helper's result looks like one of its own mistakes."""
    key = (name, description)
    lines = [f"{name} failed the visible check '{description}'.",
             f"  call:    {call.describe()}",
             f"  problem: {problem}"]
    raised = isinstance(outcome, BaseException)
    frames = _own_frames(outcome) if raised else []
    if frames:
        lines.append(f"  where:   line {frames[-1].lineno} of {frames[-1].name}: {(frames[-1].line or '').strip()}")
    earlier = _earlier_failing(name, namespace)
    if earlier:
        lines.append(f"  note:    {earlier} does not pass its own visible checks yet; if {name} uses it, "
                     f"fix {earlier} first (no likely cause is named until it passes)")
        raise CheckFailed("\n".join(lines), frames) from None
    _failures[key] = _failures.get(key, 0) + 1
    cause = _cause(outcome, mistakes)
    if cause is None and raised and "NoneType" in str(outcome):
        cause = ("a value that is None was used as an array: an argument left at its default "
                 "None must be replaced by what the docstring says None stands for", "")
    if cause:
        lines.append(f"  likely cause: {cause[0]}")
        if cause[1] and _failures[key] >= FIX_AFTER:
            lines.append(f"  fix (shown after {FIX_AFTER} failures of this check): {cause[1]}")
        elif cause[1]:
            lines.append(f"  (the exact fix is shown if this check fails {FIX_AFTER - _failures[key]} more time"
                         f"{'s' * (FIX_AFTER - _failures[key] > 1)})")
    raise CheckFailed("\n".join(lines), frames) from None


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
            if mismatch(got, expected, names=names, **TOL):
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


def raised(outcome) -> bool:
    """A mistake's outcome that is an exception, recorded as ("raises", type name, message)."""
    return (isinstance(outcome, tuple) and len(outcome) == 3 and isinstance(outcome[0], str)
            and outcome[0] == "raises")


def _cause(outcome, mistakes):
    """(message, fix) of the mistake whose outcome the student's equals, exactly or else with
    inf and nan alike; None if there is none, or if two that say different things look alike
    here (the visible case cannot tell them apart: naming one would mislead half the time)."""
    for loose in (False, True):
        causes = {(message, fix) for message, fix, expected in mistakes if _same_outcome(outcome, expected, loose)}
        if causes:
            return min(causes) if len({message for message, _ in causes}) == 1 else None
    return None


def _same_outcome(outcome, expected, loose: bool) -> bool:
    """The student's result, or exception, equals a mistake's (`loose`: an overflow's inf or nan alike)."""
    if isinstance(outcome, BaseException):
        return raised(expected) and expected[1:] == (type(outcome).__name__, str(outcome))
    if raised(expected):
        return False
    if loose:
        return close(_overflowed(outcome), _overflowed(expected), **TOL)
    return close(outcome, expected, **TOL)


def _overflowed(value):
    """The value with inf and nan made alike: an overflow leaves one or the other."""
    if isinstance(value, tuple):
        return tuple(_overflowed(v) for v in value)
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return value
    return np.where(np.isfinite(array), array, np.nan)


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


def _property(calls, namespace, not_reproducible, ignores_rng) -> str | None:
    """A randomised function must draw only from the rng it is given: the same seeds give the
    same results whatever the global `np.random` state, and different seeds different ones."""
    saved = np.random.get_state()
    try:
        runs = []
        for global_seed in (1, 2):
            np.random.seed(global_seed)
            runs.append([_quietly(execute, call, namespace)[0] for call in calls])
    except Exception as exc:
        return f"raised {type(exc).__name__}: {exc}"
    finally:
        np.random.set_state(saved)
    same = lambda a, b: all(np.array_equal(x, y) for x, y in zip(_items(a), _items(b)))  # noqa: E731
    if not all(same(a, b) for a, b in zip(*runs)):
        return not_reproducible
    if all(same(runs[0][0], other) for other in runs[0][1:]):
        return ignores_rng
    return None


def _items(value) -> list:
    return list(value) if isinstance(value, tuple) else [value]
