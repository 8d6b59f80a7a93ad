"""next_token_probs: wrong and correct answers."""
from . import correct, wrong

PART = "next_token_probs"

WRONG = [
    # np.argmax of an all-False test is 0: with top_p = 1 and a total a hair below 1, one token is kept
    wrong(PART, "argmax_nucleus", "never_reached", '''
        def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
            z = logits / temperature
            probs = np.exp(z - z.max())
            probs = probs / probs.sum()
            if top_k is not None:
                order = np.argsort(-probs, kind="stable")
                probs = probs.copy()
                probs[order[top_k:]] = 0.0
                probs = probs / probs.sum()
            if top_p is not None:
                order = np.argsort(-probs, kind="stable")
                total = np.cumsum(probs[order])
                last = int(np.argmax(total >= top_p))
                kept = np.zeros_like(probs)
                kept[order[:last + 1]] = probs[order[:last + 1]]
                probs = kept / kept.sum()
            return probs
    '''),
    wrong(PART, "temperature_after_softmax_argmax_nucleus", "temperature_ignored_and_never_reached", '''
        def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
            probs = np.exp(logits - logits.max())
            probs = probs / probs.sum() / temperature
            probs = probs / probs.sum()
            if top_k is not None:
                cut = np.sort(probs)[-top_k]
                probs = np.where(probs >= cut, probs, 0.0)
                probs = probs / probs.sum()
            if top_p is not None:
                order = np.argsort(-probs)
                total = np.cumsum(probs[order])
                n = int(np.argmax(total >= top_p)) + 1
                kept = np.zeros_like(probs)
                kept[order[:n]] = probs[order[:n]]
                probs = kept / kept.sum()
            return probs
    '''),
    wrong(PART, "top_p_cut_not_renormalised", "top_p_not_renormalised", '''
        def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
            probs = np.exp(logits / temperature - np.max(logits / temperature))
            probs = probs / probs.sum()
            order = np.argsort(-probs, kind="stable")
            if top_k is not None:
                order = order[:max(int(top_k), 1)]
            kept = probs[order] / probs[order].sum()
            if top_p is not None:
                n = int(np.searchsorted(np.cumsum(kept), top_p)) + 1
                order, kept = order[:n], kept[:n]
            out = np.zeros_like(probs)
            out[order] = kept
            return out
    '''),
    wrong(PART, "stops_before_reaching_p", "nucleus_exclusive", '''
        def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
            z = np.asarray(logits, dtype=float) / temperature
            probs = np.exp(z - z.max())
            probs /= probs.sum()
            order = np.argsort(-probs)
            if top_k is not None:
                order = order[:top_k]
            kept = probs[order] / probs[order].sum()
            if top_p is not None:
                n = max(1, int(np.sum(np.cumsum(kept) < top_p)))     # stop once the total reaches p
                order, kept = order[:n], kept[:n]
            out = np.zeros_like(probs)
            out[order] = kept
            return out / out.sum()
    '''),
    wrong(PART, "nucleus_of_the_whole_distribution", "top_p_before_top_k", '''
        def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
            z = np.asarray(logits, dtype=float) / temperature
            probs = np.exp(z - z.max())
            probs /= probs.sum()
            order = np.argsort(-probs, kind="stable")
            keep = np.ones(len(probs), dtype=bool)
            if top_k is not None:
                keep[order[top_k:]] = False
            if top_p is not None:                       # both sets on the same distribution
                n = int(np.searchsorted(np.cumsum(probs[order]), top_p)) + 1
                keep[order[n:]] = False
            out = np.where(keep, probs, 0.0)
            return out / out.sum()
    '''),
    wrong(PART, "shifted_mask_without_fallback", "nucleus_can_be_empty", '''
        def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
            z = np.asarray(logits, dtype=float) / temperature
            probs = np.exp(z - z.max())
            probs /= probs.sum()
            order = np.argsort(-probs)
            if top_k is not None:
                order = order[:top_k]
            sorted_probs = probs[order] / probs[order].sum()
            keep = np.zeros(len(probs), dtype=bool)
            keep[order] = True
            if top_p is not None:
                before = np.cumsum(sorted_probs) - sorted_probs     # total of the tokens before
                keep[order[before >= top_p]] = False
            out = np.where(keep, probs, 0.0)
            return out / out.sum()
    '''),
    wrong(PART, "cumsum_in_vocabulary_order", "nucleus_unsorted", '''
        def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
            z = np.asarray(logits, dtype=float) / temperature
            probs = np.exp(z - z.max())
            probs /= probs.sum()
            if top_k is not None:
                probs[np.argsort(probs)[:-top_k]] = 0.0
                probs /= probs.sum()
            if top_p is not None:
                cut = np.searchsorted(np.cumsum(probs), top_p)
                probs[cut + 1:] = 0.0
                probs /= probs.sum()
            return probs
    '''),
    wrong(PART, "nucleus_of_the_raw_logits", "nucleus_before_temperature", '''
        def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
            def softmax1(z):
                e = np.exp(z - np.max(z))
                return e / e.sum()
            base = softmax1(np.asarray(logits, dtype=float))
            order = np.argsort(-base)
            n = len(base) if top_k is None else min(top_k, len(base))
            if top_p is not None:
                top = base[order[:n]] / base[order[:n]].sum()
                n = min(n, int(np.searchsorted(np.cumsum(top), top_p)) + 1)
            probs = softmax1(np.asarray(logits, dtype=float) / temperature)
            out = np.zeros_like(probs)
            out[order[:n]] = probs[order[:n]]
            return out / out.sum()
    '''),
    wrong(PART, "top_k_elif_top_p", "top_k_or_top_p", '''
        def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
            z = np.asarray(logits, dtype=float) / temperature
            probs = np.exp(z - z.max())
            probs /= probs.sum()
            order = np.argsort(-probs, kind="stable")
            if top_k is not None:
                n = top_k
            elif top_p is not None:
                n = int(np.searchsorted(np.cumsum(probs[order]), top_p)) + 1
            else:
                n = len(probs)
            out = np.zeros_like(probs)
            out[order[:n]] = probs[order[:n]]
            return out / out.sum()
    '''),
    wrong(PART, "argsort_ascending", "top_k_least_likely", '''
        def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
            z = np.asarray(logits, dtype=float) / temperature
            probs = np.exp(z - z.max())
            probs /= probs.sum()
            if top_k is not None:
                keep = np.argsort(probs)[:top_k]
                mask = np.zeros_like(probs)
                mask[keep] = 1.0
                probs = probs * mask / (probs * mask).sum()
            if top_p is not None:
                order = np.argsort(-probs, kind="stable")
                n = int(np.searchsorted(np.cumsum(probs[order]), top_p)) + 1
                probs[order[n:]] = 0.0
                probs /= probs.sum()
            return probs
    '''),
    wrong(PART, "strictly_above_the_kth", "top_k_strict", '''
        def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
            z = np.asarray(logits, dtype=float) / temperature
            probs = np.exp(z - z.max())
            probs /= probs.sum()
            if top_k is not None:
                kth = np.sort(probs)[-top_k]
                probs = np.where(probs > kth, probs, 0.0)
                probs /= probs.sum()
            if top_p is not None:
                order = np.argsort(-probs, kind="stable")
                n = int(np.searchsorted(np.cumsum(probs[order]), top_p)) + 1
                probs[order[n:]] = 0.0
                probs /= probs.sum()
            return probs
    '''),
    wrong(PART, "zeroed_but_not_renormalised", "not_renormalised", '''
        def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
            z = np.asarray(logits, dtype=float) / temperature
            probs = np.exp(z - z.max())
            probs /= probs.sum()
            order = np.argsort(-probs, kind="stable")
            n = len(probs) if top_k is None else top_k
            if top_p is not None:
                top = probs[order[:n]] / probs[order[:n]].sum()
                n = min(n, int(np.searchsorted(np.cumsum(top), top_p - 1e-12)) + 1)
            probs[order[n:]] = 0.0
            return probs
    '''),
    wrong(PART, "temperature_times_logits", "temperature_multiplies", '''
        def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
            z = np.asarray(logits, dtype=float) * temperature
            probs = np.exp(z - z.max())
            probs /= probs.sum()
            order = np.argsort(-probs, kind="stable")
            n = len(probs) if top_k is None else top_k
            if top_p is not None:
                top = probs[order[:n]] / probs[order[:n]].sum()
                n = min(n, int(np.searchsorted(np.cumsum(top), top_p)) + 1)
            out = np.zeros_like(probs)
            out[order[:n]] = probs[order[:n]]
            return out / out.sum()
    '''),
    wrong(PART, "temperature_on_the_probabilities", "temperature_ignored", '''
        def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
            z = np.asarray(logits, dtype=float)
            probs = np.exp(z - z.max())
            probs = probs / probs.sum() / temperature
            order = np.argsort(-probs, kind="stable")
            n = len(probs) if top_k is None else top_k
            out = np.zeros_like(probs)
            out[order[:n]] = probs[order[:n]]
            out /= out.sum()
            if top_p is not None:
                m = int(np.searchsorted(np.cumsum(out[order]), top_p)) + 1
                out[order[m:]] = 0.0
                out /= out.sum()
            return out
    '''),
    wrong(PART, "plain_exp", "unstable_softmax_probs", '''
        def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
            e = np.exp(np.asarray(logits, dtype=float) / temperature)
            probs = e / e.sum()
            order = np.argsort(-probs, kind="stable")
            n = len(probs) if top_k is None else top_k
            if top_p is not None:
                top = probs[order[:n]] / probs[order[:n]].sum()
                n = min(n, int(np.searchsorted(np.cumsum(top), top_p)) + 1)
            out = np.zeros_like(probs)
            out[order[:n]] = probs[order[:n]]
            return out / out.sum()
    '''),
    wrong(PART, "logits_divided_in_place", "in_place", '''
        def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
            logits /= temperature
            probs = np.exp(logits - logits.max())
            probs /= probs.sum()
            order = np.argsort(-probs, kind="stable")
            n = len(probs) if top_k is None else top_k
            if top_p is not None:
                top = probs[order[:n]] / probs[order[:n]].sum()
                n = min(n, int(np.searchsorted(np.cumsum(top), top_p)) + 1)
            out = np.zeros_like(probs)
            out[order[:n]] = probs[order[:n]]
            return out / out.sum()
    '''),
    wrong(PART, "no_token_reaches_p", "never_reached", '''
        def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
            z = np.asarray(logits, dtype=float) / temperature
            probs = np.exp(z - z.max())
            probs /= probs.sum()
            order = np.argsort(-probs)
            if top_k is not None:
                order = order[:top_k]
            kept = probs[order] / probs[order].sum()
            if top_p is not None:
                n = int(np.argmax(np.cumsum(kept) >= top_p)) + 1   # one token when no total reaches p
                order, kept = order[:n], kept[:n] / kept[:n].sum()
            out = np.zeros_like(probs)
            out[order] = kept
            return out
    '''),
    wrong(PART, "total_at_most_p", "nucleus_short_at_most_p", '''
        def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
            probs = softmax(logits / temperature)
            if top_k is not None:
                kth = np.sort(probs)[-top_k]
                probs = np.where(probs >= kth, probs, 0.0)
                probs = probs / probs.sum()
            if top_p is not None:
                order = np.argsort(-probs)
                running = np.cumsum(probs[order])
                keep = max(1, int(np.sum(running <= top_p)))
                out = np.zeros_like(probs)
                out[order[:keep]] = probs[order[:keep]]
                probs = out / out.sum()
            return probs
    '''),
]

CORRECT = [
    correct(PART, "softmax_by_logaddexp", '''
        def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
            z = logits / temperature
            p = np.exp(z - np.logaddexp.reduce(z))       # a total of 1/4 comes out a hair off
            order = np.argsort(-p, kind="stable")
            if top_k is not None:
                order = order[:top_k]
            kp = p[order] / p[order].sum()
            if top_p is not None:
                hit = np.nonzero(np.cumsum(kp) >= top_p)[0]
                n = hit[0] + 1 if len(hit) else len(kp)
                order, kp = order[:n], kp[:n] / kp[:n].sum()
            out = np.zeros_like(p)
            out[order] = kp
            return out
    '''),
    correct(PART, "renormalised_in_log_space", '''
        def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
            z = np.asarray(logits, dtype=float) / temperature
            logp = z - np.logaddexp.reduce(z)
            if top_k is not None:
                kth = np.sort(logp)[::-1][top_k - 1]
                logp = np.where(logp >= kth, logp, -np.inf)
                logp = logp - np.logaddexp.reduce(logp)
            p = np.exp(logp)
            if top_p is not None:
                order = np.argsort(-p, kind="stable")
                reached = np.flatnonzero(np.cumsum(p[order]) >= top_p)
                n = reached[0] + 1 if reached.size else len(p)
                keep = np.zeros(len(p), bool)
                keep[order[:n]] = True
                p = np.where(keep, p, 0.0)
                p /= p.sum()
            return p
    '''),
    # At a running total equal to p, `> p` keeps one token more: rounding does the same to a
    # correct `>= p` whose softmax is written with a log-sum-exp, so both are accepted there.
    correct(PART, "shifted_removal_mask", '''
        def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
            z = np.asarray(logits, dtype=float) / temperature
            if top_k is not None:
                z = np.where(z < np.sort(z)[-top_k], -np.inf, z)
            probs = np.exp(z - z.max())
            probs /= probs.sum()
            if top_p is not None:
                order = np.argsort(-probs)
                remove = np.cumsum(probs[order]) > top_p
                remove[1:] = remove[:-1].copy()          # keep the token that crosses p
                remove[0] = False
                probs[order[remove]] = 0.0
                probs /= probs.sum()
            return probs
    '''),
    correct(PART, "one_more_at_equality", '''
        def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
            z = np.asarray(logits, dtype=float) / temperature
            probs = np.exp(z - z.max())
            probs /= probs.sum()
            order = np.argsort(-probs, kind="stable")
            if top_k is not None:
                order = order[:top_k]
            kept = probs[order] / probs[order].sum()
            if top_p is not None:
                n = int(np.sum(np.cumsum(kept) <= top_p)) + 1           # until the total passes p
                order, kept = order[:n], kept[:n]
            out = np.zeros_like(probs)
            out[order] = kept
            return out / out.sum()
    '''),
    correct(PART, "filter_logits_then_renormalise", '''
        def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
            def softmax1(z):
                e = np.exp(z - np.max(z))
                return e / e.sum()
            z = np.asarray(logits, dtype=float) / temperature
            if top_k is not None:                           # like Hugging Face: filter, renormalise
                kth = np.sort(z)[-min(top_k, len(z))]
                z = np.where(z >= kth, z, -np.inf)
            if top_p is not None:
                probs = softmax1(z)
                order = np.argsort(-probs, kind="stable")
                before = np.cumsum(probs[order]) - probs[order]
                drop = before >= top_p
                drop[0] = False                             # keep at least one
                z[order[drop]] = -np.inf
            return softmax1(z)
    '''),
    correct(PART, "loop_until_p", '''
        def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
            z = np.asarray(logits, dtype=float) / temperature
            probs = np.exp(z - z.max())
            probs /= probs.sum()
            ranked = sorted(range(len(probs)), key=lambda i: -probs[i])
            if top_k is not None:
                ranked = ranked[:top_k]
            mass = sum(probs[i] for i in ranked)
            kept, total = [], 0.0
            for i in ranked:
                kept.append(i)
                total += probs[i] / mass
                if top_p is not None and total >= top_p:
                    break
            out = np.zeros(len(probs))
            out[kept] = probs[kept]
            return out / out.sum()
    '''),
    correct(PART, "partition_threshold", '''
        def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
            z = np.asarray(logits, dtype=np.float64) / temperature
            probs = np.exp(z - z.max())
            probs /= probs.sum()
            keep = np.ones(len(probs), dtype=bool)
            if top_k is not None and top_k < len(probs):
                kth = np.partition(probs, -top_k)[-top_k]
                keep &= probs >= kth
            if top_p is not None:
                renormalised = np.where(keep, probs, 0.0) / probs[keep].sum()
                order = np.argsort(-renormalised, kind="stable")
                n = int(np.searchsorted(np.cumsum(renormalised[order]), top_p, side="left")) + 1
                nucleus = np.zeros(len(probs), dtype=bool)
                nucleus[order[:n]] = True
                keep &= nucleus
            out = np.where(keep, probs, 0.0)
            return out / out.sum()
    '''),
    correct(PART, "ascending_like_hugging_face", '''
        def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
            z = np.asarray(logits, dtype=float) / temperature
            if top_k is not None:
                z = np.where(z < np.sort(z)[-top_k], -np.inf, z)
            if top_p is not None:                   # from the least likely up, as transformers does
                order = np.argsort(z, kind="stable")
                e = np.exp(z[order] - z.max())
                tail = np.cumsum(e / e.sum())
                drop = tail <= 1 - top_p
                drop[-1] = False
                z[order[drop]] = -np.inf
            e = np.exp(z - z.max())
            return e / e.sum()
    '''),
]
