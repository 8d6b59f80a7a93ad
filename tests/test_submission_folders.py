"""Attacks through the files of a submission folder, which the grader handles outside the
sandbox: links to a classmate's notebook or to the answer key, a pipe, file names that are not
UTF-8, forged nbgrader files, HTML for the grader's browser. One batch, attackers first, then
honest students; graded with one slot and with two."""
import json
import os
from datetime import datetime, timedelta, timezone
import pwd
import re
import shutil
import time

import nbformat
import pytest
from nbconvert import HTMLExporter

from autograder import examples, notebooks
from conftest import ASSIGNMENT, ROOT, copy_course, run_tool

NB = f"{ASSIGNMENT}.ipynb"
RELEASE = notebooks.read(ROOT / "assignments" / ASSIGNMENT / NB)
SOLVED = {k: notebooks.without_markers(v) for k, v in
          notebooks.answer_cells(notebooks.read(ROOT / "solutions" / ASSIGNMENT / NB)).items()}
HALF = {k: v for k, v in SOLVED.items() if k in ("softmax", "layer_norm", "feedforward")}
HONEST = {"h_correct": 100.0, "h_half": 24.0, "h_stub": 0.0}
ON_TIME = "2026-03-01 12:00:00.000000 UTC"
XSS = '<img src=x onerror="fetch(`/formgrader/api/grades`)"> my answer'


def notebook(answers: dict, markdown: str = "") -> str:
    nb = examples.fill(RELEASE, answers)
    if markdown:
        nb.cells.append(nbformat.v4.new_markdown_cell(markdown))
    return nbformat.writes(nb)


def link(target: str):
    return lambda path: os.symlink(target, path)


def text(content: str):
    def write(path):
        with open(path, "w") as file:
            file.write(content)
    return write


# student: {file name: how it is made}; None for the notebook means the correct one
ATTACKERS = {
    "a1_copies_a_classmate": {NB: link(f"../../h_correct/{ASSIGNMENT}/{NB}")},
    "a2_answer_key": {NB: link(f"../../../solutions/{ASSIGNMENT}/{NB}")},
    "a3_endless_pipe": {NB: link("/proc/self/fd/0")},
    "a4_fifo": {NB: os.mkfifo},
    "a5_odd_files": {NB: None, b"notes\xff.txt": text("x"), "mem": link("/proc/self/mem")},
    "a6_not_a_time": {NB: None, "timestamp.txt": text("yesterday-ish")},
    "a7_overflowing_time": {NB: None, "timestamp.txt": text("99999999999999999999999")},
    "a8_time_folder": {NB: None, "timestamp.txt": os.mkdir},
    "a9_classmates_secret": {NB: None, "submission_secret.txt": link(f"../../h_correct/{ASSIGNMENT}/submission_secret.txt")},
    "b1_html_for_the_grader": {NB: text(notebook(SOLVED, XSS))},
    "b2_nested_too_deeply": {NB: text('{"cells": [' + "[" * 100_000 + "]" * 100_000 + "]}")},
    "b3_javascript_link": {NB: text(notebook(SOLVED, "My derivation: [see the PDF](javascript:fetch(1))"))},
    "b4_link_in_a_file_name": {"[see](javascript:fetch(1)).ipynb": text(notebook(SOLVED)), "b.ipynb": text(notebook({}))},
    "b5_list_as_grade_id": {NB: text(notebook(SOLVED).replace('"grade_id": "test_softmax"', '"grade_id": ["x"]', 1))},
    "b6_lone_surrogate": {NB: text(notebook(SOLVED, "notes SURROGATE").replace("SURROGATE", "\\ud800"))},
}
REFUSED = {                                       # folders that are not graded at all
    '<svg onload="fetch(1)">': lambda folder: os.makedirs(folder),
    "x5_linked_folder": lambda folder: os.symlink(f"../h_correct/{ASSIGNMENT}", folder),
}


@pytest.fixture(scope="module", params=["1", pytest.param("2", marks=pytest.mark.full)], ids=["one-slot", "two-slots"])
def batch(request, tmp_path_factory):
    course = copy_course(tmp_path_factory.mktemp(f"folders{request.param}"))
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=course)
    for student, answers in {"h_correct": SOLVED, "h_half": HALF, "h_stub": {}}.items():
        folder = course / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        (folder / NB).write_text(notebook(answers))
        (folder / "timestamp.txt").write_text(ON_TIME)
        (folder / "submission_secret.txt").write_text(f"secret-of-{student}")
    for student, files in ATTACKERS.items():
        folder = course / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        for name, make in files.items():
            path = folder / name if isinstance(name, str) else os.path.join(os.fsencode(folder), name)
            (make or text(notebook(SOLVED)))(path)
    for student, make in REFUSED.items():
        (course / "submitted" / student).mkdir()
        make(course / "submitted" / student / ASSIGNMENT)
    (course / "submitted" / '<svg onload="fetch(1)">' / ASSIGNMENT / NB).write_text(notebook(SOLVED))
    out = run_tool("attnlab", "grade", ASSIGNMENT, "--quiet", "--jobs", request.param, cwd=course)
    results = {s: json.loads((course / "autograded" / s / ASSIGNMENT / "results.json").read_text())
               for s in (*HONEST, *ATTACKERS)}
    return course, results, out.stderr


@pytest.fixture
def graded(batch):
    return batch[:2]


@pytest.mark.parametrize("student", HONEST)
def test_honest_students_get_exactly_their_score(graded, student):
    course, results = graded
    assert results[student]["score"] == HONEST[student]
    assert results[student]["extra_data"]["tampering"] == []
    assert (course / "autograded" / student / ASSIGNMENT / "timestamp.txt").read_text() == ON_TIME


@pytest.mark.parametrize("student", ["a1_copies_a_classmate", "a2_answer_key", "a3_endless_pipe", "a4_fifo"])
def test_a_notebook_that_is_not_a_regular_file_is_not_read(graded, student):
    course, results = graded
    extra = results[student]["extra_data"]
    assert (results[student]["score"], extra["status"]) == (0.0, "unreadable")
    assert extra["notes"] == [f"{NB} is not a regular file" if student == "a4_fifo" else
                              f"{NB} is a symbolic link; a submission's files must be regular files"]
    graded = (course / "autograded" / student / ASSIGNMENT / NB).read_text()
    assert "BEGIN SOLUTION" not in graded and SOLVED["softmax"] not in graded


def test_a_notebook_nested_too_deeply_is_the_students_unreadable_file(graded):
    """Not a grader failure, which would be graded again at every run."""
    _, results = graded
    extra = results["b2_nested_too_deeply"]["extra_data"]
    assert extra["status"] == "unreadable" and "RecursionError" in extra["notes"][0]


def test_text_that_cannot_be_written_back_is_unreadable_and_stops_nobody(graded):
    _, results = graded
    extra = results["b6_lone_surrogate"]["extra_data"]
    assert extra["status"] == "unreadable" and "UnicodeEncodeError" in extra["notes"][0]


def test_odd_nbgrader_metadata_is_the_students_tampering_not_a_grader_failure(graded):
    _, results = graded
    extra = results["b5_list_as_grade_id"]["extra_data"]
    assert extra["status"] == "graded" and any("'['x']'" in t for t in extra["tampering"])


def test_odd_file_names_and_links_beside_the_notebook_do_not_stop_the_batch(graded):
    course, results = graded
    assert results["a5_odd_files"]["score"] == 100.0
    rows = {line.split(",")[0] for line in (course / "grades" / f"{ASSIGNMENT}.csv").read_text().splitlines()[1:]}
    assert rows == {*HONEST, *ATTACKERS}


@pytest.mark.parametrize("student", ["a6_not_a_time", "a7_overflowing_time", "a8_time_folder"])
def test_a_forged_timestamp_is_tampering_and_autograded_gets_a_valid_one(graded, student):
    from nbgrader.utils import parse_utc
    course, results = graded
    extra = results[student]["extra_data"]
    assert results[student]["score"] == 100.0 and extra["timestamp"] == ""
    assert len(extra["tampering"]) == 1 and extra["tampering"][0].endswith("lateness was not judged")
    assert "timestamp.txt" in extra["tampering"][0]
    parse_utc((course / "autograded" / student / ASSIGNMENT / "timestamp.txt").read_text())


def test_a_linked_secret_is_not_copied_so_feedback_stays_apart(graded):
    course, results = graded
    secret = course / "autograded" / "a9_classmates_secret" / ASSIGNMENT / "submission_secret.txt"
    assert not secret.is_symlink() and secret.read_text() != "secret-of-h_correct"
    assert results["a9_classmates_secret"]["extra_data"]["tampering"] == [
        "submission_secret.txt is a symbolic link; a submission's files must be regular files: "
        "the feedback gets a secret of its own"]
    assert (course / "autograded" / "h_correct" / ASSIGNMENT / "submission_secret.txt").read_text() == "secret-of-h_correct"


def test_html_a_student_writes_reaches_formgrader_escaped(graded):
    """formgrader renders autograded/ with nbconvert's HTMLExporter, unsanitised, to a grader
    who is logged in: a tag of the student's would run there."""
    course, results = graded
    assert results["b1_html_for_the_grader"]["score"] == 100.0
    html = render(course, "b1_html_for_the_grader")
    assert "my answer" in html
    assert not re.search(r"<img[^>]*onerror", html)


def render(course, student: str) -> str:
    """The graded notebook as formgrader renders it (nbconvert's HTMLExporter, unsanitised)."""
    return HTMLExporter().from_filename(str(course / "autograded" / student / ASSIGNMENT / NB))[0]


def test_links_a_student_writes_cannot_run_in_the_graders_browser(graded):
    course, results = graded
    assert results["b3_javascript_link"]["score"] == 100.0
    assert "see the PDF" in render(course, "b3_javascript_link")
    assert results["b4_link_in_a_file_name"]["extra_data"]["status"] == "unreadable"
    for student in ("b3_javascript_link", "b4_link_in_a_file_name"):
        assert not re.search(r"href=[\"']?\s*javascript", render(course, student), re.I), student


def test_folders_formgrader_could_not_show_safely_are_not_graded(batch):
    course, _, stderr = batch
    for folder in REFUSED:
        assert f"NOT GRADED {course / 'submitted' / folder / ASSIGNMENT}: " in stderr
        assert not (course / "autograded" / folder).exists()
    rows = {line.split(",")[0] for line in (course / "grades" / f"{ASSIGNMENT}.csv").read_text().splitlines()[1:]}
    assert rows == {*HONEST, *ATTACKERS}


def exchange_course(tmp_path, config: str = "") -> tuple:
    """A course with an nbgrader exchange of its own and the lab released: (course, inbound)."""
    course = copy_course(tmp_path / "exchange")
    with open(course / "nbgrader_config.py", "a") as f:
        f.write(f"\nc.Exchange.root = {str(tmp_path / 'exchange_root')!r}\n{config}\n")
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=course)
    return course, tmp_path / "exchange_root" / "attnlab" / "inbound"


@pytest.mark.full
def test_nbgrader_collect_keeps_links_as_links_and_skips_ids_it_could_not_show(tmp_path):
    """Through nbgrader's own exchange: a link in an inbound folder would be followed by
    nbgrader's copy, running as the instructor (the answer key, a classmate's notebook)."""
    course, inbound = exchange_course(tmp_path, "c.ExchangeCollect.check_owner = False")
    stamp = "2026-01-10 12:00:00.000000 UTC"
    for student, make in {"h_correct": text(notebook(SOLVED)),
                          "a2_answer_key": link(str(course / "solutions" / ASSIGNMENT / NB)),
                          "a4_fifo_beside": os.mkfifo,
                          '<svg onload="fetch(1)">': text(notebook(SOLVED))}.items():
        folder = inbound / f"{student}+{ASSIGNMENT}+{stamp}+0123abcd"
        folder.mkdir(parents=True)
        (folder / "timestamp.txt").write_text(stamp)
        make(folder / NB)
    classmate = inbound / f"h_correct+{ASSIGNMENT}+{stamp}+0123abcd"
    os.symlink(classmate, inbound / f"a1_copies+{ASSIGNMENT}+{stamp}+bbbb")       # whole entries as links
    os.symlink(course / "solutions" / ASSIGNMENT, inbound / f"a3_key_folder+{ASSIGNMENT}+{stamp}+cccc")
    (inbound / f"a5_file+{ASSIGNMENT}+{stamp}+dddd").write_text("not a folder")
    (inbound / f"a6_no_time+{ASSIGNMENT}+yesterday+eeee").mkdir()
    forged = inbound / f"a7_forged_time+{ASSIGNMENT}+{stamp}+ffff"
    forged.mkdir()
    (forged / "timestamp.txt").write_text("not a time")
    (forged / NB).write_text(notebook(SOLVED))
    out = run_tool("nbgrader", "collect", "--update", ASSIGNMENT, cwd=course)
    assert "is not a valid id" in out.stderr and "copied as links" in out.stderr and "holds no submission time" in out.stderr
    assert "timestamp.txt is not a submission time" in out.stderr
    assert sorted(p.name for p in (course / "submitted").iterdir()) == ["a2_answer_key", "a4_fifo_beside", "h_correct"]
    assert not (course / "submitted" / "a4_fifo_beside" / ASSIGNMENT / NB).exists()
    assert (course / "submitted" / "a2_answer_key" / ASSIGNMENT / NB).is_symlink()
    run_tool("attnlab", "grade", ASSIGNMENT, "--quiet", cwd=course)
    scores = {s: json.loads((course / "autograded" / s / ASSIGNMENT / "results.json").read_text())["score"]
              for s in ("h_correct", "a2_answer_key", "a4_fifo_beside")}
    assert scores == {"h_correct": 100.0, "a2_answer_key": 0.0, "a4_fifo_beside": 0.0}


RACE = """
import os
from autograder.nbgrader_plugins import SafeCollect


class StudentsActAfterTheCheck(SafeCollect):
    def init_src(self):
        super().init_src()
        entry = {name.split("+")[0]: os.path.join(self.inbound_path, name) for name in os.listdir(self.inbound_path)}
        os.rename(entry["r1_swaps_the_entry"], entry["r1_swaps_the_entry"] + ".moved")
        os.symlink(entry["h_correct"], entry["r1_swaps_the_entry"])
        notebook = os.path.join(entry["r2_swaps_the_notebook"], NB)
        os.unlink(notebook)
        os.symlink(KEY, notebook)
        with open(os.path.join(entry["r3_rewrites_the_time"], "timestamp.txt"), "w") as f:
            f.write("not a time")
        os.rename(entry["r4_vanishes"], entry["r4_vanishes"] + ".moved")


c.ExchangeFactory.collect = StudentsActAfterTheCheck
"""


@pytest.mark.full
def test_what_a_student_changes_after_collect_checked_the_entry_is_not_followed(tmp_path):
    """nbgrader copies the entries one after the other, as the instructor: a student who swaps
    their checked entry for a link to a classmate's (a byte-for-byte copy: 100), their notebook
    for a link to the answer key, or their timestamp.txt for text (every later collect of the lab
    fails), or who renames their entry away (nbgrader's owner warning stopped the collection of
    everyone after them), gains nothing, and the class is collected and graded as usual."""
    key = ROOT / "solutions" / ASSIGNMENT / NB
    course, inbound = exchange_course(tmp_path, f"NB, KEY = {NB!r}, {str(key)!r}\n" + RACE)
    stamp = "2026-01-10 12:00:00.000000 UTC"
    for student, answers in {"h_correct": SOLVED, "h_half": HALF, "r1_swaps_the_entry": {},
                             "r2_swaps_the_notebook": {}, "r3_rewrites_the_time": {}, "r4_vanishes": {}}.items():
        folder = inbound / f"{student}+{ASSIGNMENT}+{stamp}+0123abcd"
        folder.mkdir(parents=True)
        (folder / "timestamp.txt").write_text(stamp)
        (folder / NB).write_text(notebook(answers))
    out = run_tool("nbgrader", "collect", "--update", ASSIGNMENT, cwd=course)
    assert "r1_swaps_the_entry" in out.stderr and "is not a folder" in out.stderr
    assert "timestamp.txt is not a submission time" in out.stderr
    submitted = course / "submitted"
    assert sorted(p.name for p in submitted.iterdir()) == ["h_correct", "h_half", "r2_swaps_the_notebook"]
    assert (submitted / "r2_swaps_the_notebook" / ASSIGNMENT / NB).is_symlink()
    again = run_tool("nbgrader", "collect", "--update", ASSIGNMENT,   # the next collect, with no student acting
                     "--ExchangeFactory.collect=autograder.nbgrader_plugins.SafeCollect", cwd=course)
    assert "r3_rewrites_the_time" in again.stderr
    run_tool("attnlab", "grade", ASSIGNMENT, "--quiet", cwd=course)
    scores = {s: json.loads((course / "autograded" / s / ASSIGNMENT / "results.json").read_text())["score"]
              for s in ("h_correct", "h_half", "r2_swaps_the_notebook")}
    assert scores == {"h_correct": 100.0, "h_half": 24.0, "r2_swaps_the_notebook": 0.0}


@pytest.mark.full
def test_a_late_entry_without_its_time_is_not_collected_and_the_owner_is_named(tmp_path):
    """`nbgrader submit` always writes timestamp.txt, and the student owns their inbound entry: a
    late student who deleted or emptied it was collected with no lateness judged and no warning
    (a correct notebook an hour late: 100 instead of 0). Such an entry is skipped, so the
    student's newest entry with a time is collected. nbgrader's owner warning, which names who
    wrote an entry under an id that is no user of this machine, is given again."""
    course, inbound = exchange_course(tmp_path)
    early, late = "2026-01-10 12:00:00.000000 UTC", "2026-01-10 13:00:00.000000 UTC"
    entries = {("h_correct", late): (SOLVED, late), ("d1_deletes", early): (HALF, early),
               ("d1_deletes", late): (SOLVED, None), ("d2_empties", late): (SOLVED, ""),
               ("d3_blank", late): (SOLVED, " \n")}
    for (student, stamp), (answers, written) in entries.items():
        folder = inbound / f"{student}+{ASSIGNMENT}+{stamp}+0123abcd"
        folder.mkdir(parents=True)
        if written is not None:
            (folder / "timestamp.txt").write_text(written)
        (folder / NB).write_text(notebook(answers))
    out = run_tool("nbgrader", "collect", "--update", ASSIGNMENT, cwd=course)
    for student in ("d1_deletes", "d2_empties", "d3_blank"):
        assert f"{student}+{ASSIGNMENT}+{late}+0123abcd/timestamp.txt is missing or empty" in out.stderr
    assert f"claims to be submitted by h_correct but is owned by {pwd.getpwuid(os.getuid()).pw_name}" in out.stderr
    submitted = course / "submitted"
    assert sorted(p.name for p in submitted.iterdir()) == ["d1_deletes", "h_correct"]
    assert (submitted / "d1_deletes" / ASSIGNMENT / "timestamp.txt").read_text() == early
    run_tool("attnlab", "grade", ASSIGNMENT, "--quiet", cwd=course)
    scores = {s: json.loads((course / "autograded" / s / ASSIGNMENT / "results.json").read_text())["score"]
              for s in ("h_correct", "d1_deletes")}
    assert scores == {"h_correct": 100.0, "d1_deletes": 24.0}


def user(name: str) -> int:
    return pwd.getpwnam(name).pw_uid


@pytest.mark.full
@pytest.mark.skipif(os.geteuid() != 0, reason="students are users of their own: needs root to play them")
def test_collect_copies_only_what_is_safe_and_each_student_their_own(tmp_path, request):
    """Found by a red team against the snapshot: nbgrader's copy, as root, kept a set-uid bit (the
    student's program became a root shell in submitted/); a newer entry naming a classmate, made
    by another student, hid or replaced the classmate's work; a folder nested 1000 deep stopped
    the collection of everyone after; a hard link could bring in a file the student may not read;
    control characters in names reached the instructor's terminal. And nbgrader trusts the
    submission time a student writes: one set back by hand is shown to the grader, against the
    entry's ctimes, which no student sets."""
    course, inbound = exchange_course(tmp_path)

    def entry(student, stamp="2026-01-10 12:00:00.000000 UTC", answers=SOLVED, owner="root", suffix="0123abcd"):
        folder = inbound / f"{student}+{ASSIGNMENT}+{stamp}+{suffix}"
        folder.mkdir(parents=True)
        (folder / "timestamp.txt").write_text(stamp)
        (folder / NB).write_text(notebook(answers))
        for path in (folder, folder / "timestamp.txt", folder / NB):
            os.chown(path, user(owner), -1)
        return folder

    entry("nobody", owner="nobody")                      # honest; two newer decoys by daemon:
    entry("nobody", "2099-01-01 00:00:00.000000 UTC", answers={}, owner="daemon")
    (inbound / f"nobody+{ASSIGNMENT}+2100-01-01 00:00:00.000000 UTC+ffff").write_text("not a folder")
    tool = entry("s1_setuid") / "tool"
    shutil.copy("/usr/bin/id", tool)
    os.chmod(tool, 0o6777)
    deep = entry("s2_deep")
    nested(deep, 1000)
    request.addfinalizer(lambda: nested(deep, 1000, remove=True))      # too deep for pytest's clean-up
    os.link(course / "solutions" / ASSIGNMENT / NB, entry("s3_hardlink", answers={}) / "key.ipynb")
    os.mkfifo(entry("s4_names") / "\x1b]0;owned\x07\x1b[2J")
    entry("s6_control", suffix="\x1b]0;owned\x07")
    entry("s5_after_them")
    entry("s7_now", stamp=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f UTC"))
    out = run_tool("nbgrader", "collect", "--update", ASSIGNMENT, cwd=course)
    assert "names the user nobody but belongs to the user with uid" in out.stderr
    assert "nested more than 32 deep" in out.stderr
    assert "its name holds control characters" in out.stderr
    assert "\x1b" not in out.stderr and "\\x1b]0;owned" in out.stderr
    submitted = course / "submitted"
    assert sorted(p.name for p in submitted.iterdir()) == ["nobody", "s1_setuid", "s3_hardlink", "s4_names",
                                                          "s5_after_them", "s7_now"]
    assert os.stat(submitted / "s1_setuid" / ASSIGNMENT / "tool").st_mode & 0o7022 == 0
    assert not (submitted / "s3_hardlink" / ASSIGNMENT / "key.ipynb").exists()
    run_tool("attnlab", "grade", ASSIGNMENT, "--quiet", cwd=course)
    scores = {s: json.loads((course / "autograded" / s / ASSIGNMENT / "results.json").read_text())["score"]
              for s in ("nobody", "s1_setuid", "s3_hardlink", "s5_after_them")}
    assert scores == {"nobody": 100.0, "s1_setuid": 100.0, "s3_hardlink": 0.0, "s5_after_them": 100.0}
    # every entry here but s7_now claims January, and was made today: the grader is told
    tampering = {s: json.loads((course / "autograded" / s / ASSIGNMENT / "results.json").read_text())
                 ["extra_data"]["tampering"] for s in ("s5_after_them", "s7_now")}
    assert tampering["s7_now"] == [] and len(tampering["s5_after_them"]) == 1
    assert "timestamp.txt says 2026-01-10 12:00:00" in tampering["s5_after_them"][0]
    assert "the time may have been set back" in out.stderr


def nested(folder, depth: int, remove: bool = False) -> None:
    """Make (or remove) folder/a/a/.../a, `depth` levels, without recursion."""
    fds = [os.open(folder, os.O_RDONLY)]
    for _ in range(depth):
        if not remove:
            os.mkdir("a", dir_fd=fds[-1])
        fds.append(os.open("a", os.O_RDONLY, dir_fd=fds[-1]))
    for parent in reversed(fds[:-1]):
        os.close(fds.pop())
        if remove:
            os.rmdir("a", dir_fd=parent)
    os.close(fds.pop())


def test_a_folder_swapped_for_a_link_to_a_pipe_mid_copy_is_refused_at_once(tmp_path, monkeypatch):
    """os.fwalk opened a subfolder following links and blocking: a student who swapped it, after
    it was listed, for a link to a pipe of theirs hung the collection of the whole class."""
    from autograder import student_files
    src = tmp_path / "entry"
    (src / "sub").mkdir(parents=True)
    os.mkfifo(tmp_path / "pipe")
    real_stat = os.stat

    def listed_then_swapped(name, *args, **kwargs):
        info = real_stat(name, *args, **kwargs)
        if name == "sub" and not os.path.islink(src / "sub"):
            os.rmdir(src / "sub")
            os.symlink(tmp_path / "pipe", src / "sub")
        return info
    monkeypatch.setattr(student_files.os, "stat", listed_then_swapped)
    with pytest.raises(OSError):
        student_files.snapshot(str(src), str(tmp_path / "copy"), 2**20)


def test_a_decoy_dated_before_the_due_date_does_not_hide_a_late_entry():
    """With before_duedate, nbgrader collects a student's newest entry dated before the due date:
    a plain file named like one, put there by a classmate, hid the student's late entry."""
    from datetime import datetime as dt

    from autograder.nbgrader_plugins import SafeCollect
    collect = SafeCollect()
    late = {"filename": "bob+lab+late", "timestamp": dt(2026, 2, 1), "why": ""}
    decoy = {"filename": "bob+lab+decoy", "timestamp": dt(2026, 1, 1), "why": "not a folder"}
    for record in (late, decoy):
        record["checked"] = True
    assert collect._sort_by_timestamp([decoy, late]) == [late]
    assert collect._sort_by_timestamp([decoy]) == [decoy]       # dropped by init_src


@pytest.mark.full
def test_a_time_set_back_within_the_old_tolerance_is_judged_by_the_kernels_time(tmp_path):
    """A late student who set timestamp.txt back 50 s (under the 60 s tolerance) scored 100
    with no flag, while an honest student 18 s late got 0 under a zero-penalty policy. A claim
    more than a few seconds before the entry's ctime is flagged and judged at the later time; a
    few seconds of clock skew (NFS) is not."""
    course, inbound = exchange_course(tmp_path, 'c.LateSubmissionPlugin.penalty_method = "zero"')

    def entry(student: str, claimed: datetime) -> None:
        stamp = claimed.strftime("%Y-%m-%d %H:%M:%S.%f UTC")
        folder = inbound / f"{student}+{ASSIGNMENT}+{stamp}+0123abcd"
        folder.mkdir(parents=True)
        (folder / NB).write_text(notebook(SOLVED))
        (folder / "timestamp.txt").write_text(stamp)
    now = datetime.now(timezone.utc)
    entry("h_on_time", now)
    entry("h_skewed_clock", now - timedelta(seconds=3))        # the file server's clock runs ahead
    # the due date follows the entries on time, however long a busy machine takes to record it
    due = datetime.now(timezone.utc).replace(microsecond=0) + timedelta(seconds=2)
    run_tool("nbgrader", "db", "assignment", "add", ASSIGNMENT, f"--duedate={due:%Y-%m-%d %H:%M:%S} UTC", cwd=course)
    time.sleep(max(0.0, (due - datetime.now(timezone.utc)).total_seconds()) + 2)
    now = datetime.now(timezone.utc)
    entry("h_late", now)
    entry("t_set_back", now - timedelta(seconds=50))           # claims to be well before the due date
    out = run_tool("nbgrader", "collect", "--update", ASSIGNMENT, cwd=course)
    assert "t_set_back" in out.stderr and "the time may have been set back" in out.stderr
    run_tool("attnlab", "grade", ASSIGNMENT, "--quiet", cwd=course)
    found = {s: json.loads((course / "autograded" / s / ASSIGNMENT / "results.json").read_text())
             for s in ("h_on_time", "h_skewed_clock", "h_late", "t_set_back")}
    assert {s: r["score"] for s, r in found.items()} == \
        {"h_on_time": 100.0, "h_skewed_clock": 100.0, "h_late": 0.0, "t_set_back": 0.0}
    assert [bool(r["extra_data"]["tampering"]) for r in found.values()] == [False, False, False, True]
    assert "lateness is judged at the later time" in found["t_set_back"]["extra_data"]["tampering"][0]
