"""Lab 07: rotary positions, KV-cache generation, dropout and attention support (J&M ch. 8)."""
from . import mistakes  # noqa: F401  (registers the catalogue on the suite)
from .suite import suite
from .visible import CASES, PROPERTIES

ASSIGNMENT = "lab07_rope_generation"
HELPER = "lab07_checks.py"
__all__ = ["ASSIGNMENT", "suite", "CASES", "PROPERTIES", "HELPER"]
