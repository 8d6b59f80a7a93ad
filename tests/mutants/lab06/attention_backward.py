"""attention_backward: wrong and correct answers."""
from . import correct, wrong

PART = "attention_backward"


def variant(**edits) -> str:
    """A student's attention_backward, written out in full, with lines of it replaced."""
    code = BASE
    for old, new in edits.items():
        assert code.count(LINES[old]) == 1, old
        code = code.replace(LINES[old], new)
    return code


BASE = '''
def attention_backward(dout, x, W_Q, W_K, W_V, W_O, n_heads):
    B, T, C = x.shape
    d_k = C // n_heads
    q = split_heads(x @ W_Q, n_heads)
    k = split_heads(x @ W_K, n_heads)
    v = split_heads(x @ W_V, n_heads)
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d_k)
    scores = scores + causal_mask(T)
    att = softmax(scores)
    concat = merge_heads(att @ v)
    dW_O = concat.reshape(-1, C).T @ dout.reshape(-1, C)
    dheads = split_heads(dout @ W_O.T, n_heads)
    datt = dheads @ v.transpose(0, 1, 3, 2)
    dv = att.transpose(0, 1, 3, 2) @ dheads
    dscores = att * (datt - np.sum(att * datt, axis=-1, keepdims=True))
    dscores = dscores / np.sqrt(d_k)
    dq = dscores @ k
    dk = dscores.transpose(0, 1, 3, 2) @ q
    dq, dk, dv = merge_heads(dq), merge_heads(dk), merge_heads(dv)
    x2 = x.reshape(-1, C)
    dW_Q = x2.T @ dq.reshape(-1, C)
    dW_K = x2.T @ dk.reshape(-1, C)
    dW_V = x2.T @ dv.reshape(-1, C)
    dx = dq @ W_Q.T + dk @ W_K.T + dv @ W_V.T
    return dx, dW_Q, dW_K, dW_V, dW_O
'''
LINES = {name: line for name, line in (
    ("scale", "    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d_k)\n"),
    ("mask", "    scores = scores + causal_mask(T)\n"),
    ("dW_O", "    dW_O = concat.reshape(-1, C).T @ dout.reshape(-1, C)\n"),
    ("dheads", "    dheads = split_heads(dout @ W_O.T, n_heads)\n"),
    ("dv", "    dv = att.transpose(0, 1, 3, 2) @ dheads\n"),
    ("dscores", "    dscores = att * (datt - np.sum(att * datt, axis=-1, keepdims=True))\n"),
    ("dscale", "    dscores = dscores / np.sqrt(d_k)\n"),
    ("dq", "    dq = dscores @ k\n"),
    ("dk", "    dk = dscores.transpose(0, 1, 3, 2) @ q\n"),
    ("merge", "    dq, dk, dv = merge_heads(dq), merge_heads(dk), merge_heads(dv)\n"),
    ("dW_Q", "    dW_Q = x2.T @ dq.reshape(-1, C)\n"),
    ("dW_K", "    dW_K = x2.T @ dk.reshape(-1, C)\n"),
    ("dW_V", "    dW_V = x2.T @ dv.reshape(-1, C)\n"),
    ("dx", "    dx = dq @ W_Q.T + dk @ W_K.T + dv @ W_V.T\n"),
)}

WRONG = [
    wrong(PART, "softmax_derivative_elementwise", "softmax_elementwise", variant(
        dscores="    dscores = att * (1 - att) * datt\n")),
    wrong(PART, "mask_only_in_the_forward", "no_mask", variant(mask="")),
    wrong(PART, "scaled_by_the_model_width", "scale_by_d_model", variant(
        scale="    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(C)\n",
        dscale="    dscores = dscores / np.sqrt(C)\n")),
    wrong(PART, "scale_forgotten_in_backward", "no_backward_scale", variant(dscale="")),
    wrong(PART, "scale_applied_twice", "scale_twice", variant(
        dq="    dq = dscores @ k / np.sqrt(d_k)\n",
        dk="    dk = dscores.transpose(0, 1, 3, 2) @ q / np.sqrt(d_k)\n")),
    wrong(PART, "softmax_jacobian_diagonal", "softmax_diagonal", variant(
        dscores="    dscores = att * datt\n")),
    wrong(PART, "softmax_rowsum_over_queries", "softmax_sum_over_queries", variant(
        dscores="    dscores = att * (datt - np.sum(att * datt, axis=-2, keepdims=True))\n")),
    wrong(PART, "dk_untransposed", "dk_without_transpose", variant(
        dk="    dk = dscores @ q\n")),
    wrong(PART, "dv_untransposed", "dv_without_transpose", variant(
        dv="    dv = att @ dheads\n")),
    wrong(PART, "W_O_untransposed", "through_W_O_untransposed", variant(
        dheads="    dheads = split_heads(dout @ W_O, n_heads)\n")),
    wrong(PART, "dW_O_dout_first", "dW_O_transposed", variant(
        dW_O="    dW_O = dout.reshape(-1, C).T @ concat.reshape(-1, C)\n")),
    wrong(PART, "weight_gradients_transposed", "dW_transposed", variant(
        dW_Q="    dW_Q = dq.reshape(-1, C).T @ x2\n",
        dW_K="    dW_K = dk.reshape(-1, C).T @ x2\n",
        dW_V="    dW_V = dv.reshape(-1, C).T @ x2\n")),
    wrong(PART, "dx_forgets_the_keys", "dx_without_k", variant(
        dx="    dx = dq @ W_Q.T + dv @ W_V.T\n")),
    wrong(PART, "dx_only_through_values", "dx_through_v_only", variant(
        dx="    dx = dv @ W_V.T\n")),
    wrong(PART, "dx_forgets_the_values", "dx_without_v", variant(
        dx="    dx = dq @ W_Q.T + dk @ W_K.T\n")),
    wrong(PART, "dx_weights_untransposed", "dx_weights_untransposed", variant(
        dx="    dx = dq @ W_Q + dk @ W_K + dv @ W_V\n")),
    wrong(PART, "merged_by_reshape", "merge_without_transpose", variant(
        merge="    dq, dk, dv = (d.reshape(B, T, C) for d in (dq, dk, dv))\n")),
    wrong(PART, "dout_modified", "in_place", '''
        def attention_backward(dout, x, W_Q, W_K, W_V, W_O, n_heads):
            B, T, C = x.shape
            q, k, v = (split_heads(x @ W, n_heads) for W in (W_Q, W_K, W_V))
            att = softmax(q @ k.transpose(0, 1, 3, 2) / np.sqrt(C // n_heads) + causal_mask(T))
            dW_O = merge_heads(att @ v).reshape(-1, C).T @ dout.reshape(-1, C)
            dout @= W_O.T                                  # reuse the buffer
            dheads = split_heads(dout, n_heads)
            datt = dheads @ v.transpose(0, 1, 3, 2)
            ds = att * (datt - (att * datt).sum(-1, keepdims=True)) / np.sqrt(C // n_heads)
            grads = [merge_heads(d) for d in (ds @ k, ds.transpose(0, 1, 3, 2) @ q,
                                               att.transpose(0, 1, 3, 2) @ dheads)]
            dx = sum(g @ W.T for g, W in zip(grads, (W_Q, W_K, W_V)))
            x2 = x.reshape(-1, C)
            return (dx, *(x2.T @ g.reshape(-1, C) for g in grads), dW_O)
    '''),
]

CORRECT = [
    correct(PART, "reference_shaped", BASE),
    correct(PART, "loop_over_heads_and_sequences", '''
        def attention_backward(dout, x, W_Q, W_K, W_V, W_O, n_heads):
            B, T, C = x.shape
            d_k = C // n_heads
            dx = np.zeros_like(x)
            dW_Q, dW_K, dW_V, dW_O = (np.zeros_like(W) for W in (W_Q, W_K, W_V, W_O))
            future = np.triu(np.ones((T, T), dtype=bool), k=1)
            for b in range(B):
                X, dO = x[b], dout[b]
                Q, K, V = X @ W_Q, X @ W_K, X @ W_V
                concat = np.zeros((T, C))
                dQ, dK, dV = np.zeros((T, C)), np.zeros((T, C)), np.zeros((T, C))
                d_concat = dO @ W_O.T
                for h in range(n_heads):
                    cols = slice(h * d_k, (h + 1) * d_k)
                    S = Q[:, cols] @ K[:, cols].T / math.sqrt(d_k)
                    S[future] = -np.inf
                    A = np.exp(S - S.max(axis=1, keepdims=True))
                    A /= A.sum(axis=1, keepdims=True)
                    concat[:, cols] = A @ V[:, cols]
                    dA = d_concat[:, cols] @ V[:, cols].T
                    dV[:, cols] = A.T @ d_concat[:, cols]
                    dS = A * (dA - (A * dA).sum(axis=1, keepdims=True)) / math.sqrt(d_k)
                    dQ[:, cols] = dS @ K[:, cols]
                    dK[:, cols] = dS.T @ Q[:, cols]
                dW_O += concat.T @ dO
                dW_Q += X.T @ dQ
                dW_K += X.T @ dK
                dW_V += X.T @ dV
                dx[b] = dQ @ W_Q.T + dK @ W_K.T + dV @ W_V.T
            return dx, dW_Q, dW_K, dW_V, dW_O
    '''),
    correct(PART, "einsum", '''
        def attention_backward(dout, x, W_Q, W_K, W_V, W_O, n_heads):
            B, T, C = x.shape
            d_k = C // n_heads
            split = lambda M: M.reshape(B, T, n_heads, d_k)             # (B, T, H, d_k)
            q, k, v = (split(np.einsum("btc,cd->btd", x, W)) for W in (W_Q, W_K, W_V))
            s = np.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(d_k)
            s = np.where(np.tril(np.ones((T, T), dtype=bool)), s, -np.inf)
            a = np.exp(s - s.max(-1, keepdims=True))
            a = a / a.sum(-1, keepdims=True)
            heads = np.einsum("bhqk,bkhd->bqhd", a, v).reshape(B, T, C)
            dheads = split(np.einsum("bto,co->btc", dout, W_O))
            da = np.einsum("bqhd,bkhd->bhqk", dheads, v)
            dv = np.einsum("bhqk,bqhd->bkhd", a, dheads)
            ds = a * (da - np.einsum("bhqk,bhqk->bhq", a, da)[..., None]) / np.sqrt(d_k)
            dq = np.einsum("bhqk,bkhd->bqhd", ds, k)
            dk = np.einsum("bhqk,bqhd->bkhd", ds, q)
            dq, dk, dv = (d.reshape(B, T, C) for d in (dq, dk, dv))
            dW = [np.einsum("btc,btd->cd", x, d) for d in (dq, dk, dv)]
            dx = dq @ W_Q.T + dk @ W_K.T + dv @ W_V.T
            return (dx, *dW, np.einsum("btc,btd->cd", heads, dout))
    '''),
]
