"""Lab 06's bank: realistic answers to each graded name, right and wrong (see tests/mutants).

Each graded name has a module exporting `WRONG` and `CORRECT`: lists of `Mutant`s whose `code`
is a whole answer cell, as a student would submit it. A wrong mutant's `diagnosis` is the key
of the catalogued mistake (autograder/labs/lab06/mistakes.py) it should be diagnosed as,
DERIVED and the opening words of a derived mistake's message (autograder/derived.py), or
None when the mistake cannot be recognised from outputs (in-place updates, crashes, a missing
return, randomness that does not come from the given generator); the check's own message then
has to explain it.
"""
from mutants import DERIVED, MAYBE_DERIVED, Mutant, correct, wrong

__all__ = ["DERIVED", "MAYBE_DERIVED", "Mutant", "correct", "wrong"]
MIN_WRONG, MIN_CORRECT = 48, 16
MIN_PER_PART = dict.fromkeys(("cross_entropy_backward", "linear_backward", "gelu_backward", "layer_norm_backward",
                              "attention_backward", "embedding_backward", "get_batch", "next_token_probs",
                              "sample_token"), 3)
TRIVIAL_SHARE = 0.125   # most of a part that odd results (zeros, the input, ...) may earn
