"""The numeric callbacks of the library's small blocks (LinearSystem, AffineSystem,
PidController) against their symbolic evaluation (CasADi, the same source) and against the
plain numpy formula they replace (bit for bit where the arithmetic is numpy's)."""
import numpy as np
import pytest

from systems.controllers import PidController
from systems.primitives import AffineSystem, LinearSystem
from systems.symbolic import to_casadi

RNG = np.random.default_rng(7)


def _symbolic(system, ctx):
    """(xdot or xd_next, y) of ``system`` at ``ctx`` through its CasADi conversion."""
    cs = to_casadi(system)
    args = cs.from_context(ctx)
    dyn = cs.update(*args) if system.num_discrete_states() else cs.f(*args)
    return np.asarray(dyn, float).ravel(), np.asarray(cs.g(*args), float).ravel()


def _linear_cases():
    A, B = RNG.standard_normal((3, 3)), RNG.standard_normal((3, 2))
    C, D = RNG.standard_normal((2, 3)), RNG.standard_normal((2, 2))
    f0, y0 = RNG.standard_normal(3), RNG.standard_normal(2)
    return [
        ("linear", lambda: LinearSystem(A, B, C, D)),
        ("linear no D", lambda: LinearSystem(A, B, C, np.zeros((2, 2)))),
        ("affine", lambda: AffineSystem(A, B, f0, C, D, y0)),
        ("affine zero f0", lambda: AffineSystem(A, B, np.zeros(3), C, D, y0)),
        ("gain only (LQR)", lambda: AffineSystem(D=RNG.standard_normal((1, 4)), y0=[0.3])),
        ("gain only, y0 = 0", lambda: AffineSystem(D=RNG.standard_normal((2, 4)), y0=[0.0, 0.0])),
        ("discrete", lambda: AffineSystem(A, B, f0, C, D, y0, time_period=0.1)),
        ("no input", lambda: LinearSystem(A, C=C)),
    ]


@pytest.mark.parametrize("name, make", _linear_cases(), ids=[c[0] for c in _linear_cases()])
def test_linear_callbacks_equal_numpy_formula_and_symbolic(name, make):
    sys_ = make()
    ctx = sys_.create_default_context()
    nx, nu = sys_.A.shape[0], sys_.B.shape[1]
    x = RNG.standard_normal(nx)
    discrete = sys_.time_period > 0
    if nx:
        (ctx.set_discrete_state if discrete else ctx.set_continuous_state)(x)
    u = RNG.standard_normal(nu)
    if nu:
        sys_.get_input_port().fix_value(ctx, u)
    # the formula as numpy writes it (every term added)
    dyn_ref = sys_.A @ x + sys_.f0 + (sys_.B @ u if nu else 0.0)
    y_ref = sys_.y0 + sys_.C @ x + (sys_.D @ u if nu else 0.0)
    y = sys_.get_output_port().eval(ctx)
    if sys_.C.size == 0:   # no state term, small D: row sums on floats (test_linear_small_gain)
        # within gamma_(nu+1) (sum |d u| + |y0|) of the exact value, as numpy's product is
        bound = 2 * (nu + 1) * 2.0 ** -52 * (np.abs(sys_.D) @ np.abs(u) + np.abs(sys_.y0))
        assert np.all(np.abs(y - y_ref) <= bound)
    else:
        assert np.array_equal(y, y_ref)
    if nx:
        dyn = sys_.eval_unique_periodic_discrete_update(ctx) if discrete \
            else sys_.time_derivatives(ctx)
        assert np.array_equal(dyn, dyn_ref)
    dyn_s, y_s = _symbolic(sys_, ctx)
    np.testing.assert_allclose(y, y_s, rtol=1e-14, atol=1e-14)
    if nx:
        np.testing.assert_allclose(dyn, dyn_s, rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("gains", [(10.0, 5.0, 2.0), ([1.0, 2.0, 3.0], 0.5, [0.1, 0.2, 0.3]),
                                   (0.0, 4.0, 0.0)], ids=["n=1", "n=3", "integral only"])
def test_pid_callbacks_equal_numpy_formula_and_symbolic(gains):
    pid = PidController(*gains)
    n = pid.num_positions
    ctx = pid.create_default_context()
    z, x, xd = RNG.standard_normal(n), RNG.standard_normal(2 * n), RNG.standard_normal(2 * n)
    ctx.set_continuous_state(z)
    pid.get_input_port_estimated_state().fix_value(ctx, x)
    pid.get_input_port_desired_state().fix_value(ctx, xd)
    e = xd - x
    u_ref = pid.kp * e[:n] + pid.ki * z + pid.kd * e[n:]
    u = pid.get_output_port_control().eval(ctx)
    zdot = pid.time_derivatives(ctx)
    assert np.array_equal(u, u_ref)
    assert np.array_equal(zdot, e[:n])
    zdot_s, u_s = _symbolic(pid, ctx)
    np.testing.assert_allclose(u, u_s, rtol=1e-14, atol=1e-14)
    np.testing.assert_allclose(zdot, zdot_s, rtol=1e-14, atol=1e-14)


def test_step_numeric_and_symbolic():
    from systems.primitives import Step
    step = Step(0.5, initial_value=[0.0, 1.0], final_value=[2.0, 3.0])
    ctx = step.create_default_context()
    for t, expected in ((0.25, [0.0, 1.0]), (0.5, [2.0, 3.0]), (0.75, [2.0, 3.0])):
        ctx.set_time(t)
        y = step.get_output_port().eval(ctx)
        assert y.tolist() == expected
        assert np.asarray(to_casadi(step).g(t, [], [], [], []), float).ravel().tolist() == expected


def test_matrices_are_fixed_at_construction():
    A = np.array([[0.0, 1.0], [-2.0, -0.5]])
    sys_ = LinearSystem(A, [[0.0], [1.0]], np.eye(2))
    A[0, 1] = 5.0                      # the caller's array is not the system's
    assert sys_.A[0, 1] == 1.0
    with pytest.raises(ValueError):
        sys_.A[0, 1] = 5.0


def test_linearization_output_is_in_deviation_variables():
    """linearize's LinearSystem: delta y = C delta x + D delta u (its y0 attribute is the
    operating point's output, not an output offset), as documented and as in Drake."""
    from systems.analysis.linearize import linearize
    A, B = np.array([[-1.0, 0.5], [0.0, -2.0]]), np.array([[1.0], [0.5]])
    C, D = np.array([[1.0, 2.0]]), np.array([[0.25]])
    f0, y0 = np.array([0.3, -0.4]), np.array([1.5])
    aff = AffineSystem(A, B, f0, C, D, y0)
    ctx = aff.create_default_context()
    x0 = -np.linalg.solve(A, f0)
    ctx.set_continuous_state(x0)
    aff.get_input_port().fix_value(ctx, [0.0])
    lin = linearize(aff, ctx)
    np.testing.assert_allclose(lin.y0, C @ x0 + y0, rtol=1e-14)
    lctx = lin.create_default_context()
    dx, du = np.array([0.1, -0.2]), np.array([0.3])
    lctx.set_continuous_state(dx)
    lin.get_input_port().fix_value(lctx, du)
    np.testing.assert_allclose(lin.get_output_port().eval(lctx), C @ dx + D @ du, rtol=1e-14)


@pytest.mark.parametrize("D", [np.zeros((1, 1)), np.array([[0.5]])])
def test_linearization_of_a_stateless_system_leaves_out_y0(D):
    """A stateless AffineSystem y = D u + y0 (also D = 0: the output is y0 alone)
    linearizes to delta y = D delta u; the y0 that linearize records on the result is
    not added to its output (every output branch of LinearSystem)."""
    from systems.analysis.linearize import linearize
    aff = AffineSystem(np.zeros((0, 0)), np.zeros((0, 1)), np.zeros(0), np.zeros((1, 0)), D, [2.0])
    ctx = aff.create_default_context()
    aff.get_input_port().fix_value(ctx, [0.4])
    lin = linearize(aff, ctx)
    np.testing.assert_allclose(lin.y0, [2.0 + 0.4 * D[0, 0]], rtol=1e-15)
    lctx = lin.create_default_context()
    lin.get_input_port().fix_value(lctx, [0.3])
    np.testing.assert_allclose(lin.get_output_port().eval(lctx), D @ [0.3], atol=1e-15)
