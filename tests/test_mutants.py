"""The hidden suites against their mutant banks (tests/mutants/, tests/mutants06/) and their own
mistake catalogues.

A student namespace is the reference solutions run as notebook cells, with one answer cell
replaced by a mutant's code. Every wrong mutant must lose points in its own part and nowhere
else, and be diagnosed as the catalogued mistake it embodies; every correct alternative must
earn full marks. `pytest -s` prints each bank's figures.
"""
import functools
from dataclasses import dataclass

import numpy as np
import pytest

from autograder import labs, notebooks
from autograder.checks import run_part
from autograder.runners import LocalRunner
from conftest import ROOT
from mutants import (causal_attention, feedforward, layer_norm, mini_transformer_lm,
                     multi_head_attention, positional_encoding, scaled_dot_product_attention,
                     softmax, transformer_block)
from mutants06 import (adamw_update, attention_backward, attention_entropy, build_vocab,
                       cross_entropy, cross_entropy_backward, decode, embedding_backward, encode,
                       gelu_backward, get_batch, layer_norm_backward, linear_backward,
                       next_token_probs, relu_backward, sample_token)


@dataclass(frozen=True, eq=False)     # hashed by identity: graded() caches per bank
class Bank:
    assignment: str
    modules: tuple
    min_wrong: int          # wrong mutants in all
    min_correct: int        # correct alternatives in all
    min_per_part: dict      # part -> wrong mutants at least (default 2)

    def __repr__(self):
        return self.assignment

    @property
    def suite(self):
        return labs.load(self.assignment).suite

    @property
    def wrong(self) -> list:
        return [m for module in self.modules for m in module.WRONG]

    @property
    def correct(self) -> list:
        return [m for module in self.modules for m in module.CORRECT]

    @property
    def messages(self) -> dict:
        return {(m.part, m.key): m.message for p in self.suite.parts.values() for m in p.mistakes}

    @property
    def release(self):
        return notebooks.read(ROOT / "assignments" / self.assignment / f"{self.assignment}.ipynb")

    def namespace(self, *cells) -> dict:
        """A fresh notebook namespace: the reference solutions, then `cells` run on top."""
        ns: dict = {}
        for source in (labs.reference_path(self.assignment).read_text(), *cells):
            exec(compile(source, "<cell>", "exec"), ns)
        return ns

    def grade(self, ns: dict) -> dict:
        """Every part, in notebook order, graded on `ns`: name -> PartResult."""
        suite = self.suite
        return {name: run_part(suite, name, LocalRunner(ns, suite.reference)) for name in suite.parts}


BANKS = [
    Bank("lab05_transformers",
         (softmax, scaled_dot_product_attention, causal_attention, multi_head_attention,
          positional_encoding, layer_norm, feedforward, transformer_block, mini_transformer_lm),
         min_wrong=45, min_correct=12, min_per_part=dict.fromkeys(labs.load("lab05_transformers").suite.parts, 3)),
    Bank("lab06_training",
         (build_vocab, encode, decode, get_batch, cross_entropy, cross_entropy_backward,
          linear_backward, relu_backward, gelu_backward, layer_norm_backward, attention_backward,
          embedding_backward, adamw_update, next_token_probs, sample_token, attention_entropy),
         min_wrong=48, min_correct=16,
         min_per_part=dict.fromkeys(("cross_entropy_backward", "linear_backward", "gelu_backward",
                                     "layer_norm_backward", "attention_backward", "embedding_backward",
                                     "get_batch", "next_token_probs", "sample_token"), 3)),
]
BY_LAB = {bank.assignment: bank for bank in BANKS}
WRONG = [(bank, m) for bank in BANKS for m in bank.wrong]
NAMED = [(bank, m) for bank, m in WRONG if m.diagnosis]
CORRECT = [(bank, m) for bank in BANKS for m in bank.correct]
MISTAKES = [(bank, m) for bank in BANKS for p in bank.suite.parts.values() for m in p.mistakes]
PARTS = [(bank, name) for bank in BANKS for name in bank.suite.parts]


def ids(pairs) -> list:
    return [f"{bank.assignment}/{m.part}/{getattr(m, 'name', getattr(m, 'key', ''))}" for bank, m in pairs]


@functools.cache
def graded(bank: Bank, mutant) -> dict:
    return bank.grade(bank.namespace(mutant.code))


def lost(result) -> float:
    return result.max_score - result.score


def diagnoses(result) -> list:
    return [c.diagnosis for c in result.checks if c.status == "failed" and c.diagnosis]


def diagnosed(bank: Bank, mutant) -> bool:
    expected = bank.messages.get((mutant.part, mutant.diagnosis))
    return expected is not None and expected in diagnoses(graded(bank, mutant)[mutant.part])


def outside_losses(bank: Bank, mutant) -> dict:
    return {name: lost(r) for name, r in graded(bank, mutant).items() if name != mutant.part and lost(r)}


# ----------------------------------------------------------------------------- the banks themselves

@pytest.mark.parametrize("bank", BANKS, ids=repr)
def test_the_bank_covers_every_part(bank):
    assert len(bank.wrong) >= bank.min_wrong and len(bank.correct) >= bank.min_correct
    assert [module.PART for module in bank.modules] == list(bank.suite.parts)
    for name in bank.suite.parts:
        assert sum(m.part == name for m in bank.wrong) >= bank.min_per_part.get(name, 2), name
        assert any(m.part == name for m in bank.correct), name
    pairs = [(m.part, m.name) for m in bank.wrong + bank.correct]
    assert len(set(pairs)) == len(pairs), "duplicate names"


@pytest.mark.parametrize("bank,mutant", NAMED, ids=ids(NAMED))
def test_diagnosis_keys_are_catalogued_in_the_mutants_part(bank, mutant):
    assert (mutant.part, mutant.diagnosis) in bank.messages


@pytest.mark.parametrize("module", [multi_head_attention, transformer_block, mini_transformer_lm],
                         ids=lambda m: m.PART)
def test_class_mutants_keep_the_given_constructor(module):
    """Students edit `forward` only: the constructor is the release notebook's, verbatim."""
    stub = notebooks.answer_cells(BY_LAB["lab05_transformers"].release)[module.PART]
    constructor = stub[:stub.index("    def forward")].rstrip("\n")
    assert module.CONSTRUCTOR.rstrip("\n") == constructor
    for mutant in module.WRONG + module.CORRECT:
        assert mutant.code.startswith(constructor + "\n\n    def forward"), mutant.name


def test_gelu_mutants_keep_the_given_constant():
    """Students write below the given GELU_C line of the gelu_backward cell, which stays as it is."""
    stub = notebooks.answer_cells(BY_LAB["lab06_training"].release)["gelu_backward"]
    given = stub[:stub.index("def gelu_backward")]
    for mutant in gelu_backward.WRONG + gelu_backward.CORRECT:
        assert mutant.code.startswith(given), mutant.name


# ------------------------------------------------------------------------------- wrong answers

@pytest.mark.parametrize("bank,mutant", WRONG, ids=ids(WRONG))
def test_wrong_mutant_loses_points_in_its_own_part_only(bank, mutant):
    assert lost(graded(bank, mutant)[mutant.part]) > 0, f"{mutant.name} earns full marks: a check is missing"
    assert outside_losses(bank, mutant) == {}


@pytest.mark.parametrize("bank,mutant", NAMED, ids=ids(NAMED))
def test_wrong_mutant_gets_its_diagnosis(bank, mutant):
    assert diagnosed(bank, mutant), (f"expected {mutant.diagnosis!r}; got "
                                     f"{diagnoses(graded(bank, mutant)[mutant.part]) or 'no diagnosis'}")


@pytest.mark.parametrize("bank", BANKS, ids=repr)
def test_bank_figures(bank):
    """Caught: loses points in its part. Diagnosed: its catalogued message is shown. False alarms:
    points lost outside the mutant's part, or by a correct alternative."""
    wrong, correct = bank.wrong, bank.correct
    caught = sum(lost(graded(bank, m)[m.part]) > 0 for m in wrong)
    named = sum(diagnosed(bank, m) for m in wrong)
    false_alarms = sum(bool(outside_losses(bank, m)) for m in wrong) + \
        sum(any(lost(r) for r in graded(bank, m).values()) for m in correct)
    per_part = ", ".join(f"{name} {sum(m.part == name for m in wrong)}/{sum(m.part == name for m in correct)}"
                         for name in bank.suite.parts)
    figures = (f"{bank.assignment} mutant bank: {len(wrong)} wrong, {len(correct)} correct (wrong/correct "
               f"per part: {per_part}); caught {caught}/{len(wrong)}, diagnosed {named}/{len(wrong)} "
               f"({100 * named / len(wrong):.0f}%), false alarms {false_alarms}")
    print("\n" + figures)
    assert caught == len(wrong) and named >= 0.9 * len(wrong) and false_alarms == 0, figures


# ------------------------------------------------------------------------------ right answers

@pytest.mark.parametrize("bank,mutant", CORRECT, ids=ids(CORRECT))
def test_correct_alternative_earns_full_marks(bank, mutant):
    failed = {name: [(c.title, c.message) for c in r.checks if c.status != "passed"]
              for name, r in graded(bank, mutant).items() if lost(r)}
    assert failed == {}


@pytest.mark.parametrize("bank", BANKS, ids=repr)
def test_reference_earns_100_and_the_release_stub_0(bank):
    assert sum(r.score for r in bank.grade(bank.namespace()).values()) == 100
    stubs = [c.source for c in bank.release.cells if notebooks.is_answer(c) or notebooks.is_support(c)]
    stub = bank.namespace("import math\nimport numpy as np", *stubs)
    assert {name: r.score for name, r in bank.grade(stub).items()} == dict.fromkeys(bank.suite.parts, 0.0)


@pytest.mark.parametrize("bank", BANKS, ids=repr)
def test_grading_is_deterministic(bank):
    """One diagnosed wrong answer per part, graded twice: the same scores and messages."""
    firsts = {}
    for mutant in bank.wrong:
        if mutant.diagnosis:
            firsts.setdefault(mutant.part, mutant.code)
    ns = bank.namespace(*firsts.values())
    first, second = bank.grade(ns), bank.grade(ns)
    assert first == second
    assert all(lost(r) for r in first.values())


# ------------------------------------------------------------------- results of the wrong kind

def each_array(value, f):
    """`value` with `f` applied to every array in it (tuples, lists and dicts are walked)."""
    if isinstance(value, np.ndarray):
        return f(value)
    if isinstance(value, (tuple, list)):
        return type(value)(each_array(v, f) for v in value)
    if isinstance(value, dict):
        return {k: each_array(v, f) for k, v in value.items()}
    return type(value)()          # numbers and strings: the zero of their type


ODD_RESULTS = {    # what careless code returns instead of the reference's result r for arguments a
    "None": lambda r, a: None,
    "a string": lambda r, a: "done",
    "its first argument": lambda r, a: a[0],
    "a scalar": lambda r, a: np.float64(1.0),
    "a tuple of Nones": lambda r, a: (None, None),
    "empty arrays": lambda r, a: np.zeros((0,)),
    "zeros of the right structure": lambda r, a: each_array(r, np.zeros_like),
    "complex arrays": lambda r, a: each_array(r, lambda x: x + 0j),
    "nested lists": lambda r, a: each_array(r, np.ndarray.tolist),
}
TRIVIAL_SHARE = {"lab05_transformers": 0.2, "lab06_training": 0.125}


def returning(bank: Bank, name: str, odd) -> dict:
    """The reference namespace, with `name` returning `odd` of the reference's result."""
    ns = bank.namespace()
    original = ns[name]
    if bank.suite.kinds[name] == "class":
        forward = lambda self, *a, **k: odd(original.forward(self, *a, **k), a)  # noqa: E731
        ns[name] = type(name, (original,), {"forward": forward})
    else:
        ns[name] = lambda *a, **k: odd(original(*a, **k), a)
    return ns


@pytest.mark.parametrize("bank,name", PARTS, ids=[f"{b.assignment}/{n}" for b, n in PARTS])
@pytest.mark.parametrize("odd", ODD_RESULTS, ids=str)
def test_odd_results_earn_little_and_never_break_the_grader(bank, name, odd):
    """Checks fail on values of the wrong kind without raising out of run_part, and a result
    that computes nothing earns at most the checks of shape."""
    suite = bank.suite
    result = run_part(suite, name, LocalRunner(returning(bank, name, ODD_RESULTS[odd]), suite.reference))
    assert result.score <= TRIVIAL_SHARE[bank.assignment] * result.max_score, \
        [c.title for c in result.checks if c.score]


# ---------------------------------------------------------------------- the mistake catalogue

@pytest.mark.parametrize("bank,mistake", MISTAKES, ids=ids(MISTAKES))
def test_catalogued_mistake_is_caught_and_diagnosed_as_itself(bank, mistake):
    """Being named requires differing from the reference on some check's inputs, so a mistake
    that passes this test is distinguishable from the reference, and from earlier entries."""
    suite = bank.suite
    result = run_part(suite, mistake.part, LocalRunner(suite.namespace_with(mistake), suite.reference))
    assert lost(result) > 0
    assert mistake.message in diagnoses(result), diagnoses(result)
