"""The hidden suites against mistakes derived from the reference (tests/mutations.py), not only
against the banks they were written with: every derived mistake that changes a result loses
points, the hidden inputs tell apart any two that differ elsewhere, and a named cause is one
that reproduces the derived mistake on other hidden inputs too (never a wrong name)."""
import ast
import inspect

import answers
import mutations
import numpy as np
import pytest

from autograder import conditions, derived, labs, operators, relations, verdict
from autograder.verdict import Raised
from autograder.worker.invoke import Call, execute

LABS = ["lab05_transformers", "lab06_training", "lab07_rope_generation"]
PARTS = [(lab, part) for lab in LABS for part in labs.load(lab).suite.parts]


def test_the_operators_rewrite_one_place_each():
    function = "def f(Q, K):\n    s = Q @ K.T / np.sqrt(d)\n    return np.max(s, axis=-1, keepdims=True)\n"
    rewritten = {op.__name__: [ast.unparse(ast.parse(v.source)) for v in derived.variants(function, [op])]
                 for op in operators.OPERATORS}
    assert any("K.T @ Q" in text for text in rewritten["swap_matmul"])
    assert any("Q @ K /" in text for text in rewritten["drop_transpose"])
    assert any("axis=0" in text for text in rewritten["other_axis"])
    assert any("keepdims" not in text for text in rewritten["drop_keepdims"])
    assert {"s = Q @ K.T", "s = Q @ K.T / d", "s = Q @ K.T * np.sqrt(d)"} <= {
        text.splitlines()[1].strip() for text in rewritten["rescale"]}
    assert any("np.swapaxes(K.T, -1, -2) @ np.swapaxes(Q, -1, -2)" in text for text in rewritten["transpose_product"])
    unbracketed = {v.source.splitlines()[1].strip() for v in derived.variants(
        "def h(x, m, s, d):\n    return (x - m) / s + 10.0 ** (m / d)\n", [operators.drop_brackets])}
    assert unbracketed == {"return x - m / s + 10.0 ** (m / d)", "return (x - m) / s + 10.0 ** m / d"}
    loops = {v.idea for v in derived.variants(
        "def k(self, x):\n    for block in self.blocks:\n        x = block(x)\n    return x\n", [operators.loop_items])}
    assert "the loop over `self.blocks` skips its first item" in loops
    reversed_ = [ast.unparse(ast.parse(v.source)) for v in
                 derived.variants("def g(b, x):\n    return np.where(x > 0, b ** x, 0.0)\n", [operators.reverse])]
    assert {"np.where(x > 0, x ** b, 0.0)", "np.where(x > 0, 0.0, b ** x)", "np.where(x < 0, b ** x, 0.0)"} <= {
        text.splitlines()[1].strip().removeprefix("return ") for text in reversed_}
    assert {"return x ** 2", "return x ** 4", "return 3 * x * x * x", "return 3 * x"} == {
        ast.unparse(ast.parse(v.source)).splitlines()[1].strip() for source in ("x ** 3", "3 * x * x")
        for v in derived.variants(f"def p(x):\n    return {source}\n", [operators.power_off_by_one])}
    assert {v.source.splitlines()[1].strip() for v in derived.variants(
        "def q(h):\n    return 2.0 ** h\n", [operators.power_as_product])} == {"return (2.0 * h)"}
    assert {"s = Q @ K.T / d ** 1 / 2", "s = Q @ K.T / int(np.sqrt(d))"} <= {
        text.splitlines()[1].strip() for text in rewritten["root_slips"]}
    assert {"a = np.ones(n)", "b = x[:, :n]"} <= {line.strip() for v in derived.variants(
        "def z(x, n):\n    a = np.zeros(n)\n    b = x[:n]\n", [operators.other_fill, operators.slice_on_columns])
        for line in ast.unparse(ast.parse(v.source)).splitlines()}
    assert "return np.max(s, 0)" in {ast.unparse(ast.parse(v.source)).splitlines()[1].strip() for v in derived.variants(
        "def r(s):\n    return np.maximum(s, 0)\n", [operators.sibling_function])}
    inverted = [v.source for v in derived.variants("def c(x, causal):\n    return 1 if causal else 0\n",
                                                    [operators.ignore_condition])]
    assert any("1 if not causal else 0" in ast.unparse(ast.parse(text)) for text in inverted)


def test_two_steps_are_swapped_nested_or_through_a_variable():
    """A layer norm after the attention instead of before it; a mask after the softmax."""
    block = ("def forward(self, x):\n    t1 = layer_norm(x, self.g)\n"
             "    t3 = self.attention.forward(t1, causal=True) + x\n    return t3\n")
    nested = "def f(z):\n    return softmax(mask(z, 3))\n"
    found = {v.idea + v.where: ast.unparse(ast.parse(v.source)).splitlines()[1:]
             for source in (block, nested) for v in derived.variants(source, [operators.swap_steps(ast.parse(source).body[0])])}
    assert found == {
        "`self.attention.forward` and `layer_norm` are applied in the other order, where `t1` is computed":
            ["    t1 = self.attention.forward(x, causal=True)", "    t3 = layer_norm(t1, self.g) + x", "    return t3"],
        "`softmax` and `mask` are applied in the other order, in what is returned": ["    return mask(softmax(z), 3)"]}


def test_a_call_s_last_argument_and_a_flag_s_default_are_rewritten():
    """A notebook function called without its last argument (its default is used), and a True or
    False default of the signature given the other value."""
    source = ("def forward(self, x, causal: bool = False):\n"
              "    return layer_norm(self.f(x, causal), self.g, self.b) + self.attention.forward(x, causal)\n")
    tree = ast.parse(source).body[0]
    found = {v.idea: ast.unparse(ast.parse(v.source)) for v in derived.variants(
        source, [operators.drop_argument({"layer_norm"}), operators.other_default(tree)])}
    assert "layer_norm(self.f(x, causal), self.g)" in found[
        "the call of `layer_norm` leaves out its last argument, `self.b`, so its default is used"]
    assert "self.attention.forward(x)" in found[
        "the call of `forward` leaves out its last argument, `causal`, so its default is used"]
    assert "causal: bool=True" in found["the default of `causal` in the signature is True, not False"]
    assert len(found) == 3                                  # self.f is neither a notebook function nor a layer's method


def test_an_idea_at_several_places_is_also_rewritten_everywhere():
    """Students who reduce along the wrong axis do it in every reduction, not in one."""
    function = "def f(z):\n    e = np.exp(z - z.max(axis=-1, keepdims=True))\n    return e / e.sum(axis=-1, keepdims=True)\n"
    found = {v.idea: v.source for v in derived.variants(function, [operators.other_axis])}
    assert "z.max(axis=0" in found["the reductions run along the wrong axis (axis=0)"]
    assert "e.sum(axis=0" in found["the reductions run along the wrong axis (axis=0)"]


def test_a_derived_mistake_is_named_only_where_the_catalogue_is_silent_and_it_alone_fits():
    """A mistake no catalogue entry lists (the softmax left out) is named by what the rewrite of
    the reference does; a catalogued mistake keeps its catalogue's words; an answer with two
    mistakes, which no single rewrite reproduces, is named by the two rewrites made together;
    one with three by nothing."""
    assert _causes(ANSWER.replace("softmax(scores)", "scores")) == {
        "the step `softmax` is left out: its input is used as it is, where `weights` is computed; or, which "
        "gives the same results, `scores` is used where `weights` belongs, in what is returned"}
    catalogued = _causes(ANSWER.replace("/ np.sqrt(d_k)", ""))
    assert catalogued and all(cause in CATALOGUE for cause in catalogued)
    both = ANSWER.replace("scores = Q @ K.T / np.sqrt(d_k)", "scores = Q @ K.T / d_k").replace("weights @ V", "weights.T @ V")
    assert _causes(both) == {
        "two things at once: the division is by the dimension itself, not by its square root, where `scores` is "
        "computed; and also an operand of a matrix product is transposed where it should not be, in what is returned"}
    assert _causes(both.replace("softmax(scores)", "softmax(-scores)")) == set()


def test_two_rewrites_are_made_together_only_at_places_apart():
    """A pair rewrites one function at two places that do not overlap, and says both."""
    made = derived.derive(_summed_scores, set())
    scale = next(d for d in made if "/ WIDTH" in d.variant.source)
    axis = next(d for d in made if "axis=0" in d.variant.source)
    both = derived.paired(_summed_scores, scale, axis)
    assert "/ WIDTH" in both.variant.source and "axis=0" in both.variant.source
    assert both.idea == f"two things at once: {scale.idea}; and also {axis.idea}"
    assert derived.paired(scale.function, scale, scale) is None
    first, second = [d for d in derived.derive(_two_sums, set()) if d.variant.idea == "`sum` runs along the wrong axis (axis=0)"]
    assert derived.paired(_two_sums, first, second).idea == \
        "`sum` runs along the wrong axis (axis=0) at two places, in what is returned"


def test_whole_numbers_are_said_cut_off_not_named_by_a_rewrite_that_only_rounds_to_them():
    """Frequencies stored in an integer buffer (1, 0, 0, ...) match, within the tolerance, a rewrite
    whose tiny values (1e-40) only round to 0: their fractions were cut off, which that rewrite
    does not do. Gradients that are all 0 (a scale written 1 // n) are not 'the expected ones with
    their fractions cut off' either, though |g| < 1 truncates to 0."""
    buffer = "def rope_frequencies(d_k, base=10000.0):\n    omega = np.zeros(d_k // 2, dtype=int)\n" \
             "    omega[:] = base ** (-np.arange(0, d_k, 2) / d_k)\n    return omega\n"
    assert _causes(buffer, "rope_frequencies", "lab07_rope_generation") <= {relations.TRUNCATED}
    e = np.random.default_rng(1).uniform(-0.9, 0.9, (3, 4))
    assert relations.relation(np.zeros_like(e), e) is None


def test_an_exception_that_only_repeats_the_input_names_nothing():
    """Looking names up by word (`text.split()`) raises KeyError('anna') on every name, as does the
    rewrite that looks the whole text up (`stoi[text]`): the message says which key was missing,
    not why, so neither rewrite is named."""
    words = "def encode(text, stoi):\n    return [stoi[word] for word in text.split()]\n"
    assert _causes(words, "encode", "lab06_training") == set()


CAUSAL = """def causal_attention(Q, K, V):
    n = Q.shape[0]
    mask = np.zeros((n, n), dtype=float)
    mask[np.triu_indices(n, 1)] = -np.inf
    weights = softmax(Q @ K.T / np.sqrt(Q.shape[-1]) + mask)
    return weights @ V, weights
"""


@pytest.mark.parametrize("slip,known", [
    (("dtype=float", "dtype=int"), "cannot convert float infinity to integer"),
    (("np.sqrt(Q.shape[-1])", "Q.shape[-1] ^ 0.5"), "'bitwise_xor' not supported"),
    (("np.sqrt(Q.shape[-1])", "__import__('math').sqrt(np.array(Q.shape))"), "arrays can be converted to Python scalars"),
    (("return weights @ V", "out = weights.sort()\n    return out.dot(V)"), "'NoneType'"),
], ids=["int buffer", "caret", "math on an array", "None"])
def test_an_exception_that_names_its_construct_is_explained(slip, known):
    """A causal mask in an integer buffer, `^` for a power, `math` on an array, a list method's None:
    whatever code raises these, the exception says the construct, and the cause says it in words."""
    cause, _ = verdict.known_exception(known)
    assert _causes(CAUSAL, "causal_attention") == set()
    assert _causes(CAUSAL.replace(*slip), "causal_attention") == {cause}


def test_no_relation_is_said_of_a_draw():
    """A batch drawn another way is one of many right draws: where it differs from the reference's
    draw in one row, that row is not 'a loop that starts one late'."""
    endpoint = "def get_batch(stream, starts, batch_size, block_size, rng):\n" \
               "    s = starts[rng.integers(0, len(starts), size=batch_size, endpoint=True)]\n" \
               "    window = stream[s[:, None] + np.arange(block_size + 1)]\n" \
               "    return window[:, :-1], window[:, 1:]\n"
    assert not any(cause.startswith("the result") for cause in _causes(endpoint, "get_batch", "lab06_training"))


ANSWER = """def scaled_dot_product_attention(Q, K, V):
    d_k = Q.shape[-1]
    scores = Q @ K.T / np.sqrt(d_k)
    weights = softmax(scores)
    return weights @ V, weights
"""
CATALOGUE = {m.message for m in labs.load("lab05_transformers").suite.parts["scaled_dot_product_attention"].mistakes}


def _causes(code: str, part: str = "scaled_dot_product_attention", lab: str = "lab05_transformers") -> set:
    result = answers.grade(lab, answers.Answer(part, "x", code, False, ""))
    return {c.diagnosis for c in result.checks if c.status == "failed" and c.diagnosis}


WIDTH = 4


def _summed_scores(q, k):
    s = q @ k.T / np.sqrt(WIDTH)
    return np.sum(s, axis=-1)


def _two_sums(a, b):
    return np.sum(a, axis=-1) + np.sum(b, axis=-1)


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


def test_rewrites_that_are_one_program_are_named_together(monkeypatch):
    """Leaving out the final layer norm is also reading its input where its output belongs: the
    two rewrites return the same values on every input, so both are said, not neither (with the
    catalogue, whose words come first, set aside)."""
    code = inspect.getsource(labs.load("lab05_transformers").suite.reference["MiniTransformerLM"]).replace(
        "h = layer_norm(x, self.final_ln_gamma, self.final_ln_beta)", "h = x")
    part = labs.load("lab05_transformers").suite.parts["MiniTransformerLM"]
    assert {c.split(":")[0] for c in _causes(code, "MiniTransformerLM")} == {"the final layer norm is missing"}
    monkeypatch.setattr(part, "mistakes", [m for m in part.mistakes if not m.impl])
    assert _causes(code, "MiniTransformerLM") == {
        "the step `layer_norm` is left out: its input is used as it is, where `h` is computed"
        "; or, which gives the same results, `x` is used where `h` belongs, in what is returned"}


def test_a_wrong_result_s_relation_to_the_right_one_is_said_where_no_mistake_fits():
    """Read from the values alone, whatever code made them: transposed, rearranged, reshaped, scaled,
    shifted, wrong at one end of an axis, short of one end, plus an input, repeated or tiled; where two
    relations hold, none is said."""
    rng = np.random.default_rng(0)
    e = rng.standard_normal((4, 6))
    assert relations.relation(e.T, e) == relations.TRANSPOSED
    assert relations.relation(e.reshape(6, 4).T.reshape(4, 6), e) == relations.REARRANGED
    assert relations.relation(-e, e) == relations.NEGATED
    assert relations.relation(np.trunc(3 * e), 3 * e) == relations.TRUNCATED
    assert relations.relations([(e / 8 ** 0.5, e), (2 * e, e)]) == relations.SCALED.format(factors="0.3536, 2")
    shifted = np.vstack([e[1:], rng.standard_normal((1, 6))])
    assert relations.relation(shifted, e) == relations.SHIFTED.format(axis=-2)
    assert relations.relation(e.reshape(2, 12), e) == relations.RESHAPED            # not reshaped back
    assert relations.relation(e[::-1], e) == relations.REVERSED.format(along=" along its rows")
    assert relations.relation(e[0, [1, 0, 3, 2, 5, 4]], e[0]) == relations.REORDERED
    positive = np.exp(e)
    assert relations.relation(positive ** 2, positive) == relations.POWERED.format(power="2", how="doubled")
    assert relations.relation(positive ** 1.5, positive) == relations.POWERED.format(
        power="1.5", how="multiplied by that factor")
    assert relations.relation(e[:1].T, e[:1]) is None                # a row transposed, or reshaped?
    assert relations.relation(2 * np.pi / positive, positive) == relations.INVERTED
    geometric = 10.0 ** -np.arange(5.0)
    assert relations.relation(geometric[::-1], geometric) == relations.REVERSED.format(along="")   # and 1e-4 / itself
    assert relations.relation(np.vstack([e, e[:2]]), e) == relations.LONG.format(order="followed by",
                                                                                 along=" along its rows")
    assert relations.lazy([(None, Raised("returned a value that cannot be graded: a value of type map cannot "
                                         "be sent"))]) == relations.LAZY.format(kind="map")
    assert relations.relation(e + 0.5, e) == relations.OFFSET
    assert relations.relation(e * np.arange(2.0, 6.0)[:, None], e) == relations.ROW_SCALED     # one factor per row
    assert relations.relation(e - np.log(np.arange(2.0, 6.0))[:, None], e) == relations.ROW_OFFSET
    first_row_left = np.vstack([np.zeros((1, 6)), e[1:]])                          # range(1, N)
    assert relations.relation(first_row_left, e) == relations.EDGE.format(end="first", along=" along its rows",
                                                                          how=relations.EARLY["first"])
    returned_in_loop = np.vstack([e[:1], np.zeros((3, 6))])                       # a return inside the row loop
    stack = rng.standard_normal((2, 3, 6))
    assert relations.relation(returned_in_loop, e) == relations.relation(
        np.vstack([stack.reshape(6, 6)[:1], np.zeros((5, 6))]).reshape(stack.shape), stack) == relations.EDGE.format(
        end="last", along=" along its rows", how=relations.EARLY["last"])
    assert relations.relation(np.vstack([e[:1] + 1, e[1:]]), e) is None             # not left at zero: no loop
    assert relations.relation("ello", "hello") == relations.SHORT.format(end="first", along="", how="starts one late")
    assert relations.relation(e[0, :2], e[0, :3]) is None                         # too few to tell
    assert relations.relation(e[:, :-1], e) == relations.SHORT.format(end="last", along=" along axis 1",
                                                                      how="stops one short")
    one_entry = e.copy()
    one_entry[0, 0] += 1                                                            # first row or first column?
    assert relations.relation(one_entry, e) is None
    assert relations.relation(e + rng.standard_normal(e.shape), e) is None
    assert relations.relations([(e.T, e), (-e, e)]) is None         # no one relation: nothing said
    x = rng.standard_normal(e.shape)
    assert relations.relation(e + x, e, {"X": x, "W": e}) == relations.ADDED.format(
        sign="plus", name="X", how=relations._ADDED_HOW["plus"])    # a residual where none belongs
    assert relations.relation(e + x, e) is None
    assert relations.relation((e, 2 * e, e / 3), (e, e, e)) == relations.ITEMS_SCALED.format(factors="2, 0.3333")
    assert relations.relations([((e, 2 * e), (e, e)), ((e, 3 * e, e / 2), (e, e, e))]) == \
        relations.ITEMS_SCALED.format(factors="2, 3, 0.5")
    assert relations.relation(np.repeat(e, 2, axis=-1), e) == relations.REPEATED.format(times=2, along=" along axis 1")
    assert relations.relation(np.tile(e[0], 3), e[0]) == relations.TILED.format(times=3, along="")


def test_what_the_wrong_calls_alone_have_in_common_is_said_where_nothing_else_fits():
    """Code that is right on some inputs only: the condition those with wrong results meet, and
    none where conditions of two kinds hold (then neither is the likely one)."""
    value_width_of_q = ANSWER.replace("return weights @ V, weights",
                                      "out = np.zeros_like(Q)\n    out[:] = weights @ V\n    return out, weights")
    assert _causes(value_width_of_q) == {conditions.WRONG.format(
        where="the last axis of `V` differs in size from the last axis of `K` and from the last axis of `Q`",
        hint=conditions.HINTS["sizes"])}
    matrices_only = ("def feedforward(x, W1, b1, W2, b2):\n"
                     "    return np.einsum('nf,fd->nd', np.maximum(0, np.einsum('nd,df->nf', x, W1) + b1), W2) + b2\n")
    assert _causes(matrices_only, "feedforward") == {conditions.WRONG.format(where="`x` has 3 axes",
                                                                             hint=conditions.HINTS["axes"])}
    clipped = "def softmax(z):\n    e = np.exp(np.clip(z, -30, 30))\n    return e / e.sum(axis=-1, keepdims=True)\n"
    assert {cause.split(":")[0] for cause in _causes(clipped, "softmax")} == {
        "the results are wrong on every call where `z` holds an entry of size 51 or more, and right on every other call"}


def test_conditions_of_two_kinds_say_nothing():
    """Wrong exactly on the calls with a 3-D input that also set a flag: either may be the cause."""
    reference = {"f": lambda x, flag=False: 2 * x}

    def compared(*calls):
        return [(call, got, execute(call, reference)[0], 1e-8, 1e-10) for call, got in calls]

    matrix, stack = np.ones((2, 3)), np.ones((2, 2, 3))
    right = [(Call("f", (matrix,)), 2 * matrix), (Call("f", (matrix + 1,)), 2 * matrix + 2)]
    flagged = compared(*right, (Call("f", (stack,), {"flag": True}), stack))
    alone = compared(*right, (Call("f", (stack,)), stack))
    assert conditions.condition(reference, flagged) is None
    assert conditions.condition(reference, alone) == conditions.WRONG.format(
        where="`x` has 3 axes", hint=conditions.HINTS["axes"])


@pytest.mark.full
@pytest.mark.parametrize("lab", LABS)
def test_every_operator_s_mistakes_are_caught_told_apart_and_never_misnamed(lab):
    """As above, for the mistakes of every operator the grader derives with (layout, positions,
    scales, steps left out, variables and arguments), graded as students are, derived names too:
    none escapes, none is confused with another that differs elsewhere, none is named wrongly."""
    found = mutations.survey(lab, surveyed=mutations.EVERY, derive=True)
    escapes = [(part, f.candidate.operator) for part, (findings, _) in found.items() for f in findings
               if f.differs and not f.lost]
    wrong = [(part, f.candidate.operator, f.wrong_names) for part, (findings, _) in found.items()
             for f in findings if f.wrong_names]
    confused = {part: len(confusions) for part, (_, confusions) in found.items() if confusions}
    assert (escapes, wrong, confused) == ([], [], {})
