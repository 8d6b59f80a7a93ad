"""AttnLab: hidden tests, diagnostics and a sandboxed grading engine for nbgrader courses."""
__version__ = "0.1.0"
