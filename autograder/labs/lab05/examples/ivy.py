# %% TransformerBlock
class TransformerBlock:
    """Pre-norm transformer block, SLP eqs. 8.40-8.45."""

    def __init__(self, d_model: int, n_heads: int, d_ff: int, seed: int = 0):
        rng = np.random.default_rng([seed, 1])  # separate stream from the attention's seed
        self.attention = MultiHeadAttention(d_model, n_heads, seed=seed)
        self.ln1_gamma, self.ln1_beta = np.ones(d_model), np.zeros(d_model)
        self.ln2_gamma, self.ln2_beta = np.ones(d_model), np.zeros(d_model)
        self.W1 = 0.02 * rng.standard_normal((d_model, d_ff))
        self.b1 = np.zeros(d_ff)
        self.W2 = 0.02 * rng.standard_normal((d_ff, d_model))
        self.b2 = np.zeros(d_model)

    def forward(self, x):
        h = layer_norm(x + self.attention.forward(x, causal=True), self.ln1_gamma, self.ln1_beta)
        return layer_norm(h + feedforward(h, self.W1, self.b1, self.W2, self.b2), self.ln2_gamma, self.ln2_beta)

# %% MiniTransformerLM
class MiniTransformerLM:
    """Decoder-only transformer language model, SLP sections 8.4-8.5.

    token_ids -> E[token_ids] + PE[:N] -> L x TransformerBlock -> LayerNorm -> logits = H E^T
    """

    def __init__(self, vocab_size: int, d_model: int = 64, n_heads: int = 4, n_layers: int = 2,
                 max_len: int = 128, seed: int = 0):
        rng = np.random.default_rng(seed)
        self.vocab_size, self.d_model, self.max_len = vocab_size, d_model, max_len
        self.token_embeddings = 0.02 * rng.standard_normal((vocab_size, d_model))  # E, (|V|, d)
        self.pos_encodings = positional_encoding(max_len, d_model)                # (max_len, d)
        self.blocks = [TransformerBlock(d_model, n_heads, 4 * d_model, seed=seed + 1 + i)
                       for i in range(n_layers)]
        self.final_ln_gamma, self.final_ln_beta = np.ones(d_model), np.zeros(d_model)

    def forward(self, token_ids):
        x = self.token_embeddings[token_ids] + self.pos_encodings[:len(token_ids)]
        for block in self.blocks:
            x = block.forward(x)
        return x @ self.token_embeddings.T
