"""rope_attention: wrong and correct answers."""
from . import correct, wrong

PART = "rope_attention"


def variant(**edits) -> str:
    """A student's rope_attention, written out in full, with lines of it replaced."""
    code = BASE
    for old, new in edits.items():
        assert code.count(LINES[old]) == 1, old
        code = code.replace(LINES[old], new)
    return code


BASE = '''
def rope_attention(X, W_Q, W_K, W_V, W_O, n_heads):
    B, N, d = X.shape
    d_k = d // n_heads
    Q = split_heads(X @ W_Q, n_heads)
    K = split_heads(X @ W_K, n_heads)
    V = split_heads(X @ W_V, n_heads)
    pos = np.arange(N)
    Q = apply_rope(Q, pos)
    K = apply_rope(K, pos)
    scores = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(d_k)
    scores = scores + causal_mask(N)
    weights = softmax(scores)
    heads = weights @ V
    return merge_heads(heads) @ W_O, weights
'''
LINES = {name: line for name, line in (
    ("Q", "    Q = split_heads(X @ W_Q, n_heads)\n"),
    ("K", "    K = split_heads(X @ W_K, n_heads)\n"),
    ("V", "    V = split_heads(X @ W_V, n_heads)\n"),
    ("rope_q", "    Q = apply_rope(Q, pos)\n"),
    ("rope_k", "    K = apply_rope(K, pos)\n"),
    ("scores", "    scores = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(d_k)\n"),
    ("mask", "    scores = scores + causal_mask(N)\n"),
)}

TABLE = '''
def rope_attention(X, W_Q, W_K, W_V, W_O, n_heads):
    B, N, d = X.shape
    d_k = d // n_heads
    Q, K, V = (split_heads(X @ W, n_heads) for W in (W_Q, W_K, W_V))
    angles = np.arange(N)[:, None] * {table}

    def turn(M):
        out = np.empty_like(M)
        out[..., 0::2] = M[..., 0::2] * np.cos(angles) - M[..., 1::2] * np.sin(angles)
        out[..., 1::2] = M[..., 0::2] * np.sin(angles) + M[..., 1::2] * np.cos(angles)
        return out
    weights = softmax(turn(Q) @ turn(K).transpose(0, 1, 3, 2) / np.sqrt(d_k) + causal_mask(N))
    return merge_heads(weights @ V) @ W_O, weights
'''

WRONG = [
    wrong(PART, "rope_before_split", "rotated_before_split", variant(
        Q="    Q = split_heads(apply_rope(X @ W_Q, np.arange(N)), n_heads)\n",
        K="    K = split_heads(apply_rope(X @ W_K, np.arange(N)), n_heads)\n",
        rope_q="", rope_k="")),
    wrong(PART, "values_rotated", "values_rotated", variant(
        rope_k="    K = apply_rope(K, pos)\n    V = apply_rope(V, pos)\n")),
    wrong(PART, "keys_forgotten", "keys_not_rotated", variant(rope_k="")),
    wrong(PART, "queries_forgotten", "queries_not_rotated", variant(rope_q="")),
    wrong(PART, "lab06_attention", "not_rotated", variant(rope_q="", rope_k="")),
    wrong(PART, "no_mask", "no_mask", variant(mask="")),
    wrong(PART, "mask_after_softmax", "masked_after_softmax", variant(
        mask="", **{"scores": "    scores = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(d_k)\n"}).replace(
        "    weights = softmax(scores)\n", "    weights = softmax(scores) * np.tril(np.ones((N, N)))\n")),
    wrong(PART, "diagonal_masked", "diagonal_masked", variant(
        mask="    scores = scores + np.triu(np.full((N, N), -np.inf), k=0)\n")),
    wrong(PART, "sqrt_d", "scaled_by_model_width", variant(
        scores="    scores = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(d)\n")),
    wrong(PART, "heads_by_reshape", "heads_by_reshape", '''
        def rope_attention(X, W_Q, W_K, W_V, W_O, n_heads):
            B, N, d = X.shape
            d_k = d // n_heads
            Q, K, V = ((X @ W).reshape(B, n_heads, N, d_k) for W in (W_Q, W_K, W_V))
            Q, K = apply_rope(Q, np.arange(N)), apply_rope(K, np.arange(N))
            weights = softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k) + causal_mask(N))
            return (weights @ V).reshape(B, N, d) @ W_O, weights
    '''),
    wrong(PART, "mask_minus_100_added", "finite_mask", variant(
        mask="    scores = scores + np.triu(np.ones((N, N)), k=1) * -100\n")),
    wrong(PART, "mask_minus_500_set", "finite_mask", variant(
        mask="    scores = np.where(np.triu(np.ones((N, N)), k=1) == 1, -500.0, scores)\n")),
    wrong(PART, "mask_of_ones_times_minus_inf", None, variant(     # 0 · -inf is nan: every weight is nan
        mask="    scores = scores + np.triu(np.ones((N, N)), k=1) * -np.inf\n")),
    # split first, then a table spread over the width d: the bug's frequencies, rotated after the split
    wrong(PART, "split_first_then_d_wide_table", "rotated_before_split", TABLE.format(
        table="rope_frequencies(d).reshape(n_heads, d_k // 2)[:, None, :]")),
    # the first d_k/2 frequencies of the d-wide table in every head: not the bug
    wrong(PART, "model_width_frequencies_in_every_head", "model_width_frequencies", TABLE.format(
        table="rope_frequencies(d)[: d_k // 2]")),
]

CORRECT = [
    correct(PART, "positions_from_one", variant(
        rope_q="    Q = apply_rope(Q, pos + 1)\n", rope_k="    K = apply_rope(K, pos + 1)\n")),
    correct(PART, "loop_over_heads", '''
        def rope_attention(X, W_Q, W_K, W_V, W_O, n_heads):
            B, N, d = X.shape
            d_k = d // n_heads
            pos = np.arange(N)
            allowed = np.tril(np.ones((N, N), dtype=bool))
            heads, all_weights = [], []
            for a in range(n_heads):
                cols = slice(a * d_k, (a + 1) * d_k)
                q = apply_rope(X @ W_Q[:, cols], pos)
                k = apply_rope(X @ W_K[:, cols], pos)
                scores = np.where(allowed, q @ np.swapaxes(k, 1, 2) / math.sqrt(d_k), -np.inf)
                w = softmax(scores)
                heads.append(w @ (X @ W_V[:, cols]))
                all_weights.append(w)
            return np.concatenate(heads, axis=-1) @ W_O, np.stack(all_weights, axis=1)
    '''),
    correct(PART, "exp_of_the_whole_row_then_tril", '''
        def rope_attention(X, W_Q, W_K, W_V, W_O, n_heads):
            B, N, d = X.shape
            d_k = d // n_heads
            q, k, v = (split_heads(matmul(X, W), n_heads) for W in (W_Q, W_K, W_V))
            pos = np.arange(N)
            q, k = apply_rope(q, pos), apply_rope(k, pos)
            s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d_k)
            s = s - np.where(np.tril(np.ones((N, N), bool)), s, -np.inf).max(-1, keepdims=True)
            w = np.exp(s) * np.tril(np.ones((N, N)))
            w = w / w.sum(-1, keepdims=True)
            return matmul(merge_heads(w @ v), W_O), w
    '''),
    correct(PART, "einsum", '''
        def rope_attention(X, W_Q, W_K, W_V, W_O, n_heads):
            B, N, d = X.shape
            d_k = d // n_heads
            q, k, v = (np.einsum("bnd,de->bne", X, W).reshape(B, N, n_heads, d_k) for W in (W_Q, W_K, W_V))
            q = apply_rope(q.transpose(0, 2, 1, 3), np.arange(N))
            k = apply_rope(k.transpose(0, 2, 1, 3), np.arange(N))
            scores = np.einsum("band,bamd->banm", q, k) / math.sqrt(d_k)
            scores = scores - 1e9 * np.triu(np.ones((N, N)), k=1)
            w = np.exp(scores - scores.max(axis=-1, keepdims=True))
            w /= w.sum(axis=-1, keepdims=True)
            out = np.einsum("banm,bmad->bnad", w, v).reshape(B, N, d)
            return out @ W_O, w
    '''),
]
