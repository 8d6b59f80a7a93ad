"""apply_rope: wrong and correct answers."""
from . import correct, wrong

PART = "apply_rope"


def variant(**edits) -> str:
    """A student's apply_rope, written out in full, with lines of it replaced."""
    code = BASE
    for old, new in edits.items():
        assert code.count(LINES[old]) == 1, old
        code = code.replace(LINES[old], new)
    return code


BASE = '''
def apply_rope(x, positions, base=10000.0):
    theta = rope_frequencies(x.shape[-1], base)
    angles = np.outer(positions, theta)
    cos = np.cos(angles).astype(x.dtype)
    sin = np.sin(angles).astype(x.dtype)
    x1 = x[..., 0::2]
    x2 = x[..., 1::2]
    out = np.zeros_like(x)
    out[..., 0::2] = x1 * cos - x2 * sin
    out[..., 1::2] = x1 * sin + x2 * cos
    return out
'''
LINES = {name: line for name, line in (
    ("theta", "    theta = rope_frequencies(x.shape[-1], base)\n"),
    ("angles", "    angles = np.outer(positions, theta)\n"),
    ("cos", "    cos = np.cos(angles).astype(x.dtype)\n"),
    ("sin", "    sin = np.sin(angles).astype(x.dtype)\n"),
    ("even", "    out[..., 0::2] = x1 * cos - x2 * sin\n"),
    ("odd", "    out[..., 1::2] = x1 * sin + x2 * cos\n"),
)}

WRONG = [
    wrong(PART, "turned_backwards", "turned_backwards", variant(
        even="    out[..., 0::2] = x1 * cos + x2 * sin\n",
        odd="    out[..., 1::2] = -x1 * sin + x2 * cos\n")),
    wrong(PART, "rotate_half_layout", "rotate_half", '''
        def apply_rope(x, positions, base=10000.0):
            half = x.shape[-1] // 2
            angles = np.asarray(positions)[:, None] * rope_frequencies(x.shape[-1], base)
            cos, sin = np.cos(angles), np.sin(angles)
            x1, x2 = x[..., :half], x[..., half:]
            out = np.concatenate([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1)
            return out.astype(x.dtype)
    '''),
    wrong(PART, "row_index_as_position", "index_not_position", variant(
        angles="    angles = np.outer(np.arange(x.shape[-2]), theta)\n")),
    wrong(PART, "not_a_rotation", "not_a_rotation", variant(
        odd="    out[..., 1::2] = x2 * cos - x1 * sin\n")),
    wrong(PART, "inline_frequencies", "exponent_without_two_inline", variant(
        theta="    theta = base ** (-np.arange(x.shape[-1] // 2) / x.shape[-1])\n")),
    wrong(PART, "base_not_passed", "base_ignored_in_rotation", variant(
        theta="    theta = rope_frequencies(x.shape[-1])\n")),
    wrong(PART, "odd_from_rotated_even", "overwritten_pair", '''
        def apply_rope(x, positions, base=10000.0):
            angles = np.asarray(positions)[:, None] * rope_frequencies(x.shape[-1], base)
            out = x.copy()
            out[..., 0::2] = out[..., 0::2] * np.cos(angles) - out[..., 1::2] * np.sin(angles)
            out[..., 1::2] = out[..., 0::2] * np.sin(angles) + out[..., 1::2] * np.cos(angles)
            return out
    '''),
    wrong(PART, "written_in_place", "in_place", '''
        def apply_rope(x, positions, base=10000.0):
            angles = np.asarray(positions)[:, None] * rope_frequencies(x.shape[-1], base)
            cos, sin = np.cos(angles).astype(x.dtype), np.sin(angles).astype(x.dtype)
            even, odd = x[..., 0::2].copy(), x[..., 1::2].copy()
            x[..., 0::2] = even * cos - odd * sin
            x[..., 1::2] = even * sin + odd * cos
            return x
    '''),
    wrong(PART, "float64_result", "float64_result", variant(
        cos="    cos = np.cos(angles)\n", sin="    sin = np.sin(angles)\n").replace(
        "out = np.zeros_like(x)", "out = np.zeros(x.shape)")),
    # rounded to float32 where float64 was given: the values are off, the rotation is still one
    wrong(PART, "angles_in_float32", None, variant(
        angles="    angles = np.outer(positions, theta).astype(np.float32)\n")),
    wrong(PART, "result_stored_in_float32", None, variant().replace(
        "out = np.zeros_like(x)", "out = np.zeros(x.shape, dtype=np.float32)")),
]

CORRECT = [
    correct(PART, "complex_numbers", '''
        def apply_rope(x, positions, base=10000.0):
            angles = np.asarray(positions)[:, None] * rope_frequencies(x.shape[-1], base)
            z = (x[..., 0::2] + 1j * x[..., 1::2]) * np.exp(1j * angles)
            return np.stack([z.real, z.imag], axis=-1).reshape(x.shape).astype(x.dtype)
    '''),
    correct(PART, "rotation_matrices", '''
        def apply_rope(x, positions, base=10000.0):
            angles = np.asarray(positions)[:, None] * rope_frequencies(x.shape[-1], base)
            c, s = np.cos(angles), np.sin(angles)
            R = np.stack([np.stack([c, -s], axis=-1), np.stack([s, c], axis=-1)], axis=-2)  # (N, d_k/2, 2, 2)
            pairs = x.reshape(*x.shape[:-1], x.shape[-1] // 2, 2)
            return np.einsum("npij,...npj->...npi", R, pairs).reshape(x.shape).astype(x.dtype)
    '''),
    correct(PART, "loop_over_pairs", '''
        def apply_rope(x, positions, base=10000.0):
            theta = rope_frequencies(x.shape[-1], base)
            out = x.copy()
            for m in range(len(theta)):
                a = np.asarray(positions) * theta[m]
                c, s = np.cos(a).astype(x.dtype), np.sin(a).astype(x.dtype)
                out[..., 2 * m] = x[..., 2 * m] * c - x[..., 2 * m + 1] * s
                out[..., 2 * m + 1] = x[..., 2 * m] * s + x[..., 2 * m + 1] * c
            return out
    '''),
]
