"""Lab 07 visible checks: small fixed inputs whose expected outputs ship to students.

These inputs are public (they are written into the student helper), so the hidden checks never
reuse them: hidden inputs are drawn per check from their own seeds. The helper stops at a part's
first failing case, so the order matters: each catalogued mistake fails first on a case where no
other mistake that fits the cases before it gives the same result (tests/test_hints.py runs every
mistake through the helper). Empty arrays are avoided: the helper writes arrays as nested lists,
which lose the trailing axes of an empty array.

Dropout in training has no single right output: the mask depends on how the generator is used.
The training cases use seeds on which every usual way (rng.random(x.shape) >= p or < 1 - p,
rng.uniform, rng.binomial for keeping or for dropping, rng.choice, float32 draws) decides the
non-zero entries of x alike, so one expected output holds for all of them; x is 0 where they
disagree. With p = 0.75 every non-zero entry is dropped (a dropout that drops nothing in training
fails there); with p = 0.25 every one is kept, so the scale of the kept entries shows, and
the one decision per row of a mask drawn per row drops a row that per-entry masks keep.
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


def _far_future():
    """Query 0 scores -700 on key 0 (position 0 is not rotated) and 0 on every later key, whose
    inputs are 0: a finite mask (-100) leaves the later keys almost all the weight."""
    X = np.zeros((1, 4, 4))
    X[0, 0, 0] = np.sqrt(700 * np.sqrt(2))
    W_Q, W_K = np.zeros((4, 4)), np.zeros((4, 4))
    W_Q[0, 0], W_K[0, 0] = 1.0, -1.0
    return X, (W_Q, W_K, _r(4, 4, scale=0.5), _r(4, 4, scale=0.5)), 2


# dropout in training: x is non-zero only where every usual mask decides alike (see above)
_X_DROPPED = np.array([[1.01, -1.4, -0.95, 0.86], [0.0, 1.0, 1.11, -1.03]])
_X_KEPT = np.array([[0.0, 0.0, 1.32, -1.3], [-1.8, -1.59, -1.2, -0.85], [-1.65, 1.14, 0.0, 0.84]])

CASES = {
    "rope_frequencies": [
        ("d_k = 8", C.rope_frequencies(8)),
        ("d_k = 6, base 100", C.rope_frequencies(6, base=100.0)),
    ],
    "apply_rope": [
        ("one row at position 1, d_k = 4", C.apply_rope(np.array([[1.0, 0.5, -1.0, 2.0]]), np.array([1]))),
        ("positions 0, 1, 2, d_k = 4", C.apply_rope(_r(3, 4), np.arange(3))),
        ("positions 5 and -2 (need not start at 0)", C.apply_rope(_r(2, 2, 4), np.array([5, -2]))),
        ("base 100", C.apply_rope(_r(2, 4), np.array([1, 3]), base=100.0)),
        ("float32 x (3, 4) at positions 0, 1, 2 gives a float32 result (cast with casting='safe', which "
         "refuses float64)", C.as_float32_safely(C.apply_rope(_r(3, 4).astype(np.float32), np.arange(3)))),
    ],
    "rope_attention": [
        ("B = 1, N = 3, d = 4, one head", C.rope_attention(_r(1, 3, 4), _weights(4), 1)),
        ("B = 2, N = 4, d = 8, two heads (same frequencies in both)",
         C.rope_attention(_r(2, 4, 8), _weights(8, scale=0.8), 2)),
        ("N = 4, d = 4, two heads: query 0 scores -700 on its own key and 0 on the later ones, which "
         "the mask must hide however far below them the allowed score is", C.rope_attention(*_far_future())),
    ],
    "kv_attention_step": [
        ("t = 2: the third token, two cached positions", C.kv_attention_step(
            _X6[2], _k6[:, :2], _v6[:, :2], _W6, 2)),
        ("t = 5: row 5 of rope_attention, five cached positions", C.kv_attention_step(
            _X6[5], _k6, _v6, _W6, 2)),
    ],
    "dropout": [
        ("training, p = 0.75, seed 6: every usual mask drops the non-zero entries, so the result is 0, "
         "and x is left as it is", C.dropout(_X_DROPPED, 0.75, 6)),
        ("training, p = 0.25, seed 19885: every usual mask keeps the non-zero entries, which become "
         "x / (1 - p), and x is left as it is", C.dropout(_X_KEPT, 0.25, 19885)),
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

# Dropout in training has no single right mask: what every correct one shares is that it draws
# only from the generator it is given (see lab06's visible.py).
PROPERTIES = {
    "dropout": [("in training, the same seed gives the same mask whatever the state of np.random; other seeds, "
                 "other masks", [C.dropout(np.ones((4, 6)), 0.5, seed) for seed in range(4)])],
}
