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
