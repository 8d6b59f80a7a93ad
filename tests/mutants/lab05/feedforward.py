"""feedforward: wrong and correct answers."""
from . import correct, wrong

PART = "feedforward"

WRONG = [
    wrong(PART, "ffn_in_float32", "single_precision_ffn", '''
        def feedforward(x, W1, b1, W2, b2):
            x, W1, b1, W2, b2 = (a.astype(np.float32) for a in (x, W1, b1, W2, b2))
            return np.maximum(0, x @ W1 + b1) @ W2 + b2
    '''),
    wrong(PART, "gelu_from_gpt2", "gelu", '''
        def feedforward(x: np.ndarray, W1: np.ndarray, b1: np.ndarray,
                        W2: np.ndarray, b2: np.ndarray) -> np.ndarray:
            h = x @ W1 + b1
            h = 0.5 * h * (1 + np.tanh(np.sqrt(2 / np.pi) * (h + 0.044715 * h ** 3)))
            return h @ W2 + b2
    '''),
    wrong(PART, "first_bias_forgotten", "missing_b1", '''
        def feedforward(x: np.ndarray, W1: np.ndarray, b1: np.ndarray,
                        W2: np.ndarray, b2: np.ndarray) -> np.ndarray:
            hidden = np.maximum(0, x @ W1)
            return hidden @ W2 + b2
    '''),
    wrong(PART, "second_bias_forgotten", "missing_b2", '''
        def feedforward(x: np.ndarray, W1: np.ndarray, b1: np.ndarray,
                        W2: np.ndarray, b2: np.ndarray) -> np.ndarray:
            return np.dot(np.maximum(np.dot(x, W1) + b1, 0), W2)
    '''),
    wrong(PART, "bias_after_the_relu", "bias_after_relu", '''
        def feedforward(x: np.ndarray, W1: np.ndarray, b1: np.ndarray,
                        W2: np.ndarray, b2: np.ndarray) -> np.ndarray:
            h = np.maximum(x @ W1, 0) + b1
            return h @ W2 + b2
    '''),
    wrong(PART, "relu_after_each_layer", "relu_on_output", '''
        def feedforward(x: np.ndarray, W1: np.ndarray, b1: np.ndarray,
                        W2: np.ndarray, b2: np.ndarray) -> np.ndarray:
            relu = lambda z: np.where(z > 0, z, 0.0)
            return relu(relu(x @ W1 + b1) @ W2 + b2)
    '''),
    wrong(PART, "activation_forgotten", "no_activation", '''
        def feedforward(x: np.ndarray, W1: np.ndarray, b1: np.ndarray,
                        W2: np.ndarray, b2: np.ndarray) -> np.ndarray:
            hidden = x @ W1 + b1
            return hidden @ W2 + b2
    '''),
    wrong(PART, "sigmoid_hidden_layer", "sigmoid", '''
        def feedforward(x: np.ndarray, W1: np.ndarray, b1: np.ndarray,
                        W2: np.ndarray, b2: np.ndarray) -> np.ndarray:
            h = 1 / (1 + np.exp(-(x @ W1 + b1)))
            return h @ W2 + b2
    '''),
    wrong(PART, "relu_result_discarded", "no_activation", '''
        def feedforward(x: np.ndarray, W1: np.ndarray, b1: np.ndarray,
                        W2: np.ndarray, b2: np.ndarray) -> np.ndarray:
            h = x @ W1 + b1
            np.maximum(h, 0)
            return h @ W2 + b2
    '''),
    wrong(PART, "tanh_hidden_layer", "tanh_activation", '''
        def feedforward(x: np.ndarray, W1: np.ndarray, b1: np.ndarray,
                        W2: np.ndarray, b2: np.ndarray) -> np.ndarray:
            return np.tanh(x @ W1 + b1) @ W2 + b2
    '''),
    wrong(PART, "relu6", None, '''
        def feedforward(x, W1, b1, W2, b2):
            return np.clip(x @ W1 + b1, 0, 6) @ W2 + b2   # ReLU6, as in MobileNet: not eq. 8.21
    '''),
]

CORRECT = [
    correct(PART, "where_relu", '''
        def feedforward(x: np.ndarray, W1: np.ndarray, b1: np.ndarray,
                        W2: np.ndarray, b2: np.ndarray) -> np.ndarray:
            z = x @ W1 + b1
            return np.where(z > 0, z, 0.0) @ W2 + b2
    '''),
    correct(PART, "mask_multiply_einsum", '''
        def feedforward(x: np.ndarray, W1: np.ndarray, b1: np.ndarray,
                        W2: np.ndarray, b2: np.ndarray) -> np.ndarray:
            z = np.einsum("...d,df->...f", x, W1) + b1
            h = z * (z > 0)
            return np.einsum("...f,fd->...d", h, W2) + b2
    '''),
    correct(PART, "relu_in_place_on_hidden", '''
        def feedforward(x: np.ndarray, W1: np.ndarray, b1: np.ndarray,
                        W2: np.ndarray, b2: np.ndarray) -> np.ndarray:
            h = x @ W1
            h += b1
            h[h < 0] = 0
            return h @ W2 + b2
    '''),
]
