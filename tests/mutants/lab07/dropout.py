"""dropout: wrong and correct answers."""
from . import correct, wrong

PART = "dropout"

WRONG = [
    wrong(PART, "not_rescaled", "not_rescaled", '''
        def dropout(x, p, rng, training=True):
            if not training or p == 0:
                return x
            mask = rng.random(x.shape) >= p
            return x * mask
    '''),
    wrong(PART, "times_keep_probability", "multiplied_by_keep", '''
        def dropout(x, p, rng, training=True):
            if not training:
                return x.copy()
            mask = (rng.random(x.shape) >= p).astype(x.dtype)
            return x * mask * (1 - p)
    '''),
    wrong(PART, "p_as_keep_probability", "p_keeps", '''
        def dropout(x, p, rng, training=True):
            if not training or p == 0:
                return x.copy()
            keep = rng.random(x.shape) < p
            return np.where(keep, x / p, 0.0)
    '''),
    wrong(PART, "training_flag_ignored", "always_on", '''
        def dropout(x, p, rng, training=True):
            if p == 0:
                return x.copy()
            mask = rng.random(x.shape) >= p
            return x * mask / (1 - p)
    '''),
    wrong(PART, "training_flag_inverted", "flag_inverted", '''
        def dropout(x, p, rng, training=True):
            if training or p == 0:
                return x.copy()
            return np.where(rng.random(x.shape) >= p, x / (1 - p), 0.0)
    '''),
    wrong(PART, "scaled_by_root", "scaled_by_root", '''
        def dropout(x, p, rng, training=True):
            if not training or p == 0:
                return x.copy()
            keep = rng.random(x.shape) >= p
            return x * keep / (1 - p) ** 0.5
    '''),
    wrong(PART, "old_style_evaluation", "scaled_at_evaluation", '''
        def dropout(x, p, rng, training=True):
            if not training:
                return x * (1 - p)
            mask = rng.random(x.shape) >= p
            return x * mask / (1 - p)
    '''),
    wrong(PART, "one_decision_per_row", "rows_dropped", '''
        def dropout(x, p, rng, training=True):
            if not training or p == 0:
                return x.copy()
            mask = rng.random((*x.shape[:-1], 1)) >= p
            return np.where(mask, x / (1 - p), 0.0)
    '''),
    wrong(PART, "fixed_rate", "fixed_rate", '''
        RATE = 0.1


        def dropout(x, p, rng, training=True):
            if not training:
                return x.copy()
            keep = rng.random(x.shape) >= RATE
            return np.where(keep, x / (1 - RATE), 0.0)
    '''),
    wrong(PART, "global_generator", "foreign_rng", '''
        def dropout(x, p, rng, training=True):
            if not training or p == 0:
                return x.copy()
            mask = np.random.rand(*x.shape) > p
            return x * mask / (1 - p)
    '''),
    # a mask kept across calls (redrawn only for a new shape): the seed of later calls is ignored
    wrong(PART, "mask_drawn_once", "mask_reused", '''
        _kept = {}

        def dropout(x, p, rng, training=True):
            if not training or p == 0:
                return x.copy()
            if _kept.get("mask") is None or _kept["mask"].shape != x.shape:
                _kept["mask"] = rng.random(x.shape) >= p
            return np.where(_kept["mask"], x / (1 - p), 0.0)
    '''),
    wrong(PART, "alternating_mask_without_rng", "seed_ignored", '''
        def dropout(x, p, rng, training=True):
            if not training or p == 0:
                return x.copy()
            keep = np.arange(x.size).reshape(x.shape) % 2 == 0
            return np.where(keep, x / (1 - p), 0.0)
    '''),
    wrong(PART, "in_place", "in_place", '''
        def dropout(x, p, rng, training=True):
            if not training or p == 0:
                return x
            x *= rng.random(x.shape) >= p
            x /= 1 - p
            return x
    '''),
    wrong(PART, "divided_by_p", "divided_by_p", '''
        def dropout(x, p, rng, training=True):
            if not training or p == 0:
                return x.copy()
            keep = rng.random(x.shape) >= p
            return np.where(keep, x / p, 0.0)
    '''),
    wrong(PART, "dropped_entries_zeroed_in_place", "in_place", '''
        def dropout(x, p, rng, training=True):
            if not training or p == 0:
                return x.copy()
            x[rng.random(x.shape) < p] = 0.0
            return x / (1 - p)
    '''),
    wrong(PART, "nothing_dropped", "never_drops", '''
        def dropout(x, p, rng, training=True):
            return x.copy()
    '''),
    wrong(PART, "a_fixed_number_dropped", None, '''
        def dropout(x, p, rng, training=True):
            if not training or p == 0:
                return x.copy()
            drop = rng.permutation(x.size) < round(p * x.size)     # exactly p·n entries, never more or fewer
            return np.where(drop.reshape(x.shape), 0.0, x / (1 - p))
    '''),
]

CORRECT = [
    correct(PART, "binomial_mask", '''
        def dropout(x, p, rng, training=True):
            if not training:
                return x
            mask = rng.binomial(1, 1 - p, size=x.shape)
            return x * mask / (1 - p)
    '''),
    correct(PART, "uniform_greater_than", '''
        def dropout(x, p, rng, training=True):
            if training and p > 0:
                keep = rng.uniform(0.0, 1.0, size=x.shape) > p
                return np.where(keep, x / (1.0 - p), 0.0)
            return np.array(x, copy=True)
    '''),
    correct(PART, "choice_of_scales", '''
        def dropout(x, p, rng, training=True):
            if not training or p == 0:
                return x.copy()
            scale = rng.choice([0.0, 1.0 / (1 - p)], size=x.shape, p=[p, 1 - p])
            return x * scale
    '''),
]
