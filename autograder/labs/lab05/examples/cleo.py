# %% MultiHeadAttention
class MultiHeadAttention:
    """Multi-head self-attention, SLP eqs. 8.35-8.37."""

    def __init__(self, d_model: int, n_heads: int, seed: int = 0):
        if d_model % n_heads:
            raise ValueError("d_model must be divisible by n_heads")
        rng = np.random.default_rng(seed)
        self.d_model = d_model
        self.n_heads = n_heads
        self.d_k = d_model // n_heads  # d_k = d_v = d / A
        # (d_model, d_model) each; head c uses columns c*d_k:(c+1)*d_k of W_Q, W_K, W_V
        self.W_Q = 0.02 * rng.standard_normal((d_model, d_model))
        self.W_K = 0.02 * rng.standard_normal((d_model, d_model))
        self.W_V = 0.02 * rng.standard_normal((d_model, d_model))
        self.W_O = 0.02 * rng.standard_normal((d_model, d_model))

    def forward(self, X, causal=False):
        n = X.shape[0]
        Q = (X @ self.W_Q).reshape(self.n_heads, n, self.d_k)
        K = (X @ self.W_K).reshape(self.n_heads, n, self.d_k)
        V = (X @ self.W_V).reshape(self.n_heads, n, self.d_k)
        heads = []
        for c in range(self.n_heads):
            if causal:
                out, _ = causal_attention(Q[c], K[c], V[c])
            else:
                out, _ = scaled_dot_product_attention(Q[c], K[c], V[c])
            heads.append(out)
        return np.concatenate(heads, axis=-1) @ self.W_O

# %% positional_encoding
def positional_encoding(max_len, d_model):
    PE = np.zeros((max_len, d_model))
    for pos in range(max_len):
        for i in range(0, d_model, 2):
            angle = pos / 10000 ** (i / d_model)
            PE[pos, i] = np.cos(angle)
            PE[pos, i + 1] = np.sin(angle)
    return PE
