"""Lab 05: Transformers & Attention (J&M ch. 8)."""
from . import mistakes  # noqa: F401  (registers the catalogue on the suite)
from .suite import suite
from .visible import CASES

ASSIGNMENT = "lab05_transformers"
HELPER = "lab05_checks.py"
__all__ = ["ASSIGNMENT", "suite", "CASES", "HELPER"]
