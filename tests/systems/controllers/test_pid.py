"""PidController: the control law (numeric and symbolic), its integral state, and a closed
loop with a mass-spring-damper against the matrix exponential of the closed-loop system."""
import casadi as ca
import numpy as np
import pytest
from scipy.linalg import expm

from systems import DiagramBuilder
from systems.analysis import Simulator
from systems.controllers import PidController
from systems.primitives import ConstantVectorSource, LinearSystem


def test_control_law_vector_gains():
    kp, ki, kd = np.array([1.0, 2.0]), 0.5, np.array([3.0, 4.0])
    pid = PidController(kp, ki, kd)
    ctx = pid.create_default_context()
    x = np.array([0.1, -0.2, 0.3, 0.4])
    xd = np.array([1.0, 2.0, -1.0, 0.5])
    pid.get_input_port("estimated_state").fix_value(ctx, x)
    pid.get_input_port("desired_state").fix_value(ctx, xd)
    pid.set_integral_value(ctx, [0.7, -0.3])
    u = pid.get_output_port("control").eval(ctx)
    expected = kp * (xd[:2] - x[:2]) + ki * np.array([0.7, -0.3]) + kd * (xd[2:] - x[2:])
    np.testing.assert_allclose(u, expected, rtol=0, atol=1e-15)
    np.testing.assert_allclose(pid.eval_time_derivatives(ctx), xd[:2] - x[:2], atol=1e-15)
    assert pid.has_direct_feedthrough("estimated_state", "control")
    assert pid.has_direct_feedthrough("desired_state", "control")


def test_symbolic_evaluation_matches_numeric():
    pid = PidController([2.0, 3.0], [0.1, 0.2], 1.5)
    sctx, sym = pid.symbolic_context()
    u_sym = pid.get_output_port().eval(sctx)
    fun = ca.Function("u", [sym["x"], sym["u"][0], sym["u"][1]], [u_sym])
    rng = np.random.default_rng(0)
    z, x, xd = rng.normal(size=2), rng.normal(size=4), rng.normal(size=4)
    ctx = pid.create_default_context()
    pid.set_integral_value(ctx, z)
    pid.get_input_port_estimated_state().fix_value(ctx, x)
    pid.get_input_port_desired_state().fix_value(ctx, xd)
    np.testing.assert_allclose(np.asarray(fun(z, x, xd)).ravel(),
                               pid.get_output_port_control().eval(ctx), atol=1e-14)


def test_gain_sizes_are_checked():
    with pytest.raises(ValueError, match="kp, ki, kd have sizes 2, 1, 3"):
        PidController([1.0, 2.0], 1.0, [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="finite"):
        PidController(np.nan, 1.0, 1.0)


def test_closed_loop_mass_spring_damper_matches_matrix_exponential():
    m, c, k = 1.0, 0.5, 2.0
    kp, ki, kd = 10.0, 5.0, 2.0
    b = DiagramBuilder()
    plant = b.add_system(LinearSystem([[0, 1], [-k / m, -c / m]], [[0], [1 / m]], np.eye(2),
                                      np.zeros((2, 1)), name="plant"))
    pid = b.add_system(PidController(kp, ki, kd, name="pid"))
    ref = b.add_system(ConstantVectorSource([1.0, 0.0], name="ref"))
    b.connect(plant.get_output_port(), pid.get_input_port_estimated_state())
    b.connect(ref.get_output_port(), pid.get_input_port_desired_state())
    b.connect(pid.get_output_port_control(), plant.get_input_port())
    diagram = b.build()
    sim = Simulator(diagram, integrator="RK45", accuracy=1e-10, max_step=1.0)
    T = 10.0
    sim.advance_to(T)
    # Closed loop in [p, v, z]: u = kp (1 - p) + ki z - kd v.
    A = np.array([[0.0, 1.0, 0.0],
                  [-(k + kp) / m, -(c + kd) / m, ki / m],
                  [-1.0, 0.0, 0.0]])
    bvec = np.array([0.0, kp / m, 1.0])
    M = expm(np.block([[A, bvec[:, None]], [np.zeros((1, 4))]]) * T)
    exact = M[:3, 3]                      # x(0) = 0
    x = sim.get_context().continuous_state   # leaf order: plant [p, v], pid [z]
    np.testing.assert_allclose(x, exact, rtol=0, atol=1e-7)
    # Integral action: zero steady-state error, z -> k / ki.
    sim.advance_to(60.0)
    x = sim.get_context().continuous_state
    np.testing.assert_allclose(x, [1.0, 0.0, k / ki], atol=1e-6)
