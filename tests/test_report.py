"""`attnlab report` on the graded example class: every number on the page is checked against the
results.json files, the roster and the last-run summary; every plot is a real PNG beside the page."""
import json
import statistics
from collections import Counter
from html.parser import HTMLParser

import pytest
from matplotlib.image import imread

from autograder import labs, report
from autograder.outcome import CheckResult, PartResult, Recorded, Result
from conftest import ASSIGNMENT, copy_of, run_tool

SCORED = ("graded", "partly graded")
VOID = {"img", "br", "meta", "hr", "input", "link"}


class Elements(HTMLParser):
    """Every element with a data-testid: its attributes and its text."""

    def __init__(self, html: str):
        super().__init__()
        self.found, self._open = [], []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "data-testid" in attrs:
            element = {"tag": tag, **attrs, "text": ""}
            self.found.append(element)
            if tag not in VOID:
                self._open.append((tag, element))
        elif tag not in VOID:
            self._open.append((tag, None))

    def handle_endtag(self, tag):
        while self._open and self._open.pop()[0] != tag:
            pass

    def handle_data(self, data):
        for _, element in self._open:
            if element is not None:
                element["text"] += data

    def all(self, testid: str) -> list:
        return [e for e in self.found if e["data-testid"] == testid]

    def one(self, testid: str) -> dict:
        (element,) = self.all(testid)
        return element


@pytest.fixture(scope="module")
def graded(tmp_path_factory, graded_example_class):
    path = copy_of(graded_example_class, tmp_path_factory.mktemp("report") / "class")
    out = run_tool("attnlab", "report", ASSIGNMENT, cwd=path)
    page = path / "report" / ASSIGNMENT / "index.html"
    assert out.stdout.strip() == str(page)
    results = {p.parent.parent.name: json.loads(p.read_text())
               for p in (path / "autograded").glob(f"*/{ASSIGNMENT}/results.json")}
    return path, page, Elements(page.read_text()), results


def scored(results: dict) -> dict:
    return {s: r for s, r in results.items() if r["extra_data"]["status"] in SCORED}


def value(element: dict) -> float:
    return float(element["data-value"])


def test_score_distribution_matches_the_results(graded):
    _, _, page, results = graded
    totals = [r["score"] for r in scored(results).values()]
    assert len(totals) == 8                                  # ten on the roster: gus unreadable, hana missing
    assert value(page.one("score-n")) == 8
    assert value(page.one("score-mean")) == pytest.approx(statistics.fmean(totals))
    assert value(page.one("score-median")) == pytest.approx(statistics.median(totals))
    assert value(page.one("score-min")) == min(totals) and value(page.one("score-max")) == max(totals)
    maximum = next(iter(scored(results).values()))["extra_data"]["max_score"]   # with written answers
    percent = [100 * t / maximum for t in totals]
    assert value(page.one("score-full")) == totals.count(maximum)
    assert page.one("score-mean")["text"] == f"{statistics.fmean(totals):.1f}".rstrip("0").rstrip(".")
    bins = {b["data-bin"]: int(b["data-value"]) for b in page.all("bin")}
    expected = Counter(min(int(p // 10), 9) for p in percent)
    assert list(bins.values()) == [expected[i] for i in range(10)]
    assert bins["90–100"] == sum(p >= 90 for p in percent) and sum(bins.values()) == 8
    assert page.one("roster")["text"] == "10"


def test_per_part_numbers_match_the_results(graded):
    _, _, page, results = graded
    suite = labs.load(ASSIGNMENT).suite
    rows = {row["data-part"]: row for row in page.all("part-row")}
    assert list(rows) == list(suite.parts)
    for name, part in suite.parts.items():
        got = [p["score"] for r in scored(results).values() for p in r["extra_data"]["parts"] if p["name"] == name]
        assert float(rows[name]["data-mean"]) == pytest.approx(statistics.fmean(got)), name
        assert int(rows[name]["data-full"]) == got.count(part.points), name
    assert int(rows["layer_norm"]["data-full"]) == 4        # eli timed out, jon's eps, dev and fay did nothing


def test_mistake_counts_match_the_results(graded):
    _, _, page, results = graded
    expected = Counter()
    for result in results.values():
        for part in result["extra_data"]["parts"]:
            expected.update((part["name"], d) for d in {c["diagnosis"] for c in part["checks"]
                                                       if c["status"] == "failed" and c["diagnosis"]})
    texts = [e["text"] for e in page.all("mistake-text")]
    rows = page.all("mistake")
    shown = Counter({(row["data-part"], text): int(row["data-count"]) for row, text in zip(rows, texts)})
    assert shown == expected and len(rows) == 8
    assert ("softmax", next(d for p, d in expected if p == "softmax")) in shown
    assert any(p == "scaled_dot_product_attention" and "divided by d_k instead of √d_k" in t for p, t in shown)
    assert [int(r["data-count"]) for r in rows] == sorted((int(r["data-count"]) for r in rows), reverse=True)


def test_mistakes_are_counted_once_per_student_and_part():
    suite = labs.load(ASSIGNMENT).suite

    def result(student, diagnoses):
        checks = [CheckResult("softmax", f"check {i}", 0.0, 1.0, "failed", "wrong", d) for i, d in enumerate(diagnoses)]
        return Result(student, ASSIGNMENT, "graded", [PartResult("softmax", checks)])

    found = report.mistakes([result("a", ["no max", "no max", "no max", ""]), result("b", ["no max", "axis"])], suite)
    assert [(m["diagnosis"], m["count"], m["students"]) for m in found] == \
        [("no max", 2, ["a", "b"]), ("axis", 1, ["b"])]


def test_extra_credit_above_the_maximum_counts_in_the_top_bin_and_as_full_marks():
    def result(student, score):
        return Result(student, ASSIGNMENT, "graded", [], recorded=Recorded(score, score, 118.0))
    stats = report.score_stats([result("ada", 120.0), result("bob", 92.0), result("cy", 118.0)])
    assert sum(count for _, count in stats["bins"]) == stats["n"] == 3
    assert dict(stats["bins"])["90–100"] == 2 and stats["full"] == 2


def test_needs_a_human_lists_each_problem_with_its_reason(graded):
    _, _, page, _ = graded
    rows = {row["data-student"]: row for row in page.all("human")}
    assert set(rows) == {"ada", "ben", "cleo", "dev", "eli", "fay", "gus", "hana", "ivy", "jon"}
    assert page.one("humans-count")["text"] == "10"              # the written answers await a grader
    assert "to grade by hand: 12 written answers" in rows["ada"]["text"]
    assert rows["eli"]["data-status"] == "partly graded" and "layer_norm: timeout" in rows["eli"]["text"]
    assert "did not finish in time" in rows["eli"]["text"]                   # the note, as a detail
    assert rows["fay"]["data-status"] == "graded" and "tampering (1)" in rows["fay"]["text"]
    assert "points 8 -> 100" in rows["fay"]["text"]
    assert rows["gus"]["data-status"] == "unreadable" and "not a readable notebook" in rows["gus"]["text"]
    assert rows["hana"]["data-status"] == "missing" and "no submission" in rows["hana"]["text"]


def test_timing_shows_the_last_run_and_per_submission_times(graded):
    path, _, page, results = graded
    run = json.loads((path / ".attnlab" / f"{ASSIGNMENT}-last-run.json").read_text())
    assert run["jobs"] == 2 and run["graded"] == 9 and run["sandbox"] in ("bwrap", "user", "none")
    assert value(page.one("wall-time")) == pytest.approx(run["seconds"]) and run["seconds"] > 0
    assert page.one("jobs")["text"] == "2" and page.one("last-run-graded")["text"] == "9"
    assert page.one("sandbox")["text"] == run["sandbox"]
    seconds = {s: r["execution_time"] for s, r in scored(results).items()}
    assert value(page.one("time-mean")) == pytest.approx(statistics.fmean(seconds.values()))
    assert value(page.one("time-median")) == pytest.approx(statistics.median(seconds.values()))
    assert value(page.one("time-max")) == pytest.approx(max(seconds.values()))
    assert max(seconds, key=seconds.get) == "eli" and "(eli)" in page.one("time-max")["text"]


def test_every_plot_is_a_png_beside_the_page(graded):
    _, page_path, page, _ = graded
    plots = page.all("plot")
    assert len(plots) == 4
    for img in plots:
        src = img["src"]
        assert "/" not in src and src.endswith(".png"), src          # relative, in the same folder
        file = page_path.parent / src
        assert file.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        height, width, _ = imread(file).shape
        assert width > 300 and height > 150 and img["alt"]
    html = page_path.read_text()
    assert "<style>" in html and "<script" not in html and "http" not in html


def test_report_before_grading_says_so(tmp_path, example_class):
    path = copy_of(example_class, tmp_path / "class")
    out = run_tool("attnlab", "report", ASSIGNMENT, "-o", "before", cwd=path, check=False)
    assert out.returncode == 2 and out.stderr.count("\n") == 1
    assert "nothing of lab05_transformers is graded yet: run `attnlab grade lab05_transformers`" in out.stderr
    assert not (path / "before").exists()