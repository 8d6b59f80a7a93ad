"""The hidden suites against mistakes derived from the reference (tests/mutations.py), not only
against the banks they were written with: every derived mistake that changes a result loses
points, the hidden inputs tell apart any two that differ elsewhere, and a named cause is one
that reproduces the derived mistake on other hidden inputs too (never a wrong name)."""
import ast

import mutations
import pytest

from autograder import labs

LABS = ["lab05_transformers", "lab06_training", "lab07_rope_generation"]
PARTS = [(lab, part) for lab in LABS for part in labs.load(lab).suite.parts]


def test_the_operators_rewrite_one_place_each():
    tree = ast.parse("def f(Q, K):\n    s = Q @ K.T / np.sqrt(d)\n    return np.max(s, axis=-1, keepdims=True)\n")
    function = tree.body[0]
    rewritten = {op.__name__: [ast.unparse(mutations._Rewrite(op, site).visit(ast.parse(ast.unparse(function))))
                               for site in range(mutations._sites(function, op))]
                 for op in mutations.OPERATORS}
    assert any("K.T @ Q" in text for text in rewritten["swap_matmul"])
    assert any("Q @ K /" in text for text in rewritten["drop_transpose"])
    assert any("axis=0" in text for text in rewritten["other_axis"])
    assert any("keepdims" not in text for text in rewritten["drop_keepdims"])
    assert {"s = Q @ K.T", "s = Q @ K.T / d", "s = Q @ K.T * np.sqrt(d)"} <= {
        text.splitlines()[1].strip() for text in rewritten["rescale"]}


def test_every_candidate_is_a_whole_answer_cell():
    """Each candidate defines its part (a class keeps the given constructor) and differs from
    the reference."""
    reference = labs.reference_path("lab05_transformers").read_text()
    found = mutations.candidates("lab05_transformers", ["softmax", "MultiHeadAttention"])
    assert {c.part for c in found} == {"softmax", "MultiHeadAttention"}
    for candidate in found:
        ns = mutations.namespace("lab05_transformers", candidate.code)
        assert callable(ns[candidate.part])
        assert candidate.code not in reference
        if candidate.part == "MultiHeadAttention":
            assert "def __init__(self, d_model: int, n_heads: int, seed: int=0)" in candidate.code


@pytest.mark.parametrize("lab,part", PARTS, ids=[f"{lab}-{part}" for lab, part in PARTS])
def test_derived_mistakes_are_caught_told_apart_and_never_misnamed(lab, part):
    """The transposes, axes, off-by-ones, scales, signs, masks, dropped terms, swapped arguments,
    in-place writes and float32 derived from the reference: each that changes a result on some
    salt's hidden inputs loses points on this one; two that differ somewhere are told apart here;
    a named catalogued mistake gives the derived one's results on other salts too. (A name given
    on one matching exception while the student's code raised elsewhere was wrong: an index out
    of range on the position axis was named 'every row at every target'.)"""
    findings, confusions = mutations.survey(lab, [part])[part]
    escapes = [f.candidate.operator for f in findings if f.differs and not f.lost]
    wrong = [(f.candidate.operator, f.candidate.site, f.wrong_names) for f in findings if f.wrong_names]
    assert (escapes, wrong, confusions) == ([], [], [])
