"""Reference solutions, generated from source/lab06_training/lab06_training.ipynb.

Do not edit: run `attnlab sync`. CI fails when this file differs from what the
source notebook generates.
"""
import math

import numpy as np


def build_vocab(names):
    """Character vocabulary with the boundary token '.' first.

    Args:
        names: list of strings
    Returns:
        stoi: dict, character -> id; stoi['.'] == 0, the other characters 1, 2, ... in sorted order
        itos: list, itos[i] is the character with id i
    """
    itos = ["."] + sorted(set("".join(names)) - {"."})
    return {ch: i for i, ch in enumerate(itos)}, itos


def encode(text, stoi):
    """A string -> the list of its token ids."""
    return [stoi[ch] for ch in text]


def decode(ids, itos):
    """A sequence of token ids (a list or an int array) -> the string."""
    return "".join(itos[int(i)] for i in ids)


def get_batch(stream, starts, batch_size, block_size, rng):
    """A batch of training windows, each beginning at one of `starts`.

    Args:
        stream: int array (n_tokens,), the token stream
        starts: int array, the positions where a window may begin
        batch_size, block_size: B and N
        rng: np.random.Generator, the only source of randomness
    Returns:
        x: int array (B, N), x[b] = stream[s_b : s_b + N] for a start s_b drawn from `starts`,
           independently for each row (a start may come up twice; B may exceed len(starts))
        y: int array (B, N), y[b] = stream[s_b + 1 : s_b + N + 1], the next token everywhere
    """
    s = rng.choice(starts, size=batch_size)                      # (B,)
    window = stream[s[:, None] + np.arange(block_size + 1)]     # (B, N+1)
    return window[:, :-1], window[:, 1:]


def cross_entropy(logits, targets):
    """Mean next-token cross-entropy, computed stably.

    Args:
        logits: float array (..., V)
        targets: int array (...), entries in [0, V)
    Returns:
        float: mean over all positions of -log softmax(logits)[target]
    """
    z = logits - logits.max(axis=-1, keepdims=True)                 # largest logit is 0
    log_probs = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))   # (..., V)
    return float(-np.take_along_axis(log_probs, targets[..., None], axis=-1).mean())


def cross_entropy_backward(logits, targets):
    """Gradient of the mean cross-entropy with respect to the logits.

    Args:
        logits: float array (..., V)
        targets: int array (...)
    Returns:
        dlogits: array (..., V), (softmax(logits) - onehot(targets)) / number of positions
    """
    z = logits - logits.max(axis=-1, keepdims=True)
    grad = np.exp(z)
    grad /= grad.sum(axis=-1, keepdims=True)                         # softmax
    rows = np.take_along_axis(grad, targets[..., None], axis=-1)
    np.put_along_axis(grad, targets[..., None], rows - 1.0, axis=-1)
    return grad / targets.size


def linear_backward(dy, x, W):
    """Backward of y = x @ W + b.

    Args:
        dy: (..., d_out), gradient of the loss with respect to y
        x:  (..., d_in), the input
        W:  (d_in, d_out)
    Returns:
        dx (..., d_in), dW (d_in, d_out), db (d_out,)
    """
    x2 = x.reshape(-1, x.shape[-1])                 # (n, d_in), n = all leading positions
    dy2 = dy.reshape(-1, dy.shape[-1])              # (n, d_out)
    return (dy2 @ W.T).reshape(x.shape), x2.T @ dy2, dy2.sum(axis=0)


def relu_backward(dy, x):
    """Backward of ReLU(x) = max(0, x): the gradient passes where x > 0. Shapes of x."""
    return dy * (x > 0)


GELU_C = math.sqrt(2 / math.pi)


def gelu_backward(dy, x):
    """Backward of the tanh approximation of GELU. Shapes of x."""
    u = GELU_C * (x + 0.044715 * x * x * x)
    th = np.tanh(u)
    du = GELU_C * (1 + 3 * 0.044715 * x * x)
    return dy * 0.5 * (1 + th + x * (1 - th * th) * du)


def layer_norm_backward(dy, x, gamma, eps=1e-5):
    """Backward of y = gamma * (x - mean) / sqrt(var + eps) + beta over the last axis.

    Args:
        dy: (..., d); x: (..., d); gamma: (d,)
    Returns:
        dx (..., d), dgamma (d,), dbeta (d,)
    """
    mu = x.mean(axis=-1, keepdims=True)
    xc = x - mu
    rstd = 1.0 / np.sqrt((xc * xc).mean(axis=-1, keepdims=True) + eps)   # 1 / sigma
    xhat = xc * rstd
    g = dy * gamma
    dx = rstd * (g - g.mean(axis=-1, keepdims=True) - xhat * (g * xhat).mean(axis=-1, keepdims=True))
    d = x.shape[-1]
    return dx, (dy * xhat).reshape(-1, d).sum(axis=0), dy.reshape(-1, d).sum(axis=0)


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
    '''x @ W as one matrix product over all leading positions: (..., d_in) -> (..., d_out).'''
    return (x.reshape(-1, x.shape[-1]) @ W).reshape(*x.shape[:-1], W.shape[1])


def attention_forward(x, W_Q, W_K, W_V, W_O, n_heads):
    '''Causal multi-head self-attention. x (B, N, d) -> (output (B, N, d), weights (B, A, N, N)).'''
    B, N, d = x.shape
    q, k, v = (split_heads(matmul(x, W), n_heads) for W in (W_Q, W_K, W_V))   # (B, A, N, d_k)
    scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d // n_heads) + causal_mask(N, x.dtype)
    att = softmax(scores)                                                     # (B, A, N, N)
    return matmul(merge_heads(att @ v), W_O), att


def attention_backward(dout, x, W_Q, W_K, W_V, W_O, n_heads):
    """Backward of attention_forward(x, W_Q, W_K, W_V, W_O, n_heads)[0].

    Args:
        dout: (B, N, d), gradient of the loss with respect to the attention output
        x: (B, N, d); W_Q, W_K, W_V, W_O: (d, d); n_heads: A
    Returns:
        dx (B, N, d), dW_Q, dW_K, dW_V, dW_O (d, d) each
    """
    B, N, d = x.shape
    scale = 1 / math.sqrt(d // n_heads)
    q, k, v = (split_heads(matmul(x, W), n_heads) for W in (W_Q, W_K, W_V))
    att = softmax(q @ k.transpose(0, 1, 3, 2) * scale + causal_mask(N, x.dtype))
    concat = merge_heads(att @ v)                                   # (B, N, d)
    x2, dout2 = x.reshape(-1, d), dout.reshape(-1, d)
    dW_O = concat.reshape(-1, d).T @ dout2
    dheads = split_heads(matmul(dout, W_O.T), n_heads)              # (B, A, N, d_k)
    datt = dheads @ v.transpose(0, 1, 3, 2)                         # (B, A, N, N)
    dv = att.transpose(0, 1, 3, 2) @ dheads
    dscores = att * (datt - (att * datt).sum(axis=-1, keepdims=True)) * scale
    dq, dk = dscores @ k, dscores.transpose(0, 1, 3, 2) @ q
    grads = [merge_heads(g).reshape(-1, d) for g in (dq, dk, dv)]   # (B*N, d) each
    dx = sum(g @ W.T for g, W in zip(grads, (W_Q, W_K, W_V))).reshape(x.shape)
    return (dx, x2.T @ grads[0], x2.T @ grads[1], x2.T @ grads[2], dW_O)


def embedding_backward(d_x, d_logits, token_ids, h):
    """Gradient of the tied embedding E, used by x = E[token_ids] (+ positions) and u = h @ E.T.

    Args:
        d_x: (B, N, d), gradient with respect to the embedded input x
        d_logits: (B, N, V), gradient with respect to the logits u
        token_ids: int (B, N)
        h: (B, N, d), the final hidden states that the head multiplied by E.T
    Returns:
        dE: (V, d)
    """
    V, d = d_logits.shape[-1], d_x.shape[-1]
    dE = d_logits.reshape(-1, V).T @ h.reshape(-1, d)               # from the head
    np.add.at(dE, token_ids.reshape(-1), d_x.reshape(-1, d))        # from the lookup
    return dE


def init_params(rng, vocab_size=27, block_size=16, d_model=64, n_heads=4, n_layers=2, d_ff=256,
                dtype=np.float32):
    '''GPT-2 style initialisation: N(0, 0.02), output projections scaled by 1/sqrt(2 L).'''
    def normal(*shape, std=0.02):
        return (std * rng.standard_normal(shape)).astype(dtype)
    out_std = 0.02 / math.sqrt(2 * n_layers)
    params = {"E": normal(vocab_size, d_model), "P": normal(block_size, d_model)}
    for l in range(n_layers):
        params.update({
            f"{l}.ln1_gamma": np.ones(d_model, dtype), f"{l}.ln1_beta": np.zeros(d_model, dtype),
            f"{l}.W_Q": normal(d_model, d_model), f"{l}.W_K": normal(d_model, d_model),
            f"{l}.W_V": normal(d_model, d_model), f"{l}.W_O": normal(d_model, d_model, std=out_std),
            f"{l}.ln2_gamma": np.ones(d_model, dtype), f"{l}.ln2_beta": np.zeros(d_model, dtype),
            f"{l}.W1": normal(d_model, d_ff), f"{l}.b1": np.zeros(d_ff, dtype),
            f"{l}.W2": normal(d_ff, d_model, std=out_std), f"{l}.b2": np.zeros(d_model, dtype)})
    params.update(lnf_gamma=np.ones(d_model, dtype), lnf_beta=np.zeros(d_model, dtype))
    return params


def layer_norm(x, gamma, beta, eps=1e-5):
    '''Lab 05, eq. 8.25.'''
    mu = x.mean(axis=-1, keepdims=True)
    xc = x - mu
    return xc / np.sqrt((xc * xc).mean(axis=-1, keepdims=True) + eps) * gamma + beta


def forward(params, ids, n_heads=4, act="relu"):
    '''ids (B, N) -> logits (B, N, V), and what backward needs.'''
    n_layers = sum(k.endswith(".W_Q") for k in params)
    x = params["E"][ids] + params["P"][:ids.shape[1]]               # (B, N, d)
    saved = []
    for l in range(n_layers):
        p = lambda name: params[f"{l}.{name}"]                      # noqa: E731
        t1 = layer_norm(x, p("ln1_gamma"), p("ln1_beta"))
        t2, att = attention_forward(t1, p("W_Q"), p("W_K"), p("W_V"), p("W_O"), n_heads)
        t3 = t2 + x                                                 # residual
        t4 = layer_norm(t3, p("ln2_gamma"), p("ln2_beta"))
        a = matmul(t4, p("W1")) + p("b1")
        r = np.maximum(a, 0) if act == "relu" else 0.5 * a * (1 + np.tanh(GELU_C * (a + 0.044715 * a * a * a)))
        saved.append((x, t1, t3, t4, a, r, att))
        x = matmul(r, p("W2")) + p("b2") + t3                       # residual
    h = layer_norm(x, params["lnf_gamma"], params["lnf_beta"])
    return matmul(h, params["E"].T), (ids, saved, x, h, n_heads, act)


def backward(params, d_logits, cache):
    '''Gradients of every parameter, from d loss / d logits, with your backward functions.'''
    ids, saved, x_top, h, n_heads, act = cache
    grads = {}
    dh = matmul(d_logits, params["E"])                              # head: u = h E^T
    d, grads["lnf_gamma"], grads["lnf_beta"] = layer_norm_backward(dh, x_top, params["lnf_gamma"])
    for l in reversed(range(len(saved))):
        x, t1, t3, t4, a, r, att = saved[l]
        p = lambda name: params[f"{l}.{name}"]                      # noqa: E731
        dr, grads[f"{l}.W2"], grads[f"{l}.b2"] = linear_backward(d, r, p("W2"))
        da = relu_backward(dr, a) if act == "relu" else gelu_backward(dr, a)
        dt4, grads[f"{l}.W1"], grads[f"{l}.b1"] = linear_backward(da, t4, p("W1"))
        dt3, grads[f"{l}.ln2_gamma"], grads[f"{l}.ln2_beta"] = layer_norm_backward(dt4, t3, p("ln2_gamma"))
        dt3 = dt3 + d                                               # H = T5 + T3
        dt1, *dW = attention_backward(dt3, t1, p("W_Q"), p("W_K"), p("W_V"), p("W_O"), n_heads)
        grads.update(zip((f"{l}.W_Q", f"{l}.W_K", f"{l}.W_V", f"{l}.W_O"), dW))
        dx, grads[f"{l}.ln1_gamma"], grads[f"{l}.ln1_beta"] = layer_norm_backward(dt1, x, p("ln1_gamma"))
        d = dx + dt3                                                # T3 = T2 + X
    grads["E"] = embedding_backward(d, d_logits, ids, h)
    grads["P"] = np.zeros_like(params["P"])
    grads["P"][:ids.shape[1]] = d.sum(axis=0)
    return grads


def adamw_update(p, g, m, v, t, lr, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.0):
    """One AdamW step for one parameter array.

    Args:
        p, g, m, v: the parameter, its gradient and the two moment estimates (same shape)
        t: the step number, starting at 1
        lr: learning rate; betas: (beta1, beta2); eps: added to sqrt(v_hat)
        weight_decay: the decoupled decay lambda
    Returns:
        (new p, new m, new v)
    """
    b1, b2 = betas
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * (g * g)
    m_hat, v_hat = m / (1 - b1 ** t), v / (1 - b2 ** t)
    return p - lr * weight_decay * p - lr * m_hat / (np.sqrt(v_hat) + eps), m, v


def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
    """The distribution to sample the next token from: temperature, then top-k, then top-p.

    Args:
        logits: (V,) float
        temperature: > 0, divides the logits before the softmax
        top_k: keep only the k most likely tokens and renormalise them (None: all);
               where tokens tie at the k-th place, keeping any k of them or all the tied
               ones is accepted
        top_p: then keep the smallest set of the most likely remaining tokens whose total
               probability is >= top_p, measured on the renormalised top-k distribution, and
               renormalise again (None: all). If the running total reaches exactly top_p at a
               token, that token is kept and the later ones are dropped (a softmax rounded
               another way can leave that total a hair below top_p and keep one token more:
               the tests accept both). At least one token is always kept.
    Returns:
        probs: (V,), non-negative, sums to 1, zero outside the kept tokens
    """
    probs = softmax(np.asarray(logits, dtype=np.float64) / temperature)
    order = np.argsort(-probs, kind="stable")                   # most likely first
    if top_k is not None:
        order = order[:max(int(top_k), 1)]
    kept = probs[order] / probs[order].sum()                    # the renormalised top-k
    if top_p is not None:
        reached = np.cumsum(kept) >= top_p                      # equality counts
        n = int(np.argmax(reached)) + 1 if reached.any() else len(kept)
        order, kept = order[:n], kept[:n] / kept[:n].sum()
    out = np.zeros_like(probs)
    out[order] = kept
    return out


def sample_token(logits, rng, temperature=1.0, top_k=None, top_p=None, greedy=False):
    """One token id (an int in [0, V)): the argmax of the logits when greedy, else a draw
    from next_token_probs(logits, temperature, top_k, top_p) with rng."""
    if greedy:
        return int(np.argmax(logits))
    probs = next_token_probs(logits, temperature, top_k, top_p)
    return int(rng.choice(len(probs), p=probs))


def attention_entropy(weights):
    """Mean attention entropy in bits, per head.

    Args:
        weights: (B, A, N, N) attention weights of one layer; each row sums to 1
    Returns:
        (A,) the entropy -sum_j alpha_ij log2 alpha_ij of every row, averaged over B and the N query positions
    """
    safe = np.where(weights > 0, weights, 1.0)                  # log2(1) = 0 stands for 0 log 0
    return -(weights * np.log2(safe)).sum(axis=-1).mean(axis=(0, 2))
