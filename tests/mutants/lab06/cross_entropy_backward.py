"""cross_entropy_backward: wrong and correct answers."""
from . import correct, wrong

PART = "cross_entropy_backward"

WRONG = [
    wrong(PART, "normalised_by_the_vocabulary", "divided_by_vocabulary", '''
        def cross_entropy_backward(logits, targets):
            V = logits.shape[-1]
            shifted = logits - logits.max(axis=-1, keepdims=True)
            probs = np.exp(shifted) / np.exp(shifted).sum(axis=-1, keepdims=True)
            return (probs - np.eye(V)[targets]) / V
    '''),
    wrong(PART, "mean_over_every_logit", "divided_by_all_entries", '''
        def cross_entropy_backward(logits, targets):
            z = logits - logits.max(axis=-1, keepdims=True)
            probs = np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True)
            onehot = np.eye(logits.shape[-1])[targets]
            return (probs - onehot) / probs.size
    '''),
    wrong(PART, "softmax_without_keepdims", "keepdims_forgotten_ceb", '''
        def cross_entropy_backward(logits, targets):
            e = np.exp(logits - np.max(logits, axis=-1))
            probs = e / np.sum(e, axis=-1)
            onehot = np.eye(logits.shape[-1])[targets]
            return (probs - onehot) / targets.size
    '''),
    wrong(PART, "no_division", "forgot_mean", '''
        def cross_entropy_backward(logits, targets):
            z = np.exp(logits - logits.max(axis=-1, keepdims=True))
            grad = z / z.sum(axis=-1, keepdims=True)
            onehot = np.eye(logits.shape[-1])[targets]
            return grad - onehot
    '''),
    wrong(PART, "divided_by_len", "divided_by_batch_size", '''
        def cross_entropy_backward(logits, targets):
            z = np.exp(logits - logits.max(axis=-1, keepdims=True))
            probs = z / z.sum(axis=-1, keepdims=True)
            onehot = np.eye(logits.shape[-1])[targets]
            return (probs - onehot) / len(targets)
    '''),
    wrong(PART, "onehot_minus_softmax", "gradient_sign_flipped", '''
        def cross_entropy_backward(logits, targets):
            z = np.exp(logits - logits.max(axis=-1, keepdims=True))
            probs = z / z.sum(axis=-1, keepdims=True)
            onehot = np.eye(logits.shape[-1])[targets]
            return (onehot - probs) / targets.size
    '''),
    wrong(PART, "softmax_only", "no_onehot", '''
        def cross_entropy_backward(logits, targets):
            z = np.exp(logits - logits.max(axis=-1, keepdims=True))
            return z / z.sum(axis=-1, keepdims=True) / targets.size
    '''),
    wrong(PART, "columns_of_every_row", "column_subtraction", '''
        def cross_entropy_backward(logits, targets):
            z = np.exp(logits - logits.max(axis=-1, keepdims=True))
            grad = z / z.sum(axis=-1, keepdims=True)
            grad[:, targets] -= 1
            return grad / targets.size
    '''),
    wrong(PART, "plain_exp", "unstable_softmax", '''
        def cross_entropy_backward(logits, targets):
            probs = np.exp(logits) / np.sum(np.exp(logits), axis=-1, keepdims=True)
            onehot = np.eye(logits.shape[-1])[targets]
            return (probs - onehot) / targets.size
    '''),
    wrong(PART, "one_maximum_for_the_batch", "global_max_softmax", '''
        def cross_entropy_backward(logits, targets):
            e = np.exp(logits - logits.max())
            probs = e / e.sum(axis=-1, keepdims=True)
            return (probs - np.eye(logits.shape[-1])[targets]) / targets.size
    '''),
    wrong(PART, "softmax_in_place", "in_place", '''
        def cross_entropy_backward(logits, targets):
            logits -= logits.max(axis=-1, keepdims=True)
            np.exp(logits, out=logits)
            logits /= logits.sum(axis=-1, keepdims=True)
            grad = logits.copy()
            np.put_along_axis(grad, targets[..., None],
                              np.take_along_axis(grad, targets[..., None], axis=-1) - 1, axis=-1)
            return grad / targets.size
    '''),
    wrong(PART, "flat_rows_every_target", "column_subtraction", '''
        def cross_entropy_backward(logits, targets):
            V = logits.shape[-1]
            p = np.exp(logits - logits.max(axis=-1, keepdims=True)).reshape(-1, V)
            p /= p.sum(axis=1, keepdims=True)
            p[:, targets.ravel()] -= 1.0
            return p.reshape(logits.shape) / targets.size
    '''),
]

CORRECT = [
    correct(PART, "eye_onehot", '''
        def cross_entropy_backward(logits, targets):
            z = logits - np.max(logits, axis=-1, keepdims=True)
            probs = np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True)
            return (probs - np.eye(logits.shape[-1])[targets]) / targets.size
    '''),
    correct(PART, "flattened_fancy_index", '''
        def cross_entropy_backward(logits, targets):
            V = logits.shape[-1]
            u = logits.reshape(-1, V)
            t = targets.reshape(-1)
            p = np.exp(u - u.max(axis=1, keepdims=True))
            p /= p.sum(axis=1, keepdims=True)
            p[np.arange(len(t)), t] -= 1.0
            return (p / len(t)).reshape(logits.shape)
    '''),
    correct(PART, "log_softmax_then_exp", '''
        def cross_entropy_backward(logits, targets):
            log_z = np.logaddexp.reduce(logits, axis=-1, keepdims=True)
            probs = np.exp(logits - log_z)
            onehot = (np.arange(logits.shape[-1]) == targets[..., None])
            return (probs - onehot) / np.prod(targets.shape)
    '''),
]
