"""The hidden suite against the mutant bank (tests/mutants/) and its own mistake catalogue.

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
from conftest import ASSIGNMENT, ROOT
from mutants import (causal_attention, feedforward, layer_norm, mini_transformer_lm,
                     multi_head_attention, positional_encoding, scaled_dot_product_attention,
                     softmax, transformer_block)

SUITE = labs.load(ASSIGNMENT).suite
REFERENCE_CODE = labs.reference_path(ASSIGNMENT).read_text()
RELEASE = ROOT / "assignments" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
MODULES = (softmax, scaled_dot_product_attention, causal_attention, multi_head_attention,
           positional_encoding, layer_norm, feedforward, transformer_block, mini_transformer_lm)
WRONG = [m for module in MODULES for m in module.WRONG]
NAMED = [m for m in WRONG if m.diagnosis]     # wrong mutants with a catalogued diagnosis
CORRECT = [m for module in MODULES for m in module.CORRECT]
MISTAKES = [m for part in SUITE.parts.values() for m in part.mistakes]
MESSAGES = {(m.part, m.key): m.message for m in MISTAKES}


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
    assert len(WRONG) >= 45 and len(CORRECT) >= 12
    for name in SUITE.parts:
        assert sum(m.part == name for m in WRONG) >= 3, name
    assert len({(m.part, m.name) for m in WRONG + CORRECT}) == len(WRONG + CORRECT), "duplicate names"


@pytest.mark.parametrize("mutant", NAMED, ids=ids(NAMED))
def test_diagnosis_keys_are_catalogued_in_the_mutants_part(mutant):
    assert (mutant.part, mutant.diagnosis) in MESSAGES


@pytest.mark.parametrize("module", [multi_head_attention, transformer_block, mini_transformer_lm],
                         ids=lambda m: m.PART)
def test_class_mutants_keep_the_given_constructor(module):
    """Students edit `forward` only: the constructor is the release notebook's, verbatim."""
    stub = notebooks.answer_cells(notebooks.read(RELEASE))[module.PART]
    constructor = stub[:stub.index("    def forward")].rstrip("\n")
    assert module.CONSTRUCTOR.rstrip("\n") == constructor
    for mutant in module.WRONG + module.CORRECT:
        assert mutant.code.startswith(constructor + "\n\n    def forward"), mutant.name


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
    figures = (f"mutant bank: {len(WRONG)} wrong, {len(CORRECT)} correct (wrong/correct per part: "
               f"{per_part}); caught {caught}/{len(WRONG)}, diagnosed {named}/{len(WRONG)} "
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
    stub = namespace("import numpy as np", *notebooks.answer_cells(notebooks.read(RELEASE)).values())
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

ODD_RESULTS = {    # what careless code returns instead of the reference's result r
    "None": lambda r: None,
    "a string": lambda r: "done",
    "a scalar": lambda r: np.float64(1.0),
    "nested lists": lambda r: r.tolist() if isinstance(r, np.ndarray) else [x.tolist() for x in r],
    "complex arrays": lambda r: r + 0j if isinstance(r, np.ndarray) else tuple(x + 0j for x in r),
    "integer arrays": lambda r: r.astype(int) if isinstance(r, np.ndarray) else
    tuple(x.astype(int) for x in r),
    "empty arrays": lambda r: np.zeros((0,)),
    "a tuple of Nones": lambda r: (None, None),
    "zeros of the right shapes": lambda r: np.zeros_like(r) if isinstance(r, np.ndarray) else
    tuple(np.zeros_like(x) for x in r),
}


def returning(name: str, odd) -> dict:
    """The reference namespace, with `name` returning `odd` of the reference's result."""
    ns = namespace()
    original = ns[name]
    if SUITE.kinds[name] == "class":
        forward = lambda self, *a, **k: odd(original.forward(self, *a, **k))  # noqa: E731
        ns[name] = type(name, (original,), {"forward": forward})
    else:
        ns[name] = lambda *a, **k: odd(original(*a, **k))
    return ns


@pytest.mark.parametrize("name", SUITE.parts)
@pytest.mark.parametrize("odd", ODD_RESULTS, ids=str)
def test_odd_results_earn_little_and_never_break_the_grader(name, odd):
    """Checks fail on values of the wrong kind without raising out of run_part, and a result
    that computes nothing earns at most the checks of shape and of untouched inputs."""
    result = run_part(SUITE, name, LocalRunner(returning(name, ODD_RESULTS[odd]), SUITE.reference))
    assert result.score <= 0.2 * result.max_score, [c.title for c in result.checks if c.score]


# ---------------------------------------------------------------------- the mistake catalogue

@pytest.mark.parametrize("mistake", MISTAKES, ids=[f"{m.part}/{m.key}" for m in MISTAKES])
def test_catalogued_mistake_is_caught_and_diagnosed_as_itself(mistake):
    """Being named requires differing from the reference on some check's inputs, so a mistake
    that passes this test is distinguishable from the reference, and from earlier entries."""
    result = run_part(SUITE, mistake.part, LocalRunner(SUITE.namespace_with(mistake), SUITE.reference))
    assert lost(result) > 0
    assert mistake.message in diagnoses(result), diagnoses(result)
