"""Earlier parts replaced wherever the notebook holds them, not only by name.

A part is graded with the official versions of the earlier parts. Binding their names is not
enough: code that holds the student's version in a default argument, a closure, a
`functools.partial`, or a dict or list of the notebook keeps calling it, and a correct later
part then loses points (with a wrong diagnosis) for the earlier part's mistake. `rebind` swaps
the student's object for the official one in each of those places too, by identity, one level
deep; nothing else of the notebook is touched.
"""
import functools
import types


def rebind(namespace: dict, replacements: dict, places: list | None = None) -> list:
    """Bind each name of `replacements` in `namespace` to its object, and put that object
    wherever the namespace's functions, classes, partials, dicts and lists hold the object the
    name had. `places`: the dict and list entries that can hold one (`find_places(namespace)`, which
    a caller that rebinds the same namespace many times computes once). The undo actions, to
    call in reverse order (a process that ends after the part needs none)."""
    swaps, undo = {}, []
    for name, new in replacements.items():
        if name in namespace:
            if _own(namespace[name]):     # never a shared object (None, a builtin) held for other reasons
                swaps[id(namespace[name])] = new
            undo.append(functools.partial(namespace.__setitem__, name, namespace[name]))
        else:
            undo.append(functools.partial(namespace.pop, name, None))
        namespace[name] = new
    if not swaps:
        return undo
    own = [(namespace, key) for key, value in list(dict.items(namespace)) if _swappable(value)]
    for holder, key in own + (find_places(namespace) if places is None else places):
        try:
            value = holder[key]
            new = _swapped(value, swaps)
            if new is not value:
                undo.append(functools.partial(holder.__setitem__, key, value))
                holder[key] = new
        except Exception:       # a thread of the notebook changed it, or its key's hash raises: it keeps its value
            continue
    for value in list(dict.values(namespace)):
        try:
            for function in _functions(value):
                undo += _rebind_in(function, swaps)
        except Exception:       # an object of the student's that cannot be looked into keeps what it holds
            continue
    return undo


def find_places(namespace: dict) -> list:
    """The (dict or list, key) entries of the namespace's dicts and lists that hold a function,
    a class or a partial: all that `rebind` may swap there. A scan of every element (12 ms for
    a list of 200,000 tokens), so done once for many rebinds."""
    places = []
    for value in list(dict.values(namespace)):
        if type(value) not in (dict, list):
            continue
        try:
            items = list(dict.items(value) if type(value) is dict else enumerate(value))
        except Exception:
            continue
        places += [(value, key) for key, item in items if _swappable(item)]
    return places


def _swappable(value) -> bool:
    return type(value) in (types.FunctionType, functools.partial) or _is_class(value)


def _swapped(value, swaps: dict):
    """What `value` becomes: its replacement, a partial of its replacement, or itself."""
    if id(value) in swaps:
        return swaps[id(value)]
    if type(value) is functools.partial and id(value.func) in swaps:
        return functools.partial(swaps[id(value.func)], *value.args, **value.keywords)
    return value


def _own(value) -> bool:
    """A function or class the notebook defined (a class whose metaclass objects counts as not)."""
    try:
        return type(value) is types.FunctionType or (_is_class(value) and value.__module__ != "builtins")
    except Exception:
        return False


def _is_class(value) -> bool:
    """Whether `value` is a class, by its real type: `isinstance` would ask the object for its
    `__class__`, which a plot still being recorded answers by building the figure (0.1 s)."""
    return issubclass(type(value), type)


def _functions(value) -> list:
    """The functions of a namespace value that can hold a reference: the function itself, or a
    class's methods and properties."""
    if _is_class(value):
        members = [getattr(m, "__func__", m) for m in vars(value).values()]
        members += [getattr(m, "fget", None) for m in vars(value).values() if isinstance(m, property)]
        return [m for m in members if type(m) is types.FunctionType]
    if type(value) is types.FunctionType:
        return [value]
    return []


def _rebind_in(function, swaps: dict) -> list:
    """Swap, in `function`'s defaults and closure, every object of `swaps` (by id), and the
    partials of one, for its replacement; the undo actions."""
    undo = []
    defaults, kwdefaults = function.__defaults__ or (), function.__kwdefaults__ or {}
    if any(_swapped(d, swaps) is not d for d in defaults):
        undo.append(functools.partial(setattr, function, "__defaults__", function.__defaults__))
        function.__defaults__ = tuple(_swapped(d, swaps) for d in defaults)
    if any(_swapped(d, swaps) is not d for d in kwdefaults.values()):
        undo.append(functools.partial(setattr, function, "__kwdefaults__", function.__kwdefaults__))
        function.__kwdefaults__ = {k: _swapped(d, swaps) for k, d in kwdefaults.items()}
    for cell in function.__closure__ or ():
        try:
            contents = cell.cell_contents
        except ValueError:      # a cell not filled yet
            continue
        new = _swapped(contents, swaps)
        if new is not contents:
            undo.append(functools.partial(setattr, cell, "cell_contents", contents))
            cell.cell_contents = new
    return undo
