"""Lab 05 hidden checks: per graded name, what is tested, for how many points, at what tolerance.

Inputs are drawn from a generator seeded by the check's title, so every run and every student
sees the same hidden inputs. Expected values come from the reference in float64.
"""
import numpy as np

from ...checks import FLOAT32, ROUNDING, Suite, float32_numbers, halfway_float32
from ...compare import kind, mismatch
from . import calls as C
from . import reference

POINTS = {
    "softmax": 8,
    "scaled_dot_product_attention": 10,
    "causal_attention": 10,
    "MultiHeadAttention": 18,
    "positional_encoding": 10,
    "layer_norm": 10,
    "feedforward": 6,
    "TransformerBlock": 14,
    "MiniTransformerLM": 14,
}
CLASSES = {"MultiHeadAttention", "TransformerBlock", "MiniTransformerLM"}

suite = Suite(
    "lab05_transformers",
    reference={name: getattr(reference, name) for name in POINTS},
    points=POINTS,
    kinds={name: "class" if name in CLASSES else "function" for name in POINTS},
    output_names={"scaled_dot_product_attention": ("output", "weights"),
                  "causal_attention": ("output", "weights")},
)
check = suite.check


def expect_rows_unaffected_by_future(t, call, changed, upto, what):
    """`changed` alters the inputs of `call` after position `upto`: rows 0..upto of the output
    stay the same and the later rows change. When early rows differ, `call` is repeated to tell
    randomness from a leak."""
    first, second = (positions(t, t.student(c)) for c in (call, changed))
    given = call.args[0]
    if first.shape == np.shape(given) and _same(first, given):
        t.fail("the output is the input, unchanged: nothing was computed")
    if first.shape != second.shape:
        t.fail(f"two inputs of the same shape gave outputs of shapes {first.shape} and {second.shape}")
    if not _same(first[:upto + 1], second[:upto + 1]):
        if not _same(first, positions(t, t.student(call))):
            t.fail("the same call twice gave different outputs: the result must not depend on random "
                   "numbers (np.random) or on earlier calls")
        t.fail(f"changing {what} after position {upto} changed the output at positions 0..{upto}: "
               "position i must only see positions j <= i")
    if _same(first[upto + 1:], second[upto + 1:]):
        t.fail(f"changing {what} after position {upto} left the output there unchanged: the output "
               "at position i must depend on the input at position i")


def positions(t, got):
    """The output with one row per position (the first item of a tuple), or a failure."""
    out = got[0] if isinstance(got, tuple) and got else got
    if not isinstance(out, np.ndarray) or out.ndim == 0 or out.dtype.kind not in "biuf":
        t.fail(f"returned {kind(out)}; expected an array with one row per position")
    return out


def _same(a, b) -> bool:
    return a.shape == b.shape and np.allclose(a, b, rtol=0, atol=1e-10)


# ---------------------------------------------------------------------------------- softmax

@check("softmax", "returns a float array of the input's shape", 0.5, tol=None)
def _(t):
    """A wrong shape breaks every caller, whatever the values."""
    t.expect_array(t.student(C.softmax(t.normal(4, 6))), (4, 6))


@check("softmax", "matches the reference on a matrix of logits", 2)
def _(t):
    """The core definition: exponentiate and normalise each row."""
    t.expect_match(C.softmax(t.normal(5, 7, scale=2.0)))


@check("softmax", "works on a single vector", 1)
def _(t):
    """With no leading dimension the last axis is axis 0."""
    t.expect_match(C.softmax(t.normal(9)))


@check("softmax", "stable for logits near +1000", 1.5)
def _(t):
    """np.exp(1000) overflows; a stable softmax subtracts the row maximum first, whatever the
    number of axes: a matrix, a single vector and a 3-D array."""
    t.expect_matches([C.softmax(t.normal(4, 5) + 1000.0), C.softmax(t.normal(7) + 1000.0),
                      C.softmax(t.normal(2, 3, 4) + 1000.0)])


@check("softmax", "stable when rows have very different offsets and spreads", 1)
def _(t):
    """Each row needs its own maximum: one global maximum, the minimum or the mean overflows or
    underflows."""
    z = t.normal(4, 6) + np.array([[-1000.0], [0.0], [40.0], [900.0]])
    z[1] *= 1000.0  # one row spans a few thousand, and one entry is far above the others:
    z[1, t.rng.integers(6)] += 1e4  # its maximum is thousands above its mean
    t.expect_match(C.softmax(z))


@check("softmax", "works over the last axis of a 3-D array", 1)
def _(t):
    """Attention with several heads calls softmax on (A, N, N) arrays."""
    t.expect_match(C.softmax(t.normal(2, 3, 5, scale=2.0)))


@check("softmax", "accepts float32 logits", 0.5, tol=FLOAT32,
       needs='matches the reference on a matrix of logits')
def _(t):
    """Models often run in float32; the result must stay a distribution."""
    t.expect_float32_close(C.softmax, t.normal(3, 6, scale=3.0))


@check("softmax", "does not modify its input", 0.5, tol=None,
       needs='matches the reference on a matrix of logits')
def _(t):
    """Callers reuse their logits; in-place updates corrupt them."""
    t.expect_inputs_unchanged(C.softmax(t.normal(3, 4) + 50.0))


# --------------------------------------------------------------- scaled_dot_product_attention

def qkv(t, n, d_k, d_v):
    return t.normal(n, d_k), t.normal(n, d_k), t.normal(n, d_v)


def with_score(Q, K, i, j, value):
    """Q with row i changed so that the score of query i on key j, Q[i]·K[j] / √d_k, is `value`."""
    Q = Q.copy()
    Q[i] = K[j] * value * np.sqrt(K.shape[-1]) / (K[j] @ K[j])
    return Q


@check("scaled_dot_product_attention", "returns (output, weights) with the right shapes", 1, tol=None)
def _(t):
    """Callers unpack two arrays: (N, d_v) output and (N, N) weights."""
    got = t.student(C.attention(*qkv(t, 5, 4, 3)))
    t.expect_arrays(got, [(5, 3), (5, 5)])


@check("scaled_dot_product_attention", "matches the reference when d_v = d_k", 2)
def _(t):
    """Eq. 8.33 on a small square problem."""
    t.expect_match(C.attention(*qkv(t, 5, 4, 4)))


@check("scaled_dot_product_attention", "matches the reference when d_v != d_k", 2)
def _(t):
    """The scale is the key width d_k, whatever the value width d_v."""
    t.expect_match(C.attention(*qkv(t, 6, 8, 3)))


@check("scaled_dot_product_attention", "every row of the weights is a distribution", 1, tol=None)
def _(t):
    """Weights are non-negative and sum to 1 over the keys (the last axis)."""
    got = t.student(C.attention(*qkv(t, 6, 4, 4)))
    weights = got[1] if isinstance(got, tuple) and len(got) == 2 else None
    if not isinstance(weights, np.ndarray) or weights.shape != (6, 6):
        t.fail("the weights are not an (N, N) array")
    if (weights < -1e-12).any() or not np.allclose(weights.sum(axis=-1), 1.0, atol=1e-9):
        t.fail(f"row sums {np.round(weights.sum(axis=-1)[:3], 4)}...; each row must sum to 1")


@check("scaled_dot_product_attention", "a sequence of length 1", 1)
def _(t):
    """One token attends only to itself: weight 1, output = its value (halfway between two
    float32 numbers, so that an output computed in float32 misses it whatever the draw)."""
    Q, K, V = qkv(t, 1, 4, 3)
    t.expect_match(C.attention(Q, K, halfway_float32(V)))


def with_scores(t, S, d_k):
    """(Q, K) whose scaled scores Q Kᵀ / √d_k are exactly the (N, N) matrix S, for d_k >= N:
    K = √d_k U for U with orthonormal rows, Q = S U."""
    U = np.linalg.qr(t.normal(d_k, len(S)))[0].T
    return S @ U, np.sqrt(d_k) * U


def row_shifts(t, n):
    """n shifts from 1500 to 3000, evenly spaced, in a random order: np.exp of a row shifted so
    overflows, and one maximum for all rows (3000) leaves the row at 1500 nothing but zeros."""
    return 1500.0 * (1.0 + t.rng.permutation(np.linspace(0.0, 1.0, n)))


def shifted_rows(t, n):
    """(n, n) scores of spread about 1, each row shifted by its own `row_shifts`: softmax ignores
    a row's shift, so the weights are those of the moderate scores (every mistake shows as in
    the value checks), and a finite mask (-100 to -1000, or 0) stays far below every row."""
    return row_shifts(t, n)[:, None] + t.normal(n, n)


@check("scaled_dot_product_attention", "stable for large scores", 1)
def _(t):
    """Scores in the thousands must not overflow: each query's scores are shifted by its own
    1500 to 3000 (the same for all its keys), so the weights are those of moderate scores."""
    t.expect_match(C.attention(*with_scores(t, shifted_rows(t, 5), 8), t.normal(5, 4)))


@check("scaled_dot_product_attention", "accepts float32 inputs", 1, tol=FLOAT32,
       needs='matches the reference when d_v != d_k')
def _(t):
    """The same computation in single precision."""
    t.expect_float32_close(C.attention, *qkv(t, 5, 4, 3))


@check("scaled_dot_product_attention", "does not modify Q, K or V", 1, tol=None,
       needs='matches the reference when d_v != d_k')
def _(t):
    """The caller's projections are reused by other heads and layers."""
    t.expect_inputs_unchanged(C.attention(*qkv(t, 4, 4, 3)))


# -------------------------------------------------------------------------- causal_attention

def causal(*arrays):
    return C.attention(*arrays, causal=True)


@check("causal_attention", "returns (output, weights) with the right shapes", 1, tol=None)
def _(t):
    """(N, d_v) output and (N, N) weights."""
    got = t.student(causal(*qkv(t, 5, 4, 3)))
    t.expect_arrays(got, [(5, 3), (5, 5)])


@check("causal_attention", "matches the reference", 2)
def _(t):
    """Eqs. 8.33-8.34: scaled scores, -inf above the diagonal, softmax, weighted values."""
    t.expect_match(causal(*qkv(t, 6, 4, 4)))


@check("causal_attention", "matches the reference when d_v != d_k", 1)
def _(t):
    """The scale is sqrt(d_k) here too."""
    t.expect_match(causal(*qkv(t, 5, 3, 6)))


@check("causal_attention", "zero weight on the future, rows still sum to 1", 1, tol=None)
def _(t):
    """The upper triangle is exactly zero and each row renormalises over j <= i."""
    got = t.student(causal(*qkv(t, 6, 4, 4)))
    weights = got[1] if isinstance(got, tuple) and len(got) == 2 else None
    if not isinstance(weights, np.ndarray) or weights.shape != (6, 6):
        t.fail("the weights are not an (N, N) array")
    future = np.triu(weights, k=1)
    if np.abs(future).max() > 1e-12:
        i, j = np.unravel_index(np.abs(future).argmax(), future.shape)
        t.fail(f"weights[{i}, {j}] = {weights[i, j]:.3g}: position {i} attends to the later position {j}")
    if not np.allclose(weights.sum(axis=-1), 1.0, atol=1e-9):
        t.fail(f"row sums {np.round(weights.sum(axis=-1), 4)}; each row must sum to 1")


@check("causal_attention", "earlier outputs ignore later positions", 2, tol=None)
def _(t):
    """Changing queries, keys and values after position k leaves output rows 0..k unchanged
    and changes the later rows."""
    Q, K, V = qkv(t, 7, 4, 4)
    Q2, K2, V2 = Q.copy(), K.copy(), V.copy()
    for M in (Q2, K2, V2):
        M[4:] += t.normal(3, 4, scale=3.0)
    expect_rows_unaffected_by_future(t, causal(Q, K, V), causal(Q2, K2, V2), 3, "Q, K and V")


@check("causal_attention", "a sequence of length 1", 0.5)
def _(t):
    """A single token: its one weight is 1 (its value halfway between two float32 numbers, so
    that an output computed in float32 misses it whatever the draw)."""
    Q, K, V = qkv(t, 1, 4, 2)
    t.expect_match(causal(Q, K, halfway_float32(V)))


@check("causal_attention", "masked entries stay zero for large scores", 1)
def _(t):
    """Position 0's only allowed score, its own, is -5000 and its scores on the future are 0
    whatever the draw (the later keys are orthogonal to its own): a mask that leaves them above
    -5000 (-100, -1000, set or added, or a 0/1 mask multiplied in) outweighs it; -1e4 or lower
    does not. The other scores are moderate, so every other mistake shows as in the value checks
    (with scores of a few hundred, a wrong scale passed or failed with the draw)."""
    Q, K, V = qkv(t, 6, 4, 4)
    K[1:] -= np.outer(K[1:] @ K[0], K[0]) / (K[0] @ K[0])
    t.expect_match(causal(with_score(Q, K, 0, 0, -5000.0), K, V))


@check("causal_attention", "stable for scores in the thousands", 0.5)
def _(t):
    """np.exp overflows above 709: the softmax must subtract each row's maximum here too. Each
    query's allowed scores are shifted by its own 1500 to 3000 (the weights are those of
    moderate scores), and every future score is 1000 below its row's maximum, so a mask is judged by the
    check above, not here (Q Kᵀ / √d_k is the chosen score matrix)."""
    n = 6
    S = shifted_rows(t, n)
    future = np.triu(np.ones((n, n), dtype=bool), 1)
    S = np.where(future, np.where(future, -np.inf, S).max(-1, keepdims=True) - 1000.0, S)
    t.expect_match(causal(*with_scores(t, S, 7), t.normal(n, 4)))


@check("causal_attention", "accepts float32 inputs", 0.5, tol=FLOAT32,
       needs='matches the reference')
def _(t):
    """The same computation in single precision."""
    t.expect_float32_close(causal, *qkv(t, 5, 4, 4))


@check("causal_attention", "does not modify Q, K or V", 0.5, tol=None,
       needs='matches the reference')
def _(t):
    """Adding the mask to the scores must not touch the inputs."""
    t.expect_inputs_unchanged(causal(*qkv(t, 4, 4, 4)))


# ------------------------------------------------------------------------ MultiHeadAttention

def mha_case(t, n, d_model, n_heads, causal=None):
    return C.mha(t.normal(n, d_model), C.mha_weights(t.rng, d_model), n_heads, causal)


@check("MultiHeadAttention", "forward returns (N, d_model)", 1, tol=None)
def _(t):
    """The output goes back into the residual stream, so it has the input's shape."""
    t.expect_array(t.student(mha_case(t, 5, 12, 3)), (5, 12))


@check("MultiHeadAttention", "one head, no mask", 2)
def _(t):
    """With A = 1 this is attention followed by the output projection W_O."""
    t.expect_match(mha_case(t, 5, 4, 1, causal=False))


@check("MultiHeadAttention", "three heads, N, d, A and d_k all different", 4)
def _(t):
    """N = 5, d = 12, A = 3, d_k = 4: head c uses columns c*d_k:(c+1)*d_k (eqs. 8.35-8.37)."""
    t.expect_match(mha_case(t, 5, 12, 3, causal=False))


@check("MultiHeadAttention", "four heads with causal=True", 3)
def _(t):
    """Every head masks the future before its softmax."""
    t.expect_match(mha_case(t, 7, 12, 4, causal=True))


@check("MultiHeadAttention", "causal defaults to False", 1)
def _(t):
    """forward(X) without the keyword is full (bidirectional) attention."""
    t.expect_match(mha_case(t, 6, 8, 2))


@check("MultiHeadAttention", "with causal=True, earlier outputs ignore later positions", 2, tol=None)
def _(t):
    """Changing rows of X after position k leaves output rows 0..k unchanged and changes the
    later rows. In the second case position 0's own score in head 0 is -5000 and its scores on
    the later positions are 0 whatever the draw: a finite mask above -5000 (-100, -1000) lets
    the future in, as in causal_attention."""
    weights = C.mha_weights(t.rng, 8)
    X = t.normal(6, 8)
    X2 = X.copy()
    X2[3:] += t.normal(3, 8, scale=3.0)
    expect_rows_unaffected_by_future(t, C.mha(X, weights, 2, True), C.mha(X2, weights, 2, True), 2, "X")
    X, weights = own_score_far_below(t, 6, 8, 2, 5000.0)
    X2 = X.copy()
    X2[1:, 4:] += t.normal(5, 4, scale=3.0)      # head 1's columns: head 0's scores stay as they are
    expect_rows_unaffected_by_future(t, C.mha(X, weights, 2, True), C.mha(X2, weights, 2, True), 0, "X")


def own_score_far_below(t, n, d_model, n_heads, gap):
    """(X, weights) where, in head 0, position 0's own score is -gap and its scores on every
    later position are 0: W_Q = aI, W_K = -aI, and the later rows' head-0 columns orthogonal to
    row 0's, whose length makes a^2 |u|^2 / sqrt(d_k) = gap."""
    d_k, a = d_model // n_heads, 10.0
    X = t.normal(n, d_model)
    u = X[0, :d_k]
    X[1:, :d_k] -= np.outer(X[1:, :d_k] @ u, u) / (u @ u)
    X[0, :d_k] = u * np.sqrt(gap * np.sqrt(d_k)) / (a * np.linalg.norm(u))
    _, _, W_V, W_O = C.mha_weights(t.rng, d_model)
    return X, (a * np.eye(d_model), -a * np.eye(d_model), W_V, W_O)


@check("MultiHeadAttention", "as many heads as dimensions (d_k = 1)", 1)
def _(t):
    """The extreme split: each head is one column wide."""
    t.expect_match(mha_case(t, 4, 6, 6, causal=True))


@check("MultiHeadAttention", "a sequence of length 1", 1)
def _(t):
    """One token: every head returns its value; the output is X W_V W_O."""
    t.expect_match(mha_case(t, 1, 8, 2, causal=True))


@check("MultiHeadAttention", "stable for large activations", 1)
def _(t):
    """Scores in the thousands: feature 0 of every position is 1 and feature 1 between 1 and 2;
    in each head, the first key coordinate reads feature 0 alone (every key has 1 there) and the
    first query coordinate 1500 √d_k times feature 1 alone, and no other query or value reads
    feature 0. So each query's scores in each head are shifted by its own 1500 to 3000, the same for all
    keys: a softmax without its row maximum overflows, the weights are those of moderate scores,
    and a finite mask stays far below every row."""
    n, d_model, n_heads = 5, 8, 2
    X = t.normal(n, d_model)
    X[:, 0], X[:, 1] = 1.0, row_shifts(t, n) / 1500.0
    W_Q, W_K, W_V, W_O = C.mha_weights(t.rng, d_model)
    W_Q[0], W_V[0] = 0.0, 0.0
    for first in range(0, d_model, d_model // n_heads):
        W_Q[:, first], W_K[:, first] = 0.0, 0.0
        W_Q[1, first], W_K[0, first] = 1500.0 * np.sqrt(d_model // n_heads), 1.0
    t.expect_match(C.mha(X, (W_Q, W_K, W_V, W_O), n_heads, causal=True))


@check("MultiHeadAttention", "accepts float32 inputs", 1, tol=FLOAT32,
       needs='four heads with causal=True')
def _(t):
    """X and the weights in single precision."""
    weights = C.mha_weights(t.rng, 8)
    t.expect_float32_close(lambda X, W: C.mha(X, W, 2, True), t.normal(5, 8), weights)


@check("MultiHeadAttention", "does not modify X or the weights", 1, tol=None,
       needs='four heads with causal=True')
def _(t):
    """The weights are parameters; forward only reads them."""
    t.expect_inputs_unchanged(mha_case(t, 5, 8, 2, causal=True))


# ----------------------------------------------------------------------- positional_encoding

@check("positional_encoding", "returns a float array of shape (max_len, d_model)", 1, tol=None)
def _(t):
    """One row per position, one column per dimension."""
    t.expect_array(t.student(C.positional_encoding(7, 6)), (7, 6))


@check("positional_encoding", "position 0 is [0, 1, 0, 1, ...]", 1)
def _(t):
    """sin(0) = 0 in the even columns, cos(0) = 1 in the odd ones: positions start at 0."""
    got = t.student(C.positional_encoding(6, 8))
    t.expect_array(got, (6, 8), kinds="biuf")    # the dtype is the first check's business
    problem = _table_problem(t, got[:1], t.reference(C.positional_encoding(6, 8))[:1], 6)
    if problem:
        t.fail(f"row 0: {problem}")


@check("positional_encoding", "even columns hold the sines", 1)
def _(t):
    """PE[pos, 2m] = sin(pos / 10000^(2m/d))."""
    got = t.student(C.positional_encoding(12, 8))
    t.expect_array(got, (12, 8), kinds="biuf")    # the dtype is the first check's business
    problem = _table_problem(t, got[:, 0::2], t.reference(C.positional_encoding(12, 8))[:, 0::2], 12)
    if problem:
        t.fail(f"even columns: {problem}")


@check("positional_encoding", "odd columns hold the cosines", 1)
def _(t):
    """PE[pos, 2m+1] = cos(pos / 10000^(2m/d)), the same frequency as column 2m."""
    got = t.student(C.positional_encoding(12, 8))
    t.expect_array(got, (12, 8), kinds="biuf")    # the dtype is the first check's business
    problem = _table_problem(t, got[:, 1::2], t.reference(C.positional_encoding(12, 8))[:, 1::2], 12)
    if problem:
        t.fail(f"odd columns: {problem}")


def _table_problem(t, got, expected, max_len: int) -> str:
    """The check's tolerance; a table of float32 numbers (NumPy's float64 is not asked for;
    the array may be float64) is judged to their precision: float32 keeps about 7 digits of
    each angle pos / 10000^(2m/d), so the sines may be off by ROUNDING float32 steps of the
    largest angle, max_len - 1."""
    tol = t.check.tol
    single = float32_numbers(got)
    atol = tol.atol + (ROUNDING * float(np.finfo(np.float32).eps) * max(max_len - 1, 1) if single else 0.0)
    return mismatch(got, expected, tol.rtol, atol)


@check("positional_encoding", "matches the reference on a small table", 3)
def _(t):
    """max_len = 10, d = 8: every frequency and phase (a float32 table to float32's precision)."""
    _expect_table(t, 10, 8)


@check("positional_encoding", "matches the reference on a long, wide table", 2)
def _(t):
    """max_len = 128, d = 64: the slow frequencies only show in the high columns (a float32 table
    to float32's precision)."""
    _expect_table(t, 128, 64)


def _expect_table(t, max_len: int, d_model: int) -> None:
    call = C.positional_encoding(max_len, d_model)
    problem = _table_problem(t, t.student(call), t.reference(call), max_len)
    if problem:
        t.fail(f"{call.describe()}: {problem}", firm=True)


@check("positional_encoding", "a table of one position", 1)
def _(t):
    """max_len = 1 is just position 0."""
    t.expect_match(C.positional_encoding(1, 10))


# -------------------------------------------------------------------------------- layer_norm

def ln_params(t, d):
    return 1.0 + 0.5 * t.normal(d), 0.5 * t.normal(d)


def wide_rows(t, *shape):
    """Rows of variance exactly 10^6 (drawn, standardised, times 1000): the default eps moves
    the result by about 1e-11, below every tolerance, also where beta nearly cancels gamma x̂,
    so only the two eps checks judge eps."""
    z = t.normal(*shape)
    return 1e3 * (z - z.mean(-1, keepdims=True)) / z.std(-1, keepdims=True)


@check("layer_norm", "returns a float array of the input's shape", 0.5, tol=None)
def _(t):
    """Normalisation keeps the shape."""
    t.expect_array(t.student(C.layer_norm(t.normal(3, 5))), (3, 5))


@check("layer_norm", "default gamma and beta", 1.5)
def _(t):
    """Each row standardised with the biased variance (eq. 8.25). Here and in the next checks
    the rows vary widely (variance 10^6), so eps does not show: the two eps checks judge it."""
    t.expect_match(C.layer_norm(wide_rows(t, 4, 6) + 500.0 * t.normal(4, 1)))


@check("layer_norm", "non-default gamma and beta", 1.5)
def _(t):
    """Scale by gamma, then shift by beta, feature by feature."""
    t.expect_match(C.layer_norm(wide_rows(t, 4, 6), *ln_params(t, 6)))


@check("layer_norm", "gamma given, beta left at its default", 0.5)
def _(t):
    """gamma and beta are optional one by one: beta defaults to zeros when only gamma is given."""
    t.expect_match(C.layer_norm(wide_rows(t, 3, 6), 1.0 + 0.5 * t.normal(6)))


@check("layer_norm", "beta given, gamma left at its default", 0.5)
def _(t):
    """beta shifts even when gamma is left out: gamma then defaults to ones."""
    t.expect_match(C.layer_norm(wide_rows(t, 3, 6), beta=0.5 * t.normal(6)))


@check("layer_norm", "eps = 0.1 is used inside the square root", 1.5)
def _(t):
    """With a large eps, sqrt(var + eps) and sqrt(var) + eps differ clearly. gamma is ones and
    beta zeros: a mistake with gamma or beta fails the checks that name them, not this one."""
    t.expect_match(C.layer_norm(t.normal(4, 6, scale=0.3), np.ones(6), np.zeros(6), eps=0.1))


@check("layer_norm", "rows with a small variance (default eps)", 1)
def _(t):
    """When var is close to eps, where eps goes matters."""
    t.expect_match(C.layer_norm(t.normal(3, 8, scale=3e-3) + 1.0))


@check("layer_norm", "works over the last axis of a 3-D array", 1)
def _(t):
    """(batch, N, d) inputs normalise each d-vector (gamma ones and beta zeros: their own checks
    judge them)."""
    t.expect_match(C.layer_norm(wide_rows(t, 2, 3, 6), np.ones(6), np.zeros(6)))


@check("layer_norm", "accepts float32 inputs", 1, tol=FLOAT32,
       needs='non-default gamma and beta')
def _(t):
    """The same computation in single precision."""
    t.expect_float32_close(C.layer_norm, t.normal(4, 6, scale=2.0), *ln_params(t, 6))


@check("layer_norm", "does not modify x, gamma or beta", 1, tol=None,
       needs='non-default gamma and beta')
def _(t):
    """Subtracting the mean in place would change the residual stream."""
    t.expect_inputs_unchanged(C.layer_norm(wide_rows(t, 3, 6) + 500.0, *ln_params(t, 6)))


# ------------------------------------------------------------------------------- feedforward

def ffn_params(t, d, d_ff, bias=True):
    b = (lambda n: 0.5 * t.normal(n)) if bias else np.zeros
    return (t.normal(d, d_ff) / np.sqrt(d), b(d_ff), t.normal(d_ff, d) / np.sqrt(d_ff), b(d))


@check("feedforward", "returns a float array of the input's shape", 0.5, tol=None)
def _(t):
    """The FFN maps each d_model vector back to d_model."""
    t.expect_array(t.student(C.feedforward(t.normal(4, 6), *ffn_params(t, 6, 10))), (4, 6))


@check("feedforward", "matches the reference with zero biases", 1.5)
def _(t):
    """ReLU(x W1) W2, with pre-activations well above 6 (a ReLU capped at 6 is another function):
    the largest is at least 9 whatever the draw."""
    x, (W1, b1, W2, b2) = t.normal(5, 6, scale=4.0), ffn_params(t, 6, 12, bias=False)
    top = (x @ W1).max()
    t.expect_match(C.feedforward(x * (9.0 / top if 0 < top < 9.0 else 1.0), W1, b1, W2, b2))


@check("feedforward", "matches the reference with biases and negative pre-activations", 2)
def _(t):
    """ReLU(x W1 + b1) W2 + b2 (eq. 8.21): the bias goes inside the ReLU."""
    W1, b1, W2, b2 = ffn_params(t, 6, 12)
    t.expect_match(C.feedforward(t.normal(5, 6), W1, b1 - 0.5, W2, b2))


@check("feedforward", "works on a 3-D input", 1)
def _(t):
    """(batch, N, d_model) inputs: the same network at every position."""
    t.expect_match(C.feedforward(t.normal(2, 3, 6), *ffn_params(t, 6, 8)))


@check("feedforward", "accepts float32 inputs", 0.5, tol=FLOAT32,
       needs='matches the reference with biases and negative pre-activations')
def _(t):
    """The same computation in single precision."""
    t.expect_float32_close(C.feedforward, t.normal(4, 6), *ffn_params(t, 6, 10))


@check("feedforward", "does not modify its inputs", 0.5, tol=None,
       needs='matches the reference with biases and negative pre-activations')
def _(t):
    """An in-place ReLU on x W1 is fine; on x itself it is not."""
    t.expect_inputs_unchanged(C.feedforward(t.normal(4, 6), *ffn_params(t, 6, 10)))


# -------------------------------------------------------------------------- TransformerBlock

@check("TransformerBlock", "forward returns (N, d_model)", 1, tol=None)
def _(t):
    """A block maps the residual stream to a stream of the same shape."""
    got = t.student(C.block(t.normal(5, 8), C.block_params(t.rng, 8, 16), 2))
    t.expect_array(got, (5, 8))


@check("TransformerBlock", "default layer-norm parameters", 3)
def _(t):
    """Eqs. 8.40-8.45 with gamma = 1, beta = 0."""
    t.expect_match(C.block(t.normal(5, 8), C.block_params(t.rng, 8, 16, ln_default=True), 2))


@check("TransformerBlock", "distinct parameters in the two layer norms", 3)
def _(t):
    """ln1_* normalises the attention input, ln2_* the FFN input."""
    t.expect_match(C.block(t.normal(5, 8), C.block_params(t.rng, 8, 16), 2))


@check("TransformerBlock", "another shape: N = 7, d = 12, A = 3, d_ff = 20", 2)
def _(t):
    """Nothing may depend on a particular size."""
    t.expect_match(C.block(t.normal(7, 12), C.block_params(t.rng, 12, 20), 3))


@check("TransformerBlock", "earlier outputs ignore later positions", 2, tol=None)
def _(t):
    """The block's attention is causal; each output row still depends on its own position."""
    params = C.block_params(t.rng, 8, 16)
    X = t.normal(6, 8)
    X2 = X.copy()
    X2[4:] += t.normal(2, 8, scale=3.0)
    expect_rows_unaffected_by_future(t, C.block(X, params, 2), C.block(X2, params, 2), 3, "x")


@check("TransformerBlock", "a sequence of length 1", 1)
def _(t):
    """A single position still goes through both sub-layers."""
    t.expect_match(C.block(t.normal(1, 8), C.block_params(t.rng, 8, 16), 2))


@check("TransformerBlock", "accepts float32 inputs", 1, tol=FLOAT32,
       needs='distinct parameters in the two layer norms')
def _(t):
    """The residual stream in single precision."""
    x = t.normal(5, 8)
    params = C.block_params(t.rng, 8, 16)
    t.expect_float32_close(lambda x: C.block(x, params, 2), x)


@check("TransformerBlock", "does not modify x or the parameters", 1, tol=None,
       needs='distinct parameters in the two layer norms')
def _(t):
    """`x += ...` would change the caller's residual stream."""
    t.expect_inputs_unchanged(C.block(t.normal(5, 8), C.block_params(t.rng, 8, 16), 2))


# ------------------------------------------------------------------------- MiniTransformerLM

def lm_case(t, vocab_size=11, d_model=8, n_heads=2, n_layers=2, max_len=16, final_default=True):
    return C.lm_params(t.rng, reference.positional_encoding, vocab_size, d_model, n_heads,
                       n_layers, max_len, final_default)


def token_ids(t, n, vocab_size):
    return t.rng.integers(0, vocab_size, size=n)


@check("MiniTransformerLM", "forward returns logits of shape (N, vocab_size)", 1, tol=None)
def _(t):
    """One row of next-token logits per input position."""
    got = t.student(C.lm(token_ids(t, 6, 11), lm_case(t)))
    t.expect_array(got, (6, 11))


@check("MiniTransformerLM", "matches the reference", 3)
def _(t):
    """Embed, add positions from 0, run the blocks, final layer norm, H E^T (eq. 8.46)."""
    t.expect_match(C.lm(token_ids(t, 6, 11), lm_case(t)))


@check("MiniTransformerLM", "non-default final layer norm", 2)
def _(t):
    """final_ln_gamma and final_ln_beta are applied before the head."""
    t.expect_match(C.lm(token_ids(t, 6, 11), lm_case(t, final_default=False)))


@check("MiniTransformerLM", "another configuration: |V| = 13, d = 12, A = 3, 3 layers", 2)
def _(t):
    """All blocks, in order."""
    params = lm_case(t, vocab_size=13, d_model=12, n_heads=3, n_layers=3, max_len=20)
    t.expect_match(C.lm(token_ids(t, 9, 13), params))


@check("MiniTransformerLM", "logits at position i ignore later tokens", 2, tol=None)
def _(t):
    """A language model predicts token i+1 from tokens 0..i: from token i too, not from later ones."""
    params = lm_case(t)
    ids = token_ids(t, 8, 11)
    ids2 = ids.copy()
    ids2[5:] = (ids2[5:] + 1 + t.rng.integers(0, 9, size=3)) % 11
    expect_rows_unaffected_by_future(t, C.lm(ids, params), C.lm(ids2, params), 4, "the tokens")


@check("MiniTransformerLM", "a sequence of one token", 1)
def _(t):
    """The shortest input (a token other than 0, whose id is not its position)."""
    t.expect_match(C.lm(1 + token_ids(t, 1, 10), lm_case(t)))


@check("MiniTransformerLM", "a sequence of max_len tokens", 1)
def _(t):
    """The whole positional table is used."""
    t.expect_match(C.lm(token_ids(t, 16, 11), lm_case(t)))


@check("MiniTransformerLM", "accepts int32 token ids", 1,
       needs='matches the reference')
def _(t):
    """Any integer dtype indexes the embedding matrix."""
    ids = token_ids(t, 6, 11)
    params = lm_case(t)
    t.expect_same_as(C.lm(ids.astype(np.int32), params), C.lm(ids, params))


@check("MiniTransformerLM", "does not modify the token ids or the weights", 1, tol=None,
       needs='matches the reference')
def _(t):
    """forward only reads the parameters."""
    t.expect_inputs_unchanged(C.lm(token_ids(t, 6, 11), lm_case(t)))


suite.validate()
