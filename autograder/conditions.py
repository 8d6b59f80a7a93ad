"""What the calls a part's results are wrong on have in common that the calls it is right on do
not: an input with another number of axes, two sizes that differ, an axis of size 1, negative
entries, entries larger than any of the right calls', an argument left out, a flag set or a
number that is 0 or 1. Such a condition is read from the calls alone, whatever code gave the
results, so it is said where no mistake and no relation is: it is true of the student's results
by construction, and it points at the inputs their code does not handle.
"""
import inspect
import itertools

import numpy as np

from .compare import close
from .verdict import Raised

WRONG = "the results are wrong on every call where {where}, and right on every other call{hint}"
HINTS = {
    "axes": ": the code assumes another number of axes (an index, a transpose, an einsum or a reshape "
            "that holds for the other inputs only)",
    "sizes": ": one size is used where the other belongs, which goes unseen wherever the two are equal",
    "one": ": a single entry along that axis is not handled",
    "negative": ": negative entries are not handled (an absolute value, a clip, or an index that wraps round)",
    "large": ": large values are not handled (an overflow, a clip, or a difference lost to rounding)",
    "left out": ": the default the code uses for it is not the documented one",
    "given": ": what the code does with the value given for it is wrong (or it is not used)",
    "flag": ": that case is not handled",
}
APART = 4           # the wrong calls' smallest largest entry is this many times the right calls' largest
RIGHT_CALLS = 2     # a condition is read from at least this many right calls, and one wrong one


def condition(reference: dict, compared: list) -> str | None:
    """WRONG for the one kind of condition that holds on every wrong call and on no right one, or
    None. `compared`: (call, the student's outcome, the reference's result, rtol, atol) of a part's
    calls that draw nothing."""
    labelled = [(features, not _right(*seen[1:])) for seen in compared
                if _float64(seen[0]) and (features := _features(reference, seen[0])) is not None]
    wrong = [features for features, is_wrong in labelled if is_wrong]
    right = [features for features, is_wrong in labelled if not is_wrong]
    if not wrong or len(right) < RIGHT_CALLS:
        return None
    found = {}
    for key in set.intersection(*(set(features) for features in wrong + right)):     # what every call has
        values, others = {features[key] for features in wrong}, {features[key] for features in right}
        if key[0] == "large":       # far apart, so that the size tells the calls apart and not a coincidence
            said = max(others) > 0 and min(values) >= APART * max(others) and _said(key, _floor(min(values)))
        elif (len(values) == 1 or key[0] == "axes") and not values & others:
            said = _said(key, values.pop() if len(values) == 1 else tuple(sorted(values)))
        else:
            said = None
        if said:
            found.setdefault(said[0], []).append(said[1])
    if len(found) != 1:
        return None
    (kind, clauses), = found.items()
    return WRONG.format(where=_joined(kind, clauses), hint=HINTS[kind])


def wrong_on(compared: list) -> bool:
    """Whether one of these calls (as for `condition`) has a wrong result: the condition is about those."""
    return any(_float64(seen[0]) and not _right(*seen[1:]) for seen in compared)


def _float64(call) -> bool:
    """No input of the call is float32 (its result differs from the float64 reference by rounding)."""
    return not any(isinstance(v, np.ndarray) and v.dtype.kind == "f" and v.dtype != np.float64
                   for v in [*call.args, *call.kwargs.values()])


def _right(got, expected, rtol: float, atol: float) -> bool:
    return not isinstance(got, Raised) and close(got, expected, rtol, atol)


def _features(reference: dict, call) -> dict | None:
    """{(kind, where): value} of the call's arguments (and its object's), named as the reference's
    parameters (None for a call of no reference function, or one it cannot take)."""
    arguments = named_arguments(reference, call)
    if arguments is None:
        return None
    features, axes = {}, []
    for name, optional, given, value in arguments:
        if optional:
            features["left out", name] = not given
        if given and isinstance(value, (bool, type(None))):
            features["flag", name] = value
        elif isinstance(value, (int, float)):
            features["number", name] = value if value in (0, 1) else "other"
        if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
            features["axes", name] = value.ndim
            if value.dtype.kind in "iu" and value.size:
                features["negative", name] = bool((value < 0).any())
            if value.dtype.kind == "f" and value.size and np.isfinite(value).all():
                features["large", name] = float(np.abs(value).max())
            axes += [(name, axis, size) for axis, size in zip(range(-value.ndim, 0), value.shape)]
    for name, axis, size in axes:
        features["one", name, axis] = size == 1
    for (a, i, m), (b, j, n) in itertools.combinations(axes, 2):
        features["sizes", a, i, b, j] = m == n
    return features


def named_arguments(reference: dict, call) -> list | None:
    """(name, has a default, given, value) for each parameter of the reference function a call is
    made on (of a class's constructor and method), or None for a call it cannot take."""
    try:
        if call.obj is None:
            return _arguments(reference[call.fn], call.args, call.kwargs)
        cls = reference[call.obj.cls]
        return _arguments(cls, call.obj.args, {}) + _arguments(getattr(cls, call.fn), call.args, call.kwargs, method=True)
    except (KeyError, AttributeError, TypeError, ValueError):
        return None


def _arguments(function, args: tuple, kwargs: dict, method: bool = False) -> list:
    """(name, has a default, given, value) for each parameter of `function` (self aside) in a call."""
    signature = inspect.signature(function)
    bound = signature.bind_partial(*[None] * method, *args, **kwargs).arguments
    return [(name, parameter.default is not inspect.Parameter.empty, name in bound, bound.get(name))
            for name, parameter in signature.parameters.items() if not (method and name == "self")]


def _joined(kind: str, clauses: list) -> str:
    """The clauses of one kind as one: pairs of axes that differ in size share an axis where they
    can ("the last axis of `V` differs in size from the last axis of `Q` and of `K`")."""
    if kind == "sizes":
        pairs = [tuple(clause) for clause in clauses]
        shared = set.intersection(*(set(pair) for pair in pairs))
        if shared and len(pairs) > 1:
            axis = min(shared)
            others = sorted(a if b == axis else b for a, b in pairs)
            return f"{_axis_of(axis)} differs in size from " + " and from ".join(map(_axis_of, others))
        return " and ".join(f"{_axis_of(a)} and {_axis_of(b)} differ in size" for a, b in sorted(pairs))
    if kind == "axes":
        counts = {}
        for name, value in sorted(clauses):
            counts.setdefault(value, []).append(f"`{name}`")
        return " and ".join(f"{_listed(names)} {'has' if len(names) == 1 else 'have'} {_axes(value)}"
                            for value, names in counts.items())
    if kind == "one":
        clauses = [f"{_axis_of(where)} has size 1" for where in clauses]
    return " and ".join(sorted(clauses))


def _axes(counts) -> str:
    """'1 axis', '3 axes', '2 or 3 axes' (`counts`: a number or a tuple of them)."""
    counts = counts if isinstance(counts, tuple) else (counts,)
    return _listed([str(n) for n in counts], "or") + (" axis" if counts == (1,) else " axes")


def _listed(names: list, conjunction: str = "and") -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" {conjunction} " + names[-1]


def _said(key: tuple, value) -> tuple | None:
    """(kind, what `key` having `value` says, for _joined), or None where that value is no sign of a
    mistake (sizes that happen to be equal, an axis longer than 1, entries that are not negative).
    "large": `value` bounds the entries of the calls with right results, and no wrong one's largest."""
    kind, name, *axes = key
    if kind == "axes":
        return kind, (name, value)
    if kind == "sizes" and value is False:
        return kind, ((name, axes[0]), (axes[1], axes[2]))
    if kind == "one" and value is True:
        return kind, (name, axes[0])
    if kind == "negative" and value is True:
        return kind, f"`{name}` holds negative entries"
    if kind == "large":
        return kind, f"`{name}` holds an entry of size {value:g} or more"
    if kind == "left out":
        return ("left out", f"`{name}` is left out") if value else ("given", f"`{name}` is given")
    if kind == "flag" or kind == "number" and value != "other":
        return "flag", f"`{name}` is {value}"
    return None


def _floor(x: float) -> float:
    """`x` rounded down to two significant digits (51.2 -> 51, 1001.9 -> 1000)."""
    unit = 10.0 ** (np.floor(np.log10(x)) - 1)
    return float(np.floor(x / unit) * unit)


def _axis_of(where: tuple) -> str:
    name, axis = where
    return {-1: "the last axis", -2: "the second-last axis"}.get(axis, f"axis {axis}") + f" of `{name}`"
