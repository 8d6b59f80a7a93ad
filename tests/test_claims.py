"""What the labs' prose says about numbers is true for the code that runs.

Each solution notebook is executed once per test session (Lab 06 trains its model, about two
minutes), with one extra cell that measures, from the notebook's own variables, every quantity
the text states. Each test names the sentence it checks and fails if the sentence is no longer
in the notebook or the number no longer matches.
"""
import json
import math

import pytest

pytestmark = pytest.mark.full     # the full tier: every notebook run top to bottom, trainings included

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
    "lab07_rope_generation": r'''
import json as _json
_names = [name_of(*_c) for _c in CONFIGS]
_extrapolation = {}
for _p in POSITIONS:
    _probs = softmax(forward(models[_p], long_x, _p)[0].astype(np.float64))
    _nats = -np.log(np.take_along_axis(_probs, long_y[..., None], axis=-1)[..., 0]).mean(axis=0)
    _extrapolation[_p] = [float(_nats[_a:_b].mean()) for _a, _b in stretches]
_norms = {}
for _p in ("rope", "sinusoidal", "scaled sinusoidal"):
    _, (_, _saved, _top, *_) = forward(models[_p], sample, _p)
    _norms[_p] = [np.linalg.norm(_x.astype(np.float64), axis=-1).mean(axis=0).tolist()
                  for _x in [_l[0] for _l in _saved] + [_top]]
_spread = lambda S: float(max(np.ptp(np.diagonal(S, _k)) for _k in range(1 - len(S), len(S))))  # noqa: E731
_bug_similarity = np.cos(-np.arange(64)[:, None, None] * frequencies_per_head(64, 4, True)).mean(axis=-1)
print("CLAIMS" + _json.dumps({
    "wavelengths16": (2 * np.pi / rope_frequencies(16)).tolist(),
    "wavelengths16_without_two": (2 * np.pi / 10000.0 ** (-np.arange(8) / 16)).tolist(),
    "bug_wavelengths": (2 * np.pi / frequencies_per_head(64, 4, True)).tolist(),
    "right_wavelengths": (2 * np.pi / frequencies_per_head(64, 4, False)).tolist(),
    "bug_similarity": _bug_similarity.tolist(),
    "spread_rope": _spread(S_rope), "spread_added": _spread(S_added),
    "cache_gap": float(gap), "layers": L, "d": int(models["rope"]["E"].shape[1]),
    "params": int(sum(_v.size for _v in models["rope"].values())), "steps": STEPS, "context": CONTEXT,
    "train_chars": len(train_ids), "vocabulary": len(itos),
    "held": {_n: [runs[_n, _s]["held"] for _s in SEEDS] for _n in _names},
    "train": {_n: [runs[_n, _s]["train"] for _s in SEEDS] for _n in _names},
    "eval_steps": runs[_names[0], 0]["step"],
    "extrapolation": _extrapolation, "stretches": stretches,
    "entropy": {_p: measures[_p][0].mean(axis=(1, 3)).tolist() for _p in POSITIONS}, "uniform": float(uniform),
    "profiles": {_p: profiles[_p].tolist() for _p in shown}, "offsets": offsets.tolist(),
    "norms": _norms, "cpu_seconds": time.process_time(),
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


# ---------------------------------------------------------------------------------------- Lab 07

@pytest.fixture(scope="module")
def lab07(executed):
    return executed("lab07_rope_generation")


def mean_final(m, name, which="held"):
    return sum(run[-1] for run in m[which][name]) / len(m[which][name])


def test_lab07_rope_wavelengths(lab07):
    prose, m = lab07
    says(prose, r"from $2\pi \cdot 10^{3.5} \approx 19{,}900$ positions to", r"$2\pi \cdot 10^{1.75} \approx 350$")
    assert round(m["wavelengths16"][-1], -2) == 19_900 and round(m["wavelengths16_without_two"][-1], -1) == 350
    assert round(m["wavelengths16"][0]) == 6


def test_lab07_rope_scores_depend_on_the_offset_only(lab07):
    prose, m = lab07
    says(prose, "spread along the diagonals at rounding\nlevel (about $10^{-15}$)", "(the cell prints 7.53)")
    assert m["spread_rope"] < 1e-13
    assert round(m["spread_added"], 2) == 7.53


def test_lab07_the_per_head_bugs_wavelengths(lab07):
    prose, m = lab07
    says(prose, "(wavelengths of about 6\nto 47 positions)", "from 1 to about 0 within four positions",
         "swings between about $-0.3$ and $0.4$ with no trend", "(its curve stays at 1.00)")
    bug, right = m["bug_wavelengths"], m["right_wavelengths"]
    assert round(min(bug[0])) == 6 and round(max(bug[0])) == 47
    assert round(min(bug[-1]), -2) == 6_300 and round(max(bug[-1]), -3) == 47_000
    assert all(row == right[0] for row in right)                           # the same in every head
    first = [row[0] for row in m["bug_similarity"]]                        # head 0, a matching key
    last = [row[-1] for row in m["bug_similarity"]]
    assert first[0] == pytest.approx(1) and abs(first[4]) < 0.05
    assert -0.3 < min(first[4:]) < -0.25 and 0.4 < max(first[4:]) < 0.45
    assert round(min(last), 2) == 1.0


def test_lab07_cache_memory(lab07):
    prose, m = lab07
    says(prose, r"$2 \cdot 2 \cdot 512 \cdot 64 = 131{,}072$ numbers (512 KiB in float32)",
         r"$2 \cdot 32 \cdot 8192 \cdot 4096 \approx 2.1 \times 10^9$ numbers, about 4.3 GB")
    assert 2 * m["layers"] * 512 * m["d"] == 131_072 and 131_072 * 4 == 512 * 1024
    assert round(2 * 32 * 8192 * 4096 / 1e9, 1) == 2.1 and round(2 * 32 * 8192 * 4096 * 2 / 1e9, 1) == 4.3
    assert m["cache_gap"] < 1e-10


def test_lab07_the_training_setup(lab07):
    prose, m = lab07
    says(prose, "103,744\nparameters", "400\nbatches of 32 windows (819,200 characters, less than one pass",
         "Before the first step and every 100 steps")
    assert m["params"] == 103_744 and m["steps"] == 400 and m["context"] == 64
    assert m["steps"] * 32 * m["context"] == 819_200 < m["train_chars"]
    assert m["eval_steps"][0] == 0 and m["eval_steps"][-1] == 400
    for runs in m["held"].values():                     # from step 0, where the model knows nothing
        assert all(abs(run[0] - math.log(m["vocabulary"])) < 0.06 for run in runs)


HELD = {"rope": 1.97, "rope, dropout 0.1": 1.99, "per-head bug": 2.00, "scaled sinusoidal": 2.29, "none": 2.35,
        "sinusoidal": 3.06}


def test_lab07_the_ablation_table(lab07):
    prose, m = lab07
    says(prose, "RoPE 1.97, RoPE with dropout 1.99, per-head bug 2.00, scaled sinusoidal 2.29, no positions 2.35",
         "Lab 05's sinusoidal 3.06 nats per character", "agree within 0.03", "(0.10 apart",
         "except dropout against the bug (0.01)", "RoPE is 1.09 below", "recovers 0.77 of that; the remaining 0.32",
         "No positions at all cost\n0.38", "The per-head bug costs 0.03", "spread of its seeds (0.02) and of RoPE's (0.01)")
    held = {name: mean_final(m, name) for name in m["held"]}
    for name, quoted in HELD.items():
        assert abs(held[name] - quoted) <= 0.012, (name, held[name])
    assert sorted(held, key=held.get) == list(HELD)
    spread = {name: abs(runs[0][-1] - runs[1][-1]) for name, runs in m["held"].items()}
    assert max(v for k, v in spread.items() if k != "sinusoidal") < 0.03 and round(spread["sinusoidal"], 2) == 0.10
    ranked = list(HELD)
    steps = {(a, b): held[b] - held[a] for a, b in zip(ranked, ranked[1:])}
    for (a, b), step in steps.items():
        if (a, b) != ("rope, dropout 0.1", "per-head bug"):
            assert step > max(spread[a], spread[b]), (a, b)
    assert round(held["sinusoidal"] - held["rope"], 2) == 1.09
    assert round(held["sinusoidal"] - held["scaled sinusoidal"], 2) == 0.77
    assert round(held["scaled sinusoidal"] - held["rope"], 2) == pytest.approx(0.32, abs=0.011)
    assert round(held["none"] - held["rope"], 2) == 0.38 and round(held["per-head bug"] - held["rope"], 2) == 0.03
    assert round(spread["per-head bug"], 2) == 0.02 and round(spread["rope"], 2) == 0.01


def test_lab07_dropout_narrows_the_gap_but_costs_held_out_loss(lab07):
    prose, m = lab07
    says(prose, "dropout raises the held-out loss by 0.02", "(0.07 against 0.10 without it)",
         "the held-out loss still falls at every evaluation")
    gap = {name: mean_final(m, name) - mean_final(m, name, "train") for name in ("rope", "rope, dropout 0.1")}
    assert round(gap["rope, dropout 0.1"], 2) == pytest.approx(0.07, abs=0.011) and round(gap["rope"], 2) == 0.10
    assert round(mean_final(m, "rope, dropout 0.1") - mean_final(m, "rope"), 2) == 0.02
    for runs in (m["held"]["rope"], m["held"]["rope, dropout 0.1"]):
        assert all(all(b < a for a, b in zip(run, run[1:])) for run in runs)
    starts = [h[0] - t[0] for h, t in zip(m["held"]["rope"], m["train"]["rope"])]
    assert all(abs(s) < 0.01 for s in starts)


EXTRAPOLATION = {   # positions 0-63, 64-95, 96-127, 128-191, 192-255
    "sinusoidal": [3.09, 3.73, 4.13, 4.28, None], "scaled sinusoidal": [2.30, 2.45, 2.65, None, None],
    "rope": [1.96, 1.95, 2.13, None, 3.00], "per-head bug": [None, None, None, None, 2.38],
    "none": [2.33, 2.42, None, None, None]}


def test_lab07_the_extrapolation(lab07):
    prose, m = lab07
    says(prose, "3.09 over positions 0–63,\n3.73 over 64–95, 4.13 over 96–127 and 4.28 over 128–191",
         "(2.30, then 2.45 and 2.65)", "(1.96 over\n0–63, 1.95 over 64–95)", "(2.13 over 96–127, 3.00 over 192–255)",
         "(2.38 at the end)", "(2.33, then 2.42 to 2.50)")
    assert m["stretches"] == [[0, 64], [64, 96], [96, 128], [128, 192], [192, 256]]
    loss = m["extrapolation"]
    for name, quoted in EXTRAPOLATION.items():
        for got, want in zip(loss[name], quoted):
            assert want is None or abs(got - want) <= 0.006, (name, loss[name])
    assert loss["sinusoidal"][3] > math.log(65) > loss["sinusoidal"][2]
    assert max(loss["none"][1:]) <= 2.50 + 0.005
    change = {name: max(values) - values[0] for name, values in loss.items()}
    assert min(change, key=change.get) == "none" and loss["per-head bug"][-1] < loss["rope"][-1]


def test_lab07_where_the_heads_look(lab07):
    prose, m = lab07
    says(prose, "seven of the\neight heads put their largest mean weight on offset $-1$",
         "with entropies of 0.85 to 1.36 bits\nin layer 0 against 4.62", "(layer 0: 0.55 at $-1$ and 0.27 at 0)",
         "give no offset more than 0.06, with entropies of 3.6 to 4.2 bits", "(about 4.3 bits on\naverage)",
         "(about 2.9)", "(1.1 and 1.4 bits on\naverage)", "(1.6 and 2.7)", "(0.45 and 0.43 at offset 0)")
    offsets, profiles, entropy = m["offsets"], m["profiles"], m["entropy"]
    peaks = [[offsets[max(range(len(p)), key=p.__getitem__)] for p in layer] for layer in profiles["rope"]]
    assert sum(peak == -1 for layer in peaks for peak in layer) == 7 and peaks[0][0] == 0
    assert round(min(entropy["rope"][0]), 2) == 0.85 and round(max(entropy["rope"][0]), 2) == 1.36
    assert round(m["uniform"], 2) == 4.62
    bug = profiles["per-head bug"]
    assert round(bug[0][0][offsets.index(-1)], 2) == 0.55 and round(bug[0][1][offsets.index(0)], 2) == 0.27
    assert max(max(bug[l][c]) for l in range(2) for c in (2, 3)) < 0.065
    slow = [entropy["per-head bug"][l][c] for l in range(2) for c in (2, 3)]
    assert 3.55 < min(slow) and max(slow) < 4.25
    layer_mean = {p: [sum(e) / len(e) for e in entropy[p]] for p in entropy}
    for p in ("scaled sinusoidal", "none"):
        assert round(layer_mean[p][0], 1) == 4.3 and round(layer_mean[p][1], 1) == 2.9
    assert [round(v, 1) for v in layer_mean["rope"]] == [1.1, 1.4]
    assert [round(v, 1) for v in layer_mean["sinusoidal"]] == [1.6, 2.7]
    sinusoidal = profiles["sinusoidal"][0]
    assert [round(sinusoidal[c][offsets.index(0)], 2) for c in (2, 3)] == [0.45, 0.43]


def test_lab07_the_residual_stream(lab07):
    prose, m = lab07
    says(prose, "has a norm of about 5.7 at every position", "against under 1 for the RoPE and scaled models",
         "its stream stays six to nine\ntimes larger through the layers")
    norms = m["norms"]
    assert all(abs(v - 5.7) < 0.1 for v in norms["sinusoidal"][0])
    assert all(max(norms[p][0]) < 1 for p in ("rope", "scaled sinusoidal"))
    ratios = [sum(norms["sinusoidal"][k]) / sum(norms[p][k]) for k in (1, 2) for p in ("rope", "scaled sinusoidal")]
    assert 6 < min(ratios) and max(ratios) < 9.5


def test_lab07_rests_on_nothing_a_student_cannot_read_or_measure(lab07):
    prose, _ = lab07
    for gone in ("Exploring the Transformer", "write-up", "The author", "grows with $N$", "\\theta",
                 "Question 1", "trained without dropout"):
        assert gone not in prose, gone
