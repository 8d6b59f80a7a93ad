"""layer_norm: wrong and correct answers."""
from . import correct, wrong

PART = "layer_norm"

WRONG = [
    wrong(PART, "gamma_before_normalising", None, '''
        def layer_norm(x, gamma=None, beta=None, eps=1e-5):
            if gamma is not None:
                x = x * gamma                # scaled before the statistics are taken
            mu = x.mean(axis=-1, keepdims=True)
            var = x.var(axis=-1, keepdims=True)
            out = (x - mu) / np.sqrt(var + eps)
            return out + beta if beta is not None else out
    '''),
    wrong(PART, "beta_dropped_without_gamma", "beta_only_with_gamma", '''
        def layer_norm(x, gamma=None, beta=None, eps=1e-5):
            mu = x.mean(axis=-1, keepdims=True)
            y = (x - mu) / np.sqrt(x.var(axis=-1, keepdims=True) + eps)
            if gamma is None:
                return y
            if beta is None:
                beta = 0.0
            return gamma * y + beta
    '''),
    wrong(PART, "statistics_without_keepdims", "keepdims_forgotten_ln", '''
        def layer_norm(x: np.ndarray, gamma: np.ndarray = None, beta: np.ndarray = None,
                       eps: float = 1e-5) -> np.ndarray:
            if gamma is None:
                gamma = np.ones(x.shape[-1])
            if beta is None:
                beta = np.zeros(x.shape[-1])
            mean = np.mean(x, axis=-1)
            std = np.sqrt(np.var(x, axis=-1) + eps)
            return gamma * (x - mean) / std + beta
    '''),
    wrong(PART, "sample_std", "unbiased_variance", '''
        def layer_norm(x: np.ndarray, gamma: np.ndarray = None, beta: np.ndarray = None,
                       eps: float = 1e-5) -> np.ndarray:
            if gamma is None:
                gamma = np.ones(x.shape[-1])
            if beta is None:
                beta = np.zeros(x.shape[-1])
            mu = x.mean(axis=-1, keepdims=True)
            var = x.var(axis=-1, ddof=1, keepdims=True)
            return gamma * (x - mu) / np.sqrt(var + eps) + beta
    '''),
    wrong(PART, "eps_added_to_std", "eps_outside_sqrt", '''
        def layer_norm(x: np.ndarray, gamma: np.ndarray = None, beta: np.ndarray = None,
                       eps: float = 1e-5) -> np.ndarray:
            gamma = np.ones(x.shape[-1]) if gamma is None else gamma
            beta = np.zeros(x.shape[-1]) if beta is None else beta
            mu = np.mean(x, axis=-1, keepdims=True)
            sigma = np.std(x, axis=-1, keepdims=True)
            return gamma * (x - mu) / (sigma + eps) + beta
    '''),
    wrong(PART, "eps_hard_coded", "eps_fixed", '''
        def layer_norm(x: np.ndarray, gamma: np.ndarray = None, beta: np.ndarray = None,
                       eps: float = 1e-5) -> np.ndarray:
            mu = x.mean(-1, keepdims=True)
            var = ((x - mu) ** 2).mean(-1, keepdims=True)
            out = (x - mu) / np.sqrt(var + 1e-5)
            if gamma is not None:
                out = out * gamma
            if beta is not None:
                out = out + beta
            return out
    '''),
    wrong(PART, "statistics_per_column", "over_axis0", '''
        def layer_norm(x: np.ndarray, gamma: np.ndarray = None, beta: np.ndarray = None,
                       eps: float = 1e-5) -> np.ndarray:
            mu = np.mean(x, axis=0)
            var = np.var(x, axis=0)
            x_hat = (x - mu) / np.sqrt(var + eps)
            if gamma is not None:
                x_hat = gamma * x_hat
            if beta is not None:
                x_hat = x_hat + beta
            return x_hat
    '''),
    wrong(PART, "affine_forgotten", "affine_ignored", '''
        def layer_norm(x: np.ndarray, gamma: np.ndarray = None, beta: np.ndarray = None,
                       eps: float = 1e-5) -> np.ndarray:
            if gamma is None:
                gamma = np.ones(x.shape[-1])
            if beta is None:
                beta = np.zeros(x.shape[-1])
            mean = x.mean(axis=-1, keepdims=True)
            var = x.var(axis=-1, keepdims=True)
            return (x - mean) / np.sqrt(var + eps)
    '''),
    wrong(PART, "none_defaults_used", "defaults_left_none", '''
        def layer_norm(x: np.ndarray, gamma: np.ndarray = None, beta: np.ndarray = None,
                       eps: float = 1e-5) -> np.ndarray:
            mu = x.mean(axis=-1, keepdims=True)
            var = x.var(axis=-1, keepdims=True)
            return gamma * (x - mu) / np.sqrt(var + eps) + beta
    '''),
    wrong(PART, "centred_in_place", "in_place", '''
        def layer_norm(x: np.ndarray, gamma: np.ndarray = None, beta: np.ndarray = None,
                       eps: float = 1e-5) -> np.ndarray:
            x -= x.mean(axis=-1, keepdims=True)
            x /= np.sqrt((x ** 2).mean(axis=-1, keepdims=True) + eps)
            if gamma is not None:
                x = gamma * x
            if beta is not None:
                x = x + beta
            return x
    '''),
    wrong(PART, "single_precision", "single_precision_ln", '''
        def layer_norm(x: np.ndarray, gamma: np.ndarray = None, beta: np.ndarray = None,
                       eps: float = 1e-5) -> np.ndarray:
            x = x.astype(np.float32)
            mu = x.mean(axis=-1, keepdims=True)
            var = x.var(axis=-1, keepdims=True)
            y = (x - mu) / np.sqrt(var + eps)
            if gamma is not None:
                y = y * gamma
            if beta is not None:
                y = y + beta
            return y
    '''),
    wrong(PART, "shift_before_scale", "shift_then_scale", '''
        def layer_norm(x: np.ndarray, gamma: np.ndarray = None, beta: np.ndarray = None,
                       eps: float = 1e-5) -> np.ndarray:
            d = x.shape[-1]
            gamma = np.ones(d) if gamma is None else gamma
            beta = np.zeros(d) if beta is None else beta
            mu = x.mean(axis=-1, keepdims=True)
            var = x.var(axis=-1, keepdims=True)
            return ((x - mu) / np.sqrt(var + eps) + beta) * gamma
    '''),
    wrong(PART, "beta_assumed_with_gamma", "beta_assumed_with_gamma", '''
        def layer_norm(x: np.ndarray, gamma: np.ndarray = None, beta: np.ndarray = None,
                       eps: float = 1e-5) -> np.ndarray:
            x_hat = (x - x.mean(axis=-1, keepdims=True)) / np.sqrt(x.var(axis=-1, keepdims=True) + eps)
            if gamma is not None:
                return gamma * x_hat + beta
            return x_hat
    '''),
    wrong(PART, "eps_left_out", "eps_ignored", '''
        def layer_norm(x: np.ndarray, gamma: np.ndarray = None, beta: np.ndarray = None,
                       eps: float = 1e-5) -> np.ndarray:
            gamma = 1.0 if gamma is None else gamma
            beta = 0.0 if beta is None else beta
            return gamma * (x - x.mean(-1, keepdims=True)) / x.std(-1, keepdims=True) + beta
    '''),
    wrong(PART, "divided_by_the_variance", "no_sqrt", '''
        def layer_norm(x: np.ndarray, gamma: np.ndarray = None, beta: np.ndarray = None,
                       eps: float = 1e-5) -> np.ndarray:
            mean = np.mean(x, axis=-1, keepdims=True)
            var = np.mean((x - mean) ** 2, axis=-1, keepdims=True)
            out = (x - mean) / (var + eps)
            if gamma is not None:
                out = gamma * out
            if beta is not None:
                out = out + beta
            return out
    '''),
    wrong(PART, "default_eps_too_small", None, '''
        def layer_norm(x: np.ndarray, gamma: np.ndarray = None, beta: np.ndarray = None,
                       eps: float = 1e-6) -> np.ndarray:
            mu = x.mean(-1, keepdims=True)
            out = (x - mu) / np.sqrt(x.var(-1, keepdims=True) + eps)
            if gamma is not None:
                out = out * gamma
            if beta is not None:
                out = out + beta
            return out
    '''),
    wrong(PART, "statistics_over_axis_one", "over_axis1", '''
        def layer_norm(x: np.ndarray, gamma: np.ndarray = None, beta: np.ndarray = None,
                       eps: float = 1e-5) -> np.ndarray:
            d = x.shape[-1]
            gamma = np.ones(d) if gamma is None else gamma
            beta = np.zeros(d) if beta is None else beta
            centred = x - x.mean(axis=1, keepdims=True)
            return gamma * centred / np.sqrt((centred ** 2).mean(axis=1, keepdims=True) + eps) + beta
    '''),
    wrong(PART, "defaults_only_as_a_pair", "both_defaulted", '''
        def layer_norm(x: np.ndarray, gamma: np.ndarray = None, beta: np.ndarray = None,
                       eps: float = 1e-5) -> np.ndarray:
            x_hat = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps)
            if gamma is not None and beta is not None:
                return gamma * x_hat + beta
            return x_hat
    '''),
]

CORRECT = [
    correct(PART, "mean_of_squares_minus_square_of_mean", '''
        def layer_norm(x: np.ndarray, gamma: np.ndarray = None, beta: np.ndarray = None,
                       eps: float = 1e-5) -> np.ndarray:
            d = x.shape[-1]
            mu = np.sum(x, axis=-1, keepdims=True) / d
            var = np.sum(x * x, axis=-1, keepdims=True) / d - mu ** 2
            out = (x - mu) / np.sqrt(var + eps)
            if gamma is not None:
                out = gamma * out
            if beta is not None:
                out = out + beta
            return out
    '''),
    correct(PART, "np_var_with_defaults", '''
        def layer_norm(x: np.ndarray, gamma: np.ndarray = None, beta: np.ndarray = None,
                       eps: float = 1e-5) -> np.ndarray:
            gamma = np.ones(x.shape[-1]) if gamma is None else gamma
            beta = np.zeros(x.shape[-1]) if beta is None else beta
            x_hat = (x - x.mean(axis=-1, keepdims=True)) / np.sqrt(x.var(axis=-1, keepdims=True) + eps)
            return gamma * x_hat + beta
    '''),
    correct(PART, "loop_over_vectors", '''
        def layer_norm(x: np.ndarray, gamma: np.ndarray = None, beta: np.ndarray = None,
                       eps: float = 1e-5) -> np.ndarray:
            d = x.shape[-1]
            rows = x.reshape(-1, d)
            out = np.empty(rows.shape)
            for r, row in enumerate(rows):
                mean = sum(row) / d
                var = sum((v - mean) ** 2 for v in row) / d
                out[r] = (row - mean) / (var + eps) ** 0.5
            if gamma is not None:
                out = out * gamma
            if beta is not None:
                out = out + beta
            return out.reshape(x.shape)
    '''),
]
