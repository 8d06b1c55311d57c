"""The stance legs' pelvis pose correction (multibody.motion.balance.stance_pose_correction):
the leg motion it gives moves the root by the asked displacement with the foot held (finite
differences on the configuration); in closed loop a body whose planted foot is 3 cm from its
reference's keeps the 3 cm under joint tracking alone and returns to the reference pelvis
with the correction, the root still unactuated."""
import numpy as np
import pytest

from multibody.motion import Floor, MotionError
from multibody.motion.balance import (BalanceGains, leg_chains, pelvis_balance_function,
                                      stance_pose_correction)
from multibody.motion.forward_pass import ForwardPass
from multibody.tree import RigidBodyTree
from multibody.tree.joints import Free, Revolute

FOOT = [(-0.1, -0.08, -0.05), (-0.1, 0.08, -0.05), (0.12, -0.08, -0.05), (0.12, 0.08, -0.05)]


def _biped_leg():
    """Pelvis (free) with a torso mass, a three-axis hip, a knee, a two-axis ankle and a flat
    foot: six leg joints, so any small pelvis pose is reachable with the foot held."""
    t = RigidBodyTree("leg6")
    small = 1e-3 * np.eye(3)
    t.add_body("pelvis", 40.0, com=(0, 0, 0.3), inertia=np.diag([2.0, 2.0, 0.5]))
    t.add_joint(Free("floating_base", "world", "pelvis"))
    parent = "pelvis"
    for name, axis in (("hip_z", (0, 0, 1)), ("hip_x", (1, 0, 0))):
        t.add_body(name, 0.2, inertia=small)
        t.add_joint(Revolute(name, parent, name, axis=axis))
        parent = name
    t.add_body("thigh", 8.0, com=(0, 0, -0.22), inertia=np.diag([0.1, 0.1, 0.02]))
    t.add_joint(Revolute("hip_y", parent, "thigh", axis=(0, 1, 0)))
    X = np.eye(4)
    X[2, 3] = -0.45
    t.add_body("shank", 4.0, com=(0, 0, -0.22), inertia=np.diag([0.05, 0.05, 0.01]))
    t.add_joint(Revolute("knee", "thigh", "shank", axis=(0, 1, 0), origin=X))
    t.add_body("ankle", 0.2, inertia=small)
    t.add_joint(Revolute("ankle_y", "shank", "ankle", axis=(0, 1, 0), origin=X))
    t.add_body("r-foot", 1.0, com=(0.01, 0, -0.03), inertia=np.diag([0.002, 0.005, 0.005]))
    t.add_joint(Revolute("ankle_x", "ankle", "r-foot", axis=(1, 0, 0)))
    return t


def _bent(tree):
    """Knee bent 0.4 rad, hip and ankle pitched back so the foot is flat, points on z = 0."""
    q = tree.neutral_configuration()
    q[7:13] = [0.0, 0.0, -0.2, 0.4, -0.2, 0.0]
    T = np.asarray(tree.body_pose("r-foot", q), float)
    q[6] -= np.min((np.asarray(FOOT) @ T[:3, :3].T + T[:3, 3])[:, 2])
    return q


def test_the_correction_moves_the_root_by_delta_with_the_foot_held():
    tree = _biped_leg()
    q = _bent(tree)
    vi = list(range(6, 12))
    delta = np.array([0.01, -0.02, 0.015, 0.004, -0.006, 0.003])   # [phi; dp], small
    dq = np.asarray(stance_pose_correction(tree, "r-foot", vi, q, delta), float).ravel()
    Jr = np.asarray(tree.jacobian("pelvis", q), float)
    db = np.linalg.solve(Jr[:, :6], delta)
    for eps in (1e-4, 1e-5):                           # first order: errors shrink with eps
        dv = np.r_[db, dq] * eps
        q2 = tree.integrate(q, dv, 1.0)
        Tf0, Tf1 = (np.asarray(tree.body_pose("r-foot", x), float) for x in (q, q2))
        Tp0, Tp1 = (np.asarray(tree.body_pose("pelvis", x), float) for x in (q, q2))
        np.testing.assert_allclose(Tf1, Tf0, atol=50 * eps ** 2)           # the foot held
        np.testing.assert_allclose(Tp1[:3, 3] - Tp0[:3, 3], eps * delta[3:], atol=50 * eps ** 2)
        E = Tp1[:3, :3] @ Tp0[:3, :3].T
        phi = 0.5 * np.array([E[2, 1] - E[1, 2], E[0, 2] - E[2, 0], E[1, 0] - E[0, 1]])
        np.testing.assert_allclose(phi, eps * delta[:3], atol=50 * eps ** 2)


def _run(pose, shift=0.03):
    tree = _biped_leg()
    q0 = _bent(tree)
    K = 145
    times = np.arange(K) / 120.0
    Q = np.repeat(q0[None], K, 0)
    V = np.zeros((K, tree.nv))
    tau = np.array([np.asarray(tree.inverse_dynamics(q0, np.zeros(tree.nv), np.zeros(tree.nv)),
                               float).ravel()] * K)
    F = np.zeros((K, 4, 3))
    F[:, :, 2] = 100.0                                  # loaded all along: stance weight 1
    fp = ForwardPass(tree, times, {"r-foot": FOOT}, Floor(np.array([0.0, 0.0, 1.0]), np.zeros(3)),
                     time_step=1 / 240, contact_reference=Q, contact_forces=F, refit_floor=False,
                     balance_gain=1.0, balance_gains=BalanceGains(0, 0, 0, 0, pose=pose))
    start = Q.copy()
    start[0, 4] += shift                                # the body (and its foot) 3 cm ahead
    # the run starts from q[0]; the references of later frames stay where they were
    out = fp.run(start, V, tau)
    return out, Q


def test_a_planted_foot_off_its_reference_the_correction_brings_the_pelvis_back():
    held, Q = _run(0.0)
    fixed, _ = _run(1.0)
    # joint tracking alone keeps the body standing 3 cm ahead, on its foot
    assert abs(held.q[-1, 4] - Q[0, 4] - 0.03) < 0.005
    assert abs(held.q[-1, 6] - Q[0, 6]) < 0.01
    # the pose correction through the leg returns the pelvis to the reference (< 3 mm,
    # upright), the foot staying where it landed
    assert np.linalg.norm(fixed.q[-1, 4:7] - Q[0, 4:7]) < 0.003
    np.testing.assert_allclose(fixed.q[-1, :4], Q[0, :4], atol=2e-3)
    assert fixed.joint_angle_rms_deg > 0.5               # by moving the leg's joints


def test_a_pose_correction_needs_the_damping():
    tree = _biped_leg()
    legs = leg_chains(tree, {"r-foot": FOOT}, {v: v - 6 for v in range(6, tree.nv)})
    with pytest.raises(MotionError, match="pose correction needs the joint damping"):
        pelvis_balance_function(tree, legs, tree.nv - 6, BalanceGains(pose=1.0),
                                kp=np.ones(tree.nv - 6))
