"""LMS downloads: only the LMS's own top-level file names choose student ids, ids are checked
and mapped to the roster, a bad or duplicated entry is skipped alone, and student-chosen names
are refused before they reach formgrader."""
import csv
import io
import json
import zipfile
from datetime import datetime


from autograder.course import open_course
from autograder.nbgrader_plugins import unsafe_id, unsafe_name
from conftest import ASSIGNMENT, copy_course, run_tool
from test_cycle import solved, stub


def test_unsafe_ids_are_named():
    for bad in ("..", "a/b", "a\\b", "x\ny", "", ".hidden", "a..b", "$x$", "@SUM(1)", "+cmd", "-x", "=1+1"):
        assert unsafe_id(bad), bad
    for good in ("ada", "s1234567", "ada.lovelace@uni.edu", "2001", "_ta"):
        assert not unsafe_id(good), good
    for bad in ("..", "../x", "a/b", ".x", "a\x00b", ""):
        assert unsafe_name(bad), bad
    assert not unsafe_name("Lab05 Transformers (1)")


def test_zip_collect_takes_ids_only_from_the_lms_names(tmp_path):
    course = copy_course(tmp_path / "lms")
    with open(course / "nbgrader_config.py", "a") as f:
        f.write('\nc.AttnLab.lms_ids = {"2001": "dora"}\nc.LateSubmissionPlugin.penalty_method = "zero"\n')
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=course)
    with open_course(course).gradebook() as gb:
        gb.update_or_create_assignment(ASSIGNMENT, duedate=datetime(2026, 1, 10, 12, 0))
    uploaded = io.BytesIO()                   # a zip a student uploaded, named to choose ids
    with zipfile.ZipFile(uploaded, "w") as z:
        z.writestr(f"x_victim_9_{ASSIGNMENT}.ipynb", solved())
        z.writestr(f"inner/y_ghost_9_{ASSIGNMENT}.ipynb", solved())
    archive = course / "downloaded" / ASSIGNMENT / "archive"
    archive.mkdir(parents=True)
    with zipfile.ZipFile(archive / "submissions.zip", "w") as z:
        z.writestr(f"lovelace_ada_1001_{ASSIGNMENT}.ipynb", solved())
        z.writestr(f"lovelace_ada_1004_{ASSIGNMENT}.ipynb", stub())              # duplicate: skipped
        z.writestr("doe_2001_1002_Lab05 Transformers (1).ipynb", solved())      # renamed, mapped id
        z.writestr(f"mallory_mal_1003_{ASSIGNMENT}.zip", uploaded.getvalue())
        z.writestr(f"evil_a..b_1005_{ASSIGNMENT}.ipynb", solved())
        z.writestr(f"tardy_LATE_cara_1007_{ASSIGNMENT}.ipynb", solved())       # the LMS's late marker
        z.writestr(f"nested/dir/q_victim2_1006_{ASSIGNMENT}.ipynb", solved())
        z.writestr(f"fox_fox_1008_{ASSIGNMENT}.ipynb", solved().replace("Multi-head", "FOX-MARKER"))
    damaged = (archive / "submissions.zip").read_bytes().replace(b"FOX-MARKER", b"FOX-MARKEX")   # its CRC fails
    (archive / "submissions.zip").write_bytes(damaged)
    for _ in range(2):                        # a second collection replaces the first
        out = run_tool("attnlab", "grade", ASSIGNMENT, "--zip-collect", "--quiet", cwd=course, check=False)
        assert out.returncode == 0, out.stderr
        assert f"nbgrader: Skipped 'fox_fox_1008_{ASSIGNMENT}.ipynb'" in out.stderr and "a damaged entry" in out.stderr
        assert "a..b" in out.stderr         # nbgrader's own warnings are shown, not swallowed
    assert sorted(p.name for p in (course / "submitted").iterdir()) == ["ada", "cara", "dora"]
    rows = {r["student_id"]: r for r in csv.DictReader(open(course / "grades" / f"{ASSIGNMENT}.csv"))}
    assert {s: (r["status"], r["score"]) for s, r in rows.items()} == {
        "ada": ("graded", "100"), "cara": ("graded", "0"), "dora": ("graded", "100")}
    assert rows["cara"]["late_penalty"] == "100" and rows["ada"]["late"] == ""
    dora = json.loads((course / "autograded" / "dora" / ASSIGNMENT / "results.json").read_text())
    assert any("the only notebook submitted" in n for n in dora["extra_data"]["notes"])


def test_a_student_id_formgrader_could_not_show_safely_is_not_graded(tmp_path):
    """nbgrader collect takes any inbound folder's name as the student id, and formgrader prints
    ids unescaped: such a folder is named, not graded, not put in the gradebook."""
    course = copy_course(tmp_path / "ids")
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=course)
    for student in ("$x^^2$<b>", "ada"):
        folder = course / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        (folder / f"{ASSIGNMENT}.ipynb").write_text(stub())
    out = run_tool("attnlab", "grade", ASSIGNMENT, "--quiet", cwd=course)
    assert f"NOT GRADED {course / 'submitted' / '$x^^2$<b>' / ASSIGNMENT}: '$x^^2$<b>' is not a valid id" in out.stderr
    with open_course(course).gradebook() as gb:
        assert [s.id for s in gb.students] == ["ada"]
    for command in ("report", "feedback"):
        assert run_tool("attnlab", command, ASSIGNMENT, cwd=course, check=False).returncode == 0


def test_in_a_loose_download_no_file_is_opened_as_an_archive(tmp_path):
    """The LMS's files laid out loose are every one a student's: a zip a student uploaded under
    a notebook's name is not opened, so the names inside it choose no student id."""
    course = copy_course(tmp_path / "loose")
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=course)
    archive = course / "downloaded" / ASSIGNMENT / "archive"
    archive.mkdir(parents=True)
    (archive / f"lovelace_ada_1001_{ASSIGNMENT}.ipynb").write_text(solved())
    with zipfile.ZipFile(archive / f"mallory_mal_1003_{ASSIGNMENT}.ipynb", "w") as z:
        z.writestr(f"aaa_ada_1_{ASSIGNMENT}.ipynb", stub())
        z.writestr(f"mallory_mal_1003_{ASSIGNMENT}.ipynb", solved())
    run_tool("attnlab", "grade", ASSIGNMENT, "--zip-collect", "--quiet", cwd=course)
    rows = {r["student_id"]: r for r in csv.DictReader(open(course / "grades" / f"{ASSIGNMENT}.csv"))}
    assert {s: (r["status"], r["score"]) for s, r in rows.items()} == {"ada": ("graded", "100"), "mal": ("unreadable", "0")}


def test_a_download_beside_loose_files_and_names_repeated_across_zips(tmp_path):
    """A file added by hand beside the LMS's download zip: the zip is still opened (it hid every
    student in it); a student's own zip, named as the LMS names a student's file, is not, even
    alone; a name found in two downloads is kept once, with a warning that names it."""
    course = copy_course(tmp_path / "mixed")
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=course)
    archive = course / "downloaded" / ASSIGNMENT / "archive"
    archive.mkdir(parents=True)
    with zipfile.ZipFile(archive / "part1.zip", "w") as z:
        z.writestr(f"lovelace_ada_1001_{ASSIGNMENT}.ipynb", solved())
        z.writestr(f"quinn_quinn_1002_{ASSIGNMENT}.ipynb", solved())
    with zipfile.ZipFile(archive / "part2.zip", "w") as z:
        z.writestr(f"quinn_quinn_1002_{ASSIGNMENT}.ipynb", stub())
    with zipfile.ZipFile(archive / f"mallory_mal_1003_{ASSIGNMENT}.zip", "w") as z:
        z.writestr(f"x_victim_9_{ASSIGNMENT}.ipynb", solved())
    (archive / f"zoe_LATE_zoe_1004_{ASSIGNMENT}.ipynb").write_text(solved())
    out = run_tool("attnlab", "grade", ASSIGNMENT, "--zip-collect", "--quiet", cwd=course)
    assert f"Skipped 'quinn_quinn_1002_{ASSIGNMENT}.ipynb' in {archive / 'part2.zip'}: another file" in out.stderr
    rows = {r["student_id"]: r for r in csv.DictReader(open(course / "grades" / f"{ASSIGNMENT}.csv"))}
    assert {s: (r["status"], r["score"]) for s, r in rows.items()} == {
        "ada": ("graded", "100"), "quinn": ("graded", "100"), "zoe": ("graded", "100")}


def test_a_download_unzipped_into_a_folder_is_collected_and_a_link_is_named(tmp_path):
    """A download unzipped by double-click is a folder in archive/: its files are collected as
    loose files are (macOS's __MACOSX/ and dot files aside); a link, a folder inside that
    folder and a download cut short are skipped, and the warning names each."""
    course = copy_course(tmp_path / "folder")
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=course)
    archive = course / "downloaded" / ASSIGNMENT / "archive"
    unzipped = archive / "submissions"
    (unzipped / "deeper").mkdir(parents=True)
    (archive / "__MACOSX").mkdir()
    (archive / "__MACOSX" / f"._lovelace_ada_1001_{ASSIGNMENT}.ipynb").write_text("resource fork")
    (unzipped / f"lovelace_ada_1001_{ASSIGNMENT}.ipynb").write_text(solved())
    (unzipped / f"quinn_quinn_1002_{ASSIGNMENT}.ipynb").write_text(stub())
    (unzipped / "deeper" / f"zoe_zoe_1004_{ASSIGNMENT}.ipynb").write_text(solved())
    (archive / f"kim_kim_1005_{ASSIGNMENT}.ipynb").symlink_to(unzipped / f"lovelace_ada_1001_{ASSIGNMENT}.ipynb")
    whole = io.BytesIO()
    with zipfile.ZipFile(whole, "w") as z:
        z.writestr(f"zoe_zoe_1004_{ASSIGNMENT}.ipynb", solved())
    (archive / "part2.zip").write_bytes(whole.getvalue()[:-30])             # a download cut short
    out = run_tool("attnlab", "grade", ASSIGNMENT, "--zip-collect", "--quiet", cwd=course)
    assert f"Skipped {archive / 'part2.zip'}: a damaged zip archive; its students are not collected" in out.stderr
    assert f"Skipped {archive / f'kim_kim_1005_{ASSIGNMENT}.ipynb'}: a link" in out.stderr, out.stderr
    assert f"Skipped {unzipped / 'deeper'}: a folder in a folder of the download" in out.stderr, out.stderr
    rows = {r["student_id"]: r for r in csv.DictReader(open(course / "grades" / f"{ASSIGNMENT}.csv"))}
    assert {s: (r["status"], r["score"]) for s, r in rows.items()} == {"ada": ("graded", "100"), "quinn": ("graded", "0")}
