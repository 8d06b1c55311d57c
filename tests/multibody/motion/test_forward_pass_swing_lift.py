"""The swing-foot lift of the forward pass's reference (multibody.motion.swing_lift): a leg
whose foot point skims the floor while the body moves along it gets its foot raised to the
clearance (straight up, orientation and root kept), in proportion to the point's speed below
``v_c``; loaded points and points above the clearance are left alone."""
import numpy as np
import pytest

import _motion_models as W

from multibody.motion import Floor, MotionError
from multibody.motion.balance import leg_chains
from multibody.motion.swing_lift import swing_lift

POINT = (0.0, 0.0, -0.05)


def _leg():
    """Pelvis (free) and a leg of six revolute joints ending in a right foot."""
    return W.six_joint_leg("r-{}", "r-{}_j").finalize()


def _motion(tree, speed, height, K=30):
    """The body translating along x at ``speed`` with the foot point ``height`` above z = 0."""
    q0 = tree.neutral_configuration()
    q0[7:] = [0.0, -0.3, 0.0, 0.6, -0.3, 0.0]             # bent knee, foot level
    T = np.asarray(tree.body_pose("r-foot", q0), float)
    q0[6] += height - (T[:3, :3] @ POINT + T[:3, 3])[2]
    t = np.arange(K) / 120.0
    Q = np.repeat(q0[None], K, 0)
    Q[:, 4] += speed * t
    return t, Q


@pytest.mark.parametrize("speed, factor", [(2.0, 1.0), (0.25, 0.5)])
def test_a_skimming_foot_is_lifted_to_the_clearance_in_proportion_to_its_speed(speed, factor):
    tree = _leg()
    floor = Floor(np.array([0.0, 0.0, 1.0]), np.zeros(3))
    pts = {"r-foot": [POINT]}
    legs = leg_chains(tree, pts, {v: v - 6 for v in range(6, tree.nv)})
    t, Q = _motion(tree, speed, 0.003)
    ql, lift = swing_lift(tree, Q, t, pts, floor, legs, clearance=0.012, speed=0.5,
                          smoothing=0, damping=1e-12)
    np.testing.assert_allclose(lift[:, 0], factor * 0.009, rtol=1e-9)
    np.testing.assert_array_equal(ql[:, :7], Q[:, :7])                 # the root is kept
    for qa, qb in zip(Q, ql):
        Ta, Tb = (np.asarray(tree.body_pose("r-foot", x), float) for x in (qa, qb))
        dz = (Tb[:3, :3] @ POINT + Tb[:3, 3] - Ta[:3, :3] @ POINT - Ta[:3, 3])
        # straight up to first order (one linear step: 10 % of the lift)
        np.testing.assert_allclose(dz, [0, 0, factor * 0.009], atol=0.1 * factor * 0.009)
        np.testing.assert_allclose(Tb[:3, :3], Ta[:3, :3], atol=5e-3)     # not turned


def test_loaded_points_and_points_above_the_clearance_are_not_lifted():
    tree = _leg()
    floor = Floor(np.array([0.0, 0.0, 1.0]), np.zeros(3))
    pts = {"r-foot": [POINT]}
    legs = leg_chains(tree, pts, {v: v - 6 for v in range(6, tree.nv)})
    t, Q = _motion(tree, 2.0, 0.003)
    loads = {"r-foot": np.full((len(t), 1), 100.0)}
    ql, lift = swing_lift(tree, Q, t, pts, floor, legs, loads, clearance=0.012)
    assert not lift.any() and np.array_equal(ql, Q)
    t, Q = _motion(tree, 2.0, 0.02)
    ql, lift = swing_lift(tree, Q, t, pts, floor, legs, clearance=0.012)
    assert not lift.any() and np.array_equal(ql, Q)
    with pytest.raises(MotionError, match="speed"):
        swing_lift(tree, Q, t, pts, floor, legs, speed=0.0)
    with pytest.raises(MotionError, match="q must be"):
        swing_lift(tree, Q[:, :5], t, pts, floor, legs)


def test_the_forward_pass_tracks_the_lifted_feet_and_keeps_the_reference():
    from multibody.motion.forward_pass import ForwardPass
    tree = _leg()
    floor = Floor(np.array([0.0, 0.0, 1.0]), np.zeros(3))
    pts = {"r-foot": [POINT]}
    t, Q = _motion(tree, 2.0, 0.003)
    V = np.zeros((len(t), tree.nv))
    V[:, 3] = 2.0
    fp = ForwardPass(tree, t, pts, floor, swing_clearance=0.012, swing_clearance_speed=0.5)
    ql, vl = fp.lifted_reference(Q, V)
    legs = leg_chains(tree, pts, {v: v - 6 for v in range(6, tree.nv)})
    expect, _ = swing_lift(tree, Q, t, pts, floor, legs, clearance=0.012, speed=0.5)
    np.testing.assert_allclose(ql, expect)
    np.testing.assert_allclose(vl[:, :6], V[:, :6])
    np.testing.assert_allclose(vl[:, 6:], np.gradient(expect[:, 7:] - Q[:, 7:], t, axis=0))
    off = ForwardPass(_leg(), t, pts, floor)
    assert off.lifted_reference(Q, V)[0] is Q


def test_the_lift_is_per_point_and_ramps_into_the_stance():
    """The documented rule (swing_lift's docstring): a loaded point is never lifted for, a
    skimming unloaded point of the same foot still is, and the box filter ramps the lift
    down over the first stance frames instead of cutting it."""
    tree = _leg()
    floor = Floor(np.array([0.0, 0.0, 1.0]), np.zeros(3))
    legs = leg_chains(tree, {"r-foot": [POINT]}, {v: v - 6 for v in range(6, tree.nv)})
    t, Q = _motion(tree, 2.0, 0.003)
    load = np.zeros((len(t), 1))
    load[15:] = 100.0
    _, lift = swing_lift(tree, Q, t, {"r-foot": [POINT]}, floor, legs, {"r-foot": load},
                         clearance=0.012, smoothing=3)
    assert lift[5, 0] == pytest.approx(0.009, rel=1e-9)       # swing: full lift
    np.testing.assert_allclose(lift[15:18, 0], 0.009 * np.array([3, 2, 1]) / 7, rtol=1e-9)
    assert np.all(lift[18:, 0] == 0.0)
    heel = (0.05, 0.0, -0.05)                                 # a second point, loaded throughout
    pts2 = {"r-foot": [POINT, heel]}
    loads2 = {"r-foot": np.column_stack([np.zeros(len(t)), np.full(len(t), 100.0)])}
    _, lift2 = swing_lift(tree, Q, t, pts2, floor, legs, loads2, clearance=0.012, smoothing=0)
    np.testing.assert_allclose(lift2[:, 0], 0.009, rtol=1e-9)
    with pytest.raises(MotionError, match="loads"):
        swing_lift(tree, Q, t, pts2, floor, legs, {"r-foot": np.zeros((len(t), 1))})
