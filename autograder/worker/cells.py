"""IPython's work on the release's own cells, done once, in the zygote.

To run a cell, IPython transforms its text (magics, `!` commands), parses it and compiles each
statement: about 30 ms for a whole lab notebook, paid again by every submission. Most cells of
a submission are the release's, unchanged, so the zygote does that work once for them and
every notebook process inherits it: `transform_cell` and the compiler look a cell up first. A
cell the student wrote or changed is not found and goes through IPython as usual. Nothing is
looked up once student code has changed how IPython reads cells (input or AST transformers,
top-level await), and single-line cells, whose reading depends on the namespace, are left out.
"""
import __future__
import ast
import json
import os

from IPython.core.compilerop import CachingCompiler

_FUTURE = 0
for _name in __future__.all_feature_names:
    _FUTURE |= getattr(__future__, _name).compiler_flag


class ReleaseCompiler(CachingCompiler):
    """IPython's compiler, which knows the parse and the code of the release's cells."""

    def __init__(self, shell):
        super().__init__()
        self.shell = shell
        self.trees: dict = {}          # (cell, name, flags) -> its parse
        self.codes: dict = {}          # (id(statement), symbol, name, flags) -> (statement, code)
        self.transformed: dict = {}    # raw cell -> transformed cell
        self.configuration = self._configuration()

    def _configuration(self) -> tuple:
        shell, manager = self.shell, self.shell.input_transformer_manager
        return (tuple(manager.cleanup_transforms), tuple(manager.line_transforms),
                tuple(manager.token_transformers), tuple(shell.input_transformers_post),
                tuple(shell.ast_transformers), shell.autoawait)

    def _usable(self) -> bool:
        return self._configuration() == self.configuration

    def transform_cell(self, raw_cell: str) -> str:
        found = self.transformed.get(raw_cell)
        if found is not None and self._usable():
            return found
        return type(self.shell).transform_cell(self.shell, raw_cell)

    def ast_parse(self, source: str, filename: str = "<unknown>", symbol: str = "exec"):
        tree = self.trees.get((source, filename, self.flags)) if symbol == "exec" else None
        if tree is None or not self._usable():
            return super().ast_parse(source, filename, symbol)
        return ast.Module(body=list(tree.body), type_ignores=[])   # IPython may extend the list

    def __call__(self, source, filename, symbol, *args, **kwargs):
        body = getattr(source, "body", None)
        if isinstance(body, list) and len(body) == 1:
            found = self.codes.get((id(body[0]), symbol, filename, self.flags))
            if found is not None and found[0] is body[0] and self._usable():
                return found[1]
        return super().__call__(source, filename, symbol, *args, **kwargs)

    def learn(self, raw_cell: str) -> None:
        """Transform, parse and compile `raw_cell` as IPython's `run_cell` would (the last
        statement interactively when it is an expression), and remember the results."""
        cell = type(self.shell).transform_cell(self.shell, raw_cell)
        if len(cell.splitlines()) <= 1:
            return
        name = self.cache(cell, self.shell.execution_count, raw_code=raw_cell)
        flags = self.flags
        tree = super().ast_parse(cell, filename=name)
        last = len(tree.body) - 1
        codes = {}
        for index, statement in enumerate(tree.body):
            symbol = "single" if index == last and isinstance(statement, ast.Expr) else "exec"
            module = ast.Interactive([statement]) if symbol == "single" else ast.Module([statement], [])
            with self.extra_flags(getattr(ast, "PyCF_ALLOW_TOP_LEVEL_AWAIT", 0) if self.shell.autoawait else 0):
                code = super().__call__(module, name, symbol)
                if code.co_flags & _FUTURE:     # IPython would remember the future import: not here
                    return
                codes[(id(statement), symbol, name, self.flags)] = (statement, code)
        self.transformed[raw_cell] = cell
        self.trees[(cell, name, flags)] = tree
        self.codes.update(codes)


def learn_release(shell, folder: str = ".") -> None:
    """Give `shell` a compiler that knows the code cells of the notebooks in `folder`."""
    compiler = ReleaseCompiler(shell)
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".ipynb"):
            continue
        try:
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                cells = json.load(f).get("cells", [])
        except (OSError, ValueError, AttributeError):
            continue
        for cell in cells if isinstance(cells, list) else ():
            source = cell.get("source", "") if isinstance(cell, dict) else None
            source = "".join(source) if isinstance(source, list) else source
            if isinstance(source, str) and cell.get("cell_type") == "code":
                try:
                    compiler.learn(source)
                except (SyntaxError, ValueError, TypeError, OverflowError, MemoryError):
                    pass    # IPython reports it when the cell runs
    shell.compile = compiler
    shell.transform_cell = compiler.transform_cell
