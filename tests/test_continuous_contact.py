"""RigidBodySystem with frictional point contact (Baraff's acceleration-level LCP, witness
functions and touchdown impulses): analytic bouncing, sliding and resting."""
import numpy as np
import pytest

from multibody._rbs_models import G, ball_on_ground, box_on_ground, leaning_rod
from multibody.continuous_constraints import PointContactForce
from multibody.rigid_body_system import PainleveError, RigidBodySystem
from systems.analysis import Simulator


def _system(tree, **kw):
    return RigidBodySystem(tree, constraints=[PointContactForce(tree, name="contact", **kw)])


def test_bouncing_ball_impact_times_match_the_analytic_sequence():
    e, h0, r = 0.5, 1.0, 0.1
    s = _system(ball_on_ground(radius=r), mu=0.5, restitution=e)
    ctx = s.create_default_context()
    s.set_positions(ctx, [1, 0, 0, 0, 0, 0, h0 + r])
    sim = Simulator(s, ctx, integrator="RK45", accuracy=1e-10, max_step=0.05)
    sim.initialize()
    impacts, prev = [], [0.0, 0.0]

    def monitor(c):
        t, vz = float(ctx.time), s.get_velocities(ctx)[5]
        if vz > 1e-9 and vz > prev[1] - G * (t - prev[0]) + 1e-6:  # a rebound: an impact
            impacts.append(t)
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
    stop = []
    sim.set_monitor(lambda c: stop.append(float(ctx.time)) if not stop and s.modes(ctx)[0][0] == "stick" else None)
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
        PointContactForce(ball_on_ground(), mu=-1.0)
    with pytest.raises(ValueError, match="restitution"):
        PointContactForce(ball_on_ground(), restitution=1.5)
    from multibody import RigidBodyTree
    with pytest.raises(ValueError, match="no pair"):
        PointContactForce(RigidBodyTree("empty"))
