"""nbgrader notebooks: cell roles, and the reference code derived from the source notebook."""
import re

import nbformat

SOLUTION_MARKER = re.compile(r"^\s*### (BEGIN|END) SOLUTION\s*$")


def nbgrader(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {}) or {}


def grade_id(cell) -> str | None:
    return nbgrader(cell).get("grade_id")


def is_answer(cell) -> bool:
    """An autograded-answer cell: student code, graded by tests elsewhere."""
    meta = nbgrader(cell)
    return cell.cell_type == "code" and bool(meta.get("solution")) and not meta.get("grade")


def is_test(cell) -> bool:
    """An autograder-test cell."""
    meta = nbgrader(cell)
    return cell.cell_type == "code" and bool(meta.get("grade")) and not meta.get("solution")


def is_written(cell) -> bool:
    """A manually graded answer (nbgrader's solution and grade flags both set): a written answer."""
    meta = nbgrader(cell)
    return bool(meta.get("grade")) and bool(meta.get("solution"))


def is_locked(cell) -> bool:
    meta = nbgrader(cell)
    return bool(meta.get("locked")) or bool(meta.get("grade")) and not meta.get("solution")


def read(path) -> nbformat.NotebookNode:
    return nbformat.read(str(path), as_version=4)


def answer_cells(nb) -> dict:
    return {grade_id(c): c.source for c in nb.cells if is_answer(c)}


def written_answers(nb) -> dict:
    return {grade_id(c): c.source for c in nb.cells if is_written(c)}


# a question's label in the labs' markdown: **Q1.2 (interpret).** What would ... (or **Question 2.**)
_QUESTION = re.compile(r"\*\*((?:Q|Question )\d+(?:\.\d+)*(?: \([^)*]*\))?)\.?\*\*\s*(.*)", re.S)


def questions(release) -> dict:
    """{grade_id: (label, question)} of the written answers of a release notebook: the bold
    'Q1.2 (interpret)' label and the text after it in the markdown just before the answer cell;
    the grade id and '' where there is none."""
    found, before = {}, ""
    for cell in release.cells:
        if is_written(cell):
            match = None
            for match in _QUESTION.finditer(before):
                pass
            found[grade_id(cell)] = (match[1], " ".join(match[2].split())) if match else (grade_id(cell), "")
        elif cell.cell_type == "markdown":
            before = cell.source
    return found


def without_markers(source: str) -> str:
    """Solution code as a student would write it: the nbgrader solution markers removed."""
    return "\n".join(line for line in source.splitlines() if not SOLUTION_MARKER.match(line)).strip()


def is_support(cell) -> bool:
    """A given code cell that answer cells use (tagged `support` in the source notebook)."""
    return cell.cell_type == "code" and "support" in cell.get("metadata", {}).get("tags", [])


def reference_module(nb, notebook_path: str) -> str:
    """The solution code of every answer cell, and the given code they use, as one module."""
    bodies = [without_markers(c.source) for c in nb.cells if is_answer(c) or is_support(c)]
    header = (f'"""Reference solutions, generated from {notebook_path}.\n\n'
              "Do not edit: run `attnlab sync`. CI fails when this file differs from what the\n"
              'source notebook generates.\n"""\n'
              "import math\n\nimport numpy as np\n")
    return header + "\n\n" + "\n\n\n".join(bodies) + "\n"
