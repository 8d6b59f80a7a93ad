"""The hidden suites against their mutant banks (tests/mutants/<lab package>/, found by looking)
and their own mistake catalogues.

A student namespace is the reference solutions run as notebook cells, with one answer cell
replaced by a mutant's code. Every wrong mutant must lose points in its own part and nowhere
else, and be diagnosed as the catalogued mistake it declares (or, declaring None, get no
diagnosis): a diagnosis is never wrong. Every correct alternative must earn full marks. Hidden
inputs are salted per student, so the bank also runs under two other salts (the mutant's own
part only: the other parts are graded with the reference and cannot change). `pytest -s`
prints each bank's figures.
"""
import functools
import importlib
import pkgutil
from dataclasses import dataclass

import answers
import mutations
import numpy as np
import pytest

from autograder import conditions, labs, notebooks, relations, verdict
from autograder.checks import ALIKE, FLOAT32, GENERIC, CheckFailed, NotCredited, Trial, run_part
from autograder.runners import LocalRunner
from mutants import DERIVED, MAYBE_DERIVED
from conftest import ROOT


@dataclass(frozen=True, eq=False)     # hashed by identity: graded() caches per bank
class Bank:
    assignment: str
    modules: tuple
    min_wrong: int          # wrong mutants in all
    min_correct: int        # correct alternatives in all
    min_per_part: dict      # part -> wrong mutants at least (default 2)
    trivial_share: float    # most of a part that odd results (zeros, the input, ...) may earn

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
        catalogue = {(m.part, m.key): m.message for p in self.suite.parts.values() for m in p.mistakes}
        return catalogue | {(name, m.key): m.message for name in self.suite.parts for m in GENERIC}

    @property
    def release(self):
        return notebooks.read(ROOT / "assignments" / self.assignment / f"{self.assignment}.ipynb")

    def namespace(self, *cells) -> dict:
        """A fresh notebook namespace: the reference solutions, then `cells` run on top."""
        ns: dict = {}
        for source in (labs.reference_path(self.assignment).read_text(), *cells):
            exec(compile(source, "<cell>", "exec"), ns)
        return ns

    def grade(self, ns: dict, salt: bytes = b"", only: str | None = None) -> dict:
        """Every part (or part `only`), in notebook order, graded on `ns`: name -> PartResult."""
        suite = self.suite
        return {name: run_part(suite, name, LocalRunner(ns, suite.reference), salt)
                for name in suite.parts if only in (None, name)}


def find_banks() -> list:
    """One bank per lab package that has a folder tests/mutants/<package>/."""
    banks = []
    for assignment, package in labs.packages().items():
        folder = ROOT / "tests" / "mutants" / package
        if not (folder / "__init__.py").exists():
            continue
        bank = importlib.import_module(f"mutants.{package}")
        order = list(labs.load(assignment).suite.parts)
        found = [importlib.import_module(f"mutants.{package}.{info.name}")
                 for info in pkgutil.iter_modules([str(folder)])]
        modules = tuple(sorted(found, key=lambda m: order.index(m.PART) if m.PART in order else len(order)))
        banks.append(Bank(assignment, modules, getattr(bank, "MIN_WRONG", 1), getattr(bank, "MIN_CORRECT", 1),
                          getattr(bank, "MIN_PER_PART", {}), getattr(bank, "TRIVIAL_SHARE", 0.125)))
    return banks


BANKS = find_banks()
BY_LAB = {bank.assignment: bank for bank in BANKS}
SALTS = [b"", pytest.param(b"student-a7f3", marks=pytest.mark.full), pytest.param(b"student-19c2", marks=pytest.mark.full)]
SALT_VALUES = [b"", b"student-a7f3", b"student-19c2"]
WRONG = [(bank, m) for bank in BANKS for m in bank.wrong]
NAMED = [(bank, m) for bank, m in WRONG if m.diagnosis and not m.diagnosis.startswith(MAYBE_DERIVED)]
CORRECT = [(bank, m) for bank in BANKS for m in bank.correct]
MIN_DIAGNOSED = 0.9     # of the wrong mutants, and correctly of those diagnosed
MISTAKES = [(bank, m) for bank in BANKS for p in bank.suite.parts.values() for m in p.mistakes if m.impl]
PARTS = [(bank, name) for bank in BANKS for name in bank.suite.parts]


def ids(pairs) -> list:
    return [f"{bank.assignment}/{m.part}/{getattr(m, 'name', getattr(m, 'key', ''))}" for bank, m in pairs]


@functools.cache
def graded(bank: Bank, mutant, salt: bytes = b"", every_part: bool = False) -> dict:
    """The mutant's own part, or `every_part` (the others are graded with the official earlier
    parts, so a mistake cannot reach them: shown in the full tier)."""
    return bank.grade(bank.namespace(mutant.code), salt, only=None if every_part else mutant.part)


def lost(result) -> float:
    return result.max_score - result.score


def diagnoses(result) -> list:
    return [c.diagnosis for c in result.checks if c.status == "failed" and c.diagnosis]


def declared(bank: Bank, mutant, message: str) -> bool:
    """`message` names the mutant's declared mistake: its catalogued mistake's, or one the grader
    derives from the reference (DERIVED or MAYBE_DERIVED, then the message's opening words)."""
    if mutant.diagnosis and mutant.diagnosis.startswith((DERIVED, MAYBE_DERIVED)):
        return message.startswith(mutant.diagnosis.split(": ", 1)[1])
    return message == bank.messages.get((mutant.part, mutant.diagnosis))


def diagnosed(bank: Bank, mutant, salt: bytes = b"") -> bool:
    """Its declared mistake is named, and nothing else."""
    shown = set(diagnoses(graded(bank, mutant, salt)[mutant.part]))
    return len(shown) == 1 and declared(bank, mutant, shown.pop())


def misdiagnosed(bank: Bank, mutant, salt: bytes = b"") -> set:
    """The diagnoses shown that are not the mutant's declared mistake, nor a derived mistake or a
    relation that is right for it anyway (a mutant declared None may be named by those)."""
    return {d for d in diagnoses(graded(bank, mutant, salt)[mutant.part])
            if not (declared(bank, mutant, d) or relation_said(d) or derived_and_right(bank, mutant, d))}


def relation_said(message: str) -> bool:
    """A relation of the wrong results to the right ones, the condition the calls with wrong
    results alone meet, or what an exception names: true of them by construction (relations.py,
    conditions.py, verdict.KNOWN_EXCEPTIONS)."""
    templates = [value for name, value in vars(relations).items() if name.isupper() and isinstance(value, str)]
    return message.startswith(tuple(t.split("{")[0] for t in templates + [conditions.WRONG])) or \
        message in {cause for _, cause, _ in verdict.KNOWN_EXCEPTIONS}


def derived_and_right(bank: Bank, mutant, message: str) -> bool:
    """A derived mistake the message names gives the mutant's results on another salt's hidden
    calls too: the name is right for it, not a coincidence of one salt's inputs."""
    named = [m for m in bank.suite.derived(mutant.part) if m.message in message.split(ALIKE)]
    calls = mutations.hidden_calls(bank.assignment, mutant.part, mutations.PROBE_SALTS[0])
    mine = mutations.outcomes(bank.namespace(mutant.code), calls)
    return any(mutations.same(mine, mutations.outcomes(bank.suite.namespace_with(m), calls), calls) for m in named)


def outside_losses(bank: Bank, mutant) -> dict:
    return {name: lost(r) for name, r in graded(bank, mutant, every_part=True).items()
            if name != mutant.part and lost(r)}


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
    assert (mutant.part, mutant.diagnosis) in bank.messages or mutant.diagnosis.startswith(DERIVED)


CLASS_MODULES = [(bank, m) for bank in BANKS for m in bank.modules if hasattr(m, "CONSTRUCTOR")]


@pytest.mark.parametrize("bank,module", CLASS_MODULES, ids=[m.__name__ for _, m in CLASS_MODULES])
def test_class_mutants_keep_the_given_constructor(bank, module):
    """Students edit `forward` only: the constructor is the release notebook's, verbatim."""
    stub = notebooks.answer_cells(bank.release)[module.PART]
    constructor = stub[:stub.index("    def forward")].rstrip("\n")
    assert module.CONSTRUCTOR.rstrip("\n") == constructor
    for mutant in module.WRONG + module.CORRECT:
        assert mutant.code.startswith(constructor + "\n\n    def forward"), mutant.name


def test_gelu_mutants_keep_the_given_constant():
    """Students write below the given GELU_C line of the gelu_backward cell, which stays as it is."""
    stub = notebooks.answer_cells(BY_LAB["lab06_training"].release)["gelu_backward"]
    given = stub[:stub.index("def gelu_backward")]
    gelu_backward = importlib.import_module("mutants.lab06.gelu_backward")
    for mutant in gelu_backward.WRONG + gelu_backward.CORRECT:
        assert mutant.code.startswith(given), mutant.name


# ------------------------------------------------------------------------------- wrong answers

@pytest.mark.parametrize("salt", SALTS, ids=lambda s: s.decode() or "unsalted")
@pytest.mark.parametrize("bank,mutant", WRONG, ids=ids(WRONG))
def test_wrong_mutant_loses_points_in_its_own_part(bank, mutant, salt):
    assert lost(graded(bank, mutant, salt)[mutant.part]) > 0, f"{mutant.name} earns full marks: a check is missing"


@pytest.mark.full
@pytest.mark.parametrize("bank,mutant", WRONG, ids=ids(WRONG))
def test_wrong_mutant_loses_nothing_in_other_parts(bank, mutant):
    assert outside_losses(bank, mutant) == {}


# Hidden inputs on which a mutant once earned full marks (a softmax without the max when no score
# overflowed, ReLU6 when no pre-activation passed 6, greedy ignored when the draw hit the argmax).
ESCAPE_SALTS = [b"md29", b"md32", b"md44", b"md50", b"md61", b"md77"]


@pytest.mark.full
@pytest.mark.parametrize("bank,mutant", WRONG, ids=ids(WRONG))
def test_wrong_mutant_loses_points_whatever_the_hidden_inputs(bank, mutant):
    """A check that shows a mistake on some salts only grades it by luck."""
    escaped = [salt for salt in ESCAPE_SALTS if lost(graded(bank, mutant, salt)[mutant.part]) == 0]
    assert escaped == [], f"{mutant.name} earns full marks on these hidden inputs"


def part_scores(bank: Bank, mutant, salts) -> dict:
    """{part score: the salts that give it} of the mutant's own part."""
    scores: dict = {}
    for salt in salts:
        scores.setdefault(graded(bank, mutant, salt)[mutant.part].score, []).append(salt)
    return scores


# The mistakes that once scored differently with the student (issue 28): checked in every tier.
REROLLED = {"scaled_by_value_width", "positions_indexed_by_token", "heads_never_split", "einsum_unscaled",
            "divided_by_d_k", "d_k_from_the_wrong_axis", "multiplied_by_root_d_k", "scaled_by_model_width",
            "unscaled_scores", "multiplied_by_tril", "finite_mask_set", "computed_in_float32", "eps_in_the_root",
            "ce_in_float32", "shifted_then_float32", "loss_returned_as_float32", "columns_of_every_row",
            "windows_one_token_early", "sigma_without_eps", "p_as_keep_probability"}
SAMPLE = [(bank, m) for bank, m in WRONG if m.name in REROLLED]


@pytest.mark.parametrize("bank,mutant", SAMPLE, ids=ids(SAMPLE))
def test_a_mistake_scores_the_same_whatever_the_hidden_inputs(bank, mutant):
    """The same code earns the same points for every student: a check whose verdict on a
    systematic mistake depends on the draw lets a student re-roll a grade (a cross-entropy in
    float32 scored 1 to 3 of 8 with the student id, a scale mistake in attention 3 or 4 of 10).
    Three students' salts; the full tier grades every mistake for 16."""
    salts = [answers.student_salt(bank.assignment, student, mutant.code) for student in answers.STUDENTS[:3]]
    scores = part_scores(bank, mutant, salts)
    assert len(scores) == 1, {score: len(s) for score, s in scores.items()}


@pytest.mark.full
@pytest.mark.parametrize("bank,mutant", WRONG, ids=ids(WRONG))
def test_a_mistake_scores_the_same_for_every_student(bank, mutant):
    """As above, with the salts of 16 student ids, made as a submission's salt is made."""
    salts = [answers.student_salt(bank.assignment, student, mutant.code) for student in answers.STUDENTS]
    scores = part_scores(bank, mutant, salts)
    assert len(scores) == 1, {score: len(s) for score, s in scores.items()}


@pytest.mark.full
@pytest.mark.parametrize("name", ["attends_before_appending", "new_token_twice"])
def test_a_mistake_about_the_new_token_fails_the_same_checks_for_every_student(name):
    """The cache-step cases give the new token a weight the checks can see, whatever the draw
    (with a weight of 1e-10 on some salts, these mistakes passed some of the checks there)."""
    bank = next(b for b in BANKS if b.assignment.startswith("lab07"))
    mutant = next(m for m in bank.wrong if m.name == name)
    failed = {tuple(c.title for c in graded(bank, mutant, b"s%d" % i)[mutant.part].checks if c.status != "passed")
              for i in range(30)}
    assert len(failed) == 1, failed


def test_two_mistakes_that_explain_the_same_results_are_not_named():
    """Centring softmax on the mean overflows on one row of salt zz14 exactly where subtracting
    the minimum does: the diagnosis named the minimum; it names neither now."""
    bank = BY_LAB["lab05_transformers"]
    mutant = next(m for m in bank.wrong if m.name == "centred_on_the_mean")
    assert misdiagnosed(bank, mutant, b"zz14") == set()
    assert lost(graded(bank, mutant, b"zz14")[mutant.part]) > 0


@pytest.mark.parametrize("salt", SALTS, ids=lambda s: s.decode() or "unsalted")
@pytest.mark.parametrize("bank,mutant", WRONG, ids=ids(WRONG))
def test_wrong_mutant_is_never_misdiagnosed(bank, mutant, salt):
    """A diagnosis names the mutant's own mistake or nothing."""
    assert misdiagnosed(bank, mutant, salt) == set(), f"declared {mutant.diagnosis!r}"


@pytest.mark.parametrize("salt", SALTS, ids=lambda s: s.decode() or "unsalted")
@pytest.mark.parametrize("bank,mutant", NAMED, ids=ids(NAMED))
def test_wrong_mutant_gets_its_diagnosis(bank, mutant, salt):
    assert diagnosed(bank, mutant, salt), (f"expected {mutant.diagnosis!r}; got "
                                           f"{diagnoses(graded(bank, mutant, salt)[mutant.part]) or 'no diagnosis'}")


def figures(bank: Bank, salt: bytes = b"") -> dict:
    """Caught: loses points in its part. Own part only: and nowhere else. Diagnosed: some
    catalogued mistake is named; correctly: the declared one and nothing else. Correct: the
    correct alternatives that earn full marks."""
    wrong, correct = bank.wrong, bank.correct
    shown = [m for m in wrong if diagnoses(graded(bank, m, salt)[m.part])]
    return {"wrong": len(wrong),
            "caught": sum(lost(graded(bank, m, salt)[m.part]) > 0 for m in wrong),
            "own part only": sum(lost(graded(bank, m)[m.part]) > 0 and not outside_losses(bank, m) for m in wrong),
            "diagnosed": len(shown),
            "diagnosed correctly": sum(diagnosed(bank, m, salt) for m in shown),
            "correct alternatives": len(correct),
            "at full marks": sum(not any(lost(r) for r in graded(bank, m, salt, True).values()) for m in correct)}


@pytest.mark.full
@pytest.mark.parametrize("salt", SALTS, ids=lambda s: s.decode() or "unsalted")
@pytest.mark.parametrize("bank", BANKS, ids=repr)
def test_bank_figures(bank, salt):
    """At least 90 % of the wrong mutants get a diagnosis, and at least 90 % of those the right one."""
    f = figures(bank, salt)
    text = f"{bank.assignment} mutant bank (salt {salt!r}): " + ", ".join(f"{k} {v}" for k, v in f.items())
    print("\n" + text)
    assert f["caught"] == f["own part only"] == f["wrong"], text
    assert f["at full marks"] == f["correct alternatives"], text
    assert f["diagnosed"] >= MIN_DIAGNOSED * f["wrong"], text
    assert f["diagnosed correctly"] >= MIN_DIAGNOSED * f["diagnosed"], text


# ------------------------------------------------------------------------------ right answers

@pytest.mark.parametrize("salt", SALTS, ids=lambda s: s.decode() or "unsalted")
@pytest.mark.parametrize("bank,mutant", CORRECT, ids=ids(CORRECT))
def test_correct_alternative_earns_full_marks(bank, mutant, salt):
    failed = {name: [(c.title, c.message) for c in r.checks if c.status != "passed"]
              for name, r in graded(bank, mutant, salt).items() if lost(r)}
    assert failed == {}


@pytest.mark.full
@pytest.mark.parametrize("bank,mutant", CORRECT, ids=ids(CORRECT))
def test_correct_alternative_earns_full_marks_whatever_the_hidden_inputs(bank, mutant):
    """Right code that loses points on some salts only is graded by luck (a mask of -1e4 once
    lost a point on a fifth of them)."""
    unlucky = [salt for salt in ESCAPE_SALTS if any(lost(r) for r in graded(bank, mutant, salt).values())]
    assert unlucky == []


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
    assert result.score <= bank.trivial_share * result.max_score, \
        [c.title for c in result.checks if c.score]


# ---------------------------------------------------------------------- the mistake catalogue

_AS_STUDENT: dict = {}


def as_student(bank: Bank, mistake):
    """The part of a catalogued mistake, graded with the mistake as the student's code (once)."""
    if id(mistake) not in _AS_STUDENT:
        suite = bank.suite
        _AS_STUDENT[id(mistake)] = run_part(suite, mistake.part, LocalRunner(suite.namespace_with(mistake), suite.reference))
    return _AS_STUDENT[id(mistake)]


@pytest.mark.parametrize("bank,mistake", MISTAKES, ids=ids(MISTAKES))
def test_catalogued_mistake_is_caught_and_diagnosed_as_itself(bank, mistake):
    """Being named requires differing from the reference on some check's inputs, so a mistake
    that passes this test is distinguishable from the reference, and from earlier entries."""
    result = as_student(bank, mistake)
    assert lost(result) > 0
    assert mistake.message in diagnoses(result), diagnoses(result)


def test_every_catalogued_mistake_is_named_alone():
    """Graded as the student's code, a mistake is named and no other mistake with another
    message is: look-alike entries of the catalogue are told apart."""
    confused = {}
    for bank, mistake in MISTAKES:
        others = set(diagnoses(as_student(bank, mistake))) - {mistake.message}
        if others:
            confused[f"{mistake.part}/{mistake.key}"] = others
    assert confused == {}


LOOK_ALIKES = [   # (lab, part, the mistake made, the look-alike that must not be named)
    ("lab05_transformers", "causal_attention", "finite_mask_thousand", "no_mask"),
    ("lab05_transformers", "causal_attention", "finite_mask", "no_mask"),
    ("lab06_training", "embedding_backward", "head_from_d_x", "lookup_only"),
    ("lab06_training", "embedding_backward", "head_from_d_x", "head_only"),
    ("lab06_training", "next_token_probs", "top_k_or_top_p", "top_p_before_top_k"),
    ("lab06_training", "attention_backward", "softmax_elementwise", "softmax_diagonal"),
]


@pytest.mark.parametrize("lab,part,made,look_alike", LOOK_ALIKES, ids=lambda x: str(x))
def test_look_alike_mistakes_are_told_apart(lab, part, made, look_alike):
    """The mistake made is named, its look-alike never, under every salt."""
    suite = BY_LAB[lab].suite
    catalogue = {m.key: m for m in suite.parts[part].mistakes}
    for salt in SALT_VALUES:
        result = run_part(suite, part, LocalRunner(suite.namespace_with(catalogue[made]), suite.reference), salt)
        assert set(diagnoses(result)) == {catalogue[made].message}, (salt, diagnoses(result))
        assert catalogue[look_alike].message not in diagnoses(result)


# ------------------------------------------------------------------- what the feedback says

def check_results(bank: Bank, mutant_name: str, salt: bytes = b"") -> dict:
    mutant = next(m for m in bank.wrong if m.name == mutant_name)
    return {c.title: c for c in graded(bank, mutant, salt)[mutant.part].checks}


def test_property_checks_are_not_credited_for_a_wrong_value_and_say_why():
    """Scaling by d_k instead of √d_k changes every value: the property checks do not fail (the
    inputs are intact, float32 works), they are not credited and point to the value check."""
    bank = BY_LAB["lab05_transformers"]
    mutant = next(m for m in bank.wrong if m.part == "scaled_dot_product_attention" and m.diagnosis == "scale_by_dk")
    checks = {c.title: c for c in graded(bank, mutant)[mutant.part].checks}
    for title in ("does not modify Q, K or V", "accepts float32 inputs"):
        assert checks[title].status == "not credited" and checks[title].score == 0
        assert checks[title].message.startswith(
            "not credited: needs a right result, see 'matches the reference when d_v != d_k'")
        assert not checks[title].diagnosis
    failed = [c for c in checks.values() if c.status == "failed"]
    assert failed and all(c.diagnosis == bank.messages[(mutant.part, "scale_by_dk")] for c in failed)


ROPE_VALUES = ["one row at position 1, d_k = 4", "positions 0 to N - 1, d_k = 8", "a (B, A, N, d_k) batch of heads",
               "positions that do not start at 0, and negative ones", "another base"]


@pytest.mark.parametrize("lab,mutant,failed", [
    ("lab07_rope_generation", "one_decision_per_row", ["entries are dropped independently"]),
    ("lab07_rope_generation", "scaled_by_root", ["in training, every entry is 0 or x / (1 - p), and both occur",
                                                 "the mean is preserved"]),
    ("lab07_rope_generation", "training_flag_inverted", ["evaluation returns the values of x",
                                                         "in training, every entry is 0 or x / (1 - p), and both occur",
                                                         "the mean is preserved"]),
    ("lab07_rope_generation", "support_and_entropy_swapped", ["one-hot rows: entropy 0, support 1",
                                                              "uniform causal rows: support i + 1, normalised 1",
                                                              "random causal rows of a (B, A, N, N) batch",
                                                              "rows with exact zeros before the diagonal",
                                                              "entropy in bits: two equal weights give 1 bit",
                                                              "a single query (N = 1)"]),
    ("lab07_rope_generation", "natural_log", ["uniform causal rows: support i + 1, normalised 1",
                                              "random causal rows of a (B, A, N, N) batch",
                                              "rows with exact zeros before the diagonal",
                                              "entropy in bits: two equal weights give 1 bit"]),
    ("lab06_training", "l2_regularisation", ["weight decay is decoupled: θ - ηλθ, not added to the gradient"]),
    ("lab06_training", "windows_one_token_early", ["every window begins at one of `starts`"]),
    ("lab06_training", "rows_in_pairs", ["each row draws its own start, and other seeds give other batches"]),
    ("lab06_training", "upper_bound_minus_one", ["every start can be drawn, the first and the last too"]),
    ("lab07_rope_generation", "angles_in_float32", ROPE_VALUES),
    ("lab07_rope_generation", "result_stored_in_float32", ROPE_VALUES),
    ("lab06_training", "trailing_dot_stripped", ["decode(encode(s)) == s, '.' at both ends"]),
    ("lab05_transformers", "default_eps_too_small", ["rows with a small variance (default eps)"]),
    ("lab05_transformers", "gamma_before_normalising", ["non-default gamma and beta",
                                                        "gamma given, beta left at its default"]),
    ("lab05_transformers", "stable_for_matrices_only", ["stable for logits near +1000"]),
    ("lab06_training", "no_decay_for_vectors", ["weight decay is decoupled: θ - ηλθ, not added to the gradient"]),
    ("lab05_transformers", "eps_left_out", ["eps = 0.1 is used inside the square root",
                                            "rows with a small variance (default eps)"]),
    ("lab05_transformers", "finite_mask_set", ["with causal=True, earlier outputs ignore later positions"]),
    ("lab06_training", "eps_in_the_root", ["other betas and eps"]),
    ("lab07_rope_generation", "mask_minus_100_added", ["weights: rows sum to 1, zero after the diagonal"]),
    ("lab07_rope_generation", "mask_minus_500_set", ["weights: rows sum to 1, zero after the diagonal"]),
    ("lab07_rope_generation", "divided_by_nonzero_count", ["rows with exact zeros before the diagonal",
                                                           "normalised by the i + 1 positions a query sees, not by N"]),
])
@pytest.mark.parametrize("salt", [b"", *(pytest.param(s, marks=pytest.mark.full) for s in ESCAPE_SALTS)], ids=repr)
def test_a_mistake_fails_only_the_checks_that_name_it(lab, mutant, failed, salt):
    """Rows dropped together are not also 'the wrong fraction'; entropy in nats (with 2 ** H as
    the support) is not also 'the wrong divisor'; L2 in the gradient fails the decay check alone;
    windows that start one token early are not also irreproducible; rows that share starts are
    not also unreachable starts, nor the reverse; a rotation rounded to float32 is not also a
    stretch; a stripped final '.' is not
    an int32 problem; a smaller default eps is not a gamma, beta or 3-D problem; a dropout that
    scales wrongly or never drops does not also modify x, ignore the seed or drop whole rows; a
    swapped entropy and support is not also a wrong normalisation; gamma applied before the
    statistics is not also an eps or a 3-D problem; a layer norm without eps is not also a gamma
    or beta problem on rows of small variance; a finite mask in MultiHeadAttention is a leak from
    the future, not instability. The same on every hidden input tried (the escape salts).
    The other checks that see the mistake are not credited, pointing to the check to fix."""
    checks = check_results(BY_LAB[lab], mutant, salt)
    assert [t for t, c in checks.items() if c.status == "failed"] == failed
    assert all(c.message.startswith("not credited: needs a right result, see '")
               for c in checks.values() if c.status == "not credited")


@pytest.mark.parametrize("lab,mutant,properties", [
    ("lab05_transformers", "ones_times_minus_inf", ["earlier outputs ignore later positions"]),
    ("lab05_transformers", "mask_of_ones_times_minus_inf", ["with causal=True, earlier outputs ignore later positions"]),
    ("lab06_training", "bias_correction_times_t", ["weight decay is decoupled: θ - ηλθ, not added to the gradient"]),
    ("lab07_rope_generation", "mask_of_ones_times_minus_inf", [
        "weights: rows sum to 1, zero after the diagonal",
        "identical heads give identical weights"]),
    ("lab07_rope_generation", "zero_log_zero", ["normalised by the i + 1 positions a query sees, not by N"]),
])
def test_a_nan_result_is_not_a_broken_property(lab, mutant, properties):
    """NaN equals nothing, itself included: a property judged by comparing the student's own
    results (the same call twice, head against head, support against normalised support) is not
    credited when those results are NaN where the right ones are numbers, and says so; it does
    not fail with a false reason ('the same call twice gave different outputs')."""
    checks = check_results(BY_LAB[lab], mutant)
    for title in properties:
        assert checks[title].status == "not credited", (title, checks[title].message)
        assert "returned NaN or infinite values where the right result has none" in checks[title].message


@pytest.mark.parametrize("bank,mutant", WRONG, ids=ids(WRONG))
def test_not_credited_points_to_a_check_that_failed(bank, mutant):
    """'see X' names a check the mistake fails (clipped logits pass the matrix check that the
    in-place check names, and fail the stability checks), or nothing."""
    checks = graded(bank, mutant)[mutant.part].checks
    failed = [c.title for c in checks if c.status == "failed"]
    for c in checks:
        if c.status == "not credited":
            pointers = [f"not credited: needs a right result, see '{title}' (" for title in failed]
            assert c.message.startswith(("not credited: needs a right result (", *pointers)), c.message


def test_a_wrong_dtype_fails_only_the_check_that_names_it():
    """Token ids held as floats are still the right windows: only the dtype check fails; starts
    drawn without replacement give too few rows when B > len(starts) (the shape check) and never
    share a start (the independence check), and only those two fail."""
    title = "returns (x, y): two integer arrays of shape (B, N), also for B > len(starts)"
    checks = check_results(BY_LAB["lab06_training"], "float_token_ids")
    assert [t for t, c in checks.items() if c.status != "passed"] == [title]
    assert "has dtype float64; expected integer numbers" in checks[title].message
    without = check_results(BY_LAB["lab06_training"], "without_replacement")   # so do too few rows
    independent = "each row draws its own start, and other seeds give other batches"
    assert [t for t, c in without.items() if c.status != "passed"] == [title, independent]
    assert "x has shape (3, 6); expected (8, 6)" in without[title].message
    assert "the same start in 0 of 40 batches" in without[independent].message


@pytest.mark.parametrize("bank", BANKS, ids=repr)
def test_a_property_violation_fails_with_its_own_cause(bank):
    """Code that is right but writes into its input fails the property check, diagnosed as such,
    and only that check."""
    for mutant in bank.wrong:
        if mutant.diagnosis == "in_place":
            result = graded(bank, mutant)[mutant.part]
            failed = [c for c in result.checks if c.status != "passed"]
            assert failed, mutant.name
            assert {c.diagnosis for c in failed} == {bank.messages[(mutant.part, "in_place")]}, mutant.name
            assert all(c.fix for c in failed)


@pytest.mark.parametrize("lab,name,call,key", [   # the call as the message shows it
    ("lab05_transformers", "reductions_lose_their_axis", "softmax(array(5, 7))", "keepdims_forgotten_softmax"),
    ("lab05_transformers", "head_without_transpose", "forward(int64(6,))", "head_not_transposed"),
    ("lab06_training", "batch_axes_not_flattened", "linear_backward(array(2, 3, 5), array(2, 3, 4)", "batched_not_flattened"),
])
def test_an_exception_names_the_call_its_shapes_and_the_mistake_that_raises_it(lab, name, call, key):
    bank = BY_LAB[lab]
    mutant = next(m for m in bank.wrong if m.name == name)
    raised = [c for c in graded(bank, mutant)[mutant.part].checks if c.status == "failed" and " raised " in c.message]
    hits = [c for c in raised if call in c.message]
    assert hits, [c.message for c in raised]
    assert all(c.diagnosis == bank.messages[(mutant.part, key)] for c in hits)


FIX_IN_WORDS = ("keepdims=True", "np.triu(", "transpose(1, 0, 2)", "np.add.at(", "np.arange(N)",
                "rng.integers(0, len", "''.join", "use np.", "use axis", "rng.choice(len(probs), p=probs)",
                "pos_encodings[:N]", "use -np.inf")


@pytest.mark.parametrize("bank", BANKS, ids=repr)
def test_tier_one_messages_name_the_idea_not_the_code(bank):
    """The exact code goes into `fix` (tier 2), shown after repeated failures or the due date."""
    literal = {f"{p.name}/{m.key}": m.message for p in bank.suite.parts.values() for m in p.mistakes
               if any(code in m.message for code in FIX_IN_WORDS)}
    assert literal == {}
    assert sum(bool(m.fix) for p in bank.suite.parts.values() for m in p.mistakes) >= 20


# A correct layer_norm_backward lost a point on 0.8 % of hidden inputs (ff85 among these): rounding
# its float32 inputs moved a badly conditioned row by more than the float32 check's atol.
ROUNDING_SALTS = [b"ff%d" % i for i in range(200)]
FLOAT32_PARTS = [(bank, name) for bank, name in PARTS
                 if any(check.tol is FLOAT32 for check in bank.suite.parts[name].checks)]


@pytest.mark.full
@pytest.mark.parametrize("bank,part", FLOAT32_PARTS, ids=[f"{b.assignment}-{n}" for b, n in FLOAT32_PARTS])
def test_correct_code_passes_the_float32_checks_on_any_hidden_input(bank, part):
    """The reference and every correct alternative, on 200 salts: rounding is never a mistake."""
    suite = bank.suite
    checks = [check for check in suite.parts[part].checks if check.tol is FLOAT32]
    failures = []
    for code in [None] + [m.code for m in bank.correct if m.part == part]:
        runner = LocalRunner(bank.namespace(code) if code else bank.namespace(), suite.reference)
        with runner.part(part, suite.earlier(part)):
            for salt, check in ((salt, check) for salt in ROUNDING_SALTS for check in checks):
                try:
                    check.body(Trial(suite, check, runner, salt))
                except (CheckFailed, NotCredited) as exc:
                    failures.append((check.title, salt, str(exc)[:300]))
    assert failures == []
