"""What the hidden-test block of each graded cell calls in the student's kernel: `hidden_tests`.

Under plain `nbgrader autograde` the block grades its part in the kernel, against the reference,
prints the report and returns the points, which nbgrader records as partial credit; so a course
can grade with nbgrader alone. `attnlab grade` never runs these blocks: it runs the same suite
against a sandboxed worker, where student code cannot reach the grader.
"""
from . import labs
from .checks import run_part
from .messages import part_text
from .runners import LocalRunner


def hidden_tests(name: str, namespace: dict) -> float:
    suite = next(lab.suite for lab in map(labs.load, labs.assignments()) if name in lab.suite.parts)
    result = run_part(suite, name, LocalRunner(namespace, suite.reference))
    print(part_text(result))
    return result.score
