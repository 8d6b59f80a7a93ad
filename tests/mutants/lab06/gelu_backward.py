"""gelu_backward: wrong and correct answers."""
import textwrap

from . import correct, wrong

PART = "gelu_backward"


def gelu(code: str) -> str:
    """The cell: the given GELU_C line, then the student's function."""
    return "GELU_C = math.sqrt(2 / math.pi)\n\n\n" + textwrap.dedent(code).strip("\n")


WRONG = [
    wrong(PART, "first_product_term_missing", "no_first_product_term", gelu('''
        def gelu_backward(dy, x):
            u = GELU_C * (x + 0.044715 * x ** 3)
            du = GELU_C * (1 + 3 * 0.044715 * x ** 2)
            return dy * 0.5 * x * (1 - np.tanh(u) ** 2) * du
    ''')),
    wrong(PART, "no_tanh_prime_term", "no_tanh_prime", gelu('''
        def gelu_backward(dy, x):
            return dy * 0.5 * (1 + np.tanh(GELU_C * (x + 0.044715 * x ** 3)))
    ''')),
    wrong(PART, "chain_rule_stops_at_tanh", "no_inner_derivative", gelu('''
        def gelu_backward(dy, x):
            th = np.tanh(GELU_C * (x + 0.044715 * x ** 3))
            return dy * (0.5 * (1 + th) + 0.5 * x * (1 - th ** 2))
    ''')),
    wrong(PART, "cube_rule_forgotten", "cube_derivative", gelu('''
        def gelu_backward(dy, x):
            th = np.tanh(GELU_C * (x + 0.044715 * x ** 3))
            du = GELU_C * (1 + 0.044715 * x ** 2)
            return dy * (0.5 * (1 + th) + 0.5 * x * (1 - th ** 2) * du)
    ''')),
    wrong(PART, "constant_left_out_of_du", "inner_without_constant", gelu('''
        def gelu_backward(dy, x):
            u = GELU_C * (x + 0.044715 * x ** 3)
            du = 1 + 3 * 0.044715 * x ** 2
            return dy * (0.5 * (1 + np.tanh(u)) + 0.5 * x * (1 - np.tanh(u) ** 2) * du)
    ''')),
    wrong(PART, "tanh_prime_unsquared", "tanh_prime_not_squared", gelu('''
        def gelu_backward(dy, x):
            th = np.tanh(GELU_C * (x + 0.044715 * x * x * x))
            du = GELU_C * (1 + 3 * 0.044715 * x * x)
            return dy * 0.5 * (1 + th + x * (1 - th) * du)
    ''')),
    wrong(PART, "derivative_only", "not_times_dy", gelu('''
        def gelu_backward(dy, x):
            th = np.tanh(GELU_C * (x + 0.044715 * x * x * x))
            du = GELU_C * (1 + 3 * 0.044715 * x * x)
            return 0.5 * (1 + th + x * (1 - th * th) * du)
    ''')),
    wrong(PART, "tanh_by_hand", "tanh_from_exp", gelu('''
        def gelu_backward(dy, x):
            u = GELU_C * (x + 0.044715 * x ** 3)
            th = (np.exp(2 * u) - 1) / (np.exp(2 * u) + 1)
            du = GELU_C * (1 + 3 * 0.044715 * x ** 2)
            return dy * 0.5 * (1 + th + x * (1 - th * th) * du)
    ''')),
    wrong(PART, "forward_instead_of_derivative", "forward_value", gelu('''
        def gelu_backward(dy, x):
            return dy * 0.5 * x * (1 + np.tanh(GELU_C * (x + 0.044715 * x ** 3)))
    ''')),
    wrong(PART, "exact_erf_gelu", "exact_gelu", gelu('''
        def gelu_backward(dy, x):
            cdf = 0.5 * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))
            pdf = np.exp(-0.5 * x ** 2) / math.sqrt(2 * math.pi)
            return dy * (cdf + x * pdf)
    ''')),
]

CORRECT = [
    correct(PART, "sech_squared", gelu('''
        def gelu_backward(dy, x):
            u = GELU_C * (x + 0.044715 * x ** 3)
            with np.errstate(over="ignore"):
                sech2 = 1.0 / np.cosh(u) ** 2
            du = GELU_C * (1 + 3 * 0.044715 * x ** 2)
            return dy * (0.5 * (1 + np.tanh(u)) + 0.5 * x * sech2 * du)
    ''')),
    correct(PART, "product_rule_in_steps", gelu('''
        def gelu_backward(dy, x):
            inner = x + 0.044715 * np.power(x, 3)
            th = np.tanh(GELU_C * inner)
            d_inner = 1 + 0.134145 * np.square(x)
            left = 0.5 * (1 + th)                      # d(x)/dx * (1 + tanh) / 2
            right = 0.5 * x * (1 - np.square(th)) * GELU_C * d_inner
            return dy * (left + right)
    ''')),
    correct(PART, "as_x_times_sigmoid", gelu('''
        def gelu_backward(dy, x):
            # ½(1 + tanh u) = sigmoid(2u), so GELU(x) = x · sigmoid(2u)
            u = GELU_C * (x + 0.044715 * x ** 3)
            with np.errstate(over="ignore"):
                s = 1 / (1 + np.exp(-2 * u))
            return dy * (s + x * s * (1 - s) * 2 * GELU_C * (1 + 3 * 0.044715 * x ** 2))
    ''')),
]
