"""What a wrong result is of the right one, read from the values alone: transposed, reversed,
the right numbers in other places or in another shape, scaled or offset by a constant (or each
row by its own), plus or minus an input, raised to a power, inverted, negated, truncated to
integers, shifted by one position, left at zero in a run at one end of an axis, short of one end
or longer at one, repeated or tiled, or a one-pass iterator. Such a relation holds whatever code
produced it, so it is said where no mistake (catalogued or derived) reproduces the student's
results: it is true of their results by construction, and it points at the kind of mistake to
look for.
"""
import numpy as np

TRANSPOSED = ("the result is the expected one transposed (its last two axes exchanged): the operands "
              "of a product, or the axes of a transpose, are the other way round")
REARRANGED = ("the result holds the right numbers in the wrong places: an axis order, a reshape or a "
              "transpose (the layout of heads, positions or features) differs from the expected one")
POWERED = ("every entry is the expected one raised to the same power ({power}): an exponent is {how} (a "
           "factor counted twice in it, left out, or of the wrong size)")
_POWERS = {2.0: "doubled", 0.5: "halved", -1.0: "of the wrong sign", -2.0: "doubled and of the wrong sign",
           -0.5: "halved and of the wrong sign"}
INVERTED = ("every entry is a constant divided by the expected one: a reciprocal is taken (a period for a "
            "frequency, a divisor for a factor)")
LAZY = ("the result is a `{kind}`, a one-pass iterator, where a list or an array is expected: the {kind} "
        "is returned itself instead of the list made from it")
_ITERATORS = ("map", "filter", "generator", "zip", "enumerate", "reversed", "list_iterator", "range_iterator",
              "dict_keys", "dict_values", "dict_items")
REORDERED = ("the result holds the right numbers in the wrong order: an index array, a sort or a slice "
             "picks them in another order than the expected one")
REVERSED = ("the result is the expected one in reverse order{along}: a loop, a slice or a sort runs the "
            "wrong way ([::-1], or descending for ascending)")
NEGATED = "every entry has the wrong sign: a sign is flipped (a subtraction the other way round)"
SHIFTED = ("the result is the expected one shifted by one along axis {axis}: an off-by-one in positions "
           "or indices (counting from 1, or a slice one too far)")
TRUNCATED = ("the result is the expected one with its fractions cut off: the values are stored in an "
             "integer array (one made from integer positions or ids, or given an integer dtype)")
RESHAPED = ("the result holds the expected values in the expected order, in another shape: an axis is "
            "merged, split, added or dropped (a reshape back to the expected shape is missing or wrong)")
EDGE = ("the result is right except at its {end} entries{along}, which are left at zero: a loop or a slice "
        "that {how} never fills them")
EARLY = {"first": "starts late",
         "last": "ends early (a `return` or `break` inside the loop, or a range that stops short)"}
SHORT = "the result is the expected one without its {end} entry{along}: a loop or a slice {how}"
LONG = ("the result is the expected one {order} more entries{along}: a range or a loop runs too far (over "
        "every index where it should take every second, or past the end)")
_ENDS = {"first": "starts one late", "last": "stops one short"}
SCALED = ("every entry is the expected one times a factor that is the same across the result ({factors}): a "
          "scale is missing, applied where none belongs, doubled or inverted")
ITEMS_SCALED = ("each returned array that differs is the expected one times a factor of its own ({factors}): a "
                "scale is missing, applied where none belongs, doubled or inverted")
OFFSET = ("every entry is the expected one plus the same constant: a term (a bias, a shift, an eps) is "
          "missing, added twice or has the wrong sign")
ROW_SCALED = ("each row (along the last axis) is the expected one times a factor of its own: a normalisation "
              "is missing or divides by the wrong amount (a sum, a norm or a count per row)")
ADDED = "the result is the expected one {sign} the input `{name}`: {how}"
_ADDED_HOW = {"plus": "the input is added (a residual connection where none belongs, or one counted twice)",
              "minus": "the input is missing from it (a residual connection left out, or one that adds another "
                       "stream than its input)"}
REPEATED = ("the result is the expected one with each entry repeated {times} times{along} (np.repeat): values "
            "that belong once appear {times} times, side by side")
TILED = ("the result is {times} copies of the expected one end to end{along} (np.tile, or a concatenation): "
         "values that belong once appear {times} times")
ROW_OFFSET = ("each row (along the last axis) is the expected one plus a constant of its own: a term per row "
              "(a maximum, a mean or a log-sum-exp) is missing or wrong")


def relation(got, expected, inputs: dict | None = None) -> str | None:
    """The message of the one relation `got` (the student's result) bears to `expected` (the
    reference's), or None (none, or several that say different things). `inputs`: the call's
    arrays by name, of which one may have been added."""
    found = _holding(got, expected, inputs or {})
    return found.pop() if len(found) == 1 else None


def _holding(got, expected, inputs: dict) -> set:
    """Every relation `got` bears to `expected`. Tuples: those that all the items that differ bear
    (each item may be scaled by a factor of its own)."""
    if isinstance(expected, tuple):
        if not isinstance(got, tuple) or len(got) != len(expected):
            return set()
        found = [_holding(g, e, inputs) for g, e in zip(got, expected) if not _equal(g, e)]
        if not found:
            return set()
        shared = set.intersection(*found)
        each = not shared and all(len(f) == 1 for f in found) and _scales([next(iter(f)) for f in found],
                                                                          ITEMS_SCALED)
        return {each} if each else shared
    if isinstance(got, str) and isinstance(expected, str):
        letters = (list(got), list(expected))
        return {_short(*letters), _long(*letters)} - {None} if got != expected else set()
    g, e = _real(got), _real(expected)
    if g is None or e is None or e.size < 3 or not (np.isfinite(g).all() and np.isfinite(e).all()) or _equal(g, e):
        return set()
    if g.shape != e.shape:
        found = {RESHAPED} if g.size == e.size and _equal(g.ravel(), e.ravel()) else set()
        if e.ndim >= 2 and g.shape == e.shape[:-2] + e.shape[:-3:-1] and _equal(g, np.swapaxes(e, -1, -2)):
            found.add(TRANSPOSED)       # a row or a column transposed is reshaped too: then neither is said
        if found:
            return found
        if g.ndim != e.ndim:
            return set()
        return {_copies(g, e)} - {None} or {_short(g, e), _long(g, e)} - {None}
    if e.size < 4:
        return set()
    found = set()
    factor = _factor(g, e)
    if _equal(g, -e):
        found.add(NEGATED)
    elif factor is not None:
        found.add(SCALED.format(factors=f"{factor:.4g}"))
    if not _equal(e, np.trunc(e)) and np.trunc(e).any() and _equal(g, np.trunc(e)):
        found.add(TRUNCATED)
    found |= {SHIFTED.format(axis=axis - e.ndim) for axis in range(e.ndim)
              if e.shape[axis] > 2 and (_shifted(g, e, axis) or _shifted(e, g, axis))}
    found |= {ADDED.format(name=name, sign=sign, how=_ADDED_HOW[sign]) for name, x in inputs.items()
              if np.shape(x) == e.shape for sign, sum_ in (("plus", e + x), ("minus", e - x)) if _equal(g, sum_)}
    found |= _per_row(g, e) if not found else set()
    found |= {_powered(g, e), _inverted(g, e)} - {None} if not found else set()
    found |= {REVERSED.format(along=_along(axis, e.ndim)) for axis in range(e.ndim)
              if e.shape[axis] > 2 and _equal(g, np.flip(e, axis))}
    if not found and np.allclose(np.sort(g, axis=None), np.sort(e, axis=None), rtol=1e-8, atol=1e-10):
        found.add(REORDERED if e.ndim == 1 else REARRANGED)
    return found | {_edge(g, e)} - {None}


def relations(pairs: list) -> str | None:
    """The relation every (got, expected[, the call's arrays by name]) pair that differs shares, or
    None. A factor may differ from call to call (it depends on the sizes): the message lists them."""
    found = [relation(*pair) for pair in pairs if not _equal(*pair[:2])]
    if not found or None in found:
        return None
    return _scales(found) or (found[0] if len(set(found)) == 1 else None)


def _scales(found: list, into: str | None = None) -> str | None:
    """`into` with each factor listed, where every message of `found` is SCALED or ITEMS_SCALED
    (by default ITEMS_SCALED if one is: a tuple's items scaled each by its own factor)."""
    kinds = [t for t in (SCALED, ITEMS_SCALED) if any(f.startswith(t.split("{")[0]) for f in found)]
    if not kinds or not all(f.startswith(tuple(t.split("{")[0] for t in kinds)) for f in found):
        return None
    return (into or kinds[-1]).format(factors=", ".join(dict.fromkeys(f[f.index("(") + 1:f.index(")")] for f in found)))


def _real(value):
    """`value` as a float array, or None if it holds anything but real numbers."""
    try:
        array = np.asarray(value)
    except (TypeError, ValueError):
        return None
    return array.astype(float) if array.dtype.kind in "biuf" else None


def _equal(a, b) -> bool:
    a, b = _real(a), _real(b)
    if a is None or b is None:
        return False
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=1e-8, atol=1e-10, equal_nan=True))


def _factor(g, e):
    """The constant c (not 1, not 0) with g = c e, where e is not all zeros."""
    big = np.abs(e) > 1e-8 * np.abs(e).max()
    if not big.any():
        return None
    c = float(np.median(g[big] / e[big]))
    return c if abs(c - 1) > 1e-6 and c != 0 and _equal(g, c * e) else None


def _powered(g, e) -> str | None:
    """POWERED, where g = e ** k for positive e, a power k other than 1, 0 and -1."""
    if not (e > 0).all() or not (g > 0).all():
        return None
    logs = np.log(e)
    spread = np.abs(logs) > 1e-3
    if spread.sum() < 2:
        return None
    k = float(np.median(np.log(g)[spread] / logs[spread]))
    far = min(abs(k - 1), abs(k), abs(k + 1)) > 1e-6
    how = next((said for power, said in _POWERS.items() if abs(k - power) < 1e-6), "multiplied by that factor")
    return POWERED.format(power=f"{k:.3g}", how=how) if far and _equal(g, e ** k) else None


def _inverted(g, e) -> str | None:
    """INVERTED, where g = c / e for a constant c, e nowhere 0 and not constant, and g not e's own
    values in another order (a geometric sequence reversed is c / e too: a reorder is the simpler)."""
    if not (np.abs(e) > 1e-12).all() or np.ptp(e) < 1e-9 * np.abs(e).max() or _equal(np.sort(g, axis=None),
                                                                                    np.sort(e, axis=None)):
        return None
    c = float(np.median(g * e))
    return INVERTED if c != 0 and _equal(g, c / e) else None


def _per_row(g, e) -> set:
    """OFFSET where g = e + c; ROW_SCALED and ROW_OFFSET where every row along the last axis (of two
    or more rows, none constant) differs from e's by a factor or a constant of its own."""
    offset = np.median(g - e, axis=-1, keepdims=True)
    if np.ptp(offset) < 1e-9 * (1 + np.abs(e).max()):
        return {OFFSET} if _equal(g, e + offset.flat[0]) else set()
    rows = e.reshape(-1, e.shape[-1])
    if len(rows) < 2 or not (np.ptp(rows, axis=-1) > 1e-9).all():
        return set()
    found = {ROW_OFFSET} if _equal(g, e + offset) and (np.abs(offset) > 1e-9).all() else set()
    big = np.abs(e) > 1e-8 * np.abs(e).max()
    ratio = np.where(big, g / np.where(big, e, 1.0), np.nan)
    factor = np.nanmedian(ratio, axis=-1, keepdims=True) if big.any(axis=-1).all() else None
    if factor is not None and _equal(g, factor * e) and (np.abs(factor - 1) > 1e-9).all() \
            and (np.abs(factor) > 1e-9).all():        # a row left at zero is a loop's, not a factor's
        found.add(ROW_SCALED)
    return found


def _shifted(a, b, axis: int) -> bool:
    """a[..., 1:, ...] equals b[..., :-1, ...] along `axis` (b shifted forward by one)."""
    n = a.shape[axis]
    return _equal(np.take(a, range(1, n), axis=axis), np.take(b, range(0, n - 1), axis=axis))


def _ends(e, axis: int):
    """(end, e without its entry at that end along `axis`) for both ends."""
    n = len(e) if isinstance(e, list) else e.shape[axis]
    for end, rest in (("first", range(1, n)), ("last", range(n - 1))):
        yield end, [e[i] for i in rest] if isinstance(e, list) else np.take(e, rest, axis=axis)


def _edge(g, e) -> str | None:
    """EDGE, where `g` differs from `e` in a run of entries at one end of one axis alone (of the
    rows, all leading axes taken in order, if no axis has one) and holds zeros there (an entry that
    differs for another reason, such as the one row a causal mask leaves a single key, is no
    sign of a loop)."""
    found = [(axis, end) for axis in range(e.ndim) for end in EARLY if _zeroed_run(g, e, axis, end)]
    if not found and e.ndim > 2:
        g, e = g.reshape(-1, e.shape[-1]), e.reshape(-1, e.shape[-1])
        found = [(0, end) for end in EARLY if _zeroed_run(g, e, 0, end)]
    if len(found) != 1:
        return None
    (axis, end), = found
    return EDGE.format(end=end, along=_along(axis, e.ndim), how=EARLY[end])


def _zeroed_run(g, e, axis: int, end: str) -> bool:
    """Along `axis`, `g` differs from `e` in the entries of a run at `end` only, and is zero there."""
    n = e.shape[axis]
    differs = [not _equal(np.take(g, i, axis=axis), np.take(e, i, axis=axis)) for i in range(n)]
    k = sum(differs)
    run = range(k) if end == "first" else range(n - k, n)
    return 0 < k < n and all(differs[i] for i in run) and not np.take(g, run, axis=axis).any()


def _short(g, e) -> str | None:
    """SHORT, where `g` (a list or an array) is `e` without the entry at one end of one axis."""
    apart = _apart(g, e)
    if apart is None or apart[1] != apart[2] - 1 or apart[2] < 3 or np.size(g) < 3:   # 2 alike: a coincidence
        return None
    axis, _, _, ndim = apart
    found = [end for end, rest in _ends(e, axis) if (g == rest if isinstance(e, list) else _equal(g, rest))]
    return SHORT.format(end=found[0], along=_along(axis, ndim), how=_ENDS[found[0]]) if len(found) == 1 else None


def _long(g, e) -> str | None:
    """LONG, where `g` (a list or an array) is `e` with more entries at one end of one axis."""
    apart = _apart(g, e)
    if apart is None or not apart[1] > apart[2] >= 2:
        return None
    axis, m, n, ndim = apart
    parts = {"followed by": range(n), "preceded by": range(m - n, m)}
    found = [order for order, part in parts.items() if (
        [g[i] for i in part] == e if isinstance(e, list) else _equal(np.take(g, part, axis=axis), e))]
    return LONG.format(order=found[0], along=_along(axis, ndim)) if len(found) == 1 else None


def _copies(g, e) -> str | None:
    """REPEATED or TILED, where `g` is `e` made a whole number of times longer along one axis."""
    apart = _apart(g, e)
    if apart is None or apart[1] % apart[2] or apart[2] < 2:
        return None
    axis, m, n, ndim = apart
    times = m // n
    if _equal(g, np.repeat(e, times, axis=axis)):
        return REPEATED.format(times=times, along=_along(axis, ndim))
    if _equal(g, np.concatenate([e] * times, axis=axis)):
        return TILED.format(times=times, along=_along(axis, ndim))
    return None


def _apart(g, e) -> tuple | None:
    """(the axis, g's size and e's size along it, the number of axes) where `g` and `e` (two lists,
    or two arrays of as many axes) differ in size along one axis alone; else None."""
    sizes = ([len(g)], [len(e)]) if isinstance(e, list) else (g.shape, e.shape)
    axes = [axis for axis, (m, n) in enumerate(zip(*sizes)) if m != n]
    if len(axes) != 1:
        return None
    return axes[0], sizes[0][axes[0]], sizes[1][axes[0]], len(sizes[1])


def lazy(observed: list) -> str | None:
    """LAZY, where every call returned the same kind of one-pass iterator (which cannot be graded)."""
    kinds = {_iterator(got) for _, got in observed}
    return LAZY.format(kind=kinds.pop()) if len(kinds) == 1 and None not in kinds else None


def _iterator(got) -> str | None:
    text = getattr(got, "text", "")
    return next((kind for kind in _ITERATORS if text.endswith(f"a value of type {kind} cannot be sent")), None)


def _along(axis: int, ndim: int) -> str:
    """Where along: nothing for a vector, its rows for a matrix's axis 0 (and a stack's rows)."""
    return "" if ndim == 1 else " along its rows" if ndim == 2 and axis == 0 else f" along axis {axis}"
