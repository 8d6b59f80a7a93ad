"""decode: wrong and correct answers."""
from . import correct, wrong

PART = "decode"

WRONG = [
    wrong(PART, "dots_removed", "dots_dropped", '''
        def decode(ids, itos):
            return "".join(itos[i] for i in ids).replace(".", "")
    '''),
    wrong(PART, "dots_stripped", "dots_stripped", '''
        def decode(ids, itos):
            text = "".join([itos[int(i)] for i in ids])
            return text.strip(".")
    '''),
    wrong(PART, "joined_with_spaces", "spaced", '''
        def decode(ids, itos):
            return " ".join(itos[int(i)] for i in ids)
    '''),
    wrong(PART, "list_of_characters", "character_list", '''
        def decode(ids, itos):
            return [itos[int(i)] for i in ids]
    '''),
    wrong(PART, "chr_arithmetic", "alphabet_characters", '''
        def decode(ids, itos):
            return "".join("." if i == 0 else chr(96 + int(i)) for i in ids)
    '''),
    wrong(PART, "trailing_dot_stripped", "dot_stripped_at_the_end", '''
        def decode(ids, itos):
            return "".join(itos[i] for i in ids).rstrip(".")
    '''),
    wrong(PART, "leading_dot_stripped", "dot_stripped_at_the_start", '''
        def decode(ids, itos):
            return "".join(itos[i] for i in ids).lstrip(".")
    '''),
]

CORRECT = [
    correct(PART, "tolist_then_map", '''
        def decode(ids, itos):
            return "".join(map(itos.__getitem__, np.asarray(ids, dtype=int).tolist()))
    '''),
    correct(PART, "accumulate", '''
        def decode(ids, itos):
            text = ""
            for i in ids:
                text += itos[i]
            return text
    '''),
]
