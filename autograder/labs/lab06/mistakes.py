"""Known wrong versions of each Lab 06 part, with the words that explain them to a student."""
import numpy as np

from .suite import suite

mistake = suite.mistake


@mistake("cross_entropy_backward", "the gradient is not divided by the number of positions N: "
         "the loss is a mean, so its gradient carries 1/N")
def forgot_mean(logits, targets):
    z = np.exp(logits - logits.max(axis=-1, keepdims=True))
    p = z / z.sum(axis=-1, keepdims=True)
    np.put_along_axis(p, targets[..., None], np.take_along_axis(p, targets[..., None], -1) - 1, -1)
    return p
