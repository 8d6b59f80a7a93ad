"""Student answers to grade in process: the mutant banks (tests/mutants/<package>/) and banks
kept outside the repository in the held-out format (a file defining
`ANSWERS = [{"part", "name", "correct", "what", "code"}, ...]`, see benchmarks/diagnoses.py).

An answer is graded as test_mutants.py grades a mutant: the reference solutions run as notebook
cells, then the answer's cell on top, and its own part graded with LocalRunner under a salt made
as `secret.salt` makes a submission's (a fixed course secret, a student id, the cell's bytes).
"""
import importlib
import pkgutil
import runpy
from dataclasses import dataclass
from pathlib import Path

from autograder import labs, secret
from autograder.checks import PartResult, run_part
from autograder.runners import LocalRunner

SECRET = bytes.fromhex("5e" * 32)       # the tests' course secret (conftest.TEST_SECRET)
STUDENTS = [f"s{i:02d}" for i in range(16)]


@dataclass(frozen=True)
class Answer:
    part: str
    name: str
    code: str
    correct: bool
    what: str = ""              # the true cause, in words (held-out banks)
    diagnosis: str | None = None    # the catalogued key it should be named as (mutant banks)


def mutant_answers(assignment: str) -> list:
    """The answers of the lab's mutant bank, wrong ones first."""
    package = labs.packages()[assignment]
    folder = Path(__file__).parent / "mutants" / package
    modules = [importlib.import_module(f"mutants.{package}.{info.name}") for info in pkgutil.iter_modules([str(folder)])]
    return ([Answer(m.part, m.name, m.code, False, diagnosis=m.diagnosis) for mod in modules for m in mod.WRONG]
            + [Answer(m.part, m.name, m.code, True) for mod in modules for m in mod.CORRECT])


def heldout_answers(path: Path) -> list:
    """The answers of a bank file in the held-out format."""
    return [Answer(a["part"], a["name"], a["code"], a["correct"], a["what"])
            for a in runpy.run_path(str(path))["ANSWERS"]]


def namespace(assignment: str, *cells: str) -> dict:
    """A fresh notebook namespace: the reference solutions, then `cells` run on top."""
    ns: dict = {}
    for source in (labs.reference_path(assignment).read_text(), *cells):
        exec(compile(source, "<cell>", "exec"), ns)
    return ns


def student_salt(assignment: str, student: str, code: str) -> bytes:
    """The salt of a submission by `student` whose notebook is the cell `code`."""
    return secret.salt(SECRET, assignment, student, code.encode())


def grade(assignment: str, answer: Answer, salt: bytes = b"", part: str | None = None) -> PartResult:
    """The answer's own part (or `part`), graded under `salt`."""
    suite = labs.load(assignment).suite
    return run_part(suite, part or answer.part, LocalRunner(namespace(assignment, answer.code), suite.reference), salt)
