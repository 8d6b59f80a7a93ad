"""The labs this course grades, by nbgrader assignment name."""
import importlib
from pathlib import Path

PACKAGES = {"lab05_transformers": "lab05", "lab06_training": "lab06"}


class UnknownAssignment(ValueError):
    pass


def load(assignment: str):
    """The lab's package, with `suite`, `CASES` (visible checks) and `HELPER` (file name)."""
    if assignment not in PACKAGES:
        raise UnknownAssignment(f"unknown assignment {assignment!r}; known: {', '.join(PACKAGES)}")
    return importlib.import_module(f"{__name__}.{PACKAGES[assignment]}")


def reference_path(assignment: str) -> Path:
    return Path(__file__).parent / PACKAGES[assignment] / "reference.py"
