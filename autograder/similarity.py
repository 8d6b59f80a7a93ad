"""Pairs of submissions whose graded functions are alike beyond chance, for the class report.

Each graded part's code (its answer cell) is fingerprinted with copydetect: the code is
tokenised, names, strings, comments and formatting are normalised away (renamed variables do
not hide a copy), and its k-grams are hashed. The release's code (the starter stubs and the
given code) is boilerplate, and so is what many students share (code that most of a class
writes alike is no evidence of copying). Parts are compared with the same part of every other
submission, so the order of functions does not matter. A pair is reported when the code it
shares beyond that adds up to at least MIN_SHARED normalised characters: more than one short
function written alike by chance. The page ranks the pairs and shows the matching regions side
by side.
"""
import io
from collections import defaultdict
from itertools import combinations
from pathlib import Path

import jinja2
import numpy as np
from copydetect import CodeFingerprint, compare_files
from copydetect.utils import highlight_overlap
from markupsafe import Markup

from . import notebooks, student_files, submission

NOISE = 25           # copydetect's noise threshold: matches shorter than this many normalised characters are ignored
MIN_SHARED = 200     # normalised characters a pair shares before it is reported (a short function is about 70)
COMMON = 0.25        # a fingerprint in more than this share of the submissions (and more than two) is common code

_TEMPLATES = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
                                autoescape=True, trim_blocks=True, lstrip_blocks=True)


def graded_code(course, assignment: str, students, notebook: str) -> dict:
    """{student: {part: code}} of the graded notebooks, leaving out answers left as released."""
    release = notebooks.answer_cells(notebooks.read(course.release(assignment) / notebook))
    found = {}
    for student in students:
        try:
            nb, _ = submission.load(course.path("autograded", student, assignment) / notebook)
        except (submission.Unreadable, student_files.StudentFileError):
            continue
        code = {part: text for part, text in notebooks.answer_cells(nb).items()
                if part in release and text.strip() != release[part].strip()}
        if code:
            found[student] = code
    return found


def boilerplate(release) -> list:
    """The fingerprints of every code cell of the release: starter stubs and given code."""
    return [h for cell in release.cells if cell.cell_type == "code"
            for h in _fingerprint("release", cell.source).hashes]


def pairs(code: dict, given: list) -> list:
    """The pairs of students whose parts share code beyond chance, most shared first: dicts of
    the two students, the characters shared and, per part, both codes with the shared regions
    marked (<mark>, the rest escaped)."""
    parts = {part for by_part in code.values() for part in by_part}
    found = defaultdict(dict)
    for part in sorted(parts):
        authors = {s: by_part[part] for s, by_part in code.items() if part in by_part}
        common = _common(authors)
        ignored = np.unique(np.array(given + common, dtype=np.int64))
        prints = {s: _fingerprint(f"{s}/{part}", text, ignored) for s, text in authors.items()}
        for a, b in _candidates(prints):
            shared, _, (left, right) = compare_files(prints[a], prints[b])
            if shared:
                found[(a, b)][part] = (int(shared), _marked(prints[a].raw_code, left), _marked(prints[b].raw_code, right))
    ranked = [{"students": pair, "shared": sum(s for s, _, _ in by_part.values()),
               "parts": [{"part": part, "shared": s, "left": left, "right": right}
                         for part, (s, left, right) in sorted(by_part.items(), key=lambda kv: -kv[1][0])]}
              for pair, by_part in found.items()]
    return sorted((p for p in ranked if p["shared"] >= MIN_SHARED), key=lambda p: (-p["shared"], p["students"]))


def _fingerprint(name: str, text: str, ignored=None) -> CodeFingerprint:
    return CodeFingerprint(f"{name}.py", NOISE, 1, ignored, fp=io.StringIO(text), language="python")


def _common(authors: dict) -> list:
    """Fingerprints found in more than COMMON of the submissions of a part, and in more than two."""
    count = defaultdict(int)
    for student, text in authors.items():
        for h in _fingerprint(student, text).hashes:
            count[h] += 1
    return [h for h, n in count.items() if n > max(2, COMMON * len(authors))]


def _candidates(prints: dict) -> list:
    """The pairs of students with a fingerprint in common (an index instead of every pair)."""
    holders = defaultdict(list)
    for student, fingerprint in sorted(prints.items()):
        for h in fingerprint.hashes:
            holders[h].append(student)
    return sorted({pair for students in holders.values() for pair in combinations(students, 2)})


def _marked(code: str, slices) -> Markup:
    """`code`, escaped, with the shared regions in <mark>."""
    marked, _ = highlight_overlap(code, slices, "<mark>", "</mark>", escape_html=True)
    return Markup(marked)


def write(course, assignment: str, students, out_dir: Path) -> dict:
    """out_dir/similarity.html for the graded notebooks of `students`; returns what the class
    report says of it: the page, the pairs found and the submissions compared."""
    notebook = course.notebook_name(assignment)
    code = graded_code(course, assignment, students, notebook)
    found = pairs(code, boilerplate(notebooks.read(course.release(assignment) / notebook)))
    (out_dir / "similarity.html").write_text(_TEMPLATES.get_template("similarity.html.j2").render(
        assignment=assignment, pairs=found, compared=len(code), min_shared=MIN_SHARED, common=COMMON))
    return {"page": "similarity.html", "pairs": found, "compared": len(code)}
