"""TransformerBlock: wrong and correct versions of `forward` under the given constructor."""
from . import correct, with_forward, wrong

PART = "TransformerBlock"

CONSTRUCTOR = '''class TransformerBlock:
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
'''


def block(forward: str) -> str:
    return with_forward(CONSTRUCTOR, forward)


WRONG = [
    wrong(PART, "post_norm_like_the_paper", "post_norm", block('''
        def forward(self, x: np.ndarray) -> np.ndarray:
            x = layer_norm(x + self.attention.forward(x, causal=True), self.ln1_gamma, self.ln1_beta)
            ffn = feedforward(x, self.W1, self.b1, self.W2, self.b2)
            return layer_norm(x + ffn, self.ln2_gamma, self.ln2_beta)
    ''')),
    wrong(PART, "residual_from_t1", "residual_from_normalised", block('''
        def forward(self, x: np.ndarray) -> np.ndarray:
            x = layer_norm(x, self.ln1_gamma, self.ln1_beta)
            x = x + self.attention.forward(x, causal=True)
            h = layer_norm(x, self.ln2_gamma, self.ln2_beta)
            return x + feedforward(h, self.W1, self.b1, self.W2, self.b2)
    ''')),
    wrong(PART, "second_residual_from_t4", "second_residual_from_normalised", block('''
        def forward(self, x: np.ndarray) -> np.ndarray:
            t3 = x + self.attention.forward(layer_norm(x, self.ln1_gamma, self.ln1_beta), causal=True)
            t4 = layer_norm(t3, self.ln2_gamma, self.ln2_beta)
            return t4 + feedforward(t4, self.W1, self.b1, self.W2, self.b2)
    ''')),
    wrong(PART, "ln1_copied_into_ln2", "ln1_used_twice", block('''
        def forward(self, x: np.ndarray) -> np.ndarray:
            t1 = layer_norm(x, self.ln1_gamma, self.ln1_beta)
            t3 = self.attention.forward(t1, causal=True) + x
            t4 = layer_norm(t3, self.ln1_gamma, self.ln1_beta)
            return feedforward(t4, self.W1, self.b1, self.W2, self.b2) + t3
    ''')),
    wrong(PART, "causal_not_passed", "attention_not_causal", block('''
        def forward(self, x: np.ndarray) -> np.ndarray:
            t1 = layer_norm(x, self.ln1_gamma, self.ln1_beta)
            t3 = self.attention.forward(t1) + x
            t4 = layer_norm(t3, self.ln2_gamma, self.ln2_beta)
            return feedforward(t4, self.W1, self.b1, self.W2, self.b2) + t3
    ''')),
    wrong(PART, "default_layer_norms", "ln_params_ignored", block('''
        def forward(self, x: np.ndarray) -> np.ndarray:
            h = x + self.attention.forward(layer_norm(x), causal=True)
            return h + feedforward(layer_norm(h), self.W1, self.b1, self.W2, self.b2)
    ''')),
    wrong(PART, "ffn_without_residual", "no_ffn_residual", block('''
        def forward(self, x: np.ndarray) -> np.ndarray:
            t3 = x + self.attention.forward(layer_norm(x, self.ln1_gamma, self.ln1_beta), causal=True)
            return feedforward(layer_norm(t3, self.ln2_gamma, self.ln2_beta),
                               self.W1, self.b1, self.W2, self.b2)
    ''')),
    wrong(PART, "residual_added_in_place", "in_place", block('''
        def forward(self, x: np.ndarray) -> np.ndarray:
            x += self.attention.forward(layer_norm(x, self.ln1_gamma, self.ln1_beta), causal=True)
            x += feedforward(layer_norm(x, self.ln2_gamma, self.ln2_beta), self.W1, self.b1, self.W2, self.b2)
            return x
    ''')),
    wrong(PART, "dropout_from_the_global_rng", None, block('''
        def forward(self, x: np.ndarray, p_drop: float = 0.1) -> np.ndarray:
            def dropout(h):
                keep = np.random.rand(*h.shape) > p_drop
                return h * keep / (1 - p_drop)
            t3 = x + dropout(self.attention.forward(layer_norm(x, self.ln1_gamma, self.ln1_beta), causal=True))
            t4 = layer_norm(t3, self.ln2_gamma, self.ln2_beta)
            return t3 + dropout(feedforward(t4, self.W1, self.b1, self.W2, self.b2))
    ''')),
    wrong(PART, "ffn_normalises_the_block_input", "second_ln_on_input", block('''
        def forward(self, x: np.ndarray) -> np.ndarray:
            attn = self.attention.forward(layer_norm(x, self.ln1_gamma, self.ln1_beta), causal=True)
            ffn = feedforward(layer_norm(x, self.ln2_gamma, self.ln2_beta), self.W1, self.b1, self.W2, self.b2)
            return x + attn + ffn
    ''')),
    wrong(PART, "layer_norm_parameters_swapped", "ln_params_swapped", block('''
        def forward(self, x: np.ndarray) -> np.ndarray:
            t1 = layer_norm(x, self.ln2_gamma, self.ln2_beta)
            t3 = x + self.attention.forward(t1, causal=True)
            t4 = layer_norm(t3, self.ln1_gamma, self.ln1_beta)
            return t3 + feedforward(t4, self.W1, self.b1, self.W2, self.b2)
    ''')),
    wrong(PART, "attention_without_residual", "no_attention_residual", block('''
        def forward(self, x: np.ndarray) -> np.ndarray:
            h = self.attention.forward(layer_norm(x, self.ln1_gamma, self.ln1_beta), causal=True)
            return h + feedforward(layer_norm(h, self.ln2_gamma, self.ln2_beta), self.W1, self.b1, self.W2, self.b2)
    ''')),
    wrong(PART, "stream_replaced_by_its_norm", "residuals_from_normalised", block('''
        def forward(self, x: np.ndarray) -> np.ndarray:
            h = layer_norm(x, self.ln1_gamma, self.ln1_beta)
            h = h + self.attention.forward(h, causal=True)
            h = layer_norm(h, self.ln2_gamma, self.ln2_beta)
            return h + feedforward(h, self.W1, self.b1, self.W2, self.b2)
    ''')),
    wrong(PART, "ffn_residual_from_the_input", "second_residual_from_input", block('''
        def forward(self, x: np.ndarray) -> np.ndarray:
            t3 = x + self.attention.forward(layer_norm(x, self.ln1_gamma, self.ln1_beta), causal=True)
            t5 = feedforward(layer_norm(t3, self.ln2_gamma, self.ln2_beta), self.W1, self.b1, self.W2, self.b2)
            return x + t5
    ''')),
]

CORRECT = [
    correct(PART, "one_line_per_equation", block('''
        def forward(self, x: np.ndarray) -> np.ndarray:
            t1 = layer_norm(x, self.ln1_gamma, self.ln1_beta)               # 8.40
            t2 = self.attention.forward(t1, causal=True)                     # 8.41
            t3 = t2 + x                                                      # 8.42
            t4 = layer_norm(t3, self.ln2_gamma, self.ln2_beta)              # 8.43
            t5 = feedforward(t4, self.W1, self.b1, self.W2, self.b2)        # 8.44
            return t5 + t3                                                   # 8.45
    ''')),
    correct(PART, "residual_on_a_copy", block('''
        def forward(self, x: np.ndarray) -> np.ndarray:
            h = x.copy()
            h += self.attention.forward(layer_norm(h, self.ln1_gamma, self.ln1_beta), True)
            h += feedforward(layer_norm(h, self.ln2_gamma, self.ln2_beta), self.W1, self.b1, self.W2, self.b2)
            return h
    ''')),
    correct(PART, "sublayer_helper", block('''
        def forward(self, x: np.ndarray) -> np.ndarray:
            def sublayer(h, gamma, beta, f):
                return h + f(layer_norm(h, gamma, beta))
            h = sublayer(x, self.ln1_gamma, self.ln1_beta, lambda t: self.attention.forward(t, causal=True))
            return sublayer(h, self.ln2_gamma, self.ln2_beta,
                            lambda t: feedforward(t, self.W1, self.b1, self.W2, self.b2))
    ''')),
]
