"""causal_attention: wrong and correct answers."""
from . import correct, wrong

PART = "causal_attention"

WRONG = [
    wrong(PART, "causal_in_float32", "single_precision_attention", '''
        def causal_attention(Q, K, V):
            Q, K, V = Q.astype(np.float32), K.astype(np.float32), V.astype(np.float32)
            n, d_k = Q.shape
            scores = Q @ K.T / np.sqrt(d_k) + np.triu(np.full((n, n), -np.inf, dtype=np.float32), k=1)
            weights = softmax(scores)
            return weights @ V, weights
    '''),
    wrong(PART, "minus_a_hundred_assigned", "finite_mask_hundred", '''
        def causal_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple:
            n = len(Q)
            scores = Q @ K.T / np.sqrt(K.shape[1])
            scores[np.triu_indices(n, 1)] = -100.0
            weights = softmax(scores)
            return weights @ V, weights
    '''),
    wrong(PART, "minus_a_thousand", "finite_mask_thousand", '''
        def causal_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray) -> tuple:
            d_k = K.shape[-1]
            n = Q.shape[0]
            scores = Q @ K.T / np.sqrt(d_k)
            future = np.triu(np.ones((n, n), dtype=bool), k=1)
            scores = np.where(future, -1e3, scores)
            weights = softmax(scores)
            return weights @ V, weights
    '''),
    wrong(PART, "triu_including_diagonal", "mask_covers_diagonal", '''
        def causal_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray):
            n, d_k = Q.shape
            scores = Q @ K.T / np.sqrt(d_k)
            future = np.triu(np.ones((n, n)), k=0).astype(bool)
            scores = np.where(future, -np.inf, scores)
            weights = softmax(scores)
            return weights @ V, weights
    '''),
    wrong(PART, "zeroed_after_softmax", "mask_after_softmax", '''
        def causal_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray):
            n, d_k = Q.shape
            weights = softmax(Q @ K.T / np.sqrt(d_k))
            weights = weights * np.tril(np.ones((n, n)))
            return weights @ V, weights
    '''),
    wrong(PART, "multiplied_by_tril", "multiplicative_mask", '''
        def causal_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray):
            n = Q.shape[0]
            mask = np.tril(np.ones((n, n)))
            scores = (Q @ K.T / np.sqrt(Q.shape[1])) * mask
            weights = softmax(scores)
            return weights @ V, weights
    '''),
    wrong(PART, "loop_mask_one_late", "mask_one_late", '''
        def causal_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray):
            n, d_k = Q.shape
            scores = Q @ K.T / np.sqrt(d_k)
            for i in range(n):
                scores[i, i + 2:] = -np.inf
            weights = softmax(scores)
            return weights @ V, weights
    '''),
    wrong(PART, "mask_not_assigned", "no_mask", '''
        def causal_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray):
            n, d_k = Q.shape
            scores = Q @ K.T / np.sqrt(d_k)
            mask = np.triu(np.full((n, n), -np.inf), k=1)
            np.add(scores, mask)
            weights = softmax(scores)
            return weights @ V, weights
    '''),
    wrong(PART, "lower_triangle_masked", "mask_on_past", '''
        def causal_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray):
            n, d_k = Q.shape
            mask = np.tril(np.full((n, n), -np.inf), k=-1)
            weights = softmax(Q @ K.T / np.sqrt(d_k) + mask)
            return weights @ V, weights
    '''),
    wrong(PART, "minus_a_hundred", "finite_mask", '''
        def causal_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray):
            n, d_k = Q.shape
            scores = Q @ K.T / np.sqrt(d_k)
            scores = scores - 100 * np.triu(np.ones((n, n)), k=1)  # push the future down
            weights = softmax(scores)
            return weights @ V, weights
    '''),
    wrong(PART, "scaled_by_value_width", "scale_by_dv", '''
        def causal_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray):
            n, d = V.shape
            scores = Q @ K.T / np.sqrt(d)
            scores = scores + np.triu(np.full((n, n), -np.inf), k=1)
            weights = softmax(scores)
            return weights @ V, weights
    '''),
    wrong(PART, "own_exp_without_max", "unstable_softmax", '''
        def causal_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray):
            n, d_k = Q.shape
            scores = Q @ K.T / np.sqrt(d_k) + np.triu(np.full((n, n), -np.inf), k=1)
            e = np.exp(scores)
            weights = e / e.sum(axis=-1, keepdims=True)
            return weights @ V, weights
    '''),
    wrong(PART, "scaled_after_the_softmax", "scaled_after_softmax", '''
        def causal_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray):
            n, d_k = Q.shape
            mask = np.triu(np.full((n, n), -np.inf), k=1)
            weights = softmax(Q @ K.T + mask) / np.sqrt(d_k)
            return weights @ V, weights
    '''),
    wrong(PART, "tril_of_the_scores", "multiplicative_mask", '''
        def causal_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray):
            scores = np.tril(Q @ K.T / np.sqrt(K.shape[-1]))  # keep j <= i
            weights = softmax(scores)
            return weights @ V, weights
    '''),
    wrong(PART, "ones_times_minus_inf", "nan_mask", '''
        def causal_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray):
            n, d_k = Q.shape
            mask = np.triu(np.ones((n, n)), k=1) * -np.inf
            weights = softmax(Q @ K.T / np.sqrt(d_k) + mask)
            return weights @ V, weights
    '''),
    wrong(PART, "return_forgotten", "no_return", '''
        def causal_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray):
            n, d_k = Q.shape
            scores = Q @ K.T / np.sqrt(d_k) + np.triu(np.full((n, n), -np.inf), k=1)
            weights = softmax(scores)
            output = weights @ V
    '''),
    wrong(PART, "full_weights_cut_and_renormalised", "renormalised_after_softmax", '''
        def causal_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray):
            n = len(Q)
            weights = softmax(Q @ K.T / np.sqrt(K.shape[1])) * np.tri(n)
            weights /= weights.sum(axis=1, keepdims=True)
            return weights @ V, weights
    '''),
    wrong(PART, "computed_in_float32", "single_precision_attention", '''
        def causal_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray):
            Q, K, V = (M.astype(np.float32) for M in (Q, K, V))
            n = len(Q)
            scores = Q @ K.T / np.float32(np.sqrt(K.shape[1])) + np.triu(np.full((n, n), -np.inf, np.float32), 1)
            weights = softmax(scores)
            return weights @ V, weights
    '''),
]

CORRECT = [
    correct(PART, "where_minus_inf", '''
        def causal_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray):
            n, d_k = Q.shape
            allowed = np.tril(np.ones((n, n), dtype=bool))
            scores = np.where(allowed, Q @ K.T / np.sqrt(d_k), -np.inf)
            weights = softmax(scores)
            return weights @ V, weights
    '''),
    correct(PART, "minus_1e9", '''
        def causal_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray):
            n, d_k = Q.shape
            mask = np.triu(np.ones((n, n)), k=1) * -1e9
            weights = softmax(Q @ K.T / np.sqrt(d_k) + mask)
            return weights @ V, weights
    '''),
    correct(PART, "minus_1e4_added", '''
        def causal_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray):
            n = len(Q)
            scores = Q @ K.T / np.sqrt(Q.shape[1]) + np.triu(np.full((n, n), -1e4), 1)
            weights = softmax(scores)
            return weights @ V, weights
    '''),
    correct(PART, "loop_over_prefixes", '''
        def causal_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray):
            n, d_k = Q.shape
            output = np.zeros((n, V.shape[1]))
            weights = np.zeros((n, n))
            for i in range(n):
                w = softmax(Q[i] @ K[: i + 1].T / np.sqrt(d_k))
                weights[i, : i + 1] = w
                output[i] = w @ V[: i + 1]
            return output, weights
    '''),
]
