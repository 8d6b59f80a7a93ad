"""linear_backward: wrong and correct answers."""
from . import correct, wrong

PART = "linear_backward"

WRONG = [
    wrong(PART, "linear_in_float32", "computed_in_float32", '''
        def linear_backward(dy, x, W):
            dy, x, W = dy.astype(np.float32), x.astype(np.float32), W.astype(np.float32)
            x2, dy2 = x.reshape(-1, x.shape[-1]), dy.reshape(-1, dy.shape[-1])
            return (dy2 @ W.T).reshape(x.shape), x2.T @ dy2, dy2.sum(axis=0)
    '''),
    wrong(PART, "batch_axes_not_flattened", "batched_not_flattened", '''
        def linear_backward(dy, x, W):
            dx = dy @ W.T
            dW = x.T @ dy
            db = dy.reshape(-1, dy.shape[-1]).sum(axis=0)
            return dx, dW, db
    '''),
    wrong(PART, "dx_times_W", "dx_without_transpose", '''
        def linear_backward(dy, x, W):
            x2, dy2 = x.reshape(-1, x.shape[-1]), dy.reshape(-1, dy.shape[-1])
            return (dy2 @ W).reshape(x.shape), x2.T @ dy2, dy2.sum(axis=0)
    '''),
    wrong(PART, "dW_dy_first", "dW_transposed", '''
        def linear_backward(dy, x, W):
            x2, dy2 = x.reshape(-1, x.shape[-1]), dy.reshape(-1, dy.shape[-1])
            return (dy2 @ W.T).reshape(x.shape), dy2.T @ x2, dy2.sum(axis=0)
    '''),
    wrong(PART, "dW_averaged", "dW_mean", '''
        def linear_backward(dy, x, W):
            x2, dy2 = x.reshape(-1, x.shape[-1]), dy.reshape(-1, dy.shape[-1])
            N = x2.shape[0]
            return (dy2 @ W.T).reshape(x.shape), x2.T @ dy2 / N, dy2.sum(axis=0)
    '''),
    wrong(PART, "db_averaged", "db_mean", '''
        def linear_backward(dy, x, W):
            x2, dy2 = x.reshape(-1, x.shape[-1]), dy.reshape(-1, dy.shape[-1])
            return (dy2 @ W.T).reshape(x.shape), x2.T @ dy2, np.mean(dy2, axis=0)
    '''),
    wrong(PART, "db_over_features", "db_wrong_axis", '''
        def linear_backward(dy, x, W):
            dx = dy @ W.T
            dW = x.reshape(-1, x.shape[-1]).T @ dy.reshape(-1, dy.shape[-1])
            db = dy.sum(axis=-1)
            return dx, dW, db
    '''),
    wrong(PART, "db_first_axis_only", "db_first_axis", '''
        def linear_backward(dy, x, W):
            dx = dy @ W.T
            dW = np.tensordot(x, dy, axes=(list(range(x.ndim - 1)), list(range(dy.ndim - 1))))
            db = dy.sum(axis=0)
            return dx, dW, db
    '''),
    wrong(PART, "dx_left_flat", "dx_flat", '''
        def linear_backward(dy, x, W):
            x2 = x.reshape(-1, W.shape[0])
            dy2 = dy.reshape(-1, W.shape[1])
            return dy2 @ W.T, x2.T @ dy2, dy2.sum(0)
    '''),
]

CORRECT = [
    correct(PART, "einsum", '''
        def linear_backward(dy, x, W):
            dx = np.einsum("...o,io->...i", dy, W)
            x2, dy2 = x.reshape(-1, W.shape[0]), dy.reshape(-1, W.shape[1])
            return dx, np.einsum("ni,no->io", x2, dy2), np.einsum("no->o", dy2)
    '''),
    correct(PART, "tensordot_over_leading_axes", '''
        def linear_backward(dy, x, W):
            lead = tuple(range(x.ndim - 1))
            return dy @ W.T, np.tensordot(x, dy, axes=(lead, lead)), dy.sum(axis=lead)
    '''),
    correct(PART, "loop_over_rows", '''
        def linear_backward(dy, x, W):
            x2, dy2 = x.reshape(-1, x.shape[-1]), dy.reshape(-1, dy.shape[-1])
            dW = np.zeros_like(W)
            db = np.zeros(W.shape[1], dtype=dy.dtype)
            for xi, gi in zip(x2, dy2):
                dW += np.outer(xi, gi)
                db += gi
            return (dy2 @ W.T).reshape(x.shape), dW, db
    '''),
]
