"""AttnLab: hidden tests, diagnostics and a sandboxed grading engine for nbgrader courses."""
import sys

__version__ = "0.1.0"

# nbformat validates with jsonschema, which imports `rfc3987_syntax` when it is installed (an
# optional extra that Jupyter pulls in) and spends a second building its parser, in every
# process. nbformat's schema has no "iri" format, the one check it serves: keep it unimported.
sys.modules.setdefault("rfc3987_syntax", None)
