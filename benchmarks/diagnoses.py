"""Do the diagnoses generalise? The hidden suite and the visible checks on answers written blind.

A held-out bank is a file `<heldout>/<lab>/<bank>.py` defining
`ANSWERS = [{"part", "name", "correct", "what", "code"}, ...]`: whole answer cells written from the
release notebook alone by someone who never read the mistake catalogues, each wrong one with a
sentence ("what") saying its true cause. The banks stay out of the repository, so that the figures
keep measuring what they should. Per lab and bank this prints:

- hidden suite: the wrong answers, how many lose points in their own part and nowhere else, how
  many get a likely cause named; every named cause next to the answer's "what", for a person to
  judge; the correct answers' scores (every part, one student's salt);
- visible checks (`check(fn)` in the notebook, the student helper of source/<lab>/): how many wrong
  answers fail them, how many get a likely cause, and each cause next to the "what".

    python benchmarks/diagnoses.py [--heldout /work/heldout] [--banks bank_a] [--lab lab06_training]
"""
import argparse
import contextlib
import importlib.util
import io
import re
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
from answers import grade, heldout_answers, namespace, student_salt  # noqa: E402

from autograder import labs, verdict  # noqa: E402

LABS = ["lab05_transformers", "lab06_training", "lab07_rope_generation"]
CAUSE = re.compile(r"likely cause: (.*)")


class Fits:
    """How many different causes fit each failed check that verdict.only_fit was asked about."""

    def __init__(self):
        self.counts: list = []
        self.only_fit = verdict.only_fit

    def __enter__(self):
        verdict.only_fit = lambda fits: self.counts.append(len({m for m, _ in fits})) or self.only_fit(fits)
        return self

    def __exit__(self, *exc):
        verdict.only_fit = self.only_fit


def hidden(assignment: str, answer) -> dict:
    """Every part graded under one student's salt: scores lost per part, causes named in its own,
    and for its own part how many causes fit at most (0: none does; 2 or more: the inputs do not
    tell them apart)."""
    salt = student_salt(assignment, "heldout", answer.code)
    results = {name: grade(assignment, answer, salt, part=name) for name in labs.load(assignment).suite.parts
               if name != answer.part}
    with Fits() as fits:
        results[answer.part] = own = grade(assignment, answer, salt)
    return {"lost": {name: r.max_score - r.score for name, r in results.items() if r.score < r.max_score},
            "score": own.score, "max": own.max_score, "fits": max(fits.counts, default=0),
            "causes": sorted({c.diagnosis for c in own.checks if c.status == "failed" and c.diagnosis})}


def helper(assignment: str):
    """A fresh copy of the lab's generated student helper."""
    path = ROOT / "source" / assignment / labs.load(assignment).HELPER
    spec = importlib.util.spec_from_file_location(f"helper_{assignment}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def visible(assignment: str, answer) -> dict:
    """`check(fn)` as the student runs it once: passed, or the causes it names."""
    obj = namespace(assignment, answer.code)[answer.part]
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            helper(assignment).check(obj)
        except AssertionError as failure:
            return {"failed": True, "causes": CAUSE.findall(str(failure))}
    return {"failed": False, "causes": []}


def measure(job) -> tuple:
    assignment, answer = job
    return hidden(assignment, answer), visible(assignment, answer)


def short(text: str, width: int = 150) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 3] + "..."


def report(assignment: str, bank: str, answers: list, results: list) -> None:
    wrong = [(a, h, v) for a, (h, v) in zip(answers, results) if not a.correct]
    right = [(a, h, v) for a, (h, v) in zip(answers, results) if a.correct]
    own_only = [a for a, h, _ in wrong if set(h["lost"]) == {a.part}]
    named = [(a, h) for a, h, _ in wrong if h["causes"]]
    seen = [(a, v) for a, _, v in wrong if v["failed"]]
    told = [(a, v) for a, v in seen if v["causes"]]
    print(f"\n== {assignment} {bank}: {len(wrong)} wrong, {len(right)} correct")
    print(f"hidden suite: {len(own_only)} of {len(wrong)} lose points in their own part only; "
          f"a likely cause named for {len(named)} ({100 * len(named) / max(len(wrong), 1):.0f} %)")
    unnamed = [h["fits"] for _, h, _ in wrong if not h["causes"]]
    print(f"not named: {unnamed.count(0)} where no cause fits, {sum(n > 1 for n in unnamed)} where several "
          f"do, {sum(n == 1 for n in unnamed)} where one fits a check but not the others")
    print(f"visible checks: {len(seen)} of {len(wrong)} fail check(); a likely cause named for {len(told)}")
    print("correct answers (points lost, every part): "
          + ", ".join(f"{a.name} {sum(h['lost'].values()):g}" for a, h, _ in right))
    print("\nnamed by the hidden suite (cause | what):")
    for answer, h in named:
        print(f"  {answer.part}/{answer.name}: {h['score']:g}/{h['max']:g}")
        for cause in h["causes"]:
            print(f"      cause: {short(cause)}")
        print(f"      what:  {short(answer.what)}")
    print("\nnot named by the hidden suite:")
    for answer, h, _ in wrong:
        if not h["causes"]:
            lost = ", ".join(f"{n} -{x:g}" for n, x in h["lost"].items()) or "nothing lost"
            print(f"  {answer.part}/{answer.name} ({lost}): {short(answer.what)}")
    print("\nvisible checks (cause | what):")
    for answer, _, v in wrong:
        if not v["failed"]:
            print(f"  {answer.part}/{answer.name}: passes check(): {short(answer.what, 110)}")
        elif v["causes"]:
            print(f"  {answer.part}/{answer.name}:\n      cause: {short(v['causes'][0])}\n      what:  {short(answer.what)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--heldout", type=Path, default=Path("/work/heldout"))
    parser.add_argument("--banks", nargs="+", default=["bank_a"])
    parser.add_argument("--lab", choices=LABS, action="append")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    with ProcessPoolExecutor(args.workers) as pool:
        for assignment in args.lab or LABS:
            for bank in args.banks:
                answers = heldout_answers(args.heldout / assignment / f"{bank}.py")
                results = list(pool.map(measure, [(assignment, a) for a in answers], chunksize=2))
                report(assignment, bank, answers, results)


if __name__ == "__main__":
    main()
