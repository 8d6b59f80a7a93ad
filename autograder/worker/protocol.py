"""The wire format between the grader and the sandboxed worker.

A message is a JSON tree plus the raw bytes of the arrays it refers to, whose dtype (numbers
and booleans only) and shape are in the tree: nothing that crosses the wire can run code on the
reading side (no pickle). Only numeric and boolean arrays, plain scalars, strings, lists,
tuples, dicts with scalar keys, call specs and objects described by their attributes are
representable. Readers enforce limits on size and depth, because one side is always hostile
student code.

Messages travel over a SOCK_SEQPACKET socket in packets of at most `PACKET` bytes. Each packet
starts with the message number and a flag that says whether more packets follow, so a message
cut short by a killed process is recognised and dropped instead of corrupting the next one.
"""
import math
import os
import re
import socket
import struct
# The worker must keep working after student code replaces builtins or patches NumPy or json
# in its process, so everything this module calls is bound here, before student code runs.
from builtins import Exception, bool, dict, float, int, isinstance, len, list, str, tuple, type  # noqa: A004
from json import dumps, loads
from os import urandom as _urandom

import numpy as np
from numpy import asarray, frombuffer, generic, ndarray
from numpy import dtype as np_dtype

from .invoke import Call, New, Rng

PACKET = 32 * 1024
MAX_MESSAGE = 16 * 1024 * 1024
MAX_DEPTH = 32
_HEAD = struct.Struct("<IB")      # message number, more-packets flag
_SIZE = struct.Struct("<Q")
_NUMERIC = set("biufc")
_DTYPE = re.compile(r"^[<>|=][biufc][0-9]{1,2}$")
_DTYPES: dict = {}                # dtype strings seen, validated


class ProtocolError(Exception):
    """A message that cannot be encoded or that breaks the format or its limits."""


class Described:
    """An object sent by its class name and attributes (an oracle proxy or a reference object)."""

    def __init__(self, cls: str, attrs: dict):
        self.cls, self.attrs = cls, attrs


def encode(value, describe=None) -> bytes:
    """Serialise `value`. `describe(obj)` may turn other objects into a `Described`."""
    blobs: list[bytes] = []
    tree = _to_tree(value, blobs, describe, 0)
    head = dumps(tree).encode()
    parts = [_SIZE.pack(len(head)), head]
    for blob in blobs:
        parts += [_SIZE.pack(len(blob)), blob]
    data = b"".join(parts)
    if len(data) > MAX_MESSAGE:
        raise ProtocolError(f"message of {len(data)} bytes is over the {MAX_MESSAGE}-byte limit")
    return data


def decode(data: bytes, build=None):
    """Inverse of `encode`. `build(cls, attrs)` turns a described object into a live one.

    Whatever the bytes, the only exception is `ProtocolError` (the other side may be hostile)."""
    try:
        return _decode(data, build)
    except ProtocolError:
        raise
    except Exception as exc:
        raise ProtocolError(f"bad message: {type(exc).__name__}") from None


def _decode(data: bytes, build):
    view = memoryview(data)
    head, offset = _take(view, 0)
    blobs = []
    while offset < len(view):
        blob, offset = _take(view, offset)
        blobs.append(blob)
    try:
        tree = loads(bytes(head))
    except (ValueError, RecursionError) as exc:
        raise ProtocolError(f"bad message header: {exc}") from None
    return _from_tree(tree, blobs, build, 0)


def _take(view, offset):
    if offset + _SIZE.size > len(view):
        raise ProtocolError("truncated message")
    (size,) = _SIZE.unpack_from(view, offset)
    start = offset + _SIZE.size
    if start + size > len(view):
        raise ProtocolError("truncated message")
    return view[start:start + size], start + size


def _to_tree(value, blobs, describe, depth):
    if depth > MAX_DEPTH:
        raise ProtocolError("value nested too deeply")
    kind = type(value)
    if value is None or kind is bool or kind is int or kind is float or kind is str:
        return value
    if isinstance(value, str):          # np.str_ and other subclasses: a string
        return str(value)
    if kind is ndarray or isinstance(value, (ndarray, generic)):
        array = asarray(value)
        if array.dtype.kind not in _NUMERIC or array.dtype.fields is not None:
            raise ProtocolError(f"array of dtype {array.dtype} cannot be sent")
        blobs.append(array.tobytes())
        return {"t": "nd", "i": len(blobs) - 1, "dtype": array.dtype.str, "shape": list(array.shape),
                "scalar": isinstance(value, generic)}
    for plain in (bool, int, float, str):
        if isinstance(value, plain):
            return plain(value)
    depth += 1
    if isinstance(value, tuple):
        return {"t": "tuple", "v": [_to_tree(v, blobs, describe, depth) for v in value]}
    if isinstance(value, list):
        return [_to_tree(v, blobs, describe, depth) for v in value]
    if isinstance(value, dict):
        return {"t": "dict", "items": [[_key(k), _to_tree(v, blobs, describe, depth)] for k, v in value.items()]}
    if isinstance(value, Rng):
        return {"t": "rng", "seed": int(value.seed)}
    if isinstance(value, New):
        return {"t": "new", "cls": value.cls, "args": _to_tree(value.args, blobs, describe, depth),
                "attrs": [[k, _to_tree(v, blobs, describe, depth)] for k, v in value.attrs]}
    if isinstance(value, Call):
        return {"t": "call", "fn": value.fn, "args": _to_tree(value.args, blobs, describe, depth),
                "kwargs": _to_tree(value.kwargs, blobs, describe, depth),
                "obj": _to_tree(value.obj, blobs, describe, depth)}
    described = describe(value) if describe is not None else None
    if isinstance(described, Described):
        return {"t": "obj", "cls": described.cls, "attrs": _to_tree(described.attrs, blobs, describe, depth)}
    raise ProtocolError(f"a value of type {type(value).__name__} cannot be sent")


def _key(key):
    """A dict key as the plain scalar it equals and hashes as (np.str_, np.int64 keys)."""
    if key is None or type(key) in (str, int, float, bool):
        return key
    if isinstance(key, generic) and key.dtype.kind in "biufU":
        return key.item()
    for plain in (bool, int, float, str):
        if isinstance(key, plain):
            return plain(key)
    raise ProtocolError(f"a dict key of type {type(key).__name__} cannot be sent")


def _text(text: str) -> str:
    """`text` as it can be written out: a lone surrogate (valid JSON, "\\ud800", but no UTF-8)
    in a message the student's code wrote becomes U+FFFD, so no results file fails to encode."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)


def _from_tree(tree, blobs, build, depth):
    if depth > MAX_DEPTH:
        raise ProtocolError("value nested too deeply")
    if isinstance(tree, str):
        return _text(tree)
    if tree is None or isinstance(tree, (bool, int, float)):
        return tree
    depth += 1
    if isinstance(tree, list):
        return [_from_tree(v, blobs, build, depth) for v in tree]
    if not isinstance(tree, dict):
        raise ProtocolError("bad message")
    kind = tree.get("t")
    try:
        if kind == "nd":
            array = _read_array(blobs[tree["i"]], tree["dtype"], tree["shape"])
            return array[()] if tree.get("scalar") else array
        if kind == "tuple":
            return tuple([_from_tree(v, blobs, build, depth) for v in tree["v"]])
        if kind == "dict":
            items = [(_text(k) if isinstance(k, str) else k, _from_tree(v, blobs, build, depth))
                     for k, v in tree["items"]]
            if not all(k is None or isinstance(k, (str, int, float, bool)) for k, _ in items):
                raise ProtocolError("bad dict key")
            return dict(items)
        if kind == "rng":
            return Rng(int(tree["seed"]))
        if kind == "new":
            return New(str(tree["cls"]), tuple(_from_tree(tree["args"], blobs, build, depth)),
                       tuple((str(k), _from_tree(v, blobs, build, depth)) for k, v in tree["attrs"]))
        if kind == "call":
            obj = _from_tree(tree["obj"], blobs, build, depth)
            return Call(str(tree["fn"]), tuple(_from_tree(tree["args"], blobs, build, depth)),
                        dict(_from_tree(tree["kwargs"], blobs, build, depth)), obj)
        if kind == "obj" and build is not None:
            return build(str(tree["cls"]), _from_tree(tree["attrs"], blobs, build, depth))
    except (KeyError, IndexError, TypeError, AttributeError, ValueError, OverflowError) as exc:
        raise ProtocolError(f"bad message: {type(exc).__name__}") from None
    raise ProtocolError(f"bad message: unknown node {kind!r}")


def _read_array(blob, dtype, shape) -> np.ndarray:
    kind = _DTYPES.get(dtype) if type(dtype) is str else None
    if kind is None:
        if not isinstance(dtype, str) or not _DTYPE.match(dtype):
            raise ProtocolError(f"array of dtype {dtype!r} refused")
        kind = _DTYPES[dtype] = np_dtype(dtype)     # a few dozen strings match the pattern
    if type(shape) is not list or len(shape) > 32 or not all(type(n) is int and n >= 0 for n in shape):
        raise ProtocolError("bad array shape")
    if math.prod(shape) * kind.itemsize != len(blob):
        raise ProtocolError("array size does not match its shape")
    return frombuffer(blob, dtype=kind).reshape(shape).copy()


class Channel:
    """Whole messages over a SOCK_SEQPACKET socket."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self._sendall, self._recv = sock.sendall, sock.recv   # bound now, like the names above

    def send(self, data: bytes) -> None:
        # Random message numbers: a forked process inherits no counter that could collide.
        number = int.from_bytes(_urandom(4), "little")
        for start in range(0, max(len(data), 1), PACKET):
            more = start + PACKET < len(data)
            self._sendall(_HEAD.pack(number, more) + data[start:start + PACKET])

    def send_with_fds(self, data: bytes, fds: list) -> None:
        """A one-packet message that also hands the receiver open file descriptors."""
        if len(data) > PACKET:
            raise ProtocolError("a message with descriptors must fit in one packet")
        packet = _HEAD.pack(int.from_bytes(_urandom(4), "little"), 0) + data
        socket.send_fds(self.sock, [packet], fds)

    def recv_with_fds(self, max_fds: int = 1) -> tuple:
        """(message, descriptors) of a one-packet message; descriptors are closed by the caller."""
        packet, fds, _, _ = socket.recv_fds(self.sock, PACKET + _HEAD.size, max_fds)
        if not packet:
            raise EOFError("channel closed")
        if len(packet) < _HEAD.size or _HEAD.unpack_from(packet)[1]:
            for fd in fds:
                os.close(fd)
            raise ProtocolError("expected a one-packet message")
        return packet[_HEAD.size:], fds

    def recv(self) -> bytes:
        """Next complete message; parts of a message that was cut short are dropped."""
        number, parts, size = None, [], 0
        while True:
            packet = self._recv(PACKET + _HEAD.size)
            if not packet:
                raise EOFError("channel closed")
            if len(packet) < _HEAD.size:
                raise ProtocolError("short packet")
            got, more = _HEAD.unpack_from(packet)
            if got != number:
                number, parts, size = got, [], 0
            parts.append(packet[_HEAD.size:])
            size += len(packet) - _HEAD.size
            if size > MAX_MESSAGE:
                raise ProtocolError(f"message over the {MAX_MESSAGE}-byte limit")
            if not more:
                return b"".join(parts)
