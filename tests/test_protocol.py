"""The wire format under hostile input: whatever the bytes, decoding raises only ProtocolError;
oracle requests are refused when any number in them could make the reference run away."""
import json
import random
import struct

import numpy as np
import pytest

from autograder.references import LARGEST_INT, check_sizes
from autograder.worker.invoke import Call, New, Rng
from autograder.worker.protocol import ProtocolError, decode, encode

VALID = [
    {"seq": 3, "value": np.arange(6.0).reshape(2, 3), "given": [np.ones(2)]},
    {"op": "invoke", "call": Call("forward", (np.zeros((2, 2)),), {"causal": True}, New("Block", (4,), (("w", np.eye(2)),)))},
    {"op": "oracle", "fn": "softmax", "args": (np.float32(2.5), [1, 2.0, None]), "kwargs": {"axis": -1}},
    {"seq": 1, "call": Call("get_batch", (Rng(7), np.array([1, 2, 3], dtype=np.int64), 4))},
]


def _frame(head) -> bytes:
    head = head if isinstance(head, bytes) else json.dumps(head).encode()
    return struct.pack("<Q", len(head)) + head


@pytest.mark.parametrize("head", [
    {"t": "rng", "seed": 1e400},                   # int(inf): OverflowError
    {"t": "rng", "seed": "x"},                     # int("x"): ValueError
    {"t": "call", "fn": "f", "args": [], "kwargs": [[1, 2, 3]], "obj": None},   # dict() of 3-tuples
    {"t": "call", "fn": "f", "args": 5, "kwargs": {}, "obj": None},
    {"t": "nd", "i": 0, "dtype": "<f8", "shape": [2 ** 62, 2 ** 62]},
    {"t": "nd", "i": -1, "dtype": "<f8", "shape": []},
    {"t": "dict", "items": [[[1], 2]]},
    {"t": "new", "cls": "A", "args": [], "attrs": [[1]]},
    {"t": "tuple", "v": None},
    json.loads("[" * 40 + "1" + "]" * 40),    # nested past MAX_DEPTH
    b"\xff\xfe not json",
    b"[" * 100000,
])
def test_crafted_messages_raise_protocol_error(head):
    with pytest.raises(ProtocolError):
        decode(_frame(head))


def test_random_corruptions_raise_only_protocol_error():
    rng = random.Random(2026)
    encoded = [encode(v) for v in VALID]
    for _ in range(3000):
        data = bytearray(rng.choice(encoded))
        for _ in range(rng.randint(1, 6)):
            kind = rng.randrange(3)
            if kind == 0 and data:
                data[rng.randrange(len(data))] = rng.randrange(256)
            elif kind == 1:
                del data[rng.randrange(len(data) + 1):][: rng.randint(1, 20)]
            else:
                at = rng.randrange(len(data) + 1)
                data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        try:
            decode(bytes(data), build=lambda cls, attrs: (cls, attrs))
        except ProtocolError:
            pass


@pytest.mark.parametrize("value", [
    10 ** 9, -10 ** 9, 1e12, np.int64(10 ** 9), np.float32(1e9), np.array(5000.0 * 1000),
    np.array(10 ** 9), np.array(1e9), np.array([3, 10 ** 9]), [1, [2, (np.array(10 ** 7),)]],
    {"n": np.array(5000)},
])
def test_oracle_requests_with_a_runaway_number_are_refused(value):
    with pytest.raises(ValueError):
        check_sizes({"args": (value,), "kwargs": {}}, LARGEST_INT)


@pytest.mark.parametrize("value", [64, -1, 1e-5, 0.5, 10000.0, float("inf"), np.array(16), np.arange(10),
                                   np.ones((30, 30)) * 1e6, True])
def test_ordinary_oracle_arguments_pass(value):
    check_sizes({"args": (value,), "kwargs": {}}, LARGEST_INT)


def test_strings_and_dict_keys_that_numpy_made_arrive_as_plain_values():
    """np.unique over characters gives np.str_, a str: a vocabulary built from it is graded, not
    refused as 'a value of type dict cannot be sent'."""
    vocab = {np.str_("a"): np.int64(1), np.int64(2): np.str_("b"), np.float64(0.5): None, np.bool_(True): 1}
    stoi, itos = decode(encode(({**vocab}, [np.str_("."), "a"])))
    assert stoi == {"a": np.int64(1), 2: "b", 0.5: None, True: 1}
    assert [type(k) for k in stoi] == [str, int, float, bool] and type(stoi[2]) is str
    assert itos == [".", "a"] and all(type(s) is str for s in itos)
    with pytest.raises(ProtocolError, match="a dict key of type tuple"):
        encode({(1, 2): 3})
