"""Feedback pages: per check, its points and what went wrong, from the graded results.

The page is built from results.json and the student's own answer cells; the hidden tests'
source and inputs are never part of either.
"""
from pathlib import Path

import jinja2

from . import notebooks, results
from .course import Course
from .messages import points

_TEMPLATES = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
                                autoescape=True, trim_blocks=True, lstrip_blocks=True)


def page(result, code: dict) -> str:
    return _TEMPLATES.get_template("feedback.html.j2").render(r=result, code=code, pts=points)


def write_all(course: Course, assignment: str, students=None) -> list:
    """feedback/<student>/<assignment>/results.html for every graded student; returns the paths."""
    written = []
    for student in students or course.roster(assignment):
        graded = course.path("autograded", student, assignment)
        if not (graded / "results.json").exists():
            continue
        result = results.read_json(graded / "results.json")
        code = {}
        for nb_path in graded.glob("*.ipynb"):
            code = notebooks.answer_cells(notebooks.read(nb_path))
        out = course.path("feedback", student, assignment) / "results.html"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(page(result, code))
        written.append(out)
    return written
