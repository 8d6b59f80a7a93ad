"""Known wrong versions of each Lab 05 part, with the words that explain them to a student.

When a check fails, each mistake of the part runs on the check's own inputs; a mistake that
reproduces every result the student returned is named, unless another that says something else
does too (then neither is: the inputs cannot tell them apart). Composite parts use the reference for everything else, exactly as the
student's code does during grading.
"""
import copy

import numpy as np

from . import reference as R
from .suite import suite

mistake = suite.mistake


def _mask(n, k=1, value=-np.inf):
    return np.triu(np.full((n, n), value), k=k)


def _attend(Q, K, V, scale, mask=None, axis=-1):
    scores = Q @ K.T * scale
    if mask is not None:
        scores = scores + mask
    weights = np.exp(scores - scores.max(axis=axis, keepdims=True))
    weights = weights / weights.sum(axis=axis, keepdims=True)
    return weights @ V, weights


# ------------------------------------------------------------------------------------ softmax

@mistake("softmax", "no maximum is subtracted before np.exp, so large logits overflow to inf "
         "and the result is nan; subtract each row's maximum first (softmax is shift-invariant)")
def unstable(z):
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


@mistake("softmax", "the row maxima or sums (or both) are reduced without keeping their axis, so "
         "they broadcast against the columns instead of the rows: non-square input raises a "
         "broadcast error and square input is shifted or divided by the wrong row's value",
         fix="np.max(z, axis=-1, keepdims=True) and e.sum(axis=-1, keepdims=True)")
def keepdims_forgotten_softmax(z):
    e = np.exp(z - z.max(axis=-1))
    return e / e.sum(axis=-1)


@mistake('softmax', "the maximum of the whole array is subtracted instead of each row's maximum, so rows far below it underflow",
         fix='np.max(z, axis=-1, keepdims=True)')
def global_max(z):
    e = np.exp(z - z.max())
    return e / e.sum(axis=-1, keepdims=True)


@mistake("softmax", "the minimum is subtracted instead of the maximum, which still overflows")
def min_shift(z):
    e = np.exp(z - z.min(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@mistake("softmax", "the mean is subtracted instead of the maximum: a row whose largest logit is "
         "more than about 709 above its mean still overflows; subtract each row's maximum")
def mean_shift(z):
    e = np.exp(z - z.mean(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@mistake("softmax", "it normalises over axis 0 (down the columns) instead of the last axis")
def axis0(z):
    e = np.exp(z - z.max(axis=0, keepdims=True))
    return e / e.sum(axis=0, keepdims=True)


@mistake('softmax', 'it normalises over axis 1, which is the last axis only for 2-D input: a vector or a (heads, N, N) stack is normalised along the wrong axis',
         fix='axis=-1')
def axis1(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@mistake("softmax", "it divides by the sum of the whole array instead of each row's sum")
def global_sum(z):
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum()


@mistake("softmax", "it never divides by the sum, so the rows do not sum to 1")
def unnormalised(z):
    return np.exp(z - z.max(axis=-1, keepdims=True))


@mistake("softmax", "it returns log-probabilities (log-softmax) instead of probabilities")
def log_softmax(z):
    shifted = z - z.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


@mistake('softmax', 'it normalises each z[i] as a whole (a loop over the first axis), which is right only for 2-D input: a vector becomes all ones and each matrix of a 3-D stack is normalised as one block; softmax normalises along the last axis only',
         fix='work on the whole array with axis=-1 and keepdims=True')
def first_axis_loop(z):
    out = np.empty(np.shape(z))
    for i, block in enumerate(z):
        e = np.exp(block - np.max(block))
        out[i] = e / e.sum()
    return out


@mistake("softmax", "it computes in float32 (astype(np.float32)), which keeps about 7 significant "
         "digits: logits near 1000 lose their differences; keep the input's precision")
def single_precision(z):
    return R.softmax(np.asarray(z, dtype=np.float32))


@mistake("softmax", "only the numerator is shifted by the row maximum: the denominator sums the "
         "unshifted exponentials, so every row is scaled by exp(-max) (and overflows for large "
         "logits); shift both, or neither")
def numerator_shifted_only(z):
    return np.exp(z - z.max(axis=-1, keepdims=True)) / np.exp(z).sum(axis=-1, keepdims=True)


@mistake("softmax", "the maximum is taken over another axis than the sum: softmax is unchanged only "
         "by subtracting one constant per row, so the maximum must run over the last axis too")
def max_over_other_axis(z):
    e = np.exp(z - z.max(axis=0, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


for _axis in (1, -2):
    def _max_elsewhere(z, _axis=_axis):
        e = np.exp(z - z.max(axis=_axis, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
    _max_elsewhere.__name__ = f"max_over_axis_{_axis}".replace("-", "m")
    mistake("softmax", "the maximum is taken over another axis than the sum: softmax is unchanged only "
            "by subtracting one constant per row, so the maximum must run over the last axis too")(_max_elsewhere)


for _axis in (0, 1, -2):
    def _sum_elsewhere(z, _axis=_axis):
        e = np.exp(z - z.max(axis=-1, keepdims=True))
        return e / e.sum(axis=_axis, keepdims=True)
    _sum_elsewhere.__name__ = f"sum_over_axis_{_axis}".replace("-", "m")
    mistake("softmax", "the sum runs over another axis than the last: each row of exponentials must be "
            "divided by its own sum over the last axis", fix="e / e.sum(axis=-1, keepdims=True)")(_sum_elsewhere)


@mistake("softmax", "it normalises over the second-to-last axis (axis=-2, down the columns of each "
         "matrix) instead of the last axis", fix="axis=-1")
def axis_m2(z):
    e = np.exp(z - z.max(axis=-2, keepdims=True))
    return e / e.sum(axis=-2, keepdims=True)


@mistake("softmax", "it divides by the mean of the exponentials instead of their sum, so each row "
         "sums to n (its length)")
def divided_by_mean(z):
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.mean(axis=-1, keepdims=True)


@mistake("softmax", "the row maximum is added instead of subtracted, so large logits overflow")
def max_added(z):
    e = np.exp(z + z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


# ------------------------------------------------------------------- scaled dot-product family

def _attention_mistakes(part, causal):
    mask = (lambda n: _mask(n)) if causal else (lambda n: None)

    @mistake(part, "the weights equal softmax(QKᵀ) without the 1/√d_k scaling of eq. 8.33")
    def no_scaling(Q, K, V):
        return _attend(Q, K, V, 1.0, mask(len(Q)))

    @mistake(part, "the scores are divided by d_k instead of √d_k (eq. 8.33)")
    def scale_by_dk(Q, K, V):
        return _attend(Q, K, V, 1.0 / Q.shape[-1], mask(len(Q)))

    @mistake(part, "the scores are scaled by √d_v (the width of V) instead of √d_k (eq. 8.33)")
    def scale_by_dv(Q, K, V):
        return _attend(Q, K, V, 1.0 / np.sqrt(V.shape[-1]), mask(len(Q)))

    @mistake(part, "the scores are scaled by √N (the sequence length) instead of √d_k")
    def scale_by_n(Q, K, V):
        return _attend(Q, K, V, 1.0 / np.sqrt(len(Q)), mask(len(Q)))

    @mistake(part, "the scores are multiplied by √d_k instead of divided by it")
    def times_sqrt_dk(Q, K, V):
        return _attend(Q, K, V, np.sqrt(Q.shape[-1]), mask(len(Q)))

    @mistake(part, "the softmax runs over the queries (axis 0) instead of the keys: each row of "
             "the weights must sum to 1")
    def softmax_over_queries(Q, K, V):
        return _attend(Q, K, V, 1.0 / np.sqrt(Q.shape[-1]), mask(len(Q)), axis=0)

    @mistake(part, "it computes K Qᵀ instead of Q Kᵀ: the scores are transposed, so each softmax runs over "
                   "the queries of one key")
    def transposed_scores(Q, K, V):
        return _attend(K, Q, V, 1.0 / np.sqrt(Q.shape[-1]), mask(len(Q)))

    @mistake(part, "the output is weightsᵀ V; it is weights V (row i mixes the values for query i)")
    def weights_transposed(Q, K, V):
        _, w = _attend(Q, K, V, 1.0 / np.sqrt(Q.shape[-1]), mask(len(Q)))
        return w.T @ V, w

    @mistake(part, "it returns (weights, output); the order is (output, weights)")
    def swapped_returns(Q, K, V):
        out, w = _attend(Q, K, V, 1.0 / np.sqrt(Q.shape[-1]), mask(len(Q)))
        return w, out

    @mistake(part, "the weights are divided by √d_k after the softmax, so each row sums to 1/√d_k; "
             "the scaling goes inside: softmax(QKᵀ/√d_k) (eq. 8.33)")
    def scaled_after_softmax(Q, K, V):
        _, w = _attend(Q, K, V, 1.0, mask(len(Q)))
        w = w / np.sqrt(Q.shape[-1])
        return w @ V, w

    @mistake(part, "the row maxima and sums lose their axis, so the (N,) vector broadcasts along "
             "the last axis and entry (i, j) is divided by row j's sum instead of row i's",
             fix="keepdims=True in the max and the sum")
    def keepdims_forgotten(Q, K, V):
        scores = Q @ K.T / np.sqrt(Q.shape[-1])
        if mask(len(Q)) is not None:
            scores = scores + mask(len(Q))
        e = np.exp(scores - scores.max(axis=-1))
        w = e / e.sum(axis=-1)
        return w @ V, w

    @mistake(part, "it returns only the output; the function returns the pair (output, weights)")
    def only_output(Q, K, V):
        return _attend(Q, K, V, 1.0 / np.sqrt(Q.shape[-1]), mask(len(Q)))[0]

    @mistake(part, "the softmax exponentiates the scores without subtracting each row's maximum, "
             "so large scores overflow to inf and the weights become nan",
             fix="call your stable softmax on the scores")
    def unstable_softmax(Q, K, V):
        scores = Q @ K.T / np.sqrt(Q.shape[-1])
        e = np.exp(scores if mask(len(Q)) is None else scores + mask(len(Q)))
        w = e / e.sum(axis=-1, keepdims=True)
        return w @ V, w

    @mistake(part, "K is not transposed: the scores are Q Kᵀ (Q @ K.T), one row per query and one "
             "column per key; Q @ K multiplies query features by key positions",
             fix="Q @ K.T")
    def keys_not_transposed(Q, K, V):
        scores = Q @ K / np.sqrt(Q.shape[-1])
        if mask(len(Q)) is not None:
            scores = scores + mask(len(Q))
        w = R.softmax(scores)
        return w @ V, w

    @mistake(part, "the output multiplies the values by the weights from the left (V @ weights); it is "
             "weights @ V: row i mixes the values for query i",
             fix="weights @ V")
    def values_times_weights(Q, K, V):
        _, w = _attend(Q, K, V, 1.0 / np.sqrt(Q.shape[-1]), mask(len(Q)))
        return V @ w, w

    @mistake(part, "it computes in float32 (an array made with dtype=np.float32, or astype(np.float32)), "
             "which keeps about 7 significant digits; keep the inputs' float64",
             fix="leave out the float32 conversion")
    def single_precision_attention(Q, K, V):
        Q, K, V = (np.asarray(a, dtype=np.float32) for a in (Q, K, V))
        scores = Q @ K.T / np.float32(np.sqrt(Q.shape[-1]))
        if mask(len(Q)) is not None:
            scores = scores + mask(len(Q)).astype(np.float32)
        w = R.softmax(scores)
        return w @ V, w


_attention_mistakes("scaled_dot_product_attention", causal=False)


@mistake('causal_attention', 'the mask also covers the diagonal: position i must attend to itself, and row 0 is left with nothing to attend to',
         fix='np.triu(np.full((N, N), -np.inf), k=1)')
def mask_covers_diagonal(Q, K, V):
    return _attend(Q, K, V, 1 / np.sqrt(Q.shape[-1]), _mask(len(Q), k=0))


@mistake('causal_attention', 'the mask multiplies 0/1 entries by -inf, but 0 · (-inf) is nan, so every score becomes nan; the mask must hold 0 on and below the diagonal and -inf only above it',
         fix='np.where(np.triu(np.ones((N, N), dtype=bool), k=1), -np.inf, 0.0)')
def nan_mask(Q, K, V):
    return _attend(Q, K, V, 1 / np.sqrt(Q.shape[-1]), np.triu(np.ones((len(Q), len(Q))), k=1) * -np.inf)


@mistake('causal_attention', 'the mask starts one place too late: position i still sees position i+1; every j > i must be masked',
         fix='np.triu(..., k=1)')
def mask_one_late(Q, K, V):
    return _attend(Q, K, V, 1 / np.sqrt(Q.shape[-1]), _mask(len(Q), k=2))


@mistake("causal_attention", "the mask is applied after the softmax (future weights zeroed), so "
         "the rows no longer sum to 1; add -inf to the scores before the softmax (eq. 8.34)")
def mask_after_softmax(Q, K, V):
    _, w = R.scaled_dot_product_attention(Q, K, V)
    w = np.tril(w)
    return w @ V, w


@mistake("causal_attention", "the masked scores become 0 (multiplied by a 0/1 mask, or set to 0) instead "
         "of -inf, and e^0 still gets weight")
def multiplicative_mask(Q, K, V):
    n = len(Q)
    scores = Q @ K.T / np.sqrt(Q.shape[-1]) * np.tril(np.ones((n, n)))
    w = R.softmax(scores)
    return w @ V, w


@mistake('causal_attention', 'the mask hides the past instead of the future (the lower triangle): M[i, j] = -inf for j > i, the upper triangle',
         fix='np.triu(np.full((N, N), -np.inf), k=1)')
def mask_on_past(Q, K, V):
    return _attend(Q, K, V, 1 / np.sqrt(Q.shape[-1]), _mask(len(Q)).T)


@mistake("causal_attention", "the mask value is finite (such as -100 or -1000) instead of -inf: with large scores, or a row "
         "whose own scores are very negative, the future still gets weight",
         fix="put -np.inf above the diagonal: np.triu(np.full((N, N), -np.inf), k=1)")
def finite_mask_thousand(Q, K, V):
    return _assigned_mask(Q, K, V, -1000.0)


def _assigned_mask(Q, K, V, value):
    """Future scores replaced by `value` (rather than lowered by it)."""
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    w = R.softmax(np.where(np.triu(np.ones(scores.shape, dtype=bool), k=1), value, scores))
    return w @ V, w


@mistake("causal_attention", "the mask value is finite (such as -100 or -1000) instead of -inf: with "
         "large scores, or a row whose own scores are very negative, the future still gets weight",
         fix="put -np.inf above the diagonal: np.triu(np.full((N, N), -np.inf), k=1)")
def finite_mask_hundred(Q, K, V):
    return _assigned_mask(Q, K, V, -100.0)


@mistake("causal_attention", "the mask value is finite (such as -100 or -1000) instead of -inf: with large scores, or a row "
         "whose own scores are very negative, the future still gets weight",
         fix="put -np.inf above the diagonal: np.triu(np.full((N, N), -np.inf), k=1)")
def finite_mask_thousand_added(Q, K, V):
    return _attend(Q, K, V, 1 / np.sqrt(Q.shape[-1]), _mask(len(Q), value=-1000.0))


@mistake("causal_attention", "no mask is applied: this is full attention")
def no_mask(Q, K, V):
    return R.scaled_dot_product_attention(Q, K, V)


@mistake("causal_attention", "the weights are the full softmax with the future zeroed and the rows "
         "renormalised: equal on paper, but when a future score dominates a row, the weights of "
         "the past underflow to 0 and the row becomes 0/0 = nan; add -inf to the future scores "
         "before the softmax (eq. 8.34)")
def renormalised_after_softmax(Q, K, V):
    lower = np.tril(R.scaled_dot_product_attention(Q, K, V)[1])
    w = lower / lower.sum(axis=-1, keepdims=True)
    return w @ V, w


@mistake("causal_attention", "the mask value is finite (such as -100 or -1000) instead of -inf: with large scores, or a row "
         "whose own scores are very negative, the future still gets weight",
         fix="put -np.inf above the diagonal: np.triu(np.full((N, N), -np.inf), k=1)")
def finite_mask(Q, K, V):
    return _attend(Q, K, V, 1 / np.sqrt(Q.shape[-1]), _mask(len(Q), value=-100.0))


_attention_mistakes("causal_attention", causal=True)


# ------------------------------------------------------------------------- MultiHeadAttention

def _heads(self, X, split, merge, scale=None, causal=False, axis=-1, keys=None, project=True):
    """Multi-head attention with pluggable pieces, to build the mistakes from."""
    n = X.shape[0]
    Q, K, V = (split(self, X @ W) for W in (self.W_Q, keys if keys is not None else self.W_K, self.W_V))
    scores = Q @ K.transpose(0, 2, 1) * (scale if scale is not None else 1 / np.sqrt(self.d_k))
    if causal:
        scores = scores + _mask(n)
    w = np.exp(scores - scores.max(axis=axis, keepdims=True))
    w = w / w.sum(axis=axis, keepdims=True)
    concat = merge(self, w @ V)
    return concat @ self.W_O if project else concat


def _split(self, M):
    return M.reshape(len(M), self.n_heads, self.d_k).transpose(1, 0, 2)


def _merge(self, H):
    return H.transpose(1, 0, 2).reshape(H.shape[1], self.d_model)


@mistake('MultiHeadAttention', "the heads are split with a reshape to (A, N, d_k) without moving the axes, so each 'head' mixes positions: head c is the block of columns c*d_k:(c+1)*d_k of every row",
         fix='reshape to (N, A, d_k), then transpose(1, 0, 2)')
def reshape_without_transpose(self, X, causal=False):
    split = lambda s, M: M.reshape(s.n_heads, len(M), s.d_k)  # noqa: E731
    merge = lambda s, H: H.reshape(H.shape[1], s.d_model)      # noqa: E731
    return _heads(self, X, split, merge, causal=causal)


@mistake('MultiHeadAttention', "the heads are split with a reshape to (A, N, d_k) without moving the axes, so each 'head' mixes positions: head c is the block of columns c*d_k:(c+1)*d_k of every row",
         fix='reshape to (N, A, d_k), then transpose(1, 0, 2)')
def split_without_transpose(self, X, causal=False):
    return _heads(self, X, lambda s, M: M.reshape(s.n_heads, len(M), s.d_k), _merge, causal=causal)


@mistake('MultiHeadAttention', 'the heads are concatenated with a reshape straight from (A, N, d_k), which lays the heads out along the positions: the head axis has to move back next to d_k first',
         fix='transpose(1, 0, 2), then reshape(N, d_model)')
def merge_without_transpose(self, X, causal=False):
    return _heads(self, X, _split, lambda s, H: H.reshape(H.shape[1], s.d_model), causal=causal)


@mistake("MultiHeadAttention", "head c takes every A-th column (c::A); it owns the contiguous "
         "block c*d_k:(c+1)*d_k of W_Q, W_K and W_V")
def interleaved_heads(self, X, causal=False):
    split = lambda s, M: M.reshape(len(M), s.d_k, s.n_heads).transpose(2, 0, 1)  # noqa: E731
    merge = lambda s, H: H.transpose(1, 2, 0).reshape(H.shape[1], s.d_model)     # noqa: E731
    return _heads(self, X, split, merge, causal=causal)


@mistake("MultiHeadAttention", "the heads are never split: this is one attention over all d_model "
         "columns (scaled by √d_model); head c uses only columns c*d_k:(c+1)*d_k of X W_Q, X W_K "
         "and X W_V (eqs. 8.35-8.36)")
def one_big_head(self, X, causal=False):
    attend = R.causal_attention if causal else R.scaled_dot_product_attention
    return attend(X @ self.W_Q, X @ self.W_K, X @ self.W_V)[0] @ self.W_O


@mistake("MultiHeadAttention", "the projections use transposed weights (X @ W.T, the "
         "torch.nn.Linear convention); eqs. 8.35-8.37 multiply by W_Q, W_K, W_V and W_O themselves")
def transposed_weights(self, X, causal=False):
    flipped = copy.copy(self)
    flipped.W_Q, flipped.W_K, flipped.W_V, flipped.W_O = (self.W_Q.T, self.W_K.T, self.W_V.T, self.W_O.T)
    return _heads(flipped, X, _split, _merge, causal=causal)


@mistake("MultiHeadAttention", "the output projection W_O of eq. 8.37 is missing")
def no_output_projection(self, X, causal=False):
    return _heads(self, X, _split, _merge, causal=causal, project=False)


@mistake("MultiHeadAttention", "causal=True is ignored: no mask is applied")
def causal_ignored(self, X, causal=False):
    return _heads(self, X, _split, _merge, causal=False)


@mistake("MultiHeadAttention", "the causal mask is applied even when causal=False")
def always_causal(self, X, causal=False):
    return _heads(self, X, _split, _merge, causal=True)


@mistake("MultiHeadAttention", "the scores are scaled by √d_model instead of √d_k, the width of "
         "one head")
def scale_by_d_model(self, X, causal=False):
    return _heads(self, X, _split, _merge, scale=1 / np.sqrt(self.d_model), causal=causal)


@mistake("MultiHeadAttention", "the scores are not scaled by 1/√d_k (eq. 8.33)")
def no_scaling_mha(self, X, causal=False):
    return _heads(self, X, _split, _merge, scale=1.0, causal=causal)


@mistake('MultiHeadAttention', "the softmax runs over the queries instead of the keys: each query's weights must sum to 1",
         fix='softmax over the last axis of the (A, N, N) scores')
def softmax_over_queries_mha(self, X, causal=False):
    return _heads(self, X, _split, _merge, causal=causal, axis=-2)


@mistake("MultiHeadAttention", "the keys are computed with W_Q instead of W_K")
def keys_from_w_q(self, X, causal=False):
    return _heads(self, X, _split, _merge, causal=causal, keys=self.W_Q)


@mistake("MultiHeadAttention", "head c takes the columns c:c+d_k; it owns c*d_k:(c+1)*d_k, so the "
         "heads overlap and the last columns are never used",
         fix="Q[:, c * d_k:(c + 1) * d_k] (and the same for K and V)")
def heads_overlap(self, X, causal=False):
    split = lambda s, M: np.stack([M[:, c:c + s.d_k] for c in range(s.n_heads)])  # noqa: E731
    return _heads(self, X, split, _merge, causal=causal)


@mistake("MultiHeadAttention", "each head's score matrix is transposed (K Qᵀ, or einsum output "
         "indices in the wrong order), so entry (i, j) scores key i against query j and the "
         "softmax runs over the queries")
def scores_transposed_mha(self, X, causal=False):
    n = X.shape[0]
    Q, K, V = (_split(self, X @ W) for W in (self.W_Q, self.W_K, self.W_V))
    scores = K @ Q.transpose(0, 2, 1) / np.sqrt(self.d_k)
    if causal:
        scores = scores + _mask(n)
    return _merge(self, R.softmax(scores) @ V) @ self.W_O


# ------------------------------------------------------------------------ positional_encoding

def _pe(max_len, d_model, base=10000.0, first=0, exponent=lambda two_i, d: two_i / d,
        even=np.sin, odd=np.cos, interleave=True, divide=True):
    pos = np.arange(first, first + max_len)[:, None]
    two_i = np.arange(0, d_model, 2)[None, :]
    freq = base ** exponent(two_i, d_model)
    angles = pos / freq if divide else pos * freq
    if not interleave:
        return np.concatenate([even(angles), odd(angles)], axis=1)
    pe = np.empty((max_len, d_model))
    pe[:, 0::2], pe[:, 1::2] = even(angles), odd(angles)
    return pe


@mistake("positional_encoding", "sin and cos are swapped: sin goes in the even columns, cos in the odd")
def sin_cos_swapped(max_len, d_model):
    return _pe(max_len, d_model, even=np.cos, odd=np.sin)


@mistake("positional_encoding", "the sines and cosines are concatenated [sin | cos] instead of "
         "interleaved (sin in column 2m, cos in column 2m+1)")
def concatenated(max_len, d_model):
    return _pe(max_len, d_model, interleave=False)


@mistake("positional_encoding", "positions start at 1; the first position is 0, so PE[0] = [0, 1, 0, 1, ...]")
def positions_from_one(max_len, d_model):
    return _pe(max_len, d_model, first=1)


@mistake("positional_encoding", "the exponent uses the column index for both columns of a pair; "
         "columns 2m and 2m+1 share the frequency 1/10000^(2m/d)")
def column_index_exponent(max_len, d_model):
    pos = np.arange(max_len)[:, None]
    j = np.arange(d_model)[None, :]
    angles = pos / 10000.0 ** (j / d_model)
    return np.where(j % 2 == 0, np.sin(angles), np.cos(angles))


@mistake("positional_encoding", "the exponent is 2·(column index)/d; m counts pairs "
         "of columns, so columns 2m and 2m+1 both use 10000^(2m/d)")
def column_index_doubled(max_len, d_model):
    pos = np.arange(max_len)[:, None]
    j = np.arange(d_model)[None, :]
    angles = pos / 10000.0 ** (2 * j / d_model)
    return np.where(j % 2 == 0, np.sin(angles), np.cos(angles))


@mistake("positional_encoding", "the exponent 2m/d is computed with integer division (//), so it "
         "is 0 and every column pair has the same frequency; divide with /")
def integer_exponent(max_len, d_model):
    return _pe(max_len, d_model, exponent=lambda two_i, d: two_i // d)


@mistake("positional_encoding", "the exponent is m/d instead of 2m/d")
def half_exponent(max_len, d_model):
    return _pe(max_len, d_model, exponent=lambda two_i, d: two_i / 2 / d)


@mistake("positional_encoding", "the exponent is 2·(2m)/d: m already counts pairs, so write "
         "10000^(2m/d) with m = 0, 1, ..., d/2 - 1 (or np.arange(0, d, 2)/d)")
def doubled_exponent(max_len, d_model):
    return _pe(max_len, d_model, exponent=lambda two_i, d: 2 * two_i / d)


@mistake("positional_encoding", "the position is multiplied by 10000^(2m/d) instead of divided by it")
def multiplied(max_len, d_model):
    return _pe(max_len, d_model, divide=False)


@mistake("positional_encoding", "the base is 1000; the book uses 10000")
def base_1000(max_len, d_model):
    return _pe(max_len, d_model, base=1000.0)


# --------------------------------------------------------------------------------- layer_norm

def _ln(x, gamma=None, beta=None, eps=1e-5, ddof=0, eps_outside=False, axis=-1, sqrt=True):
    mu = x.mean(axis=axis, keepdims=True)
    var = x.var(axis=axis, keepdims=True, ddof=ddof)
    if not sqrt:
        scale = var + eps
    else:
        scale = np.sqrt(var) + eps if eps_outside else np.sqrt(var + eps)
    y = (x - mu) / scale
    return y * (1.0 if gamma is None else gamma) + (0.0 if beta is None else beta)


@mistake("layer_norm", "the variance divides by d - 1 (ddof=1); layer norm uses the biased "
         "variance, dividing by d (np.var's default)")
def unbiased_variance(x, gamma=None, beta=None, eps=1e-5):
    return _ln(x, gamma, beta, eps, ddof=1)


@mistake("layer_norm", "eps is added to the standard deviation, outside the square root; it "
         "belongs inside: sqrt(var + eps) (eq. 8.25)")
def eps_outside_sqrt(x, gamma=None, beta=None, eps=1e-5):
    return _ln(x, gamma, beta, eps, eps_outside=True)


@mistake("layer_norm", "eps is left out (or a fixed value is used instead of the eps argument)")
def eps_ignored(x, gamma=None, beta=None, eps=1e-5):
    return _ln(x, gamma, beta, 0.0)


@mistake("layer_norm", "the eps argument is ignored: the default 1e-5 is used whatever eps is")
def eps_fixed(x, gamma=None, beta=None, eps=1e-5):
    return _ln(x, gamma, beta, 1e-5)


@mistake("layer_norm", "it divides by the variance instead of the standard deviation (missing sqrt)")
def no_sqrt(x, gamma=None, beta=None, eps=1e-5):
    return _ln(x, gamma, beta, eps, sqrt=False)


@mistake("layer_norm", "the statistics are taken over axis 0 instead of the last (feature) axis")
def over_axis0(x, gamma=None, beta=None, eps=1e-5):
    return _ln(x, gamma, beta, eps, axis=0)


@mistake("layer_norm", "the statistics are taken over axis 1, the last axis only for 2-D input: a "
         "(batch, N, d) input is normalised over its positions",
         fix="axis=-1")
def over_axis1(x, gamma=None, beta=None, eps=1e-5):
    return _ln(x, gamma, beta, eps, axis=1)


@mistake("layer_norm", "the statistics are taken over the whole array instead of each vector")
def over_everything(x, gamma=None, beta=None, eps=1e-5):
    return _ln(x, gamma, beta, eps, axis=None)


@mistake("layer_norm", "it computes in float32 (astype(np.float32)), which keeps about 7 "
         "significant digits: for rows with a small variance x - mean loses most of them; keep "
         "the input's precision")
def single_precision_ln(x, gamma=None, beta=None, eps=1e-5):
    return R.layer_norm(np.asarray(x, dtype=np.float32), gamma, beta, eps)


@mistake("layer_norm", "gamma and beta are used as given, but they default to None, and arithmetic "
         "with None raises a TypeError: the defaults stand for the identity scale and a zero shift",
         fix="gamma = np.ones(x.shape[-1]) if gamma is None else gamma (and zeros for beta)")
def defaults_left_none(x, gamma=None, beta=None, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return gamma * (x - mu) / np.sqrt(var + eps) + beta


@mistake("layer_norm", "a default is chosen by testing the array itself (`gamma or np.ones(d)`, "
         "`gamma == None`, `not gamma`): that asks an array for its truth value, which raises for more "
         "than one element; test `is None` instead",
         fix="gamma = np.ones(x.shape[-1]) if gamma is None else gamma (and zeros for beta)")
def defaults_with_or(x, gamma=None, beta=None, eps=1e-5):
    d = x.shape[-1]
    gamma = gamma or np.ones(d)
    beta = beta or np.zeros(d)
    return _ln(x, gamma, beta, eps)


@mistake("layer_norm", "beta is used whenever gamma is given, but each may be given alone: beta is "
         "None here, and adding None raises a TypeError",
         fix="replace gamma and beta separately: beta = np.zeros(x.shape[-1]) if beta is None else beta")
def beta_assumed_with_gamma(x, gamma=None, beta=None, eps=1e-5):
    x_hat = _ln(x, eps=eps)
    return gamma * x_hat + beta if gamma is not None else x_hat


@mistake("layer_norm", "beta is applied only when gamma is given, but each may be given alone: "
         "with beta alone, the shift is dropped",
         fix="replace gamma and beta separately: gamma = np.ones(x.shape[-1]) if gamma is None else gamma")
def beta_only_with_gamma(x, gamma=None, beta=None, eps=1e-5):
    x_hat = _ln(x, eps=eps)
    return x_hat if gamma is None else gamma * x_hat + (0.0 if beta is None else beta)


@mistake("layer_norm", "when either gamma or beta is left out, both are replaced by their defaults, "
         "so the one that was given is ignored; each defaults on its own",
         fix="gamma = np.ones(d) if gamma is None else gamma, and beta = np.zeros(d) if beta is None else beta")
def both_defaulted(x, gamma=None, beta=None, eps=1e-5):
    return _ln(x, eps=eps) if gamma is None or beta is None else _ln(x, gamma, beta, eps)


@mistake("layer_norm", "the mean or the variance (or both) is reduced without keeping its axis, so it "
         "broadcasts against the features instead of the rows (a broadcast error when N != d)",
         fix="x.mean(axis=-1, keepdims=True) and x.var(axis=-1, keepdims=True)")
def keepdims_forgotten_ln(x, gamma=None, beta=None, eps=1e-5):
    y = (x - x.mean(axis=-1)) / np.sqrt(x.var(axis=-1) + eps)
    return y * (1.0 if gamma is None else gamma) + (0.0 if beta is None else beta)


@mistake("layer_norm", "the input is not centred before it is divided: x_hat = (x - mean) / sqrt(var + eps) "
         "(eq. 8.25)", fix="(x - mu) / np.sqrt(var + eps)")
def not_centred(x, gamma=None, beta=None, eps=1e-5):
    y = x / np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    return y * (1.0 if gamma is None else gamma) + (0.0 if beta is None else beta)


@mistake("layer_norm", "the variance is the mean of x² without subtracting the mean first: it is the "
         "mean of (x - mean)²", fix="((x - mu) ** 2).mean(axis=-1, keepdims=True)")
def variance_not_centred(x, gamma=None, beta=None, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    y = (x - mu) / np.sqrt((x ** 2).mean(axis=-1, keepdims=True) + eps)
    return y * (1.0 if gamma is None else gamma) + (0.0 if beta is None else beta)


@mistake("layer_norm", "the centred input is multiplied by the standard deviation instead of divided by it",
         fix="(x - mu) / np.sqrt(var + eps)")
def multiplied_by_std(x, gamma=None, beta=None, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    y = (x - mu) * np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    return y * (1.0 if gamma is None else gamma) + (0.0 if beta is None else beta)


@mistake("layer_norm", "the input is only centred, never divided by its standard deviation",
         fix="(x - mu) / np.sqrt(var + eps)")
def not_scaled(x, gamma=None, beta=None, eps=1e-5):
    y = x - x.mean(axis=-1, keepdims=True)
    return y * (1.0 if gamma is None else gamma) + (0.0 if beta is None else beta)


@mistake("layer_norm", "the variance (or the mean) is a sum over the features, not a mean: divide by d",
         fix="np.mean(..., axis=-1, keepdims=True)")
def variance_summed(x, gamma=None, beta=None, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    y = (x - mu) / np.sqrt(((x - mu) ** 2).sum(axis=-1, keepdims=True) + eps)
    return y * (1.0 if gamma is None else gamma) + (0.0 if beta is None else beta)


@mistake("layer_norm", "the variance (or the mean) is a sum over the features, not a mean: divide by d",
         fix="np.mean(..., axis=-1, keepdims=True)")
def mean_summed(x, gamma=None, beta=None, eps=1e-5):
    mu = x.sum(axis=-1, keepdims=True)
    y = (x - mu) / np.sqrt(((x - mu) ** 2).mean(axis=-1, keepdims=True) + eps)
    return y * (1.0 if gamma is None else gamma) + (0.0 if beta is None else beta)


@mistake("layer_norm", "beta is never added: the result is gamma * x_hat + beta",
         fix="+ beta (0 when beta is None)")
def beta_forgotten(x, gamma=None, beta=None, eps=1e-5):
    return _ln(x, gamma, None, eps)


@mistake("layer_norm", "gamma is never applied: the result is gamma * x_hat + beta",
         fix="* gamma (1 when gamma is None)")
def gamma_forgotten(x, gamma=None, beta=None, eps=1e-5):
    return _ln(x, None, beta, eps)


@mistake("layer_norm", "gamma and beta are ignored")
def affine_ignored(x, gamma=None, beta=None, eps=1e-5):
    return _ln(x, eps=eps)


@mistake("layer_norm", "beta is added before scaling by gamma: the formula is gamma * x_hat + beta")
def shift_then_scale(x, gamma=None, beta=None, eps=1e-5):
    y = _ln(x, eps=eps) + (0.0 if beta is None else beta)
    return y * (1.0 if gamma is None else gamma)


# -------------------------------------------------------------------------------- feedforward

@mistake("feedforward", "it uses GELU; eq. 8.21 uses ReLU, max(0, z)")
def gelu(x, W1, b1, W2, b2):
    z = x @ W1 + b1
    return 0.5 * z * (1 + np.tanh(np.sqrt(2 / np.pi) * (z + 0.044715 * z**3))) @ W2 + b2


@mistake("feedforward", "there is no ReLU between the two layers")
def no_activation(x, W1, b1, W2, b2):
    return (x @ W1 + b1) @ W2 + b2


@mistake("feedforward", "the bias b1 is missing")
def missing_b1(x, W1, b1, W2, b2):
    return np.maximum(0, x @ W1) @ W2 + b2


@mistake("feedforward", "the bias b2 is missing")
def missing_b2(x, W1, b1, W2, b2):
    return np.maximum(0, x @ W1 + b1) @ W2


@mistake("feedforward", "b1 is added after the ReLU; it goes inside: ReLU(x W1 + b1)")
def bias_after_relu(x, W1, b1, W2, b2):
    return (np.maximum(0, x @ W1) + b1) @ W2 + b2


@mistake("feedforward", "a ReLU is also applied to the output of the second layer")
def relu_on_output(x, W1, b1, W2, b2):
    return np.maximum(0, np.maximum(0, x @ W1 + b1) @ W2 + b2)


@mistake("feedforward", "it uses a leaky ReLU (negative inputs keep a small slope); ReLU is max(0, z)")
def leaky_relu(x, W1, b1, W2, b2):
    z = x @ W1 + b1
    return np.where(z > 0, z, 0.01 * z) @ W2 + b2


@mistake("feedforward", "it uses a sigmoid between the layers; eq. 8.21 uses ReLU, max(0, z)")
def sigmoid(x, W1, b1, W2, b2):
    return (1 / (1 + np.exp(-(x @ W1 + b1)))) @ W2 + b2


@mistake("feedforward", "it uses tanh instead of ReLU, max(0, z) (eq. 8.21)")
def tanh_activation(x, W1, b1, W2, b2):
    return np.tanh(x @ W1 + b1) @ W2 + b2


# --------------------------------------------------------------------------- TransformerBlock

def _ln1(self, x):
    return R.layer_norm(x, self.ln1_gamma, self.ln1_beta)


def _ln2(self, x):
    return R.layer_norm(x, self.ln2_gamma, self.ln2_beta)


def _ffn(self, x):
    return R.feedforward(x, self.W1, self.b1, self.W2, self.b2)


@mistake("TransformerBlock", "this is the post-norm block (layer norm after each residual "
         "addition); the book's pre-norm block normalises the input of each sub-layer (eqs. 8.40-8.45)")
def post_norm(self, x):
    t3 = _ln1(self, x + self.attention.forward(x, causal=True))
    return _ln2(self, t3 + _ffn(self, t3))


@mistake("TransformerBlock", "the first residual adds the normalised input T¹; eq. 8.42 adds "
         "the un-normalised stream X")
def residual_from_normalised(self, x):
    t1 = _ln1(self, x)
    t3 = self.attention.forward(t1, causal=True) + t1
    return _ffn(self, _ln2(self, t3)) + t3


@mistake("TransformerBlock", "the second residual adds the normalised T⁴; eq. 8.45 adds T³")
def second_residual_from_normalised(self, x):
    t3 = self.attention.forward(_ln1(self, x), causal=True) + x
    t4 = _ln2(self, t3)
    return _ffn(self, t4) + t4


@mistake("TransformerBlock", "both residuals add the normalised stream (T¹ and T⁴, x overwritten by "
         "its layer norm); eqs. 8.42 and 8.45 add the un-normalised X and T³")
def residuals_from_normalised(self, x):
    t1 = _ln1(self, x)
    t3 = t1 + self.attention.forward(t1, causal=True)
    t4 = _ln2(self, t3)
    return t4 + _ffn(self, t4)


@mistake("TransformerBlock", "the second residual adds the block's input X instead of T³, so the "
         "attention's output never reaches H: H = T⁵ + T³ (eq. 8.45)")
def second_residual_from_input(self, x):
    t3 = self.attention.forward(_ln1(self, x), causal=True) + x
    return _ffn(self, _ln2(self, t3)) + x


@mistake("TransformerBlock", "the first layer norm's parameters (ln1_*) are used for both layer "
         "norms; the FFN's layer norm uses ln2_gamma and ln2_beta")
def ln1_used_twice(self, x):
    t3 = self.attention.forward(_ln1(self, x), causal=True) + x
    return _ffn(self, _ln1(self, t3)) + t3


@mistake("TransformerBlock", "the second layer norm's parameters (ln2_*) are used for both layer norms")
def ln2_used_twice(self, x):
    t3 = self.attention.forward(_ln2(self, x), causal=True) + x
    return _ffn(self, _ln2(self, t3)) + t3


@mistake("TransformerBlock", "the two layer norms' parameters are swapped: ln1_* normalises the "
         "attention's input (eq. 8.40), ln2_* the FFN's (eq. 8.43)")
def ln_params_swapped(self, x):
    t3 = self.attention.forward(_ln2(self, x), causal=True) + x
    return _ffn(self, _ln1(self, t3)) + t3


@mistake("TransformerBlock", "the layer norms ignore their parameters (ln*_gamma, ln*_beta)")
def ln_params_ignored(self, x):
    t3 = self.attention.forward(R.layer_norm(x), causal=True) + x
    return _ffn(self, R.layer_norm(t3)) + t3


@mistake("TransformerBlock", "the attention is not causal: call attention.forward(..., causal=True)")
def attention_not_causal(self, x):
    t3 = self.attention.forward(_ln1(self, x), causal=False) + x
    return _ffn(self, _ln2(self, t3)) + t3


@mistake("TransformerBlock", "the residual connection around the attention is missing (T³ = T² + X)")
def no_attention_residual(self, x):
    t3 = self.attention.forward(_ln1(self, x), causal=True)
    return _ffn(self, _ln2(self, t3)) + t3


@mistake("TransformerBlock", "the residual connection around the FFN is missing (H = T⁵ + T³)")
def no_ffn_residual(self, x):
    t3 = self.attention.forward(_ln1(self, x), causal=True) + x
    return _ffn(self, _ln2(self, t3))


@mistake("TransformerBlock", "the FFN's input is not normalised: T⁴ = LayerNorm(T³) is missing")
def no_second_ln(self, x):
    t3 = self.attention.forward(_ln1(self, x), causal=True) + x
    return _ffn(self, t3) + t3


@mistake("TransformerBlock", "the attention's input is not normalised: T¹ = LayerNorm(X) is missing")
def no_first_ln(self, x):
    t3 = self.attention.forward(x, causal=True) + x
    return _ffn(self, _ln2(self, t3)) + t3


@mistake("TransformerBlock", "the FFN's layer norm reads the block's input X instead of "
         "T³ = X + attention: T⁴ = LayerNorm(T³) (eq. 8.43)")
def second_ln_on_input(self, x):
    t3 = self.attention.forward(_ln1(self, x), causal=True) + x
    return _ffn(self, _ln2(self, x)) + t3


@mistake("TransformerBlock", "the FFN reads the attention output T² instead of the normalised stream T⁴")
def ffn_on_attention_output(self, x):
    t2 = self.attention.forward(_ln1(self, x), causal=True)
    t3 = t2 + x
    return _ffn(self, t2) + t3


@mistake("TransformerBlock", "the attention sub-layer is left out: T³ = X + MultiHeadAttention(LayerNorm(X)) "
         "(eqs. 8.41-8.42)")
def no_attention_sublayer(self, x):
    return _ffn(self, _ln2(self, x)) + x


@mistake("TransformerBlock", "the feed-forward sub-layer is left out: H = T³ + FFN(LayerNorm(T³)) "
         "(eqs. 8.43-8.45)")
def no_ffn_sublayer(self, x):
    return self.attention.forward(_ln1(self, x), causal=True) + x


@mistake("TransformerBlock", "the first residual adds the attention output twice (or the normalised input "
         "and the attention): T³ = X + attention output")
def attention_added_twice(self, x):
    t2 = self.attention.forward(_ln1(self, x), causal=True)
    t3 = t2 + t2 + x
    return _ffn(self, _ln2(self, t3)) + t3


# -------------------------------------------------------------------------- MiniTransformerLM

def _lm(self, ids, positions=None, scale=1.0, final_ln=True, final_params=True, blocks=None,
        pe_after_blocks=False):
    ids = np.asarray(ids)
    n = len(ids)
    pe = self.pos_encodings[:n] if positions is None else positions
    x = self.token_embeddings[ids] * scale
    if not pe_after_blocks:
        x = x + pe
    for b in (self.blocks if blocks is None else blocks):
        x = b.forward(x)
    if pe_after_blocks:
        x = x + pe
    if final_ln:
        x = R.layer_norm(x, *((self.final_ln_gamma, self.final_ln_beta) if final_params else ()))
    return x @ self.token_embeddings.T


@mistake("MiniTransformerLM", "the final layer norm is missing: pre-norm stacks normalise once "
         "more before the head")
def no_final_ln(self, token_ids):
    return _lm(self, token_ids, final_ln=False)


@mistake("MiniTransformerLM", "the final layer norm is applied after every block; it runs once, "
         "after the last block, before the head")
def final_ln_in_loop(self, token_ids):
    ids = np.asarray(token_ids)
    x = self.token_embeddings[ids] + self.pos_encodings[:len(ids)]
    for b in self.blocks:
        x = R.layer_norm(b.forward(x), self.final_ln_gamma, self.final_ln_beta)
    return x @ self.token_embeddings.T


@mistake("MiniTransformerLM", "the final layer norm ignores final_ln_gamma and final_ln_beta")
def final_ln_params_ignored(self, token_ids):
    return _lm(self, token_ids, final_params=False)


@mistake("MiniTransformerLM", "the token embeddings are left out: x = token_embeddings[ids] + PE[:N], the "
         "positional encodings alone carry no token")
def no_token_embeddings(self, token_ids):
    n = len(np.asarray(token_ids))
    x = np.broadcast_to(self.pos_encodings[:n], (n, self.pos_encodings.shape[1])).copy()
    for b in self.blocks:
        x = b.forward(x)
    return R.layer_norm(x, self.final_ln_gamma, self.final_ln_beta) @ self.token_embeddings.T


@mistake("MiniTransformerLM", "no positional encodings are added to the token embeddings")
def no_positions(self, token_ids):
    return _lm(self, token_ids, positions=0.0)


@mistake('MiniTransformerLM', 'the positions are off by one: the first token gets PE[0], position i gets row i',
         fix='pos_encodings[:N]')
def positions_offset(self, token_ids):
    n = len(np.asarray(token_ids))
    return _lm(self, token_ids, positions=self.pos_encodings[1:n + 1])


@mistake('MiniTransformerLM', 'the positional encodings are indexed by the token ids; row i of PE belongs to position i, whatever the token',
         fix='add pos_encodings[:N]')
def positions_by_token(self, token_ids):
    return _lm(self, token_ids, positions=self.pos_encodings[np.asarray(token_ids)])


@mistake("MiniTransformerLM", "the embeddings are scaled by √d before adding positions; this "
         "lab's model adds E[ids] unscaled")
def scaled_embeddings(self, token_ids):
    return _lm(self, token_ids, scale=np.sqrt(self.d_model))


@mistake("MiniTransformerLM", "the positional encodings are added after the blocks instead of "
         "to the input embeddings")
def positions_after_blocks(self, token_ids):
    return _lm(self, token_ids, pe_after_blocks=True)


@mistake("MiniTransformerLM", "the blocks run in reverse order")
def blocks_reversed(self, token_ids):
    return _lm(self, token_ids, blocks=self.blocks[::-1])


@mistake("MiniTransformerLM", "only the first block is applied: the stream must pass through "
         "every block, each taking the previous block's output")
def first_block_only(self, token_ids):
    return _lm(self, token_ids, blocks=self.blocks[:1])


@mistake("MiniTransformerLM", "each block's output is added to its input again: a block already "
         "holds its residual connections, so its output is the new stream")
def block_output_added(self, token_ids):
    ids = np.asarray(token_ids)
    x = self.token_embeddings[ids] + self.pos_encodings[:len(ids)]
    for b in self.blocks:
        x = x + b.forward(x)
    return R.layer_norm(x, self.final_ln_gamma, self.final_ln_beta) @ self.token_embeddings.T


@mistake("MiniTransformerLM", "every block reads the embeddings instead of the previous block's "
         "output, so only the last block counts: each block's input is the previous block's output")
def last_block_only(self, token_ids):
    return _lm(self, token_ids, blocks=self.blocks[-1:])


@mistake("MiniTransformerLM", "it returns the logits of the last position only; forward returns one "
         "row of logits per position, shape (N, |V|)")
def last_position_only(self, token_ids):
    return _lm(self, token_ids)[-1]


@mistake("MiniTransformerLM", "the head multiplies by E itself; the tied head is u = H Eᵀ (eq. 8.46), "
         "which maps d_model back to the vocabulary (without the transpose the shapes do not match)",
         fix="return x @ self.token_embeddings.T")
def head_not_transposed(self, token_ids):
    ids = np.asarray(token_ids)
    x = self.token_embeddings[ids] + self.pos_encodings[:len(ids)]
    for b in self.blocks:
        x = b.forward(x)
    return R.layer_norm(x, self.final_ln_gamma, self.final_ln_beta) @ self.token_embeddings


@mistake("MiniTransformerLM", "it returns probabilities (softmax of the logits); forward returns "
         "the logits u = H Eᵀ of eq. 8.46")
def probabilities(self, token_ids):
    return R.softmax(_lm(self, token_ids))


@mistake("MiniTransformerLM", "it returns log-probabilities; forward returns the logits u = H Eᵀ")
def log_probabilities(self, token_ids):
    u = _lm(self, token_ids)
    shifted = u - u.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


# Mistakes whose sign is NaN or inf where the reference has numbers (overflow, 0/0): only for
# these is a non-finite result evidence (checks.explains, verdict.shows)
suite.nonfinite("softmax", "unstable", "global_max", "min_shift", "mean_shift", "max_added")
suite.nonfinite("scaled_dot_product_attention", "unstable_softmax")
suite.nonfinite("causal_attention", "nan_mask", "renormalised_after_softmax", "unstable_softmax")

# Float32 attention is one idea wherever the code rounds: matched to float32's precision
suite.rounding("scaled_dot_product_attention", "single_precision_attention")
suite.rounding("causal_attention", "single_precision_attention")


@mistake("feedforward", "it computes in float32 (an array made with dtype=np.float32, or astype(np.float32)), "
         "which keeps about 7 significant digits; keep the inputs' float64",
         fix="leave out the float32 conversion")
def single_precision_ffn(x, W1, b1, W2, b2):
    return R.feedforward(*(np.asarray(a, dtype=np.float32) for a in (x, W1, b1, W2, b2)))


@mistake("positional_encoding", "the exponent counts from 1 (odd indices 2m + 1): pair m uses "
         "10000^(2m/d), starting at 10000^0 = 1",
         fix="np.arange(0, d_model, 2) / d_model")
def exponent_from_one(max_len, d_model):
    pos = np.arange(max_len)[:, None]
    angles = pos / 10000.0 ** (np.arange(1, d_model, 2)[None, :] / d_model)
    PE = np.zeros((max_len, d_model))
    PE[:, 0::2], PE[:, 1::2] = np.sin(angles), np.cos(angles)
    return PE


suite.rounding("feedforward", "single_precision_ffn")
