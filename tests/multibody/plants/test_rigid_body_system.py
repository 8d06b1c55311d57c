"""RigidBodySystem with equality constraints: closed loops, energy, inverse dynamics,
linearization, symbolic conversion, redundant constraints, blocks and ports."""

import numpy as np
import pytest

from actuators import Actuator, GeneralizedForceActuator
from multibody.models import (four_bar_frequency, parallelogram_four_bar, slider_crank,
                                   slider_crank_guess)
from multibody.constraints import BallConstraint
from multibody.plants import RedundantConstraintWarning, RigidBodySystem
from sensors import FullStateSensor
from sensors.base import Sensor
from systems import SymbolicEvaluationError
from systems.analysis import Simulator, linearize
from systems.symbolic import to_casadi

XZ = [[1, 0, 0], [0, 0, 1]]


def four_bar_system(**kw):
    t = parallelogram_four_bar()
    return RigidBodySystem(t, constraints=[BallConstraint(t, "pivot_b", "tip", axes=XZ, name="closure", **kw)])


def slider_crank_system(**kw):
    t = slider_crank()
    return RigidBodySystem(t, constraints=[BallConstraint(t, "slider", "rod_tip", axes=XZ, name="closure", **kw)])


def _run(s, q0, T, n=50):
    ctx = s.create_default_context()
    q0, v0 = s.project_state(q0, np.zeros(s.nv))
    s.set_positions(ctx, q0)
    s.set_velocities(ctx, v0)
    E0 = s.total_energy(ctx)
    sim = Simulator(s, ctx, integrator="RK45", accuracy=1e-10, max_step=0.05)
    sim.initialize()
    viol, drift, log = 0.0, 0.0, []
    for T_ in np.linspace(T / n, T, n):
        sim.advance_to(T_)
        q, v = s.get_positions(ctx), s.get_velocities(ctx)
        viol = max(viol, np.max(np.abs(s.constraint_violation(q))))
        drift = max(drift, abs(s.total_energy(ctx) - E0) / abs(E0))
        log.append((T_, q, v))
    return viol, drift, log, ctx


@pytest.mark.parametrize("make, q0", [(four_bar_system, np.array([0.5, -0.5, 0.5])),
                                      (slider_crank_system, slider_crank_guess(1.0))])
def test_closed_loop_violation_and_energy_over_10s(make, q0):
    s = make()
    viol, drift, log, _ = _run(s, q0, 10.0)
    assert viol < 1e-8
    assert drift < 1e-6
    # the mechanism really moves
    qs = np.array([q for _, q, _ in log])
    assert np.ptp(qs[:, 0]) > 0.5


def test_baumgarte_off_still_integrates_but_drifts_more_or_equal():
    """Measurement: without Baumgarte the violation stays small at rtol 1e-10 but is not
    corrected; with it the violation is at round-off (issue 7 asks < 1e-8)."""
    v_on, _, _, _ = _run(slider_crank_system(), slider_crank_guess(1.0), 3.0, n=10)
    v_off, _, _, _ = _run(slider_crank_system(time_constant=None), slider_crank_guess(1.0), 3.0, n=10)
    assert v_on < 1e-10
    assert v_off < 1e-5
    assert v_on <= v_off + 1e-15


def test_four_bar_parallelogram_kinematics_analytic():
    """The parallelogram keeps q = (theta, -theta, theta) (the coupler translates)."""
    _, _, log, _ = _run(four_bar_system(), np.array([0.4, -0.4, 0.4]), 2.0, n=10)
    for _, q, _ in log:
        assert abs(q[1] + q[0]) < 1e-9 and abs(q[2] - q[0]) < 1e-9


def test_constraint_forces_equal_inverse_dynamics_of_the_motion():
    """J^T f of the system equals RNEA(q, v, vdot) with vdot from finite differences of the
    simulated velocities (an independent algorithm and an independent acceleration)."""
    s = slider_crank_system()
    ctx = s.create_default_context()
    q0, v0 = s.project_state(slider_crank_guess(0.7), np.zeros(s.nv))
    s.set_positions(ctx, q0)
    sim = Simulator(s, ctx, integrator="RK45", accuracy=1e-11, max_step=0.01)
    sim.initialize()
    h = 1e-4
    for T in (0.3, 0.8, 1.3):
        sim.advance_to(T - h)
        vm = s.get_velocities(ctx)
        sim.advance_to(T)
        q, v = s.get_positions(ctx), s.get_velocities(ctx)
        sol = s.solve(ctx)
        sim.advance_to(T + h)
        vp = s.get_velocities(ctx)
        vdot_fd = (vp - vm) / (2 * h)
        tau_id = np.asarray(s.tree.inverse_dynamics(q, v, vdot_fd)).ravel()
        scale = np.max(np.abs(sol.tau_constraint))
        assert scale > 1.0
        assert np.max(np.abs(tau_id - sol.tau_constraint)) < 1e-5 * scale
        # and exactly with the system's own acceleration (RNEA vs the KKT solve)
        tau_id2 = np.asarray(s.tree.inverse_dynamics(q, v, sol.vdot)).ravel()
        assert np.allclose(tau_id2, sol.tau_constraint, atol=1e-10 * scale)
        # f is the force on the rod tip along x, z: J^T f reproduces tau_c
        assert sol.f.shape == (2,)


def test_four_bar_linearization_matches_analytic_frequency():
    s = four_bar_system()
    ctx = s.create_default_context()
    lin = linearize(s, ctx)
    ev = np.linalg.eigvals(lin.A)
    w = four_bar_frequency()
    osc = ev[np.abs(ev.imag) > 1.0]
    assert len(osc) == 2
    assert np.allclose(np.sort(np.abs(osc.imag)), [w, w], rtol=1e-9)
    assert np.allclose(osc.real, 0.0, atol=1e-9)
    # the constraint directions decay with the Baumgarte rate (critically damped, 1/0.1 s)
    rest = ev[np.abs(ev.imag) <= 1.0]
    assert np.allclose(rest.real, -10.0, atol=1e-5)


def test_to_casadi_matches_numeric():
    s = four_bar_system()
    cs = to_casadi(s)
    ctx = s.create_default_context()
    s.set_positions(ctx, [0.3, -0.2, 0.1])
    s.set_velocities(ctx, [0.5, -1.0, 0.2])
    xdot = s.eval_time_derivatives(ctx)
    x = np.asarray(ctx.continuous_state)
    xs = np.asarray(cs.f(0.0, x, np.zeros(0), np.zeros(0), np.zeros(0))).ravel()
    assert np.allclose(xs, xdot, atol=1e-12)


def test_kkt_solution_satisfies_rows_and_newton_euler():
    s = slider_crank_system()
    ctx = s.create_default_context()
    q, v = s.project_state(slider_crank_guess(0.3), np.array([2.0, 0.0, 0.0]))
    s.set_positions(ctx, q)
    s.set_velocities(ctx, v)
    sol = s.solve(ctx)
    c = s.constraints[0]
    assert np.max(np.abs(c.residual(q, v, sol.vdot))) < 1e-10
    H = np.asarray(s.tree.mass_matrix(q))
    C = np.asarray(s.tree.bias_forces(q, v)).ravel()
    assert np.allclose(H @ sol.vdot + C, sol.tau_constraint, atol=1e-10)


def test_redundant_constraint_warns_naming_rows_and_gives_least_squares():
    t = parallelogram_four_bar()
    with pytest.warns(RedundantConstraintWarning, match=r"ball3\[y\]"):
        s = RigidBodySystem(t, constraints=[BallConstraint(t, "pivot_b", "tip", name="ball3")])
    ctx = s.create_default_context()
    s.set_positions(ctx, [0.5, -0.5, 0.5])
    xdot = s.eval_time_derivatives(ctx)
    ref = four_bar_system()
    c2 = ref.create_default_context()
    ref.set_positions(c2, [0.5, -0.5, 0.5])
    assert np.all(np.isfinite(xdot))
    assert np.allclose(xdot, ref.eval_time_derivatives(c2), atol=1e-9)
    # twice the same closure: duplicated rows, still finite and the same motion
    t2 = parallelogram_four_bar()
    with pytest.warns(RedundantConstraintWarning, match=r"again\[0\]"):
        s2 = RigidBodySystem(t2, constraints=[BallConstraint(t2, "pivot_b", "tip", axes=XZ, name="closure"),
                                              BallConstraint(t2, "pivot_b", "tip", axes=XZ, name="again")])
    c3 = s2.create_default_context()
    s2.set_positions(c3, [0.5, -0.5, 0.5])
    assert np.allclose(s2.eval_time_derivatives(c3), ref.eval_time_derivatives(c2), atol=1e-9)


def test_conflicting_constraints_least_squares_not_nan():
    """Closing the crank tip on two different world points: no exact solution; the
    least-squares answer is finite (and a warning names the rows)."""
    t = parallelogram_four_bar()
    X = np.eye(4); X[0, 3] = 0.81
    t.add_frame("elsewhere", "world", X)
    with pytest.warns(RedundantConstraintWarning):
        s = RigidBodySystem(t, constraints=[BallConstraint(t, "pivot_b", "tip", axes=XZ, name="a"),
                                            BallConstraint(t, "elsewhere", "tip", axes=XZ, name="b")])
    ctx = s.create_default_context()
    s.set_positions(ctx, [0.5, -0.5, 0.5])
    xdot = s.eval_time_derivatives(ctx)
    assert np.all(np.isfinite(xdot))


def test_actuator_and_sensor_ports_and_symbolic_actuation():
    t = parallelogram_four_bar()
    act = GeneralizedForceActuator(t, ["j1"], name="motor")
    sen = FullStateSensor(t, name="enc")
    s = RigidBodySystem(t, actuators=[act], sensors=[sen],
                        constraints=[BallConstraint(t, "pivot_b", "tip", axes=XZ, name="closure")])
    assert s.get_input_port("motor").size == 1
    ctx = s.create_default_context()
    s.get_input_port("motor").fix_value(ctx, [2.0])
    s.set_positions(ctx, [0.0, 0.0, 0.0])
    a = s.get_output_port("generalized_acceleration").eval(ctx)
    # at the bottom a torque u on crank 1 gives theta'' = u / M_eff
    M = (1.0 + 1.5) * 0.25 / 3.0 + 2.0 * 0.25 + 2e-9
    assert np.allclose(a, np.array([1, -1, 1]) * 2.0 / M, rtol=1e-9)
    assert np.allclose(s.get_output_port("enc").eval(ctx), ctx.continuous_state)
    lin = linearize(s, ctx, equilibrium_check=False)
    assert np.allclose(lin.B[3:, 0], np.array([1, -1, 1]) / M, rtol=1e-9)
    assert len(s.get_output_port("contact_results").eval(ctx)) == 0


def test_bad_blocks_raise():
    t = parallelogram_four_bar()
    other = parallelogram_four_bar()
    with pytest.raises(ValueError, match="another tree"):
        RigidBodySystem(t, constraints=[BallConstraint(other, "pivot_b", "tip", name="c")])
    with pytest.raises(TypeError, match="ConstraintForce"):
        RigidBodySystem(t, constraints=[FullStateSensor(t, name="x")])
    with pytest.raises(ValueError, match="not a body or frame"):
        BallConstraint(t, "nowhere", "tip")


def test_unilateral_system_refuses_symbols():
    from multibody.constraints import JointLimitConstraint
    t = parallelogram_four_bar()
    s = RigidBodySystem(t, constraints=[JointLimitConstraint(t, "j1", lower=-0.3, name="lim")])
    with pytest.raises(SymbolicEvaluationError, match="lim"):
        to_casadi(s)


class _AccelSensor(Sensor):
    """Reads the generalized acceleration (as an IMU would)."""

    def __init__(self, tree, name):
        super().__init__(tree, needs_acceleration=True, name=name)
        self.declare_output_port("vdot", self.nv, lambda c: self.acceleration_port.eval(c),
                                 feedthrough=True, prerequisites=())


class _LagTorque(Actuator):
    """Torque on the first joint following its command with a lag (one continuous state)."""

    def __init__(self, tree, T, name):
        super().__init__(tree, 1, name)
        self.T = T
        self.declare_continuous_state(1)

    def time_derivatives(self, context):
        return (self.command_port.eval(context) - context.continuous_state) / self.T

    def generalized_force(self, context, q, v, command):
        B = np.zeros((self.nv, 1))
        B[0, 0] = 1.0
        return B @ context.continuous_state


def test_blocks_with_state_and_acceleration_sensor_numeric_and_symbolic():
    t = parallelogram_four_bar()
    act = _LagTorque(t, 0.2, "motor")
    sen = _AccelSensor(t, "imu")
    s = RigidBodySystem(t, actuators=[act], sensors=[sen],
                        constraints=[BallConstraint(t, "pivot_b", "tip", axes=XZ, name="closure")])
    assert s.num_continuous_states() == 3 + 3 + 1
    ctx = s.create_default_context()
    s.get_input_port("motor").fix_value(ctx, [3.0])
    x = np.array([0.2, -0.2, 0.2, 0.1, -0.1, 0.1, 1.5])
    ctx.set_continuous_state(x)
    xdot = s.eval_time_derivatives(ctx)
    assert xdot[-1] == pytest.approx((3.0 - 1.5) / 0.2)
    a = s.get_output_port("generalized_acceleration").eval(ctx)
    assert np.allclose(s.get_output_port("imu").eval(ctx), a)
    assert np.allclose(xdot[3:6], a)
    # the lagged torque 1.5 N m acts: H a + C = tau + J^T f
    sol = s.solve(ctx)
    H = np.asarray(t.mass_matrix(x[:3]))
    C = np.asarray(t.bias_forces(x[:3], x[3:6])).ravel()
    assert np.allclose(H @ a + C, np.array([1.5, 0, 0]) + sol.tau_constraint, atol=1e-10)
    # the same on CasADi symbols (state with the actuator's, outputs with the sensor's)
    cs = to_casadi(s)
    xs = np.asarray(cs.f(0.0, x, np.zeros(0), [3.0], np.zeros(0))).ravel()
    assert np.allclose(xs, xdot, atol=1e-12)
    y = np.asarray(cs.g(0.0, x, np.zeros(0), [3.0], np.zeros(0))).ravel()
    assert np.allclose(y[-3:], a, atol=1e-12)
