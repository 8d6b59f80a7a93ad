"""The labs this course grades, found by looking: every package here that names its
`ASSIGNMENT` is a lab. Adding a lab is adding its package (and its source notebook)."""
import functools
import importlib
import pkgutil
from pathlib import Path


class UnknownAssignment(ValueError):
    pass


@functools.cache
def packages() -> dict:
    """{nbgrader assignment name: package name}, in the order of the assignment names."""
    found = {}
    for info in pkgutil.iter_modules([str(Path(__file__).parent)]):
        if info.ispkg:
            module = importlib.import_module(f"{__name__}.{info.name}")
            if isinstance(getattr(module, "ASSIGNMENT", None), str):
                found[module.ASSIGNMENT] = info.name
    return dict(sorted(found.items()))


def assignments() -> list:
    return list(packages())


def load(assignment: str):
    """The lab's package: `ASSIGNMENT`, `suite`, `CASES` (visible checks), `HELPER` (file name)."""
    if assignment not in packages():
        raise UnknownAssignment(f"unknown assignment {assignment!r}; known: {', '.join(packages())}")
    return importlib.import_module(f"{__name__}.{packages()[assignment]}")


def folder(assignment: str) -> Path:
    """The lab's package folder: its suite, catalogue, visible cases, reference and examples."""
    return Path(__file__).parent / packages()[assignment]


def reference_path(assignment: str) -> Path:
    return folder(assignment) / "reference.py"
