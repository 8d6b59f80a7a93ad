"""Reference solutions, generated from source/lab05_transformers/lab05_transformers.ipynb.

Do not edit: run `attnlab sync`. CI fails when this file differs from what the
source notebook generates.
"""
import math

import numpy as np


def softmax(z: np.ndarray) -> np.ndarray:
    """Numerically stable softmax over the last axis.

    Args:
        z: logits, shape (..., n)
    Returns:
        probabilities, shape (..., n); every slice along the last axis sums to 1
    """
    shifted = z - np.max(z, axis=-1, keepdims=True)  # (..., n), largest entry 0
    e = np.exp(shifted)
    return e / np.sum(e, axis=-1, keepdims=True)


def scaled_dot_product_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray):
    """Scaled dot-product attention, SLP eq. 8.33.

    Args:
        Q: queries, shape (N, d_k)
        K: keys,    shape (N, d_k)
        V: values,  shape (N, d_v)
    Returns:
        output:  shape (N, d_v), row i is sum_j weights[i, j] * V[j]
        weights: shape (N, N), row i is softmax(q_i . k_j / sqrt(d_k)) over j
    """
    d_k = Q.shape[-1]
    scores = Q @ K.T / np.sqrt(d_k)  # (N, N)
    weights = softmax(scores)        # (N, N), rows sum to 1
    return weights @ V, weights      # (N, d_v), (N, N)


def causal_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray):
    """Causal (masked) scaled dot-product attention: position i attends only to j <= i.

    Args:
        Q: queries, shape (N, d_k)
        K: keys,    shape (N, d_k)
        V: values,  shape (N, d_v)
    Returns:
        output:  shape (N, d_v)
        weights: shape (N, N), lower-triangular, rows sum to 1
    """
    n, d_k = Q.shape
    scores = Q @ K.T / np.sqrt(d_k)                  # (N, N)
    mask = np.triu(np.full((n, n), -np.inf), k=1)    # M_ij = -inf for j > i
    weights = softmax(scores + mask)                 # (N, N), zero above the diagonal
    return weights @ V, weights


class MultiHeadAttention:
    """Multi-head self-attention, SLP eqs. 8.35-8.37."""

    def __init__(self, d_model: int, n_heads: int, seed: int = 0):
        if d_model % n_heads:
            raise ValueError("d_model must be divisible by n_heads")
        rng = np.random.default_rng(seed)
        self.d_model = d_model
        self.n_heads = n_heads
        self.d_k = d_model // n_heads  # d_k = d_v = d / A
        # (d_model, d_model) each; head c uses columns c*d_k:(c+1)*d_k of W_Q, W_K, W_V
        self.W_Q = 0.02 * rng.standard_normal((d_model, d_model))
        self.W_K = 0.02 * rng.standard_normal((d_model, d_model))
        self.W_V = 0.02 * rng.standard_normal((d_model, d_model))
        self.W_O = 0.02 * rng.standard_normal((d_model, d_model))

    def forward(self, X: np.ndarray, causal: bool = False) -> np.ndarray:
        """Multi-head attention over one sequence.

        Args:
            X: input, shape (N, d_model)
            causal: if True, position i attends only to positions j <= i
        Returns:
            output, shape (N, d_model)
        """
        n = X.shape[0]

        def split_heads(M):  # (N, d_model) -> (A, N, d_k), head c = columns c*d_k:(c+1)*d_k
            return M.reshape(n, self.n_heads, self.d_k).transpose(1, 0, 2)

        Q = split_heads(X @ self.W_Q)
        K = split_heads(X @ self.W_K)
        V = split_heads(X @ self.W_V)
        scores = Q @ K.transpose(0, 2, 1) / np.sqrt(self.d_k)      # (A, N, N)
        if causal:
            scores = scores + np.triu(np.full((n, n), -np.inf), k=1)
        heads = softmax(scores) @ V                                 # (A, N, d_k)
        concat = heads.transpose(1, 0, 2).reshape(n, self.d_model)  # (N, d_model)
        return concat @ self.W_O


def positional_encoding(max_len: int, d_model: int) -> np.ndarray:
    """Sinusoidal positional encodings.

    PE[pos, 2m]   = sin(pos / 10000**(2m / d_model))
    PE[pos, 2m+1] = cos(pos / 10000**(2m / d_model))

    Args:
        max_len: number of positions, pos = 0 .. max_len-1
        d_model: encoding size (even)
    Returns:
        PE, shape (max_len, d_model)
    """
    pos = np.arange(max_len)[:, None]                       # (max_len, 1)
    two_m = np.arange(0, d_model, 2)[None, :]                # (1, d_model/2)
    angles = pos / 10000.0 ** (two_m / d_model)             # (max_len, d_model/2)
    PE = np.empty((max_len, d_model))
    PE[:, 0::2] = np.sin(angles)
    PE[:, 1::2] = np.cos(angles)
    return PE


def layer_norm(x: np.ndarray, gamma: np.ndarray = None, beta: np.ndarray = None,
               eps: float = 1e-5) -> np.ndarray:
    """Layer normalisation over the last axis, SLP eq. 8.25.

    Args:
        x: input, shape (..., d)
        gamma: scale, shape (d,), default ones
        beta: shift, shape (d,), default zeros
        eps: added to the variance, inside the square root
    Returns:
        normalised x, shape (..., d)
    """
    mu = x.mean(axis=-1, keepdims=True)                      # (..., 1)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)        # (..., 1), biased
    x_hat = (x - mu) / np.sqrt(var + eps)                     # (..., d)
    if gamma is not None:
        x_hat = gamma * x_hat
    if beta is not None:
        x_hat = x_hat + beta
    return x_hat


def feedforward(x: np.ndarray, W1: np.ndarray, b1: np.ndarray,
                W2: np.ndarray, b2: np.ndarray) -> np.ndarray:
    """Position-wise feedforward network, SLP eq. 8.21: ReLU(x W1 + b1) W2 + b2.

    Args:
        x:  input, shape (..., d_model)
        W1: shape (d_model, d_ff)
        b1: shape (d_ff,)
        W2: shape (d_ff, d_model)
        b2: shape (d_model,)
    Returns:
        output, shape (..., d_model)
    """
    hidden = np.maximum(0.0, x @ W1 + b1)  # (..., d_ff)
    return hidden @ W2 + b2                # (..., d_model)


class TransformerBlock:
    """Pre-norm transformer block, SLP eqs. 8.40-8.45."""

    def __init__(self, d_model: int, n_heads: int, d_ff: int, seed: int = 0):
        rng = np.random.default_rng([seed, 1])  # separate stream from the attention's seed
        self.attention = MultiHeadAttention(d_model, n_heads, seed=seed)
        self.ln1_gamma, self.ln1_beta = np.ones(d_model), np.zeros(d_model)
        self.ln2_gamma, self.ln2_beta = np.ones(d_model), np.zeros(d_model)
        self.W1 = 0.02 * rng.standard_normal((d_model, d_ff))
        self.b1 = np.zeros(d_ff)
        self.W2 = 0.02 * rng.standard_normal((d_ff, d_model))
        self.b2 = np.zeros(d_model)

    def forward(self, x: np.ndarray) -> np.ndarray:
        """Pre-norm block with causal self-attention and two residual connections.

        Args:
            x: residual stream, shape (N, d_model)
        Returns:
            H, shape (N, d_model)
        """
        t1 = layer_norm(x, self.ln1_gamma, self.ln1_beta)
        t3 = self.attention.forward(t1, causal=True) + x          # eqs. 8.41-8.42
        t4 = layer_norm(t3, self.ln2_gamma, self.ln2_beta)
        return feedforward(t4, self.W1, self.b1, self.W2, self.b2) + t3   # eqs. 8.44-8.45


class MiniTransformerLM:
    """Decoder-only transformer language model, SLP sections 8.4-8.5.

    token_ids -> E[token_ids] + PE[:N] -> L x TransformerBlock -> LayerNorm -> logits = H E^T
    """

    def __init__(self, vocab_size: int, d_model: int = 64, n_heads: int = 4, n_layers: int = 2,
                 max_len: int = 128, seed: int = 0):
        rng = np.random.default_rng(seed)
        self.vocab_size, self.d_model, self.max_len = vocab_size, d_model, max_len
        self.token_embeddings = 0.02 * rng.standard_normal((vocab_size, d_model))  # E, (|V|, d)
        self.pos_encodings = positional_encoding(max_len, d_model)                # (max_len, d)
        self.blocks = [TransformerBlock(d_model, n_heads, 4 * d_model, seed=seed + 1 + i)
                       for i in range(n_layers)]
        self.final_ln_gamma, self.final_ln_beta = np.ones(d_model), np.zeros(d_model)

    def forward(self, token_ids: np.ndarray) -> np.ndarray:
        """Next-token logits for every position of one sequence.

        Args:
            token_ids: integer array, shape (N,), N <= max_len
        Returns:
            logits, shape (N, vocab_size)
        """
        token_ids = np.asarray(token_ids)
        n = token_ids.shape[0]
        x = self.token_embeddings[token_ids] + self.pos_encodings[:n]   # (N, d)
        for block in self.blocks:
            x = block.forward(x)
        h = layer_norm(x, self.final_ln_gamma, self.final_ln_beta)      # (N, d)
        return h @ self.token_embeddings.T                              # (N, |V|), eq. 8.46
