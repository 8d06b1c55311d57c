"""Continuous-time constraint blocks: closure rows against finite differences and
symbols, Baumgarte gains, a free body + ball closure against a revolute pendulum, weld and
distance closures, joint limits."""
import casadi as ca
import numpy as np
import pytest

from multibody import Free, RigidBodyTree
from multibody.models import (G, free_pendulum, free_pendulum_state, parallelogram_four_bar,
                                   revolute_pendulum)
from multibody.constraints import (BallConstraint, DistanceConstraint, JointLimitConstraint,
                                              WeldConstraint, baumgarte_gains)
from multibody.plants import RigidBodySystem
from systems.analysis import Simulator


def _tree_with_frames():
    t = parallelogram_four_bar()
    X = np.eye(4)
    X[:3, :3] = np.array([[0, -1, 0], [1, 0, 0], [0, 0, 1]])
    X[:3, 3] = [0.1, 0.05, 0.2]
    t.add_frame("offset", "coupler", X)
    return t


@pytest.mark.parametrize("make", [
    lambda t: BallConstraint(t, "pivot_b", "tip", name="b"),
    lambda t: BallConstraint(t, "offset", "crank1", axes=[[1, 0, 0], [0.6, 0, 0.8]], name="b2"),
    lambda t: WeldConstraint(t, "crank1", "offset", name="w"),
    lambda t: DistanceConstraint(t, "pivot_b", "offset", 0.9, name="d"),
])
def test_rows_match_finite_differences_and_symbols(make):
    t = _tree_with_frames()
    c = make(t)
    rng = np.random.default_rng(3)
    q, v = rng.normal(size=3) * 0.3, rng.normal(size=3)
    phi, J, jdv = (np.asarray(a, float) for a in c.kinematic_terms(q, v))
    assert J.shape == (c.num_rows, 3) and phi.shape == (c.num_rows,)
    h = 1e-6
    dphi = (np.asarray(c.position_error(q + h * v)).ravel()
            - np.asarray(c.position_error(q - h * v)).ravel()) / (2 * h)
    if isinstance(c, WeldConstraint):
        # the rotation rows are vee(skew(R_B R_A^T)): their rate equals w_B - w_A at R_B = R_A
        dphi, J_cmp = dphi[3:], J[3:]
    else:
        J_cmp = J
    assert np.allclose(J_cmp @ v, dphi, atol=1e-7)
    # Jdot v: d/dt (J(q(t)) v) at constant v
    J_p = np.asarray(c.kinematic_terms(q + h * v, v)[1], float)
    J_m = np.asarray(c.kinematic_terms(q - h * v, v)[1], float)
    assert np.allclose((J_p - J_m) @ v / (2 * h), jdv, atol=1e-6)
    # same rows on CasADi symbols
    qs, vs = ca.SX.sym("q", 3), ca.SX.sym("v", 3)
    Js, bs = c.equality_terms(qs, vs)
    f = ca.Function("f", [qs, vs], [Js, bs])
    Jn, bn = c.equality_terms(q, v)
    Jf, bf = f(q, v)
    assert np.allclose(np.asarray(Jf), np.asarray(Jn), atol=1e-12)
    assert np.allclose(np.asarray(bf).ravel(), np.asarray(bn).ravel(), atol=1e-10)
    # b = Jdot v + alpha J v + beta phi with the default (critically damped, 0.1 s)
    assert np.allclose(np.asarray(bn).ravel(), jdv + 20.0 * (J @ v) + 100.0 * phi, atol=1e-10)


def test_baumgarte_gains():
    assert baumgarte_gains() == (20.0, 100.0)
    assert baumgarte_gains(None) == (0.0, 0.0)
    assert baumgarte_gains(0.5, 0.5) == pytest.approx((2.0, 4.0))
    assert baumgarte_gains(gains=(3.0, 7.0)) == (3.0, 7.0)
    with pytest.raises(ValueError, match="time constant"):
        baumgarte_gains(-1.0)
    t = parallelogram_four_bar()
    c = BallConstraint(t, "pivot_b", "tip", time_constant=None, name="c")
    assert (c.alpha, c.beta) == (0.0, 0.0)


def test_closure_errors():
    t = parallelogram_four_bar()
    with pytest.raises(ValueError, match="are on the same body 'crank1'"):
        BallConstraint(t, "crank1", "crank1")
    with pytest.raises(ValueError, match="axes"):
        BallConstraint(t, "pivot_b", "tip", axes=[[1, 0]])
    with pytest.raises(ValueError, match="distance"):
        DistanceConstraint(t, "pivot_b", "tip", 0.0)


def _angle_log(s, ctx, T, n, angle):
    sim = Simulator(s, ctx, integrator="RK45", accuracy=1e-10, max_step=0.05)
    sim.initialize()
    out = []
    for T_ in np.linspace(T / n, T, n):
        sim.advance_to(T_)
        out.append(angle(s.get_positions(ctx)))
    return np.array(out)


def test_free_body_with_ball_closure_matches_revolute_pendulum():
    th0, l = 0.8, 0.7
    rev = RigidBodySystem(revolute_pendulum(l))
    c1 = rev.create_default_context()
    rev.set_positions(c1, [th0])
    a_rev = _angle_log(rev, c1, 5.0, 50, lambda q: q[0])
    t = free_pendulum(l)
    fre = RigidBodySystem(t, constraints=[BallConstraint(t, "world", "pivot", name="pivot")])
    c2 = fre.create_default_context()
    fre.set_positions(c2, free_pendulum_state(th0, l))
    a_free = _angle_log(fre, c2, 5.0, 50, lambda q: 2 * np.arctan2(q[2], q[0]))
    assert np.ptp(a_rev) > 1.5  # it swings
    assert np.max(np.abs(a_free - a_rev)) < 1e-6


def test_weld_closure_holds_a_free_body():
    t = RigidBodyTree("welded")
    t.add_body("b", 2.0, com=(0.1, 0, 0), inertia=0.01 * np.eye(3))
    t.add_joint(Free("float", "world", "b"))
    s = RigidBodySystem(t, constraints=[WeldConstraint(t, "world", "b", name="weld")])
    ctx = s.create_default_context()
    sol = s.solve(ctx)
    assert np.allclose(sol.vdot, 0.0, atol=1e-12)
    # the weld carries the weight and its moment about the body origin (force on the body)
    assert np.allclose(sol.f[3:], [0, 0, 2.0 * G], atol=1e-10)
    assert np.allclose(sol.f[:3], [0, -0.1 * 2.0 * G, 0], atol=1e-10)  # cancels r x m g


def test_distance_closure_is_a_point_pendulum():
    """A free body on a distance closure swings like a pendulum whose bob does not rotate:
    the revolute pendulum with the bob's rotational inertia removed (I = 0)."""
    l, th0 = 0.6, 0.5
    t = RigidBodyTree("dist")
    t.add_body("bob", 1.0, inertia=0.02 * np.eye(3))
    t.add_joint(Free("float", "world", "bob"))
    s = RigidBodySystem(t, constraints=[DistanceConstraint(t, "world", "bob", l, name="rope")])
    ctx = s.create_default_context()
    s.set_positions(ctx, [1, 0, 0, 0, -l * np.sin(th0), 0, -l * np.cos(th0)])
    ang = _angle_log(s, ctx, 2.0, 20, lambda q: np.arctan2(-q[4], -q[6]))
    ref = RigidBodyTree("ref")
    ref.add_body("bob", 1.0, com=(0, 0, -l), inertia=1e-12 * np.eye(3))
    from multibody import Revolute
    ref.add_joint(Revolute("h", "world", "bob", axis=(0, 1, 0)))
    r = RigidBodySystem(ref)
    c2 = r.create_default_context()
    r.set_positions(c2, [th0])
    a_ref = _angle_log(r, c2, 2.0, 20, lambda q: q[0])
    assert np.max(np.abs(ang - a_ref)) < 1e-6


def test_joint_limit_stops_the_pendulum_and_holds_it():
    """Released at 1.0 rad with a lower limit at 0.3 rad (restitution 0): it stops there and
    the limit torque balances gravity, m g l sin(0.3)."""
    m, l = 1.5, 0.7
    t = revolute_pendulum(l, m)
    lim = JointLimitConstraint(t, "hinge", lower=0.3, name="stop")
    s = RigidBodySystem(t, constraints=[lim])
    ctx = s.create_default_context()
    s.set_positions(ctx, [1.0])
    sim = Simulator(s, ctx, integrator="RK45", accuracy=1e-10, max_step=0.05)
    sim.initialize()
    assert s.modes(ctx) == (None,)
    sim.advance_to(1.0)
    assert s.modes(ctx) == (("active", None),)
    assert abs(s.get_positions(ctx)[0] - 0.3) < 1e-12
    assert abs(s.get_velocities(ctx)[0]) < 1e-12
    sol = s.solve(ctx)
    assert abs(sol.tau_constraint[0] - m * G * l * np.sin(0.3)) < 1e-9


def test_joint_limit_bounces_with_restitution():
    m, l, e = 1.5, 0.7, 0.5
    t = revolute_pendulum(l, m)
    s = RigidBodySystem(t, constraints=[JointLimitConstraint(t, "hinge", upper=0.2, restitution=e,
                                                        name="stop")])
    ctx = s.create_default_context()
    s.set_positions(ctx, [-0.6])
    sim = Simulator(s, ctx, integrator="RK45", accuracy=1e-10, max_step=0.01)
    sim.initialize()
    # energy: speed at 0.2 rad from rest at -0.6
    I = m * l ** 2 + 0.02
    w_hit = np.sqrt(2 * m * G * l * (np.cos(0.2) - np.cos(0.6)) / I)
    # Drake's order: the run stops at the impact time with the pre-impact velocity; the
    # restitution impulse is pending and advance_pending_events applies it at that time.
    sim.set_monitor(lambda c: "terminate" if sim.get_statistics()["witness_triggers"] else None)
    status = sim.advance_to(1.0)
    assert status.reason == "reached_termination"
    assert abs(s.get_velocities(ctx)[0] - w_hit) < 1e-6
    sim.clear_monitor()
    sim.advance_pending_events()
    assert abs(s.get_velocities(ctx)[0] + e * w_hit) < 1e-6
    sim.advance_to(1.0)
    assert s.get_positions(ctx)[0] <= 0.2 + 1e-12


def test_joint_limit_errors():
    t = revolute_pendulum()
    with pytest.raises(ValueError, match="no joint"):
        JointLimitConstraint(t, "nope", lower=0.0)
    with pytest.raises(ValueError, match="no finite limit"):
        JointLimitConstraint(t, "hinge")
    with pytest.raises(ValueError, match="lower"):
        JointLimitConstraint(t, "hinge", lower=1.0, upper=0.0)
    t2 = free_pendulum()
    with pytest.raises(ValueError, match="quaternion coordinates"):
        JointLimitConstraint(t2, "float", lower=0.0)
