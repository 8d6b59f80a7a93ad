"""Plots cost nothing when a notebook is graded: pyplot records the drawing instead of doing it.

Under autograde, building figures (axes, images, hundreds of text annotations, colorbars) is
most of a notebook's run time, and nobody sees the result. Once `install` has run, pyplot's
figure functions return stand-ins: every call or attribute access on a stand-in is recorded
and returns another stand-in, at the cost of a few microseconds. `plt.subplots` returns a real
tuple with a real NumPy array of stand-in axes of the right shape, so unpacking, `axes.flat`
and indexing work as usual.

Nothing a student's code reads back is made up. Reading (a getter `get_*`, `plt.xlim()`
without arguments, a data attribute such as `fig.number`), saving a figure, or using a stand-in
as a value (iterating, printing, comparing, converting it, isinstance) first replays every
recorded call on real matplotlib, in the order the student made them; the value returned is the
real one, and from then on the stand-ins forward to their real objects. Arguments are copied
when recorded (arrays, lists, dicts), so later changes to them do not leak into the replay. A
call with an argument that the call could change (an artist, an unknown object) and any pyplot
function outside the drawing API runs for real at once, after the pending calls. A figure that
is only drawn is never built.

A drawing call that matplotlib rejects raises when its result is first needed rather than
where it was made; nothing is ever raised at the call itself.

`ATTNLAB_DRAWING=real` in the worker's environment leaves matplotlib alone.
"""
import contextlib
import datetime
import decimal
import fractions
import functools
import inspect
import operator
import os

import matplotlib
import matplotlib.artist
import matplotlib.axes
import matplotlib.figure
import matplotlib.pyplot as plt
import numpy as np

_UNSET = object()
_EAGER = {"ginput", "waitforbuttonpress"}     # named like drawing methods, but they wait for input
_PURE = {"get_cmap", "get_plot_commands", "set_loglevel"}     # touch no figure: run as they are
_STATE = {"box", "clim", "close", "figlegend", "figtext", "gcf", "gci", "sci", "polar", "rgrids",
          "thetagrids", "subplot", "subplot2grid", "title", "xlabel", "xlim", "xscale", "xticks",
          "ylabel", "ylim", "yscale", "yticks"}
_VALUES = {"number", "dpi", "name", "axes", "lines", "patches", "texts", "images", "collections",
           "artists", "tables", "containers", "child_axes", "stale", "zorder"}     # attributes that are data
_GETTERS = {"xlim", "ylim", "xticks", "yticks", "axis", "margins"}   # without arguments, they read
_WRITERS = {"savefig", "print_figure"}                                       # they write to files and buffers
_PLAIN = (int, float, complex, str, bytes, bool, type(None), np.generic, range, slice, type(Ellipsis),
          datetime.date, datetime.time, datetime.timedelta, decimal.Decimal, fractions.Fraction)

_log: list = []      # (stand-in or None, operation, target, payload), in the order the student made them
_real = 0            # > 0 while matplotlib runs for real (a replay, an eager call)
replays = 0          # how many times recorded calls were replayed (tests read it)


class _Failed:
    def __init__(self, exc):
        self.exc = exc


class Stub:
    """A matplotlib object that has not been built: how to build it, and once built, the object."""
    __slots__ = ("_stub_value", "_stub_name")

    def __init__(self, name: str = ""):
        object.__setattr__(self, "_stub_value", _UNSET)
        object.__setattr__(self, "_stub_name", name)

    # -- recorded: building more of the figure costs nothing --------------------------
    def __getattr__(self, name):
        if _built(self) or name.startswith("_") or name in _VALUES or name in _WRITERS or name.startswith("print_"):
            _replay()
            return getattr(_value(self), name)
        return _record("attr", self, name)

    def __call__(self, *args, **kwargs):
        name = object.__getattribute__(self, "_stub_name")
        if _built(self) or _reads(name, args, kwargs):
            return _eager_call(self, args, kwargs)
        return _record_call(self, args, kwargs)

    def __getitem__(self, key):
        if _built(self) or not _plain(key):
            return _value(self)[_resolve(key)]
        return _record("item", self, _freeze(key))

    def __setattr__(self, name, value):
        if _built(self) or not _plain(value):
            setattr(_value(self), name, _resolve(value))
        else:
            _log.append((None, "setattr", self, (name, _freeze(value))))

    # -- anything else needs the real object ------------------------------------------
    @property
    def __class__(self):
        return type(_value(self))

    def __repr__(self):
        return repr(_value(self))


def _reads(name: str, args: tuple, kwargs: dict) -> bool:
    """Does calling `name` read a value back (then it runs for real, and returns the real value)?"""
    return name.startswith("get_") or name in _WRITERS or (name in _GETTERS and not args and not kwargs)


def _forced(name):
    def method(self, *args):
        return getattr(operator, name)(_value(self), *map(_resolve, args)) if hasattr(operator, name) \
            else getattr(_value(self), name)(*map(_resolve, args))
    method.__name__ = name
    return method


def _forced_builtin(function):
    def method(self, *args):
        return function(_value(self), *args)
    return method


for _name in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__add__", "__sub__", "__mul__",
              "__truediv__", "__floordiv__", "__mod__", "__pow__", "__matmul__", "__neg__", "__pos__",
              "__abs__", "__invert__", "__and__", "__or__", "__xor__", "__contains__", "__index__"):
    setattr(Stub, _name, _forced(_name))
for _name, _function in (("__str__", str), ("__bool__", bool), ("__len__", len), ("__iter__", iter),
                         ("__hash__", hash), ("__float__", float), ("__int__", int), ("__complex__", complex),
                         ("__reversed__", reversed), ("__format__", format), ("__round__", round),
                         ("__dir__", dir)):
    setattr(Stub, _name, _forced_builtin(_function))
for _name in ("radd", "rsub", "rmul", "rtruediv", "rfloordiv", "rmod", "rpow", "rmatmul", "rand", "ror", "rxor"):
    setattr(Stub, f"__{_name}__", lambda self, other, _op=getattr(operator, f"__{_name[1:]}__"):
            _op(_resolve(other), _value(self)))
Stub.__array__ = lambda self, dtype=None, copy=None: np.asarray(_value(self), dtype=dtype)
Stub.__setitem__ = lambda self, key, value: _value(self).__setitem__(_resolve(key), _resolve(value))
Stub.__delitem__ = lambda self, key: _value(self).__delitem__(_resolve(key))
Stub.__delattr__ = lambda self, name: delattr(_value(self), name)
Stub.__enter__ = lambda self: _value(self).__enter__()
Stub.__exit__ = lambda self, *exc: _value(self).__exit__(*exc)


# -- recording ---------------------------------------------------------------------------

def _built(stub: Stub) -> bool:
    return object.__getattribute__(stub, "_stub_value") is not _UNSET


def _record(operation: str, target, payload) -> Stub:
    stub = Stub(payload if operation == "attr" else "")
    _log.append((stub, operation, target, payload))
    return stub


def _record_call(target, args: tuple, kwargs: dict):
    if not (all(map(_plain, args)) and all(map(_plain, kwargs.values()))):
        return _eager_call(target, args, kwargs)
    return _record("call", target, (_freeze(args), _freeze(kwargs)))


def _plain(value) -> bool:
    """Can `value` be kept until the replay: data, stand-ins, colours and other matplotlib
    values, functions; not artists or objects the call could change or consume."""
    kind = type(value)
    if kind is Stub or kind in _PLAIN or isinstance(value, _PLAIN):
        return True
    if kind in (list, tuple):
        return all(map(_plain, value))
    if kind is dict:
        return all(map(_plain, value.values()))
    if isinstance(value, np.ndarray):
        return value.dtype != object or all(map(_plain, value.flat))
    if inspect.isfunction(value) or inspect.isbuiltin(value) or inspect.ismethod(value):
        return True
    return kind.__module__.startswith("matplotlib.") and not isinstance(
        value, (matplotlib.artist.Artist, matplotlib.figure.FigureBase))


def _freeze(value):
    """A copy of `value` as it is now (containers and arrays are copied; the rest is immutable)."""
    kind = type(value)
    if kind is Stub:
        return value
    if kind in (list, tuple):
        return kind(map(_freeze, value))
    if kind is dict:
        return {k: _freeze(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        if value.dtype == object:
            copy = np.empty(value.shape, dtype=object)
            for index, item in np.ndenumerate(value):
                copy[index] = _freeze(item)
            return copy
        return value.copy()
    return value


def _resolve(value):
    """`value` with every stand-in in it replaced by its real object."""
    kind = type(value)
    if kind is Stub:
        return _value(value)
    if kind in (list, tuple):
        return kind(map(_resolve, value))
    if kind is dict:
        return {k: _resolve(v) for k, v in value.items()}
    if kind is np.ndarray and value.dtype == object:
        real = np.empty(value.shape, dtype=object)
        for index, item in np.ndenumerate(value):
            real[index] = _resolve(item)
        return real
    return value


# -- building ----------------------------------------------------------------------------

def _value(stub: Stub):
    """The real object behind `stub`, replaying the recorded calls if it is not built yet."""
    if not _built(stub):
        _replay()
    value = object.__getattribute__(stub, "_stub_value")
    if isinstance(value, _Failed):
        raise value.exc
    if value is _UNSET:
        raise RuntimeError("this figure cannot be built while another one is being built")
    return value


def _replay() -> None:
    global _log, _real, replays
    if not _log:
        return
    pending, _log = _log, []
    replays += 1
    _real += 1
    try:
        for stub, operation, target, payload in pending:
            try:
                value = _apply(operation, _resolve(target), payload)
            except Exception as exc:   # raised when the stand-in is used, as matplotlib would have
                value = _Failed(exc)
            if stub is not None:
                object.__setattr__(stub, "_stub_value", value)
    finally:
        _real -= 1


def _apply(operation: str, target, payload):
    if operation == "call":
        args, kwargs = payload
        return target(*_resolve(args), **_resolve(kwargs))
    if operation == "attr":
        return getattr(target, payload)
    if operation == "item":
        return target[_resolve(payload)]
    name, value = payload
    setattr(target, name, _resolve(value))
    return None


def _eager_call(target, args: tuple, kwargs: dict):
    """Replay what is pending, then make this call for real, now."""
    _replay()
    global _real
    _real += 1
    try:
        return _resolve(target)(*_resolve(args), **_resolve(kwargs))
    finally:
        _real -= 1


# -- pyplot ------------------------------------------------------------------------------

def _recorded(function):
    @functools.wraps(function)
    def recorded(*args, **kwargs):
        if _real:
            return function(*args, **kwargs)
        if _reads(function.__name__, args, kwargs):
            return _eager_call(function, args, kwargs)
        return _record_call(function, args, kwargs)
    return recorded


def _eager(function):
    @functools.wraps(function)
    def eager(*args, **kwargs):
        if _real:
            return function(*args, **kwargs)
        return _eager_call(function, args, kwargs)
    return eager


def _subplots(function):
    """`plt.subplots`, recorded: a real (figure, axes) pair whose axes array has the real shape."""
    signature = inspect.signature(function)

    @functools.wraps(function)
    def subplots(*args, **kwargs):
        if _real:
            return function(*args, **kwargs)
        try:
            bound = signature.bind(*args, **kwargs)
            nrows, ncols = (operator.index(bound.arguments.get(k, 1)) for k in ("nrows", "ncols"))
            squeeze = bool(bound.arguments.get("squeeze", True))
        except (TypeError, ValueError):
            return _record_call(function, args, kwargs)
        pair = _record_call(function, args, kwargs)
        if type(pair) is not Stub or nrows < 1 or ncols < 1:
            return pair
        figure, axes = _record("item", pair, 0), _record("item", pair, 1)
        if squeeze and nrows == ncols == 1:
            return figure, axes
        shape = (nrows, ncols)
        if squeeze and 1 in shape:
            shape = (nrows * ncols,)
        grid = np.empty(shape, dtype=object)
        for index in np.ndindex(*shape):
            grid[index] = _record("item", axes, index)
        return figure, grid
    return subplots


def _show(*args, **kwargs):
    """Nothing is shown under autograde: showing closes the figures, as the inline backend does."""
    return plt.close("all")


def install(shell) -> bool:
    """Make pyplot record instead of draw (under autograde); True if installed."""
    if os.environ.get("NBGRADER_EXECUTION") != "autograde" or os.environ.get("ATTNLAB_DRAWING") == "real":
        return False
    drawing_api = set(dir(matplotlib.axes.Axes)) | set(dir(matplotlib.figure.Figure)) | _STATE
    for name in dir(plt):
        function = getattr(plt, name)
        if name.startswith("_") or not inspect.isfunction(function) or name in _PURE:
            continue
        if name == "subplots":
            setattr(plt, name, _subplots(function))
        elif name == "show":
            setattr(plt, name, _recorded(_show))
        elif name in drawing_api and name not in _EAGER:
            setattr(plt, name, _recorded(function))
        elif function.__module__ == plt.__name__:   # state outside the figures (rc, colormaps, I/O)
            setattr(plt, name, _eager(function))
    rc_set = matplotlib.RcParams.__setitem__

    def set_rc(params, key, value):   # artists read rcParams when built: build pending ones first
        if not _real:
            _replay()
        rc_set(params, key, value)
    matplotlib.RcParams.__setitem__ = set_rc
    rc_context = matplotlib.rc_context

    @contextlib.contextmanager
    def built_in_context(*args, **kwargs):   # what is drawn under a style is built with that style
        with rc_context(*args, **kwargs):
            try:
                yield
            finally:
                _replay()
    matplotlib.rc_context = built_in_context
    compute = shell.displayhook.compute_format_data   # a cell ending in a drawing call: no display
    shell.displayhook.compute_format_data = lambda result: ({}, {}) if type(result) is Stub else compute(result)
    return True
