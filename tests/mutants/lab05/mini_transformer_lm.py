"""MiniTransformerLM: wrong and correct versions of `forward` under the given constructor."""
from . import correct, with_forward, wrong

PART = "MiniTransformerLM"

CONSTRUCTOR = '''class MiniTransformerLM:
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
'''


def lm(forward: str) -> str:
    return with_forward(CONSTRUCTOR, forward)


WRONG = [
    wrong(PART, "head_without_transpose", "head_not_transposed", lm('''
        def forward(self, token_ids: np.ndarray) -> np.ndarray:
            h = self.token_embeddings[token_ids] + self.pos_encodings[:len(token_ids)]
            for block in self.blocks:
                h = block.forward(h)
            h = layer_norm(h, self.final_ln_gamma, self.final_ln_beta)
            return h @ self.token_embeddings
    ''')),
    wrong(PART, "final_layer_norm_forgotten", "no_final_ln", lm('''
        def forward(self, token_ids: np.ndarray) -> np.ndarray:
            x = self.token_embeddings[token_ids] + self.pos_encodings[:len(token_ids)]
            for block in self.blocks:
                x = block.forward(x)
            return x @ self.token_embeddings.T
    ''')),
    wrong(PART, "positions_forgotten", "no_positions", lm('''
        def forward(self, token_ids: np.ndarray) -> np.ndarray:
            h = self.token_embeddings[np.asarray(token_ids)]
            for block in self.blocks:
                h = block.forward(h)
            h = layer_norm(h, self.final_ln_gamma, self.final_ln_beta)
            return h @ self.token_embeddings.T
    ''')),
    wrong(PART, "positions_from_one", "positions_offset", lm('''
        def forward(self, token_ids: np.ndarray) -> np.ndarray:
            n = len(token_ids)
            x = self.token_embeddings[token_ids] + self.pos_encodings[1:n + 1]
            for block in self.blocks:
                x = block.forward(x)
            x = layer_norm(x, self.final_ln_gamma, self.final_ln_beta)
            return x @ self.token_embeddings.T
    ''')),
    wrong(PART, "embeddings_times_sqrt_d", "scaled_embeddings", lm('''
        def forward(self, token_ids: np.ndarray) -> np.ndarray:
            n = len(token_ids)
            x = self.token_embeddings[token_ids] * np.sqrt(self.d_model) + self.pos_encodings[:n]
            for block in self.blocks:
                x = block.forward(x)
            x = layer_norm(x, self.final_ln_gamma, self.final_ln_beta)
            return x @ self.token_embeddings.T
    ''')),
    wrong(PART, "softmax_at_the_end", "probabilities", lm('''
        def forward(self, token_ids: np.ndarray) -> np.ndarray:
            x = self.token_embeddings[token_ids] + self.pos_encodings[:len(token_ids)]
            for block in self.blocks:
                x = block.forward(x)
            x = layer_norm(x, self.final_ln_gamma, self.final_ln_beta)
            return softmax(x @ self.token_embeddings.T)
    ''')),
    wrong(PART, "final_layer_norm_defaults", "final_ln_params_ignored", lm('''
        def forward(self, token_ids: np.ndarray) -> np.ndarray:
            x = self.token_embeddings[token_ids] + self.pos_encodings[:len(token_ids)]
            for block in self.blocks:
                x = block.forward(x)
            return layer_norm(x) @ self.token_embeddings.T
    ''')),
    wrong(PART, "blocks_not_chained", "last_block_only", lm('''
        def forward(self, token_ids: np.ndarray) -> np.ndarray:
            x = self.token_embeddings[token_ids] + self.pos_encodings[:len(token_ids)]
            for block in self.blocks:
                h = block.forward(x)
            h = layer_norm(h, self.final_ln_gamma, self.final_ln_beta)
            return h @ self.token_embeddings.T
    ''')),
    wrong(PART, "positions_indexed_by_token", "positions_by_token", lm('''
        def forward(self, token_ids: np.ndarray) -> np.ndarray:
            x = self.token_embeddings[token_ids] + self.pos_encodings[token_ids]
            for block in self.blocks:
                x = block.forward(x)
            x = layer_norm(x, self.final_ln_gamma, self.final_ln_beta)
            return x @ self.token_embeddings.T
    ''')),
    wrong(PART, "log_softmax_at_the_end", "log_probabilities", lm('''
        def forward(self, token_ids: np.ndarray) -> np.ndarray:
            x = self.token_embeddings[token_ids] + self.pos_encodings[:len(token_ids)]
            for block in self.blocks:
                x = block.forward(x)
            logits = layer_norm(x, self.final_ln_gamma, self.final_ln_beta) @ self.token_embeddings.T
            return np.log(softmax(logits))
    ''')),
    wrong(PART, "return_inside_the_loop", "first_block_only", lm('''
        def forward(self, token_ids: np.ndarray) -> np.ndarray:
            x = self.token_embeddings[token_ids] + self.pos_encodings[:len(token_ids)]
            for block in self.blocks:
                x = block.forward(x)
                x = layer_norm(x, self.final_ln_gamma, self.final_ln_beta)
                return x @ self.token_embeddings.T
    ''')),
    wrong(PART, "next_token_logits_only", "last_position_only", lm('''
        def forward(self, token_ids: np.ndarray) -> np.ndarray:
            x = self.token_embeddings[token_ids] + self.pos_encodings[:len(token_ids)]
            for block in self.blocks:
                x = block.forward(x)
            h = layer_norm(x[-1], self.final_ln_gamma, self.final_ln_beta)  # predict the next token
            return h @ self.token_embeddings.T
    ''')),
    wrong(PART, "final_norm_inside_the_loop", "final_ln_in_loop", lm('''
        def forward(self, token_ids: np.ndarray) -> np.ndarray:
            x = self.token_embeddings[token_ids] + self.pos_encodings[:len(token_ids)]
            for block in self.blocks:
                x = block.forward(x)
                x = layer_norm(x, self.final_ln_gamma, self.final_ln_beta)
            return x @ self.token_embeddings.T
    ''')),
    wrong(PART, "residual_around_each_block", "block_output_added", lm('''
        def forward(self, token_ids: np.ndarray) -> np.ndarray:
            x = self.token_embeddings[token_ids] + self.pos_encodings[:len(token_ids)]
            for block in self.blocks:
                x = x + block.forward(x)  # residual connection
            x = layer_norm(x, self.final_ln_gamma, self.final_ln_beta)
            return x @ self.token_embeddings.T
    ''')),
    wrong(PART, "positions_added_at_the_end", "positions_after_blocks", lm('''
        def forward(self, token_ids: np.ndarray) -> np.ndarray:
            x = self.token_embeddings[token_ids]
            for block in self.blocks:
                x = block.forward(x)
            x = x + self.pos_encodings[:len(token_ids)]
            x = layer_norm(x, self.final_ln_gamma, self.final_ln_beta)
            return x @ self.token_embeddings.T
    ''')),
]

CORRECT = [
    correct(PART, "one_hot_embedding_lookup", lm('''
        def forward(self, token_ids: np.ndarray) -> np.ndarray:
            one_hot = np.eye(self.vocab_size)[token_ids]            # (N, |V|)
            x = one_hot @ self.token_embeddings + self.pos_encodings[: one_hot.shape[0]]
            for block in self.blocks:
                x = block.forward(x)
            h = layer_norm(x, self.final_ln_gamma, self.final_ln_beta)
            return np.einsum("nd,vd->nv", h, self.token_embeddings)
    ''')),
    correct(PART, "list_comprehension_lookup", lm('''
        def forward(self, token_ids: np.ndarray) -> np.ndarray:
            x = np.array([self.token_embeddings[t] + self.pos_encodings[i]
                          for i, t in enumerate(token_ids)])
            for block in self.blocks:
                x = block.forward(x)
            return layer_norm(x, self.final_ln_gamma, self.final_ln_beta) @ self.token_embeddings.T
    ''')),
    correct(PART, "np_take_lookup", lm('''
        def forward(self, token_ids: np.ndarray) -> np.ndarray:
            n = np.size(token_ids)
            x = np.take(self.token_embeddings, token_ids, axis=0) + self.pos_encodings[np.arange(n)]
            for i in range(len(self.blocks)):
                x = self.blocks[i].forward(x)
            x = layer_norm(x, gamma=self.final_ln_gamma, beta=self.final_ln_beta)
            return np.dot(x, self.token_embeddings.T)
    ''')),
]
