"""What the labs' prose says about numbers is true for the code that runs.

Each solution notebook is executed once per test session (Lab 06 trains its model, about two
minutes), with one extra cell that measures, from the notebook's own variables, every quantity
the text states. Each test names the sentence it checks and fails if the sentence is no longer
in the notebook or the number no longer matches.
"""
import json
import math

import pytest


MEASURE = {
    "lab05_transformers": r'''
import json as _json
_dots = PE @ PE.T
_omega = 10000.0 ** (-np.arange(0, 64, 2) / 64)
_probe = []
for _c in range(mha.n_heads):
    _cols = slice(_c * mha.d_k, (_c + 1) * mha.d_k)
    _probe.append(np.abs(W_heads[_c] - causal_attention(X @ mha.W_Q[:, _cols], X @ mha.W_K[:, _cols],
                                                         X @ mha.W_V[:, _cols])[1]).max())
_gaps = {f"{L} {p}": float(np.abs(last_logits(L, p, ".emma") - last_logits(L, p, ".mmea")).max())
         for L in (1, 2) for p in (True, False)}
print("CLAIMS" + _json.dumps({
    "shift_gap": max(float(np.ptp(np.diagonal(_dots, k))) for k in range(64)),
    "formula_gap": max(abs(float(_dots[0, k]) - float(np.cos(_omega * k).sum())) for k in range(64)),
    "cos": {str(k): float(S[0, k]) for k in range(64)},
    "row_norms": np.linalg.norm(PE, axis=1).tolist(),
    "it_row": weights[7].tolist(), "other_rows_max": float(weights[:7].max()),
    "causal_first": w_causal[0].tolist(), "last_row_gap": float(np.abs(w_causal[7] - w_full[7]).max()),
    "cross_full": w_full[3].tolist(), "cross_causal": w_causal[3].tolist(),
    "probe_gap": float(max(_probe)),
    "stream": float(stream.mean()), "update": float(update.mean()),
    "gaps": _gaps, "probs": [float(probs.min()), float(probs.max())],
    "pe32_norm": float(np.linalg.norm(positional_encoding(16, 32), axis=1).mean()),
}))
''',
    "lab06_training": r'''
import json as _json
_rng = np.random.default_rng(0)
_logits, _targets = _rng.standard_normal((3, 5, 27)), _rng.integers(0, 27, size=(3, 5))
_analytic = cross_entropy_backward(_logits, _targets)
_f = lambda u: cross_entropy(u, _targets)
_adam = paths["AdamW, lr 0.3"]
_run = {str(k): running_loss(h["train"]).tolist() for k, h in runs.items()}
print("CLAIMS" + _json.dumps({
    "ladder": ladder, "held": history["held"], "held_step": history["held_step"],
    "train_steps": len(history["train"]), "first_batch": history["train"][0],
    "running_jump": float(np.abs(np.diff(running_loss(history["train"])[10:])).max()),
    "params": int(sum(p.size for p in params.values())),
    "longest_name": max(map(len, names)), "block": BLOCK,
    "gradcheck": rel_error(_analytic, numerical_gradient(_f, _logits)),
    "gradcheck_tiny_h": rel_error(_analytic, numerical_gradient(_f, _logits, h=1e-12)),
    "gradcheck_large_h": rel_error(_analytic, numerical_gradient(_f, _logits, h=1e-4)),
    "gd_end": paths["gradient descent, lr 0.019"][-1].tolist(),
    "adam_cross_a": int(np.argmax(_adam[:, 0] > 0)), "adam_cross_b": int(np.argmax(_adam[:, 1] < 0)),
    "lr_held": {str(k): h["held"][-1] for k, h in runs.items()}, "lr_running": _run,
    "entropy": entropy.tolist(), "uniform": float(uniform),
}))
''',
}


@pytest.fixture(scope="session")
def executed(executed_notebook):
    """{assignment: (the notebook's markdown text, the measured quantities)}, each run once."""
    def run(assignment):
        nb = executed_notebook(assignment, MEASURE[assignment])
        text = "".join(o.get("text", "") for o in nb.cells[-1].outputs if o.output_type == "stream")
        errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
        assert errors == [], errors
        prose = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
        return prose, json.loads(text.split("CLAIMS", 1)[1])
    return run


def says(prose, *sentences):
    for sentence in sentences:
        assert sentence in prose, f"the notebook no longer says: {sentence!r}"


# ---------------------------------------------------------------------------------------- Lab 05

@pytest.fixture(scope="module")
def lab05(executed):
    return executed("lab05_transformers")


def test_pe_dot_products_depend_only_on_the_distance(lab05):
    prose, m = lab05
    says(prose, r"\sum_{m} \cos(\omega_m k)", "lie exactly on top of each other",
         "the dot product depends\nonly on the distance")
    assert m["shift_gap"] < 1e-9                      # PE(pos)·PE(pos+k) is the same for every pos
    assert m["formula_gap"] < 1e-9                    # and equals sum_m cos(omega_m k)
    assert max(m["row_norms"]) - min(m["row_norms"]) < 1e-12
    assert m["row_norms"][0] == pytest.approx(math.sqrt(32))


def test_pe_similarity_numbers_and_shape(lab05):
    prose, m = lab05
    says(prose, "0.658", "(0.97 at $k = 1$, 0.73\nat $k = 5$)", "still about 0.45 at $k = 63$",
         "It does not keep falling")
    cos = {int(k): v for k, v in m["cos"].items()}
    assert round(cos[10], 3) == 0.658 and round(cos[1], 2) == 0.97 and round(cos[5], 2) == 0.73
    assert round(cos[63], 2) == 0.45
    assert any(cos[k + 1] > cos[k] + 0.01 for k in range(1, 63))          # it has bumps
    assert min(cos.values()) > 0.4


def test_attention_example(lab05):
    prose, m = lab05
    says(prose, "(it comes out\nat 0.63)", "(no entry above 0.4)")
    assert max(range(8), key=lambda j: m["it_row"][j]) == 1                 # "chicken"
    assert round(m["it_row"][1], 2) == 0.63
    assert m["other_rows_max"] < 0.4


def test_causal_rows(lab05):
    prose, m = lab05
    says(prose, "The first row is $(1, 0, \\dots, 0)$", "The last row is identical in both maps",
         "0.05 and 0.22", "0.10 and 0.42", "both ratios are about\n4.4")
    assert m["causal_first"] == [1.0] + [0.0] * 7
    assert m["last_row_gap"] < 1e-12
    full, causal = m["cross_full"], m["cross_causal"]
    assert [round(v, 2) for v in full[:2]] == [0.05, 0.22] and [round(v, 2) for v in causal[:2]] == [0.10, 0.42]
    assert full[1] / full[0] == pytest.approx(causal[1] / causal[0]) and round(causal[1] / causal[0], 1) == 4.4


def test_the_head_maps_are_read_off_the_students_forward(lab05):
    prose, m = lab05
    says(prose, "row $i$ of head $c$'s output is\n$\\sum_j \\alpha_{ij}\\mathbf{e}_j$, its row of weights")
    assert m["probe_gap"] < 1e-10


def test_residual_update_is_about_one_percent(lab05):
    prose, m = lab05
    says(prose, "About 1 %", "(norm about 3.6 here): the cell prints 1.2 % on average")
    assert round(m["stream"], 1) == 3.6
    assert round(100 * m["update"] / m["stream"], 1) == 1.2


def test_the_no_positions_experiment(lab05):
    prose, m = lab05
    says(prose, "Without positions and one block, the logits are equal up to rounding",
         "With two blocks\nthey differ", "(about $10^{-5}$)", "a positional row has norm 4")
    gaps = m["gaps"]
    assert gaps["1 False"] < 1e-12
    assert gaps["2 False"] > 1e-4
    assert 1e-6 < gaps["1 True"] < 1e-4 and 1e-6 < gaps["2 True"] < 1e-4
    assert m["pe32_norm"] == pytest.approx(4.0)


def test_untrained_model_is_close_to_uniform(lab05):
    prose, m = lab05
    says(prose, "How far\nfrom uniform is it, and why?")   # the range itself is left to the plot
    assert 0.025 < m["probs"][0] and m["probs"][1] < 0.05


def test_lab05_no_longer_claims_lab06_trains_exactly_this_forward_pass(lab05):
    prose, _ = lab05
    assert "trains exactly this forward pass" not in prose
    assert "falls off with the distance" not in prose
    assert "Left: each row is one position. Right:" not in prose.replace("\n", " ")


# ---------------------------------------------------------------------------------------- Lab 06

@pytest.fixture(scope="module")
def lab06(executed):
    return executed("lab06_training")


def test_the_loss_ladder(lab06):
    prose, m = lab06
    ladder = m["ladder"]
    says(prose, "about 0.25 nats below counting trigrams (2.24)", "0.47 below counting bigrams (2.45)",
         "to about\n1.99 nats per character")
    assert ladder["uniform, ln 27"] == pytest.approx(math.log(27))
    assert round(ladder["trigram counts"], 2) == 2.24 and round(ladder["bigram counts"], 2) == 2.45
    values = list(ladder.values())
    assert values == sorted(values, reverse=True)                            # each rung is lower
    held = m["held"][-1]
    assert abs(held - 1.99) < 0.015
    assert round(ladder["trigram counts"] - held, 2) == pytest.approx(0.25, abs=0.015)
    assert round(ladder["bigram counts"] - held, 2) == pytest.approx(0.47, abs=0.015)


def test_the_loss_curve_starts_at_step_0_near_ln27(lab06):
    prose, m = lab06
    says(prose, "Before training and every 250\nsteps we measure the held-out loss",
         "so the loss starts at about $\\ln 27 \\approx 3.30$")
    assert m["held_step"][0] == 0 and m["held_step"][-1] == m["train_steps"] == 4000
    assert abs(m["held"][0] - math.log(27)) < 0.05 and abs(m["first_batch"] - math.log(27)) < 0.1


def test_the_running_loss_does_not_jump(lab06):
    prose, m = lab06
    says(prose, "an exponential moving average $r \\leftarrow 0.98\\,r + 0.02\\,L$")
    assert m["running_jump"] < 0.02


def test_model_size_and_data(lab06):
    prose, m = lab06
    says(prose, "The model has 102,336 parameters", "4.1 million\npredictions",
         "Every name (2 to 15 letters plus its `.`) fits in\none window")
    assert m["params"] == 102_336
    assert round(4000 * 64 * m["block"] / 1e6, 1) == 4.1
    assert m["longest_name"] + 2 <= m["block"] + 1


def test_gradient_check_error_and_step_size(lab06):
    prose, m = lab06
    says(prose, "The relative error is about $10^{-8}$, not 0.", "Almost all of it is rounding.",
         "*larger* step, $h = 10^{-4}$, gives a smaller error (about $2 \\times 10^{-10}$)",
         "to a relative error near $10^{-2}$")
    assert 1e-9 < m["gradcheck"] < 1e-7
    assert 1e-10 < m["gradcheck_large_h"] < 5e-10 and m["gradcheck_large_h"] < m["gradcheck"] / 10
    assert 1e-3 < m["gradcheck_tiny_h"] < 1e-1


def test_adam_versus_gradient_descent(lab06):
    prose, m = lab06
    says(prose, "($a \\approx -0.39$ after 60 steps)", "crosses $b = 0$ after 4 steps and $a = 0$ after about 15")
    assert round(m["gd_end"][0], 2) == -0.39 and abs(m["gd_end"][1]) < 0.01
    assert m["adam_cross_b"] == 4 and 13 <= m["adam_cross_a"] <= 17


def test_the_learning_rate_experiment(lab06):
    prose, m = lab06
    says(prose, "(held-out about 2.40)", "0.03 drops fastest at first",
         "0.003 catches up after about 150 steps and the two end\nlevel (about 2.24)")
    held, run = m["lr_held"], m["lr_running"]
    assert round(held["0.0003"], 1) == 2.4
    assert round(held["0.003"], 2) == pytest.approx(2.24, abs=0.011) and abs(held["0.03"] - held["0.003"]) < 0.02
    assert run["0.03"][20] < run["0.003"][20] < run["0.0003"][20]
    catch_up = next(s for s in range(300) if s > 20 and run["0.003"][s] < run["0.03"][s])
    assert 100 <= catch_up <= 200


def test_trained_heads_are_more_focused_than_uniform(lab06):
    prose, m = lab06
    says(prose, "*Model answer.* Below")
    assert all(e < m["uniform"] for layer in m["entropy"] for e in layer)


def test_lab06_no_longer_cites_what_students_never_saw(lab06):
    prose, _ = lab06
    for gone in ("the blog model", "4,000 steps of 64 names", "makemore transformer", "MLP of makemore"):
        assert gone not in prose
