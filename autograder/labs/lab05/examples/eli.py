# %% layer_norm
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    y = (x - mu) / np.sqrt(var + eps)
    while np.abs(y.mean()) > 0:      # "make sure the mean is exactly zero"
        y = y - y.mean()
    if gamma is not None:
        y = gamma * y + beta
    return y
