"""Mistakes derived from the reference, not only listed: every rewrite that a mutation operator
(operators.py) makes of one place of a graded function (a class's `forward`), or of a reference
function that it calls, becomes a candidate mistake with the words of its idea and of where it
happens ("`x` is used where `t3` belongs, in what is returned").

The hidden suite asks the catalogue first and these only where no catalogued mistake fits
(checks.diagnose_part): a derived idea is named when it alone fits, or, when several fit that
return the same values on another salt's calls too, all of them (one program described in several
ways). A rewrite that the inputs cannot tell apart from another that says something else is not
named. Where no single rewrite fits, two rewrites of one function made together may (`paired`).
"""
import ast
import inspect
import textwrap
import types
from dataclasses import dataclass

from .operators import (NONFINITE, OPERATORS, STATEMENT, assigned_lines, default_for_parameter, drop_argument,
                        exchange_roles, local_names, other_default, other_name, parameters, swap_args, swap_steps)


@dataclass(frozen=True)
class Variant:
    operator: str
    idea: str               # what the rewrite does, in a student's terms
    where: str              # ", where `scores` is computed", or ""
    edits: tuple            # ((start, end, text), ...): byte ranges of the function's source and their new text
    source: str             # the rewritten function


# ------------------------------------------------------------------------------ the variants

def _where(statement) -> str:
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
        return f", where `{statement.targets[0].id}` is computed"
    if isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name):
        return f", where `{statement.target.id}` is updated"
    if isinstance(statement, ast.Return):
        return ", in what is returned"
    return ""


def _statements(function) -> dict:
    """{id(node): the innermost statement holding it} for every expression node of `function`."""
    owner = {}

    def visit(node, statement):
        for child in ast.iter_child_nodes(node):
            here = child if isinstance(child, ast.stmt) else statement
            owner[id(child)] = here
            visit(child, here)
    visit(function, function)
    return owner


def _edit(lines: list, node, replacement) -> tuple:
    """(start, end, text): the byte range of `node` (`lines`: where each line starts) and the text that takes its place."""
    start = lines[node.lineno - 1] + node.col_offset
    end = lines[node.end_lineno - 1] + node.end_col_offset
    text = ast.unparse(replacement)
    if isinstance(node, ast.stmt):
        text = text.replace("\n", "\n" + " " * node.col_offset)
    elif not isinstance(node, ast.Slice):
        text = f"({text})"
    return start, end, text


def _spliced(source: str, edits) -> str:
    encoded = source.encode()
    for start, end, text in sorted(edits, reverse=True):
        encoded = encoded[:start] + text.encode() + encoded[end:]
    return encoded.decode()


def variants(source: str, operators) -> list:
    """One Variant per place of the function defined by `source` that an operator rewrites and per
    rewrite there, and one per idea that an operator names for several places at once (all of
    them rewritten)."""
    function = ast.parse(source).body[0]
    owner = _statements(function)
    single, together = [], {}
    for node in ast.walk(function):
        for operator in operators:
            for replacement, idea, *everywhere in operator(node) or []:
                if idea:
                    single.append((operator.__name__, idea, _where(owner.get(id(node))), [(node, replacement)]))
                if everywhere:
                    statement = owner.get(id(node))
                    scope = id(statement) if everywhere[0].startswith(STATEMENT) else None
                    key = (operator.__name__, everywhere[0].removeprefix(STATEMENT), scope)
                    together.setdefault(key, []).append((node, replacement, _where(statement) if scope else ""))
    single += [(operator, idea, edits[0][2], [e[:2] for e in edits])
               for (operator, idea, _), edits in together.items() if len(edits) > 1]
    encoded = source.encode()
    lines = [0]
    for line in encoded.splitlines(keepends=True):
        lines.append(lines[-1] + len(line))
    out, seen = [], {source}
    for operator, idea, where, edits in single:
        edits = tuple(_edit(lines, node, replacement) for node, replacement in edits)
        text = _spliced(source, edits)
        if text not in seen:
            seen.add(text)
            out.append(Variant(operator, idea, where, edits, text))
    return out


def function_source(function) -> str:
    return textwrap.dedent(inspect.getsource(function))


def compiled(source: str, namespace: dict):
    """The function `source` defines, its global names looked up in a copy of `namespace`."""
    scope = dict(namespace)
    exec(compile(source, "<derived>", "exec"), scope)
    return scope[ast.parse(source).body[0].name]


def _callees(function, module: dict) -> list:
    """The functions of the reference module that `function` (or a function nested in it) calls by name."""
    names, stack = set(), [function.__code__]
    while stack:
        code = stack.pop()
        names |= set(code.co_names)
        stack += [c for c in code.co_consts if isinstance(c, types.CodeType)]
    return [module[n] for n in sorted(names) if isinstance(module.get(n), types.FunctionType)
            and module[n].__module__ == function.__module__ and module[n] is not function]


def _with_global(function, name: str, value):
    scope = dict(function.__globals__)
    scope[name] = value
    new = types.FunctionType(function.__code__, scope, function.__name__, function.__defaults__, function.__closure__)
    new.__kwdefaults__ = function.__kwdefaults__
    return new


@dataclass(frozen=True)
class Derived:
    idea: str
    impl: object            # a function that takes the target's place
    nonfinite: bool         # the idea is about values that overflow or are undefined (Mistake.nonfinite)
    function: object        # the function rewritten: the target or a reference function it calls
    variant: Variant


def _in_place_of(target, function, source: str):
    """`target` with `function` rewritten as `source`."""
    rewritten = compiled(source, target.__globals__)
    return rewritten if function is target else _with_global(target, function.__name__, rewritten)


def _said(target, function, idea: str) -> str:
    return idea if function is target else f"{idea}, in the step that `{function.__name__}` performs"


def derive(target, notebook_names) -> list:
    """[Derived]: the rewrites of `target` (a graded function, or a class's forward) and of the
    reference functions it calls, each as a function that takes `target`'s place; per function,
    in the order of the operators (a step left out before a variable read in its place)."""
    out = []
    for function in [target] + _callees(target, target.__globals__):
        source = function_source(function)
        tree = ast.parse(source).body[0]
        operators = OPERATORS + [swap_args(notebook_names), drop_argument(notebook_names)] + (
            [other_name(local_names(tree), parameters(tree), assigned_lines(tree)), exchange_roles(parameters(tree)),
             default_for_parameter(tree), other_default(tree), swap_steps(tree)] if function is target else [])
        order = [operator.__name__ for operator in operators]
        for v in sorted(variants(source, operators), key=lambda v: order.index(v.operator)):
            out.append(Derived(_said(target, function, v.idea + v.where), _in_place_of(target, function, v.source),
                               v.operator in NONFINITE, function, v))
    return out


def paired(target, first: Derived, second: Derived) -> Derived | None:
    """The two rewrites made together, when they rewrite one function at places apart."""
    if first.function is not second.function or any(
            a < d and c < b for a, b, _ in first.variant.edits for c, d, _ in second.variant.edits):
        return None
    edits = first.variant.edits + second.variant.edits
    (one, here), (other, there) = (first.variant.idea, first.variant.where), (second.variant.idea, second.variant.where)
    if one == other:
        idea = f"{one} at two places{here if here == there else here + ' and' + there.removeprefix(',')}"
    else:
        idea = f"two things at once: {one + here}; and also {other + there}"
    variant = Variant(first.variant.operator, idea, "", edits, _spliced(function_source(first.function), edits))
    return Derived(_said(target, first.function, idea),
                   _in_place_of(target, first.function, variant.source),
                   first.nonfinite or second.nonfinite, first.function, variant)
