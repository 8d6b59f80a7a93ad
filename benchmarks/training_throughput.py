"""Training throughput of Lab 06's NumPy reference against the same model in PyTorch (CPU).

Both run the lab's model (d = 64, 4 heads, 2 layers, d_ff = 256, learned positions, tied head,
float32) from the same initial weights on the same pre-drawn batches of 64 x 16 tokens, with
AdamW. The NumPy side is the reference derived from the Lab 06 notebook (its forward, the
answer-key backward functions and adamw_update); the PyTorch side uses idiomatic fused ops.
Each full step (forward, loss, backward, update) is timed after a warm-up, best of alternating
rounds; before timing, one batch's gradients are compared.

PyTorch is needed only here:  pip install torch==2.13.0   (the CPU wheel)

    python benchmarks/training_throughput.py [--steps 300] [--rounds 3] [--threads 1]
"""
import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--steps", type=int, default=300)
parser.add_argument("--warmup", type=int, default=20)
parser.add_argument("--rounds", type=int, default=3)
parser.add_argument("--threads", type=int, default=1, help="BLAS and torch intra-op threads")
args = parser.parse_args()
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = str(args.threads)            # before NumPy and torch load

import numpy as np  # noqa: E402

try:
    import torch  # noqa: E402
    import torch.nn.functional as F  # noqa: E402
except ImportError:
    sys.exit("PyTorch is not installed: pip install torch==2.13.0")

sys.path.insert(0, str(ROOT))
from autograder.labs.lab06 import reference as R  # noqa: E402

torch.set_num_threads(args.threads)
B, T, N_HEADS, LR, DECAY = 64, 16, 4, 3e-3, 0.1


def batches(n: int) -> list:
    names = (ROOT / "source" / "lab06_training" / "data" / "names.txt").read_text().split()
    stoi, _ = R.build_vocab(names)
    stream = np.array(R.encode("." + ".".join(names) + ".", stoi))
    starts = np.flatnonzero(stream == 0)
    starts = starts[starts + T + 1 <= len(stream)]
    rng = np.random.default_rng(1)
    return [R.get_batch(stream, starts, B, T, rng) for _ in range(n)]


def decays(name: str) -> bool:
    return name in ("E", "P") or name.split(".")[-1].startswith("W")


def numpy_step(params, state, x, y, t):
    logits, cache = R.forward(params, x)
    loss = R.cross_entropy(logits, y)
    grads = R.backward(params, R.cross_entropy_backward(logits, y), cache)
    for k in params:
        m, v = state[k]
        params[k], m, v = R.adamw_update(params[k], grads[k], m, v, t, LR, weight_decay=DECAY if decays(k) else 0.0)
        state[k] = (m, v)
    return loss


def torch_forward(tp, x):
    E = tp["E"]
    C = E.shape[1]
    h = E[x] + tp["P"][:x.shape[1]]
    n_layers = sum(k.endswith(".W_Q") for k in tp)
    for l in range(n_layers):
        p = lambda name: tp[f"{l}.{name}"]  # noqa: E731
        t1 = F.layer_norm(h, (C,), p("ln1_gamma"), p("ln1_beta"), 1e-5)
        q, k, v = (torch.matmul(t1, p(w)).view(*x.shape, N_HEADS, C // N_HEADS).transpose(1, 2)
                   for w in ("W_Q", "W_K", "W_V"))
        heads = F.scaled_dot_product_attention(q, k, v, is_causal=True)       # scale 1/sqrt(d_k)
        t3 = heads.transpose(1, 2).reshape(*x.shape, C) @ p("W_O") + h
        t4 = F.layer_norm(t3, (C,), p("ln2_gamma"), p("ln2_beta"), 1e-5)
        h = F.relu(t4 @ p("W1") + p("b1")) @ p("W2") + p("b2") + t3
    h = F.layer_norm(h, (C,), tp["lnf_gamma"], tp["lnf_beta"], 1e-5)
    return h @ E.T


def torch_setup(params):
    tp = {k: torch.tensor(v, requires_grad=True) for k, v in params.items()}
    groups = [{"params": [tp[k] for k in tp if decays(k)], "weight_decay": DECAY},
              {"params": [tp[k] for k in tp if not decays(k)], "weight_decay": 0.0}]
    return tp, torch.optim.AdamW(groups, lr=LR, betas=(0.9, 0.99), eps=1e-8)


def torch_step(tp, opt, x, y):
    opt.zero_grad(set_to_none=True)
    logits = torch_forward(tp, x)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
    loss.backward()
    opt.step()
    return loss.item()


def timed_numpy(data) -> float:
    params = R.init_params(np.random.default_rng(0))
    state = {k: (np.zeros_like(v), np.zeros_like(v)) for k, v in params.items()}
    for t, (x, y) in enumerate(data, start=1):
        if t == args.warmup + 1:
            start = time.perf_counter()
        numpy_step(params, state, x, y, t)
    return time.perf_counter() - start


def timed_torch(data) -> float:
    tp, opt = torch_setup(R.init_params(np.random.default_rng(0)))
    tensors = [(torch.from_numpy(x), torch.from_numpy(y)) for x, y in data]
    for t, (x, y) in enumerate(tensors, start=1):
        if t == args.warmup + 1:
            start = time.perf_counter()
        torch_step(tp, opt, x, y)
    return time.perf_counter() - start


def gradient_agreement(x, y) -> float:
    params = R.init_params(np.random.default_rng(0))
    logits, cache = R.forward(params, x)
    grads = R.backward(params, R.cross_entropy_backward(logits, y), cache)
    tp, _ = torch_setup(params)
    out = torch_forward(tp, torch.from_numpy(x))
    F.cross_entropy(out.reshape(-1, out.shape[-1]), torch.from_numpy(y).reshape(-1)).backward()
    return max(float(np.abs(grads[k] - tp[k].grad.numpy()).max() / np.abs(tp[k].grad.numpy()).max())
               for k in params)


def main() -> int:
    data = batches(args.warmup + args.steps)
    print(f"Lab 06 model: {sum(v.size for v in R.init_params(np.random.default_rng(0)).values()):,} "
          f"parameters, float32; batch {B} x {T}; {args.steps} timed steps after {args.warmup}; "
          f"{args.threads} thread(s); numpy {np.__version__}, torch {torch.__version__}")
    print(f"one batch, same weights: largest gradient difference {gradient_agreement(*data[0]):.1e} "
          "(relative to each tensor's largest gradient)")
    best = {"numpy": np.inf, "torch": np.inf}
    for _ in range(args.rounds):
        best["numpy"] = min(best["numpy"], timed_numpy(data))
        best["torch"] = min(best["torch"], timed_torch(data))
    tokens = args.steps * B * T
    for name, seconds in best.items():
        print(f"{name:5s}: {tokens / seconds:9,.0f} tokens/s  ({1e3 * seconds / args.steps:.1f} ms per step)")
    ratio = best["numpy"] / best["torch"]
    print(f"PyTorch is {ratio:.2f}x faster than NumPy (goal: NumPy within 3x)")
    return 0 if ratio <= 3 else 1


if __name__ == "__main__":
    sys.exit(main())
