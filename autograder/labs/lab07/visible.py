"""Lab 07 visible checks: small fixed inputs whose expected outputs ship to students.

These inputs are public (they are written into the student helper), so the hidden checks never
reuse them: hidden inputs are drawn per check from their own seeds. The dropout cases have one
answer for every correct use of the generator: evaluation mode, p = 0, and p close to 1 on an
array of zeros are not enough to tell mask-drawing methods apart, and the rest of dropout's
behaviour is checked by properties in the hidden tests. Empty arrays are avoided: the helper
writes arrays as nested lists, which lose the trailing axes of an empty array.
"""
import numpy as np

from . import calls as C
from . import reference as R

_rng = np.random.default_rng(20251123)


def _r(*shape, scale=1.0):
    """Random values rounded to two decimals, easy to read in the helper file."""
    return np.round(scale * _rng.standard_normal(shape), 2)


def _weights(d, scale=0.5):
    return tuple(_r(d, d, scale=scale) for _ in range(4))


# a sequence of 6 positions, 2 heads of width 4: the cases are at t = 2 and t = 5, so that t - 1,
# t, t + 1, 0 and the number of heads (what len(k_cache) gives) are all different positions
_X6, _W6 = _r(6, 8), _weights(8, scale=0.6)
_k6 = R.apply_rope((_X6[:5] @ _W6[1]).reshape(5, 2, 4).transpose(1, 0, 2), np.arange(5))
_v6 = (_X6[:5] @ _W6[2]).reshape(5, 2, 4).transpose(1, 0, 2)

CASES = {
    "rope_frequencies": [
        ("d_k = 8", C.rope_frequencies(8)),
        ("d_k = 4, base 100", C.rope_frequencies(4, base=100.0)),
    ],
    "apply_rope": [
        ("one row at position 1, d_k = 4", C.apply_rope(np.array([[1.0, 0.0, 1.0, 0.0]]), np.array([1]))),
        ("positions 0, 1, 2, d_k = 4", C.apply_rope(_r(3, 4), np.arange(3))),
        ("positions 5 and -2 (need not start at 0)", C.apply_rope(_r(2, 2, 4), np.array([5, -2]))),
        ("base 100", C.apply_rope(_r(2, 4), np.array([1, 3]), base=100.0)),
    ],
    "rope_attention": [
        ("B = 1, N = 3, d = 4, one head", C.rope_attention(_r(1, 3, 4), _weights(4), 1)),
        ("B = 2, N = 4, d = 8, two heads (same frequencies in both)",
         C.rope_attention(_r(2, 4, 8), _weights(8, scale=0.8), 2)),
    ],
    "kv_attention_step": [
        ("t = 2: the third token, two cached positions", C.kv_attention_step(
            _X6[2], _k6[:, :2], _v6[:, :2], _W6, 2)),
        ("t = 5: row 5 of rope_attention, five cached positions", C.kv_attention_step(
            _X6[5], _k6, _v6, _W6, 2)),
    ],
    "dropout": [
        ("evaluation: x unchanged", C.dropout(_r(2, 3), 0.5, 0, training=False)),
        ("p = 0: x unchanged", C.dropout(_r(4), 0.0, 0)),
    ],
    "attention_support": [
        ("uniform causal rows: support 1, 2, 3", C.attention_support(
            np.tril(np.ones((3, 3))) / np.arange(1, 4)[:, None])),
        ("one-hot rows, rows split in two, exact zeros; B = 2 sequences of N = 3", C.attention_support(
            np.array([[[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.25, 0.25, 0.5]],
                      [[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.5, 0.5]]]))),
    ],
}
