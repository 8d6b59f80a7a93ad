"""embedding_backward: wrong and correct answers."""
from . import correct, wrong

PART = "embedding_backward"

WRONG = [
    wrong(PART, "head_term_from_d_x", "head_from_d_x", '''
        def embedding_backward(d_x, d_logits, token_ids, h):
            V, C = d_logits.shape[-1], d_x.shape[-1]
            dE = d_logits.reshape(-1, V).T @ d_x.reshape(-1, C)
            np.add.at(dE, token_ids.reshape(-1), d_x.reshape(-1, C))
            return dE
    '''),
    wrong(PART, "fancy_index_add", "repeats_lost", '''
        def embedding_backward(d_x, d_logits, token_ids, h):
            V, C = d_logits.shape[-1], d_x.shape[-1]
            dE = d_logits.reshape(-1, V).T @ h.reshape(-1, C)
            dE[token_ids.reshape(-1)] += d_x.reshape(-1, C)
            return dE
    '''),
    wrong(PART, "fancy_index_assign", "lookup_assigned", '''
        def embedding_backward(d_x, d_logits, token_ids, h):
            V, C = d_logits.shape[-1], d_x.shape[-1]
            dE = d_logits.reshape(-1, V).T @ h.reshape(-1, C)
            dE[token_ids.ravel()] = d_x.reshape(-1, C)
            return dE
    '''),
    wrong(PART, "head_share_only", "head_only", '''
        def embedding_backward(d_x, d_logits, token_ids, h):
            return np.einsum("btv,btc->vc", d_logits, h)
    '''),
    wrong(PART, "lookup_share_only", "lookup_only", '''
        def embedding_backward(d_x, d_logits, token_ids, h):
            dE = np.zeros((d_logits.shape[-1], d_x.shape[-1]))
            np.add.at(dE, token_ids, d_x)
            return dE
    '''),
    wrong(PART, "head_share_averaged", "head_mean", '''
        def embedding_backward(d_x, d_logits, token_ids, h):
            V, C = d_logits.shape[-1], d_x.shape[-1]
            N = token_ids.size
            dE = d_logits.reshape(N, V).T @ h.reshape(N, C) / N
            np.add.at(dE, token_ids.reshape(-1), d_x.reshape(N, C))
            return dE
    '''),
    wrong(PART, "loop_with_assignment", "lookup_assigned", '''
        def embedding_backward(d_x, d_logits, token_ids, h):
            B, T, C = d_x.shape
            dE = np.einsum("btv,btc->vc", d_logits, h)
            for b in range(B):
                for t in range(T):
                    dE[token_ids[b, t]] = d_x[b, t]
            return dE
    '''),
    wrong(PART, "head_term_over_sequences_averaged", "head_batch_mean", '''
        def embedding_backward(d_x, d_logits, token_ids, h):
            B = token_ids.shape[0]
            dE = sum(d_logits[b].T @ h[b] for b in range(B)) / B
            np.add.at(dE, token_ids.ravel(), d_x.reshape(-1, d_x.shape[-1]))
            return dE
    '''),
]

CORRECT = [
    correct(PART, "one_hot_matmul", '''
        def embedding_backward(d_x, d_logits, token_ids, h):
            V, C = d_logits.shape[-1], d_x.shape[-1]
            onehot = np.eye(V)[token_ids.reshape(-1)]                    # (N, V)
            return d_logits.reshape(-1, V).T @ h.reshape(-1, C) + onehot.T @ d_x.reshape(-1, C)
    '''),
    correct(PART, "loop_accumulating", '''
        def embedding_backward(d_x, d_logits, token_ids, h):
            B, T, C = d_x.shape
            dE = np.einsum("btv,btc->vc", d_logits, h)
            for b in range(B):
                for t in range(T):
                    dE[token_ids[b, t]] += d_x[b, t]
            return dE
    '''),
    correct(PART, "bincount_per_column", '''
        def embedding_backward(d_x, d_logits, token_ids, h):
            V, C = d_logits.shape[-1], d_x.shape[-1]
            ids, rows = token_ids.reshape(-1), d_x.reshape(-1, C)
            lookup = np.stack([np.bincount(ids, weights=rows[:, c], minlength=V) for c in range(C)], axis=1)
            return np.tensordot(d_logits, h, axes=([0, 1], [0, 1])) + lookup
    '''),
]
