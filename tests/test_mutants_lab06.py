"""The Lab 06 hidden suite against its mutant bank (tests/mutants06/) and its mistake catalogue.

A student namespace is the reference solutions run as notebook cells, with one answer cell
replaced by a mutant's code. Every wrong mutant must lose points in its own part and nowhere
else, and be diagnosed as the catalogued mistake it embodies; every correct alternative must
earn full marks. `pytest -s` prints the bank's figures.
"""
import functools

import numpy as np
import pytest

from autograder import labs, notebooks
from autograder.checks import run_part
from autograder.runners import LocalRunner
from conftest import ROOT
from mutants06 import (adamw_update, attention_backward, attention_entropy, build_vocab, cross_entropy,
                       cross_entropy_backward, decode, embedding_backward, encode, gelu_backward,
                       get_batch, layer_norm_backward, linear_backward, next_token_probs, relu_backward,
                       sample_token)

ASSIGNMENT = "lab06_training"
SUITE = labs.load(ASSIGNMENT).suite
REFERENCE_CODE = labs.reference_path(ASSIGNMENT).read_text()
RELEASE = ROOT / "assignments" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
MODULES = (build_vocab, encode, decode, get_batch, cross_entropy, cross_entropy_backward,
           linear_backward, relu_backward, gelu_backward, layer_norm_backward, attention_backward,
           embedding_backward, adamw_update, next_token_probs, sample_token, attention_entropy)
WRONG = [m for module in MODULES for m in module.WRONG]
NAMED = [m for m in WRONG if m.diagnosis]     # wrong mutants with a catalogued diagnosis
CORRECT = [m for module in MODULES for m in module.CORRECT]
MISTAKES = [m for part in SUITE.parts.values() for m in part.mistakes]
MESSAGES = {(m.part, m.key): m.message for m in MISTAKES}
DEEPER = {"cross_entropy_backward", "linear_backward", "gelu_backward", "layer_norm_backward",
          "attention_backward", "embedding_backward", "get_batch", "next_token_probs", "sample_token"}


def ids(mutants) -> list:
    return [f"{m.part}/{m.name}" for m in mutants]


def namespace(*cells) -> dict:
    """A fresh notebook namespace: the reference solutions, then `cells` run on top."""
    ns: dict = {}
    for source in (REFERENCE_CODE, *cells):
        exec(compile(source, "<cell>", "exec"), ns)
    return ns


def grade(ns: dict) -> dict:
    """Every part of the suite, in notebook order, graded on `ns`: name -> PartResult."""
    return {name: run_part(SUITE, name, LocalRunner(ns, SUITE.reference)) for name in SUITE.parts}


@functools.cache
def graded(mutant) -> dict:
    return grade(namespace(mutant.code))


def lost(result) -> float:
    return result.max_score - result.score


def diagnoses(result) -> list:
    return [c.diagnosis for c in result.checks if c.status == "failed" and c.diagnosis]


def diagnosed(mutant) -> bool:
    expected = MESSAGES.get((mutant.part, mutant.diagnosis))
    return expected is not None and expected in diagnoses(graded(mutant)[mutant.part])


def outside_losses(mutant) -> dict:
    return {name: lost(r) for name, r in graded(mutant).items() if name != mutant.part and lost(r)}


# ----------------------------------------------------------------------------- the bank itself

def test_the_bank_covers_every_part():
    """At least 2 wrong answers per name, 3 for the backward passes, batching and sampling."""
    assert len(WRONG) >= 48 and len(CORRECT) >= 16
    for name in SUITE.parts:
        assert sum(m.part == name for m in WRONG) >= (3 if name in DEEPER else 2), name
        assert sum(m.part == name for m in CORRECT) >= 1, name
    assert [module.PART for module in MODULES] == list(SUITE.parts)
    assert len({(m.part, m.name) for m in WRONG + CORRECT}) == len(WRONG + CORRECT), "duplicate names"


@pytest.mark.parametrize("mutant", NAMED, ids=ids(NAMED))
def test_diagnosis_keys_are_catalogued_in_the_mutants_part(mutant):
    assert (mutant.part, mutant.diagnosis) in MESSAGES


def test_gelu_mutants_keep_the_given_constant():
    """Students write below the given GELU_C line of the gelu_backward cell, which stays as it is."""
    stub = notebooks.answer_cells(notebooks.read(RELEASE))["gelu_backward"]
    given = stub[:stub.index("def gelu_backward")]
    for mutant in gelu_backward.WRONG + gelu_backward.CORRECT:
        assert mutant.code.startswith(given), mutant.name


# ------------------------------------------------------------------------------- wrong answers

@pytest.mark.parametrize("mutant", WRONG, ids=ids(WRONG))
def test_wrong_mutant_loses_points_in_its_own_part_only(mutant):
    results = graded(mutant)
    assert lost(results[mutant.part]) > 0, f"{mutant.name} earns full marks: a check is missing"
    assert outside_losses(mutant) == {}


@pytest.mark.parametrize("mutant", NAMED, ids=ids(NAMED))
def test_wrong_mutant_gets_its_diagnosis(mutant):
    assert diagnosed(mutant), (f"expected {mutant.diagnosis!r}; got "
                               f"{diagnoses(graded(mutant)[mutant.part]) or 'no diagnosis'}")


def test_bank_figures():
    """Caught: loses points in its part. Diagnosed: its catalogued message is shown. False alarms:
    points lost outside the mutant's part, or by a correct alternative."""
    caught = sum(lost(graded(m)[m.part]) > 0 for m in WRONG)
    named = sum(diagnosed(m) for m in WRONG)
    false_alarms = sum(bool(outside_losses(m)) for m in WRONG) + \
        sum(any(lost(r) for r in graded(m).values()) for m in CORRECT)
    per_part = ", ".join(f"{name} {sum(m.part == name for m in WRONG)}/"
                         f"{sum(m.part == name for m in CORRECT)}" for name in SUITE.parts)
    figures = (f"Lab 06 mutant bank: {len(WRONG)} wrong, {len(CORRECT)} correct (wrong/correct per "
               f"part: {per_part}); caught {caught}/{len(WRONG)}, diagnosed {named}/{len(WRONG)} "
               f"({100 * named / len(WRONG):.0f}%), false alarms {false_alarms}")
    print("\n" + figures)
    assert caught == len(WRONG) and named >= 0.9 * len(WRONG) and false_alarms == 0, figures


# ------------------------------------------------------------------------------ right answers

@pytest.mark.parametrize("mutant", CORRECT, ids=ids(CORRECT))
def test_correct_alternative_earns_full_marks(mutant):
    failed = {name: [(c.title, c.message) for c in r.checks if c.status != "passed"]
              for name, r in graded(mutant).items() if lost(r)}
    assert failed == {}


def test_reference_earns_100_and_the_release_stub_0():
    reference = grade(namespace())
    assert sum(r.score for r in reference.values()) == 100
    stubs = notebooks.answer_cells(notebooks.read(RELEASE)).values()
    stub = namespace("import math\nimport numpy as np", *stubs)
    assert {name: r.score for name, r in grade(stub).items()} == dict.fromkeys(SUITE.parts, 0.0)


def test_grading_is_deterministic():
    """One diagnosed wrong answer per part, graded twice: the same scores and messages."""
    firsts = {}
    for mutant in NAMED:
        firsts.setdefault(mutant.part, mutant.code)
    ns = namespace(*firsts.values())
    first, second = grade(ns), grade(ns)
    assert first == second
    assert all(lost(r) for r in first.values())


# ------------------------------------------------------------------- results of the wrong kind

def zeros_like(value):
    """A result of the reference's structure that computes nothing: zeros, empty strings."""
    if isinstance(value, tuple):
        return tuple(map(zeros_like, value))
    if isinstance(value, np.ndarray):
        return np.zeros_like(value)
    if isinstance(value, list):
        return [zeros_like(v) for v in value]
    if isinstance(value, dict):
        return dict.fromkeys(value, 0)
    return type(value)()


ODD_RESULTS = {    # what careless code returns instead of the reference's result r for arguments a
    "None": lambda r, a: None,
    "a string": lambda r, a: "done",
    "its first argument": lambda r, a: a[0],
    "zeros of the right structure": lambda r, a: zeros_like(r),
}


def returning(name: str, odd) -> dict:
    """The reference namespace, with `name` returning `odd` of the reference's result."""
    ns = namespace()
    original = ns[name]
    ns[name] = lambda *a, **k: odd(original(*a, **k), a)
    return ns


@pytest.mark.parametrize("name", SUITE.parts)
@pytest.mark.parametrize("odd", ODD_RESULTS, ids=str)
def test_odd_results_earn_little_and_never_break_the_grader(name, odd):
    """Checks fail on values of the wrong kind without raising out of run_part, and a result
    that computes nothing earns at most the checks of shape."""
    result = run_part(SUITE, name, LocalRunner(returning(name, ODD_RESULTS[odd]), SUITE.reference))
    assert result.score <= 0.125 * result.max_score, [c.title for c in result.checks if c.score]


# ---------------------------------------------------------------------- the mistake catalogue

@pytest.mark.parametrize("mistake", MISTAKES, ids=[f"{m.part}/{m.key}" for m in MISTAKES])
def test_catalogued_mistake_is_caught_and_diagnosed_as_itself(mistake):
    """Being named requires differing from the reference on some check's inputs, so a mistake
    that passes this test is distinguishable from the reference, and from earlier entries."""
    result = run_part(SUITE, mistake.part, LocalRunner(SUITE.namespace_with(mistake), SUITE.reference))
    assert lost(result) > 0
    assert mistake.message in diagnoses(result), diagnoses(result)
