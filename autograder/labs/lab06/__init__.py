"""Lab 06: training the transformer LM with NumPy backprop (J&M ch. 8)."""
from . import mistakes  # noqa: F401  (registers the catalogue on the suite)
from .suite import suite
from .visible import CASES, PROPERTIES

ASSIGNMENT = "lab06_training"
HELPER = "lab06_checks.py"
__all__ = ["ASSIGNMENT", "suite", "CASES", "PROPERTIES", "HELPER"]
