"""Visible checks added to the labs' own (`autograder/labs/<lab>/visible.py`) for the student
helpers: cases that catch common errors before submission, and properties of the parts that
draw random numbers.

A correct `get_batch`, `sample_token` or `dropout` can use its generator in many ways, so no fixed output
is right for every correct answer; what every correct answer shares is that it draws only from
the generator it is given. The helper runs each property's calls (one seed each) twice, under
two different global `np.random` states: the results must agree between the two runs and must
not all be the same.
"""
import numpy as np

from .labs.lab06 import calls as lab06
from .labs.lab07 import calls as lab07

_STREAM = np.arange(60) % 7
_STARTS = np.arange(0, 50, 5)              # ten allowed starts

CASES = {
    "lab06_training": {
        "cross_entropy": [
            ("a confident wrong prediction: the target's probability underflows to 0",
             lab06.cross_entropy(np.array([[-700.0, 700.0, 0.0]]), np.array([0]))),    # no exp overflows
        ],
    },
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
    "lab07_rope_generation": {
        "dropout": [(
            "in training, the same seed gives the same mask whatever the state of np.random; other seeds, "
            "other masks",
            [lab07.dropout(np.ones((4, 6)), 0.5, seed) for seed in range(4)],
            "the same rng seed gave a different result once the global np.random state changed: draw the "
            "mask with the generator `rng` you are given, never with np.random",
            "every rng seed gave the same result with p = 0.5 in training: drop each entry with probability "
            "p, drawing the mask with the generator `rng` you are given")],
    },
}
