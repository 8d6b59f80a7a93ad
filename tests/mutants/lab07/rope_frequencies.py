"""rope_frequencies: wrong and correct answers."""
from . import correct, wrong

PART = "rope_frequencies"

WRONG = [
    wrong(PART, "exponent_m_over_dk", "exponent_without_two", '''
        def rope_frequencies(d_k, base=10000.0):
            m = np.arange(d_k // 2)
            return base ** (-m / d_k)
    '''),
    wrong(PART, "linspace_exponents", "exponent_to_one", '''
        def rope_frequencies(d_k, base=10000.0):
            exponents = np.linspace(0, 1, d_k // 2)
            return 1.0 / base ** exponents
    '''),
    wrong(PART, "one_per_dimension", "one_per_dimension", '''
        def rope_frequencies(d_k, base=10000.0):
            i = np.arange(d_k)
            return 1 / (base ** (i / d_k))
    '''),
    wrong(PART, "positive_exponent", "positive_exponent", '''
        def rope_frequencies(d_k, base=10000.0):
            return base ** (np.arange(0, d_k, 2) / d_k)
    '''),
    wrong(PART, "hard_coded_base", "base_ignored", '''
        def rope_frequencies(d_k, base=10000.0):
            return 1.0 / (10000 ** (np.arange(0, d_k, 2) / d_k))
    '''),
    wrong(PART, "integer_division", "integer_division", '''
        def rope_frequencies(d_k, base=10000.0):
            return base ** (-(np.arange(0, d_k, 2) // d_k)).astype(float)
    '''),
]

CORRECT = [
    # float64 is not asked for: a float32 table is judged to float32's precision
    correct(PART, "float32_frequencies", '''
        def rope_frequencies(d_k, base=10000.0):
            return (base ** (-np.arange(0, d_k, 2) / d_k)).astype(np.float32)
    '''),
    correct(PART, "float32_stored_as_float64", '''
        def rope_frequencies(d_k, base=10000.0):
            return (base ** (-np.arange(0, d_k, 2, dtype=np.float32) / d_k)).astype(np.float64)
    '''),
    correct(PART, "list_comprehension", '''
        def rope_frequencies(d_k, base=10000.0):
            return np.array([base ** (-2 * m / d_k) for m in range(d_k // 2)])
    '''),
    correct(PART, "exp_of_log", '''
        def rope_frequencies(d_k, base=10000.0):
            return np.exp(-math.log(base) * np.arange(0, d_k, 2) / d_k)
    '''),
    correct(PART, "half_width_denominator", '''
        def rope_frequencies(d_k, base=10000.0):
            m = np.arange(d_k // 2)
            return base ** (-m / (d_k // 2))
    '''),
    correct(PART, "power_of_reciprocal", '''
        def rope_frequencies(d_k, base=10000.0):
            return np.power(1.0 / base, 2 * np.arange(d_k // 2) / d_k)
    '''),
]
