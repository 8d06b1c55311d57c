"""Exact linearization, controllability/observability, and LQR against scipy / python-control."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.linalg import solve_continuous_are, solve_discrete_are

from systems import DiagramBuilder
from systems.analysis.linearize import (EquilibriumError, controllability_matrix,
                                        first_order_taylor_approximation, is_controllable,
                                        is_observable, linearize, observability_matrix)
from systems.controllers.lqr import (DiscreteTimeLinearQuadraticRegulator,
                                     FiniteHorizonLinearQuadraticRegulator, LinearQuadraticRegulator)
from systems.primitives import LinearSystem
from systems.symbolic import to_casadi
from _systems_models import B_DAMP, Pendulum, _closed_loop_lqr, _plant_context

G = 9.81


@pytest.mark.parametrize("theta, sign", [(0.0, -1.0), (np.pi, 1.0)])
def test_pendulum_linearization_is_exact(theta, sign):
    p, ctx = _plant_context(theta)
    lin = linearize(p, ctx)
    np.testing.assert_allclose(lin.A, [[0.0, 1.0], [sign * G, -B_DAMP]], atol=1e-12, rtol=0)
    np.testing.assert_allclose(lin.B, [[0.0], [1.0]], atol=1e-12, rtol=0)
    np.testing.assert_allclose(lin.C, np.eye(2), atol=1e-12)     # the first output, 'state'
    np.testing.assert_allclose(lin.D, np.zeros((2, 1)), atol=1e-12)
    np.testing.assert_allclose(lin.x0, [theta, 0.0])
    assert lin.time_period == 0.0
    # every output stacked: the energy 0.5 w^2 + g (1 - cos th) is stationary at th = 0, pi
    both = linearize(p, ctx, output_port_index="all")
    np.testing.assert_allclose(both.C, [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]], atol=1e-12)
    assert both.D.shape == (3, 1)


def test_linearize_refuses_non_equilibrium_unless_asked():
    p, ctx = _plant_context(0.5)
    with pytest.raises(EquilibriumError, match=r"xdot\[1\] \(pendulum\[1\]\) = -4.7"):
        linearize(p, ctx)
    lin = linearize(p, ctx, equilibrium_check=False)
    np.testing.assert_allclose(lin.A[1, 0], -G * np.cos(0.5), rtol=1e-14)
    aff = first_order_taylor_approximation(p, ctx)
    np.testing.assert_allclose(aff.f0 + aff.A @ aff.x0, [0.0, -G * np.sin(0.5)], rtol=1e-14)
    q = Pendulum()
    with pytest.raises(ValueError, match="input port 'pendulum.tau' must be fixed"):
        linearize(q, q.create_default_context())


def test_plant_and_controller_linearize_as_a_whole():
    b = DiagramBuilder("closed_loop")
    plant = b.add_system(Pendulum(damping=B_DAMP))
    K = np.array([[30.0, 8.0]])
    ctrl = b.add_system(LinearSystem(D=-K, name="ctrl"))
    b.connect(plant.get_output_port("state"), ctrl.get_input_port())
    b.connect(ctrl.get_output_port(), plant.get_input_port())
    b.export_output(plant.get_output_port("state"), "state")
    d = b.build()
    ctx = d.create_default_context()
    lin = linearize(d, ctx)
    A_open = np.array([[0.0, 1.0], [-G, -B_DAMP]])
    np.testing.assert_allclose(lin.A, A_open - np.array([[0.0], [1.0]]) @ K, atol=1e-12)
    assert lin.B.shape == (2, 0)


def test_controllability_and_observability():
    A = np.array([[0.0, 1.0], [G, -B_DAMP]])
    sys = LinearSystem(A, [[0.0], [1.0]], [[1.0, 0.0]], [[0.0]])
    np.testing.assert_allclose(controllability_matrix(sys), [[0.0, 1.0], [1.0, -B_DAMP]])
    np.testing.assert_allclose(observability_matrix(sys), [[1.0, 0.0], [0.0, 1.0]])
    assert is_controllable(sys) and is_observable(sys)
    unc = LinearSystem(np.diag([1.0, 2.0]), [[1.0], [0.0]], [[1.0, 1.0]], [[0.0]])
    assert not is_controllable(unc) and is_observable(unc)
    assert not is_observable(LinearSystem(np.diag([1.0, 2.0]), [[1.0], [1.0]], [[1.0, 0.0]], [[0.0]]))


def test_lqr_gains_match_scipy_and_python_control():
    rng = np.random.default_rng(3)
    A = rng.normal(size=(4, 4))
    B = rng.normal(size=(4, 2))
    Q = np.diag([1.0, 2.0, 3.0, 4.0])
    R = np.array([[1.0, 0.2], [0.2, 2.0]])
    N = 0.1 * rng.normal(size=(4, 2))
    K, S = LinearQuadraticRegulator(A, B, Q, R, N)
    S_ref = solve_continuous_are(A, B, Q, R, s=N)
    np.testing.assert_allclose(S, S_ref, rtol=1e-10)
    np.testing.assert_allclose(K, np.linalg.solve(R, B.T @ S_ref + N.T), rtol=1e-10)
    assert np.all(np.linalg.eigvals(A - B @ K).real < 0)
    control = pytest.importorskip("control")
    K_c, S_c, _ = control.lqr(A, B, Q, R, N)
    np.testing.assert_allclose(K, K_c, rtol=1e-8)
    np.testing.assert_allclose(S, S_c, rtol=1e-8)

    Ad = np.eye(4) + 0.01 * A
    Bd = 0.01 * B
    Kd, Sd = DiscreteTimeLinearQuadraticRegulator(Ad, Bd, Q, R)
    Sd_ref = solve_discrete_are(Ad, Bd, Q, R)
    np.testing.assert_allclose(Sd, Sd_ref, rtol=1e-10)
    np.testing.assert_allclose(Kd, np.linalg.solve(R + Bd.T @ Sd_ref @ Bd, Bd.T @ Sd_ref @ Ad), rtol=1e-10)
    K_dc, S_dc, _ = control.dlqr(Ad, Bd, Q, R)
    np.testing.assert_allclose(Kd, K_dc, rtol=1e-8)

    with pytest.raises(ValueError, match="R must be symmetric positive definite"):
        LinearQuadraticRegulator(A, B, Q, np.zeros((2, 2)))
    with pytest.raises(ValueError, match=r"Q has shape \(3, 3\), expected \(4, 4\)"):
        LinearQuadraticRegulator(A, B, np.eye(3), R)


def test_lqr_controller_stabilizes_the_inverted_pendulum():
    d, ctrl = _closed_loop_lqr()
    A = np.array([[0.0, 1.0], [G, -B_DAMP]])
    K_ref, _ = LinearQuadraticRegulator(A, np.array([[0.0], [1.0]]), np.diag([10.0, 1.0]), [[1.0]])
    np.testing.assert_allclose(ctrl.K, K_ref, rtol=1e-12)
    cs = to_casadi(d)
    p = d.create_default_context().parameters
    sol = solve_ivp(lambda t, x: np.ravel(cs.f(t, x, [], [], p)), (0.0, 10.0), [np.pi - 0.3, 0.5],
                    rtol=1e-9, atol=1e-12)
    assert sol.success
    np.testing.assert_allclose(sol.y[:, -1], [np.pi, 0.0], atol=1e-6)
    # The closed loop linearized at the top is the LQR closed loop A - B K.
    top = d.create_default_context()
    top.set_continuous_state([np.pi, 0.0])
    lin = linearize(d, top)
    np.testing.assert_allclose(lin.A, A - np.array([[0.0], [1.0]]) @ K_ref, atol=1e-10)


def test_lqr_for_a_discrete_plant_uses_the_discrete_riccati_equation():
    Ad = np.array([[1.0, 0.1], [0.0, 1.0]])
    Bd = np.array([[0.005], [0.1]])
    plant = LinearSystem(Ad, Bd, np.eye(2), np.zeros((2, 1)), time_period=0.1)
    ctx = plant.create_default_context()
    plant.get_input_port().fix_value(ctx, [0.0])
    ctrl = LinearQuadraticRegulator(plant, ctx, np.eye(2), [[1.0]])
    K_ref, _ = DiscreteTimeLinearQuadraticRegulator(Ad, Bd, np.eye(2), [[1.0]])
    np.testing.assert_allclose(ctrl.K, K_ref, rtol=1e-12)


def test_finite_horizon_lqr_on_a_linear_system():
    A = np.array([[0.0, 1.0], [2.0, -0.5]])
    B = np.array([[0.0], [1.0]])
    Q, R = np.diag([1.0, 0.5]), np.array([[0.3]])
    plant = LinearSystem(A, B, np.eye(2), np.zeros((2, 1)))
    ctx = plant.create_default_context()
    K_inf, S_inf = LinearQuadraticRegulator(A, B, Q, R)
    # With Qf = S_inf, S(t) stays at S_inf.
    res = FiniteHorizonLinearQuadraticRegulator(plant, ctx, 0.0, 2.0, Q, R, Qf=S_inf)
    for t in (0.0, 1.0, 2.0):
        np.testing.assert_allclose(res.S(t), S_inf, rtol=1e-6)
        np.testing.assert_allclose(res.K(t), K_inf, rtol=1e-6)
    # From Qf = 0 over a long horizon, S(t0) converges to S_inf; at tf it is Qf.
    res = FiniteHorizonLinearQuadraticRegulator(plant, ctx, 0.0, 20.0, Q, R)
    np.testing.assert_allclose(res.S(0.0), S_inf, rtol=1e-6)
    np.testing.assert_allclose(res.S(20.0), np.zeros((2, 2)), atol=1e-12)
    ctrl = res.controller()
    cctx = ctrl.create_default_context()
    ctrl.get_input_port().fix_value(cctx, [1.0, -1.0])
    np.testing.assert_allclose(ctrl.get_output_port().eval(cctx), -K_inf @ [1.0, -1.0], rtol=1e-6)
