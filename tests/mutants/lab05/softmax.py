"""softmax: wrong and correct answers."""
from . import correct, wrong

PART = "softmax"

WRONG = [
    wrong(PART, "stable_for_matrices_only", None, '''
        def softmax(z):
            if z.ndim == 2:                  # the max is subtracted for matrices only
                z = z - z.max(axis=-1, keepdims=True)
            e = np.exp(z)
            return e / e.sum(axis=-1, keepdims=True)
    '''),
    wrong(PART, "reductions_lose_their_axis", "keepdims_forgotten_softmax", '''
        def softmax(z: np.ndarray) -> np.ndarray:
            shifted = z - np.max(z, axis=-1)
            exps = np.exp(shifted)
            return exps / np.sum(exps, axis=-1)
    '''),
    wrong(PART, "naive_exp", "unstable", '''
        def softmax(z: np.ndarray) -> np.ndarray:
            return np.exp(z) / np.sum(np.exp(z), axis=-1, keepdims=True)
    '''),
    wrong(PART, "shift_in_place", "in_place", '''
        def softmax(z: np.ndarray) -> np.ndarray:
            z -= np.max(z, axis=-1, keepdims=True)  # stability trick
            e = np.exp(z)
            return e / np.sum(e, axis=-1, keepdims=True)
    '''),
    wrong(PART, "columns", "axis0", '''
        def softmax(z: np.ndarray) -> np.ndarray:
            e = np.exp(z - np.max(z, axis=0))
            return e / np.sum(e, axis=0)
    '''),
    wrong(PART, "axis_one", "axis1", '''
        def softmax(z: np.ndarray) -> np.ndarray:
            m = z.max(axis=1, keepdims=True)
            e = np.exp(z - m)
            return e / e.sum(axis=1, keepdims=True)
    '''),
    wrong(PART, "one_max_for_all", "global_max", '''
        def softmax(z: np.ndarray) -> np.ndarray:
            e = np.exp(z - np.max(z))
            return e / e.sum(axis=-1, keepdims=True)
    '''),
    wrong(PART, "single_precision", "single_precision", '''
        def softmax(z: np.ndarray) -> np.ndarray:
            z = np.asarray(z, dtype=np.float32)  # faster
            shifted = z - z.max(axis=-1, keepdims=True)
            e = np.exp(shifted)
            return e / e.sum(axis=-1, keepdims=True)
    '''),
    wrong(PART, "loop_over_rows", "first_axis_loop", '''
        def softmax(z: np.ndarray) -> np.ndarray:
            out = np.zeros_like(z, dtype=float)
            for i in range(z.shape[0]):
                row = np.exp(z[i] - np.max(z[i]))
                out[i] = row / np.sum(row)
            return out
    '''),
    wrong(PART, "log_sum_exp_without_exp", "log_softmax", '''
        def softmax(z: np.ndarray) -> np.ndarray:
            m = np.max(z, axis=-1, keepdims=True)
            logsumexp = m + np.log(np.sum(np.exp(z - m), axis=-1, keepdims=True))
            return z - logsumexp
    '''),
    wrong(PART, "total_sum", "global_sum", '''
        def softmax(z: np.ndarray) -> np.ndarray:
            e = np.exp(z - z.max(axis=-1, keepdims=True))
            return e / e.sum()
    '''),
    wrong(PART, "centred_on_the_mean", "mean_shift", '''
        def softmax(z: np.ndarray) -> np.ndarray:
            centred = z - np.mean(z, axis=-1, keepdims=True)
            e = np.exp(centred)
            return e / np.sum(e, axis=-1, keepdims=True)
    '''),
    wrong(PART, "made_positive_with_the_minimum", "min_shift", '''
        def softmax(z: np.ndarray) -> np.ndarray:
            z = z - np.min(z, axis=-1, keepdims=True)  # all logits >= 0
            return np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True)
    '''),
    wrong(PART, "logits_clipped", None, '''
        def softmax(z):
            z = np.clip(z, -30, 30)   # "to avoid overflow": changes every row with a logit past 30
            e = np.exp(z - z.max(axis=-1, keepdims=True))
            return e / e.sum(axis=-1, keepdims=True)
    '''),
    wrong(PART, "denominator_not_shifted", "numerator_shifted_only", '''
        def softmax(z: np.ndarray) -> np.ndarray:
            top = np.max(z, axis=-1, keepdims=True)
            numerator = np.exp(z - top)
            denominator = np.exp(z).sum(axis=-1, keepdims=True)
            return numerator / denominator
    '''),
    wrong(PART, "column_maximum", "max_over_other_axis", '''
        def softmax(z: np.ndarray) -> np.ndarray:
            e = np.exp(z - np.max(z, axis=0))
            return e / np.sum(e, axis=-1, keepdims=True)
    '''),
    wrong(PART, "mean_in_the_denominator", "divided_by_mean", '''
        def softmax(z: np.ndarray) -> np.ndarray:
            e = np.exp(z - z.max(axis=-1, keepdims=True))
            return e / np.mean(e, axis=-1, keepdims=True)
    '''),
    wrong(PART, "plus_the_maximum", "max_added", '''
        def softmax(z: np.ndarray) -> np.ndarray:
            shifted = z + z.max(axis=-1, keepdims=True)
            return np.exp(shifted) / np.exp(shifted).sum(axis=-1, keepdims=True)
    '''),
]

CORRECT = [
    correct(PART, "log_sum_exp", '''
        def softmax(z: np.ndarray) -> np.ndarray:
            m = np.max(z, axis=-1, keepdims=True)
            logsumexp = m + np.log(np.sum(np.exp(z - m), axis=-1, keepdims=True))
            return np.exp(z - logsumexp)
    '''),
    correct(PART, "apply_along_last_axis", '''
        def softmax(z: np.ndarray) -> np.ndarray:
            def one(row):
                e = np.exp(row - row.max())
                return e / e.sum()
            return np.apply_along_axis(one, -1, z)
    '''),
    correct(PART, "in_place_on_a_copy", '''
        def softmax(z: np.ndarray) -> np.ndarray:
            out = np.array(z, copy=True)
            out -= out.max(axis=-1, keepdims=True)
            np.exp(out, out=out)
            out /= out.sum(axis=-1, keepdims=True)
            return out
    '''),
]
