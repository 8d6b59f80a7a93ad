"""Compare a returned value with the expected one and say how they differ.

Messages show shapes, counts and at most a few entries, never a whole array, so that a hidden
input or a reference output is never printed in full.

This module needs only NumPy and is copied verbatim into the student helper.
"""
import numpy as np

SHOWN = 3  # entries quoted in a message


def close(got, expected, rtol: float, atol: float) -> bool:
    """Same structure, and every array equal within tolerance (NaN matches NaN)."""
    if isinstance(expected, tuple):
        return (isinstance(got, tuple) and len(got) == len(expected)
                and all(close(g, e, rtol, atol) for g, e in zip(got, expected)))
    if not _is_array(got) or not _is_array(expected):
        return False
    got, expected = np.asarray(got), np.asarray(expected)
    if got.shape != expected.shape or got.dtype.kind not in "biuf":
        return False
    return bool(np.allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True))


def mismatch(got, expected, rtol: float, atol: float, names=None) -> str | None:
    """None when `got` matches `expected`, else a short description of the first difference.

    `expected` is an array or a tuple of arrays; `names` labels the tuple's items.
    """
    if isinstance(expected, tuple):
        names = names or [f"item {i}" for i in range(len(expected))]
        if not isinstance(got, tuple):
            return (f"returned {_kind(got)}; expected a tuple of {len(expected)} "
                    f"({', '.join(names)})")
        if len(got) != len(expected):
            return f"returned a tuple of {len(got)} items; expected {len(expected)} ({', '.join(names)})"
        for name, g, e in zip(names, got, expected):
            problem = mismatch(g, e, rtol, atol)
            if problem:
                return f"{name}: {problem}"
        return None
    if not _is_array(got):
        return f"returned {_kind(got)}; expected an array of shape {np.shape(expected)}"
    got, expected = np.asarray(got), np.asarray(expected)
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
    shown = "; ".join(f"at {list(w)} got {got[w]:.6g}, expected {expected[w]:.6g}" for w in where)
    error = np.abs(got - expected)
    worst = tuple(int(i) for i in np.unravel_index(np.nanargmax(error), error.shape))
    return (f"{int(wrong.sum())} of {got.size} entries differ (tolerance rtol={rtol:g}, "
            f"atol={atol:g}): {shown}; largest error {error[worst]:.3g} at {list(worst)}")


def _is_array(value) -> bool:
    return isinstance(value, (np.ndarray, np.generic))


def _kind(value) -> str:
    if value is None:
        return "None (missing return?)"
    if isinstance(value, tuple):
        return f"a tuple of {len(value)} items"
    if _is_array(value):
        return f"an array of shape {np.shape(value)}"
    return f"a value of type {type(value).__name__}"
