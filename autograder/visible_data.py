"""The visible cases of a student helper, read from the two data files beside it.

`attnlab sync` writes them: `labXX_checks.json` holds the structure and the text (each part's
mistakes with their fixes, then the cases: calls, descriptions, expected outputs, and each
differing mistake's outcome by its index in the part's mistakes) and names every array by its
key in `labXX_checks.npz`, which NumPy reads without pickle. Within a value, a list is a list
and every object has one key, the
kind of value it stands for: {"array": key}, {"scalar": key}, {"tuple": [...]},
{"dict": [[key, value], ...]}, {"rng": seed}, {"new": [cls, args, attrs]},
{"call": [fn, args, kwargs, obj]} or {"raised": "raised Type: message"} (a mistake's exception).

This module needs only NumPy and the standard library and is copied verbatim into the helper.
"""
import json
from pathlib import Path

import numpy as np

from .verdict import Raised
from .worker.invoke import Call, New, Rng


def load(helper) -> tuple:
    """(cases, properties) of the helper file `helper`, in the form `CASES` and `PROPERTIES` take."""
    path = Path(helper)
    with np.load(path.with_suffix(".npz"), allow_pickle=False) as npz:
        arrays = {key: npz[key] for key in npz.files}
    data = json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    value = lambda encoded: decode(encoded, arrays)  # noqa: E731
    cases = {name: [(c["description"], value(c["call"]), value(c["names"]), value(c["expected"]),
                     [(*data["mistakes"][name][index], value(outcome)) for index, outcome in c["mistakes"]])
                    for c in entries]
             for name, entries in data["cases"].items()}
    properties = {name: [(p["description"], value(p["calls"])) for p in entries]
                  for name, entries in data["properties"].items()}
    return cases, properties


def decode(value, arrays: dict):
    """The Python value that `value`, read from the JSON, stands for."""
    if isinstance(value, list):
        return [decode(v, arrays) for v in value]
    if not isinstance(value, dict):
        return value
    (kind, body), = value.items()
    if kind == "array":
        return arrays[body]
    if kind == "scalar":
        return arrays[body][()]
    if kind == "rng":
        return Rng(body)
    if kind == "raised":
        return Raised(body)
    items = decode(body, arrays)
    if kind == "tuple":
        return tuple(items)
    if kind == "dict":
        return {key: item for key, item in items}
    if kind == "new":
        return New(*items)
    if kind == "call":
        return Call(*items)
    raise ValueError(f"the helper's data holds an unknown kind of value: {kind!r}")
