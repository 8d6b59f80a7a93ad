"""Compare a returned value with the expected one and say how they differ.

Messages show shapes, counts and at most a few entries, never a whole array, so that a hidden
input or a reference output is never printed in full.

This module needs only NumPy and is copied verbatim into the student helper.
"""
import reprlib

import numpy as np

SHOWN = 3  # entries quoted in a message
_QUOTE = reprlib.Repr()
_QUOTE.maxlevel, _QUOTE.maxstring, _QUOTE.maxother, _QUOTE.maxlong = 2, 40, 40, 40
_QUOTE.maxtuple = _QUOTE.maxlist = _QUOTE.maxdict = _QUOTE.maxset = SHOWN


def quoted(value) -> str:
    """`repr(value)` of a value the student returned, at most about 60 characters long: three
    keys of five million characters made a message of 15 MB."""
    return _QUOTE.repr(value)


def close(got, expected, rtol: float, atol: float) -> bool:
    """Same structure, and every array equal within tolerance (NaN matches NaN)."""
    if isinstance(expected, tuple):
        return (isinstance(got, tuple) and len(got) == len(expected)
                and all(close(g, e, rtol, atol) for g, e in zip(got, expected)))
    if not _numeric(expected):
        return mismatch(got, expected, rtol, atol) is None
    if _numeric(got):
        got, expected = np.asarray(got), np.asarray(expected)
    if not _is_array(got) or not _is_array(expected):
        return False
    got, expected = np.asarray(got), np.asarray(expected)
    if got.shape != expected.shape or got.dtype.kind not in "biuf":
        return False
    return bool(np.allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True))


def mismatch(got, expected, rtol: float, atol, names=None) -> str | None:
    """None when `got` matches `expected`, else a short description of the first difference.

    `expected` is an array or a tuple of arrays; `names` labels the tuple's items, and `atol`
    may be a tuple too (one per item).
    """
    if isinstance(expected, tuple):
        names = names or [f"item {i}" for i in range(len(expected))]
        if not isinstance(got, tuple):
            return (f"returned {kind(got)}; expected a tuple of {len(expected)} "
                    f"({', '.join(names)})")
        if len(got) != len(expected):
            return f"returned a tuple of {len(got)} items; expected {len(expected)} ({', '.join(names)})"
        atols = atol if isinstance(atol, tuple) else (atol,) * len(expected)
        for name, g, e, a in zip(names, got, expected, atols):
            problem = mismatch(g, e, rtol, a)
            if problem:
                return f"{name}: {problem}"
        return None
    if isinstance(expected, (str, dict)) or isinstance(expected, list) and not _numeric(expected):
        return _exact(got, expected)
    if not _numeric(got) or isinstance(expected, np.ndarray) and not _is_array(got):
        what = "a number" if np.ndim(expected) == 0 else f"an array of shape {np.shape(expected)}"
        return f"returned {kind(got)}; expected {what}"
    got, expected = np.asarray(got), np.asarray(expected)
    if expected.dtype.kind not in "biufc":      # a wrong version's result (None, objects): numbers differ from it
        return f"returned {kind(got)}; expected {kind(expected.item() if expected.ndim == 0 else expected)}"
    if got.shape != expected.shape:
        hint = " (transposed?)" if got.shape == expected.shape[::-1] and got.ndim > 1 else ""
        return f"shape {got.shape}, expected {expected.shape}{hint}"
    if got.dtype.kind not in "biuf":
        return f"dtype {got.dtype}, expected real numbers"
    bad = ~np.isfinite(got) & np.isfinite(expected)
    if bad.any():
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        return (f"{int(bad.sum())} of {got.size} entries are NaN or infinite "
                f"(first at {list(first)}: {float(got[first])}), expected finite values")
    if np.allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True):
        return None
    return _value_diff(got.astype(float), expected.astype(float), rtol, atol)


def _value_diff(got, expected, rtol, atol) -> str:
    wrong = ~np.isclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)
    where = [tuple(int(i) for i in idx) for idx in np.argwhere(wrong)[:SHOWN]]
    shown = "; ".join("at {} got {}, expected {}".format(list(w), *apart(got[w], expected[w])) for w in where)
    error = np.abs(got - expected)
    worst = tuple(int(i) for i in np.unravel_index(np.nanargmax(error), error.shape))
    with np.errstate(over="ignore"):       # beyond float32's range is not a float32 number
        in32 = [bool(np.all(v[np.isfinite(v)].astype(np.float32) == v[np.isfinite(v)])) for v in (got, expected)]
    rounded = rtol < np.finfo(np.float32).eps and in32 == [True, False] and \
        np.allclose(got, expected, rtol=1e-5, atol=1e-5 * np.nanmax(np.abs(expected)))   # off by float32's digits
    return (f"{int(wrong.sum())} of {got.size} entries differ (tolerance rtol={rtol:g}, "
            f"atol={atol:g}): {shown}; largest error {error[worst]:.3g} at {list(worst)}"
            + (" (every value is a float32 number: the result is computed or rounded in float32, about 7 "
               "significant digits; keep float64)" if rounded else ""))


def apart(got: float, expected: float) -> tuple:
    """The two numbers with enough significant digits (6 to 17) to show that they differ."""
    for digits in range(6, 18):
        shown = f"{got:.{digits}g}", f"{expected:.{digits}g}"
        if shown[0] != shown[1]:
            break
    return shown


def _exact(got, expected) -> str | None:
    """Strings, vocabularies and lists of them must be equal as they are."""
    if isinstance(expected, dict):
        if not isinstance(got, dict):
            return f"returned {kind(got)}; expected a dict"
        missing, extra = sorted(set(expected) - set(got)), sorted(set(got) - set(expected))
        if missing or extra:
            return f"keys differ: missing {quoted(missing)}, unexpected {quoted(extra)}"
        wrong = [k for k in expected if not _same(got[k], expected[k])]
        return None if not wrong else "; ".join(
            f"[{quoted(k)}] is {quoted(got[k])}, expected {quoted(expected[k])}" for k in wrong[:SHOWN])
    if isinstance(expected, list):
        if not isinstance(got, (list, tuple)):
            return f"returned {kind(got)}; expected a list of {len(expected)} items"
        if len(got) != len(expected):
            return f"returned {len(got)} items; expected {len(expected)}"
        wrong = [i for i, (g, e) in enumerate(zip(got, expected)) if not _same(g, e)]
        return None if not wrong else "; ".join(
            f"item {i} is {quoted(got[i])}, expected {quoted(expected[i])}" for i in wrong[:SHOWN])
    return None if _same(got, expected) else f"returned {quoted(got)}, expected {quoted(expected)}"


def _same(got, expected) -> bool:
    alike = type(got) is type(expected) or isinstance(got, str) and isinstance(expected, str)   # np.str_
    return alike and got == expected or (
        _numeric(got) and _numeric(expected) and np.ndim(got) == np.ndim(expected) == 0
        and float(got) == float(expected) and not isinstance(got, (bool, np.bool_)))


def _numeric(value) -> bool:
    """A number, a numeric array, or a (nested) list of numbers."""
    if isinstance(value, (str, dict)) or value is None:
        return False
    if isinstance(value, (bool, int, float, np.generic, np.ndarray)):
        return np.asarray(value).dtype.kind in "biuf"
    if isinstance(value, list):
        try:
            return np.asarray(value).dtype.kind in "biuf"
        except (ValueError, TypeError):
            return False
    return False


def _is_array(value) -> bool:
    return isinstance(value, (np.ndarray, np.generic))


def kind(value) -> str:
    """What a returned value is, for a message: "an array of shape (3, 4)", "a tuple of 2 items"."""
    if value is None:
        return "None (missing return?)"
    if isinstance(value, tuple):
        return f"a tuple of {len(value)} items"
    if isinstance(value, np.ndarray):     # a NumPy scalar is named by its type, as a Python one
        return f"an array of shape {value.shape}"
    return f"a value of type {type(value).__name__}"
