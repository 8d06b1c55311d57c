"""discrete_time_approximation (zero-order hold), TrajectoryAffineSystem (time-varying
affine) and System.eval_unique_periodic_discrete_update, against closed forms and scipy."""
import math

import casadi as ca
import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.linalg import expm
from scipy.signal import cont2discrete

from solvers import ops
from systems import DiagramBuilder, LeafSystem
from systems.analysis import Simulator
from systems.errors import SymbolicEvaluationError
from systems.primitives import (AffineSystem, ConstantVectorSource, DiscreteTimeApproximation, Gain,
                                Integrator, LinearSystem, SymbolicVectorSystem, TrajectoryAffineSystem,
                                ZeroOrderHold, discrete_time_approximation)
from systems.trajectories import PiecewisePolynomial
from _symbolic_check import symbolic_vs_numeric

A = np.array([[0.0, 1.0], [-4.0, -0.6]])
B = np.array([[0.0], [2.0]])
C = np.array([[1.0, 0.5]])
D = np.array([[0.3]])


def test_discrete_time_approximation_equals_scipy_zoh():
    h = 0.05
    sysd = discrete_time_approximation(LinearSystem(A, B, C, D, name="lin"), h)
    Ad, Bd, Cd, Dd, _ = cont2discrete((A, B, C, D), h, method="zoh")
    np.testing.assert_allclose(sysd.A, Ad, atol=1e-14)
    np.testing.assert_allclose(sysd.B, Bd, atol=1e-14)
    np.testing.assert_array_equal(sysd.C, Cd)
    np.testing.assert_array_equal(sysd.D, Dd)
    assert sysd.time_period == h and sysd.name == "lin_discrete" and type(sysd) is LinearSystem


def test_discrete_affine_approximation_matches_the_continuous_solution_at_samples():
    h, f0, u = 0.1, np.array([0.2, -1.0]), 0.7
    cont = AffineSystem(A, B, f0, C, D, [0.05], name="aff")
    disc = discrete_time_approximation(cont, h)
    assert isinstance(disc, AffineSystem)
    # Closed form with a constant input: x(t) = e^{At} x0 + int_0^t e^{As} ds (B u + f0).
    x0 = np.array([1.0, 0.0])
    x = x0.copy()
    for n in range(1, 8):
        x = disc.A @ x + disc.B[:, 0] * u + disc.f0
        M = expm(np.block([[A, (B[:, 0] * u + f0)[:, None]], [np.zeros((1, 3))]]) * n * h)
        np.testing.assert_allclose(x, M[:2, :2] @ x0 + M[:2, 2], atol=1e-13)
    with pytest.raises(ValueError, match="system 'gain' must have continuous state"):
        discrete_time_approximation(Gain(2.0, name="gain"), h)
    with pytest.raises(ValueError, match="already discrete"):
        discrete_time_approximation(disc, h)
    with pytest.raises(ValueError, match="time_period must be a finite number > 0"):
        discrete_time_approximation(cont, -1.0)


def _tv_system():
    # x0' = -t x0;  x1' = -x1 + t + u;  y = x0 + t x1 + 2 u + 0.1
    f0 = PiecewisePolynomial.first_order_hold([0.0, 3.0], [[0.0, 0.0], [0.0, 3.0]])   # [0, t]
    return TrajectoryAffineSystem(
        A=lambda t: ops.vertcat(-t, 0.0, 0.0, -1.0),          # row by row
        B=[[0.0], [1.0]], f0=f0, C=lambda t: ops.horzcat(1.0, t), D=[[2.0]], y0=[0.1], name="tv")


def test_trajectory_affine_system_follows_the_closed_form():
    tv = _tv_system()
    assert (tv.nx, tv.nu, tv.ny) == (2, 1, 1)
    ctx = tv.create_default_context()
    x0 = np.array([1.5, 0.25])
    ctx.set_continuous_state(x0)
    u = 0.5
    tv.get_input_port().fix_value(ctx, [u])
    sim = Simulator(tv, ctx, integrator="RK45", accuracy=1e-11, max_step=0.05)
    T = 2.0
    sim.advance_to(T)
    x_exact = np.array([x0[0] * math.exp(-T * T / 2),
                        (T + u - 1.0) + (x0[1] - u + 1.0) * math.exp(-T)])
    np.testing.assert_allclose(ctx.continuous_state, x_exact, rtol=0, atol=1e-8)
    y = tv.get_output_port().eval(ctx)
    assert y[0] == pytest.approx(x_exact[0] + T * x_exact[1] + 2 * u + 0.1, abs=1e-8)
    assert tv.has_direct_feedthrough()
    coeffs = tv.coefficients_at(1.0)
    np.testing.assert_allclose(coeffs["A"], [[-1.0, 0.0], [0.0, -1.0]])
    np.testing.assert_allclose(coeffs["f0"], [0.0, 1.0])
    # Symbolic time (callables through ops, the PiecewisePolynomial exactly) = numeric.
    c2 = tv.create_default_context()
    c2.set_time(1.3)
    c2.set_continuous_state([0.4, -0.2])
    assert symbolic_vs_numeric(tv, c2, [np.array([0.9])]) == 2


def test_discrete_trajectory_affine_system_is_the_product_formula():
    h, N = 0.1, 12
    tv = TrajectoryAffineSystem(A=lambda t: 1.0 + t, B=np.zeros((1, 0)), f0=[0.0],
                                C=[[1.0]], D=np.zeros((1, 0)), y0=[0.0], time_period=h)
    ctx = tv.create_default_context()
    ctx.set_discrete_state([2.0])
    Simulator(tv, ctx).advance_to(N * h)
    expected = 2.0 * np.prod([1.0 + n * h for n in range(N)])    # updates at 0 ... (N-1) h
    assert ctx.discrete_state[0] == pytest.approx(expected, rel=1e-12)
    with pytest.raises(ValueError, match=r"A\(t\) has 4 entries \(shape \(2, 2\)\), expected shape \(1, 1\)"):
        TrajectoryAffineSystem(np.eye(2), np.zeros((1, 0)), [0.0], [[1.0]], np.zeros((1, 0)), [0.0])


def test_eval_unique_periodic_discrete_update():
    h = 0.1
    b = DiagramBuilder()
    src = b.add_system(ConstantVectorSource([1.0]))
    zoh = b.add_system(ZeroOrderHold(h, 1, name="zoh"))
    ctrl = b.add_system(LinearSystem([[0.5]], [[2.0]], [[1.0]], [[0.0]], time_period=h, name="ctrl"))
    cont = b.add_system(Integrator(1, name="integ"))
    b.connect(src.get_output_port(), zoh.get_input_port())
    b.connect(zoh.get_output_port(), ctrl.get_input_port())
    b.connect(ctrl.get_output_port(), cont.get_input_port())
    d = b.build()
    ctx = d.create_default_context()
    ctx.set_discrete_state([0.25, 3.0])              # zoh, ctrl (leaf order)
    before = np.array(ctx.discrete_state)
    nxt = d.eval_unique_periodic_discrete_update(ctx)
    # zoh <- u = 1; ctrl <- 0.5 * 3 + 2 * 0.25 (from the pre-update zoh)
    np.testing.assert_allclose(nxt, [1.0, 2.0])
    np.testing.assert_array_equal(ctx.discrete_state, before)     # context unchanged
    # It is the map the Simulator applies in one period.
    sim = Simulator(d, ctx)
    sim.advance_to(0.5 * h)
    np.testing.assert_allclose(ctx.discrete_state, nxt)
    b2 = DiagramBuilder()
    b2.add_system(ZeroOrderHold(0.1, 1, name="fast"))
    b2.add_system(ZeroOrderHold(0.2, 1, name="slow"))
    d2 = b2.build()
    with pytest.raises(ValueError, match="different timings: 'fast' .*'slow'"):
        d2.eval_unique_periodic_discrete_update(d2.create_default_context())
    integ = Integrator(1)
    with pytest.raises(ValueError, match="has no periodic discrete update"):
        integ.eval_unique_periodic_discrete_update(integ.create_default_context())


def _pendulum(A=None):
    x, u = ca.SX.sym("x", 2), ca.SX.sym("u", 1)
    if A is None:
        f = ca.vertcat(x[1], -ca.sin(x[0]) - 0.3 * x[1] + u[0])
    else:
        f = ca.mtimes(ca.DM(A), x) + ca.vertcat(0.0, u[0])
    return SymbolicVectorSystem(state=x, input=u, dynamics=f, output=x[0], name="pendulum")


def test_nonlinear_discrete_time_approximation_matches_an_ode_solve():
    h, u, N = 0.05, 0.4, 20
    disc = discrete_time_approximation(_pendulum(), h, integration_timestep=0.005)
    assert isinstance(disc, DiscreteTimeApproximation) and disc.substeps == 10
    b = DiagramBuilder()
    src = b.add_system(ConstantVectorSource([u]))
    b.add_system(disc)
    b.connect(src.get_output_port(), disc.get_input_port("u"))
    d = b.build()
    ctx = d.create_default_context()
    x0 = np.array([1.2, 0.0])
    d.get_subsystem_context(disc, ctx).set_discrete_state(x0)
    Simulator(d, ctx).advance_to(N * h)     # N updates (at 0, h, ..., (N-1) h); N h pending
    ref = solve_ivp(lambda t, x: [x[1], -np.sin(x[0]) - 0.3 * x[1] + u], (0.0, N * h), x0,
                    rtol=1e-12, atol=1e-12)
    xN = d.get_subsystem_context(disc, ctx).discrete_state
    np.testing.assert_allclose(xN, ref.y[:, -1], atol=1e-9)
    assert abs(xN[0] - x0[0]) > 0.1
    assert disc.get_output_port("y").eval(d.get_subsystem_context(disc, ctx))[0] == xN[0]
    c2 = disc.create_default_context()
    c2.set_discrete_state([0.3, -0.2])
    assert symbolic_vs_numeric(disc, c2, [np.array([0.5])]) == 2


def test_rk_discretization_of_a_linear_system_approaches_the_exact_one():
    A = np.array([[0.0, 1.0], [-4.0, -0.6]])
    h = 0.1
    rk = discrete_time_approximation(_pendulum(A), h, integration_timestep=0.01)
    exact = discrete_time_approximation(LinearSystem(A, [[0.0], [1.0]], [[1.0, 0.0]], [[0.0]]), h)
    for xd, u in (([1.0, 0.0], 0.0), ([0.0, 1.0], 0.0), ([0.0, 0.0], 1.0)):
        c = rk.create_default_context()
        c.set_discrete_state(xd)
        rk.get_input_port("u").fix_value(c, [u])
        nxt = rk.eval_unique_periodic_discrete_update(c)
        np.testing.assert_allclose(nxt, exact.A @ xd + exact.B[:, 0] * u, atol=1e-9)
    with pytest.raises(SymbolicEvaluationError, match="system 'bad' cannot be discretized"):
        discrete_time_approximation(_NotSymbolic(), h)


class _NotSymbolic(LeafSystem):
    def __init__(self):
        super().__init__("bad")
        self.declare_continuous_state(1)

    def time_derivatives(self, context):
        return [float(context.continuous_state[0]) ** 2]
