# %% softmax
def softmax(z):
    z = z - z.max(axis=-1, keepdims=True)
    return np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True)

# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V):
    w = softmax(Q @ K.T / np.sqrt(K.shape[1]))
    return w @ V, w

# %% causal_attention
def causal_attention(Q, K, V):
    n = len(Q)
    scores = Q @ K.T / np.sqrt(K.shape[1])
    scores = np.where(np.tril(np.ones((n, n), dtype=bool)), scores, -np.inf)
    w = softmax(scores)
    return w @ V, w
