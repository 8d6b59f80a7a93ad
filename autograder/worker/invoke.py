"""Calls described as data, executed the same way in every process.

A check never touches student objects directly: it describes each call with `Call` and `New`,
and whoever holds the student's namespace executes it (the in-process runner, the sandboxed
worker, or the visible checks in the student's own notebook). Every array is copied before
the call, so code that writes into its inputs cannot change the caller's arrays, and the copies
are handed back so that the caller can see whether they were modified.

This module needs only NumPy and is copied verbatim into the student helper.
"""
import traceback
from builtins import getattr, isinstance, len, list, setattr, str, tuple, type  # noqa: A004  (see protocol)
from dataclasses import dataclass, field

import numpy as np
from numpy import ndarray


@dataclass(frozen=True)
class New:
    """An object `cls(*args)` whose attributes are then set from `attrs` ((name, value), ...)."""
    cls: str
    args: tuple = ()
    attrs: tuple = ()


@dataclass(frozen=True)
class Rng:
    """A fresh `np.random.default_rng(seed)`, made where the call runs."""
    seed: int


@dataclass(frozen=True)
class Call:
    """`fn(*args, **kwargs)`: a name of the namespace, or a method of `obj` when it is given."""
    fn: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    obj: New | None = None

    def describe(self) -> str:
        """`forward(X: (5, 12), causal=True)`, with arrays shown by shape only."""
        args = [_short(a) for a in self.args] + [f"{k}={_short(v)}" for k, v in self.kwargs.items()]
        head = f"{self.obj.cls}(...).{self.fn}" if self.obj else self.fn
        return f"{head}({', '.join(args)})"


def _short(value) -> str:
    if isinstance(value, Rng):
        return "rng"
    if isinstance(value, np.ndarray):
        return f"array{value.shape}" if value.dtype.kind == "f" else f"{value.dtype}{value.shape}"
    return repr(value)


def lookup(namespace, name: str):
    try:
        return namespace[name]
    except KeyError:
        raise NameError(f"{name} is not defined (did its cell run without errors?)") from None


def materialise(value, namespace, given: list):
    """Build `value` for a call: copy arrays (appending each copy to `given`), construct `New`s."""
    if isinstance(value, ndarray):
        copy = value.copy()
        given.append(copy)
        return copy
    if isinstance(value, Rng):
        return np.random.default_rng(value.seed)
    if isinstance(value, New):
        obj = lookup(namespace, value.cls)(*[materialise(a, namespace, given) for a in value.args])
        for name, attr in value.attrs:
            setattr(obj, name, materialise(attr, namespace, given))
        return obj
    if isinstance(value, (list, tuple)):
        return type(value)(materialise(v, namespace, given) for v in value)
    return value


def execute(call: Call, namespace) -> tuple:
    """Run `call` against `namespace`; return (result, copies of the array inputs after the call)."""
    given: list = []
    obj = materialise(call.obj, namespace, given) if call.obj is not None else None
    args = materialise(call.args, namespace, given)
    kwargs = {k: materialise(v, namespace, given) for k, v in call.kwargs.items()}
    target = getattr(obj, call.fn) if obj is not None else lookup(namespace, call.fn)
    return target(*args, **kwargs), given


def inputs(call: Call) -> list:
    """The arrays of `call`, in the order in which `execute` hands back their copies."""
    found: list = []
    for part in (call.obj, call.args, tuple(call.kwargs.values())):
        _collect(part, found)
    return found


def _collect(value, found: list) -> None:
    if isinstance(value, ndarray):
        found.append(value)
    elif isinstance(value, New):
        _collect(value.args, found)
        _collect(tuple(v for _, v in value.attrs), found)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _collect(v, found)


def describe_exception(exc: BaseException, limit: int = 400) -> str:
    """`raised ValueError: ... (line 7 of softmax: z -= z.max())`, from the innermost frame."""
    try:
        return _describe(exc, limit)
    except Exception:   # the student's code may have broken the traceback machinery
        return f"raised {type(exc).__name__}"


def _describe(exc: BaseException, limit: int) -> str:
    if isinstance(exc, NotImplementedError) and not str(exc):
        text = "raised NotImplementedError: the stub is not implemented yet"
    else:
        text = f"raised {type(exc).__name__}: {exc}"
    own = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith("<")]
    if own:   # frames of cells and exec'd code: the student's
        last = own[-1]
        where = f"line {last.lineno} of {last.name}" + (f": {last.line.strip()}" if last.line else "")
        text += f" ({where})"
    return text if len(text) <= limit else text[:limit] + "..."
