"""layer_norm_backward: wrong and correct answers."""
from . import correct, wrong

PART = "layer_norm_backward"

WRONG = [
    wrong(PART, "computed_in_float32", "computed_in_float32", '''
        def layer_norm_backward(dy, x, gamma, eps=1e-5):
            dy, x, gamma = dy.astype(np.float32), x.astype(np.float32), gamma.astype(np.float32)
            d = x.shape[-1]
            mu = x.mean(-1, keepdims=True)
            inv = 1.0 / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + eps)
            xhat = (x - mu) * inv
            g = dy * gamma
            dx = inv * (g - g.mean(-1, keepdims=True) - xhat * (g * xhat).mean(-1, keepdims=True))
            return dx, (dy * xhat).reshape(-1, d).sum(0), dy.reshape(-1, d).sum(0)
    '''),
    wrong(PART, "as_if_mu_and_sigma_were_constants", "no_mean_terms", '''
        def layer_norm_backward(dy, x, gamma, eps=1e-5):
            mu = x.mean(axis=-1, keepdims=True)
            sigma = np.sqrt(x.var(axis=-1, keepdims=True) + eps)
            xhat = (x - mu) / sigma
            C = x.shape[-1]
            return dy * gamma / sigma, (dy * xhat).reshape(-1, C).sum(0), dy.reshape(-1, C).sum(0)
    '''),
    wrong(PART, "only_the_mean_term", "no_sigma_term", '''
        def layer_norm_backward(dy, x, gamma, eps=1e-5):
            mu = x.mean(axis=-1, keepdims=True)
            sigma = np.sqrt(((x - mu) ** 2).mean(axis=-1, keepdims=True) + eps)
            xhat = (x - mu) / sigma
            g = dy * gamma
            dx = (g - g.mean(axis=-1, keepdims=True)) / sigma
            C = x.shape[-1]
            return dx, (dy * xhat).reshape(-1, C).sum(axis=0), dy.reshape(-1, C).sum(axis=0)
    '''),
    wrong(PART, "only_the_sigma_term", "no_mu_term", '''
        def layer_norm_backward(dy, x, gamma, eps=1e-5):
            mu = x.mean(axis=-1, keepdims=True)
            sigma = np.sqrt(((x - mu) ** 2).mean(axis=-1, keepdims=True) + eps)
            xhat = (x - mu) / sigma
            g = dy * gamma
            dx = (g - xhat * (g * xhat).mean(axis=-1, keepdims=True)) / sigma
            C = x.shape[-1]
            return dx, (dy * xhat).reshape(-1, C).sum(axis=0), dy.reshape(-1, C).sum(axis=0)
    '''),
    wrong(PART, "gamma_forgotten_in_dx", "gamma_missing", '''
        def layer_norm_backward(dy, x, gamma, eps=1e-5):
            C = x.shape[-1]
            mu = x.mean(axis=-1, keepdims=True)
            rstd = 1 / np.sqrt(x.var(axis=-1, keepdims=True) + eps)
            xhat = (x - mu) * rstd
            dx = rstd * (dy - dy.mean(-1, keepdims=True) - xhat * (dy * xhat).mean(-1, keepdims=True))
            return dx, (dy * xhat).reshape(-1, C).sum(0), dy.reshape(-1, C).sum(0)
    '''),
    wrong(PART, "dgamma_from_raw_x", "dgamma_unnormalised", '''
        def layer_norm_backward(dy, x, gamma, eps=1e-5):
            C = x.shape[-1]
            mu = x.mean(axis=-1, keepdims=True)
            rstd = 1 / np.sqrt(x.var(axis=-1, keepdims=True) + eps)
            xhat = (x - mu) * rstd
            g = dy * gamma
            dx = rstd * (g - g.mean(-1, keepdims=True) - xhat * (g * xhat).mean(-1, keepdims=True))
            return dx, (dy * x).reshape(-1, C).sum(0), dy.reshape(-1, C).sum(0)
    '''),
    wrong(PART, "dbeta_averaged", "dbeta_mean", '''
        def layer_norm_backward(dy, x, gamma, eps=1e-5):
            C = x.shape[-1]
            mu = x.mean(axis=-1, keepdims=True)
            rstd = 1 / np.sqrt(x.var(axis=-1, keepdims=True) + eps)
            xhat = (x - mu) * rstd
            g = dy * gamma
            dx = rstd * (g - g.mean(-1, keepdims=True) - xhat * (g * xhat).mean(-1, keepdims=True))
            return dx, (dy * xhat).reshape(-1, C).sum(0), dy.reshape(-1, C).mean(0)
    '''),
    wrong(PART, "parameter_sums_over_axis_0", "sums_over_first_axis", '''
        def layer_norm_backward(dy, x, gamma, eps=1e-5):
            mu = x.mean(axis=-1, keepdims=True)
            rstd = 1 / np.sqrt(x.var(axis=-1, keepdims=True) + eps)
            xhat = (x - mu) * rstd
            g = dy * gamma
            dx = rstd * (g - g.mean(-1, keepdims=True) - xhat * (g * xhat).mean(-1, keepdims=True))
            return dx, np.sum(dy * xhat, axis=0), np.sum(dy, axis=0)
    '''),
    wrong(PART, "eps_on_the_std", "eps_outside_sqrt", '''
        def layer_norm_backward(dy, x, gamma, eps=1e-5):
            C = x.shape[-1]
            mu = x.mean(axis=-1, keepdims=True)
            sigma = x.std(axis=-1, keepdims=True) + eps
            xhat = (x - mu) / sigma
            g = dy * gamma
            dx = (g - g.mean(-1, keepdims=True) - xhat * (g * xhat).mean(-1, keepdims=True)) / sigma
            return dx, (dy * xhat).reshape(-1, C).sum(0), dy.reshape(-1, C).sum(0)
    '''),
    wrong(PART, "eps_hard_coded", "eps_fixed", '''
        def layer_norm_backward(dy, x, gamma, eps=1e-5):
            C = x.shape[-1]
            mu = x.mean(axis=-1, keepdims=True)
            rstd = 1 / np.sqrt(x.var(axis=-1, keepdims=True) + 1e-5)
            xhat = (x - mu) * rstd
            g = dy * gamma
            dx = rstd * (g - g.mean(-1, keepdims=True) - xhat * (g * xhat).mean(-1, keepdims=True))
            return dx, (dy * xhat).reshape(-1, C).sum(0), dy.reshape(-1, C).sum(0)
    '''),
    wrong(PART, "sample_variance", "unbiased_variance", '''
        def layer_norm_backward(dy, x, gamma, eps=1e-5):
            C = x.shape[-1]
            mu = x.mean(axis=-1, keepdims=True)
            rstd = 1 / np.sqrt(x.var(axis=-1, ddof=1, keepdims=True) + eps)
            xhat = (x - mu) * rstd
            g = dy * gamma
            dx = rstd * (g - g.mean(-1, keepdims=True) - xhat * (g * xhat).mean(-1, keepdims=True))
            return dx, (dy * xhat).reshape(-1, C).sum(0), dy.reshape(-1, C).sum(0)
    '''),
    wrong(PART, "divided_by_the_variance", "divided_by_variance", '''
        def layer_norm_backward(dy, x, gamma, eps=1e-5):
            C = x.shape[-1]
            mu = x.mean(axis=-1, keepdims=True)
            var = x.var(axis=-1, keepdims=True) + eps
            xhat = (x - mu) / np.sqrt(var)
            g = dy * gamma
            dx = (g - g.mean(-1, keepdims=True) - xhat * (g * xhat).mean(-1, keepdims=True)) / var
            return dx, (dy * xhat).reshape(-1, C).sum(0), dy.reshape(-1, C).sum(0)
    '''),
    wrong(PART, "sigma_without_eps", "eps_left_out", '''
        def layer_norm_backward(dy, x, gamma, eps=1e-5):
            xc = x - x.mean(axis=-1, keepdims=True)
            sigma = np.sqrt((xc ** 2).mean(axis=-1, keepdims=True))
            xhat, g = xc / sigma, dy * gamma
            dx = (g - g.mean(axis=-1, keepdims=True) - xhat * (g * xhat).mean(axis=-1, keepdims=True)) / sigma
            lead = tuple(range(x.ndim - 1))
            return dx, (dy * xhat).sum(axis=lead), dy.sum(axis=lead)
    '''),
]

CORRECT = [
    correct(PART, "one_pass_variance", '''
        def layer_norm_backward(dy, x, gamma, eps=1e-5):
            d = x.shape[-1]
            mu = x.mean(-1, keepdims=True)
            var = (x * x).mean(-1, keepdims=True) - mu * mu     # E[x²] - μ²: fine unless |μ| >> σ
            inv = 1.0 / np.sqrt(var + eps)
            xhat = (x - mu) * inv
            g = dy * gamma
            dx = inv * (g - g.mean(-1, keepdims=True) - xhat * (g * xhat).mean(-1, keepdims=True))
            return dx, (dy * xhat).reshape(-1, d).sum(0), dy.reshape(-1, d).sum(0)
    '''),
    correct(PART, "sums_over_C", '''
        def layer_norm_backward(dy, x, gamma, eps=1e-5):
            C = x.shape[-1]
            mu = np.mean(x, axis=-1, keepdims=True)
            rstd = (np.var(x, axis=-1, keepdims=True) + eps) ** -0.5
            xhat = (x - mu) * rstd
            g = dy * gamma
            dx = rstd / C * (C * g - g.sum(-1, keepdims=True) - xhat * (g * xhat).sum(-1, keepdims=True))
            lead = tuple(range(x.ndim - 1))
            return dx, (dy * xhat).sum(axis=lead), dy.sum(axis=lead)
    '''),
    correct(PART, "staged_through_mean_and_variance", '''
        def layer_norm_backward(dy, x, gamma, eps=1e-5):
            C = x.shape[-1]
            mu = x.mean(axis=-1, keepdims=True)
            xc = x - mu
            var = (xc ** 2).mean(axis=-1, keepdims=True)
            std = np.sqrt(var + eps)
            xhat = xc / std
            dxhat = dy * gamma
            dvar = np.sum(dxhat * xc, axis=-1, keepdims=True) * -0.5 * (var + eps) ** -1.5
            dmu = -np.sum(dxhat / std, axis=-1, keepdims=True) - dvar * 2 * xc.mean(axis=-1, keepdims=True)
            dx = dxhat / std + dvar * 2 * xc / C + dmu / C
            return dx, (dy * xhat).reshape(-1, C).sum(0), dy.reshape(-1, C).sum(0)
    '''),
    correct(PART, "einsum_parameter_sums", '''
        def layer_norm_backward(dy, x, gamma, eps=1e-5):
            xc = x - x.mean(axis=-1, keepdims=True)
            sigma = np.sqrt(np.mean(xc * xc, axis=-1, keepdims=True) + eps)
            xhat = xc / sigma
            g = dy * gamma
            dx = (g - g.mean(-1, keepdims=True) - xhat * np.mean(g * xhat, -1, keepdims=True)) / sigma
            rows = lambda a: a.reshape(-1, a.shape[-1])
            return dx, np.einsum("nc,nc->c", rows(dy), rows(xhat)), np.einsum("nc->c", rows(dy))
    '''),
]
