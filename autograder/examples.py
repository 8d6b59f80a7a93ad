"""Building submissions from answer code: the bundled example class, tests and benchmarks.

A submission is the release notebook with some answer cells filled in (from the answer key,
or with other code).
Answer files hold `# %% <grade_id>` sections, one per replaced cell.
"""
import copy
import json
import re
from pathlib import Path

import nbformat

from . import labs, notebooks
_SECTION = re.compile(r"^# %% (\S+)\s*$", re.MULTILINE)


def fill(base, answers: dict):
    """A copy of notebook `base` whose answer cells named in `answers` hold the given code."""
    nb = copy.deepcopy(base)
    unknown = set(answers) - {notebooks.grade_id(c) for c in nb.cells if notebooks.is_answer(c)}
    if unknown:
        raise KeyError(f"no answer cells named {sorted(unknown)}")
    for cell in nb.cells:
        if notebooks.is_answer(cell) and notebooks.grade_id(cell) in answers:
            cell.source = answers[notebooks.grade_id(cell)].strip("\n")
    return nb


def parse_answers(text: str) -> dict:
    """{grade_id: code} from a file of `# %% <grade_id>` sections."""
    pieces = _SECTION.split(text)
    return {pieces[i]: pieces[i + 1].strip("\n") + "\n" for i in range(1, len(pieces), 2)}


def tamper(nb):
    """What a student who wants free points does: empty the first test cell, raise its points."""
    nb = copy.deepcopy(nb)
    test = next(c for c in nb.cells if notebooks.is_test(c))
    test.source = "pass  # tests removed"
    test.metadata.nbgrader["points"] = 100
    return nb


def example_class(course: Path, assignment: str) -> dict:
    """{student: notebook text, or None for a student who did not submit} for the example class
    of `assignment` (a small generic class for a lab without one of its own)."""
    folder = labs.folder(assignment) / "examples"
    release = notebooks.read(course / "assignments" / assignment / f"{assignment}.ipynb")
    key = notebooks.read(course / "solutions" / assignment / f"{assignment}.ipynb")
    solved = {gid: notebooks.without_markers(code) for gid, code in notebooks.answer_cells(key).items()}
    if not (folder / "class.json").exists():
        return _generic_class(release, solved)
    manifest = json.loads((folder / "class.json").read_text())["students"]
    submissions = {}
    for student, spec in manifest.items():
        if spec.get("missing"):
            submissions[student] = None
        elif spec.get("corrupt"):
            text = nbformat.writes(release)
            submissions[student] = text[: len(text) // 3]      # a truncated upload
        else:
            answers = dict(solved) if spec["base"] == "solution" else {}
            if "answers" in spec:
                answers.update(parse_answers((folder / spec["answers"]).read_text()))
            nb = fill(release, answers)
            submissions[student] = nbformat.writes(tamper(nb) if spec.get("tamper") else nb)
    return submissions


def _generic_class(release, solved: dict) -> dict:
    """A correct submission, the untouched release, one with the first half of the answers, a
    truncated upload and a student who did not submit."""
    half = dict(list(solved.items())[: len(solved) // 2])
    text = nbformat.writes(release)
    return {"ada": nbformat.writes(fill(release, solved)), "ben": text,
            "cleo": nbformat.writes(fill(release, half)), "dev": text[: len(text) // 3], "eli": None}
