"""The three transcriptions against independent solutions.

Minimum effort for a double integrator is a quadratic program whose KKT system numpy solves
exactly: direct transcription (forward Euler), the same on a discrete-time system (its exact
update), and direct shooting with RK4 (exact for a piecewise-constant input) must agree with
it. Direct collocation converges to the continuous optimum (cost 12 / T^3, linear u). The NLP's
derivatives match finite differences, the defects vanish at the solution, the Jacobian is
sparse, warm starts save iterations, and failures or bad arguments are reported, never raised
from inside CasADi."""
import casadi as ca
import numpy as np
import pytest

from systems import DiagramBuilder
from systems.primitives import Integrator, LinearSystem
from systems.trajectory_optimization import (DirectCollocation, DirectShooting,
                                             DirectTranscription, TrajectoryOptimizationError)

A = np.array([[0.0, 1.0], [0.0, 0.0]])
B = np.array([[0.0], [1.0]])
X0, XF = np.array([0.0, 0.0]), np.array([1.0, 0.0])


def _double_integrator(time_period=0.0, h=None):
    if time_period:
        Ad = np.array([[1.0, h], [0.0, 1.0]])
        Bd = np.array([[0.5 * h * h], [h]])
        return LinearSystem(A=Ad, B=Bd, C=np.eye(2), time_period=time_period)
    return LinearSystem(A=A, B=B, C=np.eye(2))


def _min_effort(prog):
    prog.add_running_cost(prog.input()[0] ** 2)
    prog.add_bounding_box_constraint(X0, X0, prog.initial_state())
    prog.add_bounding_box_constraint(XF, XF, prog.final_state())
    return prog.solve()


def _kkt_min_effort(Ad, Bd, N, h):
    """min h sum_{k<N-1} u_k^2 s.t. x_{k+1} = Ad x_k + Bd u_k, x_0 = X0, x_{N-1} = XF: the
    final state is linear in u, so u = (Gram pseudo-inverse) solves it exactly."""
    m = N - 1
    G = np.zeros((2, m))
    for k in range(m):
        G[:, k] = (np.linalg.matrix_power(Ad, m - 1 - k) @ Bd)[:, 0]
    rhs = XF - np.linalg.matrix_power(Ad, m) @ X0
    u = G.T @ np.linalg.solve(G @ G.T, rhs)
    return u, h * float(u @ u)


def test_direct_transcription_equals_the_kkt_solution_of_the_euler_qp():
    N, h = 11, 0.1
    plant = _double_integrator()
    prog = DirectTranscription(plant, plant.create_default_context(), N, h)
    r = _min_effort(prog)
    assert r.is_success(), r.status
    u_ref, cost_ref = _kkt_min_effort(np.eye(2) + h * A, h * B, N, h)
    u = np.array([r.get_solution(prog.input(k))[0] for k in range(N - 1)])
    np.testing.assert_allclose(u, u_ref, atol=1e-7)
    assert r.cost == pytest.approx(cost_ref, rel=1e-8)


def test_direct_transcription_uses_the_exact_update_of_a_discrete_system():
    N, h = 9, 0.125
    plant = _double_integrator(time_period=h, h=h)
    prog = DirectTranscription(plant, plant.create_default_context(), N, h)
    r = _min_effort(prog)
    assert r.is_success(), r.status
    u_ref, cost_ref = _kkt_min_effort(np.array([[1.0, h], [0.0, 1.0]]), np.array([[0.5 * h * h], [h]]), N, h)
    np.testing.assert_allclose([r.get_solution(prog.input(k))[0] for k in range(N - 1)], u_ref,
                               atol=1e-7)
    with pytest.raises(TrajectoryOptimizationError, match="differs from the system's update period"):
        DirectTranscription(plant, plant.create_default_context(), N, 0.1)


@pytest.mark.parametrize("integrator", ["rk4", "cvodes"])
def test_direct_shooting_equals_the_exact_zero_order_hold_qp(integrator):
    n_int, h = 8, 0.125
    plant = _double_integrator()
    prog = DirectShooting(plant, plant.create_default_context(), n_int, h, integrator=integrator)
    r = _min_effort(prog)
    assert r.is_success(), r.status
    u_ref, cost_ref = _kkt_min_effort(np.array([[1.0, h], [0.0, 1.0]]),
                                      np.array([[0.5 * h * h], [h]]), n_int + 1, h)
    tol = 1e-7 if integrator == "rk4" else 1e-5
    np.testing.assert_allclose([r.get_solution(prog.input(k))[0] for k in range(n_int)], u_ref,
                               atol=tol)


def test_direct_collocation_converges_to_the_continuous_optimum():
    T = 2.0
    plant = _double_integrator()
    prog = DirectCollocation(plant, plant.create_default_context(), 41, 0.01, 0.2)
    prog.add_equal_time_intervals_constraints()
    prog.add_duration_bounds(T, T)
    r = _min_effort(prog)
    assert r.is_success(), r.status
    assert r.cost == pytest.approx(12.0 / T ** 3, rel=2e-3)          # trapezoid error O(h^2)
    u = prog.reconstruct_input_trajectory(r)
    ts = np.linspace(0.0, T, 9)
    u_ref = 6 / T ** 2 * (1 - 2 * ts / T)
    np.testing.assert_allclose(u.vector_values(ts)[0][1:-1], u_ref[1:-1], atol=2e-3)
    # the trapezoid gives the end knots half weight, so their inputs are off by O(h)
    np.testing.assert_allclose(u.vector_values(ts)[0][[0, -1]], u_ref[[0, -1]], atol=3e-2)
    x = prog.reconstruct_state_trajectory(r)
    s = ts / T
    np.testing.assert_allclose(x.vector_values(ts)[0], 3 * s ** 2 - 2 * s ** 3, atol=3e-4)
    assert np.max(np.abs(prog.defects(r))) < 1e-8


def test_nlp_derivatives_match_finite_differences_and_keep_sparsity():
    plant = _double_integrator()
    prog = DirectCollocation(plant, plant.create_default_context(), 6, 0.05, 0.5)
    prog.add_running_cost(prog.input()[0] ** 2 + prog.state()[0] ** 2 * prog.time())
    prog.add_bounding_box_constraint(X0, X0, prog.initial_state())
    opti = prog.opti
    g = ca.Function("g", [opti.x], [opti.g])
    jac = ca.Function("dg", [opti.x], [ca.jacobian(opti.g, opti.x)])
    cost = ca.Function("c", [opti.x], [prog.objective()])
    dcost = ca.Function("dc", [opti.x], [ca.gradient(prog.objective(), opti.x)])
    rng = np.random.default_rng(0)
    z = rng.uniform(0.1, 0.4, opti.nx)
    eps = 1e-6
    fd_cost = np.array([(float(cost(z + eps * e)) - float(cost(z - eps * e))) / (2 * eps)
                        for e in np.eye(opti.nx)])
    np.testing.assert_allclose(np.asarray(dcost(z)).ravel(), fd_cost, rtol=1e-6, atol=1e-8)
    J = np.asarray(jac(z).full())
    fd_J = np.column_stack([(np.asarray(g(z + eps * e)).ravel() - np.asarray(g(z - eps * e)).ravel())
                            / (2 * eps) for e in np.eye(opti.nx)])
    np.testing.assert_allclose(J, fd_J, rtol=1e-6, atol=1e-7)
    nnz = ca.jacobian(opti.g, opti.x).sparsity().nnz()
    assert nnz < 0.3 * J.size                                  # sparse, not dense


def test_warm_start_saves_iterations():
    plant = _double_integrator()
    prog = DirectCollocation(plant, plant.create_default_context(), 21, 0.01, 0.3)
    prog.add_duration_bounds(1.5, 3.0)
    prog.add_running_cost(prog.input()[0] ** 2 + 1.0)
    r1 = _min_effort(prog)
    r2 = prog.solve(warm_start=r1)
    assert r1.is_success() and r2.is_success()
    assert r2.iterations < r1.iterations
    assert r2.cost == pytest.approx(r1.cost, rel=1e-7)


def test_a_failed_solve_is_reported_not_raised():
    plant = _double_integrator()
    prog = DirectCollocation(plant, plant.create_default_context(), 11, 0.01, 0.02)
    prog.add_input_bounds(-0.1, 0.1)                    # cannot move 1 m in 0.2 s
    r = _min_effort(prog)
    assert not r.is_success()
    assert "Infeasible" in r.status or "Restoration" in r.status
    assert np.isfinite(r.x).all()


def test_bad_arguments_are_named_errors():
    plant = _double_integrator()
    ctx = plant.create_default_context()
    with pytest.raises(TrajectoryOptimizationError, match="num_time_samples must be a whole number >= 2"):
        DirectCollocation(plant, ctx, 1, 0.1, 0.2)
    with pytest.raises(TrajectoryOptimizationError, match="input_port_index 3 is not an input port"):
        DirectCollocation(plant, ctx, 5, 0.1, 0.2, input_port_index=3)
    with pytest.raises(TrajectoryOptimizationError, match="minimum_time_step <= maximum_time_step"):
        DirectCollocation(plant, ctx, 5, 0.3, 0.2)
    prog = DirectCollocation(plant, ctx, 5, 0.1, 0.2)
    with pytest.raises(TrajectoryOptimizationError, match="lb has 3 entries, expected 2"):
        prog.add_bounding_box_constraint([0, 0, 0], [1, 1], prog.initial_state())
    with pytest.raises(TrajectoryOptimizationError, match="lb has 2 entries, expected 1"):
        prog.add_input_bounds([0, 0], [1, 1])
    with pytest.raises(TrajectoryOptimizationError, match="knot index 9 outside 0..4"):
        prog.state(9)
    disc = _double_integrator(time_period=0.1, h=0.1)
    with pytest.raises(TrajectoryOptimizationError, match="no continuous state to collocate"):
        DirectCollocation(disc, disc.create_default_context(), 5, 0.1, 0.2)
    # a diagram with a second input that is neither optimized nor fixed
    b = DiagramBuilder()
    i1, i2 = b.add_system(Integrator(1, name="a")), b.add_system(Integrator(1, name="b"))
    b.export_input(i1.get_input_port(), "u1")
    b.export_input(i2.get_input_port(), "u2")
    d = b.build()
    with pytest.raises(TrajectoryOptimizationError, match="input port 'u2' is not the optimized input"):
        DirectCollocation(d, d.create_default_context(), 5, 0.1, 0.2)
