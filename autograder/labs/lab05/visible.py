"""Lab 05 visible checks: small fixed inputs whose expected outputs ship to students.

These inputs are public (they are written into the student helper), so the hidden checks
never reuse them: hidden inputs are drawn per check from their own seeds.
"""
import numpy as np

from . import calls as C
from . import reference

_rng = np.random.default_rng(20250805)


def _r(*shape, scale=1.0):
    """Random values rounded to two decimals, easy to read in the helper file."""
    return np.round(scale * _rng.standard_normal(shape), 2)


_later = np.random.default_rng(20251128)     # cases added later draw here, leaving the others as they were


def _l(*shape, scale=1.0):
    return np.round(scale * _later.standard_normal(shape), 2)


def _block_params(d_model, d_ff):
    return {name: np.round(value, 2) if not isinstance(value, tuple) else tuple(np.round(value, 2))
            for name, value in C.block_params(_rng, d_model, d_ff).items()}


_lm = C.lm_params(_rng, reference.positional_encoding, 7, 4, 2, 2, 8, final_default=False)
_lm = {**_lm, "E": np.round(_lm["E"], 2),
       "blocks": [_block_params(4, 16) for _ in range(2)],
       "final_gamma": np.round(_lm["final_gamma"], 2), "final_beta": np.round(_lm["final_beta"], 2)}

CASES = {
    "softmax": [
        ("two rows of small logits", C.softmax(np.array([[1.0, 2.0, 3.0], [0.5, 0.5, 0.5]]))),
        ("logits near 1000 (stability)", C.softmax(np.array([[1000.0, 1001.0, 1002.0], [-3.0, 0.0, 3.0]]))),
        ("a 3-D stack of rows", C.softmax(_r(2, 2, 3, scale=2.0))),
    ],
    "scaled_dot_product_attention": [
        ("N = 3, d_k = 2, d_v = 4", C.attention(_r(3, 2), _r(3, 2), _r(3, 4))),
        ("N = 4, d_k = 9 (the scale matters)", C.attention(_r(4, 9), _r(4, 9), _r(4, 2))),
    ],
    "causal_attention": [
        ("N = 4, d_k = 3, d_v = 2", C.attention(_r(4, 3), _r(4, 3), _r(4, 2), causal=True)),
        ("a single token", C.attention(_r(1, 3), _r(1, 3), _r(1, 2), causal=True)),
        ("position 0 scores -900 on itself and +900 on the future (a finite mask lets it in)",
         C.attention(np.array([[-30.0], [1.0], [2.0]]), np.array([[30.0], [-30.0], [-30.0]]), _l(3, 2),
                     causal=True)),
    ],
    "MultiHeadAttention": [
        ("N = 3, d = 4, one head", C.mha(_r(3, 4), tuple(_r(4, 4, scale=0.5) for _ in range(4)), 1, False)),
        ("N = 5, d = 6, 3 heads, causal", C.mha(_r(5, 6), tuple(_r(6, 6, scale=0.4) for _ in range(4)), 3, True)),
    ],
    "positional_encoding": [
        ("max_len = 4, d_model = 4", C.positional_encoding(4, 4)),
        ("max_len = 6, d_model = 8", C.positional_encoding(6, 8)),
    ],
    "layer_norm": [
        ("default gamma and beta", C.layer_norm(np.array([[1.0, 2.0, 3.0, 4.0], [2.0, 4.0, 6.0, 8.0]]))),
        ("gamma, beta and eps = 0.5", C.layer_norm(_r(2, 3), np.array([1.0, 2.0, 0.5]),
                                                  np.array([0.0, -1.0, 1.0]), eps=0.5)),
        ("gamma given, beta left out", C.layer_norm(_l(2, 3), np.array([2.0, 0.5, 1.0]))),
        ("a (batch, N, d) = (2, 2, 3) input", C.layer_norm(_l(2, 2, 3, scale=2.0))),
    ],
    "feedforward": [
        ("d_model = 3, d_ff = 5", C.feedforward(_r(2, 3), _r(3, 5), _r(5), _r(5, 3), _r(3))),
    ],
    "TransformerBlock": [
        ("N = 4, d = 4, 2 heads, d_ff = 8", C.block(_r(4, 4), _block_params(4, 8), 2)),
    ],
    "MiniTransformerLM": [
        ("|V| = 7, d = 4, 2 heads, 2 layers, N = 5", C.lm(np.array([0, 3, 3, 6, 1]), _lm)),
    ],
}
