"""Text a student controls, made safe wherever it is shown: a terminal, a CSV cell, a log line,
a page, the gradebook.

A student chooses file and folder names, cell sources, exception messages and the values their
code returns. Shown raw, escape sequences take over the instructor's terminal (ESC, BEL, OSC:
a row rewritten to read "graded 100/118", the clipboard set, what follows hidden), bidirectional
controls reorder what is read, a CSV cell that starts with = + - @ is a formula to a
spreadsheet, and a text of megabytes costs the grader memory and disk. So every such text
passes through `shown` (CSV cells through `csv_cell`) on its way out, and every text a result
holds passed through it when the result was made.
"""
import re

LIMIT = 400         # characters of one piece of student text (an exception message, a name)
NOTE_LIMIT = 1000   # characters of one message of the grader's that quotes such pieces

# C0 (but tab and newline) and C1 controls, DEL, bidirectional controls, lone surrogates
_UNSAFE = "\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_CONTROLS = re.compile(f"[{_UNSAFE}]")
_CONTROLS_AND_BREAKS = re.compile(f"[{_UNSAFE}\t\n]")


def shown(text, limit: int = LIMIT, one_line: bool = False) -> str:
    """`text` with every control character written as an escape (\\x1b, \\u202e; with
    `one_line`, tabs and newlines too), in at most `limit` characters (the last three "..."
    where it was cut)."""
    text = text if isinstance(text, str) else str(text)
    cut = len(text) > limit
    text = (_CONTROLS_AND_BREAKS if one_line else _CONTROLS).sub(_escape, text[:limit] if cut else text)
    return text[:limit - 3] + "..." if cut or len(text) > limit else text     # shown twice: the same


def _escape(match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def csv_cell(text, limit: int = NOTE_LIMIT) -> str:
    """`text` for a cell of a CSV file that people open in spreadsheets: one line, and a
    leading = + - @ (a formula) behind an apostrophe."""
    text = shown(text, limit, one_line=True)
    return "'" + text if text.startswith(("=", "+", "-", "@")) else text


def for_page(value):
    """Jinja's `finalize` for the pages (feedback, report): every value shown is safe; a whole
    written answer fits."""
    return shown(value, limit=20_000) if isinstance(value, str) else value
