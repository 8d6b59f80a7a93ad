"""Lab 06 visible checks: small fixed inputs whose expected outputs ship to students."""
import numpy as np

from ...worker.invoke import Call, Rng

_rng = np.random.default_rng(20250906)


def _r(*shape, scale=1.0):
    return np.round(scale * _rng.standard_normal(shape), 2)


_NAMES = ["ann", "bob", "eve"]
_STOI = {".": 0, "a": 1, "b": 2, "e": 3, "n": 4, "o": 5, "v": 6}
_ITOS = list(".abenov")

CASES = {
    "build_vocab": [("three names", Call("build_vocab", (_NAMES,)))],
    "encode": [("'.ann.'", Call("encode", (".ann.", _STOI)))],
    "decode": [("[0, 3, 6, 3, 0]", Call("decode", ([0, 3, 6, 3, 0], _ITOS)))],
    "get_batch": [("one allowed start, so every row is the same window", Call("get_batch", (
        np.array([0, 1, 4, 4, 0, 2, 5, 2, 0, 3, 6, 3, 0]), np.array([4]), 3, 5, Rng(0))))],
    "cross_entropy": [("B = 2, V = 4", Call("cross_entropy", (_r(2, 4), np.array([1, 3]))))],
    "cross_entropy_backward": [("B = 2, V = 4", Call("cross_entropy_backward", (_r(2, 4), np.array([1, 3]))))],
    "linear_backward": [("N = 3, 2 -> 4", Call("linear_backward", (_r(3, 4), _r(3, 2), _r(2, 4))))],
    "relu_backward": [("mixed signs", Call("relu_backward", (_r(2, 3), np.array([[-1.0, 0.5, 2.0], [0.3, -0.2, -3.0]]))))],
    "gelu_backward": [("six inputs", Call("gelu_backward", (_r(6), np.linspace(-3, 3, 6))))],
    "layer_norm_backward": [("two rows of 4", Call("layer_norm_backward", (_r(2, 4), _r(2, 4, scale=2.0), _r(4) + 1)))],
    "attention_backward": [("B = 1, T = 3, C = 4, 2 heads", Call("attention_backward", (
        _r(1, 3, 4), _r(1, 3, 4), *(_r(4, 4, scale=0.5) for _ in range(4)), 2)))],
    "embedding_backward": [("a repeated token", Call("embedding_backward", (
        _r(1, 3, 2), _r(1, 3, 4), np.array([[1, 2, 1]]), _r(1, 3, 2))))],
    "adamw_update": [("the first step", Call("adamw_update", (_r(3), _r(3), np.zeros(3), np.zeros(3), 1, 0.1),
                                              {"weight_decay": 0.1}))],
    "next_token_probs": [("top-k 2", Call("next_token_probs", (np.array([2.0, 1.0, 0.5, -1.0]),), {"top_k": 2}))],
    "sample_token": [("greedy", Call("sample_token", (np.array([0.5, 2.0, -1.0]), Rng(0)), {"greedy": True})),
                     ("top-k 1 leaves one choice", Call("sample_token", (np.array([0.5, 2.0, -1.0]), Rng(0)),
                                                         {"top_k": 1}))],
    "attention_entropy": [("uniform causal rows", Call("attention_entropy", (
        np.tril(np.ones((1, 1, 3, 3))) / np.arange(1, 4)[:, None],)))],
}
