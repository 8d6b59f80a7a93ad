"""Visible checks added to the labs' own (`autograder/labs/<lab>/visible.py`) for the student
helpers: cases and mistakes that catch common errors before submission, and properties of the
parts that draw random numbers.

A correct `get_batch` or `sample_token` can use its generator in many ways, so no fixed output
is right for every correct answer; what every correct answer shares is that it draws only from
the generator it is given. The helper runs each property's calls (one seed each) twice, under
two different global `np.random` states: the results must agree between the two runs and must
not all be the same.
"""
import math

import numpy as np

from .checks import Mistake
from .labs.lab06 import calls as lab06
from .labs.lab06 import reference as ref06

_STREAM = np.arange(60) % 7
_STARTS = np.arange(0, 50, 5)              # ten allowed starts


def _elementwise_softmax_backward(dout, x, W_Q, W_K, W_V, W_O, n_heads):
    """attention_backward with dS = a(1 - a) ⊙ dA, the derivative of each weight by its own score only."""
    B, N, d = x.shape
    scale = 1 / math.sqrt(d // n_heads)
    q, k, v = (ref06.split_heads(ref06.matmul(x, W), n_heads) for W in (W_Q, W_K, W_V))
    att = ref06.softmax(q @ k.transpose(0, 1, 3, 2) * scale + ref06.causal_mask(N, x.dtype))
    concat = ref06.merge_heads(att @ v).reshape(-1, d)
    dheads = ref06.split_heads(ref06.matmul(dout, W_O.T), n_heads)
    datt, dv = dheads @ v.transpose(0, 1, 3, 2), att.transpose(0, 1, 3, 2) @ dheads
    dscores = att * (1 - att) * datt * scale
    grads = [ref06.merge_heads(g).reshape(-1, d) for g in (dscores @ k, dscores.transpose(0, 1, 3, 2) @ q, dv)]
    x2 = x.reshape(-1, d)
    dx = sum(g @ W.T for g, W in zip(grads, (W_Q, W_K, W_V))).reshape(x.shape)
    return dx, x2.T @ grads[0], x2.T @ grads[1], x2.T @ grads[2], concat.T @ dout.reshape(-1, d)


CASES = {
    "lab06_training": {
        "cross_entropy": [
            ("a confident wrong prediction: the target's probability underflows to 0",
             lab06.cross_entropy(np.array([[0.0, 800.0, -5.0]]), np.array([0]))),
        ],
    },
}

MISTAKES = {
    "lab06_training": [
        (Mistake("attention_backward", "elementwise_softmax_backward",
                 "the softmax backward treats each weight as a function of its own score only, "
                 "α(1 - α) ⊙ δα; every weight of a row depends on every score of the row (the full "
                 "Jacobian), which adds a term shared by the whole row", _elementwise_softmax_backward),
         "δS = α ⊙ (δα - rowsum(α ⊙ δα)): subtract (att * datt).sum(axis=-1, keepdims=True) from datt "
         "before multiplying by att"),
    ],
}

PROPERTIES = {
    "lab06_training": {
        "get_batch": [(
            "the same seed gives the same batch whatever the state of np.random; other seeds, other batches",
            [lab06.get_batch(_STREAM, _STARTS, 6, 4, seed) for seed in range(4)],
            "the same rng seed gave different batches once the global np.random state changed: the "
            "batch must come from the generator `rng` you are given, never from np.random",
            "every rng seed gave the same batch: the starts must be drawn with the generator `rng` "
            "you are given (not with a seed fixed inside the function)")],
        "sample_token": [(
            "the same seed gives the same token whatever the state of np.random; other seeds, other tokens",
            [lab06.sample_token(np.zeros(10), seed) for seed in range(12)],
            "the same rng seed gave a different token once the global np.random state changed: draw "
            "with the generator `rng` you are given, never with np.random",
            "every rng seed gave the same token from ten equally likely ones: draw with the generator "
            "`rng` you are given")],
    },
}
