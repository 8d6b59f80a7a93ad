"""build_vocab: wrong and correct answers."""
from . import correct, wrong

PART = "build_vocab"

WRONG = [
    wrong(PART, "enumerate_from_one", "ids_from_one", '''
        def build_vocab(names):
            chars = sorted(set("".join(names)))
            itos = ["."] + chars
            stoi = {ch: i for i, ch in enumerate(itos, 1)}
            return stoi, itos
    '''),
    wrong(PART, "dot_added_before_sorting", "dot_sorted_in", '''
        def build_vocab(names):
            itos = sorted(set("".join(names) + "."))  # '.' sorts before the letters
            stoi = {ch: i for i, ch in enumerate(itos)}
            return stoi, itos
    '''),
    wrong(PART, "makemore_itos", "itos_without_dot", '''
        def build_vocab(names):
            chars = sorted(list(set("".join(names))))
            stoi = {s: i + 1 for i, s in enumerate(chars)}
            stoi["."] = 0
            itos = chars
            return stoi, itos
    '''),
    wrong(PART, "dot_appended", "dot_last", '''
        def build_vocab(names):
            itos = sorted(set(ch for name in names for ch in name))
            itos.append(".")
            return {ch: i for i, ch in enumerate(itos)}, itos
    '''),
    wrong(PART, "order_of_appearance", "unsorted", '''
        def build_vocab(names):
            itos = ["."]
            for name in names:
                for ch in name:
                    if ch not in itos:
                        itos.append(ch)
            return {ch: i for i, ch in enumerate(itos)}, itos
    '''),
    wrong(PART, "letters_only", "no_dot", '''
        def build_vocab(names):
            itos = sorted({ch for name in names for ch in name})
            return {ch: i for i, ch in enumerate(itos)}, itos
    '''),
    wrong(PART, "pair_reversed", "swapped", '''
        def build_vocab(names):
            itos = ["."] + sorted(set("".join(names)))
            stoi = dict(zip(itos, range(len(itos))))
            return itos, stoi
    '''),
]

CORRECT = [
    correct(PART, "makemore_with_dot", '''
        def build_vocab(names):
            chars = sorted(set("".join(names)))
            stoi = {s: i + 1 for i, s in enumerate(chars)}
            stoi["."] = 0
            itos = [s for s, _ in sorted(stoi.items(), key=lambda kv: kv[1])]
            return stoi, itos
    '''),
    correct(PART, "seen_set_then_sort", '''
        def build_vocab(names):
            seen = set()
            for name in names:
                seen.update(name)
            seen.discard(".")
            itos = ["."] + sorted(seen)
            stoi = {}
            for i, ch in enumerate(itos):
                stoi[ch] = i
            return stoi, itos
    '''),
    correct(PART, "numpy_strings", '''
        def build_vocab(names):
            chars = np.unique(list("".join(names)))   # np.str_: a str to Python, and now to the wire
            itos = ["."] + list(chars[chars != "."])
            return {ch: i for i, ch in enumerate(itos)}, itos
    '''),
]
