"""The student helper's data files: every value of a visible case comes back from the .json and
.npz as it went in (empty arrays included), the .npz is the same bytes on every sync, and the
helper's code holds no data."""
import importlib.util
import io
import json
import shutil
import zipfile

import numpy as np
import pytest

from autograder import labs, visible_data
from autograder.sync import Data
from autograder.worker.invoke import Call, New, Rng
from conftest import ROOT

VALUE = (
    Call("forward", (np.zeros((0, 3)), np.arange(4, dtype=np.int32), Rng(5)), {"causal": True, "eps": 1e-5},
         New("Model", (2, np.ones((2, 0, 1))), (("W", np.eye(2, dtype=np.float32)),))),
    [np.float64(float("nan")), np.int64(7), float("inf"), 3, 3.0, False, None, "text é"],
    {"a": np.empty((0,), dtype=np.int64), "b": (1, 2)},
    ("raises", "ValueError", "operands could not be broadcast"),
    np.array(2.5),
)


def same(a, b) -> bool:
    """Equal values of the same types, arrays with the same dtype and shape."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (np.ndarray, np.generic)):
        return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=True)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, Call):
        return same((a.fn, a.args, a.kwargs, a.obj), (b.fn, b.args, b.kwargs, b.obj))
    if isinstance(a, New):
        return same((a.cls, a.args, a.attrs), (b.cls, b.args, b.attrs))
    return a == b or a != a and b != b


def round_trip(value):
    data = Data()
    encoded = json.loads(json.dumps(data.encode(value)))
    with np.load(io.BytesIO(data.npz()), allow_pickle=False) as npz:
        arrays = {key: npz[key] for key in npz.files}
    return visible_data.decode(encoded, arrays)


def test_every_kind_of_value_comes_back_as_it_went_in_empty_arrays_included():
    back = round_trip(VALUE)
    assert same(back, VALUE)
    assert back[0].args[0].shape == (0, 3) and back[0].obj.args[1].shape == (2, 0, 1)


def test_the_comparison_itself_tells_an_empty_array_from_a_lost_one():
    assert not same(np.array([]), np.zeros((0, 3))) and not same((1,), [1]) and not same(1, 1.0)


def test_the_npz_is_the_same_bytes_every_time_and_carries_no_clock():
    first, second = Data(), Data()
    first.encode(VALUE)
    second.encode(VALUE)
    assert first.npz() == second.npz()
    infos = zipfile.ZipFile(io.BytesIO(first.npz())).infolist()
    assert {info.date_time for info in infos} == {(1980, 1, 1, 0, 0, 0)}


def test_equal_arrays_are_stored_once():
    data = Data()
    data.encode((np.arange(3.0), np.arange(3.0), np.arange(3)))
    assert len(data.arrays) == 2


def test_a_value_the_data_cannot_hold_is_refused_at_sync():
    with pytest.raises(TypeError, match="cannot hold"):
        Data().encode({1, 2})


@pytest.mark.parametrize("assignment", labs.assignments())
def test_the_helper_is_code_and_reads_its_data_beside_it(tmp_path, assignment):
    """One code for every lab (the rules in it are the hidden suite's own: autograder/verdict.py);
    what differs is the data beside it."""
    helper = ROOT / "source" / assignment / labs.load(assignment).HELPER
    lines = helper.read_text().splitlines()
    assert len(lines) < 740 and max(map(len, lines)) <= 130 and "np.array(" not in helper.read_text()
    assert {(ROOT / "source" / a / labs.load(a).HELPER).read_text() for a in labs.assignments()} == {helper.read_text()}
    for suffix in (".py", ".json", ".npz"):
        shutil.copy(helper.with_suffix(suffix), tmp_path / helper.with_suffix(suffix).name)
    spec = importlib.util.spec_from_file_location("moved_helper", tmp_path / helper.name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert set(module.CASES) == set(labs.load(assignment).CASES)
