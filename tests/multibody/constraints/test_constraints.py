"""The time-stepping constraint blocks: row Jacobians against finite differences of their
position errors, row layout and kinds, softening parameters and argument checks; and the
physical checks of the non-contact blocks (issue 6, "must show 2"; h = 1e-3): a ball-joint
loop-closure pendulum against a revolute one, a distance-constraint pendulum, a weld, a
four-bar linkage's loop closure over 10 s, and a joint limit stopping a swinging link."""
from __future__ import annotations

import numpy as np
import pytest

from _time_stepping_models import four_bar, free_boxes, free_spheres, pendulum, quat_y
from multibody import Ball, Free, Revolute, RigidBodyTree
from multibody.constraints import (BILATERAL, BOUNDED, FRICTION_BOX, FRICTION_CONE, UNILATERAL,
                                   BallConstraint, DistanceConstraint, JointFrictionConstraint,
                                   JointLimitConstraint, PointContactConstraint, WeldConstraint,
                                   softening_from_spring, tangent_basis)
from multibody.plants import TimeSteppingRigidBodySystem


def _rows(tree, block, q, v, h=1e-3):
    sys = TimeSteppingRigidBodySystem(tree, h, constraints=[block])
    _, _, kin = sys.kinematics(np.asarray(q, float), np.asarray(v, float))
    return block.calc_rows(block.create_default_context(), kin), sys


def _fd_check(tree, block, q, v, eps=1e-7, rtol=1e-5, n=None):
    """J v equals d phi / dt along q(t) = integrate(q, v, t) (central differences), for the
    first ``n`` rows (default all)."""
    rows, _ = _rows(tree, block, q, v)
    rp, _ = _rows(tree, block, tree.integrate(q, v, eps), v)
    rm, _ = _rows(tree, block, tree.integrate(q, v, -eps), v)
    dphi = (rp.phi - rm.phi) / (2 * eps)
    k = rows.m if n is None else n
    np.testing.assert_allclose((rows.J @ v)[:k], dphi[:k], rtol=rtol, atol=1e-6)
    return rows


def _two_link_free(seed=0):
    rng = np.random.default_rng(seed)
    t = RigidBodyTree("links")
    for name in ("a", "b"):
        t.add_body(name, 1.0, com=(0.1, 0, 0), inertia=np.eye(3) * 0.01)
    t.add_joint(Free("fa", "world", "a"))
    t.add_joint(Ball("ab", "a", "b", origin=np.array([[1, 0, 0, 0.3], [0, 1, 0, 0],
                                                      [0, 0, 1, 0], [0, 0, 0, 1.0]])))
    X = np.eye(4)
    X[:3, 3] = (0.2, 0.1, -0.05)
    t.add_frame("a_tip", "a", X)
    t.add_frame("b_tip", "b", X)
    q = t.random_configuration(rng)
    v = rng.normal(size=t.nv)
    return t, q, v


@pytest.mark.parametrize("make", [
    lambda t: BallConstraint(t, "a_tip", "b_tip"),
    lambda t: WeldConstraint(t, "a_tip", "b_tip"),
    lambda t: DistanceConstraint(t, "world", "b_tip", 0.7),
    lambda t: BallConstraint(t, "world", "a_tip"),
])
def test_bilateral_rows_are_the_derivative_of_their_error(make):
    tree, q, v = _two_link_free()
    block = make(tree)
    rows = _fd_check(tree, block, q, v)
    assert np.all(rows.kind == BILATERAL)
    assert block.is_bilateral()
    assert rows.m in (1, 3, 6)
    np.testing.assert_allclose(rows.bias, 0.2 * rows.phi / 1e-3)


def test_weld_rotation_error_is_sine_times_the_axis_of_the_error_rotation():
    # One definition for both plants (symbolic-friendly): phi_R = vee(skew(E)), E = R_B R_A^T,
    # i.e. sin(theta) times the axis of the rotation E = exp(theta axis).
    tree, q, v = _two_link_free(3)
    rows, _ = _rows(tree, WeldConstraint(tree, "a_tip", "b_tip"), q, v)
    Ra = tree.body_pose("a_tip", q)[:3, :3]
    Rb = tree.body_pose("b_tip", q)[:3, :3]
    from multibody import spatial
    w = spatial.log_so3(Rb @ Ra.T)
    theta = np.linalg.norm(w)
    assert theta > 0.3                                   # a large error: first order is not enough
    np.testing.assert_allclose(rows.phi[:3], np.sin(theta) * w / theta, atol=1e-12)
    np.testing.assert_allclose(rows.phi[3:], tree.body_pose("b_tip", q)[:3, 3]
                               - tree.body_pose("a_tip", q)[:3, 3], atol=1e-12)


def test_contact_rows_layout_and_derivative():
    tree = free_spheres(1, radius=0.1)
    rng = np.random.default_rng(4)
    q = tree.neutral_configuration()
    q[:4] = quat_y(0.3)
    q[6] = 0.099                                  # 1 mm penetration
    v = rng.normal(size=6)
    block = PointContactConstraint(tree, mu=0.7, num_directions=6, name="c")
    rows = _fd_check(tree, block, q, v, n=1)         # the normal row: d(distance)/dt
    assert rows.m == 1 + 6
    assert rows.kind[0] == UNILATERAL and np.all(rows.kind[1:] == FRICTION_CONE)
    np.testing.assert_array_equal(rows.normal, [-1] + [0] * 6)
    np.testing.assert_allclose(rows.hi[1:], 0.7)
    np.testing.assert_allclose(rows.phi[0], -1e-3, atol=1e-12)
    assert rows.bias[0] == pytest.approx(0.2 * -1e-3 / 1e-3)       # erp phi / h
    # friction rows: velocity of the contact point along unit tangent directions
    dirs = rows.info["dirs"]
    np.testing.assert_allclose(np.linalg.norm(dirs, axis=1), 1.0)
    np.testing.assert_allclose(dirs @ [0, 0, 1.0], 0.0, atol=1e-15)
    x = np.array([q[4], q[5], -0.0005])          # midway between the witness points
    w_world = tree.body_pose("ball0", q)[:3, :3] @ v[:3]
    vel = tree.body_pose("ball0", q)[:3, :3] @ v[3:] + np.cross(w_world, x - q[4:7])
    np.testing.assert_allclose(rows.J[1:] @ v, dirs @ vel, atol=1e-12)
    # the box variant: two tangent rows bounded by mu times the normal impulse
    box = PointContactConstraint(tree, mu=0.7, friction="box", formulation="stewart_trinkle")
    rb, _ = _rows(tree, box, q, v)
    assert rb.m == 3 and np.all(rb.kind[1:] == FRICTION_BOX)
    np.testing.assert_allclose(rb.lo[1:], -0.7)
    assert rb.bias[0] == pytest.approx(-1e-3 / 1e-3)                # Stewart-Trinkle: phi / h


def test_contact_margin_and_gap_bias():
    tree = free_boxes(1)
    q = tree.neutral_configuration()
    q[6] = 0.1 + 0.003                                             # 3 mm gap, margin 5 mm
    rows, _ = _rows(tree, PointContactConstraint(tree), q, np.zeros(6))
    assert rows.m == 4 * 5
    np.testing.assert_allclose(rows.bias[:4], 0.003 / 1e-3)          # may close the gap
    q[6] = 0.1 + 0.01
    rows, _ = _rows(tree, PointContactConstraint(tree), q, np.zeros(6))
    assert rows.m == 0


def test_tangent_basis_is_orthonormal():
    rng = np.random.default_rng(5)
    n = rng.normal(size=(50, 3))
    n /= np.linalg.norm(n, axis=1, keepdims=True)
    n[0] = (1, 0, 0)
    t1, t2 = tangent_basis(n)
    for a, b in ((n, t1), (n, t2), (t1, t2)):
        np.testing.assert_allclose(np.sum(a * b, axis=1), 0, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(t1, axis=1), 1)
    np.testing.assert_allclose(np.cross(t1, t2), n, atol=1e-12)


def test_joint_limit_rows():
    tree = pendulum("revolute", upper=0.3)
    block = JointLimitConstraint(tree, name="lim")
    rows, _ = _rows(tree, block, [0.0], [0.0])
    assert rows.m == 0                                    # far from the limit
    rows, _ = _rows(tree, block, [0.2995], [1.0])         # within margin + h |v|
    assert rows.m == 1 and rows.kind[0] == UNILATERAL
    np.testing.assert_allclose(rows.J, [[-1.0]])
    assert rows.phi[0] == pytest.approx(5e-4)
    rows, _ = _rows(tree, block, [0.31], [0.0])
    assert rows.bias[0] == pytest.approx(0.2 * -0.01 / 1e-3)
    with pytest.raises(ValueError, match="'float' \\(free\\) has quaternion coordinates"):
        JointLimitConstraint(pendulum("free"), ["float"])
    with pytest.raises(ValueError, match="no joint named 'nope'"):
        JointLimitConstraint(tree, ["nope"])


def test_joint_friction_rows():
    tree, _ = four_bar()
    block = JointFrictionConstraint(tree, ["j_crank", "j_rocker"], friction=[2.0, 3.0])
    rows, _ = _rows(tree, block, np.zeros(3), np.zeros(3), h=1e-2)
    assert np.all(rows.kind == BOUNDED)
    np.testing.assert_allclose(rows.hi, [0.02, 0.03])
    np.testing.assert_allclose(rows.lo, [-0.02, -0.03])
    with pytest.raises(ValueError, match="friction has size 3 but the joints have 2"):
        JointFrictionConstraint(tree, ["j_crank", "j_rocker"], friction=[1, 2, 3])


def test_softening_parameters():
    erp, cfm = softening_from_spring(1000.0, 10.0, 1e-3)
    assert erp == pytest.approx(1.0 / 11.0) and cfm == pytest.approx(1.0 / 11.0)
    tree = pendulum("free")
    b = BallConstraint(tree, "world", "link", kp=1000.0, kd=10.0)
    ctx = b.create_default_context()
    assert b.softening(ctx, 1e-3) == pytest.approx((1 / 11, 1 / 11))
    with pytest.raises(ValueError, match="give both kp and kd"):
        BallConstraint(tree, "world", "link", kp=1.0)
    with pytest.raises(ValueError, match=r"erp must be in \[0, 1\]"):
        BallConstraint(tree, "world", "link", erp=1.5)
    with pytest.raises(ValueError, match="are on the same body 'link'"):
        BallConstraint(tree, "link", "link")
    with pytest.raises(ValueError, match="mu must be finite and >= 0"):
        PointContactConstraint(tree, mu=-1)


def test_contact_filtering_free_joints_and_fixed_bodies():
    from multibody import Weld
    from multibody.geometry import Box, Halfspace, Sphere
    t = RigidBodyTree("scene")
    t.add_body("table", 5.0, inertia=np.eye(3) * 0.1)
    X = np.eye(4)
    X[2, 3] = 0.05
    t.add_joint(Weld("bolt", "world", "table", origin=X))     # fixed to the world
    t.add_collision_geometry("table", Box((1, 1, 0.1)), name="table_top")
    t.add_body("ball", 1.0, inertia=np.eye(3) * 0.004)
    t.add_joint(Free("float", "world", "ball"))
    t.add_collision_geometry("ball", Sphere(0.1), name="ball_geom")
    t.add_collision_geometry("world", Halfspace(), name="ground")
    q = t.neutral_configuration()
    q[6] = 0.2                                   # resting on the table top (z = 0.1)
    rows, _ = _rows(t, PointContactConstraint(t, name="c"), q, np.zeros(6))
    pairs = {(ga.name, gb.name) for ga, gb in rows.info["geometries"]}
    # table-ground (both fixed) skipped; ball-table found; ball-ground across the free
    # joint is tested (0.2 m apart: out of the margin)
    assert pairs == {("table_top", "ball_geom")}
    q[6] = -0.5                                  # below the ground: ball-ground found too
    rows, _ = _rows(t, PointContactConstraint(t, name="c"), q, np.zeros(6))
    assert ("ground", "ball_geom") in {(ga.name, gb.name) for ga, gb in rows.info["geometries"]} \
        or ("ball_geom", "ground") in {(ga.name, gb.name) for ga, gb in rows.info["geometries"]}


# ----------------------------------------------------------------------------- physics
G = 9.81


def _system(tree, constraints, h=1e-3, **kw):
    s = TimeSteppingRigidBodySystem(tree, h, constraints=constraints, **kw)
    return s, s.create_default_context()


def test_ball_closure_pendulum_matches_revolute():
    theta0, L = 0.8, 0.5
    tr = pendulum("revolute", L)
    s1, c1 = _system(tr, [])
    s1.set_positions(c1, [theta0])
    tf = pendulum("free", L)
    s2, c2 = _system(tf, [BallConstraint(tf, "world", "link", name="pivot")])
    s2.set_positions(c2, np.concatenate([quat_y(theta0), np.zeros(3)]))
    worst = 0.0
    for _ in range(50):
        s1.advance(c1, 100)
        s2.advance(c2, 100)
        R = tf.body_pose("link", s2.get_positions(c2))[:3, :3]
        th2 = np.arctan2(R[0, 2], R[2, 2])
        worst = max(worst, abs(th2 - s1.get_positions(c1)[0]))
        assert np.linalg.norm(s2.get_positions(c2)[4:]) < 1e-9     # pivot stays put
    assert worst < 1e-3
    assert abs(s1.get_positions(c1)[0]) <= theta0 + 1e-3         # it did swing


def test_four_bar_loop_stays_closed_for_10_s():
    tree, q0 = four_bar()
    s, ctx = _system(tree, [BallConstraint(tree, "coupler_end", "rocker_end", name="closure")])
    s.set_positions(ctx, q0)
    err, qs = 0.0, []
    for _ in range(100):
        s.advance(ctx, 100)
        q = s.get_positions(ctx)
        qs.append(q)
        err = max(err, np.linalg.norm(tree.relative_transform("coupler_end", "rocker_end",
                                                              q)[:3, 3]))
    assert err < 1e-6
    assert np.ptp(np.array(qs)[:, 0]) > 0.5        # the crank really moved


def test_joint_limit_stops_swinging_link():
    upper = 0.3
    tree = pendulum("revolute", 0.5, upper=upper)
    s, ctx = _system(tree, [JointLimitConstraint(tree, name="limits")])
    s.set_velocities(ctx, [4.0])     # would swing to ~1.3 rad without the limit
    qs, vs = [], []
    for _ in range(400):
        s.advance(ctx, 1)
        qs.append(s.get_positions(ctx)[0])
        vs.append(s.get_velocities(ctx)[0])
    qs, vs = np.array(qs), np.array(vs)
    assert qs.max() <= upper + 1e-3
    assert qs.max() == pytest.approx(upper, abs=1e-6)
    k = int(np.argmax(qs > upper - 1e-9))     # the step that lands on the limit (phi / h)
    assert vs[k] > 1.0                        # arrives with its closing speed ...
    assert vs[k + 1] == pytest.approx(0.0, abs=1e-9)   # ... then stopped (inelastic)
    assert np.all(vs[k + 1:] <= 1e-9)
    assert qs[-1] < upper - 0.05              # and swung back under gravity


def test_distance_constraint_pendulum_matches_revolute():
    from multibody import RigidBodyTree, Translational
    from multibody.constraints import DistanceConstraint
    L, m, theta0 = 0.7, 1.3, 0.5
    rev = RigidBodyTree("rev")
    rev.add_body("bob", m, com=(0, 0, -L), inertia=np.zeros((3, 3)))
    from multibody import Revolute
    rev.add_joint(Revolute("hinge", "world", "bob", axis=(0, 1, 0)))
    s1, c1 = _system(rev, [])
    s1.set_positions(c1, [theta0])
    pt = RigidBodyTree("point")
    pt.add_body("bob", m, inertia=np.zeros((3, 3)))
    pt.add_joint(Translational("xyz", "world", "bob"))
    s2, c2 = _system(pt, [DistanceConstraint(pt, "world", "bob", L, name="rod")])
    s2.set_positions(c2, [-L * np.sin(theta0), 0.0, -L * np.cos(theta0)])
    worst = 0.0
    for _ in range(30):
        s1.advance(c1, 100)
        s2.advance(c2, 100)
        x = s2.get_positions(c2)
        assert np.linalg.norm(x) == pytest.approx(L, abs=1e-9)
        worst = max(worst, abs(np.arctan2(-x[0], -x[2]) - s1.get_positions(c1)[0]))
    assert worst < 1e-3


def test_weld_constraint_holds_a_free_body():
    from multibody.constraints import WeldConstraint
    tree = free_boxes(1, ground=False)
    X = np.eye(4)
    X[:3, 3] = (0.1, -0.2, 0.5)
    tree.add_frame("anchor", "world", X)
    s, ctx = _system(tree, [WeldConstraint(tree, "anchor", "box0", name="weld")])
    q = tree.neutral_configuration()
    q[4:] = X[:3, 3]
    s.set_positions(ctx, q)
    s.set_velocities(ctx, [0.3, 0, 0, 0, 0.1, 0])      # violates the weld: removed at once
    s.advance(ctx, 100)
    np.testing.assert_allclose(s.get_positions(ctx), q, atol=1e-9)
    step = s.get_output_port("step").eval(ctx)
    np.testing.assert_allclose(step.tau_constraint, [0, 0, 0, 0, 0, G], atol=1e-9)
