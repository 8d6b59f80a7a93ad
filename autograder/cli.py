"""The `attnlab` command."""
import argparse
import dataclasses
import gc
import math
import os
import sys
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")   # before NumPy loads: grading is many tiny problems

from . import __version__, course_lock, labs, sandbox  # noqa: E402
from .config import MAX_SECONDS, MIN_MEMORY_MIB, AttnLab  # noqa: E402
from traitlets import TraitError  # noqa: E402
from .course import CourseError, load_config, open_course, submitted_notebook  # noqa: E402
from .student_files import digest as folder_digest  # noqa: E402
from .messages import points  # noqa: E402
from .outcome import UNRECORDED  # noqa: E402
from . import results  # noqa: E402
from .text import NOTE_LIMIT, shown  # noqa: E402


def _positive(kind, minimum=None, maximum=math.inf):
    """An argparse type: a number > 0 (or >= `minimum`), at most `maximum`, refused with one
    line otherwise."""
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not math.isfinite(value) or value <= 0 or (minimum is not None and value < minimum) or value > maximum:
            raise argparse.ArgumentTypeError(f"must be {'at least ' + str(minimum) if minimum else 'positive'}"
                                             + (f" and at most {maximum:g}" if maximum < math.inf else "")
                                             + f", got {text}")
        return value
    return parse


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        """One line, not the usage block."""
        self.exit(2, f"{self.prog}: {message} (see `{self.prog} --help`)\n")


def _course_option(parser) -> None:
    parser.add_argument("--course", default=".", help="the nbgrader course directory (default: here)")


def _limit_options(parser) -> None:
    """The sandbox limits (default: nbgrader_config.py's AttnLab settings, else AttnLab's)."""
    default = "default: nbgrader_config.py's c.AttnLab.{}, else {:g}".format
    parser.add_argument("--call-timeout", type=_positive(float, maximum=MAX_SECONDS), default=None, metavar="S",
                        help=f"CPU seconds per call of student code ({default('call_timeout', sandbox.Limits.call_seconds)})")
    parser.add_argument("--cell-timeout", type=_positive(float, maximum=MAX_SECONDS), default=None, metavar="S",
                        help=f"CPU seconds per notebook cell ({default('cell_timeout', sandbox.Limits.cell_seconds)})")
    parser.add_argument("--submission-timeout", type=_positive(float, maximum=MAX_SECONDS), default=None, metavar="S",
                        help=f"CPU seconds per submission in all "
                             f"({default('submission_timeout', sandbox.Limits.submission_seconds)})")
    parser.add_argument("--memory", type=_positive(int, MIN_MEMORY_MIB), default=None, metavar="MiB",
                        help=f"memory of student code ({default('memory', sandbox.Limits.memory_bytes / 2**20)})")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="attnlab", description=__doc__)
    parser.add_argument("--version", action="version", version=f"attnlab {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    sandboxes = ("auto", "bwrap", "user", "none")
    sandbox_help = "how student code is isolated (default auto: bubblewrap when available)"

    g = commands.add_parser("grade", help="grade submissions in submitted/<student>/ASSIGNMENT/")
    g.add_argument("assignment", help="the assignment (a folder of assignments/)")
    g.add_argument("--student", action="append", help="grade only this student (repeatable)")
    g.add_argument("--jobs", type=_positive(int), default=None, metavar="N",
                   help="parallel workers (default: the number of cores)")
    g.add_argument("--force", action="store_true", help="regrade submissions that are already graded")
    g.add_argument("--zip-collect", action="store_true",
                   help="first collect an LMS download in downloaded/ASSIGNMENT/archive/")
    g.add_argument("--sandbox", choices=sandboxes, default="auto", help=sandbox_help)
    _limit_options(g)
    _course_option(g)
    g.add_argument("--quiet", action="store_true", help="no progress bar and no table")

    sv = commands.add_parser("serve", help="grade each submission as it arrives in nbgrader's exchange and "
                                           "release its feedback (policies: c.AttnLabService in nbgrader_config.py)")
    sv.add_argument("--once", action="store_true",
                    help="grade what has arrived (and is due under the policies), then exit (for cron)")
    sv.add_argument("--sandbox", choices=sandboxes, default="auto", help=sandbox_help)
    _limit_options(sv)
    _course_option(sv)

    f = commands.add_parser("feedback", help="write the feedback pages (feedback/<student>/ASSIGNMENT/) "
                                             "from the graded results and the gradebook")
    f.add_argument("assignment", help="the assignment")
    f.add_argument("--student", action="append", help="only this student (repeatable)")
    _course_option(f)

    rp = commands.add_parser("report", help="write report/ASSIGNMENT/index.html: a class report with plots")
    rp.add_argument("assignment", help="the assignment")
    rp.add_argument("-o", "--output", help="the folder to write index.html and its plots to "
                                          "(default: report/ASSIGNMENT/ in the course)")
    _course_option(rp)

    lg = commands.add_parser("lms-grades", help="write grades/ASSIGNMENT-lms.csv: the grades as Canvas's gradebook "
                                                "imports them, under the LMS's ids")
    lg.add_argument("assignment", help="the assignment")
    lg.add_argument("-o", "--output", help="the file to write (default: grades/ASSIGNMENT-lms.csv in the course)")
    _course_option(lg)

    d = commands.add_parser("demo", help="grade the bundled example class end to end in a fresh course")
    d.add_argument("--lab", default="lab05_transformers", metavar="ASSIGNMENT", choices=labs.assignments(),
                   help=f"the lab to demonstrate, one of {', '.join(labs.assignments())} (default lab05_transformers)")
    d.add_argument("--dir", help="build the course here (default: a new temporary directory)")
    d.add_argument("--jobs", type=_positive(int), default=None, metavar="N",
                   help="parallel workers (default: the number of cores)")
    d.add_argument("--sandbox", choices=sandboxes, default="auto", help=sandbox_help)

    b = commands.add_parser("gradescope", help="build a Gradescope autograder zip for ASSIGNMENT")
    b.add_argument("assignment", help="the assignment")
    b.add_argument("-o", "--output", help="the zip to write (default: ASSIGNMENT-gradescope.zip)")
    _limit_options(b)
    _course_option(b)

    r = commands.add_parser("gradescope-run", help="(inside Gradescope) grade /autograder/submission")
    r.add_argument("--root", default="/autograder", help="Gradescope's autograder folder (default /autograder)")
    r.add_argument("--warm", action="store_true", help="(setup.sh) start a worker once, grade nothing")

    s = commands.add_parser("sync", help="regenerate the reference modules and student helpers from source/")
    s.add_argument("--check", action="store_true", help="only report stale files (exit 1 if any)")
    _course_option(s)
    return parser


def main(argv=None) -> int:
    """The `attnlab` command, as a process's entry point (it leaves the heap frozen)."""
    args = _parser().parse_args(argv)
    try:
        handlers = {"grade": _grade, "serve": _serve, "feedback": _feedback, "report": _report,
                    "lms-grades": _lms_grades, "demo": _demo,
                    "gradescope": _gradescope, "gradescope-run": _gradescope_run, "sync": _sync}
        if getattr(args, "assignment", None) is not None:
            labs.load(args.assignment)      # a typo or a trailing slash: one line naming the labs, for every command
        return handlers[args.command](args)
    except (CourseError, sandbox.SandboxUnavailable, labs.UnknownAssignment) as exc:
        print(f"attnlab: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("attnlab: interrupted; what was recorded stands: run the command again for the rest", file=sys.stderr)
        return 130
    except OSError as exc:     # a folder it writes to is a file, read-only, full, ...
        where = f" {exc.filename}" if exc.filename else ""
        print(f"attnlab: cannot use{where}: {exc.strerror or exc}; what was recorded stands: fix this and run "
              "the command again", file=sys.stderr)
        return 2
    except Exception as exc:
        if not _database_error(exc):
            raise
        print(f"attnlab: {_database_problem(exc)}", file=sys.stderr)
        return 2
    finally:
        gc.freeze()    # the interpreter's last collection of nbgrader's heap took 0.3 s at exit


def _database_error(exc: Exception) -> bool:
    """An error of the gradebook's database (locked by another writer, unreadable)."""
    errors = sys.modules.get("sqlalchemy.exc")
    return errors is not None and isinstance(exc, errors.DatabaseError)


def _database_problem(exc: Exception) -> str:
    """What the instructor can do about a database error: wait for another writer, or repair
    the file."""
    reason = str(getattr(exc, "orig", exc)).splitlines()[0][:200]
    if any(word in reason.lower() for word in ("locked", "busy")):
        return (f"the gradebook cannot be used ({reason}): another program (formgrader, an nbgrader "
                "command, another attnlab) may be writing to it; run the command again when it is done")
    return f"the gradebook cannot be used ({reason}): the database file is damaged or cannot be opened"


def _grade(args) -> int:
    from . import grading
    slots = None if args.zip_collect else _early_slots(args)
    try:
        from . import engine
        course = open_course(args.course)
        mode = _sandbox_mode(args.sandbox)
        limits = course_limits(course.config, args)
        with course_lock.hold(course.root, args.assignment, "attnlab grade"):   # the service collects too
            if args.zip_collect:
                _nbgrader(course.root, "zip_collect", args.assignment, "--force")   # again: replaces
            batch = engine.grade(course, args.assignment, args.student, args.jobs, args.force, limits, mode,
                                 progress=not args.quiet, slots=slots)
    except BaseException:
        if slots:
            grading.stop_slots(slots)
        raise
    skipped = sum(r.status not in ("missing", *UNRECORDED) and r.student not in batch.graded
                  and (not args.student or r.student in args.student) for r in batch.results)
    _say(f"graded {len(batch.graded)} submission(s) in {batch.seconds:.1f} s with {batch.jobs} worker(s)"
         + (f"; {skipped} already graded (--force regrades them)" if skipped else ""))
    if batch.added:
        added = ", ".join(batch.added[:10]) + (f" and {len(batch.added) - 10} more" if len(batch.added) > 10 else "")
        _say(f"added to the gradebook (a submission, and no entry there, as nbgrader's autograde adds them): {added}")
    stale = [s for s in batch.graded if any(course.path("feedback", s, args.assignment).glob("*.html"))]
    if stale:
        _say(f"the feedback pages of {len(stale)} student(s) predate this grading ({', '.join(stale[:10])}"
             f"{', ...' if len(stale) > 10 else ''}): run `attnlab feedback {args.assignment}` before "
             "`nbgrader release_feedback`")
    for folder, why in course.refused_students(args.assignment).items():
        _say(f"NOT GRADED {course.path('submitted', folder, args.assignment)}: {why}")
    for result in batch.results:
        if result.student in batch.failed:
            _say(f"NOT GRADED {result.student}: {result.notes[0]}")
    if not args.quiet:
        print(table(batch.results))
        print(f"\ngrades table:  {course.grades_table(args.assignment)}")
        print(f"per student:   {course.path('autograded', '<student>', args.assignment) / 'results.json'}")
    return 0


def _serve(args) -> int:
    from .config import AttnLabService
    from .service import Service, logger
    course = open_course(args.course)
    try:
        settings = AttnLabService(config=course.config)
    except TraitError as exc:
        raise CourseError(f"nbgrader_config.py: {exc}") from None
    mode = _sandbox_mode(args.sandbox)
    return Service(course, settings, mode, course_limits(course.config, args), args.once, logger()).run()


def _early_slots(args):
    """Grading slots for the folders that nbgrader's defaults give, started before nbgrader
    loads and the course opens (a second), grading at once the submissions that changed since
    they were graded (all with --force). The engine uses the slots only if the course confirms
    the release folder and the settings, and of their gradings only those it asks for itself
    (same student, notebook and salt). None if unsure."""
    from . import grading, secret
    root = Path(args.course).resolve()
    try:
        config = load_config(root)
        release = root / config.CourseDirectory.get("release_directory", "release") / args.assignment
        found = sorted(release.glob("*.ipynb"))
        mode = sandbox.probe_mode(args.sandbox)
        limits = course_limits(config, args)
        submitted = {folder.parent.name: folder for folder in sorted(root.glob(f"submitted/*/{args.assignment}"))}
        graded = {student: root / "autograded" / student / args.assignment / "results.json" for student in submitted}
        waiting = [folder for student, folder in submitted.items() if student in (args.student or [student]) and
                   (args.force or results.digests(graded[student])[0] != folder_digest(folder))]   # as engine.grade
        if len(found) != 1 or not waiting:
            return None
        course_secret = secret.course_secret(root)
        paths = {folder.parent.name: submitted_notebook(folder, found[0].name) for folder in waiting}
        tasks = [grading.Task(s, str(path), secret.submission_salt(course_secret, args.assignment, s, path))
                 for s, path in paths.items()]
        if set(args.student or ()) - set(submitted):
            tasks = []      # a --student without a submission may be a typo: refused before grading
    except (CourseError, sandbox.SandboxUnavailable, OSError, ValueError):
        return None
    jobs = min(args.jobs or os.cpu_count() or 1, len(waiting))
    return grading.start_slots(jobs, (args.assignment, release, found[0].name, mode, limits), tasks)


def _say(line: str) -> None:
    """One line to the instructor's terminal: what a student wrote in it (a name, a message) is
    shown as text, never as a terminal's control sequence (`text.shown`)."""
    print(shown(line, 4 * NOTE_LIMIT, one_line=True), file=sys.stderr)


def course_limits(config, args) -> sandbox.Limits:
    """The limits: the command line's, else nbgrader_config.py's (AttnLab traitlets), else defaults."""
    try:
        configured = AttnLab(config=config).limits()
    except TraitError as exc:
        raise CourseError(f"nbgrader_config.py: {exc}") from None
    given = {"call_seconds": args.call_timeout, "cell_seconds": args.cell_timeout,
             "submission_seconds": args.submission_timeout,
             "memory_bytes": args.memory and args.memory * 2**20}
    return dataclasses.replace(configured, **{k: v for k, v in given.items() if v is not None})


def _sandbox_mode(requested: str) -> str:
    mode = sandbox.probe_mode(requested)
    if mode != "bwrap":
        print(f"WARNING: sandbox mode '{mode}': student code is NOT isolated in namespaces"
              + (" and runs as you, with your files and network" if mode == "none" else
                 "; it runs as user nobody and can read whatever nobody can read"), file=sys.stderr)
    return mode


def _feedback(args) -> int:
    from . import engine, feedback
    course = open_course(args.course)
    engine.reprice(course, args.assignment)
    written, unwritten, renamed = feedback.write_all(course, args.assignment, args.student)
    for path in written:
        print(path)
    for student, note in renamed.items():
        _say(f"renamed notebook, {student}: {note}")
    for student, why in unwritten.items():
        _say(f"NO FEEDBACK for {student}: {why}")
    return 0


def _report(args) -> int:
    from . import engine, report
    course = open_course(args.course)
    engine.reprice(course, args.assignment)
    print(report.write(course, args.assignment, args.output and Path(args.output).resolve()))
    return 0


def _lms_grades(args) -> int:
    from . import engine
    course = open_course(args.course)
    settings = AttnLab(config=course.config)
    everyone = engine.reprice(course, args.assignment)
    with course.gradebook() as gb:
        names = {s.id: (s.last_name, s.first_name) for s in gb.students}
    out = Path(args.output).resolve() if args.output else course.root / "grades" / f"{args.assignment}-lms.csv"
    unmapped = results.write_lms_csv(out, everyone, names, settings.lms_ids,
                                     settings.lms_columns.get(args.assignment, args.assignment))
    if unmapped:     # an exchange login is not Canvas's ID: the import would not match the row
        print(shown("note: not in c.AttnLab.lms_ids, written under their gradebook id (Canvas matches a row "
                    f"only by its own ID): {', '.join(unmapped)}", 4 * NOTE_LIMIT, one_line=True), file=sys.stderr)
    print(out)
    return 0


def _demo(args) -> int:
    import tempfile
    from . import demo
    repo = _checkout(Path.cwd())
    dest = Path(args.dir or tempfile.mkdtemp(prefix="attnlab-demo-")).resolve()
    print(f"building an example course in {dest} ...")
    course, batch, pages, page = demo.run(repo, dest, _sandbox_mode(args.sandbox), args.jobs, assignment=args.lab)
    print(table(batch.results))
    print(f"\ngraded {len(batch.graded)} submission(s) in {batch.seconds:.1f} s with {batch.jobs} worker(s)")
    print(f"grades table:    {course.grades_table(args.lab)}")
    print(f"feedback pages:  {course.path('feedback', '<student>', args.lab) / (args.lab + '.html')}"
          f"  ({len(pages)} written)")
    print(f"class report:    {page}")
    return 0


def _gradescope(args) -> int:
    from . import gradescope
    course = open_course(args.course)
    out, notes = gradescope.build(course, args.assignment, Path(args.output or f"{args.assignment}-gradescope.zip"),
                                  course_limits(course.config, args))
    print(f"wrote {out.resolve()}: upload it as the assignment's autograder (Ubuntu base image)")
    for note in notes:
        print(f"note: {note}")
    return 0


def _gradescope_run(args) -> int:
    from . import gradescope
    root = Path(args.root)
    if not (root / "source" / "config.json").is_file():
        raise CourseError(f"{root} is not a Gradescope autograder folder (no source/config.json)")
    if args.warm:
        print(f"workers started in sandbox mode(s): {', '.join(gradescope.warm(root)) or 'none'}")
        return 0
    result = gradescope.run(root)
    print(f"{result.status}: {points(result.score)} / {points(result.max_score)}")
    return 0


def table(everyone) -> str:
    """A plain-text grade table: one row per student."""
    rows = [("student", "status", "score", "needs attention")]
    rows += [(shown(r.student, one_line=True), r.status, f"{points(r.score)}/{points(r.max_score)}",
              shown("; ".join(r.problems() + ([results.late_text(r)] if results.late_text(r) else [])), 4 * NOTE_LIMIT,
                    one_line=True))
             for r in everyone]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row[:3], widths)) + "  " + row[3] for row in rows]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(line.rstrip() for line in lines)


def _nbgrader(root: Path, *args) -> None:
    import subprocess
    done = subprocess.run([str(Path(sys.executable).parent / "nbgrader"), *args], cwd=root,
                          capture_output=True, text=True)
    lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
    for line in lines:          # what nbgrader skipped, and why (an entry, an id, a late mark)
        if "| WARNING]" in line:
            _say(f"nbgrader: {line.split('| WARNING]', 1)[1].strip()}")
    if done.returncode:
        errors = [line for line in lines if "ERROR" in line or "Error" in line]
        raise CourseError(f"`nbgrader {' '.join(args)}` failed: {(errors or lines or ['(it printed nothing)'])[-1]}")


def _checkout(folder: Path) -> Path:
    """A checkout of AttnLab (its course directory with source/), or one clear line."""
    folder = folder.resolve()
    if not (folder / "nbgrader_config.py").is_file() or not (folder / "source").is_dir():
        raise CourseError(f"{folder} is not an AttnLab checkout (no nbgrader_config.py and source/); "
                          "run this from the repository root or pass --course")
    return folder


def _sync(args) -> int:
    from .sync import sync
    stale = sync(_checkout(Path(args.course)), check_only=args.check)
    for path in stale:
        print(f"{'stale' if args.check else 'wrote'}: {path}")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
