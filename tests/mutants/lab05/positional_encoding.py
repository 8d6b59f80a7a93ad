"""positional_encoding: wrong and correct answers."""
from . import correct, wrong

PART = "positional_encoding"

WRONG = [
    wrong(PART, "cos_in_even_columns", "sin_cos_swapped", '''
        def positional_encoding(max_len: int, d_model: int) -> np.ndarray:
            pos = np.arange(max_len)[:, None]
            div = 10000 ** (np.arange(0, d_model, 2) / d_model)
            PE = np.zeros((max_len, d_model))
            PE[:, 0::2] = np.cos(pos / div)
            PE[:, 1::2] = np.sin(pos / div)
            return PE
    '''),
    wrong(PART, "sin_block_then_cos_block", "concatenated", '''
        def positional_encoding(max_len: int, d_model: int) -> np.ndarray:
            pos = np.arange(max_len).reshape(-1, 1)
            i = np.arange(d_model // 2).reshape(1, -1)
            angles = pos / np.power(10000, 2 * i / d_model)
            return np.concatenate([np.sin(angles), np.cos(angles)], axis=1)
    '''),
    wrong(PART, "column_index_in_the_exponent", "column_index_exponent", '''
        def positional_encoding(max_len: int, d_model: int) -> np.ndarray:
            PE = np.zeros((max_len, d_model))
            for pos in range(max_len):
                for i in range(d_model):
                    angle = pos / (10000 ** (i / d_model))
                    PE[pos, i] = np.sin(angle) if i % 2 == 0 else np.cos(angle)
            return PE
    '''),
    wrong(PART, "twice_the_column_index", "column_index_doubled", '''
        def positional_encoding(max_len: int, d_model: int) -> np.ndarray:
            PE = np.zeros((max_len, d_model))
            for pos in range(max_len):
                for i in range(d_model):
                    if i % 2 == 0:
                        PE[pos, i] = np.sin(pos / 10000 ** (2 * i / d_model))
                    else:
                        PE[pos, i] = np.cos(pos / 10000 ** (2 * i / d_model))
            return PE
    '''),
    wrong(PART, "even_indices_doubled", "doubled_exponent", '''
        def positional_encoding(max_len: int, d_model: int) -> np.ndarray:
            two_i = np.arange(0, d_model, 2)
            angles = np.arange(max_len)[:, None] / 10000 ** (2 * two_i / d_model)
            PE = np.empty((max_len, d_model))
            PE[:, ::2] = np.sin(angles)
            PE[:, 1::2] = np.cos(angles)
            return PE
    '''),
    wrong(PART, "pair_index_over_d", "half_exponent", '''
        def positional_encoding(max_len: int, d_model: int) -> np.ndarray:
            i = np.arange(d_model // 2)
            angles = np.outer(np.arange(max_len), 1.0 / 10000 ** (i / d_model))
            PE = np.zeros((max_len, d_model))
            PE[:, 0::2] = np.sin(angles)
            PE[:, 1::2] = np.cos(angles)
            return PE
    '''),
    wrong(PART, "times_instead_of_over", "multiplied", '''
        def positional_encoding(max_len: int, d_model: int) -> np.ndarray:
            pos = np.arange(max_len)[:, None]
            freq = 10000 ** (np.arange(0, d_model, 2)[None, :] / d_model)
            PE = np.zeros((max_len, d_model))
            PE[:, 0::2] = np.sin(pos * freq)
            PE[:, 1::2] = np.cos(pos * freq)
            return PE
    '''),
    wrong(PART, "positions_from_one", "positions_from_one", '''
        def positional_encoding(max_len: int, d_model: int) -> np.ndarray:
            pos = np.arange(1, max_len + 1)[:, None]
            angles = pos / 10000 ** (np.arange(0, d_model, 2) / d_model)
            PE = np.zeros((max_len, d_model))
            PE[:, 0::2] = np.sin(angles)
            PE[:, 1::2] = np.cos(angles)
            return PE
    '''),
    wrong(PART, "log_of_1000", "base_1000", '''
        def positional_encoding(max_len: int, d_model: int) -> np.ndarray:
            position = np.arange(max_len)[:, np.newaxis]
            div_term = np.exp(np.arange(0, d_model, 2) * -(np.log(1000.0) / d_model))
            PE = np.zeros((max_len, d_model))
            PE[:, 0::2] = np.sin(position * div_term)
            PE[:, 1::2] = np.cos(position * div_term)
            return PE
    '''),
    wrong(PART, "integer_division_in_the_exponent", "integer_exponent", '''
        def positional_encoding(max_len: int, d_model: int) -> np.ndarray:
            PE = np.zeros((max_len, d_model))
            for pos in range(max_len):
                for i in range(d_model // 2):
                    angle = pos / 10000 ** (2 * i // d_model)
                    PE[pos, 2 * i] = np.sin(angle)
                    PE[pos, 2 * i + 1] = np.cos(angle)
            return PE
    '''),
]

CORRECT = [
    correct(PART, "float32_table", '''
        def positional_encoding(max_len: int, d_model: int) -> np.ndarray:
            pos = np.arange(max_len, dtype=np.float32)[:, None]
            i = np.arange(0, d_model, 2, dtype=np.float32)
            angles = pos * np.exp(-np.log(np.float32(10000)) * i / d_model)
            PE = np.zeros((max_len, d_model), dtype=np.float32)
            PE[:, 0::2] = np.sin(angles)
            PE[:, 1::2] = np.cos(angles)
            return PE
    '''),
    # float32 numbers in a float64 table are judged as the float32 table is: by their precision
    correct(PART, "float32_angles_float64_table", '''
        def positional_encoding(max_len: int, d_model: int) -> np.ndarray:
            pos = np.arange(max_len, dtype=np.float32)[:, None]
            angles = pos * np.exp(-np.log(np.float32(10000)) * np.arange(0, d_model, 2, dtype=np.float32) / d_model)
            PE = np.zeros((max_len, d_model))
            PE[:, 0::2] = np.sin(angles)
            PE[:, 1::2] = np.cos(angles)
            return PE
    '''),
    correct(PART, "exp_log_div_term", '''
        def positional_encoding(max_len: int, d_model: int) -> np.ndarray:
            position = np.arange(max_len)[:, np.newaxis]
            div_term = np.exp(np.arange(0, d_model, 2) * -(np.log(10000.0) / d_model))
            PE = np.zeros((max_len, d_model))
            PE[:, 0::2] = np.sin(position * div_term)
            PE[:, 1::2] = np.cos(position * div_term)
            return PE
    '''),
    correct(PART, "python_loops", '''
        import math

        def positional_encoding(max_len: int, d_model: int) -> np.ndarray:
            PE = np.zeros((max_len, d_model))
            for pos in range(max_len):
                for i in range(0, d_model, 2):
                    PE[pos, i] = math.sin(pos / 10000 ** (i / d_model))
                    PE[pos, i + 1] = math.cos(pos / 10000 ** (i / d_model))
            return PE
    '''),
    correct(PART, "stacked_and_interleaved", '''
        def positional_encoding(max_len: int, d_model: int) -> np.ndarray:
            angles = np.arange(max_len)[:, None] / 10000.0 ** (np.arange(d_model // 2) * 2 / d_model)
            return np.stack([np.sin(angles), np.cos(angles)], axis=-1).reshape(max_len, d_model)
    '''),
]
