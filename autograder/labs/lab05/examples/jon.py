# %% layer_norm
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    mean = np.mean(x, axis=-1, keepdims=True)
    std = np.std(x, axis=-1, keepdims=True)
    out = (x - mean) / (std + eps)
    if gamma is not None:
        out = out * gamma
    if beta is not None:
        out = out + beta
    return out

# %% feedforward
def feedforward(x, W1, b1, W2, b2):
    h = x @ W1 + b1
    h = 0.5 * h * (1 + np.tanh(np.sqrt(2 / np.pi) * (h + 0.044715 * h ** 3)))
    return h @ W2 + b2
