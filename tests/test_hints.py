"""The student helper's messages: the idea first, the exact fix after repeated failures, no frame
of the helper in the traceback, and the common mistakes caught before submission."""
import importlib.util
import inspect
import io
import sys
from contextlib import redirect_stderr, redirect_stdout

import numpy as np
import pytest
from IPython.core.interactiveshell import InteractiveShell

from autograder import labs
from autograder.checks import GENERIC
from autograder.labs.lab05 import reference as ref05
from autograder.labs.lab06 import reference as ref06
from autograder.labs.lab07 import reference as ref07
from conftest import ROOT

ELEMENTWISE = """
def attention_backward(dout, x, W_Q, W_K, W_V, W_O, n_heads):
    B, N, d = x.shape
    scale = 1 / math.sqrt(d // n_heads)
    q, k, v = (split_heads(matmul(x, W), n_heads) for W in (W_Q, W_K, W_V))
    att = softmax(q @ k.transpose(0, 1, 3, 2) * scale + causal_mask(N, x.dtype))
    dheads = split_heads(matmul(dout, W_O.T), n_heads)
    datt, dv = dheads @ v.transpose(0, 1, 3, 2), att.transpose(0, 1, 3, 2) @ dheads
    dscores = att * (1 - att) * datt * scale
    grads = [merge_heads(g).reshape(-1, d) for g in (dscores @ k, dscores.transpose(0, 1, 3, 2) @ q, dv)]
    x2 = x.reshape(-1, d)
    dx = sum(g @ W.T for g, W in zip(grads, (W_Q, W_K, W_V))).reshape(x.shape)
    concat = merge_heads(att @ v).reshape(-1, d)
    return dx, x2.T @ grads[0], x2.T @ grads[1], x2.T @ grads[2], concat.T @ dout.reshape(-1, d)
"""


def helper(assignment):
    """A fresh copy of the generated student helper of `assignment`."""
    path = ROOT / "source" / assignment / labs.load(assignment).HELPER
    spec = importlib.util.spec_from_file_location(f"helper_{assignment}_{id(path)}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def student(source, reference, name):
    """`name` defined by `source` in a namespace holding the reference's other functions."""
    namespace = dict(vars(reference))
    exec(source, namespace)
    return namespace[name]


def failure(check, obj) -> str:
    with pytest.raises(AssertionError) as raised:
        check(obj)
    return str(raised.value)


def test_the_exact_fix_appears_only_after_three_different_attempts_failed():
    """Running the same failing cell again is not another attempt: re-running it three times
    printed the exact fix."""
    h = helper("lab06_training")
    mistake = next(m for m in labs.load("lab06_training").suite.parts["attention_backward"].mistakes
                   if m.key == "softmax_elementwise")
    wrong = student(ELEMENTWISE, ref06, "attention_backward")
    again = [failure(h.check, wrong) for _ in range(4)]
    assert all(f"likely cause: {mistake.message}" in m and mistake.fix not in m for m in again)
    assert "2 more different attempts" in again[-1]
    edits = [ELEMENTWISE.replace("    B, N, d = x.shape\n", f"    B, N, d = x.shape\n    tries = {i}\n") for i in (1, 2)]
    second, third = (failure(h.check, student(edit, ref06, "attention_backward")) for edit in edits)
    assert "1 more different attempt fail" in second and mistake.fix not in second
    assert f"fix (shown after 3 different attempts failed this check): {mistake.fix}" in third
    h.check(ref06.attention_backward)                       # a pass starts the count again
    assert mistake.fix not in failure(h.check, wrong)


def fake_check(h, function, mistakes):
    """A visible case of `function(x)` for x = [1, 2], expecting 2x, with the given mistakes."""
    h.CASES[function.__name__] = [("x = [1, 2]", h.Call(function.__name__, (np.array([1.0, 2.0]),)), None,
                                   np.array([2.0, 4.0]), mistakes)]
    return failure(h.check, function)


def test_a_mistake_without_a_fix_never_shows_one():
    h = helper("lab05_transformers")

    def double(x):
        return 3 * x
    messages = [fake_check(h, double, [("it triples", "", np.array([3.0, 6.0]))]) for _ in range(4)]
    assert all("likely cause: it triples" in m for m in messages)
    assert not any("fix (shown after" in m or "more time" in m for m in messages)


def test_an_exception_that_names_its_construct_is_explained_before_submission():
    """The same words as the hidden suite's (verdict.KNOWN_EXCEPTIONS), for a None default and `^`."""
    h = helper("lab05_transformers")

    def double(x, scale=None):
        return scale * x

    def squared(x):
        return x ^ 2
    for wrong, raised in [(double, "'NoneType'"), (squared, "'bitwise_xor' not supported")]:
        assert f"likely cause: {h.known_exception(raised)[0]}" in fake_check(h, wrong, [])


def test_no_cause_is_named_while_an_earlier_function_fails_its_own_checks():
    """A correct apply_rope fed a wrong rope_frequencies (the base left at 10000) returns exactly
    what apply_rope's 'base ignored' mistake returns: naming that mistake told the student to fix
    the line that was right. The earlier function is named instead; once it passes, the later
    check passes too."""
    import inspect
    h = helper("lab07_rope_generation")
    namespace = dict(vars(ref07))
    exec("def rope_frequencies(d_k, base=10000.0):\n    return 10000.0 ** (-np.arange(0, d_k, 2) / d_k)\n"
         + inspect.getsource(ref07.apply_rope), namespace)
    message = failure(h.check, namespace["apply_rope"])
    assert "likely cause:" not in message and "fix (shown" not in message, message
    assert "note:    rope_frequencies does not pass its own visible checks yet" in message
    exec(inspect.getsource(ref07.rope_frequencies), namespace)
    h.check(namespace["apply_rope"])


def test_an_earlier_function_that_is_not_used_hides_no_cause():
    """Only the earlier functions the checked code reaches (kv_attention_step -> apply_rope ->
    rope_frequencies) can hide a cause: a wrong build_vocab says nothing about attention_backward."""
    import inspect
    h = helper("lab06_training")
    namespace = dict(vars(ref06))
    exec("def build_vocab(text):\n    return sorted(set(text))\n" + ELEMENTWISE, namespace)
    message = failure(h.check, namespace["attention_backward"])
    assert "likely cause: " in message and "note:" not in message, message
    h7 = helper("lab07_rope_generation")
    namespace = dict(vars(ref07))
    exec("def rope_frequencies(d_k, base=10000.0):\n    return 10000.0 ** (-np.arange(0, d_k, 2) / d_k)\n"
         + inspect.getsource(ref07.apply_rope) + inspect.getsource(ref07.kv_attention_step).replace(
             "k_cache.shape[1]", "len(k_cache)"), namespace)
    assert "note:    rope_frequencies does not pass" in failure(h7.check, namespace["kv_attention_step"])


WRONG_TOP_K = """
def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
    probs = softmax(np.asarray(logits, dtype=np.float64) / temperature)
    order = np.argsort(probs)[:top_k] if top_k is not None else np.arange(len(probs))
    out = np.zeros_like(probs)
    out[order] = probs[order] / probs[order].sum()
    return out
"""


@pytest.mark.parametrize("held", [
    "def sample_token(logits, rng, temperature=1.0, top_k=None, top_p=None, greedy=False, dist=next_token_probs):\n"
    "    probs = dist(logits, temperature, top_k, top_p)\n",                                   # a default argument
    "DIST = functools.partial(next_token_probs, temperature=1.0)\n"
    "def sample_token(logits, rng, temperature=1.0, top_k=None, top_p=None, greedy=False):\n"
    "    probs = DIST.func(logits, temperature, top_k, top_p)\n",                               # a partial
    "TOOLS = {'probs': next_token_probs}\n"
    "def sample_token(logits, rng, temperature=1.0, top_k=None, top_p=None, greedy=False):\n"
    "    probs = TOOLS['probs'](logits, temperature, top_k, top_p)\n",                          # a dict
])
def test_an_earlier_function_held_in_a_default_a_partial_or_a_dict_is_reached(held):
    """A correct sample_token that reaches a wrong next_token_probs through a default argument,
    a partial or a dict was told 'temperature, top_k and top_p are not passed on'."""
    h = helper("lab06_training")
    namespace = dict(vars(ref06))
    exec("import functools\n" + WRONG_TOP_K + held + "    if greedy:\n        return int(np.argmax(logits))\n"
         "    return int(rng.choice(len(probs), p=probs))\n", namespace)
    message = failure(h.check, namespace["sample_token"])
    assert "likely cause:" not in message and "note:    next_token_probs does not pass" in message, message


def test_an_attribute_of_the_same_name_is_not_a_use():
    """decode calling str.encode does not use the notebook's (wrong) encode."""
    h = helper("lab06_training")
    namespace = dict(vars(ref06))
    exec("def encode(text, stoi):\n    return [stoi[c] for c in dict.fromkeys(text)]\n"
         "def decode(ids, itos):\n    return ''.join(itos[int(i)] for i in ids if int(i) != 0).encode().decode()\n",
         namespace)
    assert "note:" not in failure(h.check, namespace["decode"])


def test_an_earlier_stub_is_not_called_the_checked_functions_and_shown_notes_do_not_count():
    """A correct sample_token calling next_token_probs, still the stub, was told it is the stub
    itself; and failures shown with the note brought the exact fix forward."""
    import inspect
    h = helper("lab06_training")
    namespace = dict(vars(ref06))
    exec("def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):\n    raise NotImplementedError()\n"
         + inspect.getsource(ref06.sample_token), namespace)
    message = failure(h.check, namespace["sample_token"])
    assert "is still the stub" not in message and "note:    next_token_probs does not pass" in message, message
    h7 = helper("lab07_rope_generation")
    namespace = dict(vars(ref07))
    exec("def rope_frequencies(d_k, base=10000.0):\n    return 10000.0 ** (-np.arange(0, d_k, 2) / d_k)\n"
         + inspect.getsource(ref07.apply_rope).replace("rope_frequencies(x.shape[-1], base)",
                                                       "rope_frequencies(x.shape[-1])"), namespace)
    for _ in range(3):
        assert "note:" in failure(h7.check, namespace["apply_rope"])
    exec(inspect.getsource(ref07.rope_frequencies), namespace)
    message = failure(h7.check, namespace["apply_rope"])
    assert "likely cause: the base is not passed on" in message and "fix (shown after" not in message, message


def test_where_names_the_students_line_not_one_inside_numpy():
    h = helper("lab05_transformers")
    namespace = dict(vars(ref05))
    exec("def softmax(z):\n    e = np.exp(z)\n    return np.einsum('ij,jk->ik', e, e)\n", namespace)
    message = failure(h.check, namespace["softmax"])
    assert "where:   line 3 of softmax" in message, message


def test_a_kv_step_reading_the_heads_as_the_position_is_not_named_another_mistake():
    """`t = len(k_cache)` reads the number of heads: the visible cases are at positions that no
    head count, t - 1 or t + 1 matches, so no other mistake is named; its own is (issue 32)."""
    import inspect
    h = helper("lab07_rope_generation")
    source = inspect.getsource(ref07.kv_attention_step)
    wrong = student(source.replace("t = d // n_heads, k_cache.shape[1]", "t = d // n_heads, len(k_cache)"),
                    ref07, "kv_attention_step")
    message = failure(h.check, wrong)
    own = next(m for m in LAB07.parts["kv_attention_step"].mistakes if m.key == "position_from_heads_axis")
    causes = [line.split("likely cause: ", 1)[1] for line in message.splitlines() if "likely cause: " in line]
    assert "failed the visible check" in message and causes == [own.message], message


def run_in_ipython(*cells) -> str:
    shell = InteractiveShell.instance(colors="nocolor")
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(out):
        for cell in cells:
            shell.run_cell(cell)
    return out.getvalue()


@pytest.mark.parametrize("wrong, shown", [
    ("def layer_norm(x, gamma=None, beta=None, eps=1e-5):\n"
     "    xc = x - x.mean(axis=-1, keepdims=True)\n"
     "    return gamma * xc / np.sqrt((xc * xc).mean(axis=-1, keepdims=True) + eps) + beta\n",
     ["Traceback (your code only):", "return gamma * xc", "raised TypeError: unsupported operand",
      "likely cause: gamma and beta are used as given, but they default to None"]),
    ("def layer_norm(x, gamma=None, beta=None, eps=1e-5):\n    return x\n",
     ["AssertionError: layer_norm failed the visible check"]),
    ("def layer_norm(x, gamma=None, beta=None, eps=1e-5):\n    raise NotImplementedError()\n",
     ["NotImplementedError: layer_norm is still the stub"]),
])
def test_an_ipython_traceback_shows_the_message_and_no_frame_of_the_helper(monkeypatch, wrong, shown):
    folder = ROOT / "source" / "lab05_transformers"
    monkeypatch.syspath_prepend(str(folder))
    sys.modules.pop("lab05_checks", None)
    text = run_in_ipython("import numpy as np\nfrom lab05_checks import check", wrong, "check(layer_norm)")
    for piece in shown:
        assert piece in text, text
    assert "lab05_checks" not in text.replace("from lab05_checks import check", ""), text
    assert "def check(" not in text and "_fail(" not in text and "execute(" not in text, text


GLOBAL_RANDOM = """
def get_batch(stream, starts, batch_size, block_size, rng):
    s = np.random.choice(starts, size=batch_size)
    window = stream[s[:, None] + np.arange(block_size + 1)]
    return window[:, :-1], window[:, 1:]
"""

FIXED_SEED = GLOBAL_RANDOM.replace("np.random.choice", "np.random.default_rng(0).choice")

GLOBAL_SAMPLE = """
def sample_token(logits, rng, temperature=1.0, top_k=None, top_p=None, greedy=False):
    if greedy:
        return int(np.argmax(logits))
    probs = next_token_probs(logits, temperature, top_k, top_p)
    return int(np.random.choice(len(probs), p=probs))
"""


PLAIN_SAMPLE = """
def sample_token(logits, rng, temperature=1.0, top_k=None, top_p=None, greedy=False):
    p = np.exp(logits - np.max(logits))
    return int(rng.choice(len(p), p=p / p.sum()))
"""

NO_DROPOUT = """
def dropout(x, p, rng, training=True):
    return x.copy()
"""


@pytest.mark.parametrize("assignment, source, name, problem", [
    ("lab06_training", GLOBAL_RANDOM, "get_batch", "the same seed gave another result once np.random's global"),
    ("lab06_training", FIXED_SEED, "get_batch", "every seed gave the same result"),
    ("lab06_training", GLOBAL_SAMPLE, "sample_token", "the same seed gave another result once np.random's global"),
    ("lab06_training", PLAIN_SAMPLE, "sample_token", "failed the visible check 'greedy'"),
    ("lab07_rope_generation", NO_DROPOUT, "dropout", "failed the visible check 'training, p = 0.75, seed 6"),
])
def test_randomness_that_does_not_come_from_rng_is_caught(assignment, source, name, problem):
    """Also code that ignores the option a case names (a plain sampler once passed 'greedy': the
    top token had 0.79 of the mass and both seeds drew it), and a dropout that drops nothing (told
    so: reading the training flag the wrong way round also gives x in training, but not at
    evaluation)."""
    reference = {"lab06_training": ref06, "lab07_rope_generation": ref07}[assignment]
    message = failure(helper(assignment).check, student(source, reference, name))
    assert problem in message
    never = next(m.message for m in LAB07.parts["dropout"].mistakes if m.key == "never_drops")
    assert assignment != "lab07_rope_generation" or f"likely cause: {never}" in message, message


ALWAYS_ON = """
def dropout(x, p, rng, training=True):
    if p == 0:
        return x.copy()
    return np.where(rng.random(x.shape) >= p, x / (1 - p), 0.0)
"""


def test_two_mistakes_that_look_alike_on_a_visible_case_are_told_apart_by_the_cases_before_it():
    """Dropping at evaluation too, and reading the training flag the wrong way round, give the
    same result at evaluation (the helper named the second for the first, then neither): code
    that reaches the evaluation case has passed the training cases, which the inverted flag
    fails, so only the first fits."""
    mistakes = {m.key: m for m in labs.load("lab07_rope_generation").suite.parts["dropout"].mistakes}
    message = failure(helper("lab07_rope_generation").check, student(ALWAYS_ON, ref07, "dropout"))
    assert "failed the visible check 'evaluation: x unchanged'" in message
    assert f"likely cause: {mistakes['always_on'].message}" in message, message


def test_the_reference_passes_the_lab07_dropout_checks(capsys):
    helper("lab07_rope_generation").check(ref07.dropout)
    assert "5 visible checks passed" in capsys.readouterr().out


def as_named(function, name):
    """`function` under the graded name `name`, in a namespace with the reference's other parts."""
    import types
    return types.FunctionType(function.__code__, {**vars(ref07), **function.__globals__}, name,
                              function.__defaults__, function.__closure__)


LAB07 = labs.load("lab07_rope_generation").suite
LAB07_MISTAKES = [(name, m) for name, part in LAB07.parts.items() for m in part.mistakes if m.impl]


@pytest.mark.parametrize("name, mistake", LAB07_MISTAKES, ids=[f"{n}/{m.key}" for n, m in LAB07_MISTAKES])
def test_every_lab07_mistake_is_named_by_the_visible_checks(name, mistake):
    """No catalogued cause that the visible cases can never show: run as the student's code,
    every mistake is the only fit of its outcomes on all of the part's cases (the helper named
    neither of two look-alikes, and some mistakes passed every visible case). Dropping nothing
    in training and reading the training flag the wrong way round both return x in training,
    and only a later case tells them apart: judged on the first failing case alone, neither
    was named."""
    wrong = as_named(LAB07.namespace_with(mistake)[name], name)
    message = failure(helper("lab07_rope_generation").check, wrong)
    assert f"likely cause: {mistake.message}" in message, message


def lab07_bank():
    import importlib
    import pkgutil
    folder = ROOT / "tests" / "mutants" / "lab07"
    return [m for info in pkgutil.iter_modules([str(folder)])
            for m in importlib.import_module(f"mutants.lab07.{info.name}").WRONG]


LAB07_BANK = lab07_bank()
# what the issue found passing the visible checks, or named wrongly there
MUST_FAIL = {"not_rescaled", "divided_by_p", "in_place", "dropped_entries_zeroed_in_place", "float64_result",
             "split_first_then_d_wide_table", "model_width_frequencies_in_every_head", "mask_minus_100_added",
             "mask_minus_500_set", "training_flag_inverted", "training_flag_ignored", "one_decision_per_row"}


@pytest.mark.parametrize("mutant", LAB07_BANK, ids=[f"{m.part}/{m.name}" for m in LAB07_BANK])
def test_a_lab07_wrong_answer_gets_a_right_cause_or_none_before_submission(mutant):
    """Every wrong answer of the bank, run through the visible checks: a cause named is the one
    its author made (a student who split first and then turned each head with a d-wide table
    was told that RoPE is applied before the split); the answers of MUST_FAIL fail."""
    namespace = dict(vars(ref07))
    exec(mutant.code, namespace)
    catalogue = {m.key: m.message for m in [*LAB07.parts[mutant.part].mistakes, *GENERIC]}
    try:
        helper("lab07_rope_generation").check(namespace[mutant.part])
    except AssertionError as exc:
        causes = [line.split("likely cause: ", 1)[1] for line in str(exc).splitlines() if "likely cause: " in line]
        # a mask kept across calls shows as every seed giving the same mask there (its message
        # names that case too); the hidden check tells it apart with a call on another shape
        also = [catalogue["seed_ignored"]] if mutant.diagnosis == "mask_reused" else []
        assert causes in ([], [catalogue.get(mutant.diagnosis)], also), (causes, str(exc))
    else:
        assert mutant.name not in MUST_FAIL, "passes the visible checks"


def test_the_answers_that_must_fail_are_in_the_bank():
    assert MUST_FAIL <= {m.name for m in LAB07_BANK}


def test_a_float64_rotation_of_float32_input_fails_the_visible_check():
    """The hidden tests take points for it, so the visible check must show it, and say why."""
    wrong = student(inspect.getsource(ref07.apply_rope).replace(".astype(x.dtype)", "").replace(
        "np.empty_like(x)", "np.empty(x.shape)"), ref07, "apply_rope")
    message = failure(helper("lab07_rope_generation").check, wrong)
    assert "float32 x (3, 4)" in message and "Cannot cast array data from dtype('float64')" in message, message


def test_the_randomness_check_leaves_the_global_state_as_it_found_it():
    np.random.seed(7)
    state = np.random.get_state()
    helper("lab06_training").check(ref06.get_batch)
    assert all(np.array_equal(a, b) for a, b in zip(np.random.get_state(), state))


@pytest.mark.parametrize("name", ["get_batch", "sample_token", "cross_entropy", "attention_backward"])
def test_the_reference_passes_the_visible_checks(name, capsys):
    helper("lab06_training").check(getattr(ref06, name))
    assert "visible checks passed" in capsys.readouterr().out


@pytest.mark.parametrize("source, cause", [
    ("def cross_entropy(logits, targets):\n"
     "    p = np.exp(logits) / np.exp(logits).sum(axis=-1, keepdims=True)\n"
     "    return float(-np.log(np.take_along_axis(p, targets[..., None], axis=-1)).mean())\n",
     "np.exp(u) overflows"),
    ("def cross_entropy(logits, targets):\n"
     "    return float(-np.log(np.take_along_axis(softmax(logits), targets[..., None], axis=-1)).mean())\n",
     "log(softmax(u))"),
    (ELEMENTWISE, "the element-wise derivative α(1 - α)"),
])
def test_common_lab06_mistakes_are_named_before_submission(source, cause):
    name = "attention_backward" if "attention_backward" in source else "cross_entropy"
    assert "likely cause: " in (message := failure(helper("lab06_training").check, student(source, ref06, name)))
    assert cause in message


def test_a_vocabulary_of_numpy_strings_passes_the_visible_check(capsys):
    """np.unique over characters gives np.str_, which is a str: the visible check agrees with the
    hidden tests (tests/mutants/lab06/build_vocab.py, numpy_strings) and passes it."""
    helper("lab06_training").check(student(
        'def build_vocab(names):\n    chars = np.unique(list("".join(names)))\n'
        '    itos = ["."] + list(chars[chars != "."])\n    return {c: i for i, c in enumerate(itos)}, itos\n',
        ref06, "build_vocab"))
    assert "visible checks passed" in capsys.readouterr().out
