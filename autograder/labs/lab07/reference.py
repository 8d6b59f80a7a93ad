"""Reference solutions, generated from source/lab07_rope_generation/lab07_rope_generation.ipynb.

Do not edit: run `attnlab sync`. CI fails when this file differs from what the
source notebook generates.
"""
import math

import numpy as np


def softmax(z):
    '''Softmax over the last axis (Lab 05), in a new array.'''
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    e /= e.sum(axis=-1, keepdims=True)
    return e


def split_heads(M, n_heads):
    '''(B, N, d) -> (B, A, N, d_k): head c takes columns c*d_k:(c+1)*d_k.'''
    B, N, d = M.shape
    return M.reshape(B, N, n_heads, d // n_heads).transpose(0, 2, 1, 3)


def merge_heads(M):
    '''(B, A, N, d_k) -> (B, N, A*d_k): the heads concatenated (the inverse of split_heads).'''
    B, A, N, d_k = M.shape
    return M.transpose(0, 2, 1, 3).reshape(B, N, A * d_k)


def causal_mask(N, dtype=np.float64):
    '''(N, N): 0 on and below the diagonal, -inf above it (eq. 8.34).'''
    return np.triu(np.full((N, N), -np.inf, dtype=dtype), k=1)


def matmul(x, W):
    '''x @ W as one matrix product over all leading axes: (..., d_in) -> (..., d_out).'''
    return (x.reshape(-1, x.shape[-1]) @ W).reshape(*x.shape[:-1], W.shape[1])


def rope_frequencies(d_k, base=10000.0):
    """The angular frequency omega_m of each pair of dimensions (2m, 2m+1) of a head (eq. R1).

    Args:
        d_k: head width, even
        base: base of the geometric progression (10000, as in RoFormer and Lab 05)
    Returns:
        omega: float array (d_k/2,), the frequency of pair m of eq. R1 at index m: 1 for pair 0,
        then smaller by the same factor from each pair to the next, towards 1/base
    """
    return base ** (-np.arange(0, d_k, 2) / d_k)


def apply_rope(x, positions, base=10000.0):
    """Rotate each pair of dimensions (2m, 2m+1) of every row by positions[i] * omega_m (eq. R1).

    Args:
        x: float array (..., N, d_k), queries or keys of one or more heads; d_k even
        positions: int array (N,), the position of each of the N rows
        base: as in rope_frequencies
    Returns:
        array of the shape and dtype of x (float32 stays float32); x itself is unchanged
    """
    angles = np.asarray(positions)[:, None] * rope_frequencies(x.shape[-1], base)   # (N, d_k/2)
    cos, sin = np.cos(angles).astype(x.dtype), np.sin(angles).astype(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]                                         # (..., N, d_k/2)
    out = np.empty_like(x)
    out[..., 0::2] = even * cos - odd * sin
    out[..., 1::2] = even * sin + odd * cos
    return out


def rope_attention(X, W_Q, W_K, W_V, W_O, n_heads):
    """Causal multi-head self-attention with rotary positions (eqs. 8.33-8.37 and R1).

    Args:
        X: (B, N, d) the inputs of B sequences
        W_Q, W_K, W_V, W_O: (d, d); head c uses columns c*d_k:(c+1)*d_k of W_Q, W_K and W_V
        n_heads: A, a divisor of d; d_k = d / A is even
    Returns:
        out: (B, N, d), the heads' outputs concatenated and multiplied by W_O
        weights: (B, A, N, N), the attention weights; row i is 0 after column i
    """
    B, N, d = X.shape
    q, k, v = (split_heads(matmul(X, W), n_heads) for W in (W_Q, W_K, W_V))    # (B, A, N, d_k)
    positions = np.arange(N)
    q, k = apply_rope(q, positions), apply_rope(k, positions)
    scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d // n_heads) + causal_mask(N, X.dtype)
    weights = softmax(scores)                                                  # (B, A, N, N)
    return matmul(merge_heads(weights @ v), W_O), weights


def kv_attention_step(x, k_cache, v_cache, W_Q, W_K, W_V, W_O, n_heads):
    """rope_attention for one new position t, with the keys and values of positions < t cached.

    Args:
        x: (d,) the input of the new token, at position t = k_cache.shape[1]
        k_cache: (A, t, d_k) the rotated keys of positions 0..t-1 (t may be 0)
        v_cache: (A, t, d_k) their values
        W_Q, W_K, W_V, W_O: (d, d); n_heads: A
    Returns:
        out: (d,), row t of rope_attention's output on the whole sequence
        k_cache: (A, t+1, d_k), the cached keys and the new rotated key, in a new array
        v_cache: (A, t+1, d_k), the cached values and the new value, in a new array
    """
    d = x.shape[-1]
    d_k, t = d // n_heads, k_cache.shape[1]
    q, k, v = ((x @ W).reshape(n_heads, 1, d_k) for W in (W_Q, W_K, W_V))     # (A, 1, d_k)
    q, k = apply_rope(q, np.array([t])), apply_rope(k, np.array([t]))
    k_cache = np.concatenate([k_cache, k], axis=1)                            # (A, t+1, d_k)
    v_cache = np.concatenate([v_cache, v], axis=1)
    weights = softmax(q @ k_cache.transpose(0, 2, 1) / math.sqrt(d_k))        # (A, 1, t+1)
    return (weights @ v_cache).reshape(d) @ W_O, k_cache, v_cache


def dropout(x, p, rng, training=True):
    """Inverted dropout.

    Args:
        x: float array, any shape
        p: probability of dropping an entry, 0 <= p < 1
        rng: np.random.Generator, the only source of randomness
        training: False at evaluation time
    Returns:
        array of the shape of x. Training: each entry independently 0 with probability p, and
        x / (1 - p) otherwise. Evaluation, or p == 0: the values of x, unchanged.
    """
    if not training or p == 0:
        return x.copy()
    keep = rng.random(x.shape) >= p
    return np.where(keep, x / (1 - p), 0.0)


def attention_support(weights):
    """Entropy in bits, support and normalised support of every row of causal attention weights.

    Args:
        weights: (..., N, N); row i is a distribution over the key positions 0..i (0 after i)
    Returns:
        entropy: (..., N), the entropy -sum_j alpha_ij log2 alpha_ij of row i, in bits, with 0 log 0 = 0
        support: (..., N), 2 ** entropy
        normalised: (..., N), support / (i + 1)
    """
    safe = np.where(weights > 0, weights, 1.0)                  # log2(1) = 0 stands for 0 log 0
    entropy = -(weights * np.log2(safe)).sum(axis=-1)
    support = 2.0 ** entropy
    return entropy, support, support / np.arange(1, weights.shape[-1] + 1)
