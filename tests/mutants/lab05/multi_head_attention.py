"""MultiHeadAttention: wrong and correct versions of `forward` under the given constructor."""
from . import MAYBE_DERIVED, correct, with_forward, wrong

PART = "MultiHeadAttention"

CONSTRUCTOR = '''class MultiHeadAttention:
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
'''


def mha(forward: str) -> str:
    return with_forward(CONSTRUCTOR, forward)


# the start of many answers: heads split by reshape and transpose, then the scaled scores
SCORES = '''
        def forward(self, X: np.ndarray, causal: bool = False) -> np.ndarray:
            n = X.shape[0]
            split = lambda M: M.reshape(n, self.n_heads, self.d_k).transpose(1, 0, 2)
            Q, K, V = split(X @ self.W_Q), split(X @ self.W_K), split(X @ self.W_V)
            scores = Q @ K.transpose(0, 2, 1) / np.sqrt(self.d_k)'''


WRONG = [
    wrong(PART, "reshape_to_heads_directly", "reshape_without_transpose", mha('''
        def forward(self, X: np.ndarray, causal: bool = False) -> np.ndarray:
            n = X.shape[0]
            Q = (X @ self.W_Q).reshape(self.n_heads, n, self.d_k)
            K = (X @ self.W_K).reshape(self.n_heads, n, self.d_k)
            V = (X @ self.W_V).reshape(self.n_heads, n, self.d_k)
            scores = Q @ K.transpose(0, 2, 1) / np.sqrt(self.d_k)
            if causal:
                scores = scores + np.triu(np.full((n, n), -np.inf), k=1)
            heads = softmax(scores) @ V
            return heads.reshape(n, self.d_model) @ self.W_O
    ''')),
    wrong(PART, "concat_without_transpose", "merge_without_transpose", mha(SCORES + '''
            if causal:
                scores += np.triu(np.full((n, n), -np.inf), k=1)
            heads = softmax(scores) @ V
            return heads.reshape(n, -1) @ self.W_O
    ''')),
    wrong(PART, "no_W_O", "no_output_projection", mha('''
        def forward(self, X: np.ndarray, causal: bool = False) -> np.ndarray:
            heads = []
            for h in range(self.n_heads):
                cols = slice(h * self.d_k, (h + 1) * self.d_k)
                Q, K, V = X @ self.W_Q[:, cols], X @ self.W_K[:, cols], X @ self.W_V[:, cols]
                attend = causal_attention if causal else scaled_dot_product_attention
                heads.append(attend(Q, K, V)[0])
            return np.concatenate(heads, axis=1)
    ''')),
    wrong(PART, "causal_flag_unused", "causal_ignored", mha('''
        def forward(self, X: np.ndarray, causal: bool = False) -> np.ndarray:
            heads = []
            for h in range(self.n_heads):
                cols = slice(h * self.d_k, (h + 1) * self.d_k)
                out, _ = scaled_dot_product_attention(X @ self.W_Q[:, cols], X @ self.W_K[:, cols],
                                                      X @ self.W_V[:, cols])
                heads.append(out)
            return np.hstack(heads) @ self.W_O
    ''')),
    wrong(PART, "always_masked", "always_causal", mha('''
        def forward(self, X: np.ndarray, causal: bool = False) -> np.ndarray:
            heads = []
            for h in range(self.n_heads):
                cols = slice(h * self.d_k, (h + 1) * self.d_k)
                out, _ = causal_attention(X @ self.W_Q[:, cols], X @ self.W_K[:, cols],
                                          X @ self.W_V[:, cols])
                heads.append(out)
            return np.hstack(heads) @ self.W_O
    ''')),
    wrong(PART, "scaled_by_model_width", "scale_by_d_model", mha('''
        def forward(self, X: np.ndarray, causal: bool = False) -> np.ndarray:
            n, d = X.shape
            Q = (X @ self.W_Q).reshape(n, self.n_heads, self.d_k)
            K = (X @ self.W_K).reshape(n, self.n_heads, self.d_k)
            V = (X @ self.W_V).reshape(n, self.n_heads, self.d_k)
            scores = np.einsum("ihd,jhd->hij", Q, K) / np.sqrt(d)
            if causal:
                scores = np.where(np.tril(np.ones((n, n))) == 1, scores, -np.inf)
            out = np.einsum("hij,jhd->ihd", softmax(scores), V)
            return out.reshape(n, d) @ self.W_O
    ''')),
    wrong(PART, "unscaled_scores", "no_scaling_mha", mha('''
        def forward(self, X: np.ndarray, causal: bool = False) -> np.ndarray:
            n = X.shape[0]
            Q = (X @ self.W_Q).reshape(n, self.n_heads, self.d_k).transpose(1, 0, 2)
            K = (X @ self.W_K).reshape(n, self.n_heads, self.d_k).transpose(1, 0, 2)
            V = (X @ self.W_V).reshape(n, self.n_heads, self.d_k).transpose(1, 0, 2)
            scores = Q @ K.transpose(0, 2, 1)
            if causal:
                scores = scores + np.triu(np.full((n, n), -np.inf), k=1)
            heads = softmax(scores) @ V
            return heads.transpose(1, 0, 2).reshape(n, self.d_model) @ self.W_O
    ''')),
    wrong(PART, "strided_head_columns", "interleaved_heads", mha('''
        def forward(self, X: np.ndarray, causal: bool = False) -> np.ndarray:
            heads = []
            for h in range(self.n_heads):
                Q = (X @ self.W_Q)[:, h::self.n_heads]
                K = (X @ self.W_K)[:, h::self.n_heads]
                V = (X @ self.W_V)[:, h::self.n_heads]
                attend = causal_attention if causal else scaled_dot_product_attention
                heads.append(attend(Q, K, V)[0])
            concat = np.zeros((X.shape[0], self.d_model))
            for h, out in enumerate(heads):
                concat[:, h::self.n_heads] = out
            return concat @ self.W_O
    ''')),
    wrong(PART, "softmax_on_axis_one", "softmax_over_queries_mha", mha('''
        def forward(self, X: np.ndarray, causal: bool = False) -> np.ndarray:
            n = X.shape[0]
            Q = (X @ self.W_Q).reshape(n, self.n_heads, self.d_k).transpose(1, 0, 2)
            K = (X @ self.W_K).reshape(n, self.n_heads, self.d_k).transpose(1, 0, 2)
            V = (X @ self.W_V).reshape(n, self.n_heads, self.d_k).transpose(1, 0, 2)
            scores = Q @ K.transpose(0, 2, 1) / np.sqrt(self.d_k)
            if causal:
                scores = scores + np.triu(np.full((n, n), -np.inf), k=1)
            e = np.exp(scores - scores.max(axis=1, keepdims=True))
            weights = e / e.sum(axis=1, keepdims=True)
            heads = weights @ V
            return heads.transpose(1, 0, 2).reshape(n, self.d_model) @ self.W_O
    ''')),
    wrong(PART, "keys_projected_with_W_Q", "keys_from_w_q", mha('''
        def forward(self, X: np.ndarray, causal: bool = False) -> np.ndarray:
            Q_all, K_all, V_all = X @ self.W_Q, X @ self.W_Q, X @ self.W_V
            heads = []
            for h in range(self.n_heads):
                s = slice(h * self.d_k, (h + 1) * self.d_k)
                if causal:
                    heads.append(causal_attention(Q_all[:, s], K_all[:, s], V_all[:, s])[0])
                else:
                    heads.append(scaled_dot_product_attention(Q_all[:, s], K_all[:, s], V_all[:, s])[0])
            return np.concatenate(heads, axis=-1) @ self.W_O
    ''')),
    wrong(PART, "torch_linear_convention", "transposed_weights", mha('''
        def forward(self, X: np.ndarray, causal: bool = False) -> np.ndarray:
            n = X.shape[0]
            Q = (X @ self.W_Q.T).reshape(n, self.n_heads, self.d_k).swapaxes(0, 1)
            K = (X @ self.W_K.T).reshape(n, self.n_heads, self.d_k).swapaxes(0, 1)
            V = (X @ self.W_V.T).reshape(n, self.n_heads, self.d_k).swapaxes(0, 1)
            scores = Q @ K.swapaxes(1, 2) / np.sqrt(self.d_k)
            if causal:
                scores = scores + np.triu(np.full((n, n), -np.inf), k=1)
            heads = softmax(scores) @ V
            return heads.swapaxes(0, 1).reshape(n, self.d_model) @ self.W_O.T
    ''')),
    wrong(PART, "heads_never_split", "one_big_head", mha('''
        def forward(self, X: np.ndarray, causal: bool = False) -> np.ndarray:
            Q, K, V = X @ self.W_Q, X @ self.W_K, X @ self.W_V
            if causal:
                out, _ = causal_attention(Q, K, V)
            else:
                out, _ = scaled_dot_product_attention(Q, K, V)
            return out @ self.W_O
    ''')),
    wrong(PART, "forward_without_return", "no_return", mha('''
        def forward(self, X: np.ndarray, causal: bool = False) -> np.ndarray:
            attend = causal_attention if causal else scaled_dot_product_attention
            heads = []
            for c in range(self.n_heads):
                cols = slice(c * self.d_k, (c + 1) * self.d_k)
                heads.append(attend(X @ self.W_Q[:, cols], X @ self.W_K[:, cols], X @ self.W_V[:, cols])[0])
            self.output = np.concatenate(heads, axis=1) @ self.W_O
    ''')),
    wrong(PART, "mask_of_ones_times_minus_inf", None, mha(SCORES + '''
            if causal:
                scores = scores + np.triu(np.ones((n, n)), k=1) * -np.inf    # 0 · -inf is nan
            heads = softmax(scores) @ V
            return heads.transpose(1, 0, 2).reshape(n, self.d_model) @ self.W_O
    ''')),
    # a finite mask (or a maximum over the masked row too) holds only while no future score is far above
    wrong(PART, "finite_mask_set", MAYBE_DERIVED + "masked entries get a finite score instead of -inf", mha(SCORES + '''
            if causal:
                scores[:, np.triu(np.ones((n, n), dtype=bool), 1)] = -1000.0
            return (softmax(scores) @ V).transpose(1, 0, 2).reshape(n, self.d_model) @ self.W_O
    ''')),
    wrong(PART, "exp_times_tril_unmasked_max", None, mha(SCORES + '''
            e = np.exp(scores - scores.max(axis=-1, keepdims=True))
            if causal:
                e = e * np.tril(np.ones((n, n)))
            w = e / e.sum(axis=-1, keepdims=True)
            return (w @ V).transpose(1, 0, 2).reshape(n, self.d_model) @ self.W_O
    ''')),
    wrong(PART, "heads_start_at_c", "heads_overlap", mha('''
        def forward(self, X: np.ndarray, causal: bool = False) -> np.ndarray:
            attend = causal_attention if causal else scaled_dot_product_attention
            P = [X @ W for W in (self.W_Q, self.W_K, self.W_V)]
            heads = [attend(*(M[:, c:c + self.d_k] for M in P))[0] for c in range(self.n_heads)]
            return np.hstack(heads) @ self.W_O
    ''')),
    wrong(PART, "keys_times_queries", "scores_transposed_mha", mha('''
        def forward(self, X: np.ndarray, causal: bool = False) -> np.ndarray:
            n = X.shape[0]
            split = lambda M: M.reshape(n, self.n_heads, self.d_k).transpose(1, 0, 2)
            Q, K, V = split(X @ self.W_Q), split(X @ self.W_K), split(X @ self.W_V)
            scores = np.matmul(K, Q.transpose(0, 2, 1)) / np.sqrt(self.d_k)
            if causal:
                scores = scores + np.triu(np.full((n, n), -np.inf), k=1)
            heads = softmax(scores) @ V
            return heads.transpose(1, 0, 2).reshape(n, self.d_model) @ self.W_O
    ''')),
]

CORRECT = [
    correct(PART, "exp_times_tril_masked_max", mha(SCORES + '''
            keep = np.tril(np.ones((n, n))) if causal else np.ones((n, n))
            m = np.where(keep > 0, scores, -np.inf).max(axis=-1, keepdims=True)
            e = np.exp(np.minimum(scores - m, 0)) * keep        # no overflow where the mask zeroes
            w = e / e.sum(axis=-1, keepdims=True)
            return (w @ V).transpose(1, 0, 2).reshape(n, self.d_model) @ self.W_O
    ''')),
    correct(PART, "loop_over_heads_with_earlier_parts", mha('''
        def forward(self, X: np.ndarray, causal: bool = False) -> np.ndarray:
            attend = causal_attention if causal else scaled_dot_product_attention
            heads = []
            for c in range(self.n_heads):
                cols = slice(c * self.d_k, (c + 1) * self.d_k)
                out, _ = attend(X @ self.W_Q[:, cols], X @ self.W_K[:, cols], X @ self.W_V[:, cols])
                heads.append(out)
            return np.concatenate(heads, axis=1) @ self.W_O
    ''')),
    correct(PART, "einsum_with_where_mask", mha('''
        def forward(self, X: np.ndarray, causal: bool = False) -> np.ndarray:
            n = X.shape[0]
            Q = (X @ self.W_Q).reshape(n, self.n_heads, self.d_k)
            K = (X @ self.W_K).reshape(n, self.n_heads, self.d_k)
            V = (X @ self.W_V).reshape(n, self.n_heads, self.d_k)
            scores = np.einsum("ihd,jhd->hij", Q, K) / np.sqrt(self.d_k)
            if causal:
                scores = np.where(np.tril(np.ones((n, n), dtype=bool)), scores, -np.inf)
            out = np.einsum("hij,jhd->ihd", softmax(scores), V)
            return out.reshape(n, self.d_model) @ self.W_O
    ''')),
    correct(PART, "output_projection_per_head", mha('''
        def forward(self, X: np.ndarray, causal: bool = False) -> np.ndarray:
            n = X.shape[0]
            mask = np.triu(np.ones((n, n)), k=1) * -1e9 if causal else 0.0
            out = np.zeros((n, self.d_model))
            for c in range(self.n_heads):
                rows = slice(c * self.d_k, (c + 1) * self.d_k)
                q, k, v = X @ self.W_Q[:, rows], X @ self.W_K[:, rows], X @ self.W_V[:, rows]
                head = softmax(q @ k.T / np.sqrt(self.d_k) + mask) @ v
                out += head @ self.W_O[rows, :]   # concat(heads) @ W_O, one block at a time
            return out
    ''')),
    correct(PART, "np_split_per_head", mha('''
        def forward(self, X: np.ndarray, causal: bool = False) -> np.ndarray:
            Qs = np.split(X @ self.W_Q, self.n_heads, axis=1)
            Ks = np.split(X @ self.W_K, self.n_heads, axis=1)
            Vs = np.split(X @ self.W_V, self.n_heads, axis=1)
            attend = causal_attention if causal else scaled_dot_product_attention
            heads = [attend(q, k, v)[0] for q, k, v in zip(Qs, Ks, Vs)]
            return np.hstack(heads) @ self.W_O
    ''')),
]
