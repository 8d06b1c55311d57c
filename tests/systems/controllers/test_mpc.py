"""Linear MPC: the LQR when no bound is active, bounds respected when they are, infeasibility
flagged, and reruns bitwise identical (warm starts in the context)."""
import numpy as np
import pytest
from scipy.linalg import solve_discrete_are

from systems import DiagramBuilder
from systems.analysis import Simulator
from systems.controllers import LinearModelPredictiveController
from systems.primitives import LinearSystem, LogVectorOutput

H = 0.1
A = np.array([[1.0, H], [0.0, 1.0]])
B = np.array([[0.5 * H * H], [H]])
Q, R = np.diag([1.0, 0.1]), np.array([[0.01]])


def test_without_active_bounds_the_first_input_is_the_lqr():
    mpc = LinearModelPredictiveController(A, B, Q, R, horizon=15, sampling_period=H)
    S = solve_discrete_are(A, B, Q, R)
    K = np.linalg.solve(R + B.T @ S @ B, B.T @ S @ A)
    for x0 in ([1.0, 0.0], [-0.3, 0.7], [0.05, -2.0]):
        U, ok = mpc.solve(x0)
        assert ok
        np.testing.assert_allclose(U[0], -K @ np.array(x0), atol=1e-8)


def _loop(**kw):
    b = DiagramBuilder()
    plant = b.add_system(LinearSystem(A=A, B=B, C=np.eye(2), time_period=H, name="plant"))
    mpc = b.add_system(LinearModelPredictiveController(A, B, Q, R, horizon=20,
                                                       sampling_period=H,
                                                       predict_one_step=True, **kw))
    b.connect(plant.get_output_port(), mpc.get_input_port("state"))
    b.connect(mpc.get_output_port("control"), plant.get_input_port())
    ulog = LogVectorOutput(mpc.get_output_port("control"), b, publish_period=H)
    xlog = LogVectorOutput(plant.get_output_port(), b, publish_period=H)
    flog = LogVectorOutput(mpc.get_output_port("feasible"), b, publish_period=H)
    d = b.build()
    ctx = d.create_default_context()
    plant.get_my_context_from_root(ctx).set_discrete_state([2.0, 0.0])
    return d, ctx, ulog, xlog, flog


def test_bounds_are_respected_and_the_loop_converges():
    d, ctx, ulog, xlog, flog = _loop(u_min=-1.0, u_max=1.0, x_min=[-np.inf, -0.8],
                                     x_max=[np.inf, 0.8])
    sim = Simulator(d, ctx)
    sim.advance_to(8.0)
    u = ulog.find_log(sim.get_context()).data()[0]
    x = xlog.find_log(sim.get_context()).data()
    assert np.max(np.abs(u)) <= 1.0 + 1e-9 and np.max(np.abs(u)) > 0.99    # active
    assert np.max(np.abs(x[1])) <= 0.8 + 1e-9                              # speed limit held
    assert np.abs(x[0, -1]) < 1e-2
    assert np.all(flog.find_log(sim.get_context()).data()[0][1:] == 1.0)


def test_reruns_are_bitwise_identical_and_infeasibility_is_flagged():
    d, ctx, ulog, *_ = _loop(u_min=-1.0, u_max=1.0)
    runs = []
    for _ in range(2):
        sim = Simulator(d, ctx.clone())
        sim.advance_to(3.0)
        runs.append(ulog.find_log(sim.get_context()).data().copy())
    assert np.array_equal(runs[0], runs[1])
    mpc = LinearModelPredictiveController(A, B, Q, R, horizon=5, sampling_period=H,
                                          u_min=-0.1, u_max=0.1, x_min=[-np.inf, -0.1],
                                          x_max=[np.inf, 0.1])
    U, ok = mpc.solve([0.0, 1.0])                 # speed 1 cannot be brought under 0.1 in time
    assert not ok


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="horizon must be a whole number >= 1"):
        LinearModelPredictiveController(A, B, Q, R, 0, H)
    with pytest.raises(ValueError, match="R must be positive definite"):
        LinearModelPredictiveController(A, B, Q, np.zeros((1, 1)), 5, H)
    with pytest.raises(ValueError, match="sizes do not fit"):
        LinearModelPredictiveController(A, B, np.eye(3), R, 5, H)
