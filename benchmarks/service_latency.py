"""`attnlab serve`: from `nbgrader submit` returning to the feedback page being fetchable, and a burst.

Both parts run the service (`attnlab serve`, two warm slots, the course's default policies) on a
fresh course with the lab released to an exchange of its own in a temporary folder.

Latency. `--latency` students (20) submit one after the other with the `nbgrader submit` command,
as a student runs it, each waiting for the previous page. A page is fetchable once it is in the
exchange's feedback folder under the name `nbgrader fetch_feedback` looks for (the hash of the
submission's secret, from the student's nbgrader cache); it is polled every 10 ms. The latency is
the time from the command returning to the page being there, 0 when it was there first (the
command spends about 2 s starting and ending). Printed: median and 95th percentile (targets on an
idle 2-core machine: median <= 2 s, p95 <= 5 s), and the service's own split from its log lines
(wait before grading, grading).

Burst. `--burst` submissions (200) from `--students` students (100; each submits in turn, so the
second round replaces the first) within `--window` seconds (60), spread evenly. They are made with
nbgrader's own submit code in this process: the command's start-up (2-3 s each) could not make
200 in a minute on one machine. Then the benchmark waits until every entry is settled in the
journal and checks that none is lost: each entry is graded (done) or superseded by its student's
newer one, and each student's newest submission is graded, recorded and its page released.
Printed: the time from the first submission to the last page, the service's grading rate while it
had work queued, the batch command's (`attnlab grade --jobs 2`) on the same final submissions in
a copy of the course, the CPU time of the service's own process per submission (collecting,
recording, writing and releasing; the slots grade), and the peak resident memory of the service's own process and of its whole
process tree (slots and sandboxed workers; sampled every 0.2 s), with the main process's at the
start and the end of the burst (bounded: it does not grow with the number of submissions).

The submissions are `grading_throughput.py`'s `full` mix: a third correct, the rest with one
realistic mistake each.

    python benchmarks/service_latency.py [--lab lab05_transformers] [--latency 20] [--burst 200]
                                         [--students 100] [--window 60]
"""
import argparse
import os
import re
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(Path(__file__).parent)]
from autograder.course import scripts_on_path  # noqa: E402
from grading_throughput import BIN, make_course, percentile, synthetic_class  # noqa: E402


def exchange_course(where: Path, lab: str) -> tuple:
    """(course, exchange root): `lab` generated and released to an exchange of its own."""
    course = make_course(where / "course", lab)
    exchange = where / "exchange"
    exchange.mkdir()
    exchange.chmod(0o777)
    with open(course / "nbgrader_config.py", "a") as f:
        f.write(f"\nc.Exchange.root = {str(exchange)!r}\nc.ExchangeCollect.check_owner = False\n"
                "c.AttnLabService.slots = 2\n")
    run([str(BIN / "nbgrader"), "release_assignment", lab], course)
    return course, exchange


def run(command: list, cwd: Path) -> subprocess.CompletedProcess:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
    return done


class Student:
    def __init__(self, where: Path, name: str, exchange: Path, lab: str):
        from traitlets.config import Config
        self.name, self.lab, self.home, self.exchange = name, lab, where / "students" / name, exchange
        self.home.mkdir(parents=True)
        self.config = Config({"Exchange": {"root": str(exchange), "cache": str(self.home / ".cache"),
                                           "assignment_dir": str(self.home)},
                              "CourseDirectory": {"course_id": "attnlab"}})
        (self.home / "nbgrader_config.py").write_text(
            f"c = get_config()\nc.Exchange.root = {str(exchange)!r}\n"
            f"c.Exchange.cache = {str(self.home / '.cache')!r}\nc.CourseDirectory.course_id = 'attnlab'\n")
        shutil.copytree(ROOT / "assignments" / lab, self.home / lab)    # as fetch_assignment leaves it

    def submit_command(self, text: str) -> float:
        """`nbgrader submit`; returns when it returned (time.monotonic())."""
        (self.home / self.lab / f"{self.lab}.ipynb").write_text(text)
        run([str(BIN / "nbgrader"), "submit", self.lab, "--student", self.name], self.home)
        return time.monotonic()

    def submit(self, text: str) -> None:
        """nbgrader's submit, in this process."""
        from nbgrader.auth import Authenticator
        from nbgrader.coursedir import CourseDirectory
        from nbgrader.exchange.default import ExchangeSubmit
        (self.home / self.lab / f"{self.lab}.ipynb").write_text(text)
        dirs = CourseDirectory(config=self.config, root=str(self.home), assignment_id=self.lab, student_id=self.name)
        ExchangeSubmit(coursedir=dirs, authenticator=Authenticator(config=self.config), config=self.config).start()

    def page(self) -> Path:
        """Where `nbgrader fetch_feedback` looks for the page of the newest submission."""
        from nbgrader.utils import notebook_hash
        newest = max((self.home / ".cache" / "attnlab").iterdir())
        secret = (newest / "submission_secret.txt").read_text()
        return self.exchange / "attnlab" / "feedback" / f"{notebook_hash(secret=secret, notebook_id=self.lab)}.html"


class Service:
    """`attnlab serve` in a process of its own, with its process tree's memory sampled."""

    def __init__(self, course: Path):
        self.log_path = course / "serve.log"
        self.process = subprocess.Popen([str(BIN / "attnlab"), "serve"], cwd=course,
                                        stdout=subprocess.DEVNULL, stderr=open(self.log_path, "w"))
        self.peak_main = self.peak_tree = 0
        self.samples: list = []         # (time.monotonic(), main process's RSS)
        self.sampling = True
        threading.Thread(target=self._sample, daemon=True).start()

    def _sample(self) -> None:
        while self.sampling and self.process.poll() is None:
            main, tree = tree_rss(self.process.pid)
            self.samples.append((time.monotonic(), main))
            self.peak_main, self.peak_tree = max(self.peak_main, main), max(self.peak_tree, tree)
            time.sleep(0.2)

    def log(self) -> str:
        return self.log_path.read_text()

    def cpu(self) -> float:
        """CPU seconds of the service's own process so far."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        self.sampling = False
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(300)


def tree_rss(pid: int) -> tuple:
    """(RSS of `pid`, RSS of `pid` and all its descendants), in bytes."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
                parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    tree, grew = {pid}, True
    while grew:
        found = {p for p, parent in parents.items() if parent in tree} - tree
        tree |= found
        grew = bool(found)
    sizes = {p: rss(p) for p in tree}
    return sizes.get(pid, 0), sum(sizes.values())


def rss(pid: int) -> int:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        return int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1)) * 1024
    except (OSError, AttributeError):
        return 0


def journal(course: Path) -> list:
    """[(student, entry, state, started)] of the service's journal."""
    with sqlite3.connect(course / "gradebook.db") as db:
        try:
            return db.execute("select student, entry, state, started from attnlab_service order by id").fetchall()
        except sqlite3.OperationalError:
            return []


def wait_for(what, service: Service, timeout: float):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if what():
            return
        if service.process.poll() is not None:
            raise RuntimeError(f"the service ended:\n{service.log()[-3000:]}")
        time.sleep(0.01)
    raise RuntimeError(f"timed out after {timeout:.0f} s:\n{service.log()[-3000:]}")


def latency(where: Path, lab: str, n: int) -> None:
    course, exchange = exchange_course(where / "latency", lab)
    texts = list(synthetic_class(lab, n, "full").values())
    service = Service(course)
    wait_for(lambda: "serving" in service.log(), service, 120)
    time.sleep(3)               # the slots start their workers
    delays = []
    for i, text in enumerate(texts):
        student = Student(where / "latency", f"l{i:03d}", exchange, lab)
        returned = student.submit_command(text)
        page = student.page()
        wait_for(page.exists, service, 300)
        delays.append(max(0.0, time.monotonic() - returned))
    service.stop()
    waits = [float(w) for w in re.findall(r"\(waited ([\d.]+) s", service.log())]
    grading = [float(g) for g in re.findall(r"graded in ([\d.]+) s\)", service.log())]
    print(f"latency, {n} submissions one after the other (nbgrader submit returned -> page fetchable):")
    print(f"  median {statistics.median(delays):.2f} s, p95 {percentile(delays, 0.95):.2f} s, "
          f"max {max(delays):.2f} s   (targets: median <= 2 s, p95 <= 5 s)")
    print(f"  the service's split: wait before grading median {statistics.median(waits):.2f} s, "
          f"grading median {statistics.median(grading):.2f} s, p95 {percentile(grading, 0.95):.2f} s")


def burst(where: Path, lab: str, total: int, students: int, window: float) -> None:
    course, exchange = exchange_course(where / "burst", lab)
    texts = list(synthetic_class(lab, total, "full").values())
    names = [f"b{i:03d}" for i in range(students)]
    people = {name: Student(where / "burst", name, exchange, lab) for name in names}
    service = Service(course)
    wait_for(lambda: "serving" in service.log(), service, 120)
    time.sleep(3)
    rss_before, cpu_before = rss(service.process.pid), service.cpu()
    began = time.monotonic()
    for i, text in enumerate(texts):         # round after round: each student's second replaces the first
        time.sleep(max(0.0, began + i * window / total - time.monotonic()))
        people[names[i % students]].submit(text)
    submitted = time.monotonic() - began
    wait_for(lambda: len(journal(course)) == total and all(r[2] in ("done", "superseded") for r in journal(course)),
             service, 3600)
    finished, finished_at = time.monotonic() - began, time.time()
    rss_after, cpu = rss(service.process.pid), service.cpu() - cpu_before
    rows = journal(course)
    pages = {name: people[name].page().exists() for name in names}
    service.stop()
    done = [r for r in rows if r[2] == "done"]
    newest = {}
    for student, entry, state, _ in sorted(rows, key=lambda r: r[1].split("+")[2]):
        newest[student] = state
    lost = [s for s in names if newest.get(s) != "done" or not pages[s]]
    rate = len(done) / (finished_at - min(r[3] for r in done))
    grading = [float(t) for t in re.findall(r"graded in ([\d.]+) s\)", service.log())]
    batch = make_course(where / "batch", lab)         # the batch command on the same final submissions
    shutil.copytree(course / "submitted", batch / "submitted")
    t = time.monotonic()
    run([str(BIN / "attnlab"), "grade", lab, "--quiet", "--jobs", "2"], batch)
    batch_seconds = time.monotonic() - t
    print(f"burst: {total} submissions from {students} students in {submitted:.1f} s "
          f"({total / submitted:.1f} per s); the last page {finished - submitted:.1f} s after the last submission")
    print(f"  graded {len(done)} (each student's newest: {students - len(lost)} of {students}), "
          f"superseded by the student's newer one {len(rows) - len(done)}, lost {len(lost)}"
          + (f": {', '.join(lost[:10])}" if lost else ""))
    print(f"  service: {rate:.2f} gradings per s from its first to its last (grading median "
          f"{statistics.median(grading):.2f} s; bound by the arrivals when it keeps up with them); "
          f"attnlab grade --jobs 2 on the final {students}: {students / batch_seconds:.2f} per s "
          f"({batch_seconds:.1f} s); the service's own process: {cpu / total * 1000:.0f} ms of CPU per submission")
    print(f"  peak RSS: service process {service.peak_main / 2**20:.0f} MiB (at the start of the burst "
          f"{rss_before / 2**20:.0f} MiB, at its end {rss_after / 2**20:.0f} MiB), whole tree "
          f"{service.peak_tree / 2**20:.0f} MiB")
    if lost:
        raise SystemExit(1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lab", default="lab05_transformers")
    parser.add_argument("--latency", type=int, default=20, help="submissions for the latency (0: skip)")
    parser.add_argument("--burst", type=int, default=200, help="submissions in the burst (0: skip)")
    parser.add_argument("--students", type=int, default=100)
    parser.add_argument("--window", type=float, default=60.0, help="seconds over which the burst arrives")
    args = parser.parse_args()
    scripts_on_path()
    with tempfile.TemporaryDirectory(prefix="attnlab-service-") as where:
        if args.latency:
            latency(Path(where), args.lab, args.latency)
        if args.burst:
            burst(Path(where), args.lab, args.burst, min(args.students, args.burst), args.window)
    return 0


if __name__ == "__main__":
    sys.exit(main())
