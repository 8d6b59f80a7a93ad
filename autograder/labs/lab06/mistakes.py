"""Known wrong versions of each Lab 06 part, with the words that explain them to a student.

When a check fails, each mistake of the part runs on the check's own inputs (a seeded generator
is rebuilt from its seed for every run); a mistake that reproduces every result the student
returned is named, unless another that says something else does too (then neither is). Mistakes
of the sampling
parts draw the way most students do (rng.choice), so they are named when the student's code
uses the generator that way too.
"""
import math

import numpy as np

from . import reference as R
from .suite import suite

mistake = suite.mistake


def _softmax(z, axis=-1):
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _rows(a):
    """(..., C) -> (N, C)."""
    return a.reshape(-1, a.shape[-1])


# -------------------------------------------------------------------------------- build_vocab

def _vocab(itos):
    return {ch: i for i, ch in enumerate(itos)}, itos


@mistake("build_vocab", "'.' is sorted together with the other characters: it must come first "
         "(id 0) because it is the boundary token, whatever characters sort before it")
def dot_sorted_in(names):
    return _vocab(sorted(set("".join(names)) | {"."}))


@mistake("build_vocab", "'.' is added at the end of the vocabulary; the boundary token '.' gets id 0 "
         "and the other characters follow in sorted order")
def dot_last(names):
    return _vocab(sorted(set("".join(names))) + ["."])


@mistake("build_vocab", "the vocabulary has no '.': add the boundary token '.' as id 0")
def no_dot(names):
    return _vocab(sorted(set("".join(names))))


@mistake("build_vocab", "the characters are numbered in order of first appearance; sort them")
def unsorted(names):
    return _vocab(["."] + [ch for ch in dict.fromkeys("".join(names)) if ch != "."])


@mistake('build_vocab', "stoi gives '.' the id 0, but itos does not start with '.': itos[i] must be the character whose id is i",
         fix="itos = ['.'] + the sorted characters")
def itos_without_dot(names):
    chars = sorted(set("".join(names)))
    stoi = {ch: i + 1 for i, ch in enumerate(chars)}
    stoi["."] = 0
    return stoi, chars


@mistake("build_vocab", "the ids start at 1 (enumerate(..., 1)): '.' must be id 0 and the letters "
         "follow from 1, so that itos[i] is the character whose id is i",
         fix="stoi = {ch: i for i, ch in enumerate(itos)} with itos = ['.'] + sorted(characters)")
def ids_from_one(names):
    itos = ["."] + sorted(set("".join(names)) - {"."})
    return {ch: i + 1 for i, ch in enumerate(itos)}, itos


@mistake("build_vocab", "it returns (itos, stoi); the order is (stoi, itos)")
def swapped(names):
    stoi, itos = R.build_vocab(names)
    return itos, stoi


# ------------------------------------------------------------------------------------- encode

@mistake("encode", "the ids are computed from the alphabet (ord(ch) - ord('a') + 1) instead of looked "
         "up in stoi: the vocabulary decides the ids")
def alphabet_ids(text, stoi):
    return [0 if ch == "." else ord(ch) - ord("a") + 1 for ch in text]


@mistake("encode", "'.' tokens are added around the text; encode maps exactly the characters it is "
         "given, one id each")
def adds_boundaries(text, stoi):
    return [stoi["."]] + [stoi[ch] for ch in text] + [stoi["."]]


@mistake("encode", "each character is encoded once (a set or dict of the characters): every "
         "character of the text gets its id, repeats included, in order")
def unique_characters(text, stoi):
    return [stoi[ch] for ch in dict.fromkeys(text)]


# ------------------------------------------------------------------------------------- decode

@mistake("decode", "the '.' tokens are dropped: decode returns every token's character, '.' included")
def dots_dropped(ids, itos):
    return "".join(itos[int(i)] for i in ids).replace(".", "")


@mistake("decode", "the '.' at the ends are stripped: decode returns every token's character, "
         "'.' included")
def dots_stripped(ids, itos):
    return "".join(itos[int(i)] for i in ids).strip(".")


@mistake("decode", "the '.' at the end is stripped: decode returns every token's character, '.' included")
def dot_stripped_at_the_end(ids, itos):
    return "".join(itos[int(i)] for i in ids).rstrip(".")


@mistake("decode", "the '.' at the start is stripped: decode returns every token's character, '.' included")
def dot_stripped_at_the_start(ids, itos):
    return "".join(itos[int(i)] for i in ids).lstrip(".")


@mistake("decode", "the characters are joined with spaces; join them with '' into one string")
def spaced(ids, itos):
    return " ".join(itos[int(i)] for i in ids)


@mistake('decode', 'it returns the list of characters; decode returns one string',
         fix="''.join(...)")
def character_list(ids, itos):
    return [itos[int(i)] for i in ids]


@mistake("decode", "the characters are computed from the alphabet (chr(i + 96)) instead of looked "
         "up in itos: the vocabulary decides the characters")
def alphabet_characters(ids, itos):
    return "".join("." if i == 0 else chr(int(i) + ord("a") - 1) for i in ids)


# ---------------------------------------------------------------------------------- get_batch

def _windows(stream, s, block_size, shift=1):
    """x[b] = stream[s_b : s_b + T] and y[b] = stream[s_b + shift : s_b + shift + T]."""
    offsets = np.arange(block_size)
    return stream[s[:, None] + offsets], stream[s[:, None] + shift + offsets]


@mistake("get_batch", "y is x itself: the targets are the next tokens, y[b] = stream[s + 1 : s + N + 1]")
def no_shift(stream, starts, batch_size, block_size, rng):
    return _windows(stream, rng.choice(starts, size=batch_size), block_size, shift=0)


@mistake("get_batch", "y is x rolled by one (np.roll), so its last token wraps around to x's first: "
         "y[b] = stream[s + 1 : s + N + 1], the window one token further along the stream")
def rolled(stream, starts, batch_size, block_size, rng):
    x, _ = _windows(stream, rng.choice(starts, size=batch_size), block_size)
    return x, np.roll(x, -1, axis=1)


@mistake("get_batch", "x and y hold N + 1 tokens; x = stream[s : s + N] and y = stream[s + 1 : s + N + 1]")
def windows_too_long(stream, starts, batch_size, block_size, rng):
    return _windows(stream, rng.choice(starts, size=batch_size), block_size + 1)


@mistake('get_batch', "the windows start anywhere in the stream: every window must start at one of `starts` (each name's '.')",
         fix='rng.choice(starts, size=batch_size)')
def starts_ignored(stream, starts, batch_size, block_size, rng):
    return _windows(stream, rng.integers(0, len(stream) - block_size, size=batch_size), block_size)


@mistake("get_batch", "an index into `starts` is used as a position in the stream: the window "
         "begins at starts[i], not at i")
def index_as_position(stream, starts, batch_size, block_size, rng):
    return _windows(stream, rng.integers(0, len(starts), size=batch_size), block_size)


@mistake('get_batch', 'the last start can never be drawn: the index drawn stops one short of len(starts) '
         '(an upper bound that is already exclusive, minus 1, or starts[:-1])',
         fix='rng.integers(0, len(starts), size=batch_size)')
def last_start_excluded(stream, starts, batch_size, block_size, rng):
    return _windows(stream, starts[rng.integers(0, len(starts) - 1, size=batch_size)], block_size)


@mistake("get_batch", "one start is drawn for the whole batch, so every row is the same window: "
         "draw batch_size starts (size=batch_size)")
def one_start(stream, starts, batch_size, block_size, rng):
    return _windows(stream, np.full(batch_size, rng.choice(starts)), block_size)


# ------------------------------------------------------------------------------ cross_entropy

def _log_probs(logits):
    z = logits - logits.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def _picked(log_probs, targets):
    return np.take_along_axis(log_probs, targets[..., None], axis=-1)[..., 0]


@mistake("cross_entropy", "the loss is computed as log(softmax(u)): a probability that underflows to "
         "0 gives log 0 = -inf; use log-sum-exp, log p = u - m - log Σ exp(u - m) with m the row maximum")
def log_of_softmax(logits, targets):
    return float(-np.log(_picked(_softmax(logits), targets)).mean())


@mistake("cross_entropy", "np.exp(u) overflows for logits near 1000 (and log Σ exp underflows near "
         "-1000): subtract each row's maximum m first, log Σ exp(u) = m + log Σ exp(u - m)")
def unstable(logits, targets):
    return float((np.log(np.exp(logits).sum(axis=-1)) - _picked(logits, targets)).mean())


@mistake("cross_entropy", "np.exp(u) overflows for logits near 1000 (and log Σ exp underflows near "
         "-1000): subtract each row's maximum m first, log Σ exp(u) = m + log Σ exp(u - m)")
def unstable_probabilities(logits, targets):
    """The same idea through the probabilities: exp(u) / Σ exp(u), then its log (which is also
    -inf where a probability underflows to 0)."""
    probs = np.exp(logits) / np.exp(logits).sum(axis=-1, keepdims=True)
    return float(-np.log(_picked(probs, targets)).mean())


@mistake("cross_entropy", "the row maxima are reduced without keeping their axis, so they broadcast "
         "against the vocabulary instead of the rows (a broadcast error when N != V)",
         fix="logits.max(axis=-1, keepdims=True)")
def keepdims_forgotten_ce(logits, targets):
    z = logits - logits.max(axis=-1)
    return float(-_picked(z - np.log(np.exp(z).sum(axis=-1)), targets).mean())


@mistake("cross_entropy", "the row maximum subtracted inside log-sum-exp is not added back: "
         "log Σ exp(u) = m + log Σ exp(u - m)")
def max_not_added_back(logits, targets):
    m = logits.max(axis=-1, keepdims=True)
    lse = np.log(np.exp(logits - m).sum(axis=-1))
    return float((lse - _picked(logits, targets)).mean())


@mistake("cross_entropy", "the maximum of the whole batch is subtracted instead of each row's: rows "
         "far below it underflow to log 0")
def global_max(logits, targets):
    z = logits - logits.max()
    return float(-_picked(z - np.log(np.exp(z).sum(axis=-1, keepdims=True)), targets).mean())


@mistake("cross_entropy", "the loss is summed over positions; it is their mean (divide by the number of positions, BN)")
def summed(logits, targets):
    return float(-_picked(_log_probs(logits), targets).sum())


@mistake("cross_entropy", "the sum is divided by B = len(targets) instead of the number of positions "
         "BN (targets.size)")
def divided_by_batch(logits, targets):
    return float(-_picked(_log_probs(logits), targets).sum() / len(targets))


@mistake("cross_entropy", "it returns the loss of every position; the loss is their mean, one number")
def per_position(logits, targets):
    return -_picked(_log_probs(logits), targets)


@mistake("cross_entropy", "the mean is taken over all BN·|V| entries of onehot ⊙ log p: average over "
         "the BN positions only")
def mean_over_vocabulary(logits, targets):
    onehot = np.eye(logits.shape[-1])[targets]
    return float(-(onehot * _log_probs(logits)).mean())


@mistake('cross_entropy', "log_probs[:, targets] picks an N × N block (every row at every target); the loss needs one entry per row, the target's",
         fix='log_probs[np.arange(N), targets]')
def block_indexing(logits, targets):
    return float(-_log_probs(logits)[:, targets].mean())


@mistake("cross_entropy", "the loss is in bits (log2); cross-entropy here uses the natural log (nats)")
def in_bits(logits, targets):
    return R.cross_entropy(logits, targets) / math.log(2)


@mistake("cross_entropy", "the sign is flipped: the loss is -log p of the target, a positive number")
def sign_flipped(logits, targets):
    return -R.cross_entropy(logits, targets)


# --------------------------------------------------------------------- cross_entropy_backward

def _minus_onehot(p, targets):
    grad = p.copy()
    np.put_along_axis(grad, targets[..., None], _picked(grad, targets)[..., None] - 1, -1)
    return grad


@mistake("cross_entropy_backward", "the gradient is not divided by the number of positions, BN: the "
         "loss is a mean, so its gradient carries 1/(BN)")
def forgot_mean(logits, targets):
    return _minus_onehot(_softmax(logits), targets)


@mistake("cross_entropy_backward", "the gradient is divided by B = len(targets) instead of the "
         "number of positions BN (targets.size)")
def divided_by_batch_size(logits, targets):
    return _minus_onehot(_softmax(logits), targets) / len(targets)


@mistake("cross_entropy_backward", "the gradient is divided by the number of logits BN·|V|; the "
         "loss averages over the BN positions only, so the gradient carries 1/(BN)",
         fix="divide by targets.size")
def divided_by_all_entries(logits, targets):
    return _minus_onehot(_softmax(logits), targets) / logits.size


@mistake("cross_entropy_backward", "the gradient is divided by the vocabulary size |V|; the loss "
         "averages over the BN positions, so the gradient carries 1/(BN)", fix="divide by targets.size")
def divided_by_vocabulary(logits, targets):
    return _minus_onehot(_softmax(logits), targets) / logits.shape[-1]


@mistake("cross_entropy_backward", "the softmax's row maxima and sums are reduced without keeping "
         "their axis, so they broadcast against the vocabulary instead of the rows",
         fix="logits.max(axis=-1, keepdims=True) and e.sum(axis=-1, keepdims=True)")
def keepdims_forgotten_ceb(logits, targets):
    e = np.exp(logits - logits.max(axis=-1))
    return _minus_onehot(e / e.sum(axis=-1), targets) / targets.size


@mistake("cross_entropy_backward", "the sign is flipped: the gradient is (softmax - onehot) / (BN), "
         "not (onehot - softmax) / (BN)")
def gradient_sign_flipped(logits, targets):
    return -R.cross_entropy_backward(logits, targets)


@mistake("cross_entropy_backward", "the one-hot target is not subtracted: the gradient is "
         "(softmax - onehot) / (BN)")
def no_onehot(logits, targets):
    return _softmax(logits) / targets.size


@mistake('cross_entropy_backward', "grad[:, targets] -= 1 subtracts 1 in every target's column of every row; it belongs once per row, at that row's target",
         fix='grad[np.arange(N), targets] -= 1')
def column_subtraction(logits, targets):
    grad = _softmax(logits)
    grad[:, targets] -= 1
    return grad / targets.size


@mistake('cross_entropy_backward', "grad[:, targets] -= 1 subtracts 1 in every target's column of every row; it belongs once per row, at that row's target",
         fix='grad[np.arange(N), targets] -= 1')
def column_subtraction_flat(logits, targets):
    grad, picked = _rows(_softmax(logits)), targets.reshape(-1)
    grad[:, picked] -= 1
    return (grad / picked.size).reshape(logits.shape)


@mistake("cross_entropy_backward", "np.exp overflows for logits near 1000: subtract each row's "
         "maximum before the softmax")
def unstable_softmax(logits, targets):
    e = np.exp(logits)
    return _minus_onehot(e / e.sum(axis=-1, keepdims=True), targets) / targets.size


@mistake("cross_entropy_backward", "the softmax subtracts the maximum of the whole batch: rows far "
         "below it underflow to 0/0 = nan; subtract each row's maximum")
def global_max_softmax(logits, targets):
    e = np.exp(logits - logits.max())
    return _minus_onehot(e / e.sum(axis=-1, keepdims=True), targets) / targets.size


# ---------------------------------------------------------------------------- linear_backward

def _linear(dy, x, W, dx=None, dW=None, db=None):
    """The reference's (dx, dW, db), any of them replaced by a function of the (N, C) rows dy2
    and x2 of dy and x, and W."""
    dx = dx or (lambda dy2, x2, W: (dy2 @ W.T).reshape(x.shape))
    dW = dW or (lambda dy2, x2, W: x2.T @ dy2)
    db = db or (lambda dy2, x2, W: dy2.sum(axis=0))
    return tuple(f(_rows(dy), _rows(x), W) for f in (dx, dW, db))


@mistake("linear_backward", "δ_x = δ_y·W misses the transpose: δ_x = δ_y·Wᵀ (d_out -> d_in)")
def dx_without_transpose(dy, x, W):
    return _linear(dy, x, W, dx=lambda dy2, x2, W: (dy2 @ W).reshape(x.shape))


@mistake("linear_backward", "δ_W is xᵀ·δ_y, not δ_yᵀ·x: a transpose is missing (δ_yᵀ·x is δ_Wᵀ)")
def dW_transposed(dy, x, W):
    return _linear(dy, x, W, dW=lambda dy2, x2, W: dy2.T @ x2)


@mistake("linear_backward", "dW is divided by the number of rows n: δ_W = xᵀ·δ_y is the sum over positions, not the mean")
def dW_mean(dy, x, W):
    return _linear(dy, x, W, dW=lambda dy2, x2, W: x2.T @ dy2 / len(x2))


@mistake("linear_backward", "db is the mean of δ_y over positions; it is the sum")
def db_mean(dy, x, W):
    return _linear(dy, x, W, db=lambda dy2, x2, W: dy2.mean(axis=0))


@mistake("linear_backward", "db sums over the output features (axis=-1); it sums over the positions, "
         "one value per output feature")
def db_wrong_axis(dy, x, W):
    return _linear(dy, x, W, db=lambda dy2, x2, W: dy.sum(axis=-1))


@mistake('linear_backward', 'db sums over the first axis only, which leaves an (N, d_out) array for (B, N, d_out) gradients: db sums over every position',
         fix='dy.reshape(-1, dy.shape[-1]).sum(axis=0)')
def db_first_axis(dy, x, W):
    return _linear(dy, x, W, db=lambda dy2, x2, W: dy.sum(axis=0))


@mistake("linear_backward", "δ_W = xᵀ·δ_y is written for (n, d) matrices, but batched (B, N, d) inputs "
         "are not flattened first: x.T reverses all three axes and the product fails",
         fix="x2 = x.reshape(-1, x.shape[-1]) and dy2 = dy.reshape(-1, dy.shape[-1]), then dW = x2.T @ dy2")
def batched_not_flattened(dy, x, W):
    return dy @ W.T, x.T @ dy, dy.reshape(-1, dy.shape[-1]).sum(axis=0)


@mistake('linear_backward', 'dx is returned as (BN, d_in) rows: it has the shape of x',
         fix='dx.reshape(x.shape)')
def dx_flat(dy, x, W):
    return _linear(dy, x, W, dx=lambda dy2, x2, W: dy2 @ W.T)


# ------------------------------------------------------------------------------ relu_backward

@mistake("relu_backward", "the gradient passes where x >= 0; it passes where x > 0 only")
def passes_at_zero(dy, x):
    return dy * (x >= 0)


@mistake("relu_backward", "it returns the mask (x > 0) without multiplying by δ_y: the chain rule "
         "gives δ_y ⊙ 1[x > 0]")
def mask_only(dy, x):
    return (x > 0).astype(float)


@mistake("relu_backward", "δ_y is multiplied by ReLU(x) itself; the derivative of ReLU is 1 where "
         "x > 0 and 0 elsewhere")
def times_relu(dy, x):
    return dy * np.maximum(x, 0)


@mistake("relu_backward", "the mask is taken from dy (dy > 0); it comes from the forward input x")
def mask_from_dy(dy, x):
    return dy * (dy > 0)


@mistake("relu_backward", "negative inputs keep a slope of 0.01 (leaky ReLU); ReLU's gradient is 0 there")
def leaky(dy, x):
    return dy * np.where(x > 0, 1.0, 0.01)


# ------------------------------------------------------------------------------ gelu_backward

_K = math.sqrt(2 / math.pi)
_A = 0.044715


def _gelu_grad(dy, x, c=_K, a3=3 * _A, tanh_prime=lambda th: 1 - th * th, inner=True):
    """dy ⊙ GELU′(x) with pluggable pieces: u′ = c(1 + a3·x²) (1 without `inner`), and tanh′ as a
    function of tanh u."""
    th = np.tanh(_K * (x + _A * x ** 3))
    du = c * (1 + a3 * x * x) if inner else 1.0
    return dy * 0.5 * (1 + th + x * tanh_prime(th) * du)


@mistake("gelu_backward", "the GELU derivative misses the tanh′ term: d/dx ½x(1 + tanh u) = "
         "½(1 + tanh u) + ½x(1 - tanh²u)·u′ (product rule)")
def no_tanh_prime(dy, x):
    return dy * 0.5 * (1 + np.tanh(_K * (x + _A * x ** 3)))


@mistake("gelu_backward", "the GELU derivative keeps only the tanh′ term: by the product rule, "
         "d/dx ½x(1 + tanh u) also has the term ½(1 + tanh u)")
def no_first_product_term(dy, x):
    th = np.tanh(_K * (x + _A * x ** 3))
    return dy * 0.5 * x * (1 - th * th) * _K * (1 + 3 * _A * x * x)


@mistake("gelu_backward", "the chain rule stops at tanh: the term ½x(1 - tanh²u) must be multiplied "
         "by u′ = √(2/π)(1 + 3·0.044715·x²)")
def no_inner_derivative(dy, x):
    return _gelu_grad(dy, x, inner=False)


@mistake("gelu_backward", "u′ misses the factor 3 of the cube's derivative: u′ = √(2/π)(1 + 3·0.044715·x²)")
def cube_derivative(dy, x):
    return _gelu_grad(dy, x, a3=_A)


@mistake("gelu_backward", "u′ misses the factor √(2/π): u = √(2/π)(x + 0.044715x³), so "
         "u′ = √(2/π)(1 + 3·0.044715·x²)")
def inner_without_constant(dy, x):
    return _gelu_grad(dy, x, c=1.0)


@mistake("gelu_backward", "tanh′(u) is written 1 - tanh u; it is 1 - tanh²u")
def tanh_prime_not_squared(dy, x):
    return _gelu_grad(dy, x, tanh_prime=lambda th: 1 - th)


@mistake("gelu_backward", "it returns GELU′(x) without multiplying by δ_y (chain rule: δ_y ⊙ GELU′(x))")
def not_times_dy(dy, x):
    return _gelu_grad(np.ones_like(x), x)


@mistake("gelu_backward", "it returns δ_y ⊙ GELU(x), the forward value; the backward needs the "
         "derivative GELU′(x)")
def forward_value(dy, x):
    return dy * 0.5 * x * (1 + np.tanh(_K * (x + _A * x ** 3)))


@mistake('gelu_backward', 'tanh is computed with np.exp, which overflows for large |x| (inf/inf = nan)',
         fix='np.tanh')
def tanh_from_exp(dy, x):
    u = _K * (x + _A * x ** 3)
    th = (np.exp(2 * u) - 1) / (np.exp(2 * u) + 1)
    return dy * 0.5 * (1 + th + x * (1 - th * th) * _K * (1 + 3 * _A * x * x))


@mistake("gelu_backward", "this is the derivative of the exact GELU, x·Φ(x) with the erf; this lab "
         "uses the tanh approximation")
def exact_gelu(dy, x):
    erf = np.vectorize(math.erf)
    return dy * (0.5 * (1 + erf(x / math.sqrt(2))) + x * np.exp(-x * x / 2) / math.sqrt(2 * math.pi))


# ------------------------------------------------------------------------ layer_norm_backward

def _ln_grads(dy, x, gamma, eps=1e-5, mu_term=True, sigma_term=True, use_gamma=True, ddof=0,
              eps_outside=False, power=1, dgamma_x=False, sum_axes=None, dbeta_mean=False):
    """The layer-norm gradients with pluggable pieces, to build the mistakes from. dγ and dβ
    sum over `sum_axes` (default: every leading axis)."""
    xc = x - x.mean(axis=-1, keepdims=True)
    var = (xc * xc).sum(axis=-1, keepdims=True) / (x.shape[-1] - ddof)
    sigma = np.sqrt(var) + eps if eps_outside else np.sqrt(var + eps)
    xhat = xc / sigma
    g = dy * gamma if use_gamma else dy
    dx = g
    if mu_term:
        dx = dx - g.mean(axis=-1, keepdims=True)
    if sigma_term:
        dx = dx - xhat * (g * xhat).mean(axis=-1, keepdims=True)
    lead = tuple(range(x.ndim - 1)) if sum_axes is None else sum_axes
    dgamma = (dy * (x if dgamma_x else xhat)).sum(axis=lead)
    dbeta = dy.mean(axis=lead) if dbeta_mean else dy.sum(axis=lead)
    return dx / sigma ** power, dgamma, dbeta


@mistake("layer_norm_backward", "layer-norm backward without the two mean terms (the gradient "
         "through μ and σ): δ_x = (g - mean(g) - x̂·mean(g ⊙ x̂)) / σ, not g / σ")
def no_mean_terms(dy, x, gamma, eps=1e-5):
    return _ln_grads(dy, x, gamma, eps, mu_term=False, sigma_term=False)


@mistake("layer_norm_backward", "δ_x misses the term through σ: subtract x̂ ⊙ mean(g ⊙ x̂) as well as "
         "mean(g)")
def no_sigma_term(dy, x, gamma, eps=1e-5):
    return _ln_grads(dy, x, gamma, eps, sigma_term=False)


@mistake("layer_norm_backward", "δ_x misses the term through μ: subtract mean(g) as well as "
         "x̂ ⊙ mean(g ⊙ x̂)")
def no_mu_term(dy, x, gamma, eps=1e-5):
    return _ln_grads(dy, x, gamma, eps, mu_term=False)


@mistake("layer_norm_backward", "δ_x starts from δ_y instead of g = δ_y ⊙ γ: the scale γ is part of "
         "the forward pass")
def gamma_missing(dy, x, gamma, eps=1e-5):
    return _ln_grads(dy, x, gamma, eps, use_gamma=False)


@mistake("layer_norm_backward", "δ_x is divided by σ² (the variance plus eps) instead of σ")
def divided_by_variance(dy, x, gamma, eps=1e-5):
    return _ln_grads(dy, x, gamma, eps, power=2)


@mistake("layer_norm_backward", "δ_γ sums δ_y ⊙ x; it sums δ_y ⊙ x̂, the normalised input")
def dgamma_unnormalised(dy, x, gamma, eps=1e-5):
    return _ln_grads(dy, x, gamma, eps, dgamma_x=True)


@mistake("layer_norm_backward", "δ_β is the mean of δ_y over positions; it is the sum")
def dbeta_mean(dy, x, gamma, eps=1e-5):
    return _ln_grads(dy, x, gamma, eps, dbeta_mean=True)


@mistake("layer_norm_backward", "δ_γ and δ_β sum over axis 0 only: for (B, N, d) inputs they sum over "
         "every position, axes (0, 1), down to shape (d,)")
def sums_over_first_axis(dy, x, gamma, eps=1e-5):
    return _ln_grads(dy, x, gamma, eps, sum_axes=0)


@mistake("layer_norm_backward", "eps is added to the standard deviation; σ = √(var + eps)")
def eps_outside_sqrt(dy, x, gamma, eps=1e-5):
    return _ln_grads(dy, x, gamma, eps, eps_outside=True)


@mistake("layer_norm_backward", "the eps argument is ignored: a fixed 1e-5 is used whatever eps is")
def eps_fixed(dy, x, gamma, eps=1e-5):
    return _ln_grads(dy, x, gamma)


@mistake("layer_norm_backward", "eps is left out of σ: the forward pass normalised with "
         "σ = √(var + eps), so the backward pass uses the same σ (and x̂)")
def eps_left_out(dy, x, gamma, eps=1e-5):
    return _ln_grads(dy, x, gamma, 0.0)


@mistake("layer_norm_backward", "the variance divides by d - 1 (ddof=1); layer norm uses the biased "
         "variance, dividing by d")
def unbiased_variance(dy, x, gamma, eps=1e-5):
    return _ln_grads(dy, x, gamma, eps, ddof=1)


# ------------------------------------------------------------------------- attention_backward

def _softmax_grad(att, datt):
    return att * (datt - (att * datt).sum(axis=-1, keepdims=True))


def _attention_grads(dout, x, W_Q, W_K, W_V, W_O, n_heads, d_scale=None, backward_scale=1, masked=True,
                     softmax_grad=_softmax_grad, dk=lambda ds, q: ds.transpose(0, 1, 3, 2) @ q,
                     dv=lambda att, dh: att.transpose(0, 1, 3, 2) @ dh, dW_O=None, through_W_O=True,
                     merge=R.merge_heads, paths=(0, 1, 2), into_x=lambda W: W.T,
                     dW=lambda x2, d: x2.T @ d):
    """The attention gradients with pluggable pieces, to build the mistakes from. `d_scale` is
    the width whose square root scales the scores; `backward_scale` multiplies dS once more."""
    B, T, C = x.shape
    scale = 1 / math.sqrt(d_scale(C, n_heads) if d_scale else C // n_heads)
    q, k, v = (R.split_heads(R.matmul(x, W), n_heads) for W in (W_Q, W_K, W_V))
    scores = q @ k.transpose(0, 1, 3, 2) * scale
    att = R.softmax(scores + R.causal_mask(T, x.dtype) if masked else scores)
    concat, x2, dout2 = R.merge_heads(att @ v), _rows(x), _rows(dout)
    dheads = R.split_heads(R.matmul(dout, W_O.T if through_W_O else W_O), n_heads)
    dscores = softmax_grad(att, dheads @ v.transpose(0, 1, 3, 2)) * scale * backward_scale
    grads = [_rows(merge(d)) for d in (dscores @ k, dk(dscores, q), dv(att, dheads))]
    dx = sum(grads[i] @ into_x(W) for i, W in enumerate((W_Q, W_K, W_V)) if i in paths)
    dW_O = dW_O(concat, dout) if dW_O else _rows(concat).T @ dout2
    return (dx.reshape(x.shape), *(dW(x2, d) for d in grads), dW_O)


def _merge_without_transpose(d):
    B, H, T, d_k = d.shape
    return d.reshape(B, T, H * d_k)


@mistake("attention_backward", "the attention weights are recomputed without the causal mask: the "
         "backward must use the same masked softmax as the forward pass")
def no_mask(dout, x, W_Q, W_K, W_V, W_O, n_heads):
    return _attention_grads(dout, x, W_Q, W_K, W_V, W_O, n_heads, masked=False)


@mistake("attention_backward", "the scores are scaled by √d_model instead of √d_k, the width of one "
         "head")
def scale_by_d_model(dout, x, W_Q, W_K, W_V, W_O, n_heads):
    return _attention_grads(dout, x, W_Q, W_K, W_V, W_O, n_heads, d_scale=lambda C, h: C)


@mistake("attention_backward", "the backward misses the 1/√d_k of the scores: S = QKᵀ/√d_k, so "
         "δ_Q = δ_S·K/√d_k and δ_K = δ_Sᵀ·Q/√d_k")
def no_backward_scale(dout, x, W_Q, W_K, W_V, W_O, n_heads):
    return _attention_grads(dout, x, W_Q, W_K, W_V, W_O, n_heads,
                            backward_scale=math.sqrt(x.shape[-1] // n_heads))


@mistake("attention_backward", "the 1/√d_k is applied twice in the backward: once on δ_S is enough")
def scale_twice(dout, x, W_Q, W_K, W_V, W_O, n_heads):
    return _attention_grads(dout, x, W_Q, W_K, W_V, W_O, n_heads,
                            backward_scale=1 / math.sqrt(x.shape[-1] // n_heads))


@mistake("attention_backward", "the softmax backward uses only the diagonal of its Jacobian (α ⊙ δ_α): "
         "each weight depends on the whole row, δ_S = α ⊙ (δ_α - rowsum(α ⊙ δ_α))")
def softmax_diagonal(dout, x, W_Q, W_K, W_V, W_O, n_heads):
    return _attention_grads(dout, x, W_Q, W_K, W_V, W_O, n_heads, softmax_grad=lambda a, da: a * da)


@mistake("attention_backward", "the softmax backward uses the element-wise derivative α(1 - α): "
         "each weight depends on every score of its row, so the Jacobian has off-diagonal terms "
         "-α_ij α_ik", fix="dscores = att * (datt - (att * datt).sum(axis=-1, keepdims=True))")
def softmax_elementwise(dout, x, W_Q, W_K, W_V, W_O, n_heads):
    return _attention_grads(dout, x, W_Q, W_K, W_V, W_O, n_heads, softmax_grad=lambda a, da: a * (1 - a) * da)


@mistake('attention_backward', "the row sum in the softmax backward runs over the queries; it runs over each row's keys, rowsum(α ⊙ δ_α)",
         fix='(att * datt).sum(axis=-1, keepdims=True)')
def softmax_sum_over_queries(dout, x, W_Q, W_K, W_V, W_O, n_heads):
    return _attention_grads(dout, x, W_Q, W_K, W_V, W_O, n_heads,
                            softmax_grad=lambda a, da: a * (da - (a * da).sum(axis=-2, keepdims=True)))


@mistake("attention_backward", "δ_K = δ_S·Q misses the transpose: δ_K = δ_Sᵀ·Q/√d_k (row j of K gets the "
         "gradient of column j of the scores)")
def dk_without_transpose(dout, x, W_Q, W_K, W_V, W_O, n_heads):
    return _attention_grads(dout, x, W_Q, W_K, W_V, W_O, n_heads, dk=lambda ds, q: ds @ q)


@mistake("attention_backward", "δ_V = α·δ_head misses the transpose: δ_V = αᵀ·δ_head")
def dv_without_transpose(dout, x, W_Q, W_K, W_V, W_O, n_heads):
    return _attention_grads(dout, x, W_Q, W_K, W_V, W_O, n_heads, dv=lambda att, dh: att @ dh)


@mistake("attention_backward", "the gradient of the concatenated heads is δ_O·W_Oᵀ: the transpose of "
         "W_O is missing")
def through_W_O_untransposed(dout, x, W_Q, W_K, W_V, W_O, n_heads):
    return _attention_grads(dout, x, W_Q, W_K, W_V, W_O, n_heads, through_W_O=False)


@mistake("attention_backward", "W_O's gradient is concat(heads)ᵀ·δ_O, not δ_Oᵀ·concat(heads) (that is its transpose)")
def dW_O_transposed(dout, x, W_Q, W_K, W_V, W_O, n_heads):
    return _attention_grads(dout, x, W_Q, W_K, W_V, W_O, n_heads,
                            dW_O=lambda concat, d: _rows(d).T @ _rows(concat))


@mistake("attention_backward", "dW_Q, dW_K and dW_V are δ_Qᵀ·X instead of Xᵀ·δ_Q (and so on): their "
         "transposes")
def dW_transposed(dout, x, W_Q, W_K, W_V, W_O, n_heads):
    return _attention_grads(dout, x, W_Q, W_K, W_V, W_O, n_heads, dW=lambda x2, d: d.T @ x2)


@mistake("attention_backward", "dx misses some of the three paths: X feeds Q, K and V, so "
         "δ_X = δ_Q·W_Qᵀ + δ_K·W_Kᵀ + δ_V·W_Vᵀ")
def dx_through_v_only(dout, x, W_Q, W_K, W_V, W_O, n_heads):
    return _attention_grads(dout, x, W_Q, W_K, W_V, W_O, n_heads, paths=(2,))


@mistake("attention_backward", "dx misses some of the three paths: X feeds Q, K and V, so "
         "δ_X = δ_Q·W_Qᵀ + δ_K·W_Kᵀ + δ_V·W_Vᵀ")
def dx_through_q_only(dout, x, W_Q, W_K, W_V, W_O, n_heads):
    return _attention_grads(dout, x, W_Q, W_K, W_V, W_O, n_heads, paths=(0,))


@mistake("attention_backward", "dx misses some of the three paths: X feeds Q, K and V, so "
         "δ_X = δ_Q·W_Qᵀ + δ_K·W_Kᵀ + δ_V·W_Vᵀ")
def dx_without_v(dout, x, W_Q, W_K, W_V, W_O, n_heads):
    return _attention_grads(dout, x, W_Q, W_K, W_V, W_O, n_heads, paths=(0, 1))


@mistake("attention_backward", "dx misses some of the three paths: X feeds Q, K and V, so "
         "δ_X = δ_Q·W_Qᵀ + δ_K·W_Kᵀ + δ_V·W_Vᵀ")
def dx_without_k(dout, x, W_Q, W_K, W_V, W_O, n_heads):
    return _attention_grads(dout, x, W_Q, W_K, W_V, W_O, n_heads, paths=(0, 2))


@mistake("attention_backward", "δ_X = δ_Q·W_Q + ... misses the transposes: δ_X = δ_Q·W_Qᵀ + δ_K·W_Kᵀ + δ_V·W_Vᵀ")
def dx_weights_untransposed(dout, x, W_Q, W_K, W_V, W_O, n_heads):
    return _attention_grads(dout, x, W_Q, W_K, W_V, W_O, n_heads, into_x=lambda W: W)


@mistake("attention_backward", "the heads' gradients are merged with a plain reshape from (B, A, N, d_k): "
         "move the head axis next to d_k first (merge_heads transposes to (B, N, A, d_k))")
def merge_without_transpose(dout, x, W_Q, W_K, W_V, W_O, n_heads):
    return _attention_grads(dout, x, W_Q, W_K, W_V, W_O, n_heads, merge=_merge_without_transpose)


# ------------------------------------------------------------------------- embedding_backward

def _head_term(d_logits, h):
    return _rows(d_logits).T @ _rows(h)


@mistake('embedding_backward', 'dE[ids] += dx loses repeated tokens: with repeated indices only one addition survives, but a token that occurs k times collects k rows',
         fix='np.add.at(dE, ids, dx)')
def repeats_lost(d_x, d_logits, token_ids, h):
    dE = _head_term(d_logits, h)
    dE[token_ids.reshape(-1)] += _rows(d_x)
    return dE


@mistake('embedding_backward', "dE[ids] = dx overwrites the head's contribution and keeps one row per repeated token: the lookup's rows are added, every occurrence",
         fix='np.add.at(dE, ids, dx)')
def lookup_assigned(d_x, d_logits, token_ids, h):
    dE = _head_term(d_logits, h)
    dE[token_ids.reshape(-1)] = _rows(d_x)
    return dE


@mistake("embedding_backward", "only the head's share of the tied embedding gradient: E is also used by "
         "the lookup x = E[ids], whose gradient d_x adds to rows ids of dE")
def head_only(d_x, d_logits, token_ids, h):
    return _head_term(d_logits, h)


@mistake("embedding_backward", "only the lookup's share of the tied embedding gradient: E is also the "
         "output layer u = h Eᵀ, which adds δ_uᵀ·h")
def lookup_only(d_x, d_logits, token_ids, h):
    dE = np.zeros((d_logits.shape[-1], d_x.shape[-1]))
    np.add.at(dE, token_ids.reshape(-1), _rows(d_x))
    return dE


@mistake("embedding_backward", "the head's term is built from d_x instead of the hidden states h: "
         "u = h Eᵀ, so E's gradient from the head is δ_uᵀ·h", fix="dE = d_logits2.T @ h2 + (the lookup's rows)")
def head_from_d_x(d_x, d_logits, token_ids, h):
    return R.embedding_backward(d_x, d_logits, token_ids, d_x)


@mistake("embedding_backward", "the head's term is divided by the number of positions: it is the sum "
         "δ_uᵀ·h over positions (the 1/(BN) is already in d_logits)")
def head_mean(d_x, d_logits, token_ids, h):
    return R.embedding_backward(d_x, d_logits / token_ids.size, token_ids, h)


@mistake("embedding_backward", "the head's term is averaged over the sequences of the batch: it is "
         "the sum δ_uᵀ·h over every position of every sequence (the 1/(BN) is already in d_logits)")
def head_batch_mean(d_x, d_logits, token_ids, h):
    return R.embedding_backward(d_x, d_logits / len(token_ids), token_ids, h)


# ------------------------------------------------------------------------------ adamw_update

def _adamw(p, g, m, v, t, lr, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.0, correct_m=True,
           correct_v=True, l2=False, decay_lr=True, eps_inside=False, v_of=lambda g: g * g,
           step_from=None, sign=1):
    b1, b2 = betas
    if l2:
        g = g + weight_decay * p
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * v_of(g)
    m_hat = m / (1 - b1 ** (step_from(t) if step_from else t)) if correct_m else m
    v_hat = v / (1 - b2 ** (step_from(t) if step_from else t)) if correct_v else v
    step = m_hat / (np.sqrt(v_hat + eps) if eps_inside else np.sqrt(v_hat) + eps)
    decay = 0.0 if l2 else (lr if decay_lr else 1.0) * weight_decay * p
    return p - decay - sign * lr * step, m, v


@mistake("adamw_update", "bias correction missing: m̂ = m / (1 - β₁ᵗ) and v̂ = v / (1 - β₂ᵗ) undo the "
         "pull towards the zero initial moments")
def no_bias_correction(p, g, m, v, t, lr, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.0):
    return _adamw(p, g, m, v, t, lr, betas, eps, weight_decay, correct_m=False, correct_v=False)


@mistake("adamw_update", "only m is bias-corrected: v̂ = v / (1 - β₂ᵗ) as well")
def v_not_corrected(p, g, m, v, t, lr, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.0):
    return _adamw(p, g, m, v, t, lr, betas, eps, weight_decay, correct_v=False)


@mistake("adamw_update", "only v is bias-corrected: m̂ = m / (1 - β₁ᵗ) as well")
def m_not_corrected(p, g, m, v, t, lr, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.0):
    return _adamw(p, g, m, v, t, lr, betas, eps, weight_decay, correct_m=False)


@mistake("adamw_update", "the bias correction uses t + 1 (or t - 1): steps count from t = 1, so "
         "the first step divides by 1 - β")
def step_after(p, g, m, v, t, lr, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.0):
    return _adamw(p, g, m, v, t, lr, betas, eps, weight_decay, step_from=lambda t: t + 1)


@mistake("adamw_update", "the bias correction uses t + 1 (or t - 1): steps count from t = 1, so "
         "the first step divides by 1 - β")
def step_before(p, g, m, v, t, lr, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.0):
    return _adamw(p, g, m, v, t, lr, betas, eps, weight_decay, step_from=lambda t: t - 1)


@mistake("adamw_update", "L2 regularisation added to the gradient instead of decoupled decay: AdamW "
         "subtracts lr · weight_decay · θ from the weights directly, outside the Adam step")
def l2_in_gradient(p, g, m, v, t, lr, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.0):
    return _adamw(p, g, m, v, t, lr, betas, eps, weight_decay, l2=True)


@mistake("adamw_update", "the decay is weight_decay · θ without the learning rate: "
         "θ ← θ - η λ θ - η m̂/(√v̂ + ε)")
def decay_without_lr(p, g, m, v, t, lr, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.0):
    return _adamw(p, g, m, v, t, lr, betas, eps, weight_decay, decay_lr=False)


@mistake("adamw_update", "the weights are not decayed: weight_decay is ignored")
def decay_ignored(p, g, m, v, t, lr, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.0):
    return _adamw(p, g, m, v, t, lr, betas, eps)


@mistake("adamw_update", "the decay is applied after the Adam step, to the updated weights: "
         "decoupled decay shrinks the weights from before the step, θ - ηλθ - η m̂/(√v̂ + ε)")
def decay_after_step(p, g, m, v, t, lr, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.0):
    p_new, m_new, v_new = _adamw(p, g, m, v, t, lr, betas, eps)
    return p_new - lr * weight_decay * p_new, m_new, v_new


@mistake("adamw_update", "eps is added inside the square root; it is added to √v̂")
def eps_inside_sqrt(p, g, m, v, t, lr, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.0):
    return _adamw(p, g, m, v, t, lr, betas, eps, weight_decay, eps_inside=True)


@mistake("adamw_update", "v averages |g| (or g) instead of the squared gradient g²")
def v_without_square(p, g, m, v, t, lr, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.0):
    return _adamw(p, g, m, v, t, lr, betas, eps, weight_decay, v_of=np.abs)


@mistake("adamw_update", "the betas argument is ignored: the defaults (0.9, 0.99) are used whatever "
         "betas is")
def betas_fixed(p, g, m, v, t, lr, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.0):
    return _adamw(p, g, m, v, t, lr, eps=eps, weight_decay=weight_decay)


@mistake("adamw_update", "β₁ and β₂ are swapped: m uses β₁ = betas[0], v uses β₂ = betas[1]")
def betas_swapped(p, g, m, v, t, lr, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.0):
    return _adamw(p, g, m, v, t, lr, betas[::-1], eps, weight_decay)


@mistake("adamw_update", "the step goes up the gradient: θ ← θ - η m̂/(√v̂ + ε)")
def ascent(p, g, m, v, t, lr, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.0):
    return _adamw(p, g, m, v, t, lr, betas, eps, weight_decay, sign=-1)


@mistake("adamw_update", "it returns the old moments m and v: return the updated ones, the next step "
         "starts from them")
def old_moments(p, g, m, v, t, lr, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.0):
    return R.adamw_update(p, g, m, v, t, lr, betas, eps, weight_decay)[0], m, v


# --------------------------------------------------------------------------- next_token_probs

def _kept(probs, keep):
    """probs restricted to the indices `keep`, renormalised."""
    out = np.zeros_like(probs)
    out[keep] = probs[keep]
    return out / out.sum()


def _sorted_cut(cut):
    """A top-p rule from `cut(totals, sorted_probs, top_p)`, a mask over the tokens sorted by
    probability (most likely first)."""
    def nucleus(probs, top_p):
        order = np.argsort(-probs, kind="stable")
        return order[cut(np.cumsum(probs[order]), probs[order], top_p)]
    return nucleus


def _top_k(probs, k):
    return np.argsort(-probs, kind="stable")[:k]


NUCLEUS_SHORT = ("top-p stops before the token whose running total reaches or passes p: the smallest "
                 "set whose total is >= p includes that token")


_inclusive = _sorted_cut(lambda total, _, q: np.arange(len(total)) <= np.searchsorted(total, q))


def _probs(logits, temperature=1.0, top_k=None, top_p=None, top_k_rule=_top_k, nucleus=_inclusive,
           after_top_k=True):
    """next_token_probs with pluggable top-k and top-p rules, each giving the indices to keep;
    top-p measures the renormalised top-k distribution (`after_top_k`) or the one before it."""
    probs = _softmax(np.asarray(logits, dtype=np.float64) / temperature)
    keep = np.ones(len(probs), dtype=bool)
    if top_k is not None:
        keep[:] = False
        keep[top_k_rule(probs, top_k)] = True
    if top_p is not None:
        chosen = np.zeros(len(probs), dtype=bool)
        chosen[nucleus(_kept(probs, keep) if after_top_k else probs, top_p)] = True
        keep &= chosen
    return _kept(probs, keep)


@mistake("next_token_probs", "top-p adds up the probabilities from before top-k: in the sequence "
         "temperature, then top-k, then top-p, the running total is measured on the k kept tokens "
         "after they are renormalised",
         fix="renormalise the top-k probabilities (divide by their sum) before the cumulative sum of top-p")
def top_p_before_top_k(logits, temperature=1.0, top_k=None, top_p=None):
    return _probs(logits, temperature, top_k, top_p, after_top_k=False)


@mistake("next_token_probs", NUCLEUS_SHORT,
         fix="keep tokens 0..j where j is the first index with cumsum >= top_p "
             "(np.searchsorted(cumsum, top_p) + 1 tokens)")
def nucleus_exclusive(logits, temperature=1.0, top_k=None, top_p=None):
    return _probs(logits, temperature, top_k, top_p,
                  nucleus=_sorted_cut(lambda total, _, q: (total < q) | (np.arange(len(total)) == 0)))


@mistake("next_token_probs", NUCLEUS_SHORT,
         fix="keep tokens 0..j where j is the first index with cumsum >= top_p "
             "(np.searchsorted(cumsum, top_p) + 1 tokens)")
def nucleus_short_at_most_p(logits, temperature=1.0, top_k=None, top_p=None):
    return _probs(logits, temperature, top_k, top_p,
                  nucleus=_sorted_cut(lambda total, _, q: (total <= q) | (np.arange(len(total)) == 0)))


@mistake("next_token_probs", "when top_p is below the largest probability no token is kept: the most "
         "likely token is always kept")
def nucleus_can_be_empty(logits, temperature=1.0, top_k=None, top_p=None):
    return _probs(logits, temperature, top_k, top_p,
                  nucleus=_sorted_cut(lambda total, sorted_p, q: total - sorted_p < q))


@mistake("next_token_probs", "the cumulative sum runs over the tokens in vocabulary order: sort them "
         "by probability, most likely first, before accumulating")
def nucleus_unsorted(logits, temperature=1.0, top_k=None, top_p=None):
    def nucleus(probs, top_p):
        return np.arange(len(probs))[: int(np.searchsorted(np.cumsum(probs), top_p)) + 1]
    return _probs(logits, temperature, top_k, top_p, nucleus=nucleus)


@mistake("next_token_probs", "the nucleus is chosen before the temperature is applied: temperature "
         "comes first, then top-k, then top-p")
def nucleus_before_temperature(logits, temperature=1.0, top_k=None, top_p=None):
    base = R.next_token_probs(logits, top_k=top_k, top_p=top_p)
    return _kept(_softmax(np.asarray(logits, dtype=np.float64) / temperature), base > 0)


@mistake("next_token_probs", "top-k and top-p exclude each other (elif): with both given, apply both")
def top_k_or_top_p(logits, temperature=1.0, top_k=None, top_p=None):
    return R.next_token_probs(logits, temperature, top_k, None if top_k is not None else top_p)


@mistake('next_token_probs', 'the k tokens kept are the k least likely: np.argsort (like np.argpartition) puts the smallest first',
         fix='np.argsort(-probs)[:k]')
def top_k_least_likely(logits, temperature=1.0, top_k=None, top_p=None):
    return _probs(logits, temperature, top_k, top_p, top_k_rule=lambda p, k: np.argsort(p)[:k])


@mistake("next_token_probs", "top-k keeps the tokens strictly above the k-th largest probability, so "
         "the k-th token (and any tie with it) is dropped: keep probs >= the k-th largest")
def top_k_strict(logits, temperature=1.0, top_k=None, top_p=None):
    return _probs(logits, temperature, top_k, top_p,
                  top_k_rule=lambda p, k: np.flatnonzero(p > np.sort(p)[-k]))


@mistake("next_token_probs", "the tokens top-p keeps are not renormalised after the cut (those of top-k "
         "are): divide them by their sum again so that they sum to 1")
def top_p_not_renormalised(logits, temperature=1.0, top_k=None, top_p=None):
    before_top_p = R.next_token_probs(logits, temperature, top_k)
    return np.where(R.next_token_probs(logits, temperature, top_k, top_p) > 0, before_top_p, 0.0)


@mistake("next_token_probs", "the kept probabilities are not renormalised: divide them by their sum "
         "so that they sum to 1")
def not_renormalised(logits, temperature=1.0, top_k=None, top_p=None):
    probs = _softmax(np.asarray(logits, dtype=np.float64) / temperature)
    return np.where(R.next_token_probs(logits, temperature, top_k, top_p) > 0, probs, 0.0)


@mistake("next_token_probs", "the logits are multiplied by the temperature; they are divided by it "
         "(τ < 1 sharpens the distribution)")
def temperature_multiplies(logits, temperature=1.0, top_k=None, top_p=None):
    return R.next_token_probs(np.asarray(logits, dtype=np.float64) * temperature, 1.0, top_k, top_p)


@mistake("next_token_probs", "the temperature has no effect: it divides the logits before the softmax "
         "(dividing the probabilities after it changes nothing once they are renormalised)")
def temperature_ignored(logits, temperature=1.0, top_k=None, top_p=None):
    return R.next_token_probs(logits, 1.0, top_k, top_p)


@mistake("next_token_probs", "np.exp overflows for large logits or a small temperature: subtract the "
         "maximum of u/τ before exponentiating")
def unstable_softmax_probs(logits, temperature=1.0, top_k=None, top_p=None):
    e = np.exp(np.asarray(logits, dtype=np.float64) / temperature)
    return _kept(e / e.sum(), R.next_token_probs(logits, temperature, top_k, top_p) > 0)


# ------------------------------------------------------------------------------- sample_token

def _draw(probs, rng):
    return int(rng.choice(len(probs), p=probs))


@mistake("sample_token", "greedy=True is ignored: greedy decoding returns the argmax without drawing")
def greedy_ignored(logits, rng, temperature=1.0, top_k=None, top_p=None, greedy=False):
    return _draw(R.next_token_probs(logits, temperature, top_k, top_p), rng)


@mistake('sample_token', 'greedy returns the largest probability (or logit) instead of its index, the token id',
         fix='int(np.argmax(logits))')
def greedy_value(logits, rng, temperature=1.0, top_k=None, top_p=None, greedy=False):
    if greedy:
        return float(np.max(logits))
    return _draw(R.next_token_probs(logits, temperature, top_k, top_p), rng)


@mistake("sample_token", "temperature, top_k and top_p are not passed on to next_token_probs: the draw "
         "comes from the plain softmax")
def settings_ignored(logits, rng, temperature=1.0, top_k=None, top_p=None, greedy=False):
    if greedy:
        return int(np.argmax(logits))
    return _draw(R.next_token_probs(logits), rng)


@mistake("sample_token", "top_k and top_p are not applied (nor passed on to next_token_probs): the draw "
         "comes from the softmax of logits / temperature, so tokens they drop can be drawn")
def filters_ignored(logits, rng, temperature=1.0, top_k=None, top_p=None, greedy=False):
    if greedy:
        return int(np.argmax(logits))
    return _draw(R.next_token_probs(logits, temperature), rng)


@mistake("sample_token", "rng.choice draws from the logits array itself, so it returns a logit value, "
         "not a token id: draw an index", fix="rng.choice(len(probs), p=probs)")
def logit_drawn(logits, rng, temperature=1.0, top_k=None, top_p=None, greedy=False):
    if greedy:
        return int(np.argmax(logits))
    return rng.choice(np.asarray(logits), p=R.next_token_probs(logits, temperature, top_k, top_p))


@mistake("sample_token", "the temperature is not passed on to next_token_probs")
def temperature_dropped(logits, rng, temperature=1.0, top_k=None, top_p=None, greedy=False):
    if greedy:
        return int(np.argmax(logits))
    return _draw(R.next_token_probs(logits, top_k=top_k, top_p=top_p), rng)


@mistake('sample_token', 'the kept tokens are drawn with equal chances: each must be drawn with its probability',
         fix='rng.choice(len(probs), p=probs)')
def uniform_over_kept(logits, rng, temperature=1.0, top_k=None, top_p=None, greedy=False):
    if greedy:
        return int(np.argmax(logits))
    return int(rng.choice(np.flatnonzero(R.next_token_probs(logits, temperature, top_k, top_p))))


@mistake("sample_token", "it returns the rank of the chosen token in the sorted order (0 for the "
         "most likely), not its token id", fix="draw from probs in vocabulary order: rng.choice(len(probs), p=probs)")
def rank_not_id(logits, rng, temperature=1.0, top_k=None, top_p=None, greedy=False):
    if greedy:
        return int(np.argmax(logits))
    probs = R.next_token_probs(logits, temperature, top_k, top_p)
    return int(rng.choice(len(probs), p=np.sort(probs)[::-1]))


@mistake("sample_token", "it returns the rank of the chosen token in the sorted order (0 for the "
         "most likely), not its token id", fix="draw from probs in vocabulary order: rng.choice(len(probs), p=probs)")
def rank_not_id_greedy_too(logits, rng, temperature=1.0, top_k=None, top_p=None, greedy=False):
    return 0 if greedy else rank_not_id(logits, rng, temperature, top_k, top_p)


@mistake('sample_token', 'it returns an array of one token; sample_token returns one int',
         fix='int(rng.choice(len(probs), p=probs))')
def array_of_one(logits, rng, temperature=1.0, top_k=None, top_p=None, greedy=False):
    if greedy:
        return int(np.argmax(logits))
    probs = R.next_token_probs(logits, temperature, top_k, top_p)
    return rng.choice(len(probs), size=1, p=probs)


# -------------------------------------------------------------------------- attention_entropy

def _row_entropy(weights, log=np.log2):
    safe = np.where(weights > 0, weights, 1.0)
    return -(weights * log(safe)).sum(axis=-1)


@mistake('attention_entropy', 'the entropy is in nats (natural log); it is in bits',
         fix='np.log2')
def in_nats(weights):
    return _row_entropy(weights, np.log).mean(axis=(0, 2))


@mistake('attention_entropy', 'exact zeros give 0 · log 0 = nan: 0 log 0 counts as 0',
         fix='take the log only where a > 0, e.g. np.where(a > 0, a * np.log2(np.where(a > 0, a, 1.0)), 0.0)')
def nan_on_zeros(weights):
    return -(weights * np.log2(weights)).sum(axis=-1).mean(axis=(0, 2))


@mistake("attention_entropy", "the row entropies are summed over the query positions; average them")
def summed_over_queries(weights):
    return _row_entropy(weights).sum(axis=2).mean(axis=0)


@mistake("attention_entropy", "the entropy of a row is a sum over its keys, -Σ_j α_ij log2 α_ij, "
         "not a mean")
def mean_over_keys(weights):
    return (_row_entropy(weights) / weights.shape[-1]).mean(axis=(0, 2))


@mistake("attention_entropy", "the sign is missing: the entropy -Σ_j α_ij log2 α_ij is never negative")
def sign_missing(weights):
    return -R.attention_entropy(weights)


@mistake("attention_entropy", "it returns one entropy per query (or per sequence): average over the "
         "sequences B and the query positions N, one value per head")
def not_averaged(weights):
    return _row_entropy(weights).mean(axis=0)


@mistake("attention_entropy", "it averages over the sequences and the heads (axes 0 and 1), giving one "
         "value per query position: average over the sequences B and the query positions N (axes 0 "
         "and 2), one value per head", fix="mean(axis=(0, 2))")
def averaged_over_heads(weights):
    return _row_entropy(weights).mean(axis=(0, 1))


# Mistakes whose sign is NaN or inf where the reference has numbers (overflow, log 0, 0/0): only
# for these is a non-finite result evidence (checks.explains, verdict.shows)
suite.nonfinite("cross_entropy", "log_of_softmax", "unstable", "unstable_probabilities", "global_max")
suite.nonfinite("cross_entropy_backward", "unstable_softmax", "global_max_softmax")
suite.nonfinite("gelu_backward", "tanh_from_exp")
suite.nonfinite("next_token_probs", "nucleus_can_be_empty", "unstable_softmax_probs")
suite.nonfinite("attention_entropy", "nan_on_zeros")


# ------------------------------------------------------------ more ideas, each in every variant
# (issue 32: mistakes derived by the mutation operators of tests/mutations.py that students make:
# another axis, a term left out, a flipped sign, a mean for a sum, float32 arithmetic)

def _in_float32(function):
    """`function` on its float arguments rounded to float32 (a float32 computation)."""
    def wrong(*args, **kwargs):
        cast = [np.asarray(a, dtype=np.float32) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a
                for a in args]
        return function(*cast, **kwargs)
    return wrong


_FLOAT32 = ("it computes in float32 (an array made with dtype=np.float32, or astype(np.float32)), which "
            "keeps about 7 significant digits; keep the inputs' float64")
for _part in ("cross_entropy", "cross_entropy_backward", "linear_backward", "gelu_backward",
              "layer_norm_backward", "attention_entropy"):
    _wrong = _in_float32(getattr(R, _part))
    _wrong.__name__ = "computed_in_float32"
    mistake(_part, _FLOAT32, fix="leave out the float32 conversion")(_wrong)
    suite.rounding(_part, "computed_in_float32")


def _ce_from(log_probs_of):
    def wrong(logits, targets):
        return float(-_picked(log_probs_of(logits), targets).mean())
    return wrong


_CE_IDEAS = {
    "normaliser_missing": ("the log of the normaliser is missing: log p = u - log Σ exp(u), so the loss is "
                           "not just minus the target's logit", [
                               lambda u: u - u.max(axis=-1, keepdims=True), lambda u: u]),
    "normaliser_added": ("the log-sum-exp is added instead of subtracted: log p = u - m - log Σ exp(u - m)", [
        lambda u: (u - u.max(axis=-1, keepdims=True)) + np.log(np.exp(u - u.max(axis=-1, keepdims=True)).sum(axis=-1, keepdims=True))]),
    "mean_in_normaliser": ("the normaliser is a mean of the exponentials instead of their sum: "
                           "log p = u - log Σ_j exp(u_j)", [
                               lambda u: (u - u.max(axis=-1, keepdims=True)) - np.log(np.exp(u - u.max(axis=-1, keepdims=True)).mean(axis=-1, keepdims=True))]),
    "max_over_other_axis": ("the maximum is taken over another axis than the vocabulary: log-sum-exp is "
                            "unchanged only by one constant per row, so the maximum runs over the last axis", [
                                (lambda a: lambda u: (u - u.max(axis=a, keepdims=True)) - np.log(np.exp(u - u.max(axis=a, keepdims=True)).sum(axis=-1, keepdims=True)))(a)
                                for a in (0, 1, -2)]),
    "sum_over_other_axis": ("the exponentials are summed over another axis than the vocabulary: each "
                            "position's normaliser sums over its own V logits, the last axis", [
                                (lambda a: lambda u: (u - u.max(axis=-1, keepdims=True)) - np.log(np.exp(u - u.max(axis=-1, keepdims=True)).sum(axis=a, keepdims=True)))(a)
                                for a in (0, 1, -2)]),
}
for _key, (_message, _variants) in _CE_IDEAS.items():
    for _i, _lp in enumerate(_variants):
        _wrong = _ce_from(_lp)
        _wrong.__name__ = f"{_key}_{_i}" if len(_variants) > 1 else _key
        mistake("cross_entropy", _message)(_wrong)


def _ceb(probs_of, sign=-1.0):
    def wrong(logits, targets):
        grad = probs_of(logits).copy()
        np.put_along_axis(grad, targets[..., None], _picked(grad, targets)[..., None] + sign, -1)
        return grad / targets.size
    return wrong


@mistake("cross_entropy_backward", "1 is added at the target instead of subtracted: the gradient is "
         "(softmax(u) - onehot(target)) / (BN)")
def onehot_added(logits, targets):
    return _ceb(_softmax, +1.0)(logits, targets)


for _a in (0, 1, -2):
    _wrong = _ceb((lambda a: lambda u: _softmax(u, a))(_a))
    _wrong.__name__ = f"softmax_over_axis_{_a}".replace("-", "m")
    mistake("cross_entropy_backward", "the softmax normalises over another axis than the vocabulary: each "
            "position's probabilities sum to 1 over its V logits, the last axis")(_wrong)


@mistake("gelu_backward", "tanh′ is taken as 1 + tanh²: the derivative of tanh u is 1 - tanh²u")
def tanh_prime_plus(dy, x):
    return _gelu_grad(dy, x, tanh_prime=lambda th: 1 + th * th)


@mistake("gelu_backward", "the cubic term is missing from the tanh argument: u = √(2/π)(x + 0.044715x³)")
def u_without_cube(dy, x):
    th = np.tanh(_K * x)
    return dy * 0.5 * (1 + th + x * (1 - th * th) * _K * (1 + 3 * _A * x * x))


@mistake("gelu_backward", "the cubic term is missing from the tanh argument: u = √(2/π)(x + 0.044715x³)")
def u_and_derivative_without_cube(dy, x):
    th = np.tanh(_K * x)
    return dy * 0.5 * (1 + th + x * (1 - th * th) * _K)


@mistake("gelu_backward", "the 1 of ½(1 + tanh u) is missing: GELU′(x) = ½(1 + tanh u) + ½x(1 - tanh²u)u′")
def one_missing(dy, x):
    th = np.tanh(_K * (x + _A * x ** 3))
    return dy * 0.5 * (th + x * (1 - th * th) * _K * (1 + 3 * _A * x * x))


for _a in (0, -2):
    def _wrong(dy, x, gamma, eps=1e-5, _a=_a):
        xc = x - x.mean(axis=_a, keepdims=True)
        var = (xc * xc).mean(axis=_a, keepdims=True)
        xhat = xc / np.sqrt(var + eps)
        g = dy * gamma
        dx = (g - g.mean(axis=_a, keepdims=True) - xhat * (g * xhat).mean(axis=_a, keepdims=True)) / np.sqrt(var + eps)
        lead = tuple(range(x.ndim - 1))
        return dx, (dy * xhat).sum(axis=lead), dy.sum(axis=lead)
    _wrong.__name__ = f"statistics_over_axis_{_a}".replace("-", "m")
    mistake("layer_norm_backward", "the statistics (mean, variance and the mean terms) are taken over another "
            "axis than the features: layer norm normalises each vector over its last axis")(_wrong)


@mistake("layer_norm_backward", "dgamma and dbeta sum over the features instead of over the positions: "
         "they have one entry per feature, summed over every leading axis")
def dparams_over_features(dy, x, gamma, eps=1e-5):
    dx, _, _ = R.layer_norm_backward(dy, x, gamma, eps)
    xhat = (x - x.mean(axis=-1, keepdims=True)) / np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    return dx, (dy * xhat).reshape(-1, x.shape[-1]).sum(axis=-1), dy.reshape(-1, x.shape[-1]).sum(axis=-1)


@mistake("layer_norm_backward", "dx is not divided by the standard deviation: dx = (g - mean(g) - x̂ "
         "mean(g x̂)) / sqrt(var + eps)")
def not_divided_by_sigma(dy, x, gamma, eps=1e-5):
    return _ln_grads(dy, x, gamma, eps, power=0)


@mistake("adamw_update", "the first moment drops its (1 - β₁) factor: m = β₁m + (1 - β₁)g")
def m_without_one_minus(p, g, m, v, t, lr, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.0):
    b1, b2 = betas
    return _adamw_custom(p, g, m, v, t, lr, betas, eps, weight_decay, m_new=lambda m, g: b1 * m + g)


@mistake("adamw_update", "the second moment drops its (1 - β₂) factor: v = β₂v + (1 - β₂)g²")
def v_without_one_minus(p, g, m, v, t, lr, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.0):
    b1, b2 = betas
    return _adamw_custom(p, g, m, v, t, lr, betas, eps, weight_decay, v_new=lambda v, g: b2 * v + g * g)


@mistake("adamw_update", "the moments forget their history: m = β₁m + (1 - β₁)g and v = β₂v + (1 - β₂)g² "
         "keep β times the old moment")
def history_forgotten(p, g, m, v, t, lr, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.0):
    b1, b2 = betas
    return _adamw_custom(p, g, m, v, t, lr, betas, eps, weight_decay, m_new=lambda m, g: (1 - b1) * g,
                         v_new=lambda v, g: (1 - b2) * g * g)


@mistake("adamw_update", "the moments forget their history: m = β₁m + (1 - β₁)g and v = β₂v + (1 - β₂)g² "
         "keep β times the old moment")
def m_history_forgotten(p, g, m, v, t, lr, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.0):
    b1, b2 = betas
    return _adamw_custom(p, g, m, v, t, lr, betas, eps, weight_decay, m_new=lambda m, g: (1 - b1) * g)


@mistake("adamw_update", "the moments forget their history: m = β₁m + (1 - β₁)g and v = β₂v + (1 - β₂)g² "
         "keep β times the old moment")
def v_history_forgotten(p, g, m, v, t, lr, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.0):
    b1, b2 = betas
    return _adamw_custom(p, g, m, v, t, lr, betas, eps, weight_decay, v_new=lambda v, g: (1 - b2) * g * g)


@mistake("adamw_update", "the weight decay is added: decoupled decay shrinks the weights, p ← p - lr·λ·p")
def decay_added(p, g, m, v, t, lr, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.0):
    new, m2, v2 = R.adamw_update(p, g, m, v, t, lr, betas, eps, weight_decay)
    return new + 2 * lr * weight_decay * p, m2, v2


def _adamw_custom(p, g, m, v, t, lr, betas, eps, weight_decay, m_new=None, v_new=None):
    b1, b2 = betas
    m = m_new(m, g) if m_new else b1 * m + (1 - b1) * g
    v = v_new(v, g) if v_new else b2 * v + (1 - b2) * g * g
    m_hat, v_hat = m / (1 - b1 ** t), v / (1 - b2 ** t)
    return p - lr * weight_decay * p - lr * m_hat / (np.sqrt(v_hat) + eps), m, v


for _a in (0, 1):
    def _wrong(weights, _a=_a):
        safe = np.where(weights > 0, weights, 1.0)
        return -(weights * np.log2(safe)).sum(axis=_a).mean(axis=(0, 2))
    _wrong.__name__ = f"summed_over_axis_{_a}"
    mistake("attention_entropy", "the entropy sums over another axis than the keys: each row's entropy "
            "sums -α log2 α over its keys, the last axis")(_wrong)


@mistake("attention_entropy", "the entropies are summed over the sequences and the query positions: "
         "average them (one mean per head)")
def summed_over_batch_and_queries(weights):
    safe = np.where(weights > 0, weights, 1.0)
    return -(weights * np.log2(safe)).sum(axis=-1).sum(axis=(0, 2))


_UNIFORM = ("the entropy is divided by that of a uniform distribution (log2 of the number of positions): "
            "the function returns the entropy itself, in bits, averaged over B and N")


@mistake("attention_entropy", _UNIFORM, fix="-(w * log2 w).sum(axis=-1).mean(axis=(0, 2)), with no division")
def normalised_by_causal_uniform(weights):
    safe = np.where(weights > 0, weights, 1.0)
    rows = -(weights * np.log2(safe)).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (rows / np.log2(np.arange(1, weights.shape[-1] + 1))).mean(axis=(0, 2))


@mistake("attention_entropy", _UNIFORM, fix="-(w * log2 w).sum(axis=-1).mean(axis=(0, 2)), with no division")
def normalised_by_uniform(weights):
    safe = np.where(weights > 0, weights, 1.0)
    rows = -(weights * np.log2(safe)).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (rows / np.log2(weights.shape[-1])).mean(axis=(0, 2))


# dividing row 0's entropy by log2(1) = 0 is this idea's own NaN (told from 0 log 0 by weights without zeros)
suite.nonfinite("attention_entropy", "normalised_by_causal_uniform")


# A trait of many top-p implementations, alone or with any other mistake of the part:
# np.argmax(cumsum >= top_p) is 0 when the running total never reaches top_p (top_p = 1 and a total
# rounded a hair below 1), so only the most likely token is kept
_NEVER_REACHED = ("when the running total never reaches top_p (top_p = 1, with a total rounded a hair "
                  "below 1), np.argmax of the all-False test is 0, so only the most likely token is kept: "
                  "keep every token then (check whether any total reaches top_p)")
_NEVER_REACHED_FIX = ("when no running total reaches top_p, keep every sorted token; otherwise keep up to the "
                      "first total that reaches it (np.argmax of the comparison, plus one)")


def _never_reached(function):
    def wrong(logits, temperature=1.0, top_k=None, top_p=None):
        out = function(logits, temperature, top_k, top_p)
        if top_p is None:
            return out
        before = np.asarray(function(logits, temperature, top_k, None), dtype=float)
        if np.cumsum(np.sort(before)[::-1])[-1] < top_p:
            one = np.zeros_like(before)
            one[int(np.argmax(before))] = 1.0
            return one
        return out
    return wrong


for _m in [m for m in suite.parts["next_token_probs"].mistakes if m.impl]:
    _wrong = _never_reached(_m.impl)
    _wrong.__name__ = f"{_m.key}_and_never_reached"
    mistake("next_token_probs", f"{_m.message}; also, {_NEVER_REACHED}", fix=_m.fix or _NEVER_REACHED_FIX)(_wrong)
_wrong = _never_reached(R.next_token_probs)
_wrong.__name__ = "never_reached"
mistake("next_token_probs", _NEVER_REACHED, fix=_NEVER_REACHED_FIX)(_wrong)


@mistake("attention_backward", "the scores are divided by d_k instead of √d_k, in the recomputed forward "
         "pass and in the backward one (eq. 8.33)")
def scale_by_d_k(dout, x, W_Q, W_K, W_V, W_O, n_heads):
    return _attention_grads(dout, x, W_Q, W_K, W_V, W_O, n_heads, d_scale=lambda C, h: (C // h) ** 2)


@mistake("attention_backward", "the scores are multiplied by √d_k instead of divided by it (eq. 8.33)")
def scale_inverted(dout, x, W_Q, W_K, W_V, W_O, n_heads):
    return _attention_grads(dout, x, W_Q, W_K, W_V, W_O, n_heads, d_scale=lambda C, h: 1 / (C // h))


@mistake("attention_backward", "the softmax backward adds the row sum instead of subtracting it: "
         "dS = A ⊙ (dA - Σ_j A_ij dA_ij)")
def softmax_grad_plus(dout, x, W_Q, W_K, W_V, W_O, n_heads):
    return _attention_grads(dout, x, W_Q, W_K, W_V, W_O, n_heads,
                            softmax_grad=lambda a, d: a * (d + (a * d).sum(axis=-1, keepdims=True)))


@mistake("attention_backward", "the softmax backward subtracts the row mean instead of the row sum: "
         "dS = A ⊙ (dA - Σ_j A_ij dA_ij)")
def softmax_grad_mean(dout, x, W_Q, W_K, W_V, W_O, n_heads):
    return _attention_grads(dout, x, W_Q, W_K, W_V, W_O, n_heads,
                            softmax_grad=lambda a, d: a * (d - (a * d).mean(axis=-1, keepdims=True)))
