"""RigidBodySystem with frictional point contact (Baraff's acceleration-level LCP, witness
functions and touchdown impulses): analytic bouncing, sliding and resting."""
import numpy as np
import pytest

from actuators import Actuator
from multibody.models import G, ball_on_ground, box_on_ground, leaning_rod
from multibody.constraints import PointContactConstraint
from multibody.plants import PainleveError, RigidBodySystem
from systems.analysis import Simulator


def _system(tree, **kw):
    return RigidBodySystem(tree, constraints=[PointContactConstraint(tree, name="contact", **{"mu": 0.5, **kw})])


def test_bouncing_ball_impact_times_match_the_analytic_sequence():
    e, h0, r = 0.5, 1.0, 0.1
    s = _system(ball_on_ground(radius=r), mu=0.5, restitution=e)
    ctx = s.create_default_context()
    s.set_positions(ctx, [1, 0, 0, 0, 0, 0, h0 + r])
    sim = Simulator(s, ctx, integrator="RK45", accuracy=1e-10, max_step=0.05)
    sim.initialize()
    impacts, prev = [], [0.0, 0.0]

    def monitor(c):
        # Drake's order: the monitor at an impact time sees the pre-impact velocity; the
        # impulse is applied at the start of the next step, so a rebound seen at the end
        # of a step is an impact at the start of that step (the previous monitor time).
        t, vz = float(ctx.time), s.get_velocities(ctx)[5]
        if prev[1] < -1e-9 and vz > prev[1] - G * (t - prev[0]) + 1e-6:  # a rebound
            impacts.append(prev[0])
        prev[:] = [t, vz]
    sim.set_monitor(monitor)
    sim.advance_to(1.6)
    v1 = np.sqrt(2 * G * h0)
    expected = [v1 / G]
    for k in range(1, 12):
        expected.append(expected[-1] + 2 * e ** k * v1 / G)
    assert len(impacts) >= 12
    assert np.max(np.abs(np.array(impacts[:12]) - expected)) < 1e-8
    # Zeno accumulation point t_inf = t1 (1 + 2e/(1-e)): at rest after it, on the ground
    assert s.modes(ctx)[0] == ("stick", None)
    assert abs(s.get_positions(ctx)[6] - r) < 1e-12
    assert np.max(np.abs(s.get_velocities(ctx))) < 1e-12
    res = s.get_output_port("contact_results").eval(ctx)
    assert len(res) == 1 and abs(res[0].normal_force - 1.0 * G) < 1e-9
    assert np.allclose(res[0].normal, [0, 0, 1])


def test_box_slides_to_rest_at_the_coulomb_distance():
    mu, v0, m = 0.5, 1.0, 2.0
    s = _system(box_on_ground(mass=m), mu=mu)
    ctx = s.create_default_context()
    s.set_positions(ctx, [1, 0, 0, 0, 0, 0, 0.1])
    s.set_velocities(ctx, [0, 0, 0, v0, 0, 0])
    sim = Simulator(s, ctx, integrator="RK45", accuracy=1e-10, max_step=0.05)
    sim.initialize()
    assert s.modes(ctx)[0][0] == "slide"
    res = s.get_output_port("contact_results").eval(ctx)
    assert len(res) == 4
    assert abs(res.normal_forces().sum() - m * G) < 1e-9
    f = res.total_force("box")
    assert np.allclose(f, [-mu * m * G, 0, m * G], atol=1e-9)
    assert abs(s.solve(ctx).vdot[3] + mu * G) < 1e-9
    stop, prev = [], [0.0]

    def monitor(c):  # the mode switches at the start of the step leaving the stop time
        if not stop and s.modes(ctx)[0][0] == "stick":
            stop.append(prev[0])
        prev[0] = float(ctx.time)
    sim.set_monitor(monitor)
    sim.advance_to(0.4)
    assert s.modes(ctx)[0] == ("stick", None)
    assert abs(stop[0] - v0 / (mu * G)) < 1e-8
    d = s.get_positions(ctx)[4]
    assert abs(d - v0 ** 2 / (2 * mu * G)) < 1e-6
    assert np.max(np.abs(s.get_velocities(ctx))) < 1e-9


def test_box_at_rest_keeps_zero_velocity():
    m = 2.0
    s = _system(box_on_ground(mass=m), mu=0.5)
    ctx = s.create_default_context()
    q0 = np.array([1, 0, 0, 0, 0.3, -0.2, 0.1])
    s.set_positions(ctx, q0)
    sim = Simulator(s, ctx, integrator="RK45", accuracy=1e-8, max_step=1.0)
    sim.initialize()
    assert s.modes(ctx)[0] == ("stick", None)
    drift = 0.0
    for T in np.linspace(0.5, 5.0, 10):
        sim.advance_to(T)
        drift = max(drift, np.max(np.abs(s.get_positions(ctx) - q0)))
    assert drift < 1e-9
    res = s.get_output_port("contact_results").eval(ctx)
    assert abs(res.normal_forces().sum() - m * G) < 1e-9


def test_box_dropped_flat_lands_and_rests():
    s = _system(box_on_ground(), mu=0.5, restitution=0.0)
    ctx = s.create_default_context()
    s.set_positions(ctx, [1, 0, 0, 0, 0, 0, 0.3])
    sim = Simulator(s, ctx, integrator="RK45", accuracy=1e-9, max_step=0.05)
    sim.initialize()
    assert s.modes(ctx)[0] is None
    sim.advance_to(0.5)
    t_hit = np.sqrt(2 * 0.2 / G)
    assert t_hit < 0.5
    assert s.modes(ctx)[0] == ("stick", None)
    assert abs(s.get_positions(ctx)[6] - 0.1) < 1e-12
    assert np.max(np.abs(s.get_velocities(ctx))) < 1e-9


def test_thrown_up_ball_lifts_off_and_lands_again():
    """In contact at rest, an upward velocity makes the site separate (liftoff by the
    touchdown guard being re-armed) and land again with restitution 0."""
    s = _system(ball_on_ground(), mu=0.5, restitution=0.0)
    ctx = s.create_default_context()
    s.set_positions(ctx, [1, 0, 0, 0, 0, 0, 0.1 + 1e-12])
    s.set_velocities(ctx, [0, 0, 0, 0, 0, 2.0])
    sim = Simulator(s, ctx, integrator="RK45", accuracy=1e-10, max_step=0.05)
    sim.initialize()
    assert s.modes(ctx)[0] is None
    sim.advance_to(2 * 2.0 / G - 1e-3)
    assert s.modes(ctx)[0] is None
    sim.advance_to(2 * 2.0 / G + 1e-3)
    assert s.modes(ctx)[0] == ("stick", None)


def _rod(mu, vx):
    tree, q = leaning_rod()
    s = _system(tree, mu=mu)
    ctx = s.create_default_context()
    q[6] -= s.constraints[0].gap(q, 0)
    th = np.pi / 6
    R = np.array([[np.cos(th), 0, np.sin(th)], [0, 1, 0], [-np.sin(th), 0, np.cos(th)]])
    s.set_positions(ctx, q)
    s.set_velocities(ctx, np.concatenate([np.zeros(3), R.T @ [vx, 0, 0]]))
    s.reset_modes(ctx)
    return s, ctx


def test_painleve_configuration_is_reported():
    """A rod sliding on its end with mu = 4 > the Painleve bound (2.5 at 30 degrees): no
    contact force satisfies the LCP."""
    s, ctx = _rod(4.0, 1.0)
    assert s.modes(ctx)[0][0] == "slide"
    with pytest.raises(PainleveError, match="Painleve"):
        s.solve(ctx)
    # the same rod with mu = 0.3 has a solution with positive normal forces
    s2, ctx2 = _rod(0.3, 1.0)
    fn = s2.solve(ctx2).contact_results.normal_forces()
    assert np.all(fn > 0)
    # and the Simulator reports it too (not silently integrated)
    sim = Simulator(s, ctx, integrator="RK45", accuracy=1e-8)
    with pytest.raises(Exception, match="Painleve"):
        sim.initialize()
        sim.advance_to(0.01)


def test_bad_contact_arguments():
    with pytest.raises(ValueError, match="mu"):
        PointContactConstraint(ball_on_ground(), mu=-1.0)
    with pytest.raises(ValueError, match="restitution"):
        PointContactConstraint(ball_on_ground(), restitution=1.5)
    from multibody import RigidBodyTree
    with pytest.raises(ValueError, match="no pair"):
        PointContactConstraint(RigidBodyTree("empty"))


class _LagForce(Actuator):
    """A force along one velocity DOF that follows its command with a first-order lag:
    f' = (command - f) / T (one continuous state)."""

    def __init__(self, tree, index, T, name):
        super().__init__(tree, 1, name)
        self.index, self.T = index, T
        self.declare_continuous_state(1)

    def time_derivatives(self, context):
        return (self.command_port.eval(context) - context.continuous_state) / self.T

    def generalized_force(self, context, q, v, command):
        B = np.zeros((self.nv, 1))
        B[self.index, 0] = 1.0
        return B @ context.continuous_state


def _lagged_box(index, F, T=0.1, mu=0.5):
    t = box_on_ground(mass=2.0)
    act = _LagForce(t, index, T, "push")
    s = RigidBodySystem(t, actuators=[act], constraints=[PointContactConstraint(t, mu=mu, name="contact")])
    ctx = s.create_default_context()
    s.set_positions(ctx, [1, 0, 0, 0, 0, 0, 0.1])
    s.get_input_port("push").fix_value(ctx, [F])
    return s, ctx


def _first_change(s, ctx, T_end):
    sim = Simulator(s, ctx, integrator="RK45", accuracy=1e-10, max_step=0.02)
    sim.initialize()
    m0, seen, prev = s.modes(ctx)[0], [], [0.0]

    def monitor(c):  # the mode switches at the start of the step leaving the event time
        if not seen and s.modes(ctx)[0] != m0:
            seen.append(prev[0])
        prev[0] = float(ctx.time)
    sim.set_monitor(monitor)
    sim.advance_to(T_end)
    return m0, seen[0] if seen else None


def test_liftoff_when_a_lagged_upward_force_exceeds_the_weight():
    """F(t) = 2 m g (1 - exp(-t/T)) upward: the normal force m g - F(t) reaches zero at
    t = T ln 2 (liftoff witness), then the box rises."""
    m, T = 2.0, 0.1
    s, ctx = _lagged_box(5, 2 * m * G, T)
    assert s.num_continuous_states() == 7 + 6 + 1
    m0, t_off = _first_change(s, ctx, 0.12)
    assert m0 == ("stick", None)
    assert abs(t_off - T * np.log(2)) < 1e-8
    assert s.modes(ctx)[0] is None
    assert s.get_positions(ctx)[6] > 0.1 + 1e-6


def test_stick_to_slide_when_a_lagged_push_exceeds_friction():
    """F_x(t) = 2 mu m g (1 - exp(-t/T)): the box sticks until F_x = mu m g at t = T ln 2
    (slip witness), then slides along +x."""
    m, T, mu = 2.0, 0.1, 0.5
    s, ctx = _lagged_box(3, 2 * mu * m * G, T, mu)
    m0, t_slip = _first_change(s, ctx, 0.075)
    assert m0 == ("stick", None)
    assert abs(t_slip - T * np.log(2)) < 1e-8
    mode = s.modes(ctx)[0]
    assert mode[0] == "slide" and np.allclose(mode[1], [1, 0, 0])
    assert s.get_velocities(ctx)[3] > 0
