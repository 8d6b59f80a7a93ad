"""Lab 06 hidden checks (first version: one check per part; deepened with the mutant bank)."""
import numpy as np

from ...checks import Suite
from ...worker.invoke import Call, Rng
from . import reference

POINTS = {
    "build_vocab": 4, "encode": 2, "decode": 2, "get_batch": 6,
    "cross_entropy": 8, "cross_entropy_backward": 8,
    "linear_backward": 8, "relu_backward": 3, "gelu_backward": 5, "layer_norm_backward": 12,
    "attention_backward": 14, "embedding_backward": 6,
    "adamw_update": 8, "next_token_probs": 8, "sample_token": 3, "attention_entropy": 3,
}

suite = Suite(
    "lab06_training",
    reference={name: getattr(reference, name) for name in POINTS},
    points=POINTS,
    kinds={name: "function" for name in POINTS},
    output_names={"linear_backward": ("dx", "dW", "db"),
                  "layer_norm_backward": ("dx", "dgamma", "dbeta"),
                  "attention_backward": ("dx", "dW_Q", "dW_K", "dW_V", "dW_O"),
                  "adamw_update": ("p", "m", "v")},
)
check = suite.check
NAMES = ["emma", "olivia", "ava", "isabella", "sophia", "zoe", "mia"]


@check("build_vocab", "ids of '.' and of the letters", 4)
def _(t):
    """'.' is 0 and the other characters follow in sorted order."""
    t.expect_match(Call("build_vocab", (NAMES,)))


@check("encode", "ids of a string", 2)
def _(t):
    """One id per character."""
    t.expect_match(Call("encode", ("emma", reference.build_vocab(NAMES)[0])))


@check("decode", "a string from ids", 2)
def _(t):
    """The inverse of encode."""
    t.expect_match(Call("decode", ([3, 7, 7, 1], reference.build_vocab(NAMES)[1])))


@check("get_batch", "shapes and the one-token shift", 6, tol=None)
def _(t):
    """y is x shifted by one position."""
    stream = t.rng.integers(0, 27, size=200)
    got = t.student(Call("get_batch", (stream, np.arange(0, 150, 7), 5, 16, Rng(3))))
    if not isinstance(got, tuple) or len(got) != 2:
        t.fail("expected a tuple (x, y)")
    x, y = got
    if np.shape(x) != (5, 16) or np.shape(y) != (5, 16) or not np.array_equal(x[:, 1:], y[:, :-1]):
        t.fail("x and y must be (B, T) and y must be x shifted by one token")


@check("cross_entropy", "matches the reference", 8)
def _(t):
    """The mean negative log probability of the targets."""
    t.expect_match(Call("cross_entropy", (t.normal(4, 27), t.rng.integers(0, 27, size=4))))


@check("cross_entropy_backward", "matches the reference", 8)
def _(t):
    """(softmax - onehot) / N."""
    t.expect_match(Call("cross_entropy_backward", (t.normal(4, 27), t.rng.integers(0, 27, size=4))))


@check("linear_backward", "matches the reference", 8)
def _(t):
    """dx, dW and db of a linear layer."""
    t.expect_match(Call("linear_backward", (t.normal(5, 3), t.normal(5, 4), t.normal(4, 3))))


@check("relu_backward", "matches the reference", 3)
def _(t):
    """The gradient passes where x > 0."""
    t.expect_match(Call("relu_backward", (t.normal(4, 5), t.normal(4, 5))))


@check("gelu_backward", "matches the reference", 5)
def _(t):
    """The derivative of the tanh approximation."""
    t.expect_match(Call("gelu_backward", (t.normal(4, 5), t.normal(4, 5, scale=2.0))))


@check("layer_norm_backward", "matches the reference", 12)
def _(t):
    """dx with both mean terms, dgamma, dbeta."""
    t.expect_match(Call("layer_norm_backward", (t.normal(3, 6), t.normal(3, 6), 1 + t.normal(6))))


@check("attention_backward", "matches the reference", 14)
def _(t):
    """All five gradients of causal multi-head attention."""
    W = [t.normal(8, 8, scale=0.4) for _ in range(4)]
    t.expect_match(Call("attention_backward", (t.normal(2, 5, 8), t.normal(2, 5, 8), *W, 2)))


@check("embedding_backward", "matches the reference", 6)
def _(t):
    """The head's and the lookup's contributions, summed."""
    ids = t.rng.integers(0, 7, size=(2, 5))
    t.expect_match(Call("embedding_backward", (t.normal(2, 5, 4), t.normal(2, 5, 7), ids, t.normal(2, 5, 4))))


@check("adamw_update", "matches the reference", 8)
def _(t):
    """One bias-corrected step with decoupled decay."""
    p, g = t.normal(4, 3), t.normal(4, 3)
    t.expect_match(Call("adamw_update", (p, g, np.zeros((4, 3)), np.zeros((4, 3)), 1, 0.01),
                        {"weight_decay": 0.1}))


@check("next_token_probs", "matches the reference", 8)
def _(t):
    """Temperature, then top-k, then top-p."""
    t.expect_match(Call("next_token_probs", (t.normal(10, scale=2.0),), {"temperature": 0.7, "top_p": 0.9}))


@check("sample_token", "greedy takes the argmax", 3, tol=None)
def _(t):
    """greedy=True returns the most likely token."""
    logits = t.normal(10)
    got = t.student(Call("sample_token", (logits, Rng(0)), {"greedy": True}))
    if got != int(np.argmax(logits)):
        t.fail(f"returned {got!r}; the argmax is {int(np.argmax(logits))}")


@check("attention_entropy", "matches the reference", 3)
def _(t):
    """Mean entropy in bits per head."""
    weights = reference.softmax(t.normal(2, 3, 5, 5) + reference.causal_mask(5))
    t.expect_match(Call("attention_entropy", (weights,)))


suite.validate()
