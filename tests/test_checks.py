"""The expectations every lab's suite shares (`Trial` in autograder/checks.py), on a suite of one
part: the failure each one gives on a wrong result, and full marks on a right one."""
import numpy as np
import pytest

from autograder.checks import FLOAT32, FLOAT64, Suite, run_part
from autograder.compare import mismatch
from autograder.runners import LocalRunner
from autograder.worker.invoke import Call


def pair(x):
    """x (N, d) -> (2x (N, d), row sums (N,))."""
    return 2.0 * x, x.sum(axis=-1)


def shapes_and_items_suite() -> Suite:
    suite = Suite("demo", reference={"pair": pair}, points={"pair": 3}, kinds={"pair": "function"},
                  output_names={"pair": ("doubled", "sums")})

    @suite.check("pair", "returns (doubled, sums) with the right shapes", 1, tol=None)
    def _(t):
        t.expect_arrays(t.student(Call("pair", (t.normal(3, 2),))), [(3, 2), (3,)])

    @suite.check("pair", "the sums", 1)
    def _(t):
        t.expect_items(Call("pair", (t.normal(4, 2),)), [1])

    @suite.check("pair", "accepts float32 inputs", 1, tol=FLOAT32, needs="the sums")
    def _(t):
        t.expect_float32_close(lambda x: Call("pair", (x,)), t.normal(3, 5))

    return suite


def half_for_float32(x):
    return 2.0 * x, (x.astype(np.float16) if x.dtype == np.float32 else x).sum(axis=-1)


WRONG = {   # the student's pair -> the message of each check (None: passed)
    "only the first item": (lambda x: 2.0 * x, [
        "returned an array of shape (3, 2); expected a tuple (doubled, sums)",
        "pair(array(4, 2)): returned an array of shape (4, 2); expected a tuple of 2 (doubled, sums)",
        "not credited"]),
    "sums kept as a column": (lambda x: (2.0 * x, x.sum(axis=-1, keepdims=True)), [
        "sums has shape (3, 1); expected (3,)", "pair(array(4, 2)): sums: shape (4, 1), expected (4,)",
        "not credited"]),
    "integer sums": (lambda x: (2.0 * x, np.round(x.sum(axis=-1)).astype(int)), [
        "sums has dtype int64; expected floating-point numbers", "pair(array(4, 2)): sums: ",
        "not credited"]),
    "a wrong first item, right sums": (lambda x: (x, x.sum(axis=-1)), [None, None, "pair(array(3, 5)): doubled: "]),
    "half precision for float32 inputs": (half_for_float32, [
        None, None, "(the same inputs in float64 give the right result: in this precision the computation "
                    "loses more than it needs to, through a cast to a lower precision"]),
}


@pytest.mark.parametrize("wrong", WRONG, ids=str)
def test_each_shared_expectation_fails_on_its_wrong_result(wrong):
    student, expected = WRONG[wrong]
    suite = shapes_and_items_suite()
    result = run_part(suite, "pair", LocalRunner({"pair": student}, suite.reference))
    for check, message in zip(result.checks, expected):
        if message is None:
            assert check.status == "passed", (check.title, check.message)
        else:
            assert check.status != "passed" and message in check.message, (check.title, check.message)


def test_the_reference_passes_every_shared_expectation():
    suite = shapes_and_items_suite()
    result = run_part(suite, "pair", LocalRunner({"pair": pair}, suite.reference))
    assert [c.status for c in result.checks] == ["passed"] * 3


def test_a_numpy_scalar_is_named_by_its_type():
    """Not "an array of shape ()", which reads as if an array had been returned."""
    problem = mismatch(np.float64(1.0), (np.zeros(2), np.zeros(2)), 0, 0, ("output", "weights"))
    assert problem == "returned a value of type float64; expected a tuple of 2 (output, weights)"


def test_a_check_credited_on_a_right_result_must_name_the_check_to_fix():
    """Its 'not credited' message points to `needs`: registering one without it is refused."""
    suite = Suite("demo", reference={"pair": pair}, points={"pair": 1}, kinds={"pair": "function"},
                  output_names={"pair": ("doubled", "sums")})
    with pytest.raises(ValueError, match="credited on a right result"):
        @suite.check("pair", "does not modify its input", 1, tol=None)
        def _(t):
            t.expect_inputs_unchanged(Call("pair", (t.normal(3, 2),)))


def test_a_difference_beyond_six_digits_is_shown_with_the_digits_that_differ():
    message = mismatch(np.array([0.1340690, 2.0]), np.array([0.1340693, 2.0]), 1e-6, 1e-8)
    assert "got 0.134069, expected 0.1340693" in message, message


def test_a_result_computed_in_float32_is_named_so_and_only_then():
    """At float64 tolerance, a result within float32's digits of the right one whose every value
    is a float32 number was computed or rounded in float32 (float64 results almost never are):
    the message says so. Not for a float64 result that is merely off, nor at float32 tolerance,
    nor when the expected values are float32 numbers themselves, nor for a wrong result that
    happens to hold float32 numbers (zeros, a 0/1 mask, whole numbers)."""
    expected = np.random.default_rng(0).standard_normal((3, 4))
    single = mismatch(expected.astype(np.float32).astype(float), expected, FLOAT64.rtol, FLOAT64.atol)
    assert single and single.endswith("keep float64)") and "every value is a float32 number" in single
    assert "float32" not in mismatch(expected * (1 + 1e-7), expected, FLOAT64.rtol, FLOAT64.atol)
    off = (expected + 0.01).astype(np.float32).astype(float)
    assert "float32" not in mismatch(off, expected, FLOAT32.rtol, FLOAT32.atol)
    for wrong in (off, np.zeros_like(expected), (expected > 0).astype(float), np.round(expected)):
        assert "float32" not in mismatch(wrong, expected, FLOAT64.rtol, FLOAT64.atol)   # wrong, not rounded
    halves = np.arange(12.0).reshape(3, 4) / 2
    assert "float32" not in mismatch(halves + 1, halves, FLOAT64.rtol, FLOAT64.atol)
