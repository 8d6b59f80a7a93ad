"""LMS downloads: only the LMS's own top-level file names choose student ids, ids are checked
and mapped to the roster, a bad or duplicated entry is skipped alone, and student-chosen names
are refused before they reach formgrader."""
import csv
import io
import json
import shutil
import zipfile
from datetime import datetime

import pytest


from autograder.course import open_course
from autograder.nbgrader_plugins import unsafe_id, unsafe_name
from conftest import ASSIGNMENT, copy_course, run_tool
from test_cycle import solved, stub

pytestmark = pytest.mark.full     # the full tier: nbgrader zip_collect on LMS downloads


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
        z.writestr(f"tardy_LATE_cara_1007_{ASSIGNMENT}.ipynb", solved())       # the LMS's late marker, no time
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
        "ada": ("graded", "100"), "cara": ("graded", "100"), "dora": ("graded", "100")}
    # Canvas says late, not when: not one second late (a zero under a per-day policy), but unknown
    assert rows["cara"]["late_penalty"] == "0" and rows["ada"]["late"] == ""
    assert rows["cara"]["late"].startswith("late by the LMS's mark, time unknown")
    assert "late, time unknown" in rows["cara"]["needs_attention"]
    (course / "submitted" / "cara" / ASSIGNMENT / "timestamp.txt").write_text("2026-01-10 14:00:00 UTC")
    run_tool("attnlab", "grade", ASSIGNMENT, "--quiet", cwd=course)      # the instructor puts the time
    cara = {r["student_id"]: r for r in csv.DictReader(open(course / "grades" / f"{ASSIGNMENT}.csv"))}["cara"]
    assert (cara["score"], cara["late_penalty"]) == ("0", "100") and cara["late"].startswith("2 h 0 min late")
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


def _download(course, members: dict):
    archive = course / "downloaded" / ASSIGNMENT / "archive"
    archive.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(archive / "submissions.zip", "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in members.items():
            z.writestr(name, text)
    return archive / "submissions.zip"


def test_an_id_neither_mapped_nor_on_the_roster_is_named_with_the_closest(tmp_path):
    """A typo in lms_ids made a real student look missing and graded the file as a stranger's,
    silently: the warning names the file and the closest known ids; 'skip' leaves it out."""
    course = copy_course(tmp_path / "typo")
    with open(course / "nbgrader_config.py", "a") as f:
        f.write('\nc.AttnLab.lms_ids = {"20001": "ada", "20020": "bob"}\n')
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=course)
    for student in ("ada", "bob", "cy"):
        run_tool("nbgrader", "db", "student", "add", student, cwd=course)
    _download(course, {f"lovelace_20001_1_{ASSIGNMENT}.ipynb": solved(), f"b_20021_2_{ASSIGNMENT}.ipynb": solved(),
                       f"c_cy_3_{ASSIGNMENT}.ipynb": solved()})
    out = run_tool("attnlab", "grade", ASSIGNMENT, "--zip-collect", "--quiet", cwd=course)
    assert (f"nbgrader: Collected b_20021_2_{ASSIGNMENT}.ipynb: the id '20021' is neither in c.AttnLab.lms_ids nor "
            "a student of the gradebook (closest known: 20020, 20001)") in out.stderr, out.stderr
    assert "lovelace" not in out.stderr and f"c_cy_3" not in out.stderr
    with open(course / "nbgrader_config.py", "a") as f:
        f.write('\nc.AttnLab.lms_unknown_ids = "skip"\n')
    shutil.rmtree(course / "submitted" / "20021")            # the stranger graded the first time, removed
    with open_course(course).gradebook() as gb:
        gb.remove_student("20021")
    out = run_tool("attnlab", "grade", ASSIGNMENT, "--zip-collect", "--quiet", cwd=course)
    assert f"nbgrader: Skipped b_20021_2_{ASSIGNMENT}.ipynb: the id '20021'" in out.stderr
    assert sorted(p.name for p in (course / "submitted").iterdir()) == ["ada", "cy"]


def test_the_grades_go_back_to_the_lms_under_its_ids(tmp_path):
    """Canvas's gradebook import: its columns, the LMS's ids (lms_ids read backwards), the column
    named as Canvas's export names it; a student who never submitted gets 0."""
    course = copy_course(tmp_path / "back")
    with open(course / "nbgrader_config.py", "a") as f:
        f.write('\nc.AttnLab.lms_ids = {"20001": "ada"}\nc.AttnLab.lms_columns = {"%s": "Lab 05 (4321)"}\n' % ASSIGNMENT)
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=course)
    with open_course(course).gradebook() as gb:
        gb.update_or_create_student("ada", first_name="Ada", last_name="Lovelace")
        gb.update_or_create_student("erin", first_name="Erin", last_name="Absent")
    _download(course, {f"lovelace_20001_1_{ASSIGNMENT}.ipynb": solved(), f"q_quinn_2_{ASSIGNMENT}.ipynb": stub()})
    run_tool("attnlab", "grade", ASSIGNMENT, "--zip-collect", "--quiet", cwd=course)
    out = run_tool("attnlab", "lms-grades", ASSIGNMENT, cwd=course)
    path = course / "grades" / f"{ASSIGNMENT}-lms.csv"
    assert out.stdout.strip() == str(path)
    rows = list(csv.reader(open(path)))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Lab 05 (4321)"]
    assert rows[1:] == [["Lovelace, Ada", "20001", "", "", "", "100"], ["Absent, Erin", "erin", "", "", "", "0"],
                        ["quinn", "quinn", "", "", "", "0"]]
    assert ("note: not in c.AttnLab.lms_ids, written under their gradebook id (Canvas matches a row only by its "
            "own ID): erin, quinn") in out.stderr          # a login Canvas does not know is named, not left silent


def test_an_archive_member_that_unpacks_to_gigabytes_is_charged_to_its_student(tmp_path):
    """A 1 MiB member that unpacked to 1 GiB wrote 2 GiB: what a student's files unpack to, and
    how many there are, is bounded; that student is skipped with a warning, everyone else is
    collected and keeps their exact score, and little is written."""
    course = copy_course(tmp_path / "bomb")
    run_tool("nbgrader", "generate_assignment", ASSIGNMENT, "--force", cwd=course)
    archive = course / "downloaded" / ASSIGNMENT / "archive"
    archive.mkdir(parents=True)
    with zipfile.ZipFile(archive / "submissions.zip", "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(f"lovelace_ada_1_{ASSIGNMENT}.ipynb", solved())
        with z.open(f"mal_mal_2_{ASSIGNMENT}.ipynb", "w", force_zip64=True) as member:
            for _ in range(200):                      # 200 MiB of spaces: about 200 KiB compressed
                member.write(b" " * 2**20)
        for i in range(101):                          # a student who uploaded 101 files
            z.writestr(f"many_many_3_notes{i}.ipynb", "{}")
        z.writestr(f"quinn_quinn_4_{ASSIGNMENT}.ipynb", stub())
    assert (archive / "submissions.zip").stat().st_size < 2**20
    out = run_tool("attnlab", "grade", ASSIGNMENT, "--zip-collect", "--quiet", cwd=course)
    assert f"Skipped the files of 'mal' in {archive / 'submissions.zip'}: they unpack to more than 64 MiB" in out.stderr
    assert "Skipped the files of 'many'" in out.stderr and "more than 100 files of one student" in out.stderr
    rows = {r["student_id"]: r for r in csv.DictReader(open(course / "grades" / f"{ASSIGNMENT}.csv"))}
    assert {s: (r["status"], r["score"]) for s, r in rows.items()} == {"ada": ("graded", "100"), "quinn": ("graded", "0")}
    written = sum(p.stat().st_size for top in ("downloaded", "submitted") for p in (course / top).rglob("*") if p.is_file())
    assert written < 4 * 2**20, written
