"""The mutation operators: each rewrites one place of a function the way students go wrong by
accident, and says what the rewrite does in a student's terms (never the code that would fix it).

An operator takes an AST node and returns [(replacement, idea), ...] or None. A third item, a
group's idea, also rewrites every place of the function given that group at once (of one statement
only, if it starts with STATEMENT); an idea of None: the place is rewritten only with its group.
Operators that need the function (its parameters, its variables) are made by a function of it.

Layout: swap_matmul, transpose_product, transpose_operand, drop_transpose, permute_axes,
reshape_in_place_of_transpose, reshape_sizes, halves_for_interleaved, new_axis. Axes: other_axis,
drop_keepdims, add_keepdims, slice_on_columns. Positions and ranges: off_by_one, loop_items, shift_slice,
drop_step, shape_read, index_off_by_one, index_for_element. Scales and signs: rescale, drop_factor,
div_for_mult, flip_sign, reverse, negate_exponent, drop_brackets, root_slips, power_off_by_one. Terms and steps: drop_term,
term_outside, term_inside, drop_call, drop_update, drop_keyword, drop_guard, ignore_condition, boundary.
Functions: mean_for_sum, sibling_function, unbiased, finite_mask, mirror_mask, other_fill. Arguments and
variables: swap_args, drop_argument, swap_returned, other_name, exchange_roles, default_for_parameter,
other_default. Order: swap_steps.
"""
import ast
import copy
import itertools

# Each takes a node and returns [(replacement, idea), ...] or None. An idea says what the code
# does wrong, never the code that would fix it. A third item, a group's idea, also rewrites every
# place of the function given that group at once (of one statement, if it starts with STATEMENT);
# an idea of None: the place is rewritten only with its group.

def _name(node) -> str | None:
    f = getattr(node, "func", None)
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None


def _is_call(node, *names) -> bool:
    return isinstance(node, ast.Call) and _name(node) in names


def _keyword(node, name):
    return next((k for k in getattr(node, "keywords", []) if k.arg == name), None)


def _int(node):
    value = node.value if isinstance(node, ast.Constant) else None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        value = -node.operand.value
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _num(value):
    return ast.UnaryOp(ast.USub(), ast.Constant(-value)) if value < 0 else ast.Constant(value)


def _edited(node, edit):
    new = copy.deepcopy(node)
    edit(new)
    return new


def swap_matmul(node):
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        return [(ast.BinOp(node.right, ast.MatMult(), node.left),
                 "the two factors of a matrix product are in the wrong order (A @ B is not B @ A)")]


def _is_np(node) -> bool:
    return isinstance(node, ast.Name) and node.id == "np"


def _axes(node):
    """The axes of x.transpose(a, b, ...), x.transpose((a, b, ...)) or np.transpose(x, (...))
    (more than two of them), else None."""
    if not _is_call(node, "transpose"):
        return None
    args = node.args[1:] if _is_np(node.func.value if isinstance(node.func, ast.Attribute) else None) else node.args
    items = args[0].elts if len(args) == 1 and isinstance(args[0], ast.Tuple) else args
    axes = [_int(a) for a in items]
    return axes if len(axes) > 2 and None not in axes else None


def drop_transpose(node):
    if isinstance(node, ast.Attribute) and node.attr == "T":
        return [(node.value, "a transpose is missing: an operand keeps its rows where its columns belong")]
    if _is_call(node, "transpose", "swapaxes") and isinstance(node.func, ast.Attribute) and not _is_np(node.func.value):
        what = "an axis permutation (transpose) is missing" if _axes(node) else "a transpose is missing"
        return [(node.func.value, f"{what}: the axes stay in the order the array had")]


def permute_axes(node):
    """Two neighbouring axes of a permutation exchanged: heads and positions mixed up."""
    axes = _axes(node)
    if axes is None:
        return None
    array = node.args[:1] if _is_np(node.func.value if isinstance(node.func, ast.Attribute) else None) else []
    out = []
    for i in range(len(axes) - 1):
        order = axes[:i] + [axes[i + 1], axes[i]] + axes[i + 2:]
        if order == sorted(order):      # no permutation at all: drop_transpose's
            continue
        new = copy.deepcopy(node)
        new.args = copy.deepcopy(array) + [ast.Tuple([_num(a) for a in order], ast.Load())]
        out.append((new, f"the axes are permuted in another order ({', '.join(map(str, order))}): two axes "
                         "(such as heads and positions) are exchanged"))
    return out


def reshape_in_place_of_transpose(node):
    """x.reshape(s).transpose(p) written x.reshape(s permuted): the right shape, the wrong entries."""
    axes = _axes(node)
    inner = node.func.value if axes and isinstance(node.func, ast.Attribute) else None
    if not _is_call(inner, "reshape") or not isinstance(inner.func, ast.Attribute) or len(inner.args) != len(axes):
        return None
    new = copy.deepcopy(inner)
    new.args = [copy.deepcopy(inner.args[a]) for a in axes]
    return [(new, "the array is reshaped straight into the final layout instead of reshaped and then "
                  "transposed: the shape is right, but the entries land in the wrong heads or positions")]


def other_axis(node):
    k = _keyword(node, "axis")
    if k is None:
        return None
    out = []
    if isinstance(k.value, ast.Tuple) and all(_int(a) is not None for a in k.value.elts):
        axes = [_int(a) for a in k.value.elts]
        for i in range(len(axes)):
            for axis in (0, 1, 2, -1):
                if axis not in axes:
                    order = axes[:i] + [axis] + axes[i + 1:]
                    new = _edited(node, lambda n, order=order: setattr(
                        _keyword(n, "axis"), "value", ast.Tuple([_num(a) for a in order], ast.Load())))
                    out.append((new, f"`{_name(node)}` runs over the wrong axes {tuple(order)}"))
        return out + [(_edited(node, lambda n: setattr(_keyword(n, "axis"), "value", _num(axes[0]))),
                       f"`{_name(node)}` runs over axis {axes[0]} only, not over all of {tuple(axes)}")]
    if _int(k.value) is None:
        return None
    whole = _edited(node, lambda n: setattr(n, "keywords", [k for k in n.keywords if k.arg != "axis"]))
    out.append((whole, f"`{_name(node)}` runs over the whole array instead of along one axis",
                "the reductions run over the whole array instead of along one axis"))
    for axis in (-1, 0, 1, -2):
        if axis != _int(k.value):
            new = _edited(node, lambda n, axis=axis: setattr(_keyword(n, "axis"), "value", _num(axis)))
            out.append((new, f"`{_name(node)}` runs along the wrong axis (axis={axis})",
                        f"the reductions run along the wrong axis (axis={axis})"))
            out.append((new, f"`{_name(node)}` runs along the wrong axis (axis={axis})",
                        f"every `{_name(node)}` runs along the wrong axis (axis={axis})"))
    return out


def drop_keepdims(node):
    if _keyword(node, "keepdims") is not None:
        new = _edited(node, lambda n: setattr(n, "keywords", [k for k in n.keywords if k.arg != "keepdims"]))
        return [(new, f"`{_name(node)}` drops the axis it reduces (keepdims is missing), so the result "
                      "broadcasts against the wrong axis",
                 "the reductions drop the axis they reduce (keepdims is missing), so their results "
                 "broadcast against the wrong axis")]


def off_by_one(node):
    out = []
    k = _keyword(node, "k")
    if k is not None and _int(k.value) is not None:
        for delta in (-1, 1):
            new = _edited(node, lambda n, delta=delta: setattr(_keyword(n, "k"), "value", _num(_int(k.value) + delta)))
            out.append((new, f"the diagonal of `{_name(node)}` is off by one (k={_int(k.value) + delta}): the "
                             "mask covers one diagonal too many or too few"))
    if _is_call(node, "arange") and node.args:
        for i, end in enumerate(("end" if len(node.args) == 1 else "start", "end")[:len(node.args[:2])]):
            new = _edited(node, lambda n, i=i: n.args.__setitem__(i, ast.BinOp(n.args[i], ast.Add(), ast.Constant(1))))
            out.append((new, f"a range (np.arange) is one too long or starts one late: its {end} is off by one"))
        out.append((ast.BinOp(node, ast.Add(), ast.Constant(1)),
                    "positions or indices are counted from 1 instead of from 0"))
        out.append((ast.BinOp(node, ast.Sub(), ast.Constant(1)),
                    "a count that starts at 1 starts at 0 (positions or indices shifted down by one)"))
    if _is_call(node, "integers", "range") and node.args:
        for delta in (-1, 1):
            new = _edited(node, lambda n, delta=delta: n.args.__setitem__(
                -1, ast.BinOp(n.args[-1], ast.Add(), _num(delta))))
            out.append((new, f"the exclusive end of `{_name(node)}` is one {'short' if delta < 0 else 'too far'}"))
    if isinstance(node, ast.Slice):
        for bound in ("lower", "upper"):
            if getattr(node, bound) is not None:
                for delta in (-1, 1):
                    new = _edited(node, lambda n, bound=bound, delta=delta:
                                  setattr(n, bound, ast.BinOp(getattr(n, bound), ast.Add(), _num(delta))))
                    out.append((new, f"a slice {'starts' if bound == 'lower' else 'ends'} one element off"))
    return out or None


def rescale(node):
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and _is_call(node.right, "sqrt"):
        root = node.right.args[0]
        return [(node.left, "the division by a square root (the scale) is missing"),
                (ast.BinOp(node.left, ast.Div(), root), "the division is by the dimension itself, not by its square root"),
                (ast.BinOp(node.left, ast.Mult(), node.right), "the scale multiplies by the square root instead of dividing by it")]


def flip_sign(node):
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and not isinstance(node.operand, ast.Constant):
        return [(node.operand, "a minus sign is missing")]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
        return [(ast.BinOp(node.left, ast.Add(), node.right), "a term is added where it should be subtracted")]


def drop_term(node):
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        return [(node.left, f"{_term(node.right)} is left out of a sum or difference")] + (
            [(node.right, f"{_term(node.left)} is left out of a sum")] if isinstance(node.op, ast.Add) else [])


def _term(node) -> str:
    """A term by its name where it has one (`mask`, `self.b2`, `causal_mask(...)`), else 'a term'."""
    if isinstance(node, ast.UnaryOp):
        return _term(node.operand)
    if isinstance(node, ast.Name) or isinstance(node, ast.Attribute) and _is_self(node.value):
        return f"the term `{ast.unparse(node)}`"
    if isinstance(node, ast.Call) and _name(node) not in _BUILDERS:
        return f"the term `{_name(node)}(...)`"
    return "a term"


def mean_for_sum(node):
    if _is_call(node, "mean", "sum") and isinstance(node.func, ast.Attribute):
        other = "sum" if node.func.attr == "mean" else "mean"
        new = _edited(node, lambda n: setattr(n.func, "attr", other))
        return [(new, f"a {other} is taken where a {node.func.attr} is needed")]


def finite_mask(node):
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and \
            isinstance(node.operand, ast.Attribute) and node.operand.attr == "inf":
        return [(_num(-1000.0), "masked entries get a finite score instead of -inf"),
                (ast.Constant(0.0), "masked entries get 0 instead of -inf: nothing is masked")]
    if _is_call(node, "triu", "tril") and isinstance(node.func, ast.Attribute):
        other = "tril" if node.func.attr == "triu" else "triu"
        new = _edited(node, lambda n: setattr(n.func, "attr", other))
        return [(new, "the mask covers the wrong triangle: it hides the past instead of the future "
                      "(or the reverse)")]


def transpose_product(node):
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        return [(ast.BinOp(_swapaxes(node.right), ast.MatMult(), _swapaxes(node.left)),
                 "the product comes out transposed (its factors swapped and each transposed, as K Q^T for Q K^T)")]


def _swapaxes(node):
    return ast.Call(ast.Attribute(ast.Name("np", ast.Load()), "swapaxes", ast.Load()),
                    [node, _num(-1), _num(-2)], [])


def _transposed(node) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "T" or _is_call(node, "transpose", "swapaxes")


def transpose_operand(node):
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        idea = "an operand of a matrix product is transposed where it should not be"
        return [(ast.BinOp(_swapaxes(node.left), ast.MatMult(), node.right), idea)] * (not _transposed(node.left)) + \
            [(ast.BinOp(node.left, ast.MatMult(), _swapaxes(node.right)), idea)] * (not _transposed(node.right))


def drop_factor(node):
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.MatMult)):
        what = "a matrix product is left out (one of its factors is missing)" if isinstance(node.op, ast.MatMult) \
            else "a factor of a product is left out"
        return [(node.left, what), (node.right, what)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.FloorDiv)):
        return [(node.left, "a division is left out")]


_REDUCTIONS = ("sum", "mean", "max", "norm")   # floored, a quotient by a normaliser leaves 0s and 1s, as zeroed code does


def div_for_mult(node):
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.Mult)):
        if isinstance(node.op, ast.Div):
            floor = [] if _is_call(node.right, *_REDUCTIONS) else [
                (ast.BinOp(node.left, ast.FloorDiv(), node.right), "an integer division (//) truncates where a true division is needed")]
            return [(ast.BinOp(node.left, ast.Mult(), node.right), "it multiplies where it should divide")] + floor
        return [(ast.BinOp(node.left, ast.Div(), node.right), "it divides where it should multiply")]


def swap_returned(node):
    if isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple) and len(node.value.elts) > 1:
        out = []
        for i in range(len(node.value.elts) - 1):
            new = copy.deepcopy(node)
            items = new.value.elts
            items[i], items[i + 1] = items[i + 1], items[i]
            out.append((new, "the results are returned in the wrong order"))
        return out


def reshape_sizes(node):
    """Two neighbouring sizes of a reshape exchanged: an axis split as (d_k, A) for (A, d_k)."""
    if not _is_call(node, "reshape") or not isinstance(node.func, ast.Attribute):
        return None
    out = []
    for i in range(len(_sizes(node)) - 1):
        new = copy.deepcopy(node)
        sizes = _sizes(new)
        sizes[i], sizes[i + 1] = sizes[i + 1], sizes[i]
        out.append((new, "a reshape splits an axis with its sizes in the wrong order, so the entries are "
                         "interleaved instead of kept in blocks"))
    return out


def _sizes(call) -> list:
    return call.args[0].elts if len(call.args) == 1 and isinstance(call.args[0], ast.Tuple) else call.args


def ignore_condition(node):
    if isinstance(node, (ast.If, ast.IfExp)) and not isinstance(node.test, ast.Constant):
        names = sorted({n.id for n in ast.walk(node.test) if isinstance(n, ast.Name)})
        test = f"the test of {' and '.join(f'`{n}`' for n in names)}" if names else "a test"
        return [(_edited(node, lambda n: setattr(n, "test", ast.Constant(True))),
                 f"{test} is ignored: its branch is always taken"),
                (_edited(node, lambda n: setattr(n, "test", ast.Constant(False))),
                 f"{test} is ignored: its branch is never taken"),
                (_edited(node, lambda n: setattr(n, "test", ast.UnaryOp(ast.Not(), n.test))),
                 f"{test} is inverted: its branch is taken exactly when it should not be")]


def drop_keyword(node):
    if isinstance(node, ast.Call) and node.keywords and _name(node) not in ("axis", "keepdims"):
        out = []
        for k in node.keywords:
            if k.arg in ("axis", "keepdims", "k", None):
                continue
            new = _edited(node, lambda n, arg=k.arg: setattr(n, "keywords", [x for x in n.keywords if x.arg != arg]))
            out.append((new, f"the call of `{_name(node)}` leaves out its argument {k.arg}="))
        return out


_SIBLING_FUNCTIONS = {"sin": ["cos"], "cos": ["sin"], "log2": ["log", "log10"], "log": ["log2", "log10"],
                      "max": ["min"], "min": ["max"], "argmax": ["argmin"], "argmin": ["argmax"],
                      "maximum": ["minimum", "max"], "minimum": ["maximum", "min"]}


def sibling_function(node):
    """A function for its sibling: cos for sin, another base's logarithm, min for max."""
    name = _name(node)
    if isinstance(node, ast.Call) and name in _SIBLING_FUNCTIONS:
        out = []
        for sibling in _SIBLING_FUNCTIONS[name]:
            new = copy.deepcopy(node)
            setattr(new.func, "attr" if isinstance(new.func, ast.Attribute) else "id", sibling)
            out.append((new, f"`{sibling}` is used where `{name}` belongs"))
        return out


def drop_guard(node):
    """np.where(c, a, b) written a (or b): the guard against 0 log 0, a mask or a padding left out."""
    if _is_call(node, "where") and len(node.args) == 3:
        return [(node.args[1], "the case np.where guards against is not handled: one branch is used everywhere"),
                (node.args[2], "the case np.where guards against is not handled: one branch is used everywhere")]


def term_outside(node):
    """f(a + b) written f(a) + b: eps added outside a square root."""
    if isinstance(node, ast.Call) and len(node.args) == 1 and isinstance(node.args[0], ast.BinOp) \
            and isinstance(node.args[0].op, ast.Add):
        inner = _edited(node, lambda n: setattr(n, "args", [n.args[0].left]))
        return [(ast.BinOp(inner, ast.Add(), node.args[0].right),
                 f"a term is added outside `{_name(node)}` instead of inside it")]


def unbiased(node):
    if _is_call(node, "var", "std") and not _keyword(node, "ddof"):
        new = _edited(node, lambda n: n.keywords.append(ast.keyword("ddof", ast.Constant(1))))
        return [(new, "the variance divides by n - 1 (ddof=1) instead of by n")]


def mirror_mask(node):
    if _is_call(node, "triu", "tril") and isinstance(node.func, ast.Attribute):
        k = _keyword(node, "k")
        shift = _int(k.value) if k is not None else 0
        new = _edited(node, lambda n: setattr(n.func, "attr", "tril" if node.func.attr == "triu" else "triu"))
        new.keywords = [x for x in new.keywords if x.arg != "k"] + [ast.keyword("k", _num(-(shift or 0)))]
        return [(new, "the mask hides the other side of the diagonal: the past instead of the future")]


def shift_slice(node):
    if isinstance(node, ast.Slice) and node.step is None and node.upper is not None:
        new = copy.deepcopy(node)
        new.lower = ast.BinOp(new.lower, ast.Add(), ast.Constant(1)) if new.lower is not None else ast.Constant(1)
        new.upper = ast.BinOp(new.upper, ast.Add(), ast.Constant(1))
        return [(new, "a slice is shifted by one: it starts and ends one element late (positions counted from 1)")]


def drop_call(node):
    """f(x) written x: a step (an activation, a norm, a function of the notebook) left out."""
    if isinstance(node, ast.Call) and _name(node) not in _BUILDERS:
        arrays = [a for a in node.args if not isinstance(a, (ast.Constant, ast.Starred))]
        if arrays and not (isinstance(node.func, ast.Attribute) and _name(node) in _METHODS_OF_ARRAYS):
            return [(a, f"the step `{_name(node)}` is left out: its input is used as it is") for a in arrays[:2]]


_BUILDERS = {"arange", "zeros", "ones", "full", "empty", "array", "asarray", "reshape", "transpose", "swapaxes",
             "sqrt", "exp", "log", "sum", "mean", "max", "min", "var", "std", "float", "int", "len", "range",
             "zeros_like", "ones_like", "empty_like", "full_like", "astype", "copy", "triu", "tril", "where",
             "shape", "append", "tuple", "list", "dict", "enumerate", "zip", "isinstance", "sin", "cos",
             "stack", "concatenate", "outer", "einsum", "argmax", "cumsum", "argsort", "sort", "take"}
_METHODS_OF_ARRAYS = {"get", "items", "keys", "values", "choice", "integers", "random", "standard_normal"}


def other_name(names, parameters, assigned=None):
    """The operator that reads another variable of the function where one is read: a sibling (dk
    for dq, W_K for W_Q, d_model for d_k, ln2_g for ln1_g), an argument (x for t3, V for Q) or a
    variable assigned on an earlier line (scores for weights). `assigned`: {name: its first line}."""
    assigned = assigned or {}

    def other_name(node):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in names:
            return [(ast.Name(n, ast.Load()), f"`{n}` is used where `{node.id}` belongs",
                     STATEMENT + f"`{n}` is used where `{node.id}` belongs")
                    for n in sorted(names) if n != node.id and (
                        n in parameters or _siblings(n, node.id) or assigned.get(n, node.lineno) < node.lineno)]
        if isinstance(node, ast.Attribute) and _is_self(node.value) and node.attr in names:
            return [(ast.Attribute(node.value, n, ast.Load()), f"`self.{n}` is used where `self.{node.attr}` belongs")
                    for n in sorted(names) if n != node.attr and _siblings(n, node.attr)]
    return other_name


def _siblings(a: str, b: str) -> bool:
    """Names of one family: one character apart, one prefix of two or more, one with a suffix (m,
    m_hat), or one letter each."""
    stem = (lambda n: n.rstrip("0123456789"))
    return (len(a) == len(b) and sum(x != y for x, y in zip(a, b)) == 1 or stem(a) == stem(b)
            or a.startswith(b + "_") or b.startswith(a + "_")
            or len(a) > 2 and len(b) > 2 and a[:2] == b[:2] or len(a) == len(b) == 1 and a.isupper() == b.isupper())


def _is_self(node) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


def parameters(function: ast.FunctionDef) -> set:
    return {a.arg for a in function.args.args + function.args.kwonlyargs if a.arg != "self"}


def assigned_lines(function: ast.FunctionDef) -> dict:
    """{name: the first line that assigns it} for the variables of `function`."""
    lines = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            lines[node.id] = min(lines.get(node.id, node.lineno), node.lineno)
    return lines


def local_names(function: ast.FunctionDef) -> set:
    """The parameters (self excepted), the variables assigned and the attributes of self read in `function`."""
    names = parameters(function)
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        if isinstance(node, ast.Attribute) and _is_self(node.value) and isinstance(node.ctx, ast.Load):
            names.add(node.attr)
    return names


def default_for_parameter(function: ast.FunctionDef):
    """The operator that reads a parameter's default where the parameter is read (the argument ignored)."""
    args = function.args
    defaults = dict(zip([a.arg for a in args.args][len(args.args) - len(args.defaults):], args.defaults))
    defaults = {k: v for k, v in defaults.items() if isinstance(v, ast.Constant) and v.value is not None}

    def default_for_parameter(node):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in defaults:
            return [(defaults[node.id], f"the argument `{node.id}` is ignored: its default value is used instead")]
    return default_for_parameter



def shape_read(node):
    """X.shape[i] read off by one, or from another axis: a position or a count taken wrongly."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "shape" \
            and _int(node.slice) is not None:
        axis = _int(node.slice)
        out = [(ast.BinOp(node, ast.Add(), _num(delta)),
                f"a size or position read from a shape is one {'too large' if delta > 0 else 'too small'}")
               for delta in (1, -1)]
        for other in (0, 1, 2, -1, -2):
            if other != axis:
                new = _edited(node, lambda n, other=other: setattr(n, "slice", _num(other)))
                out.append((new, f"a size is read from the wrong axis of a shape (axis {other})"))
        return out


def drop_step(node):
    """arange(0, n, 2) or x[0::2] without its step: every index instead of every second."""
    if _is_call(node, "arange") and len(node.args) == 3:
        new = _edited(node, lambda n: n.args.pop())
        return [(new, "the step of a range is left out: it counts every index, not every step-th")]
    if isinstance(node, ast.Slice) and node.step is not None:
        new = _edited(node, lambda n: setattr(n, "step", None))
        return [(new, "the step of a slice is left out: it takes every entry, not every step-th")]


def halves_for_interleaved(node):
    """x[..., 0::2] and x[..., 1::2] written x[..., :d/2] and x[..., d/2:]: the pairs (m, m + d/2) of
    the rotate-half layout where the pairs are neighbours (2m, 2m + 1), or the reverse."""
    if not isinstance(node, ast.Subscript):
        return None
    last = node.slice.elts[-1] if isinstance(node.slice, ast.Tuple) else node.slice
    if not (isinstance(last, ast.Slice) and _int(last.step) == 2 and last.upper is None
            and _int(last.lower or ast.Constant(0)) in (0, 1)):
        return None
    half = ast.BinOp(ast.Subscript(ast.Attribute(copy.deepcopy(node.value), "shape", ast.Load()), _num(-1), ast.Load()),
                     ast.FloorDiv(), ast.Constant(2))
    contiguous = ast.Slice(None, half, None) if _int(last.lower or ast.Constant(0)) == 0 else ast.Slice(half, None, None)
    new = copy.deepcopy(node)
    if isinstance(new.slice, ast.Tuple):
        new.slice.elts[-1] = contiguous
    else:
        new.slice = contiguous
    idea = "the pairs are the two halves (m, m + d/2) instead of neighbouring entries (2m, 2m + 1)"
    return [(new, idea, idea)]


def index_for_element(node):
    """a[i] written i: the index used where the element it points to belongs."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and isinstance(node.ctx, ast.Load) \
            and isinstance(node.slice, (ast.Name, ast.Subscript)):
        return [(node.slice, f"an index is used where the entry of `{node.value.id}` it points to belongs")]


def boundary(node):
    """> for >= (and the reverse): the boundary value on the wrong side of a comparison."""
    swaps = {ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Lt: ast.LtE, ast.LtE: ast.Lt}
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in swaps:
        new = _edited(node, lambda n: n.ops.__setitem__(0, swaps[type(n.ops[0])]()))
        return [(new, "a comparison is strict where it should not be, or the reverse: the boundary value "
                      "falls on the wrong side")]


def drop_update(node):
    """An augmented assignment (+=, -=) left out: a contribution never added."""
    if isinstance(node, ast.AugAssign) and isinstance(node.target, (ast.Name, ast.Subscript)):
        what = node.target.id if isinstance(node.target, ast.Name) else ast.unparse(node.target.value)
        return [(ast.Pass(), f"a contribution to `{what}` (an update with {type(node.op).__name__.lower()}=) is left out")]


def term_inside(node):
    """f(a) + b written f(a + b): eps added inside a square root."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and isinstance(node.left, ast.Call) \
            and len(node.left.args) == 1 and _name(node.left) in ("sqrt", "log", "exp"):
        inner = _edited(node.left, lambda n: setattr(n, "args", [ast.BinOp(n.args[0], ast.Add(), node.right)]))
        return [(inner, f"a term is added inside `{_name(node.left)}` instead of outside it")]



def exchange_roles(parameters):
    """The operator that exchanges two parameters everywhere: gamma for beta and beta for gamma."""
    def exchange_roles(node):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in parameters:
            return [(ast.Name(other, ast.Load()), None,
                     f"the roles of `{min(node.id, other)}` and `{max(node.id, other)}` are exchanged")
                    for other in sorted(parameters) if other != node.id]
    return exchange_roles


def reverse(node):
    """a - b written b - a, a ** b written b ** a, np.where's branches exchanged, and a comparison
    pointing the other way (x < 0 for x > 0)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
        return [(ast.BinOp(node.right, ast.Sub(), node.left), "a difference is taken the other way round")]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and not isinstance(node.right, ast.Constant):
        return [(ast.BinOp(node.right, ast.Pow(), node.left),
                 "a power is taken the other way round: the exponent is raised to the power of the base")]
    if _is_call(node, "where") and len(node.args) == 3:
        new = _edited(node, lambda n: setattr(n, "args", [n.args[0], n.args[2], n.args[1]]))
        return [(new, "the two branches of np.where are exchanged: the condition picks the other one")]
    flips = {ast.Gt: ast.Lt, ast.Lt: ast.Gt, ast.GtE: ast.LtE, ast.LtE: ast.GtE}
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in flips:
        new = _edited(node, lambda n: n.ops.__setitem__(0, flips[type(n.ops[0])]()))
        return [(new, "a comparison points the wrong way (< for >, or the reverse)")]


_PRECEDENCE = {ast.Add: 1, ast.Sub: 1, ast.Mult: 2, ast.Div: 2, ast.FloorDiv: 2, ast.Mod: 2, ast.MatMult: 2,
               ast.Pow: 3}
_OPERATIONS = {ast.Add: "addition", ast.Sub: "subtraction", ast.Mult: "multiplication", ast.Div: "division",
               ast.FloorDiv: "division", ast.Mod: "remainder", ast.MatMult: "matrix product", ast.Pow: "power"}


_STATEMENTS = (ast.Assign, ast.AugAssign, ast.Return, ast.Expr)


def drop_brackets(node):
    """(a - b) / c written a - b / c, a ** (b / c) written a ** b / c: a bracket left out of a
    statement, which Python then reads by its precedence (the whole statement is re-read)."""
    if not isinstance(node, _STATEMENTS) or node.value is None:
        return None
    out = []
    for parent in [n for n in ast.walk(node.value) if isinstance(n, ast.BinOp) and type(n.op) in _PRECEDENCE]:
        for side in ("left", "right"):
            child = getattr(parent, side)
            if _bracketed(parent, child, side) and (new := _reread(node, child, child)):
                out.append((new, f"a bracket is missing around a {_OPERATIONS[type(child.op)]}: the "
                                 f"{_OPERATIONS[type(parent.op)]} next to it applies to its nearest term only"))
    return out or None


def root_slips(node):
    """sqrt(x) written x ** 1/2 in a statement, which Python reads by precedence ((x ** 1) / 2, and
    a quotient before it divided by x, then by 2), or cast to an integer; x ** 0.5 written x ** 1/2."""
    if not isinstance(node, _STATEMENTS) or node.value is None:
        return None
    out = []
    for root in ast.walk(node.value):
        if _is_call(root, "sqrt") and len(root.args) == 1 and not root.keywords:
            base = root.args[0]
            cast = _reread(node, root, ast.Call(ast.Name("int", ast.Load()), [root], []))
            if cast:
                out.append((cast, "a square root is cast to an integer (`int(...)`), which cuts its fraction off"))
        elif isinstance(root, ast.BinOp) and isinstance(root.op, ast.Pow) and isinstance(root.right, ast.Constant) \
                and root.right.value == 0.5:
            base = root.left
        else:
            continue
        halved = _reread(node, root, ast.BinOp(ast.BinOp(base, ast.Pow(), ast.Constant(1)), ast.Div(), ast.Constant(2)))
        if halved:
            out.append((halved, "a square root is written `** 1/2`, which Python reads by precedence as a power "
                                "of 1 and then a division by 2, not a root"))
    return out or None


_MARK = "_bracket_"


def _reread(statement, target, replacement):
    """`statement` with the text of `replacement`, without brackets around it, in place of
    `target`, as Python reads it then (None if it does not parse)."""
    for parent in ast.walk(statement):
        for field, value in ast.iter_fields(parent):
            items = value if isinstance(value, list) else [value]
            index = next((i for i, item in enumerate(items) if item is target), None)
            if index is None:
                continue
            _put(parent, field, index, ast.Call(ast.Name(_MARK, ast.Load()), [replacement], []))
            text = _unbracketed(ast.unparse(statement))
            _put(parent, field, index, target)
            try:
                return ast.parse(text).body[0]
            except SyntaxError:
                return None
    return None


def _put(parent, field: str, index: int, node) -> None:
    value = getattr(parent, field)
    if isinstance(value, list):
        value[index] = node
    else:
        setattr(parent, field, node)


def _bracketed(parent, child, side: str) -> bool:
    """Whether `child` needs brackets as the `side` operand of `parent`."""
    if not isinstance(child, ast.BinOp) or type(child.op) not in _PRECEDENCE:
        return False
    inner, outer = _PRECEDENCE[type(child.op)], _PRECEDENCE[type(parent.op)]
    return inner < outer or side == "right" and inner == outer < 3 and not isinstance(parent.op, (ast.Add, ast.Mult))


def _unbracketed(text: str) -> str:
    """`text` with the marked call's name and its brackets taken out."""
    start = text.index(_MARK + "(")
    depth, i = 0, start + len(_MARK)
    while True:
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            return text[:start] + text[start + len(_MARK) + 1:i] + text[i + 1:]
        i += 1


def loop_items(node):
    """A loop over a list that skips its first or last item or runs backwards, and a range loop
    that starts one late: a block, a sequence or a row left out, or taken in the wrong order."""
    if not isinstance(node, ast.For):
        return None
    if _is_call(node.iter, "range") and 1 <= len(node.iter.args) <= 2 and not node.iter.keywords:
        start = ast.BinOp(node.iter.args[0], ast.Add(), _num(1)) if len(node.iter.args) == 2 else _num(1)
        new = _edited(node, lambda n: setattr(n.iter, "args", [start, n.iter.args[-1]]))
        return [(new, "the loop starts one late: its first index is never visited")]
    if isinstance(node.iter, (ast.Name, ast.Attribute)):
        name = ast.unparse(node.iter)
        cut = {"the loop over `{}` skips its first item": ast.Slice(_num(1), None, None),
               "the loop over `{}` skips its last item": ast.Slice(None, _num(-1), None),
               "the loop runs over `{}` backwards": ast.Slice(None, None, _num(-1))}
        return [(_edited(node, lambda n, part=part: setattr(n, "iter", ast.Subscript(n.iter, part, ast.Load()))),
                 idea.format(name)) for idea, part in cut.items()]


def index_off_by_one(node):
    """a[i] read as a[i + 1] or a[i - 1], for a computed index i."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, (ast.Name, ast.BinOp, ast.UnaryOp, ast.Call)) \
            and isinstance(node.ctx, ast.Load):
        return [(_edited(node, lambda n, d=d: setattr(n, "slice", ast.BinOp(n.slice, ast.Add(), _num(d)))),
                 "an index is one off") for d in (1, -1)]


def negate_exponent(node):
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        if isinstance(node.right, ast.UnaryOp) and isinstance(node.right.op, ast.USub):
            return [(ast.BinOp(node.left, ast.Pow(), node.right.operand), "an exponent has the wrong sign")]
        if not isinstance(node.right, ast.Constant):
            return [(ast.BinOp(node.left, ast.Pow(), ast.UnaryOp(ast.USub(), node.right)), "an exponent has the wrong sign")]


def new_axis(node):
    """x[:, None] written x (no axis added), and a range made a column where it should not be."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple) and isinstance(node.ctx, ast.Load) \
            and any(isinstance(e, ast.Constant) and e.value is None for e in node.slice.elts) \
            and all(isinstance(e, ast.Slice) and e.lower is e.upper is e.step is None or isinstance(e, ast.Constant)
                    and e.value is None for e in node.slice.elts):
        return [(node.value, "an axis is not added (no [:, None]), so a product or quotient broadcasts the wrong way")]
    if _is_call(node, "arange"):
        column = ast.Subscript(node, ast.Tuple([ast.Slice(), ast.Constant(None)], ast.Load()), ast.Load())
        return [(column, "a range is made a column (an axis added), so it broadcasts across the other axis")]


def add_keepdims(node):
    if _is_call(node, "sum", "mean", "max") and _keyword(node, "axis") is not None and _keyword(node, "keepdims") is None:
        new = _edited(node, lambda n: n.keywords.append(ast.keyword("keepdims", ast.Constant(True))))
        return [(new, f"`{_name(node)}` keeps the axis it reduces (keepdims=True), so the result has an extra axis")]



def power_off_by_one(node):
    """x ** n written x ** (n - 1) or x ** (n + 1), and a * x * x written a * x or a * x * x * x: a
    power not lowered in a derivative, or lowered twice."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and (_int(node.right) or 0) >= 2:
        n = _int(node.right)
        return [(ast.BinOp(node.left, ast.Pow(), _num(m)), f"a power is one off: x ** {m} where x ** {n} belongs "
                                                         f"(a power not lowered in a derivative, or lowered twice)")
                for m in (n - 1, n + 1)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) and isinstance(node.right, ast.Name) \
            and isinstance(node.left, (ast.Name, ast.BinOp)) \
            and ast.unparse(getattr(node.left, "right", node.left)) == node.right.id:
        idea = (f"a power is one off: `{node.right.id}` is multiplied in once too {{}} (a power not lowered in a "
                f"derivative, or lowered twice)")
        return [(ast.BinOp(node, ast.Mult(), node.right), idea.format("often")), (node.left, idea.format("rarely"))]


def power_as_product(node):
    """a ** b written a * b: a power read as a product (2 ** H as 2 * H)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        return [(ast.BinOp(node.left, ast.Mult(), node.right), "`*` is written where `**` belongs: a power is "
                                                                "taken as a product")]


_FILLS = {"zeros": "ones", "ones": "zeros", "zeros_like": "ones_like", "ones_like": "zeros_like"}


def other_fill(node):
    """np.ones where np.zeros belongs, or the reverse: a start value or a default copied from the wrong line."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _name(node) in _FILLS:
        new = _edited(node, lambda n: setattr(n.func, "attr", _FILLS[n.func.attr]))
        return [(new, f"`{_FILLS[node.func.attr]}` is used where `{node.func.attr}` belongs: the array starts "
                      f"from the wrong value")]


def slice_on_columns(node):
    """a[:n] written a[:, :n]: a slice taken along the second axis instead of the first."""
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and isinstance(node.slice, ast.Slice) \
            and node.slice.step is None:
        new = _edited(node, lambda n: setattr(n, "slice", ast.Tuple([ast.Slice(), n.slice], ast.Load())))
        return [(new, "a slice is taken along the second axis (columns) instead of the first (rows)")]


def drop_argument(notebook_names):
    """The operator that leaves out the last argument of a call to a notebook function or a method
    of an attribute (self.attention.forward): its default, if it has one, is used instead."""
    def drop_argument(node):
        if isinstance(node, ast.Call) and len(node.args) >= 2 and not any(isinstance(a, ast.Starred)
                                                                          for a in node.args) \
                and (isinstance(node.func, ast.Name) and node.func.id in notebook_names
                     or isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Attribute)):
            new = _edited(node, lambda n: n.args.pop())
            return [(new, f"the call of `{_name(node)}` leaves out its last argument, "
                          f"`{ast.unparse(node.args[-1])}`, so its default is used")]
    return drop_argument


def other_default(function: ast.FunctionDef):
    """The operator that gives a True or False default of the signature the other value: a call that
    leaves the argument out gets the wrong behaviour."""
    args = function.args
    named = list(zip(args.args[len(args.args) - len(args.defaults):], args.defaults)) + [
        (a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
    flags = {(d.lineno, d.col_offset): a.arg for a, d in named
             if isinstance(d, ast.Constant) and isinstance(d.value, bool)}

    def other_default(node):
        where = (getattr(node, "lineno", None), getattr(node, "col_offset", None))
        if isinstance(node, ast.Constant) and isinstance(node.value, bool) and where in flags:
            return [(ast.Constant(not node.value), f"the default of `{flags[where]}` in the signature is "
                                                   f"{not node.value}, not {node.value}")]
    return other_default


def swap_steps(function: ast.FunctionDef):
    """The operator that applies two steps in the other order: f(g(x)) written g(f(x)), and
    `t = g(x)` then `f(t)` written `t = f(x)` then `g(t)` (a layer norm after the attention instead
    of before it). Each function keeps its other arguments."""
    made = {}       # the variable a step's call gives -> that call
    for statement in ast.walk(function):
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                and isinstance(statement.targets[0], ast.Name) and _step(statement.value):
            made.setdefault(statement.targets[0].id, statement.value)
    pairs = {}      # the position of each call of a pair -> (f's call, g's call, g's variable)
    for outer in ast.walk(function):
        if _step(outer) and isinstance(outer.args[0], ast.Name) and outer.args[0].id in made:
            inner = made[outer.args[0].id]
            pairs[_at(outer)] = pairs[_at(inner)] = (outer, inner, outer.args[0].id)

    def swap_steps(node):
        if _step(node) and _step(node.args[0]):
            inner = node.args[0]
            outer = _edited(node, lambda o: o.args.__setitem__(0, inner.args[0]))         # f(x) ...
            swapped = _edited(inner, lambda n: n.args.__setitem__(0, outer))             # ... inside g
            return [(swapped, f"`{_called(node)}` and `{_called(inner)}` are applied in the other order")]
        if not _step(node) or _at(node) not in pairs:
            return None
        outer, inner, variable = pairs[_at(node)]
        group = (f"`{_called(outer)}` and `{_called(inner)}` are applied in the other order, "
                 f"where `{variable}` is computed")
        if _at(node) == _at(inner):      # f takes g's place, applied to g's input ...
            return [(_edited(outer, lambda o: o.args.__setitem__(0, node.args[0])), None, group)]
        return [(_edited(inner, lambda n: n.args.__setitem__(0, outer.args[0])), None, group)]     # ... and g f's
    return swap_steps


def _step(node) -> bool:
    """A call that transforms its first argument: a function of the notebook, a layer's method."""
    return isinstance(node, ast.Call) and bool(node.args) and not isinstance(node.args[0], ast.Starred) \
        and _name(node) not in _BUILDERS \
        and not (isinstance(node.func, ast.Attribute) and _name(node) in _METHODS_OF_ARRAYS)


def _called(node) -> str:
    return ast.unparse(node.func)


def _at(node) -> tuple:
    return node.lineno, node.col_offset, node.end_lineno, node.end_col_offset


STATEMENT = "statement: "       # a group idea with this prefix joins the rewrites of one statement only
NONFINITE = {"drop_guard"}      # operators whose rewrites leave out a guard against NaN or inf
OPERATORS = [swap_matmul, drop_transpose, permute_axes, reshape_in_place_of_transpose, other_axis,
             drop_keepdims, off_by_one, rescale, flip_sign, drop_term, mean_for_sum, finite_mask,
             transpose_product, transpose_operand, drop_factor, div_for_mult, swap_returned, reshape_sizes,
             ignore_condition, drop_keyword, sibling_function, drop_guard, term_outside, term_inside, unbiased,
             mirror_mask, shift_slice, drop_call, shape_read, drop_step, halves_for_interleaved, index_for_element,
             boundary, drop_update, reverse, index_off_by_one, negate_exponent, new_axis, add_keepdims,
             drop_brackets, loop_items, root_slips, other_fill, slice_on_columns, power_off_by_one,
             power_as_product]


def swap_args(notebook_names):
    """The operator that swaps two positional arguments of a call to a notebook function."""
    def swap_args(node):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in notebook_names \
                and not any(isinstance(a, ast.Starred) for a in node.args):
            out = []
            for i, j in itertools.combinations(range(len(node.args)), 2):
                new = copy.deepcopy(node)
                new.args[i], new.args[j] = new.args[j], new.args[i]
                which = "the first two arguments" if (i, j) == (0, 1) else f"arguments {i + 1} and {j + 1}"
                out.append((new, f"{which} of `{node.func.id}` are passed in the wrong order",
                            f"{which} of every call to `{node.func.id}` are passed in the wrong order"))
            return out
    return swap_args
