"""Running the suite in this process, against a namespace (a notebook's globals, a module).

This is the runner of the nbgrader hidden-test cells and of the project's mutant bank. It is
not a security boundary: `attnlab grade` runs student code in the sandboxed worker instead.
Results still pass through the wire format, so that both runners judge exactly the same values.
"""
import contextlib
import io
import traceback
import warnings

import numpy as np

from .checks import StudentError
from .worker.invoke import execute
from .worker.protocol import ProtocolError, decode, encode

_MISSING = object()


def describe_exception(exc: BaseException, limit: int = 400) -> str:
    """`raised ValueError: ... (line 7 of softmax: z -= z.max())`, from the innermost frame."""
    text = f"raised {type(exc).__name__}: {exc}"
    frames = traceback.extract_tb(exc.__traceback__)
    if frames:
        last = frames[-1]
        where = f"line {last.lineno} of {last.name}" + (f": {last.line.strip()}" if last.line else "")
        text += f" ({where})"
    return text if len(text) <= limit else text[:limit] + "..."


@contextlib.contextmanager
def quiet():
    """Silence the student's prints and NumPy warnings (stderr output zeroes an nbgrader cell)."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), \
            warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        yield


class LocalRunner:
    def __init__(self, namespace: dict, reference: dict):
        self.namespace, self.reference = namespace, reference

    @contextlib.contextmanager
    def part(self, name: str, oracles: list):
        """Swap in the reference versions of `oracles` (the earlier parts) while `name` is checked."""
        saved = {n: self.namespace.get(n, _MISSING) for n in oracles}
        self.namespace.update({n: self.reference[n] for n in oracles})
        try:
            yield True
        finally:
            for n, value in saved.items():
                if value is _MISSING:
                    self.namespace.pop(n, None)
                else:
                    self.namespace[n] = value

    def run(self, call):
        try:
            with quiet():
                value, given = execute(call, self.namespace)
        except (Exception, SystemExit) as exc:
            raise StudentError(describe_exception(exc)) from None
        try:
            return decode(encode(value)), given
        except ProtocolError as exc:
            raise StudentError(f"returned a value that cannot be graded: {exc}") from None
