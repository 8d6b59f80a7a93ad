"""attention_support: wrong and correct answers."""
from . import correct, wrong

PART = "attention_support"

WRONG = [
    wrong(PART, "support_in_float32", None, '''
        def attention_support(weights):
            w = weights.astype(np.float32)
            safe = np.where(w > 0, w, 1.0)
            entropy = -(w * np.log2(safe)).sum(axis=-1)
            support = 2.0 ** entropy
            return entropy, support, support / np.arange(1, w.shape[-1] + 1)
    '''),
    wrong(PART, "natural_log", "in_nats", '''
        def attention_support(weights):
            logs = np.log(np.where(weights > 0, weights, 1.0))
            H = -(weights * logs).sum(axis=-1)
            support = 2 ** H
            return H, support, support / np.arange(1, weights.shape[-1] + 1)
    '''),
    wrong(PART, "support_and_entropy_swapped", "entropy_and_support_swapped", '''
        def attention_support(weights):
            logs = np.log2(np.where(weights > 0, weights, 1.0))
            H = -(weights * logs).sum(axis=-1)
            S = 2 ** H
            return S, H, S / np.arange(1, weights.shape[-1] + 1)
    '''),
    wrong(PART, "exp_of_bits", "exp_of_bits", '''
        def attention_support(weights):
            logs = np.log2(np.where(weights > 0, weights, 1.0))
            H = -(weights * logs).sum(axis=-1)
            support = np.exp(H)
            return H, support, support / np.arange(1, weights.shape[-1] + 1)
    '''),
    wrong(PART, "divided_by_window", "divided_by_window", '''
        def attention_support(weights):
            logs = np.log2(np.where(weights > 0, weights, 1.0))
            H = -(weights * logs).sum(axis=-1)
            N = weights.shape[-1]
            return H, 2 ** H, 2 ** H / N
    '''),
    wrong(PART, "divided_by_index", "divided_by_index", '''
        def attention_support(weights):
            logs = np.log2(np.where(weights > 0, weights, 1.0))
            H = -(weights * logs).sum(axis=-1)
            with np.errstate(divide="ignore"):
                return H, 2 ** H, 2 ** H / np.arange(weights.shape[-1])
    '''),
    wrong(PART, "divided_by_nonzero_count", "divided_by_nonzero", '''
        def attention_support(weights):
            safe = np.where(weights > 0, weights, 1.0)
            H = -(weights * np.log2(safe)).sum(axis=-1)
            S = 2.0 ** H
            return H, S, S / np.count_nonzero(weights, axis=-1)
    '''),
    wrong(PART, "zero_log_zero", "nan_on_zeros", '''
        def attention_support(weights):
            H = -np.sum(weights * np.log2(weights), axis=-1)
            support = np.power(2.0, H)
            return H, support, support / np.arange(1, weights.shape[-1] + 1)
    '''),
    wrong(PART, "sign_forgotten", "sign_missing", '''
        def attention_support(weights):
            plogp = np.where(weights > 0, weights * np.log2(np.where(weights > 0, weights, 1)), 0)
            H = plogp.sum(axis=-1)
            return H, 2 ** H, 2 ** H / (np.arange(weights.shape[-1]) + 1)
    '''),
    wrong(PART, "summed_over_queries", "summed_over_queries", '''
        def attention_support(weights):
            logs = np.log2(np.where(weights > 0, weights, 1.0))
            H = -(weights * logs).sum(axis=-2)
            return H, 2 ** H, 2 ** H / np.arange(1, weights.shape[-1] + 1)
    '''),
    wrong(PART, "zeros_replaced_in_place", "in_place", '''
        def attention_support(weights):
            weights[weights == 0] = 1.0
            H = -(weights * np.log2(weights)).sum(axis=-1)
            return H, 2 ** H, 2 ** H / np.arange(1, weights.shape[-1] + 1)
    '''),
]

CORRECT = [
    correct(PART, "nan_to_num", '''
        def attention_support(weights):
            with np.errstate(divide="ignore", invalid="ignore"):
                plogp = np.nan_to_num(weights * np.log2(weights))
            entropy = -plogp.sum(axis=-1)
            support = np.exp2(entropy)
            return entropy, support, support / np.arange(1, weights.shape[-1] + 1)
    '''),
    correct(PART, "log_with_where", '''
        def attention_support(weights):
            logs = np.log2(weights, where=weights > 0, out=np.zeros_like(weights))
            entropy = -np.einsum("...ij,...ij->...i", weights, logs)
            support = 2.0 ** entropy
            seen = np.arange(weights.shape[-1]) + 1.0
            return entropy, support, support / seen
    '''),
    correct(PART, "natural_log_converted", '''
        def attention_support(weights):
            safe = np.clip(weights, 1e-300, None)
            entropy = -(weights * np.log(safe)).sum(axis=-1) / np.log(2)
            support = np.exp(entropy * np.log(2))
            return entropy, support, support / np.arange(1, weights.shape[-1] + 1)
    '''),
]
