"""kv_attention_step: wrong and correct answers."""
from . import correct, wrong

PART = "kv_attention_step"


def variant(**edits) -> str:
    """A student's kv_attention_step, written out in full, with lines of it replaced."""
    code = BASE
    for old, new in edits.items():
        assert code.count(LINES[old]) == 1, old
        code = code.replace(LINES[old], new)
    return code


BASE = '''
def kv_attention_step(x, k_cache, v_cache, W_Q, W_K, W_V, W_O, n_heads):
    d = x.shape[0]
    d_k = d // n_heads
    t = k_cache.shape[1]
    q = (x @ W_Q).reshape(n_heads, 1, d_k)
    k = (x @ W_K).reshape(n_heads, 1, d_k)
    v = (x @ W_V).reshape(n_heads, 1, d_k)
    q = apply_rope(q, np.array([t]))
    k = apply_rope(k, np.array([t]))
    keys = np.concatenate([k_cache, k], axis=1)
    values = np.concatenate([v_cache, v], axis=1)
    weights = softmax(q @ keys.transpose(0, 2, 1) / np.sqrt(d_k))
    out = (weights @ values).reshape(d) @ W_O
    return out, keys, values
'''
LINES = {name: line for name, line in (
    ("t", "    t = k_cache.shape[1]\n"),
    ("k", "    k = (x @ W_K).reshape(n_heads, 1, d_k)\n"),
    ("rope_q", "    q = apply_rope(q, np.array([t]))\n"),
    ("rope_k", "    k = apply_rope(k, np.array([t]))\n"),
    ("keys", "    keys = np.concatenate([k_cache, k], axis=1)\n"),
    ("weights", "    weights = softmax(q @ keys.transpose(0, 2, 1) / np.sqrt(d_k))\n"),
    ("out", "    out = (weights @ values).reshape(d) @ W_O\n"),
    ("return", "    return out, keys, values\n"),
)}

WRONG = [
    wrong(PART, "whole_cache_rotated", "cache_rotated_again", variant(
        keys="    keys = np.concatenate([apply_rope(k_cache, np.arange(t)), k], axis=1)\n")),
    wrong(PART, "raw_key_cached", "unrotated_key_stored", variant(
        k="    k_raw = k = (x @ W_K).reshape(n_heads, 1, d_k)\n",
        **{"return": "    return out, np.concatenate([k_cache, k_raw], axis=1), values\n"})),
    wrong(PART, "rope_forgotten", "rotated_at_zero", variant(rope_q="", rope_k="")),
    wrong(PART, "position_zero", "rotated_at_zero", variant(
        rope_q="    q = apply_rope(q, np.array([0]))\n", rope_k="    k = apply_rope(k, np.array([0]))\n")),
    wrong(PART, "position_off_by_one", "rotated_one_too_far", variant(t="    t = k_cache.shape[1] + 1\n")),
    wrong(PART, "query_not_rotated", "query_not_rotated", variant(rope_q="")),
    wrong(PART, "attends_before_appending", "new_token_left_out", variant(
        weights="    weights = softmax(q @ k_cache.transpose(0, 2, 1) / np.sqrt(d_k))\n",
        out="    out = (weights @ v_cache).reshape(d) @ W_O\n")),
    wrong(PART, "new_token_twice", "new_token_twice", variant(
        weights="    twice = np.concatenate([keys, k], axis=1)\n"
                "    weights = softmax(q @ twice.transpose(0, 2, 1) / np.sqrt(d_k))\n",
        out="    out = (weights @ np.concatenate([values, v], axis=1)).reshape(d) @ W_O\n")),
    wrong(PART, "sqrt_d", "step_scaled_by_model_width", variant(
        weights="    weights = softmax(q @ keys.transpose(0, 2, 1) / np.sqrt(d))\n")),
]

CORRECT = [
    correct(PART, "loop_over_heads", '''
        def kv_attention_step(x, k_cache, v_cache, W_Q, W_K, W_V, W_O, n_heads):
            d = len(x)
            d_k, t = d // n_heads, k_cache.shape[1]
            new_k, new_v, outs = [], [], []
            for a in range(n_heads):
                cols = slice(a * d_k, (a + 1) * d_k)
                q = apply_rope((x @ W_Q[:, cols])[None], np.array([t]))[0]
                k = apply_rope((x @ W_K[:, cols])[None], np.array([t]))[0]
                keys = np.vstack([k_cache[a], k])
                values = np.vstack([v_cache[a], x @ W_V[:, cols]])
                scores = keys @ q / math.sqrt(d_k)
                w = np.exp(scores - scores.max())
                outs.append((w / w.sum()) @ values)
                new_k.append(keys)
                new_v.append(values)
            return np.concatenate(outs) @ W_O, np.stack(new_k), np.stack(new_v)
    '''),
    correct(PART, "through_split_heads", '''
        def kv_attention_step(x, k_cache, v_cache, W_Q, W_K, W_V, W_O, n_heads):
            t = k_cache.shape[1]
            pos = np.array([t])
            q, k, v = (split_heads((x @ W)[None, None, :], n_heads)[0] for W in (W_Q, W_K, W_V))
            k_cache = np.append(k_cache, apply_rope(k, pos), axis=1)
            v_cache = np.append(v_cache, v, axis=1)
            d_k = q.shape[-1]
            weights = softmax(np.einsum("aqd,akd->aqk", apply_rope(q, pos), k_cache) / math.sqrt(d_k))
            return merge_heads((weights @ v_cache)[None])[0, 0] @ W_O, k_cache, v_cache
    '''),
    correct(PART, "einsum_and_float_position", '''
        def kv_attention_step(x, k_cache, v_cache, W_Q, W_K, W_V, W_O, n_heads):
            A, t, d_k = k_cache.shape[0], k_cache.shape[1], x.shape[-1] // n_heads
            where = np.full(1, float(t))
            q = apply_rope(np.einsum("d,de->e", x, W_Q).reshape(A, 1, d_k), where)
            k = apply_rope(np.einsum("d,de->e", x, W_K).reshape(A, 1, d_k), where)
            v = np.einsum("d,de->e", x, W_V).reshape(A, 1, d_k)
            keys, values = np.concatenate((k_cache, k), axis=-2), np.concatenate((v_cache, v), axis=-2)
            scores = np.einsum("aqd,akd->aqk", q, keys) / d_k ** 0.5
            w = np.exp(scores - scores.max(axis=-1, keepdims=True))
            w = w / w.sum(axis=-1, keepdims=True)
            return np.einsum("aqk,akd->aqd", w, values).reshape(-1) @ W_O, keys, values
    '''),
]
