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
# downloaded/<assignment>/archive/. This pattern reads Canvas's file names,
# <name>_<student id>_<submission id>_<original name>.ipynb; adapt it to your LMS.
c.FileNameCollectorPlugin.named_regexp = (
    r".*/[^/_]+_(?:LATE_)?(?P<student_id>[^_/]+)_\d+_(?P<file_id>[^/]+?)(?:-\d+)?\.ipynb$"
)

# Feedback never shows hidden tests: not in the cells, not in the tracebacks.
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
    "autograder.nbgrader_plugins.ScrubHiddenTests",
]
