"""Grading throughput: plain `nbgrader autograde` against `attnlab grade --jobs 1` and `--jobs 2`.

Builds N submissions of one lab, grades the same set with each tool in its own copy of the
course, in one run, checks that the verdicts agree, and prints for each tool the wall time, the
per-submission worker time (median and 95th percentile of `execution_time` in results.json:
the slot's wall time for one submission), the CPU seconds per submission of the grading
command's own process and of everything it started (counted in a control group where the
machine allows one: the sandboxed workers are no process's waited-for children), and the
ratios. The machine may be shared: wall times are then noisy, CPU seconds much less so. Each
`attnlab grade` command therefore runs `--repeat` times (3), interleaved so that a busy spell of
the host slows both; the table shows each command's fastest run, and every run's wall time is
listed after the ratio.

The main process of `attnlab grade` is serial; with `m` its CPU seconds per submission (measured
from receiving a result to waiting for the next, the median over the `--jobs 2` runs) and `w`
the CPU seconds per submission of everything else, no number of workers can grade faster than
one submission per `m` seconds, and the speed-up over one worker is bounded by (m + w) / m
(Amdahl's law). For each `--jobs`, the time at which the first result reached the main process
and the steady rate after it separate the start-up (paid once per run) from the rate per core.
With two workers on two cores nothing is idle, so `--jobs 2` cannot take less than its CPU
seconds / 2, while `--jobs 1` hides its main process's CPU (importing nbgrader, recording the
grades) on the core its worker leaves idle: the bound on `--jobs 1 / --jobs 2` is printed.

Mixes: `full` (the default) is what a real class hands in: every submission fully answered,
a third correct and the rest with one realistic mistake each, taken in turn from the mutant
bank (tests/mutants/<lab package>). `stubs` is 40 % correct, 40 % with one mistake, 20 %
untouched stubs (which grade in no time).

Agreement, per student and part: nbgrader runs the same hidden suite inside the notebook, on the
fixed inputs (`attnlab grade` salts them per submission, so a part that loses points may lose a
different number of them). Its verdict (full marks or not) equals ours, except that a failing
visible check zeroes the whole test cell. Such a zero is expected when our grader also found the
part wrong, or when an earlier part is wrong (the visible checks use the student's own earlier
parts: the double penalty our grader avoids). Anything else is a disagreement, and so is any
difference between `--jobs 1` and `--jobs 2` (which share the course secret, hence the salts).

    python benchmarks/grading_throughput.py [--lab lab05_transformers] [--n 36] [--mix full|stubs] [--repeat 3]
"""
import argparse
import ctypes
import importlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook, MissingEntry

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
from autograder import examples, labs, notebooks  # noqa: E402
from autograder.course import scripts_on_path  # noqa: E402

BIN = Path(sys.executable).parent
LABS = tuple(labs.assignments())
_PR_SET_CHILD_SUBREAPER = 36
# plain nbgrader, deliberately unsandboxed: the course refuses it unless the exporter is reset
NBGRADER = [str(BIN / "nbgrader"), "autograde", "--Autograde.exporter_class=nbconvert.exporters.NotebookExporter"]

# Run `attnlab grade` and report on stderr's last line its own CPU seconds (the main process
# only): in all, and while it handled the results (from receiving one to waiting for the next);
# and when each grading's result reached the process (the pool's thread receives it, also while
# the main thread is still importing nbgrader and not yet asking for results).
# The engine is not imported here: the CLI starts its slots before it imports nbgrader, and a
# measurement that imported it first would start them a second late.
GRADE = """import concurrent.futures, concurrent.futures.process, json, resource, sys, time
began = time.monotonic()
sys.path.insert(0, sys.argv.pop(1))
from autograder import grading
from autograder.cli import main

loop = {"loop_cpu": 0.0, "loop_results": 0, "arrivals": []}
def timed(futures, completed=concurrent.futures.as_completed):
    for future in completed(futures):
        start = time.process_time()
        yield future
        loop["loop_cpu"] += time.process_time() - start
        loop["loop_results"] += 1
concurrent.futures.as_completed = timed      # the engine imports it from there

def arrived(future):
    if not future.cancelled():
        loop["arrivals"].append(time.monotonic() - began)
submit = concurrent.futures.process.ProcessPoolExecutor.submit
def submitted(pool, fn, *args, **kwargs):
    future = submit(pool, fn, *args, **kwargs)
    if fn is grading.grade_in_slot:
        future.add_done_callback(arrived)
    return future
concurrent.futures.process.ProcessPoolExecutor.submit = submitted
code = main(sys.argv[1:])
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"main_cpu": usage.ru_utime + usage.ru_stime, **loop}), file=sys.stderr)
sys.exit(code)
"""


def mutant_bank(lab: str) -> list:
    """The wrong answers of `lab`'s mutant bank, interleaved across parts."""
    package = importlib.import_module(f"mutants.{labs.packages()[lab]}")
    modules = [__import__(f"{package.__name__}.{name}", fromlist=["WRONG"])
               for name in sorted(n[:-3] for n in os.listdir(package.__path__[0])
                                  if n.endswith(".py") and n != "__init__.py")]
    by_part = [list(m.WRONG) for m in modules]
    bank = []
    while any(by_part):
        bank += [wrongs.pop(0) for wrongs in by_part if wrongs]
    return bank


def synthetic_class(lab: str, n: int, mix: str) -> dict:
    """{student: notebook text}; the student's name says what kind of submission it is."""
    release = notebooks.read(ROOT / "assignments" / lab / f"{lab}.ipynb")
    key = notebooks.read(ROOT / "solutions" / lab / f"{lab}.ipynb")
    solved = {g: notebooks.without_markers(c) for g, c in notebooks.answer_cells(key).items()}
    bank = mutant_bank(lab)
    kinds = ("correct", "wrong", "wrong") if mix == "full" else ("correct", "correct", "wrong", "wrong", "stub")
    submissions, wrong = {}, 0
    for i in range(n):
        kind = kinds[i % len(kinds)]
        if kind == "wrong":
            mutant = bank[wrong % len(bank)]
            wrong += 1
            answers = {**solved, mutant.part: mutant.code}
        else:
            answers = solved if kind == "correct" else {}
        submissions[f"s{i:03d}_{kind}"] = nbformat.writes(examples.fill(release, answers))
    return submissions


def make_course(where: Path, lab: str) -> Path:
    """A course directory with `lab` released (nbgrader generate_assignment)."""
    where.mkdir(parents=True)
    shutil.copy(ROOT / "nbgrader_config.py", where)
    for name in ("source", "assignments", "solutions"):
        shutil.copytree(ROOT / name / lab, where / name / lab)
    done = subprocess.run([str(BIN / "nbgrader"), "generate_assignment", lab, "--force"], cwd=where,
                          capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"nbgrader generate_assignment failed:\n{done.stderr[-3000:]}")
    try:                                   # one course secret for every copy: the same salts
        from autograder.secret import course_secret
        course_secret(where)
    except ImportError:                    # a version of attnlab without salted inputs
        pass
    return where


def submit(course: Path, lab: str, submissions: dict) -> Path:
    for student, text in submissions.items():
        folder = course / "submitted" / student / lab
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{lab}.ipynb").write_text(text)
    return course


def _reap_orphans() -> None:
    """Wait for every descendant (orphans come back to us), so that their CPU time is counted."""
    while True:
        try:
            os.wait()
        except ChildProcessError:
            return


class CpuGroup:
    """A control group that the measured command and everything it starts run in: its CPU time
    counts the sandboxed workers too, which no parent waits for (they die with their slot). Needs
    a writable cgroup hierarchy (v2, or v1's cpuacct); otherwise None, and resource usage is used."""

    def __init__(self, root: Path, procs: str, usage):
        self.path = root / f"attnlab-bench-{os.getpid()}-{time.monotonic_ns()}"
        self.path.mkdir()
        self.procs, self.usage = self.path / procs, usage

    @classmethod
    def make(cls):
        mounts = [line.split() for line in Path("/proc/mounts").read_text().splitlines()]
        for _, where, kind, options, *_ in mounts:
            try:
                if kind == "cgroup2":
                    return cls(Path(where), "cgroup.procs", lambda p: int(
                        dict(line.split() for line in (p / "cpu.stat").read_text().splitlines())["usage_usec"]) / 1e6)
                if kind == "cgroup" and "cpuacct" in options.split(","):
                    return cls(Path(where), "cgroup.procs", lambda p: int((p / "cpuacct.usage").read_text()) / 1e9)
            except OSError:
                continue
        return None

    def enter(self) -> None:   # in the child, before exec
        self.procs.write_text(str(os.getpid()))

    def seconds(self) -> float:
        value = self.usage(self.path)
        for _ in range(100):
            try:
                self.path.rmdir()
                break
            except OSError:
                time.sleep(0.05)
        return value


def measured(command: list, cwd: Path) -> dict:
    """Run `command`; its wall time, its stderr, and the CPU seconds of it and all it started."""
    group = CpuGroup.make()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, preexec_fn=group and group.enter)
    wall = time.perf_counter() - start
    _reap_orphans()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = group.seconds() if group else \
        after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return {"wall": wall, "cpu": cpu, "stderr": done.stderr, "code": done.returncode, "cgroup": group is not None}


def attnlab(course: Path, lab: str, jobs: int, force: bool = True) -> dict:
    command = [sys.executable, "-c", GRADE, str(ROOT), "grade", lab, "--jobs", str(jobs), "--quiet"]
    run = measured(command + (["--force"] if force else []), course)
    last = run["stderr"].strip().splitlines()[-1] if run["stderr"].strip() else "{}"
    usage = json.loads(last) if last.startswith("{") else {}
    run["main_cpu"] = usage.get("main_cpu", float("nan"))
    run["loop_cpu"] = usage.get("loop_cpu", 0.0) / max(1, usage.get("loop_results", 0))
    run["arrivals"] = sorted(usage.get("arrivals", []))
    run["worker"] = sorted(json.loads(p.read_text())["execution_time"]
                           for p in (course / "autograded").glob(f"*/{lab}/results.json"))
    return run


def ours(course: Path, lab: str) -> dict:
    out = {}
    for path in (course / "autograded").glob(f"*/{lab}/results.json"):
        data = json.loads(path.read_text())
        out[path.parts[-3]] = {p["name"]: p["score"] for p in data["extra_data"]["parts"]}
    return out


def theirs(course: Path, lab: str, students) -> dict:
    out = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for student in students:
            try:
                nb = gb.find_submission_notebook(lab, lab, student)
            except MissingEntry:  # nbgrader gave up on this submission
                out[student] = {}
                continue
            out[student] = {g.name[len("test_"):]: g.score for g in nb.grades}
    return out


def compare(a: dict, b: dict, points: dict) -> tuple:
    same = other_partial = double_penalty = 0
    disagreements = []
    order = list(points)
    for student, parts in a.items():
        for name, score in parts.items():
            other = b.get(student, {}).get(name)
            earlier_wrong = any(parts[p] < points[p] for p in order[:order.index(name)])
            if other == score:
                same += 1
            elif other == 0 and (score < points[name] or earlier_wrong):
                double_penalty += 1
            elif other is not None and score < points[name] and other < points[name]:
                other_partial += 1
            else:
                disagreements.append((student, name, score, other))
    return same, other_partial, double_penalty, disagreements


def percentile(values: list, q: float) -> float:
    return sorted(values)[min(len(values) - 1, round(q * (len(values) - 1)))] if values else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lab", choices=LABS, default=LABS[0])
    parser.add_argument("--n", type=int, default=36)
    parser.add_argument("--mix", choices=("full", "stubs"), default="full")
    parser.add_argument("--skip-nbgrader", action="store_true", help="time attnlab only (no ratio to nbgrader)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="runs of each attnlab command; the table shows each one's fastest")
    args = parser.parse_args()
    lab, n = args.lab, args.n
    scripts_on_path()
    ctypes.CDLL(None).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    points = {name: part.points for name, part in labs.load(lab).suite.parts.items()}
    submissions = synthetic_class(lab, n, args.mix)
    kinds = {k: sum(s.endswith(k) for s in submissions) for k in ("correct", "wrong", "stub")}
    runs, walls, loop_cpus, nbgrader_scores = {}, {}, {}, None
    with tempfile.TemporaryDirectory(prefix="attnlab-bench-") as tmp:
        base = make_course(Path(tmp) / "base", lab)
        courses = {jobs: submit(shutil.copytree(base, Path(tmp) / f"jobs{jobs}", symlinks=True), lab, submissions)
                   for jobs in (1, 2)}
        for _ in range(args.repeat):          # interleaved: a noisy spell of the host hits both
            for jobs, course in courses.items():
                run = attnlab(course, lab, jobs)
                name = f"attnlab grade --jobs {jobs}"
                walls.setdefault(name, []).append(run["wall"])
                loop_cpus.setdefault(name, []).append(run["loop_cpu"])
                if name not in runs or run["wall"] < runs[name]["wall"]:
                    runs[name] = run
        graded = {jobs: ours(course, lab) for jobs, course in courses.items()}
        startup = statistics.median(attnlab(courses[1], lab, 1, force=False)["main_cpu"]   # nothing to grade:
                                    for _ in range(args.repeat))                        # start-up, class files
        if not args.skip_nbgrader:
            course = submit(shutil.copytree(base, Path(tmp) / "nbgrader", symlinks=True), lab, submissions)
            runs["nbgrader autograde"] = measured(NBGRADER + [lab], course)
            nbgrader_scores = theirs(course, lab, graded[2])
    return report(lab, kinds, runs, walls, loop_cpus, startup, graded, nbgrader_scores, points)


def report(lab: str, kinds: dict, runs: dict, walls: dict, loop_cpus: dict, startup: float, graded: dict,
           nbgrader_scores, points: dict) -> int:
    n = sum(kinds.values())
    print(f"{lab}: {n} submissions ({kinds['correct']} correct, {kinds['wrong']} with one mistake, "
          f"{kinds['stub']} stubs); {os.cpu_count()} cores; CPU seconds from "
          + ("a control group (every process, sandboxed workers included)" if runs["attnlab grade --jobs 1"]["cgroup"]
             else "resource usage of waited-for children (NOT the sandboxed workers)"))
    print(f"{'':28}{'wall s':>8}{'s/sub':>8}{'worker s/sub':>16}{'CPU s/sub':>20}")
    print(f"{'':28}{'':>8}{'':>8}{'median':>8}{'p95':>8}{'main':>10}{'all':>10}")
    for name, run in runs.items():
        worker = run.get("worker", [])
        med = f"{statistics.median(worker):8.3f}{percentile(worker, 0.95):8.3f}" if worker else f"{'':>16}"
        main_cpu = f"{run['main_cpu'] / n:10.3f}" if "main_cpu" in run else f"{'':>10}"
        print(f"{name:28}{run['wall']:8.1f}{run['wall'] / n:8.3f}{med}{main_cpu}{run['cpu'] / n:10.3f}")
    one, two = runs["attnlab grade --jobs 1"], runs["attnlab grade --jobs 2"]
    per_sub = statistics.median(loop_cpus["attnlab grade --jobs 2"])
    rest = (two["cpu"] - two["main_cpu"]) / n
    print(f"main process: {startup:.2f} CPU s start-up and class files, {per_sub:.4f} CPU s per "
          f"submission (measured while it handles the results); everything else {rest:.3f} CPU s per submission")
    if per_sub > 0:
        print(f"Amdahl limit: at most {1 / per_sub:.0f} submissions/s, at most {(per_sub + rest) / per_sub:.0f}x "
              "the throughput of one worker")
    every = {}
    for jobs, run in ((1, one), (2, two)):
        arrivals = run["arrivals"]
        if len(arrivals) > 1:
            every[jobs] = (arrivals[-1] - arrivals[0]) / (len(arrivals) - 1)
            print(f"--jobs {jobs}: first result after {arrivals[0]:.2f} s, then one every {every[jobs]:.3f} s "
                  f"({1 / every[jobs]:.1f} submissions/s); last result to exit {run['wall'] - arrivals[-1]:.2f} s")
    if len(every) == 2:
        print(f"between the first result and the last, --jobs 2 grades {every[1] / every[2]:.2f}x as many "
              "submissions per second as --jobs 1 (the start-up and the exit are paid once per run)")
    repeats = len(walls["attnlab grade --jobs 1"])
    medians = [statistics.median(walls[f"attnlab grade --jobs {jobs}"]) for jobs in (1, 2)]
    print(f"--jobs 1 / --jobs 2: {one['wall'] / two['wall']:.2f}x wall"
          + (f" (fastest of {repeats} runs each; of the median runs {medians[0] / medians[1]:.2f}x; walls: "
             + "; ".join(f"--jobs {jobs} " + " ".join(f"{w:.1f}" for w in walls[f"attnlab grade --jobs {jobs}"])
                         for jobs in (1, 2)) + ")" if repeats > 1 else ""))
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    if two["cgroup"] and cores == 2:
        floor = two["cpu"] / 2
        print(f"--jobs 2 on 2 cores takes at least its CPU seconds / 2 = {floor:.1f} s, so --jobs 1 / --jobs 2 "
              f"is at most {one['wall'] / floor:.2f}x here: the CPU --jobs 1 spends beside its one worker on the "
              f"idle core (the main process: {one['main_cpu']:.2f} s) is on the critical path with --jobs 2")
    if nbgrader_scores is not None:
        theirs_run = runs["nbgrader autograde"]
        print(f"nbgrader / --jobs 2: {theirs_run['wall'] / two['wall']:.1f}x wall, "
              f"{theirs_run['cpu'] / two['cpu']:.1f}x CPU; nbgrader / --jobs 1: {theirs_run['wall'] / one['wall']:.1f}x wall")
    disagreements = [(s, "jobs 1 vs 2", graded[1].get(s), p) for s, p in graded[2].items() if graded[1].get(s) != p]
    if nbgrader_scores is not None:
        same, other_partial, double_penalty, other = compare(graded[2], nbgrader_scores, points)
        disagreements += other
        print(f"verdicts per part: {same} identical scores, {other_partial} wrong in both with other partial "
              f"credit (other hidden inputs), {double_penalty} zeroed by nbgrader for a mistake in the part or an "
              f"earlier part (double penalty), {len(other)} disagreements")
    print(f"--jobs 1 and --jobs 2 verdicts identical: {graded[1] == graded[2]}")
    totals = {kind: sorted({sum(p.values()) for s, p in graded[2].items() if s.endswith(kind)})
              for kind in ("correct", "stub")}
    print(f"attnlab totals: correct {totals['correct']}, stubs {totals['stub']}")
    for d in disagreements[:10]:
        print("  disagreement:", d)
    return 1 if disagreements or any(len(g) != n for g in graded.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
