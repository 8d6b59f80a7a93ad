"""Candidate mistakes derived from the reference solutions, and what the suite makes of them.

The catalogues (autograder/labs/<lab>/mistakes.py) list the mistakes someone thought of; these
are derived. Each mutation operator rewrites one place of a graded function (or of a class's
`forward`) in the reference module: operands of @ swapped, a transpose dropped, another axis,
keepdims dropped, an off-by-one in k=, arange and slice bounds, a scale dropped, unrooted or
inverted, a sign flipped, a term dropped, a mean for a sum (or the reverse), two arguments of a
notebook function swapped, a finite or lower-triangular mask, an augmented (in-place) assignment,
float32 arithmetic. `survey` grades every candidate with the hidden suite and asks three things:

- escapes: candidates that lose nothing (equivalent rewrites, or a gap in the checks);
- confusions: two candidates that differ on other hidden inputs (other salts) but return the same
  results on every hidden call of one salt: those inputs cannot tell them apart;
- wrong names: a candidate named as a catalogued mistake whose own results differ from that
  mistake's on other hidden inputs (the name would be wrong for someone).

    python tests/mutations.py lab05_transformers [part ...]
"""
import ast
import contextlib
import copy
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path[:0] = [str(Path(__file__).resolve().parents[1])]
from autograder import derived, labs, operators  # noqa: E402
from autograder.checks import ALIKE, FLOAT32, FLOAT64, rounding_alike, run_part  # noqa: E402
from autograder.compare import close  # noqa: E402
from autograder.runners import LocalRunner  # noqa: E402
from autograder.worker.invoke import execute, inputs  # noqa: E402

PROBE_SALTS = [b"probe-1", b"probe-2"]


@dataclass(frozen=True)
class Candidate:
    part: str
    operator: str
    site: int
    code: str       # the whole answer cell


# ------------------------------------------------------------------------------ the operators
# The operators live in autograder.operators (the grader names what they derive); the survey uses
# the classic ones, plus an in-place write and float32 arithmetic, which only a check recognises.
SURVEYED = [operators.swap_matmul, operators.drop_transpose, operators.other_axis, operators.drop_keepdims,
            operators.off_by_one, operators.rescale, operators.flip_sign, operators.drop_term, operators.mean_for_sum,
            operators.finite_mask]
# Every operator the grader derives with, in the full tier; `boundary` aside: where a running
# total equals top_p exactly, the docstring accepts > and >= alike (rounding decides).
EVERY = [op for op in operators.OPERATORS if op is not operators.boundary]


def _each_site(tree, selected, rewrite) -> list:
    """One variant of `tree` per node that `selected` accepts, that node changed by `rewrite`
    (which returns a node to put in its place within a statement list)."""
    out = []
    for i in range(sum(map(selected, ast.walk(tree)))):
        new = copy.deepcopy(tree)
        node = [n for n in ast.walk(new) if selected(n)][i]
        for parent in ast.walk(new):
            for _, value in ast.iter_fields(parent):
                if isinstance(value, list) and node in value:
                    value[value.index(node)] = rewrite(node)
        out.append(new)
    return out


def _in_place(tree) -> list:
    """Variants with one `x = x op y` written `x op= y`."""
    return _each_site(tree, lambda n: isinstance(n, ast.Assign) and len(n.targets) == 1
                      and isinstance(n.targets[0], ast.Name) and isinstance(n.value, ast.BinOp)
                      and isinstance(n.value.left, ast.Name) and n.value.left.id == n.targets[0].id,
                      lambda n: ast.AugAssign(n.targets[0], n.value.op, n.value.right))


def _in_float32(function: ast.FunctionDef) -> ast.FunctionDef:
    """The function with every float array argument cast to float32 on entry."""
    new = copy.deepcopy(function)
    casts = [ast.parse(f"{a.arg} = {a.arg}.astype(np.float32) if isinstance({a.arg}, np.ndarray) "
                       f"and {a.arg}.dtype.kind == 'f' else {a.arg}").body[0]
             for a in new.args.args if a.arg != "self"]
    doc = 1 if ast.get_docstring(new) else 0
    new.body[doc:doc] = casts
    return new


# ------------------------------------------------------------------------------ the candidates

def _target(tree: ast.Module, part: str):
    """The graded definition in the module and the function to mutate (a class's forward)."""
    node = next(n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == part)
    if isinstance(node, ast.ClassDef):
        return node, next(n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "forward")
    return node, node


def candidates(assignment: str, parts=None, surveyed=None) -> list:
    """Every candidate mistake of every graded part (or of `parts`), from the `surveyed` operators
    (default SURVEYED)."""
    suite = labs.load(assignment).suite
    tree = ast.parse(labs.reference_path(assignment).read_text())
    notebook = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    out = []
    for part in parts or suite.parts:
        definition, function = _target(tree, part)

        def cell(new_function, definition=definition):
            if not isinstance(definition, ast.ClassDef):
                return ast.unparse(new_function)
            new = copy.deepcopy(definition)
            new.body = [new_function if isinstance(n, ast.FunctionDef) and n.name == "forward" else n
                        for n in new.body]
            return ast.unparse(new)

        seen = {ast.unparse(function)}
        variants = [("float32", _in_float32(function))]
        source = derived.function_source(getattr(suite.reference[part], "forward", suite.reference[part]))
        variants += [(v.operator, ast.parse(v.source).body[0])
                     for v in derived.variants(source, (surveyed or SURVEYED) + [operators.swap_args(notebook)])]
        variants += [("in_place", v) for v in _in_place(function)]
        for site, (operator, variant) in enumerate(variants):
            ast.fix_missing_locations(variant)
            text = ast.unparse(variant)
            if text not in seen:
                seen.add(text)
                out.append(Candidate(part, operator, site, cell(variant)))
    return out


# ------------------------------------------------------------------------------ the survey

class _Recorder(LocalRunner):
    """LocalRunner that keeps every call the suite makes."""

    def __init__(self, namespace, reference):
        super().__init__(namespace, reference)
        self.calls: list = []

    def run(self, call, inputs=False):
        self.calls.append(call)
        return super().run(call, inputs)


def namespace(assignment: str, *cells) -> dict:
    ns: dict = {}
    for source in (labs.reference_path(assignment).read_text(), *cells):
        exec(compile(source, "<cell>", "exec"), ns)
    return ns


def hidden_calls(assignment: str, part: str, salt: bytes) -> list:
    """Every call the suite makes to grade the reference's `part` under `salt`."""
    suite = labs.load(assignment).suite
    recorder = _Recorder(namespace(assignment), suite.reference)
    run_part(suite, part, recorder, salt)
    return recorder.calls


def outcomes(ns_or_namespace: dict, calls: list) -> list:
    """The result (or the exception's type) of each call against a namespace."""
    out = []
    for call in calls:
        try:
            with np.errstate(all="ignore"):
                out.append(execute(call, ns_or_namespace)[0])
        except Exception as exc:  # a candidate may raise: that is its outcome
            out.append(("raises", type(exc).__name__))
    return out


def _raised(value) -> bool:
    return isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str) and value[0] == "raises"


def same(a: list, b: list, calls: list) -> bool:
    """The same outcomes of `calls`: equal exception types, or results within the suite's
    tolerance (its float32 tolerance for calls with float32 arrays)."""
    for x, y, call in zip(a, b, calls):
        single = any(array.dtype == np.float32 for array in inputs(call))
        tol = FLOAT32 if single else FLOAT64
        if _raised(x) or _raised(y):
            if not (_raised(x) and _raised(y) and x[1] == y[1]):
                return False
        elif not close(x, y, tol.rtol, tol.atol):
            return False
    return True


def _first_difference(mine: list, theirs: list, calls: list, key: str, rounding=(), reference=None) -> str:
    """'' if one of `theirs` (the outcomes of the mistakes that say the same) is `mine` (for a
    precision mistake, flagged in `rounding`: as far from the `reference` outcomes as its own,
    checks.rounding_alike); else the first call where the closest of them differs, named with the
    mistake's key."""
    if any(same(mine, other, calls) for other in theirs):
        return ""
    if reference is not None and any(
            flag and all(not (_raised(x) or _raised(y) or _raised(r)) and rounding_alike(x, y, r, FLOAT64.atol)
                         for x, y, r in zip(mine, other, reference))
            for other, flag in zip(theirs, rounding)):
        return ""
    other = theirs[0]
    where = next(c for c, x, y in zip(calls, mine, other) if not same([x], [y], [c]))
    return f"{key} at {where.describe()}"


@dataclass
class Finding:
    candidate: Candidate
    lost: float
    differs: bool           # its results differ from the reference's on other salts' hidden calls
    named: tuple            # the causes named
    wrong_names: tuple      # named keys whose results differ from the candidate's on other inputs
                            # (those a check recognises itself have no results: a person judges them)


def survey(assignment: str, parts=None, salt: bytes = b"survey", surveyed=None, derive: bool = False) -> dict:
    """{part: (findings, confusions)}: each candidate graded under `salt`, its named causes
    checked on the hidden calls of other salts; confusions are pairs of candidates (by index)
    alike on every call of `salt` and different on other salts' calls. `derive`: the grader
    names derived mistakes too (and they are checked like the catalogue's); else the catalogue
    alone (derived names cost a grading of every rewrite)."""
    suite = labs.load(assignment).suite
    report = {}
    with contextlib.ExitStack() as stack:
        if not derive:
            stack.enter_context(_catalogue_only(suite))
        for part in parts or suite.parts:
            report[part] = _survey_part(assignment, suite, part, salt, surveyed, derive)
    return report


@contextlib.contextmanager
def _catalogue_only(suite):
    suite.derived = lambda part: []
    try:
        yield
    finally:
        del suite.derived


def _survey_part(assignment, suite, part, salt, surveyed, derive) -> tuple:
    here = hidden_calls(assignment, part, salt)
    there = [c for s in PROBE_SALTS for c in hidden_calls(assignment, part, s)]
    known: dict = {}        # message -> the mistakes that say it
    for m in suite.parts[part].mistakes + (suite.derived(part) if derive else []):
        known.setdefault(m.message, []).append(m)
    findings, signatures = [], []
    reference = outcomes(namespace(assignment), there)
    for candidate in candidates(assignment, [part], surveyed):
        try:
            ns = namespace(assignment, candidate.code)
        except Exception:  # a rewrite that does not even define the part
            continue
        result = run_part(suite, part, LocalRunner(ns, suite.reference), salt)
        named = {c.diagnosis for c in result.checks if c.status == "failed" and c.diagnosis}
        mine = outcomes(ns, there)
        wrong = []
        for diagnosis in named:
            sayers = [m for message in diagnosis.split(ALIKE) for m in known.get(message, [])]
            if sayers and all(m.impl for m in sayers):
                wrong.append(_first_difference(mine, [outcomes(suite.namespace_with(m), there) for m in sayers],
                                               there, sayers[0].key, [m.rounding for m in sayers], reference))
        findings.append(Finding(candidate, result.max_score - result.score, not same(mine, reference, there),
                                tuple(sorted(named)), tuple(w for w in wrong if w)))
        signatures.append((outcomes(ns, here), mine))
    confusions = [(i, j) for i in range(len(findings)) for j in range(i)
                  if findings[i].lost and findings[j].lost
                  and same(signatures[i][0], signatures[j][0], here) and not same(signatures[i][1], signatures[j][1], there)]
    return findings, confusions


def main() -> None:
    assignment, parts = sys.argv[1], sys.argv[2:] or None
    for part, (findings, confusions) in survey(assignment, parts).items():
        caught = [f for f in findings if f.lost]
        named = [f for f in caught if f.named]
        escapes = [f for f in findings if f.differs and not f.lost]
        print(f"\n== {part}: {len(findings)} candidates, {len(caught)} lose points, {len(escapes)} escape, "
              f"{len(named)} named, {sum(bool(f.wrong_names) for f in findings)} named wrongly, "
              f"{len(confusions)} confusions")
        for f in findings:
            tag = ("ESCAPES" if not f.lost and f.differs else "equivalent" if not f.lost else f"WRONG NAME {f.wrong_names}" if f.wrong_names
                   else f"named {f.named}" if f.named else "unnamed")
            if tag.startswith(("named", "equivalent")):
                continue
            body = f.candidate.code.split("\n")
            print(f"  [{f.candidate.operator}#{f.candidate.site}] {tag} (-{f.lost:g})")
            print("      " + "\n      ".join(line for line in body if line.strip() and not line.strip().startswith(('"', "'")))[:1200])
        for i, j in confusions:
            print(f"  CONFUSED: {findings[i].candidate.operator}#{findings[i].candidate.site} "
                  f"with {findings[j].candidate.operator}#{findings[j].candidate.site}")


if __name__ == "__main__":
    main()
