"""Lab 06 visible checks: small fixed inputs whose expected outputs ship to students.

These inputs are public (they are written into the student helper), so the hidden checks
never reuse them: hidden inputs are drawn per check from their own seeds. The cases of the
parts that draw random numbers have one answer for every correct use of the generator.
"""
import numpy as np

from . import calls as C

_rng = np.random.default_rng(20250906)


def _r(*shape, scale=1.0):
    """Random values rounded to two decimals, easy to read in the helper file."""
    return np.round(scale * _rng.standard_normal(shape), 2)


_later = np.random.default_rng(20251129)     # cases added later draw here, leaving the others as they were


def _l(*shape, scale=1.0):
    return np.round(scale * _later.standard_normal(shape), 2)


_NAMES = ["ann", "bob", "eve"]
_STOI = {".": 0, "a": 1, "b": 2, "e": 3, "n": 4, "o": 5, "v": 6}
_ITOS = list(".abenov")
_STREAM = np.array([0, 1, 4, 4, 0, 2, 5, 2, 0, 3, 6, 3, 0])     # '.ann.bob.eve.'
# The top token has probability 0.35 only, and the seeds draw another one with rng.choice, the
# inverse CDF, multinomial and Gumbel: code that ignores greedy, top_k or top_p fails here.
_LOGITS = np.log(np.array([0.2, 0.15, 0.35, 0.2, 0.1]))
_DYADIC = np.log(np.array([0.25, 0.5, 1.0, 0.25, 0.25, 0.5, 0.25, 0.25, 0.25, 0.25, 0.25]))  # sums far from p

CASES = {
    "build_vocab": [
        ("three names", C.build_vocab(_NAMES)),
        ("a hyphen sorts before '.', which still comes first", C.build_vocab(["jo-ann", "al"])),
    ],
    "encode": [
        ("'.ann.'", C.encode(".ann.", _STOI)),
        ("'eve.bob'", C.encode("eve.bob", _STOI)),
    ],
    "decode": [
        ("[0, 3, 6, 3, 0]", C.decode([0, 3, 6, 3, 0], _ITOS)),
        ("an int array", C.decode(np.array([2, 5, 2, 0]), _ITOS)),
    ],
    "get_batch": [
        ("one allowed start, so every row is the same window", C.get_batch(_STREAM, np.array([4]), 3, 5, 0)),
        ("the last window that fits", C.get_batch(_STREAM, np.array([8]), 2, 4, 1)),
    ],
    "cross_entropy": [
        ("N = 2, V = 4", C.cross_entropy(_r(2, 4), np.array([1, 3]))),
        ("uniform logits give ln 3", C.cross_entropy(np.zeros((2, 3)), np.array([0, 2]))),
        ("logits near 1000 (stability)", C.cross_entropy(np.array([[1000.0, 1001.0, 999.0]]), np.array([2]))),
        ("(B, N, V) = (1, 2, 3): the mean over BN", C.cross_entropy(_l(1, 2, 3), np.array([[2, 0]]))),
        ("a confident wrong prediction: the target's probability underflows to 0",
         C.cross_entropy(np.array([[-700.0, 700.0, 0.0]]), np.array([0]))),    # no exp overflows
    ],
    "cross_entropy_backward": [
        ("N = 2, V = 4", C.cross_entropy_backward(_r(2, 4), np.array([1, 3]))),
        ("(B, N, V) = (1, 2, 3): divided by BN", C.cross_entropy_backward(_r(1, 2, 3), np.array([[0, 2]]))),
    ],
    "linear_backward": [
        ("N = 3, 2 -> 4", C.linear_backward(_r(3, 4), _r(3, 2), _r(2, 4))),
        ("(B, N) = (2, 2), 3 -> 2", C.linear_backward(_r(2, 2, 2), _r(2, 2, 3), _r(3, 2))),
    ],
    "relu_backward": [
        ("mixed signs", C.relu_backward(_r(2, 3), np.array([[-1.0, 0.5, 2.0], [0.3, -0.2, -3.0]]))),
        ("inputs exactly 0", C.relu_backward(_r(4), np.array([0.0, 1.0, 0.0, -1.0]))),
    ],
    "gelu_backward": [
        ("six inputs", C.gelu_backward(_r(6), np.linspace(-3, 3, 6))),
        ("large inputs", C.gelu_backward(np.ones(3), np.array([-30.0, -2.5, 30.0]))),
    ],
    "layer_norm_backward": [
        ("two rows of 4", C.layer_norm_backward(_r(2, 4), _r(2, 4, scale=2.0), _r(4) + 1)),
        ("eps = 0.5", C.layer_norm_backward(_r(1, 3), np.array([[1.0, 2.0, 4.0]]), np.array([1.0, 2.0, 0.5]),
                                             eps=0.5)),
        ("(B, N, d) = (2, 2, 3): dgamma and dbeta sum over B and N", C.layer_norm_backward(
            _l(2, 2, 3), _l(2, 2, 3, scale=2.0), _l(3) + 1)),
    ],
    "attention_backward": [
        ("B = 1, N = 3, d = 4, 2 heads", C.attention_backward(
            _r(1, 3, 4), _r(1, 3, 4), tuple(_r(4, 4, scale=0.5) for _ in range(4)), 2)),
        ("B = 2, N = 2, d = 3, one head", C.attention_backward(
            _r(2, 2, 3), _r(2, 2, 3), tuple(_r(3, 3, scale=0.5) for _ in range(4)), 1)),
    ],
    "embedding_backward": [
        ("a repeated token", C.embedding_backward(
            _r(1, 3, 2), _r(1, 3, 4), np.array([[1, 2, 1]]), _r(1, 3, 2))),
        ("the head's term only (d_x = 0)", C.embedding_backward(
            np.zeros((1, 2, 2)), _r(1, 2, 3), np.array([[0, 2]]), _r(1, 2, 2))),
        ("two sequences", C.embedding_backward(_l(2, 2, 2), _l(2, 2, 3), np.array([[0, 1], [1, 2]]), _l(2, 2, 2))),
    ],
    "adamw_update": [
        ("the first step", C.adamw_update(_r(3), _r(3), np.zeros(3), np.zeros(3), 1, 0.1, weight_decay=0.1)),
        ("step 3, weight decay 0.5", C.adamw_update(_r(3), _r(3), _r(3, scale=0.1), np.array([0.2, 0.1, 0.3]),
                                                    3, 0.1, weight_decay=0.5)),
        ("eps = 0.1, added to the root", C.adamw_update(_l(3), _l(3, scale=0.1), _l(3, scale=0.1),
                                                       np.array([0.02, 0.01, 0.03]), 2, 0.1, eps=0.1)),
    ],
    "next_token_probs": [
        ("top-k 2", C.next_token_probs(np.array([2.0, 1.0, 0.5, -1.0]), top_k=2)),
        ("temperature 0.5", C.next_token_probs(np.array([1.0, 0.0, -1.0]), temperature=0.5)),
        ("top-p 0.7 keeps the token that passes 0.7", C.next_token_probs(
            np.log(np.array([0.15, 0.5, 0.05, 0.3])), top_p=0.7)),
        ("top-p 0.45 on (1/4, 1/8, 1/8, 1/16, ...): the total passes 0.45 at the third token",
         C.next_token_probs(_DYADIC, top_p=0.45)),
        ("top-k 2, renormalised to (4/7, 3/7), then top-p 0.5: one token",
         C.next_token_probs(np.log(np.array([0.1, 0.4, 0.2, 0.3])), top_k=2, top_p=0.5)),
    ],
    "sample_token": [
        ("greedy", C.sample_token(_LOGITS, 2, greedy=True)),
        ("top-k 1 leaves one choice", C.sample_token(_LOGITS, 4, top_k=1)),
        ("top-p 0.3 leaves one choice", C.sample_token(_LOGITS, 5, top_p=0.3)),
    ],
    "attention_entropy": [
        ("uniform causal rows", C.attention_entropy(
            np.tril(np.ones((1, 1, 3, 3))) / np.arange(1, 4)[:, None])),
        ("one row on one position, one split in two", C.attention_entropy(
            np.array([[[[1.0, 0.0], [0.5, 0.5]]]]))),
        ("every row spread evenly over all 4 positions (no zero): 2 bits", C.attention_entropy(
            np.full((1, 1, 4, 4), 0.25))),
    ],
}

# A correct get_batch or sample_token can use its generator in many ways, so no fixed output is
# right for every correct answer; what they share is that they draw only from the generator they
# are given. The helper runs each property's calls (one seed each) under two global np.random
# states: the results must agree between the two runs and not all be the same.
_ALLOWED = np.arange(0, 50, 5)             # ten starts
PROPERTIES = {
    "get_batch": [("the same seed gives the same batch whatever the state of np.random; other seeds, other batches",
                   [C.get_batch(np.arange(60) % 7, _ALLOWED, 6, 4, seed) for seed in range(4)])],
    "sample_token": [("the same seed gives the same token whatever the state of np.random; other seeds, other tokens",
                      [C.sample_token(np.zeros(10), seed) for seed in range(12)])],
}
