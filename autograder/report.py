"""The class report: one HTML page with PNG plots for the instructor, from the graded results.

Built from autograded/<student>/<assignment>/results.json, the roster (students without a
submission are listed as missing) and the summary of the last `attnlab grade` run; written to
report/<assignment>/index.html with its plots beside it. It shows the distribution of scores,
overall and per part, the most frequent diagnosed mistakes, the submissions that need a human
(submission folders that are not graded too), how long grading took, and a link to the pairs
of submissions whose code is alike beyond chance (similarity.html beside it).
"""
import json
import statistics
import textwrap
from collections import Counter, defaultdict
from datetime import datetime, timezone
from pathlib import Path

import jinja2
import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from . import classview, labs, outcome, results, similarity, text
from .course import Course, CourseError
from .messages import points

SCORED = ("graded", "partly graded")    # statuses whose scores and times mean something
BIN_EDGES = np.linspace(0, 100, 11)     # the histogram's bins, in % of the maximum score
TOP_MISTAKES = 12
COLOR, WARN = "#3b6ea8", "#c77c11"

_TEMPLATES = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
                                autoescape=True, trim_blocks=True, lstrip_blocks=True,
                                finalize=text.for_page)


def write(course: Course, assignment: str, out_dir: Path | None = None) -> Path:
    """Write the report and its plots into `out_dir` (default report/<assignment>/); returns index.html."""
    suite = labs.load(assignment).suite
    everyone = classview.current(course, assignment)
    if not any(r.recorded for r in everyone):
        raise CourseError(f"nothing of {assignment} is graded yet: run `attnlab grade {assignment}` first")
    out_dir = Path(out_dir or course.root / "report" / assignment)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CourseError(f"cannot write the report in {out_dir}: {exc.strerror}") from None
    scored = [r for r in everyone if r.status in SCORED]
    data = {
        "assignment": assignment, "course": course.root,
        "generated": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "roster": len(everyone), "statuses": _statuses(everyone),
        "scores": score_stats(scored), "parts": part_stats(scored, suite),
        "mistakes": mistakes(everyone, suite),
        "humans": needs_a_human(everyone) + not_graded(course.refused_students(assignment)),
        "times": time_stats(scored), "last_run": last_run(course, assignment),
    }
    data["plots"] = _plots(out_dir, data, scored)
    data["similarity"] = similarity.write(course, assignment, [r.student for r in scored], out_dir)
    page = out_dir / "index.html"
    page.write_text(_TEMPLATES.get_template("report.html.j2").render(**data, pts=points, num=_num))
    return page


# -- the numbers -----------------------------------------------------------------------------

def score_stats(scored: list) -> dict | None:
    """Totals of the graded submissions: summary numbers and the histogram's counts."""
    if not scored:
        return None
    totals = [r.score for r in scored]
    counts, _ = np.histogram(_percent(scored), BIN_EDGES)
    return {"n": len(totals), "max_score": scored[0].max_score, "mean": statistics.fmean(totals),
            "median": statistics.median(totals), "min": min(totals), "max": max(totals),
            "stdev": statistics.pstdev(totals), "full": sum(t >= r.max_score for t, r in zip(totals, scored)),
            "bins": [(f"{lo:g}–{hi:g}", int(c)) for lo, hi, c in zip(BIN_EDGES, BIN_EDGES[1:], counts)]}


def _percent(scored: list) -> np.ndarray:
    """Totals in % of the maximum; extra credit above it counts in the top bin."""
    return np.clip([100 * r.score / r.max_score for r in scored], 0, 100)


def part_stats(scored: list, suite) -> list:
    """Per part, in notebook order: its points and the graded submissions' mean, median, range."""
    rows = []
    for name, part in suite.parts.items():
        got = [r.part_score(p) for r in scored for p in r.parts if p.name == name]
        if got:
            rows.append({"name": name, "points": part.points, "scores": got, "mean": statistics.fmean(got),
                         "median": statistics.median(got), "min": min(got), "max": max(got),
                         "full": sum(s >= part.points for s in got),
                         "mean_pct": 100 * statistics.fmean(got) / part.points})
    return rows


def mistakes(everyone: list, suite) -> list:
    """Diagnosed mistakes, most frequent first, each counted once per student and part."""
    students = defaultdict(set)
    for r in everyone:
        for p in r.parts:
            for c in p.checks:
                if c.status == "failed" and c.diagnosis:
                    students[(p.name, c.diagnosis)].add(r.student)
    order = list(suite.parts)
    ranked = sorted(students.items(), key=lambda kv: (-len(kv[1]), order.index(kv[0][0]), kv[0][1]))
    return [{"part": part, "diagnosis": text, "count": len(who), "students": sorted(who)}
            for (part, text), who in ranked]


def needs_a_human(everyone: list) -> list:
    """Submissions with parts not fully run, tampering, unreadable, missing or internal errors,
    written answers to grade, or notes."""
    rows = []
    for r in everyone:
        reasons = r.problems()
        details = [d for d in r.tampering + r.cells + r.notes if not any(d in reason for reason in reasons)]
        if reasons or details:
            rows.append({"student": r.student, "status": r.status, "reasons": reasons, "details": details})
    return rows


def not_graded(refused: dict) -> list:
    """Submission folders `attnlab grade` refuses ({folder: why}), as rows of `needs_a_human`."""
    return [{"student": folder, "status": "not graded", "reasons": [why], "details": []}
            for folder, why in sorted(refused.items())]


def time_stats(scored: list) -> dict | None:
    """How long each graded submission took in its sandbox."""
    if not scored:
        return None
    seconds = {r.student: r.seconds for r in scored}
    slowest = max(seconds, key=seconds.get)
    return {"n": len(seconds), "mean": statistics.fmean(seconds.values()),
            "median": statistics.median(seconds.values()), "max": seconds[slowest], "slowest": slowest,
            "total": sum(seconds.values())}


def last_run(course: Course, assignment: str) -> dict | None:
    path = course.last_run_path(assignment)
    return json.loads(path.read_text()) if path.exists() else None


def _statuses(everyone: list) -> list:
    """(status, count) in the order of outcome.STATUSES, for the statuses present."""
    counts = Counter(r.status for r in everyone)
    return [(status, counts[status]) for status in outcome.STATUSES if counts[status]]


def _num(x: float, digits: int = 1) -> str:
    """A readable number: at most `digits` decimals, no trailing zeros."""
    return f"{x:.{digits}f}".rstrip("0").rstrip(".")


# -- the plots -------------------------------------------------------------------------------

def _plots(out_dir: Path, data: dict, scored: list) -> dict:
    """Draw the plots that have data; returns {name: file name} (relative to the page)."""
    drawers = {"scores": (_scores_plot, scored), "parts": (_parts_plot, data["parts"]),
               "mistakes": (_mistakes_plot, data["mistakes"]), "times": (_times_plot, scored)}
    written = {}
    for name, (draw, source) in drawers.items():
        if source:
            with matplotlib.rc_context({"text.parse_math": False, "text.usetex": False}):
                fig = draw(source)     # labels carry student ids: never read as mathtext
            FigureCanvasAgg(fig)
            fig.savefig(out_dir / f"{name}.png", dpi=110, metadata={"Software": None})
            written[name] = f"{name}.png"
    return written


def _scores_plot(scored: list) -> Figure:
    fig = Figure(figsize=(6.4, 3.4), layout="constrained")
    ax = fig.add_subplot()
    percent = _percent(scored)
    ax.hist(percent, bins=BIN_EDGES, color=COLOR, edgecolor="white")
    ax.axvline(statistics.fmean(percent), color="#222", linestyle="--", linewidth=1, label="mean")
    ax.set(title=f"Total scores ({len(scored)} graded submissions)", xlabel="score (% of the maximum)",
           ylabel="students", xlim=(0, 100), xticks=BIN_EDGES)
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.legend(frameon=False)
    return fig


def _parts_plot(parts: list) -> Figure:
    fig = Figure(figsize=(6.4, 0.45 * len(parts) + 1.2), layout="constrained")
    ax = fig.add_subplot()
    rng = np.random.default_rng(0)
    for y, part in enumerate(parts):
        pct = np.clip(100 * np.array(part["scores"]) / part["points"], 0, 100)   # extra credit: at 100 %
        ax.scatter(pct, y + rng.uniform(-0.18, 0.18, len(pct)), s=18, color=COLOR, alpha=0.55, linewidths=0)
        ax.scatter(part["mean_pct"], y, marker="D", s=36, color="#222", zorder=3)
    ax.scatter([], [], color=COLOR, alpha=0.55, label="one student")
    ax.scatter([], [], marker="D", color="#222", label="mean of the graded submissions")
    ax.set(title="Score per part", xlabel="% of the part's points", xlim=(-4, 104), ylim=(len(parts) - 0.5, -0.5),
           yticks=range(len(parts)), yticklabels=[p["name"] for p in parts])
    ax.grid(axis="x", alpha=0.3)
    fig.legend(loc="outside lower center", ncols=2, frameon=False, fontsize="small")
    return fig


def _mistakes_plot(found: list) -> Figure:
    top = found[:TOP_MISTAKES]
    fig = Figure(figsize=(7.2, 0.4 * len(top) + 1.2), layout="constrained")
    ax = fig.add_subplot()
    labels = [f"{m['part']}: " + textwrap.shorten(m["diagnosis"], 48, placeholder=" …") for m in top]
    ax.barh(range(len(top)), [m["count"] for m in top], height=0.6, color=COLOR)
    fig.suptitle("Most frequent diagnosed mistakes (students per mistake)")
    ax.set(xlabel="students", yticks=range(len(top)),
           yticklabels=labels, ylim=(len(top) - 0.5, -0.5))
    ax.tick_params(axis="y", labelsize="small")
    ax.xaxis.get_major_locator().set_params(integer=True)
    return fig


def _times_plot(scored: list) -> Figure:
    ordered = sorted(scored, key=lambda r: r.seconds)
    fig = Figure(figsize=(6.4, 0.3 * len(ordered) + 1.2), layout="constrained")
    ax = fig.add_subplot()
    colors = [COLOR if r.status == "graded" else WARN for r in ordered]
    ax.barh([r.student for r in ordered], [r.seconds for r in ordered], color=colors)
    ax.set(title="Grading time per submission (orange: partly graded)", xlabel="seconds in the sandbox")
    ax.tick_params(axis="y", labelsize="small")
    return fig
