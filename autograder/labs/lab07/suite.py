"""Lab 07 hidden checks: per graded name, what is tested, for how many points, at what tolerance.

Inputs are drawn from the check's generator (seeded by the check's identity and the
submission's salt). Expected values come from the float64 reference. `dropout` draws random
numbers, so it is checked by properties that hold for every correct use of the generator,
never against the reference's draws.
"""
import math

import numpy as np

from ...checks import EXACT, FLOAT32, FLOAT64, FOREIGN_RNG, IN_PLACE, SEED_IGNORED, Suite, Tolerance
from ...compare import apart, mismatch
from ...verdict import CheckFailed
from . import calls as C
from . import reference

POINTS = {"rope_frequencies": 8, "apply_rope": 18, "rope_attention": 20,
          "kv_attention_step": 22, "dropout": 14, "attention_support": 18}

suite = Suite(
    "lab07_rope_generation",
    reference={name: getattr(reference, name) for name in POINTS},
    points=POINTS,
    kinds={name: "function" for name in POINTS},
    output_names={"rope_attention": ("out", "weights"),
                  "kv_attention_step": ("out", "k_cache", "v_cache"),
                  "attention_support": ("entropy", "support", "normalised")},
)
check = suite.check

# Mistakes a check recognises itself, from a property of the result rather than by reproducing it
UPCAST = suite.recognised(
    "apply_rope", "float64_result",
    "a float32 x comes back as float64: cos and sin (or the angles) are float64 and an operation mixing "
    "them with x promotes the result, or the result is built in a float64 array (np.zeros or np.stack of "
    "float64 parts); the docstring asks for x's dtype",
    "cast cos and sin to x.dtype before they meet x, give any array you fill dtype=x.dtype (or cast the "
    "result back to x.dtype)")
P_KEEPS = suite.recognised(
    "dropout", "p_keeps_fraction",
    "p is used as the probability of keeping an entry: p is the probability of dropping it",
    "keep the entries where rng.random(x.shape) >= p and divide them by 1 - p")
BLOCKS = suite.recognised(
    "dropout", "blocks_dropped",
    "one decision is drawn per row or per column (a mask of fewer dimensions than x, broadcast), so whole "
    "rows or columns are kept or dropped together: every entry is decided on its own",
    "rng.random(x.shape) >= p, a mask of the shape of x")
MASK_KEPT = suite.recognised(
    "dropout", "mask_reused",
    "the mask is drawn once and reused by later calls (kept in a global, an attribute or a default "
    "argument): every call must draw a new mask from the `rng` it is given, of the shape of its x and "
    "for its p",
    "draw the mask from rng inside the function at every call, and store it nowhere")


# --------------------------------------------------------------------------- rope_frequencies

@check("rope_frequencies", "d_k = 16: the values base^(-2m/d_k)", 2.5)
def _(t):
    """Every rotation of the lab is an angle position * omega_m."""
    t.expect_match(C.rope_frequencies(16))


@check("rope_frequencies", "d_k/2 frequencies, the first equal to 1", 1, tol=None)
def _(t):
    """One frequency per pair of dimensions; pair 0 turns by one radian per position."""
    d_k = 2 * int(t.rng.integers(3, 9))
    got = t.student(C.rope_frequencies(d_k))
    t.expect_array(got, (d_k // 2,))
    if not np.isclose(got[0], 1.0, rtol=0, atol=1e-12):
        t.fail(f"rope_frequencies({d_k})[0] is {got[0]:.6g}; pair m = 0 has omega_0 = base**0 = 1")


@check("rope_frequencies", "other head widths: 2, 6, 64 and 128", 2.5)
def _(t):
    """The head width sets the progression: the last pair of a wide head turns far more slowly."""
    for d_k in (2, 6, 64, 128):
        t.expect_match(C.rope_frequencies(d_k))


@check("rope_frequencies", "another base", 2)
def _(t):
    """Long-context models raise the base (500,000 in LLaMA 3); the base must be the argument's."""
    t.expect_match(C.rope_frequencies(32, base=float(t.rng.choice([100.0, 500000.0]))))
    t.expect_match(C.rope_frequencies(8, base=float(np.round(t.rng.uniform(2.0, 50.0), 2))))


# --------------------------------------------------------------------------------- apply_rope

@check("apply_rope", "one row at position 1, d_k = 4", 2)
def _(t):
    """Pair (0, 1) turns by 1 radian, pair (2, 3) by 0.01 radian."""
    t.expect_match(C.apply_rope(t.normal(1, 4), np.array([1])))


@check("apply_rope", "positions 0 to N - 1, d_k = 8", 3)
def _(t):
    """Row i turns by i * omega_m: the queries and keys of one head."""
    t.expect_match(C.apply_rope(t.normal(6, 8), np.arange(6)))


@check("apply_rope", "a (B, A, N, d_k) batch of heads", 3)
def _(t):
    """rope_attention rotates all heads of all sequences in one call; the positions run along N."""
    t.expect_match(C.apply_rope(t.normal(2, 3, 5, 8), np.arange(5)))


@check("apply_rope", "positions that do not start at 0, and negative ones", 3)
def _(t):
    """Generation rotates one row at position t, and the backward pass rotates back with -i;
    negative positions come in a matrix, then in a stack of heads, so that a slip is seen to be
    about the sign, not about the axes."""
    t.expect_match(C.apply_rope(t.normal(3, 6), np.array([7, 3, 12])))
    t.expect_match(C.apply_rope(t.normal(3, 6), np.array([-2, 4, -5])))
    t.expect_match(C.apply_rope(t.normal(2, 2, 4), np.array([-2, -5])))


@check("apply_rope", "another base", 1.5)
def _(t):
    """The base is an argument: frequencies come from rope_frequencies(d_k, base)."""
    t.expect_match(C.apply_rope(t.normal(4, 6), np.arange(4), base=100.0))


# A property of rotations, not of precision: a stretch or a moved row is off by far more, while
# angles or a result rounded to float32 (the value checks' business) are off by about 1e-7.
ROTATION = Tolerance(rtol=1e-6, atol=1e-9)


@check("apply_rope", "position 0 leaves a row as it is, and every row keeps its length", 1.5, tol=ROTATION)
def _(t):
    """A rotation turns a vector without stretching it, and the rotation by 0 is the identity."""
    x = t.normal(5, 8)
    tol = t.check.tol
    got = t.student(C.apply_rope(x, np.arange(5)))
    t.expect_array(got, x.shape)
    if not np.allclose(got[0], x[0], rtol=tol.rtol, atol=tol.atol):
        t.fail(f"the row at position 0 changed ({tol}): the rotation by angle 0 must leave it as it is")
    lengths, expected = np.linalg.norm(got, axis=-1), np.linalg.norm(x, axis=-1)
    if not np.allclose(lengths, expected, rtol=tol.rtol, atol=tol.atol):
        worst = int(np.argmax(np.abs(lengths - expected)))
        after, before = apart(float(lengths[worst]), float(expected[worst]))
        t.fail(f"row {worst} has length {after} after the rotation, {before} before ({tol}): each pair "
               "must be turned by a rotation matrix [[cos, -sin], [sin, cos]]")


@check("apply_rope", "float32 queries stay float32", 2, tol=FLOAT32)
def _(t):
    """The model of Part 4 trains in float32; a float64 result doubles the cost of every layer."""
    x = t.normal(2, 6, 8)
    call = C.apply_rope(x.astype(np.float32), np.arange(6))
    got = t.student(call)
    t.expect_array(got, x.shape)
    if got.dtype != np.float32:
        t.fail(f"{call.describe()} returned {got.dtype}; keep the dtype of x (cast cos and sin to x.dtype)",
               cause=UPCAST if got.dtype == np.float64 else None)
    t.expect_match(call, against=C.apply_rope(x, np.arange(6)))


@check("apply_rope", "does not modify its input", 2, needs="positions 0 to N - 1, d_k = 8")
def _(t):
    """`x[..., 0::2] = ...` writes into the caller's queries, which the next line still reads."""
    t.expect_inputs_unchanged(C.apply_rope(t.normal(3, 8), np.arange(3)))


# ----------------------------------------------------------------------------- rope_attention

def attention_case(t, B, N, d, heads, scale=1.0):
    return C.rope_attention(t.normal(B, N, d), C.projections(t.rng, d, scale), heads)


@check("rope_attention", "one sequence, one head: N = 4, d = 8", 3)
def _(t):
    """Eq. 8.33 with rotated queries and keys, under the causal mask."""
    t.expect_match(attention_case(t, 1, 4, 8, 1, scale=2.0))


@check("rope_attention", "several heads: N = 6, d = 16, A = 4", 4)
def _(t):
    """Each head rotates its own d_k = 4 columns with the head-width frequencies."""
    t.expect_match(attention_case(t, 1, 6, 16, 4, scale=2.0))


@check("rope_attention", "a batch of 3 sequences, A = 2", 3)
def _(t):
    """Training runs B sequences at once; no sequence may see another."""
    t.expect_match(attention_case(t, 3, 5, 12, 2, scale=1.5))


def far_future_case(t, N=5, d=8, heads=2, score=700.0):
    """Inputs whose first query scores -`score` on its own key and 0 on every later one (in head 0;
    the other heads see zeros). Position 0 is not rotated, so this holds whatever the frequencies.
    A finite mask, added or set, of -100 or -500 leaves the future almost all the weight; -inf
    none. At 700, exp of a masked score still fits a float64: code that exponentiates the whole
    row and then zeroes the future stays right."""
    d_k = d // heads
    X = np.zeros((1, N, d))
    X[0, 0, 0] = math.sqrt(score * math.sqrt(d_k))   # position 0 only: later keys and queries are 0
    W_Q, W_K = np.zeros((d, d)), np.zeros((d, d))
    W_Q[0, 0], W_K[0, 0] = 1.0, -1.0                 # q_0 . k_0 / sqrt(d_k) = -score
    return C.rope_attention(X, (W_Q, W_K, t.normal(d, d), t.normal(d, d)), heads)


@check("rope_attention", "weights: rows sum to 1, zero after the diagonal", 2, tol=None)
def _(t):
    """A query may look at its own and earlier positions only (eq. 8.34), however far the allowed
    scores fall below the later ones: the mask is -inf, not a large finite number."""
    for call in (attention_case(t, 2, 5, 8, 2, scale=2.0), far_future_case(t)):
        got = t.student(call)
        t.expect_tuple(got, call)
        t.expect_array(got[1], call.args[0].shape[:1] + (2, 5, 5), "weights")
        if np.abs(np.triu(got[1], k=1)).max() > 1e-12:
            t.fail(f"{call.describe()}: weights are not 0 after the diagonal: add the causal mask, -inf "
                   "after the diagonal, before the softmax (a finite value such as -100 leaves later "
                   "positions weight where the allowed scores are far below it)")
        if not np.allclose(got[1].sum(axis=-1), 1.0, atol=1e-9):
            t.fail("the rows of weights do not sum to 1")


@check("rope_attention", "a single position (N = 1)", 2)
def _(t):
    """The first token sees only itself; its weight is 1 whatever the rotation."""
    t.expect_match(attention_case(t, 2, 1, 8, 2))


@check("rope_attention", "identical heads give identical weights", 4,
       needs="several heads: N = 6, d = 16, A = 4")
def _(t):
    """When every head has the same columns of W_Q, W_K and W_V, every head must compute the
    same weights. Rotating the full width before the split gives each head other frequencies
    (the bug of Part 1d)."""
    d, heads, N = 16, 4, 7
    d_k = d // heads
    blocks = [np.tile(t.normal(d, d_k, scale=2.0 / math.sqrt(d)), (1, heads)) for _ in range(3)]
    W_O = t.normal(d, d, scale=1.0 / math.sqrt(d))
    call = C.rope_attention(t.normal(1, N, d), (*blocks, W_O), heads)
    with t.needs_right_result():
        got = t.student(call)
        t.expect_tuple(got, call)
        t.expect_array(got[1], (1, heads, N, N), "weights")
    for a in range(1, heads):
        if not np.allclose(got[1][0, a], got[1][0, 0], rtol=1e-6, atol=1e-9):
            t.fail(f"heads 0 and {a} were given the same columns of W_Q, W_K and W_V but compute different "
                   "weights: each head must take its own d_k columns (columns a*d_k to (a+1)*d_k - 1) and "
                   "rotate them with the same frequencies as every other head, those of the head width d_k")
    t.credit_if_right(call, got)


@check("rope_attention", "does not modify its inputs", 2, needs="several heads: N = 6, d = 16, A = 4")
def _(t):
    """The layer's input is the residual stream, which the block adds back afterwards."""
    t.expect_inputs_unchanged(attention_case(t, 1, 4, 8, 2))


# -------------------------------------------------------------------------- kv_attention_step

NEW_TOKEN_WEIGHT = 0.01


def step_case(t, N, d, heads, position, scale=1.5):
    """A sequence X (N, d), the weights, and the call for position `position` with a correct
    cache. Drawn again (at most 200 times) until the new token's weight, in every head, is at
    least NEW_TOKEN_WEIGHT: a mistake about its key, value or position shows whatever the draw
    (with a weight of 1e-10, appending it twice went unseen)."""
    for _ in range(200):
        X, weights = t.normal(N, d), C.projections(t.rng, d, scale)
        attention = t.suite.reference_result(C.rope_attention(X[None, :position + 1], weights, heads))[1]
        if attention[0, :, position, position].min() >= NEW_TOKEN_WEIGHT:
            break
    x, k_cache, v_cache = C.cached(reference.apply_rope, X, weights, heads, position)
    return X, weights, C.kv_attention_step(x, k_cache, v_cache, weights, heads)


@check("kv_attention_step", "the first token: an empty cache (t = 0)", 3)
def _(t):
    """The first step starts from caches of shape (A, 0, d_k); its output attends to itself."""
    t.expect_match(step_case(t, 1, 8, 2, 0)[2])


@check("kv_attention_step", "t = 5, one head", 3)
def _(t):
    """Six keys after the step: five cached, one new."""
    t.expect_match(step_case(t, 6, 6, 1, 5)[2])


@check("kv_attention_step", "t = 9, four heads", 4)
def _(t):
    """Each head has its own cache slice; the new query is rotated at position t."""
    t.expect_match(step_case(t, 10, 16, 4, 9)[2])


@check("kv_attention_step", "the caches: old entries kept, the new key rotated at position t", 3)
def _(t):
    """The cache holds rotated keys; the new one is appended after the old ones, not rotated
    again later."""
    t.expect_items(step_case(t, 8, 12, 3, 7)[2], (1, 2))


@check("kv_attention_step", "the output is row t of rope_attention on the whole sequence", 4)
def _(t):
    """Cached decoding must give exactly what the full forward pass gives."""
    X, weights, call = step_case(t, 9, 8, 2, 8)
    got = t.student(call)
    t.expect_tuple(got, call)
    full = t.suite.reference_result(C.rope_attention(X[None], weights, 2))[0][0, 8]
    problem = mismatch(got[0], full, t.check.tol.rtol, t.check.tol.atol)
    if problem:
        t.fail(f"{call.describe()}: out differs from row 8 of rope_attention on the 9 positions: {problem}")


@check("kv_attention_step", "a long cache (t = 40)", 2)
def _(t):
    """The slow pairs matter only far from the start."""
    t.expect_match(step_case(t, 41, 8, 2, 40, scale=2.0)[2])


@check("kv_attention_step", "does not modify the caches it is given", 3, needs="t = 5, one head")
def _(t):
    """Writing the new key into the caller's cache (or resizing it) breaks the caller's copy."""
    t.expect_inputs_unchanged(step_case(t, 5, 8, 2, 4)[2])


# ------------------------------------------------------------------------------------ dropout

VALUES = "in training, every entry is 0 or x / (1 - p), and both occur"    # what property checks need

def dropped(t, call, shape):
    """The student's output for `call`: a float array of `shape`."""
    got = t.student(call)
    t.expect_array(got, shape)
    return got


def expect_dropout_values(t, x, got, p):
    """Every entry is 0 or x / (1 - p)."""
    kept = np.isclose(got, x / (1 - p), rtol=1e-9, atol=0)
    if not np.all(kept | (got == 0)):
        wrong = tuple(int(i) for i in np.argwhere(~(kept | (got == 0)))[0])
        t.fail(f"with p = {p}, entry {list(wrong)} is {got[wrong]:.6g}; every entry must be 0 or "
               f"x / (1 - p) = {x[wrong] / (1 - p):.6g}", cause=scaling_mistake(x, got, p))
    return kept


# The scale a kept entry gets, by the catalogued mistake that gives it (whatever the draws)
SCALES = {"not_rescaled": lambda p: 1.0, "multiplied_by_keep": lambda p: 1 - p,
          "divided_by_p": lambda p: 1 / p, "scaled_by_root": lambda p: 1 / math.sqrt(1 - p)}


def scaling_mistake(x, got, p):
    """The catalogued mistake whose scale every non-zero entry of `got` has (x times one
    factor), or None: the idea shows in the values whatever the mask was drawn with. Kept with
    probability p and divided by p is 'p keeps'."""
    nonzero = got != 0
    if nonzero.all() or not nonzero.any() or not np.all(np.isfinite(got)):
        return None
    ratio = got[nonzero] / x[nonzero]
    if not np.allclose(ratio, ratio[0], rtol=1e-9, atol=0):
        return None
    catalogue = {m.key: m for m in suite.parts["dropout"].mistakes}
    share = float(np.mean(~nonzero))
    keeps_p = abs(share - (1 - p)) < abs(share - p)
    if keeps_p:
        return catalogue["p_keeps"] if np.isclose(ratio[0], 1 / p, rtol=1e-9) else None
    return next((catalogue[key] for key, scale in SCALES.items() if np.isclose(ratio[0], scale(p), rtol=1e-9)), None)


@check("dropout", "evaluation returns the values of x", 1, tol=EXACT)
def _(t):
    """At evaluation nothing is dropped and nothing is scaled."""
    x = t.normal(4, 6)
    try:
        t.expect_match(C.dropout(x, 0.5, 1, training=False))
    except CheckFailed as failure:
        got = t.observed[-1][1]
        if isinstance(got, np.ndarray) and got.shape == x.shape and np.any(got == 0) and np.all(
                (got == 0) | np.isclose(got, 2 * x, rtol=1e-9, atol=0)):
            # dropout at evaluation: also in training (the flag unread) or only there (read backwards)?
            training = t.student(C.dropout(x, 0.5, 1))
            key = "flag_inverted" if np.array_equal(training, x) else "always_on"
            t.fail(str(failure), cause=next(m for m in suite.parts["dropout"].mistakes if m.key == key))
        raise
    t.expect_match(C.dropout(t.normal(3), 0.1, 2, training=False))


@check("dropout", "p = 0 returns the values of x", 0.5, tol=EXACT)
def _(t):
    """Nothing to drop, nothing to scale."""
    t.expect_match(C.dropout(t.normal(5, 3), 0.0, 3))


@check("dropout", VALUES, 3, tol=None)
def _(t):
    """Inverted dropout scales the kept entries up by 1 / (1 - p)."""
    x = t.normal(20, 30) + 3.0
    for p in (0.3, 0.6):
        got = dropped(t, C.dropout(x, p, 4), x.shape)
        if np.array_equal(got, x):      # x itself in training: nothing dropped, and at evaluation?
            at_evaluation = t.student(C.dropout(x, p, 4, training=False))
            key = "never_drops" if np.array_equal(at_evaluation, x) else "flag_inverted"
            t.fail(f"with p = {p}, every entry of 600 is x itself: in training, drop each entry with "
                   "probability p and divide the others by 1 - p",
                   cause=next(m for m in suite.parts["dropout"].mistakes if m.key == key))
        kept = expect_dropout_values(t, x, got, p)
        if kept.all() or not kept.any():
            t.fail(f"with p = {p}, {'every' if kept.all() else 'no'} entry of 600 was kept")


def expect_independent(t, got):
    """The dropped entries of `got` (2-D) are independent decisions: not whole rows or columns,
    not the same pattern in most rows."""
    zero = got == 0
    with t.needs_right_result():     # a mask that drops nothing (or everything) shows no pattern
        if not zero.any() or zero.all():
            t.fail(f"{'no' if not zero.any() else 'every'} entry of {zero.size} was dropped, so there is no "
                   "pattern to judge: in training, drop each entry with probability p")
    if set(np.unique(zero.mean(axis=1))) <= {0.0, 1.0} or set(np.unique(zero.mean(axis=0))) <= {0.0, 1.0}:
        t.fail("whole rows or whole columns are dropped together: draw one decision per entry "
               "(a mask of the shape of x)", cause=BLOCKS)
    if len({row.tobytes() for row in zero}) < len(zero) * 5 // 6:
        t.fail("many rows have the same pattern of dropped entries: draw a mask of the shape of x")


@check("dropout", "entries are dropped independently", 2, tol=None, needs=VALUES)
def _(t):
    """One decision per entry: not whole rows or columns, not the same pattern in every row,
    not a fixed number of entries (a one-entry x with p = 0.5 is dropped about half the time
    over 100 seeds, within 5 standard deviations)."""
    x = np.ones((60, 40))
    got = dropped(t, C.dropout(x, 0.5, 9), x.shape)
    try:
        expect_independent(t, got)
    except CheckFailed as failure:
        # whole rows or columns drawn from the generator change with the seed; a fixed pattern
        # (the rng unused) does not, and is the seed check's business
        if failure.cause is BLOCKS and np.array_equal(dropped(t, C.dropout(x, 0.5, 10), x.shape), got):
            raise CheckFailed(str(failure), firm=failure.firm) from None
        raise
    seeds = t.rng.choice(10**6, size=100, replace=False)
    for got in (one := t.students(C.dropout(np.ones(1), 0.5, int(seed)) for seed in seeds)):
        t.expect_array(got, (1,))
    times = sum(int(got[0] == 0) for got in one)
    if abs(times - 50) > 25:
        t.fail(f"with p = 0.5, a one-entry x was dropped by {times} of 100 generators; expected about 50: "
               "decide each entry on its own, do not drop a fixed number of entries")


@check("dropout", "the fraction dropped is p", 2.5, tol=None, needs="entries are dropped independently")
def _(t):
    """Each entry is dropped with probability p (within 5 standard deviations over 20,000
    independent entries)."""
    x = np.ones((100, 200))
    for p in (0.25, 0.7):
        got = dropped(t, C.dropout(x, p, int(t.rng.integers(1000))), x.shape)
        with t.needs_right_result():
            expect_independent(t, got)
        share, bound = float(np.mean(got == 0)), 5 * math.sqrt(p * (1 - p) / x.size)
        if abs(share - p) > bound:
            swapped = abs(share - (1 - p)) <= bound
            t.fail(f"with p = {p}, {share:.3f} of the entries were dropped; expected about {p}"
                   + (" (p is the probability of dropping, not of keeping)" if swapped else ""),
                   cause=P_KEEPS if swapped else None)


@check("dropout", "the mean is preserved", 2, tol=None, needs="entries are dropped independently")
def _(t):
    """E[dropout(x)] = x: the mean of 40,000 equal entries stays within 5 standard deviations."""
    x, p = np.full((200, 200), 2.0), 0.4
    got = dropped(t, C.dropout(x, p, int(t.rng.integers(1000))), x.shape)
    if not np.any(got == 0):
        t.fail("with p = 0.4 no entry of 40,000 was dropped: in training, drop each entry with probability p")
    with t.needs_right_result():
        expect_independent(t, got)
    spread = 2.0 * math.sqrt(p / (1 - p) / x.size)
    if abs(got.mean() - 2.0) > 5 * spread:
        kept = got[got != 0]
        why = ("scale the kept entries by 1 / (1 - p)" if not np.allclose(kept, 2.0 / (1 - p)) else
               f"the kept entries are x / (1 - p), but {np.mean(got == 0):.3f} of the entries were "
               f"dropped, not about p = {p}")
        share = float(np.mean(got == 0))
        swapped = abs(share - (1 - p)) <= 5 * math.sqrt(p * (1 - p) / x.size)
        t.fail(f"the mean of dropout(x) over 40,000 entries equal to 2 is {got.mean():.4f}; inverted "
               f"dropout keeps it at 2 ({why})", cause=P_KEEPS if swapped else None)


@check("dropout", "the same seed gives the same mask, another seed another", 2, tol=None, needs=VALUES)
def _(t):
    """All randomness comes from `rng`, so a run can be repeated."""
    x = t.normal(10, 10)
    first = dropped(t, C.dropout(x, 0.5, 21), x.shape)
    again = dropped(t, C.dropout(x, 0.5, 21), x.shape)
    other = dropped(t, C.dropout(x, 0.5, 22), x.shape)
    with t.needs_right_result():
        expect_dropout_values(t, x, first, 0.5)
    if not np.array_equal(first, again):
        t.fail("two generators made from the same seed gave different masks: draw with the `rng` you "
               "are given, never with np.random", cause=FOREIGN_RNG)
    if np.array_equal(first, other):
        # A function of its inputs alone (a seed of its own, a fixed pattern) gives x the same mask
        # again after a call on another shape; a mask kept from an earlier call, redrawn when the
        # shape changes, gives another one
        t.student(C.dropout(np.ones((3, 7)), 0.5, 24))
        later = dropped(t, C.dropout(x, 0.5, 22), x.shape)
        if not np.array_equal(later == 0, first == 0):
            t.fail("different seeds gave the same mask, but after a call on another shape x got another "
                   "mask: what is drawn depends on earlier calls, not on the `rng` of this one", cause=MASK_KEPT)
        t.fail("two different seeds gave the same mask: draw with the `rng` you are given", cause=SEED_IGNORED)


@check("dropout", "does not modify x", 1, tol=None, needs=VALUES)
def _(t):
    """`x *= mask` changes the caller's activations, which the backward pass needs."""
    x = t.normal(8, 8) + 1.0
    call = C.dropout(x, 0.5, 5)
    got, given = t.student_with_inputs(call)
    if not np.array_equal(given[0], x):
        t.fail(f"{call.describe()} modified x in place; compute into a new array instead", cause=IN_PLACE)
    t.expect_array(got, x.shape)
    with t.needs_right_result():     # leaving x alone earns nothing for code that computes nothing
        expect_dropout_values(t, x, got, 0.5)


# -------------------------------------------------------------------------- attention_support

def support_case(t, *shape, sharpness=1.0):
    return C.attention_support(C.causal_rows(t.rng, shape, sharpness))


@check("attention_support", "one-hot rows: entropy 0, support 1", 2)
def _(t):
    """A head that looks at one position has nothing to spread."""
    N = 5
    weights = np.zeros((2, N, N))
    for b in range(2):
        weights[b, np.arange(N), t.rng.integers(0, np.arange(N) + 1)] = 1.0
    t.expect_items(C.attention_support(weights), (0, 1))


@check("attention_support", "uniform causal rows: support i + 1, normalised 1", 3)
def _(t):
    """Evenly spread attention over i + 1 positions has entropy log2(i + 1)."""
    N = int(t.rng.integers(4, 9))
    t.expect_items(C.attention_support(np.tril(np.ones((N, N))) / np.arange(1, N + 1)[:, None]), (1, 2))


@check("attention_support", "random causal rows of a (B, A, N, N) batch", 4)
def _(t):
    """The layout of the heads of one layer in Part 5."""
    t.expect_match(support_case(t, 2, 3, 6, 6, sharpness=2.0))


@check("attention_support", "rows with exact zeros before the diagonal", 2)
def _(t):
    """0 log 0 counts as 0: a zero weight must not give nan."""
    weights = C.causal_rows(t.rng, (3, 6, 6), 2.0)
    weights[:, 3:, 1] = 0.0
    weights /= weights.sum(axis=-1, keepdims=True)
    t.expect_match(C.attention_support(weights))


@check("attention_support", "entropy in bits: two equal weights give 1 bit", 2)
def _(t):
    """The support 2^entropy counts positions only when the entropy is in bits."""
    weights = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.25, 0.25, 0.5]])
    t.expect_items(C.attention_support(weights), (0,))
    t.expect_items(support_case(t, 2, 5, 5), (0,))


@check("attention_support", "normalised by the i + 1 positions a query sees, not by N", 2,
       needs="random causal rows of a (B, A, N, N) batch")
def _(t):
    """Query i can see i + 1 positions, those of weight 0 included; dividing by N makes early
    queries look narrow. The student's own support (or the right one, if theirs is wrong)
    divided by i + 1 must be their normalised support, also in rows with exact zeros."""
    weights = C.causal_rows(t.rng, (4, 7, 7), 0.5)
    zeros = weights.copy()
    zeros[:, 4:, 1] = 0.0
    zeros /= zeros.sum(axis=-1, keepdims=True)
    seen = np.arange(1, 8)
    observed = []
    for call in (C.attention_support(weights), C.attention_support(zeros)):
        with t.needs_right_result():
            got = t.student(call)
            t.expect_arrays(got, [(4, 7)] * 3)
        if not any(np.allclose(got[2], support / seen, rtol=1e-9, atol=1e-12)
                   for support in (got[1], t.reference(call)[1])):
            t.fail(f"{call.describe()}: normalised is not support / (i + 1): query i sees i + 1 positions, "
                   "those of weight 0 included")
        observed.append((call, got))
    for call, got in observed:
        t.credit_if_right(call, got)


@check("attention_support", "a single query (N = 1)", 1)
def _(t):
    """The first position sees only itself: entropy 0, support 1, normalised 1."""
    t.expect_match(C.attention_support(np.ones((2, 1, 1))))


@check("attention_support", "does not modify the weights", 2, needs="rows with exact zeros before the diagonal")
def _(t):
    """`weights[weights == 0] = 1` (to avoid log 0) rewrites the caller's attention."""
    weights = C.causal_rows(t.rng, (2, 5, 5), 3.0)
    weights[:, 4, 2] = 0.0
    weights /= weights.sum(axis=-1, keepdims=True)
    t.expect_inputs_unchanged(C.attention_support(weights))


suite.validate()
