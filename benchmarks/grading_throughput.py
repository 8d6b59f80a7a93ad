"""Grading throughput: `attnlab grade --jobs 2` against plain `nbgrader autograde`, one run.

Builds N synthetic Lab 05 submissions (correct ones, partly wrong ones taken from the example
class, and untouched stubs), grades the same set with both tools in two copies of the course,
checks that the honest verdicts agree, and prints both wall times and their ratio.

Agreement, per student and part: nbgrader runs the same hidden suite inside the notebook, so its
score equals ours, except that a failing visible check zeroes the whole test cell. Such a zero
is expected when our grader also found the part wrong, or when an earlier part is wrong (the
visible checks use the student's own earlier parts: the double penalty our grader avoids).
Anything else is a disagreement.

    python benchmarks/grading_throughput.py [--n 100] [--jobs 2]
"""
import argparse
import csv
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from autograder import demo, examples, labs, notebooks  # noqa: E402

ASSIGNMENT = demo.ASSIGNMENT
BIN = Path(sys.executable).parent
WRONG = ("ben", "cleo", "dev", "ivy", "jon")


def synthetic_class(course: Path, n: int) -> dict:
    """{student: notebook text}: 40% correct, 40% partly wrong, 20% stubs."""
    release = notebooks.read(course / "assignments" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    key = notebooks.read(course / "solutions" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    solved = {g: notebooks.without_markers(c) for g, c in notebooks.answer_cells(key).items()}
    folder = examples.EXAMPLES / ASSIGNMENT
    wrong = [examples.parse_answers((folder / f"{name}.py").read_text()) for name in WRONG]
    submissions = {}
    for i in range(n):
        kind = ("correct", "correct", "wrong", "wrong", "stub")[i % 5]
        answers = {"correct": solved, "stub": {}, "wrong": {**solved, **wrong[i % len(wrong)]}}[kind]
        submissions[f"s{i:03d}_{kind}"] = nbformat.writes(examples.fill(release, answers))
    return submissions


def make_course(where: Path, submissions: dict) -> Path:
    course = demo.new_course(ROOT, where)
    for student, text in submissions.items():
        folder = course / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{ASSIGNMENT}.ipynb").write_text(text)
    return course


def timed(command: list, cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, check=False, capture_output=True)
    return time.perf_counter() - start


def ours(course: Path) -> dict:
    out = {}
    for path in (course / "autograded").glob(f"*/{ASSIGNMENT}/results.json"):
        data = json.loads(path.read_text())
        out[path.parts[-3]] = {p["name"]: p["score"] for p in data["extra_data"]["parts"]}
    return out


def theirs(course: Path, students) -> dict:
    out = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for student in students:
            nb = gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, student)
            out[student] = {g.name[len("test_"):]: g.score for g in nb.grades}
    return out


def compare(a: dict, b: dict, points: dict) -> tuple:
    same = double_penalty = 0
    disagreements = []
    order = list(points)
    for student, parts in a.items():
        for name, score in parts.items():
            other = b[student].get(name)
            earlier_wrong = any(parts[p] < points[p] for p in order[:order.index(name)])
            if other == score:
                same += 1
            elif other == 0 and (score < points[name] or earlier_wrong):
                double_penalty += 1
            else:
                disagreements.append((student, name, score, other))
    return same, double_penalty, disagreements


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    points = {name: part.points for name, part in labs.load(ASSIGNMENT).suite.parts.items()}
    with tempfile.TemporaryDirectory(prefix="attnlab-bench-") as tmp:
        tmp = Path(tmp)
        submissions = synthetic_class(ROOT, args.n)
        ours_course = make_course(tmp / "attnlab", submissions)
        theirs_course = make_course(tmp / "nbgrader", submissions)
        t_ours = timed([str(BIN / "attnlab"), "grade", ASSIGNMENT, "--jobs", str(args.jobs), "--quiet"], ours_course)
        t_theirs = timed([str(BIN / "nbgrader"), "autograde", ASSIGNMENT], theirs_course)
        a = ours(ours_course)
        b = theirs(theirs_course, a)
        same, double_penalty, disagreements = compare(a, b, points)
        totals = {kind: sorted({sum(p.values()) for s, p in a.items() if s.endswith(kind)})
                  for kind in ("correct", "stub")}
    kinds = {k: sum(s.endswith(k) for s in submissions) for k in ("correct", "wrong", "stub")}
    print(f"submissions: {args.n} ({kinds['correct']} correct, {kinds['wrong']} partly wrong, {kinds['stub']} stubs)")
    print(f"attnlab grade --jobs {args.jobs}: {t_ours:7.1f} s  ({t_ours / args.n:.3f} s per submission)")
    print(f"nbgrader autograde:      {t_theirs:7.1f} s  ({t_theirs / args.n:.3f} s per submission)")
    print(f"speed-up: {t_theirs / t_ours:.1f}x")
    print(f"verdicts per part: {same} identical, {double_penalty} zeroed by nbgrader for a mistake in the "
          f"part or an earlier part (double penalty), {len(disagreements)} disagreements")
    print(f"attnlab totals: correct {totals['correct']}, stubs {totals['stub']}")
    for d in disagreements[:10]:
        print("  disagreement:", d)
    return 1 if disagreements or len(a) != args.n else 0


if __name__ == "__main__":
    sys.exit(main())
