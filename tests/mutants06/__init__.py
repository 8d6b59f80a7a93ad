"""A bank of realistic student answers to Lab 06, right and wrong, for tests/test_mutants.py.

Each graded name has a module exporting `WRONG` and `CORRECT`: lists of `Mutant`s whose `code`
is a whole answer cell, as a student would submit it. A wrong mutant's `diagnosis` is the key
of the catalogued mistake (autograder/labs/lab06/mistakes.py) it should be diagnosed as, or
None when the mistake cannot be recognised from outputs (in-place updates, crashes, a missing
return, randomness that does not come from the given generator); the check's own message then
has to explain it. The helpers are Lab 05's (tests/mutants).
"""
from mutants import Mutant, correct, wrong

__all__ = ["Mutant", "correct", "wrong"]
