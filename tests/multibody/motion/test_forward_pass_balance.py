"""The pelvis balance of the forward pass (multibody.motion.balance): a one-legged body on a
passive ankle falls without the pelvis feedback through its stance leg and stays up with it;
the wrench's joint torques give the root exactly that wrench (static check); contact points
placed on the floor; the stance floor under tilted resting feet."""
import numpy as np
import pytest

import _motion_models as W

from multibody.motion import Floor, MotionError
from multibody.motion.balance import (BalanceGains, balance_reference_rows, leg_chains,
                                      pelvis_balance_function, place_contact_points,
                                      stance_floor, stance_shares)
from multibody.motion.forward_pass import ForwardPass
from multibody.tree import RigidBodyTree
from multibody.tree.joints import Free, Revolute

LEG = 0.9
FOOT = [(-0.1, -0.08, -0.05), (-0.1, 0.08, -0.05), (0.12, -0.08, -0.05), (0.12, 0.08, -0.05)]


def _monopod():
    """Pelvis (free) with a torso mass above the hip, a two-axis hip, a rigid leg, a two-axis
    ankle and a foot with four corner points."""
    t = RigidBodyTree("monopod")
    small = 1e-3 * np.eye(3)
    t.add_body("pelvis", 40.0, com=(0, 0, 0.3), inertia=np.diag([2.0, 2.0, 0.5]))
    t.add_joint(Free("floating_base", "world", "pelvis"))
    t.add_body("r-hip", 0.2, inertia=small)
    t.add_joint(Revolute("r-hip_x", "pelvis", "r-hip", axis=(1, 0, 0)))
    t.add_body("r-leg", 10.0, com=(0, 0, -LEG / 2), inertia=np.diag([0.7, 0.7, 0.05]))
    t.add_joint(Revolute("r-hip_y", "r-hip", "r-leg", axis=(0, 1, 0)))
    X = np.eye(4)
    X[2, 3] = -LEG
    t.add_body("r-ankle", 0.2, inertia=small)
    t.add_joint(Revolute("r-ankle_y", "r-leg", "r-ankle", axis=(0, 1, 0), origin=X))
    t.add_body("r-foot", 1.0, com=(0.01, 0, -0.03), inertia=np.diag([0.002, 0.005, 0.005]))
    t.add_joint(Revolute("r-ankle_x", "r-ankle", "r-foot", axis=(1, 0, 0)))
    return t


def _standing(tree, frames=181):
    q0 = tree.neutral_configuration()
    q0[6] = LEG + 0.05                                   # foot points on z = 0
    K = frames
    times = np.arange(K) / 120.0
    return times, np.repeat(q0[None], K, 0), np.zeros((K, tree.nv))


def _run(gain):
    tree = _monopod()
    times, Q, V = _standing(tree)
    floor = Floor(np.array([0.0, 0.0, 1.0]), np.zeros(3))
    fp = ForwardPass(tree, times, {"r-foot": FOOT}, floor, time_step=1 / 240,
                     joint_gain_scale={"r-ankle_x": 0.0, "r-ankle_y": 0.0},
                     balance_gain=gain, balance_gains=BalanceGains(1e3, 3e2, 3e2, 60.0))
    ctx_v = V.copy()
    ctx_v[0, 3:6] = [0.1, -0.05, 0.0]                     # a push: the pelvis starts moving
    out = fp.run(Q, ctx_v, np.zeros_like(V))
    return fp, out, Q


def test_a_body_on_a_passive_ankle_falls_without_the_pelvis_feedback_and_stands_with_it():
    fp0, fell, Q = _run(0.0)
    assert fp0.legs == []
    fp1, stood, _ = _run(1.0)
    assert [f for f, _, _ in fp1.legs] == ["r-foot"]
    h0 = Q[0, 6]
    assert fell.q[-1, 6] < h0 - 0.3                      # toppled over the foot's edge
    assert np.all(stood.q[:, 6] > h0 - 0.02)             # upright all along
    drift = np.linalg.norm(stood.q[-1, 4:7] - Q[0, 4:7])
    assert drift < 0.05



def test_the_leg_torques_give_the_root_the_pelvis_wrench_moved_through_the_foot():
    tree = _monopod()
    legs = leg_chains(tree, {"r-foot": FOOT}, {v: v - 6 for v in range(6, tree.nv)})
    assert legs == [("r-foot", [0, 1, 2, 3], [6, 7, 8, 9])]
    g = BalanceGains(1000.0, 0.0, 300.0, 0.0)
    fn = pelvis_balance_function(tree, legs, tree.nv - 6, g)
    q = tree.neutral_configuration()
    q[:4] = [np.cos(0.05), 0.0, np.sin(0.05), 0.0]       # pelvis pitched 0.1 rad
    q[4:7] = [0.02, -0.01, 0.9]
    q[7:] = [0.1, -0.2, 0.15, 0.05]
    rows = balance_reference_rows(tree, tree.neutral_configuration()[None],
                                  np.zeros((1, tree.nv)))[0]
    tau = np.asarray(fn(q, np.zeros(tree.nv), np.r_[rows, rows, 1.0]), float).ravel()
    T = np.asarray(tree.body_pose("pelvis", q), float)
    p, R = T[:3, 3], T[:3, :3]
    f = g.kp_translation * (rows[:3] - p)
    E = rows[3:12].reshape(3, 3) @ R.T
    m = g.kp_rotation * 0.5 * np.array([E[2, 1] - E[1, 2], E[0, 2] - E[2, 0], E[1, 0] - E[0, 1]])
    c = np.asarray(tree.body_pose("r-foot", q), float)[:3, 3]
    lam = np.r_[m + np.cross(p - c, f), f]
    Jc = np.asarray(tree.jacobian("r-foot", q), float)
    Jp = np.asarray(tree.jacobian("pelvis", q), float)
    np.testing.assert_allclose(tau, -Jc[:, 6:].T @ lam, atol=1e-9)
    # the ground's lambda on the foot reaches the root as the wrench (m, f) at the pelvis
    np.testing.assert_allclose(Jc[:, :6].T @ lam, Jp[:, :6].T @ np.r_[m, f], atol=1e-9)
    assert abs(m[1]) > 10 and np.linalg.norm(f) > 10      # both parts in play


def test_contact_points_are_placed_on_the_floor_at_their_lowest():
    tree = _monopod()
    times, Q, _ = _standing(tree, frames=5)
    Q[:, 6] += np.array([0.03, 0.01, -0.02, 0.0, 0.05])  # the foot 2 cm into the floor at k=2
    floor = Floor(np.array([0.0, 0.0, 1.0]), np.zeros(3))
    pts = place_contact_points(tree, {"r-foot": FOOT}, floor, Q)["r-foot"]
    T = np.asarray(tree.body_pose("r-foot", Q[2]), float)
    np.testing.assert_allclose((pts @ T[:3, :3].T + T[:3, 3])[:, 2], 0.0, atol=1e-12)
    np.testing.assert_allclose(pts - np.asarray(FOOT), [[0, 0, 0.02]] * 4, atol=1e-12)
    with pytest.raises(MotionError, match="active\\['r-foot'\\]"):
        place_contact_points(tree, {"r-foot": FOOT}, floor, Q, active={"r-foot": np.ones((2, 4))})


def test_contact_points_placed_at_a_quantile_of_their_heights():
    tree = _monopod()
    times, Q, _ = _standing(tree, frames=5)
    Q[:, 6] += np.array([0.03, 0.01, -0.02, 0.0, 0.05])  # heights 3, 1, -2, 0, 5 cm
    floor = Floor(np.array([0.0, 0.0, 1.0]), np.zeros(3))
    for quantile, lift in ((0.0, 0.02), (0.5, -0.01), (1.0, -0.05), (0.3, 0.0)):
        # the median of (3, 1, -2, 0, 5) cm is 1 cm; the 0.3 quantile 0.2 cm, nearest 0
        pts = place_contact_points(tree, {"r-foot": FOOT}, floor, Q, quantile=quantile)["r-foot"]
        np.testing.assert_allclose(pts - np.asarray(FOOT), [[0, 0, lift]] * 4, atol=1e-12)
    active = {"r-foot": np.array([[1, 1, 1, 1], [1, 1, 1, 1], [0, 0, 0, 0], [1, 1, 1, 1],
                                  [1, 1, 1, 1]], bool)}   # the lowest frame not loaded
    pts = place_contact_points(tree, {"r-foot": FOOT}, floor, Q, active, quantile=0.0)["r-foot"]
    np.testing.assert_allclose(pts - np.asarray(FOOT), [[0, 0, 0.0]] * 4, atol=1e-12)
    with pytest.raises(MotionError, match="quantile must be in \\[0, 1\\], got 1.5"):
        place_contact_points(tree, {"r-foot": FOOT}, floor, Q, quantile=1.5)


def test_the_stance_floor_is_the_plane_under_the_resting_feet():
    tree = _monopod()
    times, Q, _ = _standing(tree, frames=40)
    n = np.array([0.02, -0.01, 1.0])
    n /= np.linalg.norm(n)
    # the foot rests at four places (still), lifted between them; the ground is tilted
    P = np.asarray(FOOT)
    for k in range(40):
        Q[k, 4:6] = [0.4 * (k // 10), 0.3 * ((k // 10) % 2)]
        T = np.asarray(tree.body_pose("r-foot", Q[k]), float)
        Q[k, 6] -= np.min((P @ T[:3, :3].T + T[:3, 3]) @ n) / n[2]
        if k % 10 >= 7:
            Q[k, 6] += 0.05 * (k % 10 - 6)
    tilted = stance_floor(tree, {"r-foot": FOOT}, Q, times, Floor(np.array([0, 0, 1.0]),
                                                                   np.zeros(3)))
    np.testing.assert_allclose(tilted.normal, n, atol=1e-6)
    assert abs(tilted.height(np.zeros(3))) < 1e-6
    with pytest.raises(MotionError, match="resting foot points"):
        stance_floor(tree, {"r-foot": FOOT}, Q, times, tilted, speed=-1.0)


def test_stance_shares():
    np.testing.assert_allclose(stance_shares([[300.0, 100.0], [0.0, 500.0], [0.0, 0.0],
                                              [-5.0, 50.0]]),
                               [[0.75, 0.25], [0.0, 1.0], [0.0, 0.0], [0.0, 1.0]])


def test_the_forward_pass_places_its_spheres_from_the_reference_and_its_loads():
    tree = _monopod()
    times, Q, V = _standing(tree, frames=13)
    Q[:, 6] -= 0.02                                      # the reference foot 2 cm in the floor
    F = np.zeros((13, 4, 3))
    F[:, :2, 2] = 200.0                                  # only the heels loaded
    floor = Floor(np.array([0.0, 0.0, 1.0]), np.zeros(3))
    fp = ForwardPass(tree, times, {"r-foot": FOOT}, floor, contact_reference=Q,
                     contact_forces=F, refit_floor=False, balance_gain=1.0)
    P = fp.contact_points["r-foot"]
    np.testing.assert_allclose(P[:2], np.asarray(FOOT)[:2] + [0, 0, 0.02], atol=1e-12)
    np.testing.assert_allclose(P[2:], np.asarray(FOOT)[2:], atol=1e-12)   # never loaded
    np.testing.assert_allclose(fp.stance_weights(Q), np.ones((13, 1)))
    F[5:, :, :] = 0.0                                    # flight from frame 5: weight 0
    fp2 = ForwardPass(_monopod(), times, {"r-foot": FOOT}, floor, contact_reference=Q,
                      contact_forces=F, refit_floor=False, balance_gain=1.0)
    np.testing.assert_allclose(fp2.stance_weights(Q)[:, 0], [1.0] * 5 + [0.0] * 8)
    assert fp2.balance_reference(Q, V).shape == (13, 18 * 2 + 1)
    with pytest.raises(MotionError, match=r"contact_forces must be \(13, 4, 3\)"):
        ForwardPass(_monopod(), times, {"r-foot": FOOT}, floor, contact_reference=Q,
                    contact_forces=F[:, :3])
    with pytest.raises(MotionError, match=r"stance must be \(13, 1\)"):
        fp2.run(Q, V, np.zeros_like(V), stance=np.ones((13, 2)))


def test_run_batch_with_the_balance_matches_single_runs():
    tree = _monopod()
    times, Q, V = _standing(tree, frames=61)
    floor = Floor(np.array([0.0, 0.0, 1.0]), np.zeros(3))
    fp = ForwardPass(tree, times, {"r-foot": FOOT}, floor, time_step=1 / 240,
                     joint_gain_scale={"r-ankle_x": 0.0, "r-ankle_y": 0.0}, balance_gain=1.0)
    V1 = V.copy()
    V1[0, 3] = 0.1
    refs = [(Q, V, np.zeros_like(V)), (Q, V1, np.zeros_like(V))]
    batch = fp.run_batch(refs)
    for r, b in zip(refs, batch):
        np.testing.assert_allclose(b.q, fp.run(*r).q, atol=1e-9)
    assert np.abs(batch[1].q[-1, 4] - Q[0, 4]) > 1e-3 > np.abs(batch[0].q[-1, 4] - Q[0, 4])


def test_stance_release_cancels_the_ankle_stiffness_in_stance_only():
    tree = _monopod()
    legs = leg_chains(tree, {"r-foot": FOOT}, {v: v - 6 for v in range(6, tree.nv)})
    kp = np.array([10.0, 20.0, 30.0, 40.0])
    release = [[(2, 9), (3, 10)]]                        # the ankle's commands, q indices
    fn = pelvis_balance_function(tree, legs, 4, BalanceGains(0, 0, 0, 0), kp, release)
    q = tree.neutral_configuration()
    q[9:11] = [0.1, -0.2]
    rows = balance_reference_rows(tree, q[None], np.zeros((1, tree.nv)))[0]
    qd = np.array([0.05, 0.1])
    for w, r in ((1.0, 1.0), (0.25, 0.5), (0.0, 0.0)):
        tau = np.asarray(fn(q, np.zeros(tree.nv), np.r_[rows, rows, w, qd]), float).ravel()
        np.testing.assert_allclose(tau, [0, 0, r * 30 * 0.05, r * 40 * -0.3], atol=1e-12)
    times, Q, _ = _standing(tree, frames=5)
    floor = Floor(np.array([0.0, 0.0, 1.0]), np.zeros(3))
    with pytest.raises(MotionError, match="stance_release names \\['knee'\\]"):
        ForwardPass(_monopod(), times, {"r-foot": FOOT}, floor, balance_gain=1.0,
                    stance_release=["knee"])


def test_stance_smoothing_ramps_the_weights():
    tree = _monopod()
    times, Q, _ = _standing(tree, frames=13)
    F = np.zeros((13, 4, 3))
    F[:6, :, 2] = 100.0                                  # stance, then flight from frame 6
    floor = Floor(np.array([0.0, 0.0, 1.0]), np.zeros(3))
    fp = ForwardPass(tree, times, {"r-foot": FOOT}, floor, contact_reference=Q,
                     contact_forces=F, refit_floor=False, balance_gain=1.0,
                     stance_smoothing=3 / 120)           # a box of 3 frames
    np.testing.assert_allclose(fp.stance_weights(Q)[3:9, 0],
                               [1, 1, 2 / 3, 1 / 3, 0, 0], atol=1e-12)


def test_a_release_list_per_leg_is_checked():
    tree = _monopod()
    legs = leg_chains(tree, {"r-foot": FOOT}, {v: v - 6 for v in range(6, tree.nv)})
    with pytest.raises(MotionError, match="release has 2 entries, expected one list per leg"):
        pelvis_balance_function(tree, legs, tree.nv - 6, BalanceGains(), kp=np.ones(tree.nv - 6),
                                release=[[], []])


def _six_joint_leg():
    """Pelvis (free) and a leg of six revolute joints (hip x, y, z; knee y; ankle y, x)."""
    return W.six_joint_leg()


def test_the_stance_pose_correction_moves_the_root_by_delta_with_the_foot_held():
    from multibody.motion.balance import stance_pose_correction
    tree = _six_joint_leg().finalize()
    q = tree.neutral_configuration()
    q[7:] = [0.1, -0.4, 0.05, 0.8, -0.4, -0.1]             # a bent knee
    delta = np.array([0.01, -0.02, 0.015, 0.004, -0.003, 0.002])
    legs = leg_chains(tree, {"b_foot": [(0, 0, 0)]},
                      {v: v - 6 for v in range(6, tree.nv)})
    _, _, vi = legs[0]
    dq = np.asarray(stance_pose_correction(tree, "b_foot", vi, q, delta, damping=1e-10)).ravel()
    Jr = np.asarray(tree.jacobian("pelvis", q), float)
    Jf = np.asarray(tree.jacobian("b_foot", q), float)
    v = np.zeros(tree.nv)
    v[:6] = np.linalg.solve(Jr[:, :6], delta)
    v[list(vi)] = dq
    np.testing.assert_allclose(Jr @ v, delta, atol=1e-12)     # the root moves by delta
    np.testing.assert_allclose(Jf @ v, 0.0, atol=1e-8)        # the foot stays
    # finite motion: the foot moves only to second order (a tenth of delta: a hundredth)
    def moves(scale):
        q1 = np.asarray(tree.integrate(q, scale * v, 1.0), float).ravel()
        T0, T1 = (np.asarray(tree.body_pose("b_foot", x), float) for x in (q, q1))
        return np.linalg.norm(T1[:3, 3] - T0[:3, 3])
    assert moves(0.1) < moves(1.0) / 50.0
    assert moves(1.0) < 0.1 * np.linalg.norm(delta[3:])


def test_a_pose_correction_needs_the_joint_damping():
    tree = _six_joint_leg().finalize()
    legs = leg_chains(tree, {"b_foot": [(0, 0, 0)]}, {v: v - 6 for v in range(6, tree.nv)})
    with pytest.raises(MotionError, match="kd"):
        pelvis_balance_function(tree, legs, 6, BalanceGains(pose=1.0), kp=np.ones(6))


def _pose_servo(gains, ankle_x_ref):
    """The monopod standing on its reference pose, its stance foot's reference rolled by
    ``ankle_x_ref`` (rad) about x: the balance torques (kp = 1, kd = 0, stance weight 1)."""
    tree = _monopod()
    legs = leg_chains(tree, {"r-foot": FOOT}, {v: v - 6 for v in range(6, tree.nv)})
    fn = pelvis_balance_function(tree, legs, tree.nv - 6, gains, kp=np.ones(4),
                                 kd=np.zeros(4))
    q = tree.neutral_configuration()
    q[4:7] = [0.0, 0.0, LEG + 0.05]
    q[7:] = [0.05, -0.1, 0.1, 0.0]
    qf = q.copy()
    qf[10] = ankle_x_ref
    v = np.zeros((1, tree.nv))
    rows = balance_reference_rows(tree, q[None], v)[0]
    foot = balance_reference_rows(tree, qf[None], v, "r-foot")[0]
    return np.asarray(fn(q, np.zeros(tree.nv), np.r_[rows, foot, 1.0]), float).ravel()


def test_the_foot_rotation_term_turns_the_stance_foot_back_onto_its_reference():
    # pelvis on its reference: no wrench, no pose correction; the foot's roll error (ankle_x
    # is the only joint turning the foot about x without moving it) gives the ankle K_p sin 0.05
    g = BalanceGains(1e3, 3e2, 3e2, 60.0, pose=1.0)
    np.testing.assert_allclose(_pose_servo(g, 0.05), 0.0, atol=1e-9)
    tau = _pose_servo(BalanceGains(1e3, 3e2, 3e2, 60.0, pose=1.0, foot_rotation=1.0), 0.05)
    np.testing.assert_allclose(tau, [0.0, 0.0, 0.0, np.sin(0.05)], atol=2e-5)  # damped
    # per world axis: the roll row off, nothing left
    tau = _pose_servo(BalanceGains(1e3, 3e2, 3e2, 60.0, pose=1.0, foot_rotation=(0, 1, 1)),
                      0.05)
    np.testing.assert_allclose(tau, 0.0, atol=1e-9)


def test_six_pose_weights_weigh_the_world_rows():
    tree = _six_joint_leg().finalize()
    legs = leg_chains(tree, {"b_foot": [(0, 0, 0)]}, {v: v - 6 for v in range(6, tree.nv)})
    with pytest.raises(MotionError, match="pose_weights has 4 entries"):
        pelvis_balance_function(tree, legs, 6, BalanceGains(pose=1.0, pose_weights=(1, 1, 1, 1)),
                                kp=np.ones(6), kd=np.ones(6))
    q = tree.neutral_configuration()
    q[4:7] = [0.01, 0.02, 0.8]
    q[7:] = [0.1, -0.2, 0.3, -0.4, 0.2, 0.1]
    rows = balance_reference_rows(tree, tree.neutral_configuration()[None],
                                  np.zeros((1, tree.nv)))[0]
    foot = balance_reference_rows(tree, q[None], np.zeros((1, tree.nv)), "b_foot")[0]
    out = {}
    for w in [(1.0, 2.0, 3.0), (1.0, 1.0, 1.0, 2.0, 2.0, 3.0), (1.0, 1.0, 1.0, 2.0, 0.0, 3.0)]:
        fn = pelvis_balance_function(tree, legs, 6, BalanceGains(0, 0, 0, 0, pose=1.0,
                                                                 pose_weights=w, pose_cap=10),
                                     kp=np.ones(6), kd=np.zeros(6))
        out[len(w), w[4] if len(w) == 6 else None] = np.asarray(
            fn(q, np.zeros(tree.nv), np.r_[rows, foot, 1.0]), float).ravel()
    np.testing.assert_allclose(out[6, 2.0], out[3, None], atol=1e-12)
    assert np.linalg.norm(out[6, 0.0] - out[6, 2.0]) > 1e-3      # the y row counts
