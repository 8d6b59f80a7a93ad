"""The similarity report: two students who share code with renamed variables, other comments and
formatting and functions in another order are found, with the matching regions side by side;
two who wrote the same short function independently are not; the release's code and code the
whole class writes alike (here the answer key's, which three students hand in) count for nobody."""
import json
import re
from html.parser import HTMLParser

import nbformat

from autograder import examples, notebooks, similarity
from conftest import ASSIGNMENT, ROOT, copy_course, run_tool
from test_cycle import release, solved, submit

ANA = {
    "softmax": '''
def _stable_exp(values):
    top = values.max(axis=-1, keepdims=True)
    return np.exp(values - top)


def softmax(z):
    numer = _stable_exp(z)
    denom = numer.sum(axis=-1, keepdims=True)
    return numer / denom
''',
    "scaled_dot_product_attention": '''
def scaled_dot_product_attention(Q, K, V):
    width = K.shape[1]
    raw = np.matmul(Q, np.transpose(K))
    attn = softmax(raw * (1.0 / math.sqrt(width)))
    out = np.matmul(attn, V)
    return out, attn
''',
    "causal_attention": '''
def causal_attention(Q, K, V):
    count = Q.shape[0]
    raw = np.matmul(Q, np.transpose(K)) * (1.0 / math.sqrt(K.shape[1]))
    below = np.tril(np.ones((count, count), dtype=bool))
    raw = np.where(below, raw, -np.inf)
    attn = softmax(raw)
    return np.matmul(attn, V), attn
''',
    "layer_norm": '''
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    centre = x - x.mean(axis=-1, keepdims=True)
    spread = np.sqrt((centre * centre).mean(axis=-1, keepdims=True) + eps)
    result = centre / spread
    result = result if gamma is None else result * gamma
    result = result if beta is None else result + beta
    return result
''',
    "feedforward": '''
def feedforward(x, W1, b1, W2, b2):
    inner = np.matmul(x, W1) + b1
    inner[inner < 0] = 0.0
    return np.matmul(inner, W2) + b2
''',
}

# ana's code as bo hands it in: names changed, comments added, formatted otherwise, and in
# softmax's cell the helper after the function that uses it
BO = {
    "softmax": '''
def softmax(logits):
    # subtract the largest logit, then normalise
    e = _safe_exponential(logits)
    total = e.sum(axis = -1, keepdims = True)
    return e / total


def _safe_exponential(arr):
    biggest = arr.max(axis = -1, keepdims = True)
    return np.exp(arr - biggest)
''',
    "scaled_dot_product_attention": '''
def scaled_dot_product_attention(Q, K, V):
    dim = K.shape[1]   # d_k
    s = np.matmul(Q, np.transpose(K))
    w = softmax(s * (1.0 / math.sqrt(dim)))  # the weights
    result = np.matmul(w, V)
    return result, w
''',
    "causal_attention": '''
def causal_attention(Q, K, V):
    n = Q.shape[0]
    s = np.matmul(Q, np.transpose(K)) * (1.0 / math.sqrt(K.shape[1]))
    keep = np.tril(np.ones((n, n), dtype=bool))   # j <= i
    s = np.where(keep, s, -np.inf)
    w = softmax(s)
    return np.matmul(w, V), w
''',
    "layer_norm": '''
def layer_norm(x, gamma=None, beta=None, eps=1e-5):
    d = x - x.mean(axis=-1, keepdims=True)
    sd = np.sqrt((d * d).mean(axis=-1, keepdims=True) + eps)
    y = d / sd
    y = y if gamma is None else y * gamma
    y = y if beta is None else y + beta
    return y
''',
    "feedforward": '''
def feedforward(x, W1, b1, W2, b2):
    h = np.matmul(x, W1) + b1
    h[h < 0] = 0.0     # ReLU
    return np.matmul(h, W2) + b2
''',
}

# the same short function, written by two students who never met
CY = {"softmax": "def softmax(z):\n    e = np.exp(z - np.max(z, axis=-1, keepdims=True))\n"
                 "    return e / np.sum(e, axis=-1, keepdims=True)\n"}
DEE = {"softmax": "def softmax(logits):\n    ex = np.exp(logits - np.max(logits, axis=-1, keepdims=True))\n"
                  "    return ex / np.sum(ex, axis=-1, keepdims=True)  # rows sum to 1\n"}


def _key() -> dict:
    key = notebooks.read(ROOT / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    return {gid: notebooks.without_markers(code) for gid, code in notebooks.answer_cells(key).items()}


def test_copied_code_is_found_and_code_written_alike_by_chance_is_not():
    key = _key()
    code = {"ana": ANA, "bo": BO, "cy": CY, "dee": DEE, "kim": key, "lee": key, "max": key,
            "nia": {**key, "softmax": CY["softmax"]}}
    found = similarity.pairs(code, similarity.boilerplate(release()))
    assert [p["students"] for p in found] == [("ana", "bo")]
    pair = found[0]
    assert {p["part"] for p in pair["parts"]} == set(ANA) and pair["shared"] >= 2 * similarity.MIN_SHARED
    softmax = next(p for p in pair["parts"] if p["part"] == "softmax")
    assert "<mark>" in softmax["left"] and "<mark>" in softmax["right"] and "_safe_exponential" in softmax["right"]
    # cy and dee share their short function (renamed) and nothing else: below the threshold
    alone = similarity.pairs({"cy": CY, "dee": DEE}, similarity.boilerplate(release()))
    assert alone == [] and similarity.pairs({"cy": CY, "dee": DEE}, []) == []
    # the key, handed in by three of eight, is code the class writes alike: no pair among them
    assert not any(set(p["students"]) & {"kim", "lee", "max"} for p in found)


class Pairs(HTMLParser):
    def __init__(self, html):
        super().__init__()
        self.pairs, self.regions, self.links = [], [], []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("data-testid") == "pair":
            self.pairs.append(tuple(attrs["data-students"].split()))
        if attrs.get("data-testid") == "regions":
            self.regions.append(attrs["data-part"])
        if attrs.get("data-testid") == "similarity-link":
            self.links.append(attrs["href"])


def test_the_class_report_links_the_similarity_page(tmp_path):
    course = copy_course(tmp_path / "similar")
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=course)
    for student, answers in (("ana", ANA), ("bo", BO), ("cy", CY), ("dee", DEE)):
        submit(course, student, nbformat.writes(examples.fill(release(), answers)))
    for student in ("kim", "lee", "max"):
        submit(course, student, solved())
    run_tool("attnlab", "grade", ASSIGNMENT, "--quiet", "--jobs", "2", cwd=course)
    run_tool("attnlab", "report", ASSIGNMENT, cwd=course)
    folder = course / "report" / ASSIGNMENT
    index = Pairs((folder / "index.html").read_text())
    assert index.links == ["similarity.html"]
    page = (folder / "similarity.html").read_text()
    shown = Pairs(page)
    assert shown.pairs == [("ana", "bo")] and set(shown.regions) == set(ANA)
    assert "7 submissions" in page and "<script" not in page
    assert re.search(r"<mark>[^<]*_stable_exp", page)
    assert json.loads((course / "autograded" / "cy" / ASSIGNMENT / "results.json").read_text())["score"] > 0
