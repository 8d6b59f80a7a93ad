"""get_batch: wrong and correct answers."""
from . import DERIVED, correct, wrong

PART = "get_batch"

WRONG = [
    wrong(PART, "y_padded_with_a_dot", None, '''
        def get_batch(stream, starts, batch_size, block_size, rng):
            s = rng.choice(starts, size=batch_size)
            x = stream[s[:, None] + np.arange(block_size)]
            y = np.zeros_like(x)
            y[:, :-1] = x[:, 1:]           # the last target is a '.': not rolled, padded
            return x, y
    '''),
    wrong(PART, "targets_not_shifted", "no_shift", '''
        def get_batch(stream, starts, batch_size, block_size, rng):
            s = rng.choice(starts, size=batch_size)
            x = np.stack([stream[i:i + block_size] for i in s])
            y = np.stack([stream[i:i + block_size] for i in s])
            return x, y
    '''),
    wrong(PART, "targets_rolled", "rolled", '''
        def get_batch(stream, starts, batch_size, block_size, rng):
            s = rng.choice(starts, size=batch_size)
            x = stream[s[:, None] + np.arange(block_size)]
            y = np.roll(x, -1, axis=1)  # next token
            return x, y
    '''),
    wrong(PART, "windows_of_t_plus_one", "windows_too_long", '''
        def get_batch(stream, starts, batch_size, block_size, rng):
            s = rng.choice(starts, size=batch_size)
            x = np.stack([stream[i:i + block_size + 1] for i in s])
            y = np.stack([stream[i + 1:i + block_size + 2] for i in s])
            return x, y
    '''),
    wrong(PART, "anywhere_in_the_stream", "starts_ignored", '''
        def get_batch(stream, starts, batch_size, block_size, rng):
            ix = rng.integers(0, len(stream) - block_size, size=batch_size)
            x = np.stack([stream[i:i + block_size] for i in ix])
            y = np.stack([stream[i + 1:i + block_size + 1] for i in ix])
            return x, y
    '''),
    wrong(PART, "index_not_position", "index_as_position", '''
        def get_batch(stream, starts, batch_size, block_size, rng):
            ix = rng.integers(0, len(starts), size=batch_size)
            x = np.stack([stream[i:i + block_size] for i in ix])
            y = np.stack([stream[i + 1:i + block_size + 1] for i in ix])
            return x, y
    '''),
    wrong(PART, "upper_bound_minus_one", "last_start_excluded", '''
        def get_batch(stream, starts, batch_size, block_size, rng):
            idx = rng.integers(0, len(starts) - 1, size=batch_size)
            s = starts[idx]
            window = stream[s[:, None] + np.arange(block_size + 1)]
            return window[:, :-1], window[:, 1:]
    '''),
    wrong(PART, "one_draw_per_batch", "one_start", '''
        def get_batch(stream, starts, batch_size, block_size, rng):
            s = rng.choice(starts)
            x = np.tile(stream[s:s + block_size], (batch_size, 1))
            y = np.tile(stream[s + 1:s + block_size + 1], (batch_size, 1))
            return x, y
    '''),
    wrong(PART, "global_generator", "foreign_rng", '''
        def get_batch(stream, starts, batch_size, block_size, rng):
            s = np.random.choice(starts, size=batch_size)
            window = stream[s[:, None] + np.arange(block_size + 1)]
            return window[:, :-1], window[:, 1:]
    '''),
    wrong(PART, "own_fixed_generator", "seed_ignored", '''
        def get_batch(stream, starts, batch_size, block_size, rng):
            s = np.random.default_rng(0).choice(starts, size=batch_size)
            window = stream[s[:, None] + np.arange(block_size + 1)]
            return window[:, :-1], window[:, 1:]
    '''),
    wrong(PART, "shuffles_the_starts", "in_place", '''
        def get_batch(stream, starts, batch_size, block_size, rng):
            rng.shuffle(starts)
            s = starts[rng.integers(0, len(starts), size=batch_size)]
            window = stream[s[:, None] + np.arange(block_size + 1)]
            return window[:, :-1], window[:, 1:]
    '''),
    wrong(PART, "float_token_ids", None, '''
        def get_batch(stream, starts, batch_size, block_size, rng):
            x = np.zeros((batch_size, block_size))   # float64: the ids are right, the dtype is not
            y = np.zeros((batch_size, block_size))
            for b, i in enumerate(rng.integers(0, len(starts), size=batch_size)):
                x[b] = stream[starts[i]:starts[i] + block_size]
                y[b] = stream[starts[i] + 1:starts[i] + block_size + 1]
            return x, y
    '''),
    wrong(PART, "windows_one_token_early", DERIVED + "a count that starts at 1 starts at 0", '''
        def get_batch(stream, starts, batch_size, block_size, rng):
            s = rng.choice(starts, size=batch_size) - 1          # reproducible, but not at the starts
            w = stream[s[:, None] + np.arange(block_size + 1)]
            return w[:, :-1], w[:, 1:]
    '''),
    wrong(PART, "last_start_sliced_off", "last_start_excluded", '''
        def get_batch(stream, starts, batch_size, block_size, rng):
            s = rng.choice(starts[:-1], size=batch_size)
            w = stream[s[:, None] + np.arange(block_size + 1)]
            return w[:, :-1], w[:, 1:]
    '''),
    wrong(PART, "without_replacement", "without_replacement", '''
        def get_batch(stream, starts, batch_size, block_size, rng):
            s = starts[rng.permutation(len(starts))[:batch_size]]
            x = np.stack([stream[i:i + block_size] for i in s])
            y = np.stack([stream[i + 1:i + 1 + block_size] for i in s])
            return x, y
    '''),
    # rows that are not independent: each row must draw its own start, with replacement
    wrong(PART, "rows_in_pairs", None, '''
        def get_batch(stream, starts, batch_size, block_size, rng):
            s = np.repeat(rng.choice(starts, size=(batch_size + 1) // 2), 2)[:batch_size]
            window = stream[s[:, None] + np.arange(block_size + 1)]
            return window[:, :-1], window[:, 1:]
    '''),
    wrong(PART, "permutation_cycled", "without_replacement", '''
        def get_batch(stream, starts, batch_size, block_size, rng):
            s = starts[np.resize(rng.permutation(len(starts)), batch_size)]
            window = stream[s[:, None] + np.arange(block_size + 1)]
            return window[:, :-1], window[:, 1:]
    '''),
    wrong(PART, "replace_only_when_needed", "without_replacement", '''
        def get_batch(stream, starts, batch_size, block_size, rng):
            s = rng.choice(starts, size=batch_size, replace=batch_size > len(starts))
            window = stream[s[:, None] + np.arange(block_size + 1)]
            return window[:, :-1], window[:, 1:]
    '''),
    wrong(PART, "target_slice_one_short", "targets_short", '''
        def get_batch(stream, starts, batch_size, block_size, rng):
            s = rng.choice(starts, size=batch_size)
            x = np.stack([stream[a:a + block_size] for a in s])
            y = np.stack([stream[a + 1:a + block_size] for a in s])
            return x, y
    '''),
]

CORRECT = [
    correct(PART, "integers_and_loops", '''
        def get_batch(stream, starts, batch_size, block_size, rng):
            idx = rng.integers(0, len(starts), size=batch_size)
            x = np.zeros((batch_size, block_size), dtype=stream.dtype)
            y = np.zeros((batch_size, block_size), dtype=stream.dtype)
            for b, i in enumerate(idx):
                s = starts[i]
                x[b] = stream[s:s + block_size]
                y[b] = stream[s + 1:s + block_size + 1]
            return x, y
    '''),
    correct(PART, "sliding_windows", '''
        def get_batch(stream, starts, batch_size, block_size, rng):
            windows = np.lib.stride_tricks.sliding_window_view(stream, block_size + 1)
            chosen = windows[rng.choice(starts, size=batch_size, replace=True)]
            return chosen[:, :-1].copy(), chosen[:, 1:].copy()
    '''),
]
