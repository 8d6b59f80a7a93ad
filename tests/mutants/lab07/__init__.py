"""A bank of realistic student answers to Lab 07, right and wrong.

Each graded name has a module exporting `PART`, `WRONG` and `CORRECT`: lists of `Mutant`s whose
`code` is a whole answer cell, as a student would submit it. A wrong mutant's `diagnosis` is
the key of the catalogued mistake (autograder/labs/lab07/mistakes.py) it should be diagnosed
as, or of a cause the checks name themselves (`in_place`, `foreign_rng`, `no_return`:
autograder/checks.py GENERIC), or None when nothing names it (a float64 result for float32
input); the check's own message then has to explain it. The helpers are Lab 05's (tests/mutants).
"""
from mutants import DERIVED, MAYBE_DERIVED, Mutant, correct, wrong

__all__ = ["DERIVED", "MAYBE_DERIVED", "Mutant", "correct", "wrong"]
MODULES = ("rope_frequencies", "apply_rope", "rope_attention", "kv_attention_step", "dropout",
           "attention_support")
MIN_WRONG, MIN_CORRECT = 45, 18
MIN_PER_PART = dict.fromkeys(("rope_frequencies", "apply_rope", "rope_attention", "kv_attention_step",
                              "dropout", "attention_support"), 6)
TRIVIAL_SHARE = 0.125   # most of a part that odd results (zeros, the input, ...) may earn
