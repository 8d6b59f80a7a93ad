"""Where a submission's seconds go in the sandbox: a per-step cost breakdown.

Two views, both of correct submissions of one lab graded in one slot (bwrap mode unless told):

1. From the grader (`grading_steps`): the wall time of each step the slot waits for, per
   submission (the median over the submissions): starting the context and running the cells,
   sealing, each part's start (fork, namespaces, the oracles bound), the calls (every round
   trip), each part's end, ending the context, and the slot's own work in between (the checks'
   comparisons, the reference). Measured by wrapping the runner's and the worker's methods.
2. Inside the sandbox (`isolation_steps`): the kernel's cost of each thing a part's start and end
   do, timed in a process with a worker's heap (NumPy, matplotlib, IPython loaded, as the
   zygote): fork, each namespace kind, the user namespace's maps, bringing loopback up, the
   scratch mounts, dropping capabilities, sealing (closing descriptors, privatising shared
   memory), and exit with the reap.

    python benchmarks/steps.py [--lab lab05_transformers] [--n 10] [--sandbox bwrap]
"""
import argparse
import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]
from autograder import examples, grading, labs, notebooks, runners, sandbox  # noqa: E402


def _timed(owner, name: str, into: dict, step: str) -> None:
    original = getattr(owner, name)

    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            into[step] += time.perf_counter() - start
            into[f"{step} (count)"] += 1
    setattr(owner, name, wrapper)


def _timed_part(into: dict) -> None:
    """The part's start (until the body runs) and end (after it), apart."""
    original = runners.SandboxRunner.part

    @contextlib.contextmanager
    def part(self, name, oracles):
        start = time.perf_counter()
        with original(self, name, oracles) as ready:
            into["part start"] += time.perf_counter() - start
            into["part start (count)"] += 1
            yield ready
            start = time.perf_counter()
        into["part end"] += time.perf_counter() - start
    runners.SandboxRunner.part = part


def grading_steps(lab: str, n: int, mode: str) -> dict:
    """{step: median seconds per submission}, plus counts, over `n` correct submissions."""
    steps: dict = defaultdict(float)
    _timed(sandbox.Worker, "spawn", steps, "context start")
    _timed(runners.SandboxRunner, "_run_cells", steps, "cells")
    _timed(sandbox.Worker, "seal", steps, "seal")
    _timed(sandbox.Worker, "kill", steps, "context end")
    _timed(runners.SandboxRunner, "run_many", steps, "calls")
    _timed_part(steps)
    release = ROOT / "assignments" / lab
    key = notebooks.read(ROOT / "solutions" / lab / f"{lab}.ipynb")
    answers = {g: notebooks.without_markers(c) for g, c in notebooks.answer_cells(key).items()}
    nb = examples.fill(notebooks.read(release / f"{lab}.ipynb"), answers)
    slot = grading.Slot(lab, release, f"{lab}.ipynb", mode, sandbox.Limits())
    per_submission = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{lab}.ipynb"
        path.write_text(nbformat.writes(nb))
        started = time.perf_counter()
        slot.worker.start()
        worker_start = time.perf_counter() - started
        try:
            for i in range(n):
                steps.clear()
                start = time.perf_counter()
                result, _ = slot.grade(f"s{i}", path, salt=b"steps%d" % i)
                total = time.perf_counter() - start
                if result.score != sum(p.max_score for p in result.parts):
                    raise RuntimeError(f"the solution scored {result.score}: {result.notes}")
                waited = sum(v for k, v in steps.items() if "(count)" not in k)
                per_submission.append({**steps, "total": total, "slot's own work": total - waited})
        finally:
            slot.worker.close()
    names = list(per_submission[0])
    return {"worker start": worker_start,
            **{name: statistics.median(s.get(name, 0.0) for s in per_submission) for name in names}}


# What a part's start and end do in the worker, one step at a time (run inside the sandbox).
INSIDE = r"""
import ctypes, json, os, sys, time
from worker import isolation
from worker.__main__ import _scratch_dirs, _kept_dirs, _seal, prepare
t = time.perf_counter(); shell, _ = prepare(); imports = time.perf_counter() - t
libc = ctypes.CDLL(None, use_errno=True)
scratch, keep = _scratch_dirs(), _kept_dirs()
N = int(sys.argv[1])
kinds = {"user": isolation.CLONE_NEWUSER, "+ mount": isolation.CLONE_NEWNS, "+ IPC": isolation.CLONE_NEWIPC,
         "+ network": isolation.CLONE_NEWNET}

def child(report, action):
    pid = os.fork()
    if pid == 0:
        try:
            os.write(report, json.dumps(action(report)).encode())
        finally:
            os._exit(0)
    return pid

def timings(action):
    found = []
    for _ in range(N):
        r, w = os.pipe()
        t0 = time.perf_counter()
        pid = child(w, action)
        forked = time.perf_counter() - t0
        os.close(w)
        inner = json.loads(os.read(r, 65536) or b"{}")
        t1 = time.perf_counter()
        os.waitpid(pid, 0)
        found.append({"fork": forked, **inner, "exit and reap": time.perf_counter() - t1})
        os.close(r)
    return {k: sorted(f[k] for f in found)[N // 2] for k in found[0]}

def unshare_each():
    out, flags = {}, 0
    for name, flag in kinds.items():   # cumulative, each in a fresh child of its own
        flags |= flag
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            t = time.perf_counter(); ok = libc.unshare(flags) == 0
            os.write(w, json.dumps(time.perf_counter() - t if ok else None).encode()); os._exit(0)
        os.close(w); out[f"unshare {name}"] = json.loads(os.read(r, 100)); os.waitpid(pid, 0); os.close(r)
    return out

def part_start(report):
    steps, t = {}, time.perf_counter()
    isolation.enter(scratch, 2**20, keep, pid_namespace=False)
    steps["enter (unshare, maps, loopback, mounts)"] = time.perf_counter() - t
    t = time.perf_counter(); isolation.drop_capabilities(); steps["drop capabilities"] = time.perf_counter() - t
    t = time.perf_counter(); _seal(report); steps["seal"] = time.perf_counter() - t
    return steps

each = [unshare_each() for _ in range(N)]
result = {"imports and the shell (worker start)": imports,
          **{k: sorted(e[k] for e in each)[N // 2] for k in each[0] if each[0][k] is not None},
          **timings(part_start)}
print(json.dumps(result))
"""


def isolation_steps(lab: str, mode: str, n: int = 21) -> dict:
    """{step: median seconds} of a part's start and end, measured inside the sandbox."""
    argv, cwd, env = sandbox.command(mode, ROOT / "assignments" / lab, sandbox.Limits(), sandbox.slot_uid())
    argv = argv[:argv.index("-m")] + ["-c", INSIDE, str(n)]
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    if done.returncode:
        raise RuntimeError(done.stderr[-2000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def report(lab: str, n: int, mode: str) -> str:
    graded = grading_steps(lab, n, mode)
    inside = isolation_steps(lab, mode)
    parts, calls = graded.get("part start (count)", 0), graded.get("calls (count)", 0)
    lines = [f"per-step cost of a correct {lab} submission ({mode}; median of {n}; ms):",
             f"  worker start (once per slot): {1e3 * graded['worker start']:.0f}"]
    for step in ("context start", "cells", "seal", "part start", "calls", "part end", "context end",
                 "slot's own work", "total"):
        count = graded.get(f"{step} (count)")
        each = f" ({count:g} x {1e3 * graded[step] / count:.2f})" if count and count > 1 else ""
        lines.append(f"  {step:<17} {1e3 * graded.get(step, 0.0):7.1f}{each}")
    lines.append(f"  ({parts:g} parts, {calls:g} requests of calls)")
    lines.append("inside the sandbox, per part (median; ms):")
    lines += [f"  {step:<40} {1e3 * seconds:7.2f}" for step, seconds in inside.items()]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lab", choices=labs.assignments(), default="lab05_transformers")
    parser.add_argument("--n", type=int, default=10)
    parser.add_argument("--sandbox", choices=("bwrap", "user", "none"), default="bwrap")
    args = parser.parse_args()
    print(report(args.lab, args.n, args.sandbox))
    return 0


if __name__ == "__main__":
    sys.exit(main())
