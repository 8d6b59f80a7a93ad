"""How the Lab 06 checks call the graded API, and the inputs they share.

Every check goes through these builders, so the contract with the notebook (names, argument
order, keyword names) is written down once. Keywords left at None are not passed, so that the
student's defaults apply.
"""
import math

import numpy as np

from ...worker.invoke import Call, Rng


def _given(**kwargs) -> dict:
    return {name: value for name, value in kwargs.items() if value is not None}


def build_vocab(names):
    return Call("build_vocab", (list(names),))


def encode(text, stoi):
    return Call("encode", (text, dict(stoi)))


def decode(ids, itos):
    return Call("decode", (ids, list(itos)))


def get_batch(stream, starts, batch_size, block_size, seed):
    return Call("get_batch", (stream, starts, batch_size, block_size, Rng(seed)))


def cross_entropy(logits, targets):
    return Call("cross_entropy", (logits, targets))


def cross_entropy_backward(logits, targets):
    return Call("cross_entropy_backward", (logits, targets))


def linear_backward(dy, x, W):
    return Call("linear_backward", (dy, x, W))


def relu_backward(dy, x):
    return Call("relu_backward", (dy, x))


def gelu_backward(dy, x):
    return Call("gelu_backward", (dy, x))


def layer_norm_backward(dy, x, gamma, eps=None):
    return Call("layer_norm_backward", (dy, x, gamma), _given(eps=eps))


def attention_backward(dout, x, weights, n_heads):
    """`weights` is (W_Q, W_K, W_V, W_O)."""
    return Call("attention_backward", (dout, x, *weights, n_heads))


def embedding_backward(d_x, d_logits, token_ids, h):
    return Call("embedding_backward", (d_x, d_logits, token_ids, h))


def adamw_update(p, g, m, v, t, lr, betas=None, eps=None, weight_decay=None):
    return Call("adamw_update", (p, g, m, v, t, lr), _given(betas=betas, eps=eps, weight_decay=weight_decay))


def next_token_probs(logits, temperature=None, top_k=None, top_p=None):
    return Call("next_token_probs", (logits,), _given(temperature=temperature, top_k=top_k, top_p=top_p))


def sample_token(logits, seed, temperature=None, top_k=None, top_p=None, greedy=None):
    return Call("sample_token", (logits, Rng(seed)),
                _given(temperature=temperature, top_k=top_k, top_p=top_p, greedy=greedy))


def attention_entropy(weights):
    return Call("attention_entropy", (weights,))


# -- inputs ------------------------------------------------------------------------------------

def name_stream(rng, n_names, longest=8):
    """('.ab.cde.' as ids 1-26 between 0s, the position of the '.' before each name), as in the
    notebook's make_stream."""
    lengths = rng.integers(2, longest + 1, size=n_names)
    pieces = [np.concatenate([[0], rng.integers(1, 27, size=n)]) for n in lengths]
    stream = np.concatenate(pieces + [[0]])
    return stream, np.concatenate([[0], np.cumsum(lengths + 1)[:-1]])


def window_starts(stream, starts, block_size):
    """The starts whose window of T + 1 tokens fits in the stream."""
    return starts[starts + block_size + 1 <= len(stream)]


def attention_weights(rng, d_model, scale=1.0):
    """(W_Q, W_K, W_V, W_O), scaled so that scores and outputs are of order `scale`."""
    return tuple(scale * rng.standard_normal((d_model, d_model)) / math.sqrt(d_model) for _ in range(4))


def causal_softmax(scores):
    """Row softmax of (..., T, T) scores under the causal mask: exact zeros above the diagonal."""
    T = scores.shape[-1]
    masked = np.where(np.tril(np.ones((T, T), dtype=bool)), scores, -np.inf)
    e = np.exp(masked - masked.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def adam_trajectory(reference, p, grads, steps, **settings):
    """The reference's (p, m, v) before each step t of `steps`, following the gradients `grads`
    (one per step from t = 1): what a correct optimiser holds when it reaches step t."""
    m, v = np.zeros_like(p), np.zeros_like(p)
    states = {}
    for t, g in enumerate(grads, start=1):
        if t in steps:
            states[t] = (p, g, m, v)
        p, m, v = reference(p, g, m, v, t, **settings)
    return states
