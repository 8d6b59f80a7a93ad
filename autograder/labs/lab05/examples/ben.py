# %% softmax
def softmax(z):
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)

# %% scaled_dot_product_attention
def scaled_dot_product_attention(Q, K, V):
    weights = softmax(Q @ K.T / Q.shape[1])
    return weights @ V, weights
