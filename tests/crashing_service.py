"""`attnlab serve`, killed by SIGKILL at a chosen point, and noting every recording it makes.

    python crashing_service.py AUDIT [TARGET:WHEN] -- SERVE ARGUMENTS

TARGET is module.attribute of autograder (e.g. autograded.write); WHEN is `before` (the
kill comes when it is called) or `partial` (Exchange.collect only: after it copied the
submission, half of its notebook is cut off, as by a copy cut short). Every batch recorded in the
gradebook is appended to AUDIT as lines "student digest", once its transaction has committed.
While the file named by $GRADER_FAILS exists, every grading ends in the grader's own error (as an
internal error does); $RETRY_SECONDS shortens the service's pause before it grades again.
"""
import importlib
import os
import signal
import sys
from pathlib import Path


def kill():
    os.kill(os.getpid(), signal.SIGKILL)


def crash_at(target: str, when: str) -> None:
    name, attribute = target.rsplit(".", 1)
    owner = importlib.import_module(f"autograder.{name.split('.')[0]}")
    for part in name.split(".")[1:]:
        owner = getattr(owner, part)
    original = getattr(owner, attribute)

    def crashing(*args, **kwargs):
        if when == "before":
            kill()
        found = original(*args, **kwargs)
        exchange, assignment, student = args
        notebook = exchange.course.path("submitted", student, assignment) / f"{assignment}.ipynb"
        notebook.write_bytes(notebook.read_bytes()[: notebook.stat().st_size // 2])
        kill()
        return found

    setattr(owner, attribute, crashing)


def audit(path: Path) -> None:
    from autograder.gradebook import GradebookWriter
    record = GradebookWriter.record_batch

    def noted(self, batch, *args, **kwargs):
        found = record(self, batch, *args, **kwargs)
        with open(path, "a") as f:
            f.write("".join(f"{r.student} {r.digest}\n" for r in batch))
            f.flush()
            os.fsync(f.fileno())
        return found

    GradebookWriter.record_batch = noted


def failing(student, path, salt):
    """grading.grade_in_slot, in the grader's own error while the file $GRADER_FAILS exists."""
    from autograder import grading, outcome
    if Path(os.environ["GRADER_FAILS"]).exists():
        slot = grading._slot
        return outcome.ungraded(student, slot.assignment, slot.suite, "error", "internal grading error: test"), None
    return grade_in_slot(student, path, salt)


if __name__ == "__main__":
    split = sys.argv.index("--")
    audit(Path(sys.argv[1]))
    if os.environ.get("GRADER_FAILS"):
        from autograder import grading
        grade_in_slot, grading.grade_in_slot = grading.grade_in_slot, failing   # the slots fork from here
    if os.environ.get("RETRY_SECONDS"):
        from autograder import service
        service.RETRY_SECONDS = float(os.environ["RETRY_SECONDS"])
    if split > 2:
        crash_at(*sys.argv[2].split(":"))
    from autograder import cli
    sys.exit(cli.main(["serve", *sys.argv[split + 1:]]))
