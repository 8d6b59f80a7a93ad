"""The same code, different points? Every answer of a bank graded under many student ids.

Hidden inputs are drawn per check from a seed mixed with a per-submission salt, so two students
who make the same mistake see different inputs. A check whose verdict on a systematic mistake
depends on the draw grades that mistake by luck. This grades each answer's own part under the
salts of `--students` student ids (salted as a submission is: the student id and the cell's
bytes) and lists every answer whose part score differs between them, and every correct answer
that is not at full marks on some salt.

    python benchmarks/salt_variance.py [--lab lab06_training] [--students 16]
                                       [--banks mutants derived bank_a] [--heldout /work/heldout]
"""
import argparse
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
import mutations  # noqa: E402
from answers import STUDENTS, Answer, grade, heldout_answers, mutant_answers, student_salt  # noqa: E402

from autograder import labs  # noqa: E402

LABS = ["lab05_transformers", "lab06_training", "lab07_rope_generation"]


def scores(job) -> tuple:
    """(scores per student, the failed checks per distinct score) of one answer."""
    assignment, answer, students = job
    results = [grade(assignment, answer, student_salt(assignment, s, answer.code)) for s in students]
    failed = {r.score: tuple(c.title for c in r.checks if c.status != "passed") for r in results}
    return [r.score for r in results], failed


def bank(assignment: str, name: str, heldout: Path) -> list:
    """The answers of the mutant bank, of the mistakes derived from the reference
    (tests/mutations.py), or of a held-out bank."""
    if name == "mutants":
        return mutant_answers(assignment)
    if name == "derived":
        return [Answer(c.part, f"{c.operator}#{c.site}", c.code, False) for c in mutations.candidates(assignment)]
    return heldout_answers(heldout / assignment / f"{name}.py")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lab", choices=LABS, action="append")
    parser.add_argument("--banks", nargs="+", default=["mutants", "bank_a"])
    parser.add_argument("--students", type=int, default=16)
    parser.add_argument("--heldout", type=Path, default=Path("/work/heldout"))
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    students = STUDENTS[:args.students]
    with ProcessPoolExecutor(args.workers) as pool:
        for assignment in args.lab or LABS:
            points = {name: part.points for name, part in labs.load(assignment).suite.parts.items()}
            for name in args.banks:
                answers = bank(assignment, name, args.heldout)
                results = list(pool.map(scores, [(assignment, a, students) for a in answers], chunksize=4))
                varying = [(a, s, f) for a, (s, f) in zip(answers, results) if len(set(s)) > 1]
                unfair = [(a, s, f) for a, (s, f) in zip(answers, results)
                          if a.correct and min(s) < points[a.part]]
                wrong = sum(not a.correct for a in answers)
                print(f"{assignment} {name}: {wrong} wrong, {len(answers) - wrong} correct, "
                      f"{len(students)} students: {len(varying)} with scores that differ between students, "
                      f"{len(unfair)} correct below full marks")
                for answer, s, failed in varying + [u for u in unfair if u not in varying]:
                    print(f"  {answer.part}/{answer.name}: {' '.join(f'{x:g}' for x in s)} of {points[answer.part]:g}")
                    for score, titles in sorted(failed.items()):
                        print(f"      {score:g}: {'; '.join(titles) or 'all passed'}")


if __name__ == "__main__":
    main()
