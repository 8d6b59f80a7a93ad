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


_X4, _W4 = _r(4, 8), _weights(8, scale=0.6)
_k4 = R.apply_rope((_X4[:3] @ _W4[1]).reshape(3, 2, 4).transpose(1, 0, 2), np.arange(3))
_v4 = (_X4[:3] @ _W4[2]).reshape(3, 2, 4).transpose(1, 0, 2)

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
        ("t = 1: the second token, one cached position", C.kv_attention_step(
            _X4[1], _k4[:, :1], _v4[:, :1], _W4, 2)),
        ("t = 3: row 3 of rope_attention, three cached positions", C.kv_attention_step(
            _X4[3], _k4, _v4, _W4, 2)),
    ],
    "dropout": [
        ("evaluation: x unchanged", C.dropout(_r(2, 3), 0.5, 0, training=False)),
        ("p = 0: x unchanged", C.dropout(_r(4), 0.0, 0)),
    ],
    "attention_support": [
        ("uniform causal rows: support 1, 2, 3", C.attention_support(
            np.tril(np.ones((3, 3))) / np.arange(1, 4)[:, None])),
        ("a one-hot row, a row split in two, with exact zeros", C.attention_support(
            np.array([[[1.0, 0.0], [0.5, 0.5]], [[1.0, 0.0], [1.0, 0.0]]]))),
    ],
}
