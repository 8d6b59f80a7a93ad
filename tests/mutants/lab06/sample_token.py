"""sample_token: wrong and correct answers."""
from . import correct, wrong

PART = "sample_token"

WRONG = [
    wrong(PART, "position_in_sorted_order", "rank_not_id", '''
        def sample_token(logits, rng, temperature=1.0, top_k=None, top_p=None, greedy=False):
            if greedy:
                return int(np.argmax(logits))
            probs = next_token_probs(logits, temperature, top_k, top_p)
            order = np.argsort(probs)[::-1]
            return int(rng.choice(len(order), p=probs[order]))
    '''),
    wrong(PART, "rank_instead_of_id", "rank_not_id_greedy_too", '''
        def sample_token(logits, rng, temperature=1.0, top_k=None, top_p=None, greedy=False):
            probs = next_token_probs(logits, temperature, top_k, top_p)
            ranked = np.sort(probs)[::-1]
            if greedy:
                return int(np.argmax(ranked))
            return int(rng.choice(len(ranked), p=ranked))
    '''),
    wrong(PART, "greedy_flag_unused", "greedy_ignored", '''
        def sample_token(logits, rng, temperature=1.0, top_k=None, top_p=None, greedy=False):
            probs = next_token_probs(logits, temperature, top_k, top_p)
            return int(rng.choice(len(probs), p=probs))
    '''),
    wrong(PART, "greedy_returns_the_maximum", "greedy_value", '''
        def sample_token(logits, rng, temperature=1.0, top_k=None, top_p=None, greedy=False):
            if greedy:
                return np.max(logits)
            probs = next_token_probs(logits, temperature, top_k, top_p)
            return int(rng.choice(len(probs), p=probs))
    '''),
    wrong(PART, "settings_not_passed_on", "settings_ignored", '''
        def sample_token(logits, rng, temperature=1.0, top_k=None, top_p=None, greedy=False):
            if greedy:
                return int(np.argmax(logits))
            probs = next_token_probs(logits)
            return int(rng.choice(len(probs), p=probs))
    '''),
    wrong(PART, "temperature_not_passed_on", "temperature_dropped", '''
        def sample_token(logits, rng, temperature=1.0, top_k=None, top_p=None, greedy=False):
            if greedy:
                return int(np.argmax(logits))
            probs = next_token_probs(logits, top_k=top_k, top_p=top_p)
            return int(rng.choice(len(probs), p=probs))
    '''),
    wrong(PART, "uniform_among_kept", "uniform_over_kept", '''
        def sample_token(logits, rng, temperature=1.0, top_k=None, top_p=None, greedy=False):
            if greedy:
                return int(np.argmax(logits))
            probs = next_token_probs(logits, temperature, top_k, top_p)
            candidates = np.nonzero(probs)[0]
            return int(rng.choice(candidates))
    '''),
    wrong(PART, "array_of_one_token", "array_of_one", '''
        def sample_token(logits, rng, temperature=1.0, top_k=None, top_p=None, greedy=False):
            if greedy:
                return int(np.argmax(logits))
            probs = next_token_probs(logits, temperature, top_k, top_p)
            return rng.choice(len(probs), size=1, p=probs)
    '''),
    wrong(PART, "global_generator", "foreign_rng", '''
        def sample_token(logits, rng, temperature=1.0, top_k=None, top_p=None, greedy=False):
            if greedy:
                return int(np.argmax(logits))
            probs = next_token_probs(logits, temperature, top_k, top_p)
            return int(np.random.choice(len(probs), p=probs))
    '''),
    wrong(PART, "own_fixed_generator", "seed_ignored", '''
        def sample_token(logits, rng, temperature=1.0, top_k=None, top_p=None, greedy=False):
            if greedy:
                return int(np.argmax(logits))
            probs = next_token_probs(logits, temperature, top_k, top_p)
            return int(np.random.default_rng(42).choice(len(probs), p=probs))
    '''),
    wrong(PART, "always_the_most_likely", "seed_ignored", '''
        def sample_token(logits, rng, temperature=1.0, top_k=None, top_p=None, greedy=False):
            return int(np.argmax(next_token_probs(logits, temperature, top_k, top_p)))
    '''),
    wrong(PART, "temperature_applied_twice", None, '''
        def sample_token(logits, rng, temperature=1.0, top_k=None, top_p=None, greedy=False):
            if greedy:
                return int(np.argmax(logits))
            probs = next_token_probs(np.asarray(logits) / temperature, temperature, top_k, top_p)
            return int(rng.choice(len(probs), p=probs))
    '''),
    wrong(PART, "temperature_only", "filters_ignored", '''
        def sample_token(logits, rng, temperature=1.0, top_k=None, top_p=None, greedy=False):
            if greedy:
                return int(np.argmax(logits))
            probs = softmax(logits / temperature)
            return int(rng.choice(len(probs), p=probs))
    '''),
    wrong(PART, "draws_a_logit", "logit_drawn", '''
        def sample_token(logits, rng, temperature=1.0, top_k=None, top_p=None, greedy=False):
            if greedy:
                return int(np.argmax(logits))
            return rng.choice(logits, p=next_token_probs(logits, temperature, top_k, top_p))
    '''),
]

CORRECT = [
    correct(PART, "inverse_cdf", '''
        def sample_token(logits, rng, temperature=1.0, top_k=None, top_p=None, greedy=False):
            if greedy:
                return int(np.argmax(logits))
            probs = next_token_probs(logits, temperature, top_k, top_p)
            return int(np.argmax(np.cumsum(probs) > rng.random()))
    '''),
    correct(PART, "multinomial", '''
        def sample_token(logits, rng, temperature=1.0, top_k=None, top_p=None, greedy=False):
            if greedy:
                return int(np.argmax(logits))
            counts = rng.multinomial(1, next_token_probs(logits, temperature, top_k, top_p))
            return int(np.argmax(counts))
    '''),
    correct(PART, "gumbel_max", '''
        def sample_token(logits, rng, temperature=1.0, top_k=None, top_p=None, greedy=False):
            if greedy:
                return int(np.argmax(logits))
            probs = next_token_probs(logits, temperature, top_k, top_p)
            with np.errstate(divide="ignore"):
                scores = np.log(probs) + rng.gumbel(size=len(probs))
            return int(np.argmax(scores))
    '''),
    correct(PART, "choice_of_ids", '''
        def sample_token(logits, rng, temperature=1.0, top_k=None, top_p=None, greedy=False):
            probs = next_token_probs(logits, temperature=temperature, top_k=top_k, top_p=top_p)
            if greedy:
                return int(np.argmax(probs))
            return rng.choice(np.arange(len(probs)), p=probs)
    '''),
]
