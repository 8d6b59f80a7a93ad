"""encode: wrong and correct answers."""
from . import correct, wrong

PART = "encode"

WRONG = [
    wrong(PART, "alphabet_positions", "alphabet_ids", '''
        def encode(text, stoi):
            return [0 if ch == "." else ord(ch) - ord("a") + 1 for ch in text]
    '''),
    wrong(PART, "wrapped_in_dots", "adds_boundaries", '''
        def encode(text, stoi):
            ids = [stoi[ch] for ch in text]
            return [stoi["."]] + ids + [stoi["."]]
    '''),
    wrong(PART, "each_character_once", "unique_characters", '''
        def encode(text, stoi):
            ids = []
            for ch in text:
                if stoi[ch] not in ids:
                    ids.append(stoi[ch])
            return ids
    '''),
]

CORRECT = [
    correct(PART, "map_get", '''
        def encode(text, stoi):
            return list(map(stoi.get, text))
    '''),
    correct(PART, "numpy_array", '''
        def encode(text, stoi):
            return np.array([stoi[ch] for ch in text], dtype=np.int64)
    '''),
]
