"""How the Lab 07 checks call the graded API, and the inputs they share.

Every check goes through these builders, so the contract with the notebook (names, argument
order, keyword names) is written down once. Keywords left at None are not passed, so that the
student's defaults apply.
"""
import math

import numpy as np

from ...worker.invoke import Call, New, Rng


def _given(**kwargs) -> dict:
    return {name: value for name, value in kwargs.items() if value is not None}


def rope_frequencies(d_k, base=None):
    return Call("rope_frequencies", (d_k,), _given(base=base))


def apply_rope(x, positions, base=None):
    return Call("apply_rope", (x, positions), _given(base=base))


def rope_attention(X, weights, n_heads):
    """`weights` is (W_Q, W_K, W_V, W_O)."""
    return Call("rope_attention", (X, *weights, n_heads))


def kv_attention_step(x, k_cache, v_cache, weights, n_heads):
    return Call("kv_attention_step", (x, k_cache, v_cache, *weights, n_heads))


def dropout(x, p, seed, training=None):
    return Call("dropout", (x, p, Rng(seed)), _given(training=training))


def attention_support(weights):
    return Call("attention_support", (weights,))


# -- inputs ------------------------------------------------------------------------------------

def projections(rng, d, scale=1.0):
    """(W_Q, W_K, W_V, W_O), scaled so that scores and outputs are of order `scale`."""
    return tuple(scale * rng.standard_normal((d, d)) / math.sqrt(d) for _ in range(4))


def causal_rows(rng, shape, sharpness=1.0):
    """Causal attention weights of `shape` (..., N, N): softmax rows with exact zeros after i."""
    N = shape[-1]
    scores = sharpness * rng.standard_normal(shape)
    masked = np.where(np.tril(np.ones((N, N), dtype=bool)), scores, -np.inf)
    e = np.exp(masked - masked.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def cached(reference, X, weights, n_heads, t):
    """The rotated keys and the values of positions 0..t-1 of X (N, d), as a correct cache holds
    them, and the input of position t: (x_t, k_cache, v_cache)."""
    d = X.shape[-1]
    d_k = d // n_heads
    W_Q, W_K, W_V, _ = weights
    k = (X[:t] @ W_K).reshape(t, n_heads, d_k).transpose(1, 0, 2)
    v = (X[:t] @ W_V).reshape(t, n_heads, d_k).transpose(1, 0, 2)
    return X[t], reference(k, np.arange(t)), v


def as_float32_safely(call):
    """The result of `call` cast to float32 with casting='safe', which raises for a float64
    result instead of rounding it: a visible check of the result's dtype."""
    assert not call.kwargs and call.obj is None, call
    return Call("astype", ("float32",), {"casting": "safe"}, New(call.fn, call.args))
