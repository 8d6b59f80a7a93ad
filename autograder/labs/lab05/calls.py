"""How the Lab 05 checks call the graded API (the CS336-style adapter layer).

Every check goes through these builders, so the contract with the notebook (names, argument
order, attribute names) is written down once.
"""
import numpy as np

from ...worker.invoke import Call, New


def softmax(z):
    return Call("softmax", (z,))


def attention(Q, K, V, causal=False):
    return Call("causal_attention" if causal else "scaled_dot_product_attention", (Q, K, V))


def mha_object(W_Q, W_K, W_V, W_O, n_heads):
    d_model = W_Q.shape[0]
    return New("MultiHeadAttention", (d_model, n_heads),
               (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V), ("W_O", W_O)))


def mha(X, weights, n_heads, causal=None):
    kwargs = {} if causal is None else {"causal": causal}
    return Call("forward", (X,), kwargs, obj=mha_object(*weights, n_heads))


def positional_encoding(max_len, d_model):
    return Call("positional_encoding", (max_len, d_model))


def layer_norm(x, gamma=None, beta=None, eps=None):
    """Parameters left at None are not passed, so that the student's defaults apply; beta
    without gamma is passed by name."""
    args = (x,) if gamma is None else (x, gamma) if beta is None else (x, gamma, beta)
    kwargs = {"beta": beta} if gamma is None and beta is not None else {}
    return Call("layer_norm", args, kwargs | ({} if eps is None else {"eps": eps}))


def feedforward(x, W1, b1, W2, b2):
    return Call("feedforward", (x, W1, b1, W2, b2))


def block_object(p: dict, n_heads: int):
    d_model, d_ff = p["W1"].shape
    attrs = (("attention", mha_object(*p["attn"], n_heads)),) + tuple(
        (name, p[name]) for name in ("ln1_gamma", "ln1_beta", "ln2_gamma", "ln2_beta",
                                     "W1", "b1", "W2", "b2"))
    return New("TransformerBlock", (d_model, n_heads, d_ff), attrs)


def block(x, p: dict, n_heads: int):
    return Call("forward", (x,), obj=block_object(p, n_heads))


def lm(token_ids, p: dict):
    vocab_size, d_model = p["E"].shape
    n_heads, n_layers, max_len = p["n_heads"], len(p["blocks"]), p["PE"].shape[0]
    obj = New("MiniTransformerLM", (vocab_size, d_model, n_heads, n_layers, max_len),
              (("token_embeddings", p["E"]), ("pos_encodings", p["PE"]),
               ("blocks", [block_object(b, n_heads) for b in p["blocks"]]),
               ("final_ln_gamma", p["final_gamma"]), ("final_ln_beta", p["final_beta"])))
    return Call("forward", (np.asarray(token_ids),), obj=obj)


# -- random parameters ---------------------------------------------------------------------

def mha_weights(rng, d_model):
    """(W_Q, W_K, W_V, W_O), scaled so that scores and outputs are of order one."""
    return tuple(rng.standard_normal((d_model, d_model)) / np.sqrt(d_model)
                 for _ in range(4))


def block_params(rng, d_model, d_ff, ln_default=False):
    def ln(shift):
        if ln_default:
            return np.ones(d_model) if shift else np.zeros(d_model)
        return (1.0 + 0.5 * rng.standard_normal(d_model)) if shift else 0.5 * rng.standard_normal(d_model)
    return {
        "attn": mha_weights(rng, d_model),
        "ln1_gamma": ln(True), "ln1_beta": ln(False),
        "ln2_gamma": ln(True), "ln2_beta": ln(False),
        "W1": rng.standard_normal((d_model, d_ff)) / np.sqrt(d_model),
        "b1": 0.5 * rng.standard_normal(d_ff),
        "W2": rng.standard_normal((d_ff, d_model)) / np.sqrt(d_ff),
        "b2": 0.5 * rng.standard_normal(d_model),
    }


def lm_params(rng, reference_pe, vocab_size, d_model, n_heads, n_layers, max_len, final_default=True):
    return {
        "E": rng.standard_normal((vocab_size, d_model)),
        "PE": reference_pe(max_len, d_model),
        "n_heads": n_heads,
        "blocks": [block_params(rng, d_model, 4 * d_model) for _ in range(n_layers)],
        "final_gamma": np.ones(d_model) if final_default else 1.0 + 0.5 * rng.standard_normal(d_model),
        "final_beta": np.zeros(d_model) if final_default else 0.5 * rng.standard_normal(d_model),
    }
