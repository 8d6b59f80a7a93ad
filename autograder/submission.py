"""Reading a submitted notebook: detect and undo changes to locked cells, choose what runs.

The release notebook is the reference for structure. As nbgrader does, locked cells (tests,
setup) are restored from it, deleted ones are put back, changed points and flags are reset.
Unlike nbgrader, every such change is reported, so that it can be shown to the instructor
and to the student instead of being silently repaired.
"""
import copy
import json
import re
from dataclasses import dataclass, field

import nbformat

from . import notebooks, student_files

_FLAGS = ("grade", "solution", "locked", "points", "grade_id")


class Unreadable(Exception):
    """The file is not a notebook that can be graded."""


@dataclass
class Inspection:
    notebook: nbformat.NotebookNode       # restored: what is graded and written out
    cells: list                           # sources the worker runs, in order
    tampering: list = field(default_factory=list)
    notes: list = field(default_factory=list)


EXTRA_CELLS = 1000      # cells a student may add to the release's: scratch work, not a million


def load(path, max_cells: int = EXTRA_CELLS) -> tuple:
    """(notebook, notes): duplicated cell ids are renamed here, deterministically, and reported.
    Unreadable past `max_cells` cells (1.2 million empty ones took the grader 3 to 5 minutes and
    ran it out of memory)."""
    try:
        data = json.loads(student_files.read(path).decode("utf-8"))
    except student_files.StudentFileError as exc:
        raise Unreadable(str(exc)) from None
    except (OSError, UnicodeDecodeError, ValueError, RecursionError, MemoryError) as exc:
        raise Unreadable(f"not a readable notebook: {type(exc).__name__}: {str(exc)[:200]}") from None
    found = len(data["cells"]) if isinstance(data, dict) and isinstance(data.get("cells"), list) else 0
    if found > max_cells:
        raise Unreadable(f"the notebook has {found:,} cells, more than the {max_cells:,} graded at most: "
                         "remove the cells you added")
    if isinstance(data, dict) and data.get("nbformat") == 3:   # upgraded, as Jupyter and nbgrader do
        try:
            data = json.loads(json.dumps(nbformat.convert(nbformat.from_dict(data), 4)))
        except Exception as exc:
            raise Unreadable(f"not a valid notebook (version 3): {type(exc).__name__}") from None
        for cell in data.get("cells", ()):
            cell.pop("id", None)       # nbformat drew random ones: _unique_ids gives fixed ones
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list) or not all(isinstance(c, dict) for c in cells):
        raise Unreadable("not a valid notebook: it has no list of cells")
    notes = _dict_metadata(data) + _unique_ids(cells)
    try:
        text = json.dumps(data, ensure_ascii=False)
        text.encode("utf-8")      # a lone surrogate (valid JSON, "\ud800") could not be written back
        nb = nbformat.reads(text, as_version=4)
    except Exception as exc:  # nbformat raises a zoo of errors on malformed structure
        raise Unreadable(f"not a valid notebook: {type(exc).__name__}: {str(exc)[:200]}") from None
    if not all(_well_formed(c) for c in nb.cells):
        raise Unreadable("not a valid notebook: its cells are malformed")
    return nb, notes


def _dict_metadata(data: dict) -> list:
    """Metadata that is not a dictionary, where Jupyter and nbgrader expect one, is dropped and
    reported (the checks that follow then treat the cell as the student's own)."""
    notes = []
    if not isinstance(data.get("metadata", {}), dict):
        data["metadata"] = {}
        notes.append("the notebook's metadata was not a dictionary; it was dropped")
    for index, cell in enumerate(data["cells"]):
        cell.setdefault("metadata", {})          # required by nbformat's schema, and harmless to add
        if not isinstance(cell["metadata"], dict):
            cell["metadata"] = {}
            notes.append(f"the metadata of cell {index + 1} was not a dictionary; it was dropped")
        elif not isinstance(cell["metadata"].get("nbgrader", {}), dict):
            del cell["metadata"]["nbgrader"]
            notes.append(f"the nbgrader metadata of cell {index + 1} was not a dictionary; it was dropped")
    return notes


def _well_formed(cell) -> bool:
    return (isinstance(cell, dict) and cell.get("cell_type") in ("code", "markdown", "raw")
            and isinstance(cell.get("source"), str))     # metadata: made a dictionary by _dict_metadata


def inspect(nb, release) -> Inspection:
    """Compare a submission with the release, undo what students may not change, report it."""
    expected = {notebooks.grade_id(c): c for c in release.cells if notebooks.grade_id(c)}
    order = [notebooks.grade_id(c) for c in release.cells if notebooks.grade_id(c)]
    report = Inspection(nbformat.v4.new_notebook(metadata=copy.deepcopy(release.metadata)), [])
    last_copy = _last_occurrences(nb, expected, report)
    kept, placed = [], set()
    for index, cell in enumerate(nb.cells):
        gid = _grade_id(cell)
        if gid is None:
            kept.append(_plain(cell))
        elif gid not in expected:
            report.tampering.append(f"a cell claims the unknown nbgrader id '{gid}'; its nbgrader "
                                    "metadata was removed")
            kept.append(_plain(cell, strip=True))
        elif last_copy[gid] != index:
            kept.append(None if notebooks.is_locked(expected[gid]) else _plain(cell, strip=True))
        else:
            kept.append(_restore(cell, expected[gid], report))
            placed.add(gid)
    kept = [c for c in kept if c is not None]
    for gid in order:
        if gid not in placed:
            _put_back(kept, gid, expected, order, report)
    kept = _in_release_order(kept, order, expected, report)
    _unique_ids(kept)
    given = {c.source for c in release.cells}
    for cell in kept:     # what a student wrote, shown to a logged-in grader by formgrader
        if cell.cell_type in ("markdown", "raw") and cell.source not in given and _ACTIVE.search(cell.source):
            cell.source = (_as_text if cell.cell_type == "markdown" else _escaped)(cell.source)
    report.notebook.cells = kept
    report.cells = [c.source for c in kept if c.cell_type == "code" and not notebooks.is_test(c)]
    return report


# how an HTML tag, comment or declaration begins, and how a markdown link or image does
_ACTIVE = re.compile(r"<[A-Za-z!/?]|\]\s*[(\[:]")


def _as_text(source: str) -> str:
    """A markdown cell a student wrote with HTML or links in it, as a code block: formgrader
    shows the graded notebook to the grader, logged in, unsanitised, and its markdown renderer
    keeps javascript: links; the grader reads the cell as the student typed it."""
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", source)), default=0))
    return f"*The grader shows this cell as text: it has HTML or links.*\n\n{fence}text\n{source}\n{fence}"


def _escaped(text: str) -> str:
    """A raw cell a student wrote, with its HTML escaped as nbconvert's SanitizeHTML does (bleach,
    with its defaults)."""
    import bleach
    return bleach.clean(text, tags=bleach.ALLOWED_TAGS, attributes=bleach.ALLOWED_ATTRIBUTES,
                        strip=False, strip_comments=True)


def _grade_id(cell):
    meta = cell.get("metadata", {}).get("nbgrader")
    gid = meta.get("grade_id") if isinstance(meta, dict) else None
    return gid if gid is None or isinstance(gid, str) else repr(gid)   # not a string: an unknown id


def _last_occurrences(nb, expected, report) -> dict:
    """nbgrader keeps the last copy of a duplicated grade_id; so do we, and we say so."""
    seen: dict = {}
    for index, cell in enumerate(nb.cells):
        gid = _grade_id(cell)
        if gid in expected:
            seen.setdefault(gid, []).append(index)
    for gid, where in seen.items():
        if len(where) > 1:
            locked = notebooks.is_locked(expected[gid])
            (report.tampering if locked else report.notes).append(
                f"cell '{gid}' appears {len(where)} times; " +
                ("the extra copies were removed" if locked else "the last copy is graded as the answer"))
    return {gid: where[-1] for gid, where in seen.items()}


def _plain(cell, strip: bool = False):
    cell = copy.deepcopy(cell)
    if strip:
        cell.metadata.pop("nbgrader", None)
    if cell.cell_type == "code":
        cell.outputs, cell.execution_count = [], None
    return nbformat.from_dict(cell)


def _restore(cell, original, report):
    """A locked cell becomes the release's copy; an answer cell keeps its code, not its flags."""
    gid = notebooks.grade_id(original)
    if notebooks.is_locked(original):
        changes = _differences(cell, original)
        if changes:
            report.tampering.append(f"locked cell '{gid}' was changed ({', '.join(changes)}); "
                                    "it was restored")
        return _plain(original)
    restored = _plain(cell)
    if cell.cell_type != original.cell_type:
        report.tampering.append(f"answer cell '{gid}' was turned into a {cell.cell_type} cell; restored")
        restored = nbformat.v4.new_code_cell(cell.source, metadata=copy.deepcopy(original.metadata))
    elif _flags(cell) != _flags(original):
        report.tampering.append(f"the nbgrader metadata of answer cell '{gid}' was changed; restored")
    restored.metadata["nbgrader"] = copy.deepcopy(original.metadata["nbgrader"])
    return restored


def _differences(cell, original) -> list:
    changes = []
    if cell.cell_type != original.cell_type:
        changes.append(f"type {original.cell_type} -> {cell.cell_type}")
    if cell.source != original.source:
        changes.append("source edited")
    mine, theirs = _flags(cell), _flags(original)
    if mine.get("points") != theirs.get("points"):
        changes.append(f"points {theirs.get('points')} -> {mine.get('points')}")
    if {k: v for k, v in mine.items() if k != "points"} != {k: v for k, v in theirs.items() if k != "points"}:
        changes.append("nbgrader flags changed")
    return changes


def _flags(cell) -> dict:
    meta = cell.get("metadata", {}).get("nbgrader") or {}
    return {k: json.dumps(meta.get(k)) for k in _FLAGS}


def _put_back(cells, gid, expected, order, report) -> None:
    """Re-insert a deleted locked cell after the nearest earlier release cell still present."""
    original = expected[gid]
    if not notebooks.is_locked(original):
        report.notes.append(f"answer cell '{gid}' is missing (its part is graded from whatever "
                            "the other cells define)")
        return
    report.tampering.append(f"locked cell '{gid}' was deleted; it was put back")
    position = 0
    for earlier in reversed(order[:order.index(gid)]):
        found = [i for i, c in enumerate(cells) if notebooks.grade_id(c) == earlier]
        if found:
            position = found[-1] + 1
            break
    cells.insert(position, _plain(original))


def _in_release_order(cells, order, expected, report) -> list:
    """The cells with nbgrader ids back in the release's order, each followed by the cells the
    student put after it: they run in that order (a setup cell moved to the end left every cell
    before it without its imports). Nothing is gained by moving cells, so it is a note; it names
    the fewest cells that explain the new order, answers before locked cells when either would."""
    rank = {gid: i for i, gid in enumerate(order)}
    segments = [(-1, [])]
    for cell in cells:
        gid = notebooks.grade_id(cell)
        if gid in rank:
            segments.append((rank[gid], []))
        segments[-1][1].append(cell)
    ranks = [r for r, _ in segments[1:]]
    if ranks == sorted(ranks):
        return cells
    weights = [len(ranks) + 1 if notebooks.is_locked(expected[order[r]]) else 1 for r in ranks]
    kept = _heaviest_increasing(ranks, weights)
    moved = [order[r] for i, r in enumerate(ranks) if i not in kept]
    named = ", ".join(repr(g) for g in moved[:5]) + (f" and {len(moved) - 5} more" if len(moved) > 5 else "")
    report.notes.append(f"cells were moved out of the release's order ({named}); the notebook was run "
                        "in the release's order")
    return [cell for _, segment in sorted(segments, key=lambda s: s[0]) for cell in segment]


def _heaviest_increasing(values: list, weights: list) -> set:
    """The positions of a strictly increasing subsequence of `values` of the largest total weight."""
    best = []                                   # per position: (weight of the best run ending here, previous)
    for i, value in enumerate(values):
        before = max((j for j in range(i) if values[j] < value), key=lambda j: best[j][0], default=None)
        best.append((weights[i] + (best[before][0] if before is not None else 0), before))
    i = max(range(len(values)), key=lambda j: best[j][0])
    kept = set()
    while i is not None:
        kept.add(i)
        i = best[i][1]
    return kept


def _unique_ids(cells) -> list:
    """Give cells with a missing or repeated id a new one (nbformat would pick random ids)."""
    seen, notes = set(), []
    for index, cell in enumerate(cells):
        given = cell.get("id")
        if isinstance(given, str) and given and given not in seen:
            seen.add(given)
            continue
        if given in seen:
            notes.append(f"cell id '{given}' is used more than once; the copies were renamed")
        new = f"cell-{index}"
        while new in seen:
            new += "x"
        cell["id"] = new
        seen.add(new)
    return sorted(set(notes))
