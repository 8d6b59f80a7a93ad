"""The reference service: the grader's answers to the calls that a part's code makes of the
earlier parts.

Each part is graded with the official earlier parts. In the worker they are proxies, and each
call of one comes here as a request that the reference answers. The request is a value the
student chose: only this part's earlier parts are served, only their public methods, and no
number in a request may make the reference allocate or loop without bound.
"""
import numpy as np

from .worker.protocol import Described, ProtocolError

REQUEST_BYTES = 2**20     # largest request accepted
LARGEST_INT = 4096        # largest integer in a request (a size, a count)
LARGEST_FLOAT = 1e6       # largest finite float in a request (a RoPE base, a temperature)


class References:
    """Answers requests for the suite's reference versions of the parts named by `serve`."""

    def __init__(self, suite):
        self.suite = suite
        self.names: set = set()

    def serve(self, names: list) -> list:
        """Serve `names` (the part's earlier parts) from now on; the worker's specs of them."""
        self.names = set(names)
        return [{"name": n, "kind": self.suite.kinds[n], "methods": public_methods(self.suite.reference[n])}
                for n in names]

    def answer(self, message: dict, size: int) -> dict:
        """The reply to a request of `size` bytes: {"value": ...} or {"error": text}."""
        if size > REQUEST_BYTES:
            return {"error": f"the request of {size} bytes is too large for the reference"}
        try:
            check_sizes(message, LARGEST_INT)
            with np.errstate(all="ignore"):
                value = self._evaluate(message)
            return {"value": value}
        except Exception as exc:  # the reference on arguments the student chose
            signature = " (it takes the arguments of the release's signature)" if isinstance(exc, TypeError) else ""
            return {"error": f"{self._official(message)}, used in place of yours while this part is graded, "
                             f"could not evaluate this call{signature}: {type(exc).__name__}: {exc}"}

    def _official(self, message: dict) -> str:
        """The earlier part a request asked for, in words (named only if it is one)."""
        if "fn" in message or "new" in message:
            name, method = message.get("fn", message.get("new")), None
        else:
            name, method = type(message.get("obj")).__name__, message.get("method")
        if not isinstance(name, str) or name not in self.names:
            return "the official version of an earlier part"
        known = self.suite.kinds[name] == "class" and method in public_methods(self.suite.reference[name])
        return f"the official {name}" + (f".{method}" if known else "")

    def _evaluate(self, message: dict):
        reference = self.suite.reference
        args, kwargs = tuple(message.get("args", ())), dict(message.get("kwargs", {}))
        if "fn" in message:
            name = message["fn"]
            if name not in self.names or self.suite.kinds[name] != "function":
                raise PermissionError(f"{name} is not available")
            return reference[name](*args, **kwargs)
        if "new" in message:
            name = message["new"]
            if name not in self.names or self.suite.kinds[name] != "class":
                raise PermissionError(f"{name} is not available")
            return dict(vars(reference[name](*args, **kwargs)))
        obj, method = message.get("obj"), message.get("method")
        if type(obj).__name__ not in self.names or method not in public_methods(type(obj)):
            raise PermissionError("method not available")
        return getattr(obj, method)(*args, **kwargs)

    def build(self, cls: str, attrs):
        """A reference object from attributes the worker sent (only classes of this part's oracles)."""
        if cls not in self.names or self.suite.kinds.get(cls) != "class" or not isinstance(attrs, dict):
            raise ProtocolError(f"unexpected object of class {cls}")
        obj = object.__new__(self.suite.reference[cls])
        obj.__dict__.update(attrs)
        return obj

    def describe(self, obj):
        name = type(obj).__name__
        if self.suite.reference.get(name) is type(obj):
            return Described(name, dict(vars(obj)))
        return None


def public_methods(cls) -> list:
    return [name for name, value in vars(cls).items() if callable(value) and not name.startswith("_")]


def check_sizes(value, limit: int, depth: int = 0) -> None:
    """Refuse requests with a number that could make the reference allocate or loop
    without bound, in any container, 0-d and integer arrays included: integers (sizes, counts)
    up to `limit`, finite floats (a RoPE base, a temperature) up to LARGEST_FLOAT."""
    if isinstance(value, (bool, np.bool_)):
        return
    if isinstance(value, (int, float, np.number)) or (isinstance(value, np.ndarray) and value.ndim == 0):
        number = np.asarray(value)
        if number.dtype.kind in "iu" or isinstance(value, int):
            if abs(int(number)) > limit:
                raise ValueError(f"the number {int(number)} is too large")
        elif np.isfinite(number.real) and abs(float(number.real)) > LARGEST_FLOAT:
            raise ValueError(f"the number {float(number.real):g} is too large")
        return
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "iu" and value.size and int(np.abs(value.astype(np.int64)).max()) > limit:
            raise ValueError("an integer array holds a number too large")
        return
    if isinstance(value, dict):
        value = list(value.values())
    elif hasattr(value, "__dict__") and not isinstance(value, np.ndarray):
        value = list(vars(value).values())
    if isinstance(value, (list, tuple)):
        for item in value:
            check_sizes(item, limit, depth + 1)
