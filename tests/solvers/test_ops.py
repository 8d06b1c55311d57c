"""solvers.ops: the numeric fast paths give what the general paths give, symbolic stays symbolic."""
import math

import casadi as ca
import numpy as np
import pytest

from solvers import ops


def test_vertcat_of_python_floats_is_a_float_vector():
    out = ops.vertcat(0.1, -2.0, 3.5)
    assert type(out) is np.ndarray and out.dtype == np.float64 and out.shape == (3,)
    assert out.tolist() == [0.1, -2.0, 3.5]
    assert ops.vertcat(1.0).tolist() == [1.0]


@pytest.mark.parametrize("parts, expected", [
    ((1.0, 2, 3.0), [1.0, 2.0, 3.0]),                       # an int among floats
    ((1.0, np.float32(0.5), 3.0), [1.0, 0.5, 3.0]),
    ((1.0, np.array(2.0), 3.0), [1.0, 2.0, 3.0]),           # a 0-d array
    ((1.0, np.array([2.0, 2.5]), 3.0), [1.0, 2.0, 2.5, 3.0]),   # a vector between floats
    ((1.0, [2.0], 3.0), [1.0, 2.0, 3.0]),
    ((np.array([1.0, 2.0]), np.array([3.0])), [1.0, 2.0, 3.0]),  # vectors only
    ((np.array([1.0, 2.0]), np.array([3.0, 4.0])), [1.0, 2.0, 3.0, 4.0]),  # same sizes: not a matrix
    ((np.array([1, 2]), 3.0), [1.0, 2.0, 3.0]),             # an int vector
    ((), []),
])
def test_vertcat_numeric_mixtures(parts, expected):
    out = ops.vertcat(*parts)
    assert type(out) is np.ndarray and out.dtype == np.float64 and out.ndim == 1
    assert out.tolist() == expected


def test_vertcat_returns_a_new_array():
    a = np.array([1.0, 2.0])
    out = ops.vertcat(a, np.array([3.0]))
    out[0] = 7.0
    assert a[0] == 1.0


@pytest.mark.parametrize("middle", [ca.SX.sym("x"), ca.SX(2.0), ca.MX.sym("m"), ca.SX.sym("y", 2)])
def test_vertcat_with_a_casadi_part_is_casadi(middle):
    out = ops.vertcat(1.0, middle, 3.0)
    assert isinstance(out, (ca.SX, ca.MX)) and out.shape == (2 + middle.numel(), 1)
    f = ca.Function("f", [middle], [out]) if middle.is_symbolic() else None
    if f is not None:
        val = np.asarray(f(np.full(middle.numel(), 5.0)), float).ravel()
        assert val.tolist() == [1.0] + [5.0] * middle.numel() + [3.0]


def test_vertcat_with_a_dm_part_is_numeric():
    out = ops.vertcat(1.0, ca.DM(2.0), 3.0)
    assert type(out) is np.ndarray and out.tolist() == [1.0, 2.0, 3.0]


@pytest.mark.parametrize("name", ["sin", "cos", "tan", "atan", "sinh", "cosh", "tanh", "exp",
                                  "sqrt", "fabs", "log"])
def test_unary_on_a_python_float_is_math(name):
    x = 0.7
    got = getattr(ops, name)(x)
    assert type(got) is float
    assert got == getattr(math, name)(x)
    np.testing.assert_allclose(got, float(getattr(ops, name)(np.array([x]))[0]), rtol=1e-15)


def test_unary_domain_errors_give_numpy_values():
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        assert math.isnan(ops.log(-1.0))
        assert ops.log(0.0) == -np.inf
        assert math.isnan(ops.cos(np.inf))
        assert ops.exp(1e4) == np.inf


def test_unary_other_types():
    assert ops.floor(2.5) == 2.0 and ops.sign(-3.0) == -1.0
    assert ops.sin(np.array([0.0, np.pi / 2])).tolist() == [0.0, 1.0]
    assert type(ops.cos(np.float64(0.0))) is np.float64
    x = ca.SX.sym("x")
    e = ops.sin(x)
    assert isinstance(e, ca.SX)
    assert float(ca.Function("f", [x], [e])(0.3)) == pytest.approx(math.sin(0.3), rel=1e-15)


def test_entries():
    assert ops.entries(np.array([1.0, 2.0])) == [1.0, 2.0]
    assert ops.entries(np.array([[1.0], [2.0]])) == [1.0, 2.0]
    assert ops.entries(np.array([1, 2])) == [1.0, 2.0]
    x = ca.SX.sym("x", 3)
    assert [str(e) for e in ops.entries(x)] == ["x_0", "x_1", "x_2"]
    assert ops.entries(ca.DM([1.0, 2.0])) == [1.0, 2.0]


def test_entries_fast_path_equals_the_general_conversion():
    """A float64 vector (the numeric call, one test) and every other numeric form give the
    same Python floats, bit for bit."""
    rng = np.random.default_rng(5)
    v = rng.standard_normal(6)
    ro = v.copy()
    ro.flags.writeable = False
    forms = [v, ro, v[::2], v.astype(">f8"), v.reshape(2, 3), v.reshape(6, 1),
             v.astype(np.float32).astype(float), v.tolist(), tuple(v.tolist()), ca.DM(v)]
    for form in forms:
        out = ops.entries(form)
        ref = [float(e) for e in np.asarray(form.full() if isinstance(form, ca.DM) else form,
                                            float).ravel()]
        assert out == ref and all(type(e) is float for e in out), type(form)
    assert ops.entries(np.array(2.5)) == [2.5]
    assert ops.entries(np.zeros(0)) == []
    m = ca.MX.sym("m", 2)
    assert [str(e) for e in ops.entries(m)] == ["m[0]", "m[1]"]


def test_is_symbolic():
    x = ca.SX.sym("x")
    assert not ops.is_symbolic(0.5) and not ops.is_symbolic(np.array([0.5]))
    assert ops.is_symbolic(x) and ops.is_symbolic([0.5, x]) and ops.is_symbolic(ca.MX.sym("m"))
    assert not ops.is_symbolic(ca.DM(1.0))


def test_from_entries():
    out = ops.from_entries(1.5, -2.0)
    assert type(out) is tuple and out == (1.5, -2.0)
    # not all Python floats: vertcat's array (numpy scalars, ints) or CasADi column
    arr = ops.from_entries(1.5, np.float64(2.0), 3)
    assert type(arr) is np.ndarray and arr.tolist() == [1.5, 2.0, 3.0]
    x = ca.SX.sym("x", 2)
    col = ops.from_entries(*ops.entries(x), 2.0)
    assert col.shape == (3, 1)
    assert ca.Function("f", [x], [col])([4.0, 5.0]).full().ravel().tolist() == [4.0, 5.0, 2.0]
