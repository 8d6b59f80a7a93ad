"""Lab 06 hidden checks: per graded name, what is tested, for how many points, at what tolerance.

Inputs are drawn from a generator seeded by the check's title, so every run and every student
sees the same hidden inputs. Expected values come from the reference in float64; the reference's
gradients agree with centred finite differences, so matching it is matching the true gradient.
The parts that use a random generator (get_batch, sample_token) are checked by properties that
hold for every correct way of using the generator, never against the reference's draws.
"""
import contextlib

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ... import verdict
from ...checks import EXACT, FLOAT32, FOREIGN_RNG, IN_PLACE, SEED_IGNORED, CheckFailed, Suite, Tolerance
from ...compare import kind, mismatch
from ...worker.invoke import Call
from . import calls as C
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
    output_names={"build_vocab": ("stoi", "itos"),
                  "get_batch": ("x", "y"),
                  "linear_backward": ("dx", "dW", "db"),
                  "layer_norm_backward": ("dx", "dgamma", "dbeta"),
                  "attention_backward": ("dx", "dW_Q", "dW_K", "dW_V", "dW_O"),
                  "adamw_update": ("p", "m", "v")},
)
check = suite.check


# -------------------------------------------------------------------------------- build_vocab

def expect_vocab(t, names):
    """stoi equals the reference's, and itos lists the same characters (a list, or any sequence
    of single characters: a string or a tuple index the same way)."""
    call = C.build_vocab(names)
    got = t.student(call)
    stoi, itos = t.reference(call)
    t.expect_tuple(got, call)
    problem = mismatch(got[0], stoi, 0, 0)
    if problem:
        t.fail(f"{call.describe()}: stoi: {problem}")
    listed = list(got[1]) if isinstance(got[1], (str, tuple)) else got[1]
    problem = mismatch(listed, itos, 0, 0)
    if problem:
        t.fail(f"{call.describe()}: itos: {problem}")


@check("build_vocab", "returns (stoi, itos): a dict and a list that invert each other", 0.5, tol=None)
def _(t):
    """decode and the model index with both: itos[stoi[ch]] == ch for every character, '.' too."""
    names = ["lena", "otto", "kai", "mirabel"]
    got = t.student(C.build_vocab(names))
    t.expect_tuple(got)
    stoi, itos = got
    if not isinstance(stoi, dict) or not isinstance(itos, list):
        t.fail(f"returned ({kind(stoi)}, {kind(itos)}); expected (a dict, a list)")
    characters = set("".join(names)) | {"."}
    if set(stoi) != characters or len(itos) != len(characters):
        t.fail(f"stoi has {len(stoi)} and itos {len(itos)} entries; the names use {len(characters)} "
               "characters, '.' included")
    wrong = [ch for ch in sorted(characters) if not 0 <= stoi[ch] < len(itos) or itos[stoi[ch]] != ch]
    if wrong:
        t.fail(f"itos[stoi[{wrong[0]!r}]] is not {wrong[0]!r}: itos must list the characters in id order")


@check("build_vocab", "'.' is 0, the letters follow in sorted order", 1.5, tol=None)
def _(t):
    """Every later part indexes embeddings and logits with these ids."""
    expect_vocab(t, ["zoe", "maya", "bob", "quinn", "wes", "ida"])


@check("build_vocab", "characters that sort before '.' still come after it", 1, tol=None)
def _(t):
    """An apostrophe and a hyphen sort before '.': '.' is 0 because it is the boundary token,
    not because of where it sorts."""
    expect_vocab(t, ["o'neil", "mary-jane", "ana", "d'arcy"])


@check("build_vocab", "all 26 letters get the ids 1 to 26", 1, tol=None)
def _(t):
    """The vocabulary of the real data set: |V| = 27."""
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))[t.rng.permutation(26)]
    expect_vocab(t, ["".join(letters[i:i + 4]) + "a" for i in range(0, 26, 4)])


# ------------------------------------------------------------------------------------- encode

VOCAB = reference.build_vocab(["kim", "lea", "noah", "ruth"])   # ids not in alphabetical positions


@check("encode", "ids of a name", 0.75, tol=EXACT)
def _(t):
    """One id per character, looked up in stoi."""
    t.expect_match(C.encode("noah", VOCAB[0]))


@check("encode", "repeated characters and the boundary token '.'", 0.5, tol=EXACT)
def _(t):
    """The training stream is '.' + '.'.join(names) + '.', encoded in one call."""
    t.expect_match(C.encode(".hannah.kim.", reference.build_vocab(["hannah", "kim"])[0]))


@check("encode", "a vocabulary in another order", 0.5, tol=EXACT)
def _(t):
    """The ids come from stoi, whatever order it gives the characters."""
    stoi = {ch: i for i, ch in enumerate(".zyxwvutsrqponmlkjihgfedcba")}
    t.expect_match(C.encode("luke", stoi))


@check("encode", "the empty string and a single character", 0.25, tol=EXACT)
def _(t):
    """Edge cases: no characters, one character."""
    t.expect_match(C.encode("", VOCAB[0]))
    t.expect_match(C.encode("r", VOCAB[0]))


# ------------------------------------------------------------------------------------- decode

@check("decode", "a string from a list of ids, and '' from an empty list", 1, tol=EXACT)
def _(t):
    """Every id becomes its character, '.' included."""
    t.expect_match(C.decode([5, 2, 0, 7, 3, 1], VOCAB[1]))
    t.expect_match(C.decode([], VOCAB[1]))


@check("decode", "a string from a NumPy array of int32 ids", 0.5, tol=EXACT)
def _(t):
    """Samples and batches come back as integer arrays."""
    t.expect_match(C.decode(np.array([6, 4, 0, 1, 8, 2], dtype=np.int32), VOCAB[1]))


@check("decode", "decode(encode(s)) == s, '.' at both ends", 0.5, tol=EXACT)
def _(t):
    """The two functions are inverses."""
    text = ".ruth.noah."
    t.expect_match(C.decode(reference.encode(text, VOCAB[0]), VOCAB[1]))


# ---------------------------------------------------------------------------------- get_batch

BLOCK = 6   # N of the get_batch checks


def batch_case(t, n_names=30, block_size=BLOCK):
    stream, starts = C.name_stream(t.rng, n_names)
    return stream, C.window_starts(stream, starts, block_size)


# Mistakes of get_batch that its checks recognise themselves: the draws are the student's own.
TARGETS_SHORT = suite.recognised(
    "get_batch", "targets_short", "y holds N - 1 tokens: its slice ends at s + N, one short; "
    "y = stream[s + 1 : s + N + 1] is x's window moved one token along",
    "y = stream[s + 1 : s + block_size + 1]")
WITHOUT_REPLACEMENT = suite.recognised(
    "get_batch", "without_replacement", "the starts are drawn without replacement (a permutation, or "
    "replace=False), so two rows of a batch never share a start: each row draws its own start from "
    "all of them, with replacement",
    "rng.choice(starts, size=batch_size) (replace=True is the default)")


def batch(t, call, kinds="iuf"):
    """The student's (x, y) for `call`: two arrays of shape (B, T) whose dtype kind is in `kinds`,
    or a failure. Only the first check asks for integers: the others judge the windows, and
    token ids held as floats are still windows of the stream."""
    got = t.student(call)
    shape = call.args[2:4]
    if isinstance(got, tuple) and len(got) == 2 and np.shape(got[0]) == shape and \
            np.shape(got[1]) == (shape[0], shape[1] - 1) and np.array_equal(got[1], np.asarray(got[0])[:, 1:]):
        t.fail(f"{call.describe()}: y has shape {np.shape(got[1])}; expected {shape}", cause=TARGETS_SHORT)
    t.expect_arrays(got, [shape] * 2, kinds=kinds)
    return got


def window_positions(t, stream, rows) -> list:
    """For each row, the positions p with stream[p : p + T] == row; a failure if there is none."""
    windows = sliding_window_view(stream, rows.shape[1])
    found = [np.flatnonzero((windows == row).all(axis=1)) for row in rows]
    for b, positions in enumerate(found):
        if positions.size == 0:
            t.fail(f"x[{b}] is not a window of consecutive tokens of the stream: "
                   "x[b] = stream[s : s + N] for a start s")
    return found


def at_starts(t, stream, starts, x) -> set:
    """The starts the rows of x begin at; a failure if a row begins elsewhere."""
    drawn = set()
    for b, positions in enumerate(window_positions(t, stream, x)):
        hits = np.intersect1d(positions, starts)
        if hits.size == 0:
            t.fail(f"x[{b}] is a window of the stream that does not begin at any of `starts`: "
                   "draw each window's start from `starts`")
        drawn.update(hits.tolist())
    return drawn


@check("get_batch", "returns (x, y): two integer arrays of shape (B, N), also for B > len(starts)", 0.5,
       tol=None)
def _(t):
    """The model embeds x, so it must hold integer ids; B rows of N tokens each, the starts drawn
    independently for each row (drawing them without replacement leaves too few rows)."""
    stream, starts = batch_case(t)
    batch(t, C.get_batch(stream, starts, 5, BLOCK, 3), kinds="iu")
    batch(t, C.get_batch(stream, starts[:3], 8, BLOCK, 6), kinds="iu")


@check("get_batch", "x is a window of the stream and y the same window one token later", 1.5, tol=None)
def _(t):
    """Position t of x must predict token t + 1: y[b] = stream[s + 1 : s + N + 1]. A target that
    does not follow its input teaches the model nothing. The starts are any positions here, not
    only those of a '.': a y whose last token is a '.' (0) is not x rolled by one then; never 0,
    so that windows one token early are still windows (the next check judges where they begin)."""
    stream, _ = batch_case(t)
    starts = 1 + np.sort(t.rng.choice(len(stream) - BLOCK - 1, size=20, replace=False))
    x, y = batch(t, C.get_batch(stream, starts, 8, BLOCK, 11))
    for b, positions in enumerate(window_positions(t, stream, x)):
        if not any(np.array_equal(y[b], stream[p + 1:p + BLOCK + 1]) for p in positions):
            t.fail(f"y[{b}] is not x[{b}]'s window moved one token along the stream: "
                   "y[b] = stream[s + 1 : s + N + 1]")


@check("get_batch", "every window begins at one of `starts`", 1.5, tol=None)
def _(t):
    """A training example starts at a name's '.', so every target sees its whole name so far."""
    stream, starts = batch_case(t)
    x, _ = batch(t, C.get_batch(stream, starts, 16, BLOCK, 5))
    at_starts(t, stream, starts, x)


@check("get_batch", "the same seed gives the same batch", 1, tol=None, needs="every window begins at one of `starts`")
def _(t):
    """All randomness comes from `rng`: np.random or an unseeded generator makes runs impossible
    to reproduce."""
    stream, starts = batch_case(t)
    call = C.get_batch(stream, starts, 8, BLOCK, 7)
    with t.needs_right_result():
        (x1, y1), (x2, y2) = batch(t, call), batch(t, call)
        at_starts(t, stream, starts, x1)
    if not (np.array_equal(x1, x2) and np.array_equal(y1, y2)):
        t.fail("two calls with generators made from the same seed gave different batches",
               cause=FOREIGN_RNG)


PAIRS = 40     # batches of two rows from two starts: both rows begin at the same start about half the time


@check("get_batch", "each row draws its own start, and other seeds give other batches", 0.5, tol=None,
       needs="every window begins at one of `starts`")
def _(t):
    """The starts are drawn with replacement, independently per row: from two starts, the two rows
    of a batch share one in about PAIRS / 2 of PAIRS batches (fewer than 5 or more than 35 has
    probability 2e-7). Drawing without replacement never repeats a start; one start for the whole
    batch, or a generator with a fixed seed of its own, always does. Code that only ever draws
    one of the two is judged by "every start can be drawn"."""
    stream, starts = batch_case(t)
    with t.needs_right_result():
        first, _ = batch(t, C.get_batch(stream, starts, 8, BLOCK, 1))
        second, _ = batch(t, C.get_batch(stream, starts, 8, BLOCK, 2))
        at_starts(t, stream, starts, first)
    if np.array_equal(first, second):
        t.fail("two different seeds gave the same batch", cause=SEED_IGNORED)
    windows = {tuple(stream[s:s + BLOCK]): s for s in starts.tolist()}
    two = np.array(list(windows.values())[:2])     # two starts whose windows differ
    results = t.students(C.get_batch(stream, two, 2, BLOCK, int(seed)) for seed in t.rng.integers(2**31, size=PAIRS))
    for got in results:
        t.expect_arrays(got, [(2, BLOCK)] * 2, kinds="iuf")
    shared = sum(np.array_equal(x[0], x[1]) for x, _ in results)
    drawn = {tuple(row) for x, _ in results for row in x.tolist()}
    if len(drawn) > 1 and not 5 <= shared <= PAIRS - 5:    # one start only: another check's business
        t.fail(f"from 2 starts, the 2 rows of a batch began at the same start in {shared} of {PAIRS} batches "
               f"(about {PAIRS // 2} expected): draw each row's start independently, with replacement, e.g. "
               "rng.choice(starts, size=batch_size)", cause=WITHOUT_REPLACEMENT if shared == 0 else None)


@check("get_batch", "every start can be drawn, the first and the last too", 0.5, tol=None,
       needs="every window begins at one of `starts`")
def _(t):
    """Over 20 batches of 4 from 5 starts, each start turns up (a miss has probability below 1e-7
    for correct code): rng.integers(0, len(starts) - 1) never draws the last one."""
    stream, starts = batch_case(t)
    starts = starts[:5]
    drawn = set()
    with t.needs_right_result():
        for seed in range(20):
            x, _ = batch(t, C.get_batch(stream, starts, 4, BLOCK, seed))
            drawn |= at_starts(t, stream, starts, x)
    missing = [i for i, s in enumerate(starts.tolist()) if s not in drawn]
    if missing:
        t.fail(f"over 20 batches of 4, starts[{missing[0]}] of 5 starts was never drawn: every start "
               "must be possible")


@check("get_batch", "does not modify the stream or the starts", 0.5, tol=None,
       needs="every window begins at one of `starts`")
def _(t):
    """The training loop draws from the same arrays 4,000 times (rng.shuffle(starts) reorders the
    caller's array)."""
    stream, starts = batch_case(t)
    call = C.get_batch(stream, starts, 6, BLOCK, 4)
    got, given = t.student_with_inputs(call)
    if any(not np.array_equal(before, after) for before, after in zip((stream, starts), given)):
        t.fail(f"{call.describe()} modified the stream or the starts in place", cause=IN_PLACE)
    with t.needs_right_result():
        t.expect_arrays(got, [(6, BLOCK)] * 2, kinds="iuf")
        at_starts(t, stream, starts, got[0])


# ------------------------------------------------------------------------------ cross_entropy

def ce_case(t, *batch_shape, vocab=27, scale=2.0):
    """Logits and targets; the last id, vocab - 1, is always a target, so that code indexing
    the wrong axis with them (of fewer than vocab entries) fails for every student, and with
    more than one position so is 0, so that code applying every target to every row does too."""
    targets = t.rng.integers(0, vocab, size=batch_shape)
    targets.flat[t.rng.permutation(targets.size)[:2]] = [vocab - 1, 0][:targets.size]
    return t.normal(*batch_shape, vocab, scale=scale), targets


def between_float32(logits, targets):
    """`logits` with the first position's target logit moved (by far less than 1e-6) so that the
    loss lies halfway between two float32 numbers: every float32 number is then at least 3e-8
    of the loss away from it, three times the tolerance, so a loss computed in float32 fails
    for every student (nearer a float32 number, it passed or failed with the draw)."""
    logits, first = logits.copy(), (0,) * targets.ndim
    target = targets[first]
    for _ in range(3):      # Newton steps: dloss/dlogit = (p - 1) / positions
        loss = reference.cross_entropy(logits, targets)
        below = np.float32(loss) if np.float32(loss) <= loss else np.nextafter(np.float32(loss), np.float32(0))
        halfway = (float(below) + float(np.nextafter(below, np.float32(np.inf)))) / 2
        p = reference.softmax(logits[first])[target]
        logits[first + (target,)] -= (halfway - loss) * targets.size / (1.0 - p)
    return logits


def loss_case(t, *batch_shape, vocab=27):
    logits, targets = ce_case(t, *batch_shape, vocab=vocab)
    return between_float32(logits, targets), targets


@check("cross_entropy", "returns one float", 0.5, tol=None)
def _(t):
    """The loss is a single number: the mean over positions, not one value per position."""
    got = t.student(C.cross_entropy(*ce_case(t, 6)))
    if np.ndim(got) != 0 or np.asarray(got).dtype.kind != "f":
        t.fail(f"returned {kind(got)}; expected one float")


@check("cross_entropy", "matches the reference on (N, V) logits", 2)
def _(t):
    """The mean over positions of log sum_v exp(u_v) - u_target. Here and in the other checks
    of random logits the loss lies halfway between two float32 numbers: a loss computed in
    float32 misses it by at least 3e-8 of it, three times the tolerance, whatever the draw."""
    t.expect_match(C.cross_entropy(*loss_case(t, 7)))


@check("cross_entropy", "uniform logits give ln V", 1)
def _(t):
    """A model that knows nothing pays ln |V| nats per token, whatever the constant logit."""
    t.expect_match(C.cross_entropy(np.zeros((4, 27)), t.rng.integers(0, 27, size=4)))
    t.expect_match(C.cross_entropy(np.full((3, 11), 7.5), t.rng.integers(0, 11, size=3)))


@check("cross_entropy", "stable for logits near +1000 and -1000", 1)
def _(t):
    """np.exp(1000) overflows and np.exp(-1000) underflows: subtract each row's maximum."""
    logits, targets = ce_case(t, 4, vocab=9)
    logits += np.array([[1000.0], [-1000.0], [1000.0], [-1000.0]])
    t.expect_match(C.cross_entropy(between_float32(logits, targets), targets))


@check("cross_entropy", "a confident wrong prediction: the target's probability underflows", 1)
def _(t):
    """When the target's logit is 800 below the largest, its probability is 0 in float64 and
    log(softmax) gives inf; log-sum-exp gives the true loss, about 800."""
    logits, targets = ce_case(t, 3, vocab=8)
    logits[0, targets[0]] -= 800.0
    t.expect_match(C.cross_entropy(between_float32(logits, targets), targets))


@check("cross_entropy", "a (B, N, V) batch: the mean over all BN positions", 1.5)
def _(t):
    """Training calls it on (B, N, V) logits and (B, N) targets."""
    t.expect_match(C.cross_entropy(*loss_case(t, 3, 5, vocab=7)))


@check("cross_entropy", "accepts float32 logits", 0.5, tol=FLOAT32,
       needs='a (B, N, V) batch: the mean over all BN positions')
def _(t):
    """The model trains in float32."""
    t.expect_float32_close(C.cross_entropy, *ce_case(t, 2, 4, vocab=27))


@check("cross_entropy", "does not modify the logits or the targets", 0.5, tol=None,
       needs='matches the reference on (N, V) logits')
def _(t):
    """`logits -= logits.max(...)` changes the caller's logits, which backward uses next."""
    t.expect_inputs_unchanged(C.cross_entropy(*loss_case(t, 5, vocab=6)))


# --------------------------------------------------------------------- cross_entropy_backward

@check("cross_entropy_backward", "returns a float array of the logits' shape", 0.5, tol=None)
def _(t):
    """dlogits has one entry per logit."""
    t.expect_array(t.student(C.cross_entropy_backward(*ce_case(t, 2, 3, vocab=5))), (2, 3, 5))


@check("cross_entropy_backward", "matches the reference on (N, V) logits", 2)
def _(t):
    """(softmax(u) - onehot(target)) / N, which agrees with finite differences of the loss."""
    t.expect_match(C.cross_entropy_backward(*ce_case(t, 5, vocab=7)))


@check("cross_entropy_backward", "a (B, N, V) batch: divided by BN", 1.5)
def _(t):
    """The loss averages over all BN positions, so every entry carries 1/(BN)."""
    t.expect_match(C.cross_entropy_backward(*ce_case(t, 3, 4, vocab=6)))


@check("cross_entropy_backward", "a single position", 0.5)
def _(t):
    """N = 1: the gradient is softmax minus the one-hot target."""
    t.expect_match(C.cross_entropy_backward(*ce_case(t, 1, vocab=9)))


@check("cross_entropy_backward", "stable for logits near +1000 and -1000", 1.5)
def _(t):
    """The softmax inside must subtract each row's maximum."""
    logits, targets = ce_case(t, 4, vocab=6)
    shift = np.array([[1000.0], [-1000.0], [0.0], [1000.0]])
    t.expect_match(C.cross_entropy_backward(logits + shift, targets))


@check("cross_entropy_backward", "accepts float32 logits", 1, tol=FLOAT32,
       needs='a (B, N, V) batch: divided by BN')
def _(t):
    """The model trains in float32."""
    t.expect_float32_close(C.cross_entropy_backward, *ce_case(t, 2, 3, vocab=8))


@check("cross_entropy_backward", "does not modify the logits or the targets", 1, tol=None,
       needs='matches the reference on (N, V) logits')
def _(t):
    """An in-place softmax of the logits corrupts the forward pass's output."""
    t.expect_inputs_unchanged(C.cross_entropy_backward(*ce_case(t, 4, vocab=6)))


# ---------------------------------------------------------------------------- linear_backward

def linear_case(t, lead, c_in, c_out):
    return t.normal(*lead, c_out), t.normal(*lead, c_in), t.normal(c_in, c_out)


@check("linear_backward", "returns (dx, dW, db) with the shapes of x, W and b", 0.5, tol=None)
def _(t):
    """Every gradient has the shape of what it is the gradient of."""
    got = t.student(C.linear_backward(*linear_case(t, (2, 3), 4, 5)))
    t.expect_arrays(got, [(2, 3, 4), (4, 5), (5,)])


@check("linear_backward", "(n, d_in) input with d_in != d_out", 2.5)
def _(t):
    """δ_x = δ_y Wᵀ, δ_W = xᵀ δ_y, δ_b = the sum of δ_y over positions."""
    t.expect_match(C.linear_backward(*linear_case(t, (5,), 3, 4)))


@check("linear_backward", "(B, N, d_in) input: dW and db sum over every position", 2.5)
def _(t):
    """Activations are (B, N, d): n = BN rows."""
    t.expect_match(C.linear_backward(*linear_case(t, (2, 3), 4, 5)))


@check("linear_backward", "a square W, where shapes cannot reveal a missing transpose", 1.5)
def _(t):
    """W_Q, W_K, W_V and W_O are square: δ_y W and δ_yᵀ x have the right shapes and the wrong values."""
    t.expect_match(C.linear_backward(*linear_case(t, (6,), 4, 4)))


@check("linear_backward", "accepts float32 inputs", 0.5, tol=FLOAT32,
       needs='(B, N, d_in) input: dW and db sum over every position')
def _(t):
    """The model trains in float32."""
    t.expect_float32_close(C.linear_backward, *linear_case(t, (2, 3), 4, 6))


@check("linear_backward", "does not modify dy, x or W", 0.5, tol=None,
       needs='(n, d_in) input with d_in != d_out')
def _(t):
    """x and W are the forward pass's; the caller uses them again."""
    t.expect_inputs_unchanged(C.linear_backward(*linear_case(t, (4,), 3, 5)))


# ------------------------------------------------------------------------------ relu_backward

@check("relu_backward", "matches the reference on inputs of both signs", 1)
def _(t):
    """δ_y where x > 0, and 0 elsewhere."""
    t.expect_match(C.relu_backward(t.normal(4, 5), t.normal(4, 5)))


@check("relu_backward", "inputs exactly 0 block the gradient", 0.75,
       needs="matches the reference on inputs of both signs")
def _(t):
    """ReLU is flat for x <= 0; the lab takes its derivative at 0 to be 0 (x > 0, not x >= 0).
    It fails on the entries where x = 0 only, and is credited when the other entries are right."""
    x = t.normal(3, 6)
    x[:, ::2] = 0.0
    call = C.relu_backward(t.normal(3, 6), x)
    with t.needs_right_result():
        got = t.student(call)
        t.expect_array(got, x.shape, kinds="biuf")
    zero = np.argwhere(x == 0)
    leaked = [tuple(i) for i in zero if got[tuple(i)] != 0]
    if leaked:
        t.fail(f"{call.describe()}: {len(leaked)} of the {len(zero)} entries where x = 0 are not 0 "
               f"(first at {list(map(int, leaked[0]))}: {float(got[leaked[0]]):.6g})")
    t.credit_if_right(call, got)


@check("relu_backward", "a (B, N, d) input", 0.5)
def _(t):
    """The FFN's activations are (B, N, d_ff)."""
    t.expect_match(C.relu_backward(t.normal(2, 3, 4), t.normal(2, 3, 4)))


@check("relu_backward", "accepts float32 inputs", 0.25, tol=FLOAT32,
       needs='matches the reference on inputs of both signs')
def _(t):
    """The model trains in float32."""
    t.expect_float32_close(C.relu_backward, t.normal(3, 4), t.normal(3, 4))


@check("relu_backward", "does not modify dy or x", 0.5, tol=None,
       needs='matches the reference on inputs of both signs')
def _(t):
    """`dy[x <= 0] = 0` changes the caller's gradient, which the residual path also uses."""
    t.expect_inputs_unchanged(C.relu_backward(t.normal(4, 4), t.normal(4, 4)))


# ------------------------------------------------------------------------------ gelu_backward

@check("gelu_backward", "returns a float array of x's shape", 0.5, tol=None)
def _(t):
    """The gradient has the shape of the activation."""
    t.expect_array(t.student(C.gelu_backward(t.normal(3, 4), t.normal(3, 4))), (3, 4))


@check("gelu_backward", "matches the reference on inputs of order one", 2)
def _(t):
    """½(1 + tanh u) + ½ x (1 - tanh² u) u′ times δ_y: where the tanh′ term is largest."""
    t.expect_match(C.gelu_backward(t.normal(4, 6), t.normal(4, 6, scale=1.5)))


@check("gelu_backward", "large positive and negative inputs", 1)
def _(t):
    """The derivative tends to 1 for large x and to 0 for very negative x; a tanh written with
    np.exp overflows there."""
    x = np.concatenate([np.linspace(-40, -4, 6), np.linspace(4, 40, 6)]) + t.normal(12, scale=0.1)
    t.expect_match(C.gelu_backward(t.normal(12), x))


@check("gelu_backward", "a (B, N, d) input", 0.5)
def _(t):
    """The FFN's activations are (B, N, d_ff)."""
    t.expect_match(C.gelu_backward(t.normal(2, 3, 4), t.normal(2, 3, 4, scale=2.0)))


@check("gelu_backward", "accepts float32 inputs", 0.5, tol=FLOAT32,
       needs='matches the reference on inputs of order one')
def _(t):
    """The model trains in float32."""
    t.expect_float32_close(C.gelu_backward, t.normal(3, 5), t.normal(3, 5, scale=2.0))


@check("gelu_backward", "does not modify dy or x", 0.5, tol=None,
       needs='matches the reference on inputs of order one')
def _(t):
    """The caller keeps the pre-activation for other gradients."""
    t.expect_inputs_unchanged(C.gelu_backward(t.normal(3, 4), t.normal(3, 4)))


# ------------------------------------------------------------------------ layer_norm_backward

def ln_case(t, *lead, c=6):
    """Rows with very different means and scales, and gamma far from 1."""
    x = t.normal(*lead, c) * np.exp(t.normal(*lead, 1)) + 3 * t.normal(*lead, 1)
    return t.normal(*lead, c), x, 1.0 + 0.8 * t.normal(c)


# On rows whose mean dwarfs their spread, a variance taken in one pass (E[x²] - μ², exact on
# paper) is off by up to 2e-8 in float64; computing in float32 is off by 1e-6 and more.
LN_TOL = Tolerance(rtol=1e-7, atol=1e-9)


@check("layer_norm_backward", "returns (dx, dgamma, dbeta) with the shapes of x, gamma and gamma",
       0.5, tol=None)
def _(t):
    """dgamma and dbeta sum over every position, down to one value per feature."""
    got = t.student(C.layer_norm_backward(*ln_case(t, 2, 3, c=5)))
    t.expect_arrays(got, [(2, 3, 5), (5,), (5,)])


@check("layer_norm_backward", "dx: rows with different means and scales, gamma != 1", 3, tol=LN_TOL)
def _(t):
    """δ_x = (g - mean(g) - x̂ mean(g x̂)) / σ with g = δ_y γ: the two mean terms are the gradient
    through μ and σ, which every entry of the row shares."""
    t.expect_items(C.layer_norm_backward(*ln_case(t, 4)), [0])


@check("layer_norm_backward", "dgamma and dbeta", 2, tol=LN_TOL)
def _(t):
    """δ_γ = Σ δ_y x̂ and δ_β = Σ δ_y over positions."""
    t.expect_items(C.layer_norm_backward(*ln_case(t, 5)), [1, 2])


@check("layer_norm_backward", "a (B, N, d) input: all three gradients", 2.5, tol=LN_TOL)
def _(t):
    """δ_γ and δ_β sum over both B and N."""
    t.expect_match(C.layer_norm_backward(*ln_case(t, 2, 3)))


@check("layer_norm_backward", "dx: eps = 0.1 is used inside the square root", 1.5, tol=LN_TOL)
def _(t):
    """σ = sqrt(var + eps) with the eps given; with rows of small variance, eps matters."""
    dy, x, gamma = ln_case(t, 4)
    t.expect_items(C.layer_norm_backward(dy, 0.3 * x, gamma, eps=0.1), [0])


@check("layer_norm_backward", "dx: rows whose variance is close to the default eps", 0.5, tol=LN_TOL)
def _(t):
    """Where eps goes matters when var is about 1e-5."""
    dy, _, gamma = ln_case(t, 3)
    t.expect_items(C.layer_norm_backward(dy, 1.0 + 3e-3 * t.normal(3, 6), gamma), [0])


@check("layer_norm_backward", "accepts float32 inputs", 1, tol=FLOAT32,
       needs='a (B, N, d) input: all three gradients')
def _(t):
    """The model trains in float32. The rows have mean 0 and variance 4 here: on a row whose mean
    dwarfs its spread, a variance computed as E[x²] - E[x]² cancels in float32, and on a row of
    small variance eps moves the result by more than this check's tolerance, so either would
    depend on the hidden inputs rather than on the code being right."""
    z = t.normal(2, 3, 6)
    x = 2.0 * (z - z.mean(-1, keepdims=True)) / z.std(-1, keepdims=True)
    t.expect_float32_close(C.layer_norm_backward, t.normal(2, 3, 6), x, 1.0 + 0.8 * t.normal(6))


@check("layer_norm_backward", "does not modify dy, x or gamma", 1, tol=None,
       needs='a (B, N, d) input: all three gradients')
def _(t):
    """Centring x in place would change the residual stream the caller keeps."""
    t.expect_inputs_unchanged(C.layer_norm_backward(*ln_case(t, 3)))


# ------------------------------------------------------------------------- attention_backward

def attention_case(t, B, T, C_, heads, scale=1.0):
    return t.normal(B, T, C_), t.normal(B, T, C_), C.attention_weights(t.rng, C_, scale), heads


def several_heads(t):
    """B = 2, T = 5, C = 12, 3 heads of d_k = 4: every size distinct."""
    return C.attention_backward(*attention_case(t, 2, 5, 12, 3, scale=1.5))


@check("attention_backward", "returns dx (B, N, d) and four (d, d) weight gradients", 0.5, tol=None)
def _(t):
    """The gradient of every input: x and the four projections."""
    got = t.student(C.attention_backward(*attention_case(t, 2, 3, 6, 2)))
    t.expect_arrays(got, [(2, 3, 6)] + [(6, 6)] * 4)


@check("attention_backward", "one head, one sequence", 2)
def _(t):
    """B = 1, N = 5, d = 4: all five gradients of causal attention."""
    t.expect_match(C.attention_backward(*attention_case(t, 1, 5, 4, 1, scale=1.5)))


@check("attention_backward", "dW_O: the output projection", 1.5)
def _(t):
    """The gradient of W_O is concat(heads)ᵀ δ_O, with the heads concatenated in their column blocks."""
    t.expect_items(several_heads(t), [4])


@check("attention_backward", "dW_V: back through the weighted sum α V", 1.5)
def _(t):
    """δ_V = αᵀ δ_head per head, then W_V's gradient is Xᵀ δ_V."""
    t.expect_items(several_heads(t), [3])


@check("attention_backward", "dW_Q and dW_K: back through the softmax and the 1/√d_k scale", 2.5)
def _(t):
    """δ_S = α ⊙ (δ_α - rowsum(α ⊙ δ_α)), δ_Q = δ_S K/√d_k, δ_K = δ_Sᵀ Q/√d_k, with d_k the width of
    one head."""
    t.expect_items(several_heads(t), [1, 2])


@check("attention_backward", "dx: the sum of the paths through Q, K and V", 2)
def _(t):
    """X feeds all three projections: δ_X = δ_Q W_Qᵀ + δ_K W_Kᵀ + δ_V W_Vᵀ."""
    t.expect_items(several_heads(t), [0])


@check("attention_backward", "a single position (N = 1)", 1)
def _(t):
    """One token attends only to itself: no gradient flows through its softmax."""
    t.expect_match(C.attention_backward(*attention_case(t, 2, 1, 6, 2)))


@check("attention_backward", "another configuration: B = 3, N = 4, d = 8, A = 4", 2)
def _(t):
    """Nothing may depend on a particular size; d_k = 2."""
    t.expect_match(C.attention_backward(*attention_case(t, 3, 4, 8, 4, scale=1.5)))


@check("attention_backward", "accepts float32 inputs", 0.5, tol=FLOAT32,
       needs='another configuration: B = 3, N = 4, d = 8, A = 4')
def _(t):
    """The model trains in float32."""
    t.expect_float32_close(C.attention_backward, *attention_case(t, 2, 4, 6, 2))


@check("attention_backward", "does not modify dout, x or the weights", 0.5, tol=None,
       needs='another configuration: B = 3, N = 4, d = 8, A = 4')
def _(t):
    """The weights are parameters; the optimiser updates them after the backward pass."""
    t.expect_inputs_unchanged(C.attention_backward(*attention_case(t, 1, 4, 6, 2)))


# ------------------------------------------------------------------------- embedding_backward

def embedding_case(t, B, T, C_, V, lookup=True, head=True):
    """Token ids that repeat within and across sequences; either gradient may be zero."""
    ids = t.rng.integers(0, V // 2, size=(B, T))
    d_x = t.normal(B, T, C_) if lookup else np.zeros((B, T, C_))
    d_logits = t.normal(B, T, V) if head else np.zeros((B, T, V))
    return d_x, d_logits, ids, t.normal(B, T, C_)


@check("embedding_backward", "returns a float array of shape (V, d)", 0.5, tol=None)
def _(t):
    """dE has the shape of E."""
    t.expect_array(t.student(C.embedding_backward(*embedding_case(t, 2, 3, 4, 7))), (7, 4))


@check("embedding_backward", "the head's term alone: δ_uᵀ h over all positions", 1)
def _(t):
    """u = h Eᵀ, so E receives δ_uᵀ h, summed over all positions; here the lookup's gradient is zero."""
    t.expect_match(C.embedding_backward(*embedding_case(t, 2, 4, 3, 6, lookup=False)))


@check("embedding_backward", "the lookup's term alone, with repeated tokens", 1.5)
def _(t):
    """Row ids[b, t] of dE collects d_x[b, t]: a token that occurs k times collects k rows."""
    t.expect_match(C.embedding_backward(*embedding_case(t, 2, 5, 3, 6, head=False)))


@check("embedding_backward", "both terms, tokens repeated within and across sequences", 2)
def _(t):
    """E is the input and the output layer at once: its gradient is the sum of both."""
    t.expect_match(C.embedding_backward(*embedding_case(t, 3, 4, 5, 8)))


@check("embedding_backward", "accepts float32 inputs", 0.5, tol=FLOAT32,
       needs="both terms, tokens repeated within and across sequences")
def _(t):
    """The model trains in float32."""
    t.expect_float32_close(C.embedding_backward, *embedding_case(t, 2, 3, 4, 6))


@check("embedding_backward", "does not modify its inputs", 0.5, tol=None,
       needs="both terms, tokens repeated within and across sequences")
def _(t):
    """The caller's gradients and hidden states are reused."""
    t.expect_inputs_unchanged(C.embedding_backward(*embedding_case(t, 2, 3, 4, 6)))


# ------------------------------------------------------------------------------ adamw_update

def moments(t, *shape):
    """m and v as after some steps: v > 0 and of the size of g²."""
    return 0.3 * t.normal(*shape), 0.5 * t.normal(*shape) ** 2 + 0.01


def away_from_zero(t, *shape, floor=0.5):
    """Normal draws pushed out by `floor`. Gradients with |g| >= 0.5 and parameters with
    |p| >= 1 (which ten steps of lr 0.05 keep above 0.5): eps = 1e-8 inside or outside the
    root then moves a step by under 1e-9, below the tolerance, so only the check that sets a
    large eps tells the two apart."""
    x = t.normal(*shape)
    return np.sign(x) * (floor + np.abs(x))


@check("adamw_update", "returns (p, m, v), float arrays of p's shape", 0.5, tol=None)
def _(t):
    """The training loop unpacks three arrays."""
    got = t.student(C.adamw_update(t.normal(3, 2), t.normal(3, 2), *moments(t, 3, 2), 4, 0.01))
    t.expect_arrays(got, [(3, 2)] * 3)


@check("adamw_update", "the first step from zero moments: bias correction", 1.5)
def _(t):
    """At t = 1, m̂ = g and v̂ = g², so every entry moves by about lr. Uncorrected, m/√v is
    (1 - β₁)/√(1 - β₂) = 3.2 times that with betas (0.9, 0.999), used here; with the lab's
    (0.9, 0.99) the two missing corrections happen to cancel at t = 1."""
    p, g = away_from_zero(t, 4, 3, floor=1.0), away_from_zero(t, 4, 3)
    t.expect_match(C.adamw_update(p, g, np.zeros((4, 3)), np.zeros((4, 3)), 1, 0.01, betas=(0.9, 0.999)))


@check("adamw_update", "steps 1, 2 and 10 along a trajectory", 2.5)
def _(t):
    """From the reference's state at each step: 1 - beta^t must use the step number t."""
    p = away_from_zero(t, 5, floor=1.0)
    states = C.adam_trajectory(reference.adamw_update, p, [away_from_zero(t, 5) for _ in range(10)],
                               (1, 2, 10), lr=0.05)
    for step, (p_t, g, m, v) in states.items():
        t.expect_match(C.adamw_update(p_t, g, m, v, step, 0.05))


@check("adamw_update", "weight decay is decoupled: θ - ηλθ, not added to the gradient", 1.5,
       needs="steps 1, 2 and 10 along a trajectory")
def _(t):
    """AdamW shrinks the weights directly (by lr · weight_decay · θ); L2 added to the gradient
    would be rescaled by Adam. The student's own steps with and without decay must differ by
    exactly that, whatever the rest of the step does: for a matrix and for a vector (the caller
    chooses which parameters are decayed, the function decays what it is given)."""
    for shape in ((4, 3), (5,)):
        p, g = away_from_zero(t, *shape, floor=1.0), t.normal(*shape)
        m, v = moments(t, *shape)
        decayed = C.adamw_update(p, g, m, v, 3, 0.05, weight_decay=0.2)
        with t.needs_right_result():
            got, plain = t.student(decayed), t.student(C.adamw_update(p, g, m, v, 3, 0.05, weight_decay=0.0))
            t.expect_arrays(got, [p.shape] * 3)
            t.expect_arrays(plain, [p.shape] * 3)
        if not (np.allclose(got[0] - plain[0], -0.05 * 0.2 * p, rtol=1e-6, atol=1e-12)
                and np.allclose(got[1], plain[1]) and np.allclose(got[2], plain[2])):
            t.fail(f"{decayed.describe()} differs from the same step with weight_decay = 0 by more than "
                   "-lr · weight_decay · p in p alone: decoupled decay leaves m and v as they are")
        t.credit_if_right(decayed, got)


@check("adamw_update", "other betas and eps", 1)
def _(t):
    """betas = (0.8, 0.9), eps = 1e-3 added to sqrt(v̂), not inside it."""
    p, g = t.normal(6), 0.05 * t.normal(6)
    m, v = moments(t, 6)
    t.expect_match(C.adamw_update(p, g, 0.05 * m, 0.01 * v, 5, 0.02, betas=(0.8, 0.9), eps=1e-3))


@check("adamw_update", "accepts float32 parameters", 0.5, tol=FLOAT32,
       needs='steps 1, 2 and 10 along a trajectory')
def _(t):
    """The model's parameters and moments are float32."""
    t.expect_float32_close(C.adamw_update, t.normal(3, 4), t.normal(3, 4), *moments(t, 3, 4), 7, 0.01)


@check("adamw_update", "returns new arrays: p, m and v are not modified", 0.5, tol=None,
       needs="weight decay is decoupled: θ - ηλθ, not added to the gradient")
def _(t):
    """The function returns the new state; in-place updates also change the caller's arrays."""
    p, g = t.normal(3, 3), t.normal(3, 3)
    t.expect_inputs_unchanged(C.adamw_update(p, g, *moments(t, 3, 3), 2, 0.01, weight_decay=0.1))


# --------------------------------------------------------------------------- next_token_probs

NUCLEUS = np.array([0.12, 0.06, 0.32, 0.08, 0.24, 0.18])   # sorted totals 0.32, 0.56, 0.74, 0.86, 0.94, 1
DYADIC = np.array([1.0, 0.5, 0.5] + [0.25] * 8)           # softmax: 1/4, 1/8, 1/8, then 1/16 eight times


def nucleus_logits(t):
    """Logits of NUCLEUS (in vocabulary order, not sorted), shifted by a random constant."""
    return np.log(NUCLEUS) + t.normal(1)


def dyadic_logits(t):
    """Logits whose softmax is exactly 1/4, 1/8, 1/8, 1/16, ... (in a random vocabulary order):
    the largest logit is 0 and the others are log 1/2 and log 1/4, whose exponentials are exact,
    so every running total is exact whatever order it is summed in, for a softmax written as
    exp(z - max) / sum (written with a log-sum-exp, it may be a hair off)."""
    return np.log(DYADIC)[t.rng.permutation(len(DYADIC))]


@check("next_token_probs", "returns a distribution over the vocabulary", 0.5, tol=None)
def _(t):
    """(V,) non-negative numbers that sum to 1."""
    got = t.student(C.next_token_probs(t.normal(7), top_k=3))
    t.expect_array(got, (7,))
    if (got < 0).any() or not np.isclose(got.sum(), 1.0, rtol=0, atol=1e-9):
        t.fail(f"the entries sum to {got.sum():.6g} (smallest {got.min():.3g}); expected a distribution")


@check("next_token_probs", "the defaults: softmax of the logits", 0.5)
def _(t):
    """Temperature 1, no top-k, no top-p: every token keeps its probability."""
    t.expect_match(C.next_token_probs(t.normal(9, scale=2.0)))


@check("next_token_probs", "temperature divides the logits (0.5 and 2), large logits too", 1)
def _(t):
    """softmax(u / τ): τ < 1 sharpens, τ > 1 flattens; logits near 500 at τ = 0.5 need the stable
    softmax."""
    logits = t.normal(8, scale=2.0)
    t.expect_matches([C.next_token_probs(logits, temperature=0.5), C.next_token_probs(logits, temperature=2.0),
                      C.next_token_probs(logits + 500.0, temperature=0.5)])


@check("next_token_probs", "top-k keeps the k most likely, renormalised", 1)
def _(t):
    """Zero outside the k largest probabilities; the kept ones sum to 1."""
    logits = t.normal(8, scale=2.0)
    t.expect_matches([C.next_token_probs(logits, top_k=3), C.next_token_probs(logits, top_k=8)])


@check("next_token_probs", "top-k with tied logits", 0.5)
def _(t):
    """Tied tokens that fit within k are all kept, with equal probability."""
    logits = np.array([0.5, 2.0, -1.0, 2.0, 1.0, 0.5]) + t.normal(1)
    t.expect_matches([C.next_token_probs(logits, top_k=2), C.next_token_probs(logits, top_k=5)])


@check("next_token_probs", "top-p keeps the smallest set whose total is >= p", 1)
def _(t):
    """Sorted totals 0.32, 0.56, 0.74, 0.86, 0.94: p = 0.5 keeps 2 tokens, 0.8 keeps 4 and 0.9
    keeps 5: the token that takes the total past p is kept (no p here is near a total, so no
    rounding decides)."""
    logits = nucleus_logits(t)
    t.expect_matches([C.next_token_probs(logits, top_p=top_p) for top_p in (0.5, 0.8, 0.9)])


def expect_at_ties(t, calls) -> None:
    """`expect_matches` for top-p calls whose running total reaches p exactly in exact arithmetic.
    A softmax rounded another way (exp(z - logsumexp), a renormalisation in log space) can put
    that total a hair below p, and then `>= p` rightly keeps one token more: the result may also
    be the reference's with one more of the most likely dropped tokens, renormalised. (A rule that
    keeps one token more at an exact tie, `> p`, cannot be told apart from that rounding, and is
    accepted too.)"""
    tol, names = t.check.tol, t.suite.output_names.get(t.check.part)
    problems = []
    for call in calls:
        got, expected = t.student(call), t.reference(call)
        before_top_p = t.reference(Call(call.fn, call.args, {k: v for k, v in call.kwargs.items() if k != "top_p"}))
        problem = mismatch(got, expected, tol.rtol, tol.atol, names)
        if problem and not any(mismatch(got, wider, tol.rtol, tol.atol, names) is None
                               for wider in one_token_more(expected, before_top_p)):
            problems.append(CheckFailed(f"{call.describe()}: {problem}", firm=True))
    if problems:
        raise problems[0]


def one_token_more(kept, before):
    """`kept` (a top-p result) with one more token: each of the most likely ones it dropped from
    `before` (the distribution top-p cut), renormalised."""
    dropped = (kept == 0) & (before > 0)
    if not dropped.any():
        return []
    widened = []
    for extra in np.flatnonzero(dropped & (before == before[dropped].max())):
        keep = (kept > 0) | (np.arange(len(kept)) == extra)
        widened.append(np.where(keep, before, 0.0) / before[keep].sum())
    return widened


@check("next_token_probs", "a running total equal to p keeps the token that reaches it, drops the rest", 0.5)
def _(t):
    """Probabilities 1/4, 1/8, 1/8, 1/16, ...: the total is 0.25 after one token and 0.5 after
    three, so p = 0.25 keeps one token and p = 0.5 three (or, where rounding left the total a
    hair short of p, one more: `expect_at_ties`), neither fewer nor two more."""
    logits = dyadic_logits(t)
    expect_at_ties(t, [C.next_token_probs(logits, top_p=0.25), C.next_token_probs(logits, top_p=0.5)])


def short_of_one_logits(t):
    """27 logits whose sorted probabilities add up to just below 1 in floating point, however
    the softmax is written (exp(z - max) / sum, exp(z - logsumexp), or exp(z) / sum without the
    shift, which these logits do not overflow) and renormalised again (not at all, or by a sum in
    vocabulary or in sorted order; about one random vector in forty): no running total reaches
    p = 1, whichever of these a student's code rounds like."""
    for _ in range(4000):
        logits = t.normal(27, scale=2.0)
        e = np.exp(logits - logits.max())
        for probs in (e / e.sum(), np.exp(logits - logits.max() - np.log(e.sum())),
                      np.exp(logits) / np.exp(logits).sum()):
            ordered = np.sort(probs)[::-1]
            if max(np.cumsum(ordered)[-1], np.cumsum(ordered / ordered.sum())[-1],
                   np.cumsum(np.sort(probs / probs.sum())[::-1])[-1]) >= 1.0:
                break
        else:
            return logits
    raise RuntimeError("no logits whose running total ends below 1")


@check("next_token_probs", "top_p = 1 keeps every token, also when the running total ends just below 1", 0.5)
def _(t):
    """p = 1 is the whole distribution: rounding can leave every running total short of 1, and
    then no token reaches p; the set of all tokens is still the one whose total is >= p."""
    t.expect_matches([C.next_token_probs(short_of_one_logits(t), top_p=1.0) for _ in range(3)])


@check("next_token_probs", "at least one token is kept (top_p = 0 and top_p below the largest)", 0.5)
def _(t):
    """The most likely token always stays, however small p is."""
    logits = nucleus_logits(t)
    t.expect_matches([C.next_token_probs(logits, top_p=0.2), C.next_token_probs(logits, top_p=0.0)])


@check("next_token_probs", "temperature, then top-k, then top-p on the renormalised top-k distribution",
       1)
def _(t):
    """All three at once, in sequence: top-p adds up the probabilities that top-k renormalised.
    In the first three cases top-p measured on the distribution before top-k would keep one
    token more; in the next two top-p is the tighter filter, and the temperature changes the
    nucleus; in the last one the renormalised total reaches p = 0.5 exactly at the first token
    (`expect_at_ties`)."""
    logits = nucleus_logits(t)
    cases = ((0.8, 3, 0.7), (1.5, 4, 0.7), (2.0, 2, 0.4), (0.8, 4, 0.5), (0.7, None, 0.8))
    tie = C.next_token_probs(dyadic_logits(t), top_k=3, top_p=0.5)
    try:
        t.expect_matches([C.next_token_probs(logits, temperature=temperature, top_k=top_k, top_p=top_p)
                          for temperature, top_k, top_p in cases])
    except CheckFailed:
        with contextlib.suppress(CheckFailed):     # every call runs, for the diagnosis
            t.student(tie)
        raise
    expect_at_ties(t, [tie])


@check("next_token_probs", "accepts float32 logits", 0.5, tol=FLOAT32,
       needs="temperature, then top-k, then top-p on the renormalised top-k distribution")
def _(t):
    """The trained model's logits are float32."""
    t.expect_float32_close(lambda logits: C.next_token_probs(logits, temperature=0.7, top_p=0.8),
                           nucleus_logits(t))


@check("next_token_probs", "does not modify the logits", 0.5, tol=None,
       needs="top-k keeps the k most likely, renormalised")
def _(t):
    """`logits /= temperature` changes the caller's logits. Twenty tokens kept: probabilities
    computed in float32 are not right on every one of them (with four, they were on some draws)."""
    t.expect_inputs_unchanged(C.next_token_probs(t.normal(27, scale=2.0), temperature=0.7, top_k=20))


# ------------------------------------------------------------------------------- sample_token

def token(t, got, vocab):
    """`got` as a token id: one integer in [0, vocab), or a failure."""
    integer = isinstance(got, (int, np.integer)) or isinstance(got, np.ndarray) and got.ndim == 0
    if isinstance(got, bool) or not integer or np.asarray(got).dtype.kind not in "iu":
        t.fail(f"returned {kind(got)}; expected one int, the token id")
    if not 0 <= got < vocab:
        t.fail(f"returned {got}; expected a token id in [0, {vocab})")
    return int(got)


def draws(t, logits, seeds, **how) -> list:
    return [token(t, got, len(logits)) for got in t.students(C.sample_token(logits, seed, **how) for seed in seeds)]


@check("sample_token", "greedy returns the argmax, as an int, whatever the other settings", 0.75, tol=None)
def _(t):
    """Greedy decoding is deterministic: the most likely token, without drawing. The logits are
    nearly flat and each is tried with five seeds, so that drawing would miss the argmax."""
    for _ in range(3):
        logits = t.normal(9, scale=0.5)
        logits[[0, -1]] -= 10.0     # never the first or the last id
        best = int(np.argmax(logits))
        for how in ({"greedy": True}, {"greedy": True, "temperature": 3.0, "top_k": 5}):
            for got in draws(t, logits, range(5), **how):
                if got != best:
                    t.fail(f"greedy sampling returned {got}; the argmax is {best}")


@check("sample_token", "only kept tokens are drawn under top-k and top-p", 0.75, tol=None)
def _(t):
    """A token outside the top-k or the nucleus must never be drawn."""
    logits = nucleus_logits(t)
    for how in ({"top_k": 2}, {"top_p": 0.5}, {"temperature": 2.0, "top_p": 0.8}):
        allowed = np.flatnonzero(reference.next_token_probs(logits, **how))
        drawn = draws(t, logits, range(40), **how)
        outside = sorted(set(drawn) - set(allowed.tolist()))
        if outside:
            t.fail(f"with {how} token {outside[0]} was drawn; only {allowed.tolist()} are kept")


@check("sample_token", "over 300 seeds the draws follow next_token_probs", 1, tol=None)
def _(t):
    """The temperature and both filters reach the distribution, each in its place, and every
    kept token gets its share. The bound is five standard deviations per token (plus one draw):
    correct code fails it with probability below 1e-5 per setting, while at temperature 0.4 a
    dropped temperature, or one applied twice, moves some token's count far past it, and under
    top-p 0.8 a filter dropped or given top-k's place does."""
    logits, n = nucleus_logits(t), 300
    counts = [np.bincount(draws(t, logits, range(n), **how), minlength=len(logits)) for how in SAMPLED]
    for how, got in zip(SAMPLED, counts):
        probs = reference.next_token_probs(logits, **how)
        bound = 5 * np.sqrt(n * probs * (1 - probs)) + 1
        worst = int(np.argmax(np.abs(got - n * probs) - bound))
        if abs(got[worst] - n * probs[worst]) > bound[worst]:
            t.fail(f"with {how} token {worst} was drawn {got[worst]} times in {n}; next_token_probs "
                   f"gives it {probs[worst]:.3f}, about {n * probs[worst]:.0f} draws", cause=drawn_like(counts, logits))


SAMPLED = ({"temperature": 0.4, "top_k": 5}, {"top_p": 0.8})
MISTAKE_DRAWS = 1000    # draws per catalogued mistake to estimate the distribution it samples


def drawn_like(counts, logits):
    """The catalogued sample_token mistake whose distribution of draws the student's `counts`
    (per setting) follow, each token within five standard deviations of both estimates under
    every setting, if one idea does (verdict.only_fit): the idea shows in the frequencies whatever
    way the student draws (rng.choice, an inverse CDF, ...), where a mistake's own draws match
    only its own way."""
    fits = [m for m in suite.parts["sample_token"].mistakes
            if m.impl is not None and all(_follows(got, m.impl, logits, how) for how, got in zip(SAMPLED, counts))]
    named = verdict.only_fit([(m.message, m.fix) for m in fits])
    return next((m for m in fits if (m.message, m.fix) == named), None)


def _follows(got, impl, logits, how) -> bool:
    """Whether the counts `got` follow the draws of `impl` under `how`."""
    n = got.sum()
    try:
        tokens = [int(np.asarray(impl(logits, np.random.default_rng(seed), **how)).reshape(-1)[0])
                  for seed in range(MISTAKE_DRAWS)]
        q = np.bincount(tokens, minlength=len(logits))[:len(logits)] / MISTAKE_DRAWS
    except Exception:   # noqa: BLE001 (a mistake that cannot draw here does not fit)
        return False
    spread = 5 * np.sqrt(q * (1 - q) * (n + n * n / MISTAKE_DRAWS)) + 1
    return len(q) == len(got) and bool(np.all(np.abs(got - n * q) <= spread))


@check("sample_token", "a seed reproduces its draw, and seeds differ", 0.5, tol=None)
def _(t):
    """Reproducible sampling is how you debug a generator: use the rng you are given."""
    logits = 0.1 * t.normal(5)
    first, second = draws(t, logits, range(20)), draws(t, logits, range(20))
    if first != second:
        t.fail("generators made from the same seed gave different tokens", cause=FOREIGN_RNG)
    if len(set(first)) == 1:
        t.fail(f"20 seeds all gave token {first[0]} from an almost flat distribution",
               cause=SEED_IGNORED)


# -------------------------------------------------------------------------- attention_entropy

def softmax_weights(t, B, H, T, scale=2.0):
    return C.causal_softmax(t.normal(B, H, T, T, scale=scale))


@check("attention_entropy", "returns one value per head, shape (A,)", 0.25, tol=None)
def _(t):
    """Averaged over the sequences and the query positions."""
    t.expect_array(t.student(C.attention_entropy(softmax_weights(t, 2, 3, 4))), (3,))


@check("attention_entropy", "a one-hot head gives 0 bits, a uniform causal head the mean of log2(i+1)",
       1)
def _(t):
    """Row i spread evenly over its i + 1 positions has log2(i + 1) bits; one position has 0,
    and 0 log 0 counts as 0."""
    B, T = 2, 6
    one_hot = np.zeros((B, T, T))
    for b in range(B):
        one_hot[b, np.arange(T), [t.rng.integers(0, i + 1) for i in range(T)]] = 1.0
    uniform = np.broadcast_to(np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None], (B, T, T))
    # and with no zero at all (every row spread over all T positions: log2(T) bits): a NaN there
    # comes from the code itself, not from 0 log 0
    t.expect_matches([C.attention_entropy(np.stack([one_hot, uniform], axis=1)),
                      C.attention_entropy(np.full((B, 2, T, T), 1.0 / T))])


@check("attention_entropy", "softmax weights with exact zeros above the diagonal", 1)
def _(t):
    """-Σ_j α_ij log2 α_ij per row, averaged over B and the N queries, never nan."""
    t.expect_match(C.attention_entropy(softmax_weights(t, 2, 3, 5)))


@check("attention_entropy", "exact zeros below the diagonal too", 0.5)
def _(t):
    """A head may ignore some past positions entirely."""
    weights = softmax_weights(t, 3, 2, 4)
    weights[..., 2:, 0] = 0.0
    t.expect_match(C.attention_entropy(weights / weights.sum(axis=-1, keepdims=True)))


@check("attention_entropy", "does not modify the weights", 0.25, tol=None,
       needs='softmax weights with exact zeros above the diagonal')
def _(t):
    """`weights[weights == 0] = 1` changes the caller's attention maps. Eight heads: a result
    computed in float32 is not right on every one of them (with two, it was on some draws)."""
    t.expect_inputs_unchanged(C.attention_entropy(softmax_weights(t, 1, 8, 4)))


suite.validate()
