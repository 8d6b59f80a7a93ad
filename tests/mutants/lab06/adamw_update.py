"""adamw_update: wrong and correct answers."""
import textwrap

from . import correct, wrong

PART = "adamw_update"


def adamw(body: str) -> str:
    """The cell: the given signature, then the student's body."""
    return ("def adamw_update(p, g, m, v, t, lr, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.0):\n"
            + textwrap.indent(textwrap.dedent(body).strip("\n"), "    "))


WRONG = [
    wrong(PART, "no_decay_for_vectors", None, adamw('''
            b1, b2 = betas
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g ** 2
            m_hat, v_hat = m / (1 - b1 ** t), v / (1 - b2 ** t)
            decay = weight_decay if p.ndim >= 2 else 0.0      # biases and gains are not decayed
            return p - lr * decay * p - lr * m_hat / (np.sqrt(v_hat) + eps), m, v
    ''')),
    wrong(PART, "decay_after_the_step", "decay_after_step", adamw('''
            b1, b2 = betas
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g * g
            m_hat, v_hat = m / (1 - b1 ** t), v / (1 - b2 ** t)
            p = p - lr * m_hat / (np.sqrt(v_hat) + eps)
            p = p - lr * weight_decay * p
            return p, m, v
    ''')),
    wrong(PART, "no_bias_correction", "no_bias_correction", adamw('''
            b1, b2 = betas
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g ** 2
            p = p - lr * weight_decay * p - lr * m / (np.sqrt(v) + eps)
            return p, m, v
    ''')),
    wrong(PART, "only_m_corrected", "v_not_corrected", adamw('''
            b1, b2 = betas
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g ** 2
            m_hat = m / (1 - b1 ** t)
            return p - lr * (m_hat / (np.sqrt(v) + eps) + weight_decay * p), m, v
    ''')),
    wrong(PART, "step_counted_from_zero", "step_after", adamw('''
            b1, b2 = betas
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g * g
            m_hat = m / (1 - b1 ** (t + 1))
            v_hat = v / (1 - b2 ** (t + 1))
            return p - lr * weight_decay * p - lr * m_hat / (np.sqrt(v_hat) + eps), m, v
    ''')),
    wrong(PART, "only_v_corrected", "m_not_corrected", adamw('''
            b1, b2 = betas
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g ** 2
            v_hat = v / (1 - b2 ** t)
            return p - lr * weight_decay * p - lr * m / (np.sqrt(v_hat) + eps), m, v
    ''')),
    wrong(PART, "bias_power_t_minus_one", "step_before", adamw('''
            b1, b2 = betas
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g * g
            m_hat = m / (1 - b1 ** (t - 1))
            v_hat = v / (1 - b2 ** (t - 1))
            return p - lr * weight_decay * p - lr * m_hat / (np.sqrt(v_hat) + eps), m, v
    ''')),
    wrong(PART, "plus_instead_of_minus", "ascent", adamw('''
            b1, b2 = betas
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g * g
            m_hat, v_hat = m / (1 - b1 ** t), v / (1 - b2 ** t)
            return p - lr * weight_decay * p + lr * m_hat / (np.sqrt(v_hat) + eps), m, v
    ''')),
    wrong(PART, "moments_not_returned", "old_moments", adamw('''
            b1, b2 = betas
            m_new = b1 * m + (1 - b1) * g
            v_new = b2 * v + (1 - b2) * g * g
            m_hat, v_hat = m_new / (1 - b1 ** t), v_new / (1 - b2 ** t)
            return p - lr * weight_decay * p - lr * m_hat / (np.sqrt(v_hat) + eps), m, v
    ''')),
    wrong(PART, "l2_regularisation", "l2_in_gradient", adamw('''
            b1, b2 = betas
            g = g + weight_decay * p
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g * g
            m_hat, v_hat = m / (1 - b1 ** t), v / (1 - b2 ** t)
            return p - lr * m_hat / (np.sqrt(v_hat) + eps), m, v
    ''')),
    wrong(PART, "decay_without_learning_rate", "decay_without_lr", adamw('''
            b1, b2 = betas
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g * g
            m_hat, v_hat = m / (1 - b1 ** t), v / (1 - b2 ** t)
            p = p * (1 - weight_decay)
            return p - lr * m_hat / (np.sqrt(v_hat) + eps), m, v
    ''')),
    wrong(PART, "eps_in_the_root", "eps_inside_sqrt", adamw('''
            b1, b2 = betas
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g * g
            m_hat, v_hat = m / (1 - b1 ** t), v / (1 - b2 ** t)
            return p - lr * weight_decay * p - lr * m_hat / np.sqrt(v_hat + eps), m, v
    ''')),
    wrong(PART, "absolute_gradient", "v_without_square", adamw('''
            b1, b2 = betas
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * np.abs(g)
            m_hat, v_hat = m / (1 - b1 ** t), v / (1 - b2 ** t)
            return p - lr * weight_decay * p - lr * m_hat / (np.sqrt(v_hat) + eps), m, v
    ''')),
    wrong(PART, "betas_unpacked_backwards", "betas_swapped", adamw('''
            b2, b1 = betas
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g * g
            m_hat, v_hat = m / (1 - b1 ** t), v / (1 - b2 ** t)
            return p - lr * weight_decay * p - lr * m_hat / (np.sqrt(v_hat) + eps), m, v
    ''')),
    wrong(PART, "weight_decay_forgotten", "decay_ignored", adamw('''
            b1, b2 = betas
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g * g
            m_hat, v_hat = m / (1 - b1 ** t), v / (1 - b2 ** t)
            return p - lr * m_hat / (np.sqrt(v_hat) + eps), m, v
    ''')),
    wrong(PART, "in_place_state", "in_place", adamw('''
            b1, b2 = betas
            m *= b1
            m += (1 - b1) * g
            v *= b2
            v += (1 - b2) * g * g
            p -= lr * weight_decay * p + lr * (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + eps)
            return p, m, v
    ''')),
    wrong(PART, "bias_correction_times_t", None, adamw('''
            b1, b2 = betas
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g * g
            m_hat, v_hat = m / (1 - b1 * t), v / (1 - b2 * t)       # 1 - β·t, not 1 - βᵗ: nan from t = 2
            return p - lr * weight_decay * p - lr * m_hat / (np.sqrt(v_hat) + eps), m, v
    ''')),
]

CORRECT = [
    correct(PART, "pytorch_order", adamw('''
            beta1, beta2 = betas
            p = p * (1 - lr * weight_decay)                 # decoupled decay first
            m = beta1 * m + (1 - beta1) * g
            v = beta2 * v + (1 - beta2) * np.square(g)
            denom = np.sqrt(v / (1 - beta2 ** t)) + eps
            return p - lr * (m / (1 - beta1 ** t)) / denom, m, v
    ''')),
    correct(PART, "in_place_on_copies", adamw('''
            p, m, v = p.copy(), m.copy(), v.copy()
            m *= betas[0]
            m += (1 - betas[0]) * g
            v *= betas[1]
            v += (1 - betas[1]) * g * g
            update = (m / (1 - betas[0] ** t)) / (np.sqrt(v / (1 - betas[1] ** t)) + eps)
            p -= lr * (update + weight_decay * p)
            return p, m, v
    ''')),
    correct(PART, "corrected_step_size", adamw('''
            b1, b2 = betas
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g * g
            root = np.sqrt(1 - b2 ** t)
            step = lr * root / (1 - b1 ** t)                # Adam paper, section 2
            return p - lr * weight_decay * p - step * m / (np.sqrt(v) + eps * root), m, v
    ''')),
]
