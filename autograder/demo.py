"""The main job on bundled data: a small example class graded end to end in a fresh course."""
import shutil
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

from . import engine, examples, feedback, report
from .course import CourseError, open_course, scripts_on_path
from .sandbox import Limits

ASSIGNMENT = "lab05_transformers"


def new_course(repo: Path, dest: Path, assignment: str = ASSIGNMENT) -> Path:
    """A course directory with this repository's labs and `assignment` released."""
    try:
        dest.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CourseError(f"cannot make the course folder {dest}: {exc.strerror}") from None
    shutil.copy(repo / "nbgrader_config.py", dest)
    for name in ("source", "assignments", "solutions"):
        shutil.copytree(repo / name, dest / name, dirs_exist_ok=True)
    scripts_on_path()
    nbgrader = Path(sys.executable).parent / "nbgrader"
    done = subprocess.run([str(nbgrader), "generate_assignment", assignment, "--force"], cwd=dest,
                          capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"nbgrader generate_assignment failed in {dest}:\n{done.stderr[-3000:]}")
    return dest


def build_course(repo: Path, dest: Path, assignment: str = ASSIGNMENT) -> Path:
    """A new course with the example class enrolled and its submissions collected."""
    course = open_course(new_course(repo, dest, assignment))
    submissions = examples.example_class(course.root, assignment)
    with course.gradebook() as gb:
        for student in submissions:
            gb.update_or_create_student(student, first_name=student.title(), last_name="Example")
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    for student, text in submissions.items():
        if text is None:
            continue
        folder = course.path("submitted", student, assignment)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{assignment}.ipynb").write_text(text)
        (folder / "timestamp.txt").write_text(stamp)
    return course.root


def run(repo: Path, dest: Path, mode: str, jobs=None, progress=True, assignment: str = ASSIGNMENT):
    course = open_course(build_course(repo, dest, assignment))
    batch = engine.grade(course, assignment, jobs=jobs, limits=Limits(), mode=mode, progress=progress)
    pages, *_ = feedback.write_all(course, assignment)
    return course, batch, pages, report.write(course, assignment)
