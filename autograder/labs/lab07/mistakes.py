"""Known wrong versions of each Lab 07 part, with the words that explain them to a student.

When a check fails, each mistake of the part runs on the check's own inputs; a mistake that
reproduces every result the student returned is named, unless another that says something else
does too (then neither is). The dropout mistakes draw their mask the way most students do (one uniform number
per entry), so they are named when the student's code uses the generator that way too.
"""
import math

import numpy as np

from . import reference as R
from .suite import suite

mistake = suite.mistake


def _rotate(x, angles, sign=1.0):
    """Pairs (2m, 2m+1) of x (..., N, w) turned by sign * angles (N, w/2), in x's dtype (as the
    docstring asks: the mistakes are of the rotation, not of the precision)."""
    cos, sin = np.cos(angles), sign * np.sin(angles)
    even, odd = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = even * cos - odd * sin
    out[..., 1::2] = even * sin + odd * cos
    return out


def _angles(positions, width, base=10000.0, exponent=2.0):
    return np.asarray(positions)[:, None] * base ** (-exponent * np.arange(width // 2) / width)


def _heads(M, n_heads):
    return R.split_heads(M, n_heads)


def _attend(q, k, v, scale, mask=True):
    """`mask`: True for -inf after the diagonal, a number for that finite value there, False for none."""
    N = q.shape[-2]
    scores = q @ np.swapaxes(k, -1, -2) * scale
    if mask is True:
        scores = scores + R.causal_mask(N)
    elif mask:
        scores = scores + mask * np.triu(np.ones((N, N)), k=1)
    return R.softmax(scores), v


def _attention(X, W_Q, W_K, W_V, W_O, n_heads, rotate_q=True, rotate_k=True, rotate_v=False,
               scale=None, mask=True, full_width=False):
    B, N, d = X.shape
    positions = np.arange(N)
    projected = [R.matmul(X, W) for W in (W_Q, W_K, W_V)]
    if full_width:
        projected = [R.apply_rope(m, positions) if r else m
                     for m, r in zip(projected, (rotate_q, rotate_k, rotate_v))]
    q, k, v = (_heads(m, n_heads) for m in projected)
    if not full_width:
        q, k, v = (R.apply_rope(m, positions) if r else m for m, r in zip((q, k, v), (rotate_q, rotate_k, rotate_v)))
    weights, v = _attend(q, k, v, scale or 1 / math.sqrt(d // n_heads), mask)
    return R.matmul(R.merge_heads(weights @ v), W_O), weights


# --------------------------------------------------------------------------- rope_frequencies

@mistake("rope_frequencies", "the exponent lacks its factor 2: omega_m = base^(-2m/d_k), the 2 counts the "
         "two dimensions of each pair",
         fix="base ** (-np.arange(0, d_k, 2) / d_k)")
def exponent_without_two(d_k, base=10000.0):
    return base ** (-np.arange(d_k // 2) / d_k)


@mistake("rope_frequencies", "the exponents are spread evenly from 0 to exactly -1: they are -2m/d_k, so "
         "the last pair stops short of 1/base",
         fix="base ** (-np.arange(0, d_k, 2) / d_k) instead of np.linspace(0, 1, d_k // 2)")
def exponent_to_one(d_k, base=10000.0):
    return base ** (-np.linspace(0, 1, d_k // 2))


@mistake("rope_frequencies", "one frequency per dimension (d_k of them): RoPE has one per pair of "
         "dimensions, d_k/2 in all",
         fix="m counts pairs: base ** (-np.arange(0, d_k, 2) / d_k) has d_k/2 entries")
def one_per_dimension(d_k, base=10000.0):
    return base ** (-np.arange(d_k) / d_k)


@mistake("rope_frequencies", "the exponent is positive: the frequencies must fall from 1 towards 1/base, "
         "omega_m = base^(-2m/d_k)",
         fix="base ** (-np.arange(0, d_k, 2) / d_k), with the minus sign")
def positive_exponent(d_k, base=10000.0):
    return base ** (np.arange(0, d_k, 2) / d_k)


@mistake("rope_frequencies", "the exponent is computed with integer division, which rounds it to 0 for "
         "every pair: 2m/d_k is a fraction",
         fix="divide with / instead of //: -np.arange(0, d_k, 2) / d_k")
def integer_division(d_k, base=10000.0):
    return np.ones(d_k // 2)


@mistake("rope_frequencies", "the base is a fixed number in the code: the frequencies must follow the "
         "`base` argument",
         fix="base ** (-np.arange(0, d_k, 2) / d_k), with the argument base instead of 10000.0")
def base_ignored(d_k, base=10000.0):
    return 10000.0 ** (-np.arange(0, d_k, 2) / d_k)


# --------------------------------------------------------------------------------- apply_rope

@mistake("apply_rope", "the rotation turns the wrong way (angle -i*omega): the first output of a pair is "
         "x_2m cos - x_2m+1 sin, the second x_2m sin + x_2m+1 cos",
         fix="the first output of a pair is even * cos - odd * sin, the second even * sin + odd * cos")
def turned_backwards(x, positions, base=10000.0):
    return _rotate(x, _angles(positions, x.shape[-1], base), sign=-1.0)


@mistake("apply_rope", "dimension m is paired with m + d_k/2 (the 'rotate half' layout); eq. R1 pairs "
         "neighbours (2m, 2m+1)",
         fix="even, odd = x[..., 0::2], x[..., 1::2], with the results written back to out[..., 0::2] and "
             "out[..., 1::2]")
def rotate_half(x, positions, base=10000.0):
    half = x.shape[-1] // 2
    angles = _angles(positions, x.shape[-1], base)
    first, second = x[..., :half], x[..., half:]
    return np.concatenate([first * np.cos(angles) - second * np.sin(angles),
                           first * np.sin(angles) + second * np.cos(angles)], axis=-1).astype(x.dtype)


@mistake("apply_rope", "the rows are rotated by their index 0, 1, ..., N-1, not by the given positions",
         fix="angles = np.asarray(positions)[:, None] * rope_frequencies(x.shape[-1], base)")
def index_not_position(x, positions, base=10000.0):
    return _rotate(x, _angles(np.arange(x.shape[-2]), x.shape[-1], base))


@mistake("apply_rope", "the sine term of the second output of each pair has the wrong sign: that matrix is "
         "not a rotation (it stretches vectors); a rotation has -sin above the diagonal and +sin below it",
         fix="the second output of a pair is even * sin + odd * cos")
def not_a_rotation(x, positions, base=10000.0):
    angles = _angles(positions, x.shape[-1], base)
    even, odd = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = even * np.cos(angles) - odd * np.sin(angles)
    out[..., 1::2] = odd * np.cos(angles) - even * np.sin(angles)
    return out


@mistake("apply_rope", "the frequencies use the exponent -m/d_k instead of -2m/d_k: they are "
         "rope_frequencies' own",
         fix="omega = rope_frequencies(x.shape[-1], base)")
def exponent_without_two_inline(x, positions, base=10000.0):
    return _rotate(x, _angles(positions, x.shape[-1], base, exponent=1.0))


@mistake("apply_rope", "the base is not passed on, so the frequencies are always those of base 10000",
         fix="omega = rope_frequencies(x.shape[-1], base)")
def base_ignored_in_rotation(x, positions, base=10000.0):
    return _rotate(x, _angles(positions, x.shape[-1]))


@mistake("apply_rope", "the odd outputs are computed from the already rotated even entries: keep the "
         "original pair (x_2m, x_2m+1) until both outputs are computed",
         fix="read even and odd from x and write both outputs into a new array (np.empty_like(x))")
def overwritten_pair(x, positions, base=10000.0):
    angles = _angles(positions, x.shape[-1], base)
    out = np.array(x)
    out[..., 0::2] = x[..., 0::2] * np.cos(angles) - x[..., 1::2] * np.sin(angles)
    out[..., 1::2] = out[..., 0::2] * np.sin(angles) + x[..., 1::2] * np.cos(angles)
    return out


@mistake("apply_rope", "only the first position is used and the rows are taken to be consecutive "
         "(positions[0], positions[0] + 1, ...): each row turns by its own entry of `positions`, "
         "which need not be consecutive",
         fix="angles = np.asarray(positions)[:, None] * rope_frequencies(x.shape[-1], base)")
def positions_from_first(x, positions, base=10000.0):
    start = np.asarray(positions).reshape(-1)[0]
    return _rotate(x, _angles(start + np.arange(x.shape[-2]), x.shape[-1], base))


@mistake("apply_rope", "positions are counted from 1 (each row turns by (position + 1) * omega): the row at "
         "position p turns by p * omega, so position 0 is left as it is",
         fix="angles = np.asarray(positions)[:, None] * rope_frequencies(x.shape[-1], base)")
def positions_plus_one(x, positions, base=10000.0):
    return _rotate(x, _angles(np.asarray(positions) + 1, x.shape[-1], base))


@mistake("apply_rope", "cos and sin are swapped: the first output of a pair is x_2m cos - x_2m+1 sin, the "
         "second x_2m sin + x_2m+1 cos",
         fix="even * cos - odd * sin and even * sin + odd * cos")
def cos_sin_swapped(x, positions, base=10000.0):
    angles = _angles(positions, x.shape[-1], base)
    cos, sin = np.sin(angles), np.cos(angles)
    even, odd = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = even * cos - odd * sin
    out[..., 1::2] = even * sin + odd * cos
    return out


@mistake("apply_rope", "the rotated pairs are written back as two halves [first outputs | second outputs]: "
         "the outputs of pair m go back to dimensions 2m and 2m+1, interleaved",
         fix="the even dimensions of the output get even * cos - odd * sin, the odd ones even * sin + odd * cos")
def outputs_in_halves(x, positions, base=10000.0):
    rotated = _rotate(x, _angles(positions, x.shape[-1], base))
    return np.concatenate([rotated[..., 0::2], rotated[..., 1::2]], axis=-1)


@mistake("apply_rope", "each frequency is repeated for both dimensions of a pair and the whole row is "
         "multiplied elementwise, without mixing the two entries of a pair: each pair must be turned by "
         "a 2x2 rotation",
         fix="take the pairs' entries apart (x[..., 0::2] and x[..., 1::2]); the even output dimensions get "
             "even * cos - odd * sin, the odd ones even * sin + odd * cos")
def no_pair_mixing(x, positions, base=10000.0):
    angles = np.repeat(_angles(positions, x.shape[-1], base), 2, axis=-1)
    return (x * np.cos(angles) + x * np.sin(angles)).astype(x.dtype)


# ----------------------------------------------------------------------------- rope_attention

@mistake("rope_attention", "each head turns with its own slice of frequencies spread over the model width d "
         "(the per-head-frequency bug of Part 1d, which rotating the d-wide queries and keys before the "
         "split gives): every head must turn with the same frequencies, those of the head width d_k",
         fix="q, k, v = split_heads(...) first, then apply_rope(q, np.arange(N)) and apply_rope(k, "
             "np.arange(N)) on the (B, A, N, d_k) arrays")
def rotated_before_split(X, W_Q, W_K, W_V, W_O, n_heads):
    return _attention(X, W_Q, W_K, W_V, W_O, n_heads, full_width=True)


@mistake("rope_attention", "every head turns with the frequencies of the model width d, base^(-2m/d): they are "
         "those of the head width d_k, base^(-2m/d_k), the same in every head",
         fix="apply_rope(q, np.arange(N)) on the (B, A, N, d_k) heads, which takes d_k from their last axis")
def model_width_frequencies(X, W_Q, W_K, W_V, W_O, n_heads):
    B, N, d = X.shape
    angles = _angles(np.arange(N), d)[:, :d // n_heads // 2]                # (N, d_k/2), over d
    q, k, v = (_heads(R.matmul(X, W), n_heads) for W in (W_Q, W_K, W_V))
    weights, v = _attend(_rotate(q, angles), _rotate(k, angles), v, 1 / math.sqrt(d // n_heads))
    return R.matmul(R.merge_heads(weights @ v), W_O), weights


@mistake("rope_attention", "the values are rotated too: RoPE turns queries and keys only, values carry "
         "content",
         fix="apply_rope to q and k only; v goes into weights @ v unrotated")
def values_rotated(X, W_Q, W_K, W_V, W_O, n_heads):
    return _attention(X, W_Q, W_K, W_V, W_O, n_heads, rotate_v=True)


@mistake("rope_attention", "only the queries are rotated: rotate the keys as well, so that the score "
         "depends on the offset j - i",
         fix="k = apply_rope(k, np.arange(N))")
def keys_not_rotated(X, W_Q, W_K, W_V, W_O, n_heads):
    return _attention(X, W_Q, W_K, W_V, W_O, n_heads, rotate_k=False)


@mistake("rope_attention", "only the keys are rotated: rotate the queries as well, so that the score "
         "depends on the offset j - i",
         fix="q = apply_rope(q, np.arange(N))")
def queries_not_rotated(X, W_Q, W_K, W_V, W_O, n_heads):
    return _attention(X, W_Q, W_K, W_V, W_O, n_heads, rotate_q=False)


@mistake("rope_attention", "no rotation at all: the queries and keys of every head must be turned at "
         "positions 0..N-1",
         fix="q = apply_rope(q, np.arange(N)) and k = apply_rope(k, np.arange(N)), after the split "
             "into heads")
def not_rotated(X, W_Q, W_K, W_V, W_O, n_heads):
    return _attention(X, W_Q, W_K, W_V, W_O, n_heads, rotate_q=False, rotate_k=False)


@mistake("rope_attention", "the causal mask is missing: query i may only see keys j <= i (eq. 8.34)",
         fix="scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d_k) + causal_mask(N)")
def no_mask(X, W_Q, W_K, W_V, W_O, n_heads):
    return _attention(X, W_Q, W_K, W_V, W_O, n_heads, mask=False)


@mistake("rope_attention", "the mask is a finite number (such as -100 or -500) instead of -inf: where the "
         "allowed scores are far below it, the later positions keep weight",
         fix="causal_mask(N), which holds -inf after the diagonal")
def finite_mask(X, W_Q, W_K, W_V, W_O, n_heads):
    return _attention(X, W_Q, W_K, W_V, W_O, n_heads, mask=-100.0)


@mistake("rope_attention", "the mask is applied after the softmax: the weights after the diagonal are "
         "zeroed but the rows no longer sum to 1; mask the scores with -inf before the softmax (eq. 8.34)",
         fix="weights = softmax(scores + causal_mask(N)), no lower triangle multiplied in afterwards")
def masked_after_softmax(X, W_Q, W_K, W_V, W_O, n_heads):
    B, N, d = X.shape
    positions = np.arange(N)
    q, k, v = (_heads(R.matmul(X, W), n_heads) for W in (W_Q, W_K, W_V))
    q, k = R.apply_rope(q, positions), R.apply_rope(k, positions)
    weights, v = _attend(q, k, v, 1 / math.sqrt(d // n_heads), mask=False)
    weights = weights * np.tril(np.ones((N, N)))
    return R.matmul(R.merge_heads(weights @ v), W_O), weights


@mistake("rope_attention", "the mask also hides the diagonal, so a query cannot see its own position and "
         "the first row has nothing to attend to: only the keys after the query, j > i, are hidden",
         fix="np.triu(np.full((N, N), -np.inf), k=1), which is causal_mask(N)")
def diagonal_masked(X, W_Q, W_K, W_V, W_O, n_heads):
    B, N, d = X.shape
    positions = np.arange(N)
    q, k, v = (_heads(R.matmul(X, W), n_heads) for W in (W_Q, W_K, W_V))
    q, k = R.apply_rope(q, positions), R.apply_rope(k, positions)
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(d // n_heads) + np.triu(np.full((N, N), -np.inf), k=0)
    with np.errstate(invalid="ignore"):
        weights = R.softmax(scores)
    return R.matmul(R.merge_heads(weights @ v), W_O), weights


@mistake("rope_attention", "the scores are divided by sqrt(d) instead of sqrt(d_k), the width of one head",
         fix="divide the scores by math.sqrt(d // n_heads)")
def scaled_by_model_width(X, W_Q, W_K, W_V, W_O, n_heads):
    return _attention(X, W_Q, W_K, W_V, W_O, n_heads, scale=1 / math.sqrt(X.shape[-1]))


@mistake("rope_attention", "the heads are cut by a reshape alone, which mixes positions and heads: split "
         "the width into heads first, then move the head axis in front of the positions",
         fix="split_heads(M, n_heads), that is M.reshape(B, N, n_heads, d_k).transpose(0, 2, 1, 3)")
def heads_by_reshape(X, W_Q, W_K, W_V, W_O, n_heads):
    B, N, d = X.shape
    d_k = d // n_heads
    q, k, v = (R.matmul(X, W).reshape(B, n_heads, N, d_k) for W in (W_Q, W_K, W_V))
    positions = np.arange(N)
    weights, v = _attend(R.apply_rope(q, positions), R.apply_rope(k, positions), v, 1 / math.sqrt(d_k))
    return R.matmul((weights @ v).reshape(B, N, d), W_O), weights


def _rope_attention(X, W_Q, W_K, W_V, W_O, n_heads, scale=None, transposed=False, softmax_axis=-1,
                    merge=None, project=True, split=None):
    """rope_attention with one step done another way: `scale` of the scores, scores `transposed`
    (k q^T), the softmax over `softmax_axis`, heads merged by `merge`, `project` through W_O, heads
    split by `split` ((B, N, d) -> (B, A, N, d_k))."""
    B, N, d = X.shape
    d_k = d // n_heads
    split = split or (lambda M: R.split_heads(M, n_heads))
    q, k, v = (split(R.matmul(X, W)) for W in (W_Q, W_K, W_V))
    positions = np.arange(N)
    q, k = R.apply_rope(q, positions), R.apply_rope(k, positions)
    scores = (k @ np.swapaxes(q, -1, -2) if transposed else q @ np.swapaxes(k, -1, -2))
    scores = scores * (1 / math.sqrt(d_k) if scale is None else scale(d_k)) + R.causal_mask(N)
    weights = _softmax(scores, softmax_axis)
    heads = weights @ v
    merged = merge(heads) if merge else R.merge_heads(heads)
    return (R.matmul(merged, W_O) if project else merged), weights


def _softmax(z, axis):
    with np.errstate(invalid="ignore"):
        e = np.exp(z - np.max(z, axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)


@mistake("rope_attention", "the heads are merged by a reshape alone from (B, A, N, d_k), which lays the "
         "heads out along the positions: move the head axis back next to d_k first",
         fix="merge_heads(weights @ v), that is .transpose(0, 2, 1, 3).reshape(B, N, d)")
def merged_by_reshape(X, W_Q, W_K, W_V, W_O, n_heads):
    return _rope_attention(X, W_Q, W_K, W_V, W_O, n_heads, merge=lambda h: h.reshape(h.shape[0], h.shape[2], -1))


@mistake("rope_attention", "the output projection W_O is missing: the concatenated heads are multiplied by "
         "W_O (eq. 8.37)",
         fix="matmul(merge_heads(weights @ v), W_O)")
def output_not_projected(X, W_Q, W_K, W_V, W_O, n_heads):
    return _rope_attention(X, W_Q, W_K, W_V, W_O, n_heads, project=False)


@mistake("rope_attention", "the scores are not scaled: divide them by sqrt(d_k) (eq. 8.33)",
         fix="q @ k.transpose(0, 1, 3, 2) / math.sqrt(d // n_heads)")
def not_scaled(X, W_Q, W_K, W_V, W_O, n_heads):
    return _rope_attention(X, W_Q, W_K, W_V, W_O, n_heads, scale=lambda d_k: 1.0)


@mistake("rope_attention", "the scores are divided by d_k instead of sqrt(d_k) (eq. 8.33)",
         fix="divide by math.sqrt(d // n_heads)")
def scaled_by_width(X, W_Q, W_K, W_V, W_O, n_heads):
    return _rope_attention(X, W_Q, W_K, W_V, W_O, n_heads, scale=lambda d_k: 1.0 / d_k)


@mistake("rope_attention", "the scores are multiplied by sqrt(d_k) instead of divided by it (eq. 8.33)",
         fix="divide by math.sqrt(d // n_heads)")
def scale_inverted(X, W_Q, W_K, W_V, W_O, n_heads):
    return _rope_attention(X, W_Q, W_K, W_V, W_O, n_heads, scale=lambda d_k: math.sqrt(d_k))


@mistake("rope_attention", "each head's score matrix is transposed (keys times queries): entry (i, j) must "
         "score query i against key j, q @ k^T",
         fix="q @ k.transpose(0, 1, 3, 2)")
def scores_transposed(X, W_Q, W_K, W_V, W_O, n_heads):
    return _rope_attention(X, W_Q, W_K, W_V, W_O, n_heads, transposed=True)


@mistake("rope_attention", "the softmax normalises over the queries (down each column): each query's row "
         "of scores is normalised over the keys, the last axis",
         fix="softmax(scores) over axis -1")
def softmax_over_queries(X, W_Q, W_K, W_V, W_O, n_heads):
    return _rope_attention(X, W_Q, W_K, W_V, W_O, n_heads, softmax_axis=-2)


@mistake("rope_attention", "head c takes every A-th column (the width split as (d_k, A)): it owns the "
         "contiguous block c*d_k:(c+1)*d_k of W_Q, W_K and W_V",
         fix="split_heads(M, n_heads), that is M.reshape(B, N, n_heads, d_k).transpose(0, 2, 1, 3)")
def strided_heads(X, W_Q, W_K, W_V, W_O, n_heads):
    B, N, d = X.shape
    split = lambda M: M.reshape(B, N, d // n_heads, n_heads).transpose(0, 3, 1, 2)
    merge = lambda h: h.transpose(0, 2, 3, 1).reshape(B, N, d)
    return _rope_attention(X, W_Q, W_K, W_V, W_O, n_heads, split=split, merge=merge)


# -------------------------------------------------------------------------- kv_attention_step

def _step(x, k_cache, v_cache, W_Q, W_K, W_V, W_O, n_heads, q_at=None, k_at=None, rotate_cache=False,
          store_rotated=True, scale=None, include_new=True, new_twice=False):
    d = x.shape[-1]
    d_k, t = d // n_heads, k_cache.shape[1]
    q, k, v = ((x @ W).reshape(n_heads, 1, d_k) for W in (W_Q, W_K, W_V))
    q_rot = R.apply_rope(q, np.array([t if q_at is None else q_at(t)]))
    k_rot = R.apply_rope(k, np.array([t if k_at is None else k_at(t)]))
    keys = np.concatenate([k_cache, k_rot], axis=1)
    values = np.concatenate([v_cache, v], axis=1)
    if rotate_cache:
        keys = np.concatenate([R.apply_rope(k_cache, np.arange(t)), k_rot], axis=1)
    used_keys, used_values = (keys, values) if include_new else (keys[:, :t], values[:, :t])
    if new_twice:
        used_keys, used_values = np.concatenate([keys, k_rot], axis=1), np.concatenate([values, v], axis=1)
    weights = R.softmax(q_rot @ used_keys.transpose(0, 2, 1) * (scale or 1 / math.sqrt(d_k)))
    out = (weights @ used_values).reshape(d) @ W_O
    stored = keys if store_rotated else np.concatenate([k_cache, k], axis=1)
    return out, stored, values


@mistake("kv_attention_step", "the cached keys are rotated again at every step: they were stored rotated, "
         "append the new rotated key and leave the old ones as they are",
         fix="k_cache = np.concatenate([k_cache, apply_rope(k, np.array([t]))], axis=1), with no "
             "apply_rope on the old k_cache")
def cache_rotated_again(x, k_cache, v_cache, W_Q, W_K, W_V, W_O, n_heads):
    return _step(x, k_cache, v_cache, W_Q, W_K, W_V, W_O, n_heads, rotate_cache=True)


@mistake("kv_attention_step", "the new key is stored in the cache unrotated: the cache holds rotated keys, "
         "each turned once at its own position",
         fix="k = apply_rope(k, np.array([t])) before np.concatenate([k_cache, k], axis=1)")
def unrotated_key_stored(x, k_cache, v_cache, W_Q, W_K, W_V, W_O, n_heads):
    return _step(x, k_cache, v_cache, W_Q, W_K, W_V, W_O, n_heads, store_rotated=False)


@mistake("kv_attention_step", "the new query and key are rotated at position 0 (or not at all): the new "
         "token comes after the t cached ones, at position t",
         fix="t = k_cache.shape[1]; apply_rope(q, np.array([t])) and apply_rope(k, np.array([t]))")
def rotated_at_zero(x, k_cache, v_cache, W_Q, W_K, W_V, W_O, n_heads):
    return _step(x, k_cache, v_cache, W_Q, W_K, W_V, W_O, n_heads, q_at=lambda t: 0, k_at=lambda t: 0)


@mistake("kv_attention_step", "the new token is rotated at position t + 1: positions count from 0, so "
         "after t cached tokens the new one is at position t",
         fix="positions np.array([t]) with t = k_cache.shape[1], not t + 1")
def rotated_one_too_far(x, k_cache, v_cache, W_Q, W_K, W_V, W_O, n_heads):
    return _step(x, k_cache, v_cache, W_Q, W_K, W_V, W_O, n_heads, q_at=lambda t: t + 1, k_at=lambda t: t + 1)


@mistake("kv_attention_step", "the query is not rotated: rotate both the new query and the new key at "
         "position t",
         fix="q = apply_rope(q, np.array([t]))")
def query_not_rotated(x, k_cache, v_cache, W_Q, W_K, W_V, W_O, n_heads):
    d_k = x.shape[-1] // n_heads
    q = (x @ W_Q).reshape(n_heads, 1, d_k)
    out, keys, values = R.kv_attention_step(x, k_cache, v_cache, W_Q, W_K, W_V, W_O, n_heads)
    weights = R.softmax(q @ keys.transpose(0, 2, 1) / math.sqrt(d_k))
    return (weights @ values).reshape(-1) @ W_O, keys, values


@mistake("kv_attention_step", "the new token attends only to the cached positions: append its key and "
         "value first, so that it also sees itself",
         fix="k_cache = np.concatenate([k_cache, k], axis=1) (and v_cache likewise) before "
             "q @ k_cache.transpose(0, 2, 1)")
def new_token_left_out(x, k_cache, v_cache, W_Q, W_K, W_V, W_O, n_heads):
    return _step(x, k_cache, v_cache, W_Q, W_K, W_V, W_O, n_heads, include_new=False)


@mistake("kv_attention_step", "the new token's key and value are appended twice (once to the cache, "
         "once more for the scores): it gets the weight of two positions",
         fix="keys = np.concatenate([k_cache, k], axis=1) once, and the scores q @ keys.transpose(0, 2, 1)")
def new_token_twice(x, k_cache, v_cache, W_Q, W_K, W_V, W_O, n_heads):
    return _step(x, k_cache, v_cache, W_Q, W_K, W_V, W_O, n_heads, new_twice=True)


@mistake("kv_attention_step", "the scores are divided by sqrt(d) instead of sqrt(d_k), the width of one "
         "head",
         fix="divide the scores by math.sqrt(d // n_heads)")
def step_scaled_by_model_width(x, k_cache, v_cache, W_Q, W_K, W_V, W_O, n_heads):
    return _step(x, k_cache, v_cache, W_Q, W_K, W_V, W_O, n_heads, scale=1 / math.sqrt(x.shape[-1]))


def _kv(x, k_cache, v_cache, W_Q, W_K, W_V, W_O, n_heads, position=None, scale=None, project=True,
        softmax_axis=-1, rotate_v=False, return_old=False, rotate_whole=False):
    """kv_attention_step with one step done another way."""
    d = x.shape[-1]
    d_k = d // n_heads
    t = k_cache.shape[1] if position is None else position(k_cache)
    q, k, v = ((x @ W).reshape(n_heads, 1, d_k) for W in (W_Q, W_K, W_V))
    at = np.array([t])
    q = R.apply_rope(q, at)
    if rotate_v:
        v = R.apply_rope(v, at)
    if rotate_whole:
        stored = np.concatenate([k_cache, k], axis=1)
        keys = R.apply_rope(stored, np.arange(stored.shape[1]))
    else:
        stored = keys = np.concatenate([k_cache, R.apply_rope(k, at)], axis=1)
    values = np.concatenate([v_cache, v], axis=1)
    scores = q @ keys.transpose(0, 2, 1) * (1 / math.sqrt(d_k) if scale is None else scale(d_k))
    weights = _softmax(scores, softmax_axis if softmax_axis == -1 else 0)
    heads = (weights @ values).reshape(d)
    out = heads @ W_O if project else heads
    return (out, k_cache, v_cache) if return_old else (out, stored, values)


@mistake("kv_attention_step", "the new position is read from the wrong axis of the cache (its number of "
         "heads, shape[0] or len(k_cache)): the cache is (A, t, d_k), so t = k_cache.shape[1]",
         fix="t = k_cache.shape[1]")
def position_from_heads_axis(x, k_cache, v_cache, W_Q, W_K, W_V, W_O, n_heads):
    return _kv(x, k_cache, v_cache, W_Q, W_K, W_V, W_O, n_heads, position=lambda c: c.shape[0])


@mistake("kv_attention_step", "the scores are not scaled: divide them by sqrt(d_k), the width of one head",
         fix="q @ k_cache.transpose(0, 2, 1) / math.sqrt(d_k)")
def step_not_scaled(x, k_cache, v_cache, W_Q, W_K, W_V, W_O, n_heads):
    return _kv(x, k_cache, v_cache, W_Q, W_K, W_V, W_O, n_heads, scale=lambda d_k: 1.0)


@mistake("kv_attention_step", "the scores are divided by d_k instead of sqrt(d_k)",
         fix="q @ k_cache.transpose(0, 2, 1) / math.sqrt(d_k)")
def step_scaled_by_width(x, k_cache, v_cache, W_Q, W_K, W_V, W_O, n_heads):
    return _kv(x, k_cache, v_cache, W_Q, W_K, W_V, W_O, n_heads, scale=lambda d_k: 1.0 / d_k)


@mistake("kv_attention_step", "the output projection W_O is missing: the concatenated heads are multiplied "
         "by W_O, as in rope_attention",
         fix="(weights @ v_cache).reshape(d) @ W_O")
def step_not_projected(x, k_cache, v_cache, W_Q, W_K, W_V, W_O, n_heads):
    return _kv(x, k_cache, v_cache, W_Q, W_K, W_V, W_O, n_heads, project=False)


@mistake("kv_attention_step", "the softmax normalises over the heads: each head's scores are normalised "
         "over the cached positions 0..t",
         fix="softmax over the positions, the last axis of the (A, 1, t+1) scores")
def softmax_over_heads(x, k_cache, v_cache, W_Q, W_K, W_V, W_O, n_heads):
    return _kv(x, k_cache, v_cache, W_Q, W_K, W_V, W_O, n_heads, softmax_axis=0)


@mistake("kv_attention_step", "the new value is rotated (and cached rotated): RoPE turns queries and keys "
         "only, values carry content",
         fix="append the new values, unrotated, to v_cache along the position axis (axis 1)")
def value_rotated(x, k_cache, v_cache, W_Q, W_K, W_V, W_O, n_heads):
    return _kv(x, k_cache, v_cache, W_Q, W_K, W_V, W_O, n_heads, rotate_v=True)


@mistake("kv_attention_step", "the caches returned are the ones given, without the new position: return the "
         "extended caches (A, t+1, d_k)",
         fix="return out, k_cache, v_cache after k_cache = np.concatenate([k_cache, k], axis=1) (and v_cache)")
def old_caches_returned(x, k_cache, v_cache, W_Q, W_K, W_V, W_O, n_heads):
    return _kv(x, k_cache, v_cache, W_Q, W_K, W_V, W_O, n_heads, return_old=True)


@mistake("kv_attention_step", "the whole cache is rotated at positions 0..t at every step, with the new key "
         "appended unrotated: the cached keys were rotated when they were stored, so they turn twice, and "
         "the cache returned holds an unrotated key; rotate the new key alone, at position t",
         fix="k = apply_rope(k, np.array([t])); k_cache = np.concatenate([k_cache, k], axis=1)")
def whole_cache_rotated(x, k_cache, v_cache, W_Q, W_K, W_V, W_O, n_heads):
    return _kv(x, k_cache, v_cache, W_Q, W_K, W_V, W_O, n_heads, rotate_whole=True)


# ------------------------------------------------------------------------------------ dropout

@mistake("dropout", "the kept entries are not scaled: inverted dropout divides them by 1 - p, so that the "
         "expected value stays x",
         fix="np.where(keep, x / (1 - p), 0.0)")
def not_rescaled(x, p, rng, training=True):
    if not training or p == 0:
        return x.copy()
    return np.where(rng.random(x.shape) >= p, x, 0.0)


@mistake("dropout", "the kept entries are divided by sqrt(1 - p): inverted dropout divides them by 1 - p, "
         "so that the expected value stays x",
         fix="np.where(keep, x / (1 - p), 0.0)")
def scaled_by_root(x, p, rng, training=True):
    if not training or p == 0:
        return x.copy()
    return np.where(rng.random(x.shape) >= p, x / math.sqrt(1 - p), 0.0)


@mistake("dropout", "the training flag is read the wrong way round: entries are dropped at evaluation and "
         "kept in training",
         fix="if not training, the result is x.copy(); in training, drop each entry with probability p")
def flag_inverted(x, p, rng, training=True):
    if training or p == 0:
        return x.copy()
    return np.where(rng.random(x.shape) >= p, x / (1 - p), 0.0)


@mistake("dropout", "the kept entries are multiplied by 1 - p: inverted dropout divides by 1 - p during "
         "training",
         fix="np.where(keep, x / (1 - p), 0.0)")
def multiplied_by_keep(x, p, rng, training=True):
    if not training or p == 0:
        return x.copy()
    return np.where(rng.random(x.shape) >= p, x * (1 - p), 0.0)


@mistake("dropout", "the kept entries are divided by p: inverted dropout divides them by 1 - p, the "
         "probability of keeping an entry, so that the expected value stays x",
         fix="np.where(keep, x / (1 - p), 0.0)")
def divided_by_p(x, p, rng, training=True):
    if not training or p == 0:
        return x.copy()
    return np.where(rng.random(x.shape) >= p, x / p, 0.0)


@mistake("dropout", "p is used as the probability of keeping an entry: p is the probability of dropping it",
         fix="keep the entries where rng.random(x.shape) >= p and divide them by 1 - p")
def p_keeps(x, p, rng, training=True):
    if not training or p == 0:
        return x.copy()
    return np.where(rng.random(x.shape) < p, x / p, 0.0)


@mistake("dropout", "in training nothing is dropped: each entry must be set to 0 with probability p, and "
         "the others divided by 1 - p",
         fix="in training, np.where(rng.random(x.shape) >= p, x / (1 - p), 0.0)")
def never_drops(x, p, rng, training=True):
    return x.copy()


@mistake("dropout", "entries are dropped at evaluation time too: dropout acts during training only, "
         "evaluation leaves x as it is",
         fix="if not training, the result is x.copy(), with no mask and no scaling")
def always_on(x, p, rng, training=True):
    if p == 0:
        return x.copy()
    return np.where(rng.random(x.shape) >= p, x / (1 - p), 0.0)


@mistake("dropout", "at evaluation x is scaled by 1 - p (plain dropout's correction); inverted dropout "
         "already scaled during training, so evaluation returns x unchanged",
         fix="if not training, the result is x.copy(), with no mask and no scaling")
def scaled_at_evaluation(x, p, rng, training=True):
    if not training:
        return x * (1 - p)
    if p == 0:
        return x.copy()
    return np.where(rng.random(x.shape) >= p, x / (1 - p), 0.0)


@mistake("dropout", "the dropout probability is a fixed number in the code: the rate must follow the "
         "argument p",
         fix="keep the entries where rng.random(x.shape) >= p and divide them by 1 - p")
def fixed_rate(x, p, rng, training=True):
    if not training:
        return x.copy()
    return np.where(rng.random(x.shape) >= 0.1, x / 0.9, 0.0)


@mistake("dropout", "one decision is drawn per row or per column (a mask of fewer dimensions than x, "
         "broadcast), so whole rows or columns are kept or dropped together: every entry is decided on its own",
         fix="rng.random(x.shape), a mask of the shape of x")
def rows_dropped(x, p, rng, training=True):
    if not training or p == 0:
        return x.copy()
    return np.where(rng.random(x.shape[:-1] + (1,)) >= p, x / (1 - p), 0.0)


# -------------------------------------------------------------------------- attention_support

def _support(weights, log=np.log2, power=2.0, divide_by=None, axis=-1):
    safe = np.where(weights > 0, weights, 1.0)
    entropy = -(weights * log(safe)).sum(axis=axis)
    support = power ** entropy
    N = weights.shape[-1]
    return entropy, support, support / (np.arange(1, N + 1) if divide_by is None else divide_by)


@mistake("attention_support", "the entropy is in nats (natural logarithm): in bits, so that 2^entropy "
         "counts positions",
         fix="np.log2 instead of np.log")
def in_nats(weights):
    return _support(weights, log=np.log)


@mistake("attention_support", "the entropy is in nats (natural logarithm): in bits, so that 2^entropy "
         "counts positions",
         fix="np.log2 instead of np.log")
def in_nats_throughout(weights):
    entropy, support, normalised = _support(weights, log=np.log)
    return entropy, np.exp(entropy), np.exp(entropy) / np.arange(1, weights.shape[-1] + 1)


@mistake("attention_support", "the entropy and the support are returned in each other's place: return "
         "(entropy, support, normalised)",
         fix="return entropy, support, support / np.arange(1, N + 1)")
def entropy_and_support_swapped(weights):
    entropy, support, normalised = R.attention_support(weights)
    return support, entropy, normalised


@mistake("attention_support", "the support is e^entropy with the entropy in bits: with bits, the "
         "support is 2^entropy",
         fix="2.0 ** entropy (or np.exp2(entropy)) instead of np.exp(entropy)")
def exp_of_bits(weights):
    return _support(weights, power=math.e)


@mistake("attention_support", "the support is divided by N, the window length: query i sees i + 1 "
         "positions, so divide by i + 1",
         fix="support / np.arange(1, weights.shape[-1] + 1)")
def divided_by_window(weights):
    return _support(weights, divide_by=weights.shape[-1])


@mistake("attention_support", "the support is divided by i: query i sees i + 1 positions (0 to i), so "
         "divide by i + 1",
         fix="support / np.arange(1, weights.shape[-1] + 1)")
def divided_by_index(weights):
    with np.errstate(divide="ignore"):
        return _support(weights, divide_by=np.arange(weights.shape[-1]))


@mistake("attention_support", "the support is divided by the number of non-zero weights in the row: query i "
         "sees i + 1 positions, those of weight 0 included, so divide by i + 1",
         fix="support / np.arange(1, weights.shape[-1] + 1)")
def divided_by_nonzero(weights):
    return _support(weights, divide_by=np.count_nonzero(weights, axis=-1))


@mistake("attention_support", "0 log 0 gives nan: the zero weights must count as 0 in the entropy",
         fix="np.log2(np.where(weights > 0, weights, 1.0)), since log2(1) = 0")
def nan_on_zeros(weights):
    with np.errstate(divide="ignore", invalid="ignore"):
        entropy = -(weights * np.log2(weights)).sum(axis=-1)
    support = 2.0 ** entropy
    return entropy, support, support / np.arange(1, weights.shape[-1] + 1)


@mistake("attention_support", "the minus sign of the entropy is missing: the entropy, -sum a log2 a, is "
         "at least 0",
         fix="entropy = -(weights * logs).sum(axis=-1)")
def sign_missing(weights):
    safe = np.where(weights > 0, weights, 1.0)
    entropy = (weights * np.log2(safe)).sum(axis=-1)
    support = 2.0 ** entropy
    return entropy, support, support / np.arange(1, weights.shape[-1] + 1)


@mistake("attention_support", "the entropy sums over the queries: each row, one query's distribution over "
         "the keys, has its own entropy",
         fix="sum over the keys, the last axis: .sum(axis=-1)")
def summed_over_queries(weights):
    return _support(weights, axis=-2)


# Mistakes whose sign is NaN or inf where the reference has numbers (0 log 0): only for these is a
# non-finite result evidence (checks.explains, verdict.shows)
suite.nonfinite("attention_support", "nan_on_zeros")


_ENTROPY_NORMALISED = ("the normalised output divides the entropy by its largest value, log2 of the number of "
                       "positions: it is the support divided by the i + 1 positions query i sees")


@mistake("attention_support", _ENTROPY_NORMALISED, fix="support / np.arange(1, N + 1)")
def entropy_normalised_causal(weights):
    entropy, support, _ = R.attention_support(weights)
    with np.errstate(divide="ignore", invalid="ignore"):
        return entropy, support, entropy / np.log2(np.arange(1, weights.shape[-1] + 1))


@mistake("attention_support", _ENTROPY_NORMALISED, fix="support / np.arange(1, N + 1)")
def entropy_normalised_window(weights):
    entropy, support, _ = R.attention_support(weights)
    with np.errstate(divide="ignore", invalid="ignore"):
        return entropy, support, entropy / np.log2(weights.shape[-1])


@mistake("rope_frequencies", "the pairs are counted from 1 (m = 1 .. d_k/2): pair m = 0 turns at "
         "frequency base^0 = 1, so the exponents are -2m/d_k for m = 0 .. d_k/2 - 1",
         fix="base ** (-np.arange(0, d_k, 2) / d_k)")
def pairs_from_one(d_k, base=10000.0):
    return base ** (-np.arange(2, d_k + 1, 2) / d_k)


@mistake("rope_frequencies", "operator precedence: base ** -2 * m / d_k raises base to -2 and then "
         "multiplies by m / d_k; the whole exponent needs parentheses, base ** (-2 * m / d_k)",
         fix="base ** (-2 * m / d_k) with m = np.arange(d_k // 2)")
def precedence(d_k, base=10000.0):
    m = np.arange(d_k // 2)
    return base ** -2 * m / d_k


@mistake("rope_attention", "the softmax normalises over the heads (axis 1 of the (B, A, N, N) scores): "
         "each query's scores are normalised over the keys, the last axis",
         fix="softmax(scores) over axis -1")
def softmax_over_heads_ra(X, W_Q, W_K, W_V, W_O, n_heads):
    return _rope_attention(X, W_Q, W_K, W_V, W_O, n_heads, softmax_axis=1)


@mistake("kv_attention_step", "the new key and value are put in front of the cache: they belong at its end, "
         "position t after positions 0..t-1",
         fix="np.concatenate([k_cache, k], axis=1)")
def new_entries_first(x, k_cache, v_cache, W_Q, W_K, W_V, W_O, n_heads):
    out, keys, values = R.kv_attention_step(x, k_cache, v_cache, W_Q, W_K, W_V, W_O, n_heads)
    t = k_cache.shape[1]
    return out, np.concatenate([keys[:, t:], keys[:, :t]], axis=1), np.concatenate([values[:, t:], values[:, :t]], axis=1)


@mistake("kv_attention_step", "the heads are merged in the wrong order (a transpose before the reshape): "
         "the output concatenates head 0's d_k values, then head 1's, ...",
         fix="(weights @ v_cache).reshape(d)")
def heads_merged_strided(x, k_cache, v_cache, W_Q, W_K, W_V, W_O, n_heads):
    d = x.shape[-1]
    d_k, t = d // n_heads, k_cache.shape[1]
    q, k, v = ((x @ W).reshape(n_heads, 1, d_k) for W in (W_Q, W_K, W_V))
    q, k = R.apply_rope(q, np.array([t])), R.apply_rope(k, np.array([t]))
    keys, values = np.concatenate([k_cache, k], axis=1), np.concatenate([v_cache, v], axis=1)
    weights = R.softmax(q @ keys.transpose(0, 2, 1) / math.sqrt(d_k))
    return (weights @ values).transpose(2, 1, 0).reshape(d) @ W_O, keys, values


@mistake("dropout", "at evaluation x is divided by 1 - p: inverted dropout scales only during training, "
         "evaluation returns x unchanged",
         fix="if not training, the result is x.copy(), with no mask and no scaling")
def divided_at_evaluation(x, p, rng, training=True):
    if not training:
        return x / (1 - p)
    if p == 0:
        return x.copy()
    return np.where(rng.random(x.shape) >= p, x / (1 - p), 0.0)


@mistake("attention_support", "the entropy of a row is a mean over its keys: it is a sum, -Σ_j a_j log2 a_j",
         fix="-(weights * logs).sum(axis=-1)")
def mean_over_keys(weights):
    safe = np.where(weights > 0, weights, 1.0)
    entropy = -(weights * np.log2(safe)).mean(axis=-1)
    support = 2.0 ** entropy
    return entropy, support, support / np.arange(1, weights.shape[-1] + 1)
