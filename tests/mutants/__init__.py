"""Mutant banks: realistic student answers, right and wrong, for tests/test_mutants.py.

Each lab has a folder named like its package (`tests/mutants/lab05/` for autograder/labs/lab05),
found by tests/test_mutants.py without a list. The folder's `__init__` may set `MIN_WRONG`,
`MIN_CORRECT` and `MIN_PER_PART` (wrong mutants at least, per part); each other module exports
`WRONG` and `CORRECT`: lists of `Mutant`s whose `code` is a whole answer cell, as a student
would submit it. A wrong mutant's `diagnosis` is the key of the catalogued mistake (the lab's
mistakes.py) it should be diagnosed as, DERIVED followed by the opening words of the message of
a mistake the grader derives from the reference (autograder/derived.py; MAYBE_DERIVED: that one,
where the salt's inputs show it, or none), or None when the mistake
cannot be recognised from outputs (in-place updates, crashes, a missing return, random numbers);
the check's own message then has to explain it.
"""
import textwrap
from dataclasses import dataclass


DERIVED = "derived: "
MAYBE_DERIVED = "derived or none: "


@dataclass(frozen=True)
class Mutant:
    part: str
    name: str
    code: str
    diagnosis: str | None = None


def wrong(part: str, name: str, diagnosis: str | None, code: str) -> Mutant:
    return Mutant(part, name, textwrap.dedent(code).strip() + "\n", diagnosis)


def correct(part: str, name: str, code: str) -> Mutant:
    return Mutant(part, name, textwrap.dedent(code).strip() + "\n")


def with_forward(constructor: str, forward: str) -> str:
    """A class cell: the constructor given in the notebook, then the student's `forward`."""
    return constructor.rstrip("\n") + "\n\n" + textwrap.indent(textwrap.dedent(forward).strip(), "    ")
