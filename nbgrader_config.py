"""nbgrader configuration of the AttnLab course (run nbgrader from this directory)."""
c = get_config()  # noqa: F821  (provided by nbgrader)

c.CourseDirectory.course_id = "attnlab"
c.CourseDirectory.release_directory = "assignments"
c.CourseDirectory.solution_directory = "solutions"

# Deleted test cells come back and score 0, as in `attnlab grade`, instead of vanishing.
c.OverwriteCells.add_missing_cells = True

# The answer key is committed and CI regenerates it byte for byte, so it carries no outputs
# (executing it would embed plots whose bytes depend on the machine's fonts and versions).
c.GenerateSolution.preprocessors = [
    "nbgrader.preprocessors.IncludeHeaderFooter",
    "nbgrader.preprocessors.LockCells",
    "nbgrader.preprocessors.ClearOutput",
    "nbgrader.preprocessors.ClearMarkScheme",
]

# `attnlab grade --zip-collect` runs `nbgrader zip_collect` on an LMS download placed in
# downloaded/<assignment>/archive/. Only the LMS's own top-level file names give student ids
# (archives that students uploaded are never opened); ids are checked and mapped through
# c.AttnLab.lms_ids (an id in neither lms_ids nor the gradebook is named with the closest known
# ids; c.AttnLab.lms_unknown_ids = "skip" skips it). This pattern reads Canvas's file names,
# <name>_[LATE_]<student id>_<submission id>_<original name>.ipynb; adapt it to your LMS. Canvas's
# names carry no time: a file marked LATE shows "late, time unknown" until its time is put in its
# timestamp.txt. A pattern with a (?P<timestamp>...) group (Blackboard's names carry the time)
# gives nbgrader the submission time, and lateness is judged as for the exchange.
c.ExchangeFactory.collect = "autograder.nbgrader_plugins.SafeCollect"   # links kept as links, odd ids skipped
c.ZipCollectApp.extractor_plugin = "autograder.nbgrader_plugins.LmsExtractor"
c.ZipCollectApp.collector_plugin = "autograder.nbgrader_plugins.LmsCollector"
c.FileNameCollectorPlugin.named_regexp = (
    r".*/[^/_]+_(?P<late>LATE_)?(?P<student_id>[^_/]+)_\d+_(?P<file_id>[^/]+?)(?:-\d+)?\.ipynb$"
)

# Feedback never shows hidden tests (not in the cells, not in the tracebacks) and never carries
# a student's HTML or scripts.
c.SanitizeHTML.enabled = True   # nbconvert preprocessors are off unless enabled
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
    "autograder.nbgrader_plugins.ScrubHiddenTests",
    "nbconvert.preprocessors.sanitize.SanitizeHTML",
]

# Grading runs in attnlab's sandbox (`attnlab grade`), which records into this gradebook.
# `nbgrader autograde` and formgrader's Autograde button would run the hidden tests in the
# student's kernel, as you: they are refused with a message, before anything is touched.
c.Autograde.exporter_class = "autograder.nbgrader_plugins.RefuseUnsandboxedAutograde"

# Release regenerates the committed assignments/ byte for byte, and registers the assignment in
# the gradebook (without --force, nbgrader would skip the existing release and register nothing).
c.GenerateAssignment.force = True

# Late submissions: nbgrader's own plugin ("none" or "zero"), applied by `attnlab grade` to the
# due date in the gradebook (`nbgrader db assignment add ASSIGNMENT --duedate=...`).
c.LateSubmissionPlugin.penalty_method = "none"

# AttnLab's settings (see autograder/config.py); `attnlab grade` options override the limits.
c.AttnLab.call_timeout = 2.0                     # seconds per call of a student function
c.AttnLab.cell_timeout = 5.0                     # seconds per notebook cell
c.AttnLab.submission_timeout = 20.0              # seconds per submission in all
c.AttnLab.memory = 2048                          # MiB for the student's process
c.AttnLab.gradescope_details = "after_due_date"  # when Gradescope shows hidden checks' details
c.AttnLab.lms_ids = {}                           # LMS user id -> student id, for --zip-collect
c.AttnLab.lms_unknown_ids = "warn"               # an id in neither lms_ids nor the gradebook: "warn" or "skip"
c.AttnLab.gradescope_visibility = "visible"      # when Gradescope shows the whole result
