"""scaled_dot_product_attention: wrong and correct answers."""
from . import correct, wrong

PART = "scaled_dot_product_attention"

WRONG = [
    wrong(PART, "computed_in_float32", "single_precision_attention", '''
        def scaled_dot_product_attention(Q, K, V):
            Q, K, V = (a.astype(np.float32) for a in (Q, K, V))      # about 7 significant digits
            weights = softmax(Q @ K.T / np.sqrt(Q.shape[-1]))
            return weights @ V, weights
    '''),
    wrong(PART, "einsum_unscaled", "no_scaling", '''
        def scaled_dot_product_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray):
            scores = np.einsum("id,jd->ij", Q, K)
            weights = softmax(scores)
            return weights @ V, weights
    '''),
    wrong(PART, "divided_by_d_k", "scale_by_dk", '''
        def scaled_dot_product_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray):
            d_k = Q.shape[1]
            weights = softmax(Q @ K.T / d_k)
            return weights @ V, weights
    '''),
    wrong(PART, "d_k_from_the_wrong_axis", "scale_by_n", '''
        def scaled_dot_product_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray):
            d_k = K.shape[0]
            scores = np.dot(Q, K.T) / np.sqrt(d_k)
            weights = softmax(scores)
            return np.dot(weights, V), weights
    '''),
    wrong(PART, "normalised_down_the_columns", "softmax_over_queries", '''
        def scaled_dot_product_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray):
            scores = Q @ K.T / np.sqrt(Q.shape[-1])
            weights = softmax(scores.T).T
            return weights @ V, weights
    '''),
    wrong(PART, "keys_times_queries", "transposed_scores", '''
        def scaled_dot_product_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray):
            scores = K @ Q.T / np.sqrt(K.shape[1])
            weights = softmax(scores)
            return weights @ V, weights
    '''),
    wrong(PART, "returns_only_the_output", "only_output", '''
        def scaled_dot_product_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray):
            weights = softmax(Q @ K.T / np.sqrt(Q.shape[-1]))
            return weights @ V
    '''),
    wrong(PART, "weights_first", "swapped_returns", '''
        def scaled_dot_product_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray):
            weights = softmax(Q @ K.T / np.sqrt(Q.shape[-1]))
            output = weights @ V
            return weights, output
    '''),
    wrong(PART, "queries_scaled_in_place", "in_place", '''
        def scaled_dot_product_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray):
            Q /= np.sqrt(Q.shape[-1])  # scale once instead of the N x N scores
            weights = softmax(Q @ K.T)
            return weights @ V, weights
    '''),
    wrong(PART, "own_exp_without_max", "unstable_softmax", '''
        def scaled_dot_product_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray):
            scores = Q @ K.T / np.sqrt(Q.shape[-1])
            e = np.exp(scores)
            weights = e / e.sum(axis=1, keepdims=True)
            return weights @ V, weights
    '''),
    wrong(PART, "row_statistics_without_keepdims", "keepdims_forgotten", '''
        def scaled_dot_product_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray):
            scores = Q @ K.T / np.sqrt(Q.shape[1])
            e = np.exp(scores - scores.max(axis=-1))
            weights = e / e.sum(axis=-1)
            return weights @ V, weights
    '''),
    wrong(PART, "multiplied_by_root_d_k", "times_sqrt_dk", '''
        def scaled_dot_product_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray):
            d_k = Q.shape[-1]
            weights = softmax(Q @ K.T * np.sqrt(d_k))
            return weights @ V, weights
    '''),
]

CORRECT = [
    correct(PART, "einsum_and_own_softmax", '''
        def scaled_dot_product_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray):
            scores = np.einsum("id,jd->ij", Q, K) / np.sqrt(K.shape[1])
            scores = scores - scores.max(axis=1, keepdims=True)
            weights = np.exp(scores)
            weights /= weights.sum(axis=1, keepdims=True)
            return np.einsum("ij,jv->iv", weights, V), weights
    '''),
    correct(PART, "loop_over_queries", '''
        def scaled_dot_product_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray):
            n, d_k = Q.shape
            output = np.zeros((n, V.shape[1]))
            weights = np.zeros((n, n))
            for i in range(n):
                weights[i] = softmax(K @ Q[i] / np.sqrt(d_k))
                output[i] = weights[i] @ V
            return output, weights
    '''),
    correct(PART, "queries_scaled_first", '''
        def scaled_dot_product_attention(Q: np.ndarray, K: np.ndarray, V: np.ndarray):
            Q = Q / np.sqrt(Q.shape[-1])
            weights = softmax(np.matmul(Q, K.T))
            return np.matmul(weights, V), weights
    '''),
]
