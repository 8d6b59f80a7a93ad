"""cross_entropy: wrong and correct answers."""
from . import correct, wrong

PART = "cross_entropy"

WRONG = [
    wrong(PART, "ce_in_float32", "computed_in_float32", '''
        def cross_entropy(logits, targets):
            logits = logits.astype(np.float32)
            z = logits - logits.max(axis=-1, keepdims=True)
            logp = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
            return float(-np.take_along_axis(logp, targets[..., None], axis=-1).mean())
    '''),
    wrong(PART, "shifted_then_float32", "computed_in_float32", '''
        def cross_entropy(logits, targets):
            z = (logits - logits.max(axis=-1, keepdims=True)).astype(np.float32)
            lse = np.log(np.exp(z).sum(axis=-1))
            return float(np.mean(lse - np.take_along_axis(z, targets[..., None], axis=-1)[..., 0]))
    '''),
    wrong(PART, "loss_returned_as_float32", "computed_in_float32", '''
        def cross_entropy(logits, targets):
            z = logits - logits.max(axis=-1, keepdims=True)
            log_probs = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
            return np.float32(-np.take_along_axis(log_probs, targets[..., None], axis=-1).mean())
    '''),
    wrong(PART, "max_without_keepdims", "keepdims_forgotten_ce", '''
        def cross_entropy(logits, targets):
            z = logits - logits.max(axis=-1)
            log_probs = z - np.log(np.exp(z).sum(axis=-1))
            picked = np.take_along_axis(log_probs, targets[..., None], axis=-1)
            return float(-picked.mean())
    '''),
    wrong(PART, "log_of_the_softmax", "log_of_softmax", '''
        def cross_entropy(logits, targets):
            z = logits - logits.max(axis=-1, keepdims=True)
            probs = np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True)
            V = logits.shape[-1]
            p = probs.reshape(-1, V)[np.arange(targets.size), targets.reshape(-1)]
            return float(-np.mean(np.log(p)))
    '''),
    wrong(PART, "no_shift", "unstable", '''
        def cross_entropy(logits, targets):
            lse = np.log(np.sum(np.exp(logits), axis=-1))
            picked = np.take_along_axis(logits, targets[..., None], axis=-1)[..., 0]
            return float(np.mean(lse - picked))
    '''),
    wrong(PART, "max_forgotten_in_lse", "max_not_added_back", '''
        def cross_entropy(logits, targets):
            m = np.max(logits, axis=-1, keepdims=True)
            lse = np.log(np.sum(np.exp(logits - m), axis=-1))
            picked = np.take_along_axis(logits, targets[..., None], axis=-1).squeeze(-1)
            return float((lse - picked).mean())
    '''),
    wrong(PART, "summed_over_positions", "summed", '''
        def cross_entropy(logits, targets):
            z = logits - logits.max(axis=-1, keepdims=True)
            log_probs = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
            return float(-np.take_along_axis(log_probs, targets[..., None], axis=-1).sum())
    '''),
    wrong(PART, "divided_by_len", "divided_by_batch", '''
        def cross_entropy(logits, targets):
            V = logits.shape[-1]
            z = logits.reshape(-1, V)
            z = z - z.max(axis=1, keepdims=True)
            log_probs = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
            total = log_probs[np.arange(len(z)), targets.reshape(-1)].sum()
            return float(-total / len(targets))
    '''),
    wrong(PART, "one_loss_per_position", "per_position", '''
        def cross_entropy(logits, targets):
            z = logits - logits.max(axis=-1, keepdims=True)
            log_probs = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
            return -np.take_along_axis(log_probs, targets[..., None], axis=-1)[..., 0]
    '''),
    wrong(PART, "onehot_mean", "mean_over_vocabulary", '''
        def cross_entropy(logits, targets):
            z = logits - logits.max(axis=-1, keepdims=True)
            log_probs = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
            onehot = np.eye(logits.shape[-1])[targets]
            return float(-np.mean(onehot * log_probs))
    '''),
    wrong(PART, "log2", "in_bits", '''
        def cross_entropy(logits, targets):
            z = logits - logits.max(axis=-1, keepdims=True)
            log2_probs = (z - np.log(np.exp(z).sum(axis=-1, keepdims=True))) / np.log(2)
            return float(-np.take_along_axis(log2_probs, targets[..., None], axis=-1).mean())
    '''),
    wrong(PART, "one_maximum_for_the_batch", "global_max", '''
        def cross_entropy(logits, targets):
            z = logits - np.max(logits)
            log_probs = z - np.log(np.sum(np.exp(z), axis=-1, keepdims=True))
            return float(-np.mean(np.take_along_axis(log_probs, targets[..., None], axis=-1)))
    '''),
    wrong(PART, "every_row_at_every_target", "block_indexing", '''
        def cross_entropy(logits, targets):
            z = logits - logits.max(axis=-1, keepdims=True)
            log_probs = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
            return float(-log_probs[:, targets].mean())
    '''),
    wrong(PART, "shifted_in_place", "in_place", '''
        def cross_entropy(logits, targets):
            logits -= logits.max(axis=-1, keepdims=True)
            log_probs = logits - np.log(np.exp(logits).sum(axis=-1, keepdims=True))
            return float(-np.take_along_axis(log_probs, targets[..., None], axis=-1).mean())
    '''),
]

CORRECT = [
    correct(PART, "logaddexp_reduce", '''
        def cross_entropy(logits, targets):
            lse = np.logaddexp.reduce(logits, axis=-1)
            picked = np.take_along_axis(logits, targets[..., None], axis=-1)[..., 0]
            return float(np.mean(lse - picked))
    '''),
    correct(PART, "flattened_rows", '''
        def cross_entropy(logits, targets):
            V = logits.shape[-1]
            u = logits.reshape(-1, V)
            t = targets.reshape(-1)
            m = u.max(axis=1)
            lse = m + np.log(np.exp(u - m[:, None]).sum(axis=1))
            return float(np.mean(lse - u[np.arange(len(t)), t]))
    '''),
    correct(PART, "loop_over_positions", '''
        def cross_entropy(logits, targets):
            V = logits.shape[-1]
            total = 0.0
            for row, target in zip(logits.reshape(-1, V), targets.reshape(-1)):
                m = row.max()
                total += m + math.log(np.sum(np.exp(row - m))) - row[target]
            return total / targets.size
    '''),
]
