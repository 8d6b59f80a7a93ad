"""The visible checks that run in the student's notebook.

`check(obj)` runs the visible cases of the graded name `obj.__name__` against the student's
code, with the student's own versions of every other part. On a wrong result it raises an
AssertionError that says which case failed, how the result differs, and, when the result equals
a catalogued mistake's output on that case, what the mistake is. It holds no reference code:
only the visible inputs, the expected outputs and the mistakes' outputs on those inputs.

This module is copied, with `compare` and `invoke`, into the helper that ships next to each
lab notebook (`attnlab sync` writes it); it needs only NumPy.
"""
import sys
import warnings

import numpy as np

from .compare import close, mismatch
from .worker.invoke import execute, inputs

TOL = dict(rtol=1e-6, atol=1e-8)
CASES: dict = {}    # name -> [(description, call, names, expected, [(message, output), ...])]


def check(obj) -> None:
    """Run the visible checks of one graded function or class."""
    name = getattr(obj, "__name__", None)
    if name not in CASES:
        raise ValueError(f"no visible checks for {obj!r}; pass the function or class itself")
    namespace = {**_namespace_of(obj), name: obj}
    cases = CASES[name]
    for description, call, names, expected, mistakes in cases:
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                got, given = execute(call, namespace)
        except NotImplementedError:
            raise NotImplementedError(
                f"{name} is still the stub: replace `raise NotImplementedError()` with your code, "
                "then run this cell again.") from None
        except Exception:
            print(f"✘ {name}: visible check '{description}' raised an error while running "
                  f"{call.describe()}; the traceback below shows where.")
            raise
        problem = mismatch(got, expected, names=names, **TOL)
        if problem is None:
            problem = _modified_input(call, given)
        if problem:
            raise AssertionError(_report(name, description, call, problem, got, mistakes))
    print(f"✔ {name}: {len(cases)} visible check{'s' * (len(cases) > 1)} passed. "
          "The hidden tests check more cases and edge cases when you submit.")


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


def _report(name, description, call, problem, got, mistakes) -> str:
    lines = [f"{name} failed the visible check '{description}'.",
             f"  call:    {call.describe()}",
             f"  problem: {problem}"]
    cause = next((message for message, output in mistakes if close(got, output, **TOL)), None)
    if cause:
        lines.append(f"  likely cause: {cause}")
    return "\n".join(lines)
