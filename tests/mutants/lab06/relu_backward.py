"""relu_backward: wrong and correct answers."""
from . import correct, wrong

PART = "relu_backward"

WRONG = [
    wrong(PART, "greater_or_equal", "passes_at_zero", '''
        def relu_backward(dy, x):
            return dy * (x >= 0)
    '''),
    wrong(PART, "mask_without_dy", "mask_only", '''
        def relu_backward(dy, x):
            return np.where(x > 0, 1, 0)
    '''),
    wrong(PART, "times_the_activation", "times_relu", '''
        def relu_backward(dy, x):
            return dy * np.maximum(0, x)
    '''),
    wrong(PART, "mask_from_the_gradient", "mask_from_dy", '''
        def relu_backward(dy, x):
            return np.where(dy > 0, dy, 0.0)
    '''),
    wrong(PART, "leaky_slope", "leaky", '''
        def relu_backward(dy, x):
            return np.where(x > 0, dy, 0.01 * dy)
    '''),
    wrong(PART, "zeroed_in_place", "in_place", '''
        def relu_backward(dy, x):
            dy[x <= 0] = 0
            return dy
    '''),
]

CORRECT = [
    correct(PART, "where", '''
        def relu_backward(dy, x):
            return np.where(x > 0, dy, 0.0)
    '''),
    correct(PART, "heaviside", '''
        def relu_backward(dy, x):
            return dy * np.heaviside(x, 0.0)
    '''),
    correct(PART, "copy_then_zero", '''
        def relu_backward(dy, x):
            dx = dy.copy()
            dx[x <= 0] = 0
            return dx
    '''),
]
