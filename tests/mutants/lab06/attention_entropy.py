"""attention_entropy: wrong and correct answers."""
from . import correct, wrong

PART = "attention_entropy"

WRONG = [
    wrong(PART, "natural_log", "in_nats", '''
        def attention_entropy(weights):
            logs = np.log(np.where(weights > 0, weights, 1.0))
            return -(weights * logs).sum(axis=-1).mean(axis=(0, 2))
    '''),
    wrong(PART, "zero_log_zero", "nan_on_zeros", '''
        def attention_entropy(weights):
            H = -np.sum(weights * np.log2(weights), axis=-1)        # (B, H, T)
            return H.mean(axis=(0, 2))
    '''),
    wrong(PART, "summed_over_positions", "summed_over_queries", '''
        def attention_entropy(weights):
            plogp = np.where(weights > 0, weights * np.log2(np.where(weights > 0, weights, 1)), 0)
            return -plogp.sum(axis=(-1, -2)).mean(axis=0)
    '''),
    wrong(PART, "mean_over_everything", "mean_over_keys", '''
        def attention_entropy(weights):
            plogp = np.where(weights > 0, weights * np.log2(np.where(weights > 0, weights, 1)), 0)
            return -plogp.mean(axis=(0, 2, 3))
    '''),
    wrong(PART, "per_query_position", "not_averaged", '''
        def attention_entropy(weights):
            safe = np.clip(weights, 1e-300, 1.0)
            H = -(weights * np.log2(safe)).sum(axis=-1)
            return H.mean(axis=0)
    '''),
    wrong(PART, "sign_forgotten", "sign_missing", '''
        def attention_entropy(weights):
            logs = np.log2(np.where(weights > 0, weights, 1.0))
            return (weights * logs).sum(axis=-1).mean(axis=(0, 2))
    '''),
    wrong(PART, "zeros_replaced_in_place", "in_place", '''
        def attention_entropy(weights):
            weights[weights == 0] = 1.0        # log2(1) = 0
            return -(weights * np.log2(weights)).sum(axis=-1).mean(axis=(0, 2))
    '''),
    wrong(PART, "one_value_per_query", "averaged_over_heads", '''
        def attention_entropy(weights):
            terms = np.where(weights > 0, weights * np.log2(np.where(weights > 0, weights, 1.0)), 0.0)
            return -terms.sum(axis=3).mean(axis=1).mean(axis=0)
    '''),
]

CORRECT = [
    correct(PART, "nan_to_num", '''
        def attention_entropy(weights):
            with np.errstate(divide="ignore", invalid="ignore"):
                plogp = np.nan_to_num(weights * np.log2(weights))
            return -plogp.sum(axis=-1).mean(axis=(0, 2))
    '''),
    correct(PART, "log_where_positive", '''
        def attention_entropy(weights):
            logs = np.log2(weights, where=weights > 0, out=np.zeros_like(weights))
            B, H, T, _ = weights.shape
            return -(weights * logs).sum(axis=(-1, -2)).sum(axis=0) / (B * T)
    '''),
    correct(PART, "loop_over_heads", '''
        def attention_entropy(weights):
            out = np.zeros(weights.shape[1])
            for h in range(weights.shape[1]):
                a = weights[:, h]
                nz = a > 0
                out[h] = -np.sum(a[nz] * np.log2(a[nz])) / (a.shape[0] * a.shape[1])
            return out
    '''),
]
