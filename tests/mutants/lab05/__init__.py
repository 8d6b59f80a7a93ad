"""Lab 05's bank: realistic answers to each graded name, right and wrong (see tests/mutants)."""
from mutants import DERIVED, MAYBE_DERIVED, Mutant, correct, with_forward, wrong

__all__ = ["DERIVED", "MAYBE_DERIVED", "Mutant", "correct", "with_forward", "wrong"]
MIN_WRONG, MIN_CORRECT = 45, 12
MIN_PER_PART = dict.fromkeys(("softmax", "scaled_dot_product_attention", "causal_attention",
                              "MultiHeadAttention", "positional_encoding", "layer_norm", "feedforward",
                              "TransformerBlock", "MiniTransformerLM"), 3)
TRIVIAL_SHARE = 0.2   # most of a part that odd results (zeros, the input, ...) may earn
