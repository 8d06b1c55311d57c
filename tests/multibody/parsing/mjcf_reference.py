"""Test helper: MuJoCo's coordinates <-> ours, and M, ID, FD of one model in both.

MuJoCo's free joint has ``qpos = [x, y, z, qw, qx, qy, qz]`` and ``qvel = [v_world;
omega_body]``; ours ``q = [qw, qx, qy, qz, x, y, z]`` and ``v = [omega; v]`` both in the body
frame. Every other joint has the same coordinates in both. With ``v = T qvel`` (``T``
orthogonal: a permutation and ``R^T``) the mass matrix is ``H = T M T^T``, generalized
forces map as ``tau = T qfrc`` and accelerations as ``vdot = T qacc + [0; -omega x v_body]``
(the body-frame velocity turns with the body).

MuJoCo's passive forces that we do not model (fluid drag from ``option/density`` and
``viscosity``) are switched off in the MuJoCo model, and so are its constraints (contacts,
limits, joint friction are constraint rows there) and actuation.
"""
from __future__ import annotations

import numpy as np


def free_joints(tree):
    """``(q_start, v_start)`` of every free joint of ``tree``."""
    return [(j.q_start, j.v_start) for j in tree.joints if j.type == "free"]


def _rot(qwxyz):
    w, x, y, z = qwxyz / np.linalg.norm(qwxyz)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def q_from_mujoco(tree, qpos):
    q = np.array(qpos, float)
    for qs, _ in free_joints(tree):
        q[qs:qs + 7] = np.concatenate([qpos[qs + 3:qs + 7], qpos[qs:qs + 3]])
    return q


def velocity_map(tree, q):
    """``T`` (nv, nv) with ``v = T qvel`` at our configuration ``q``."""
    T = np.eye(tree.nv)
    for qs, vs in free_joints(tree):
        R = _rot(q[qs:qs + 4])
        B = np.zeros((6, 6))
        B[0:3, 3:6] = np.eye(3)
        B[3:6, 0:3] = R.T
        T[vs:vs + 6, vs:vs + 6] = B
    return T


def acceleration_from_mujoco(tree, q, v, qacc):
    """``vdot`` of ours from MuJoCo's ``qacc`` (ours ``q``, ``v``)."""
    a = velocity_map(tree, q) @ qacc
    for _, vs in free_joints(tree):
        a[vs + 3:vs + 6] -= np.cross(v[vs:vs + 3], v[vs + 3:vs + 6])
    return a


def acceleration_to_mujoco(tree, q, v, vdot):
    a = np.array(vdot, float)
    for _, vs in free_joints(tree):
        a[vs + 3:vs + 6] += np.cross(v[vs:vs + 3], v[vs + 3:vs + 6])
    return velocity_map(tree, q).T @ a


def mujoco_model(mujoco, path_or_xml, *, is_file=True):
    """A MuJoCo model with fluid drag, constraints and actuation switched off."""
    m = (mujoco.MjModel.from_xml_path(str(path_or_xml)) if is_file
         else mujoco.MjModel.from_xml_string(path_or_xml))
    m.opt.density = 0.0
    m.opt.viscosity = 0.0
    m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONSTRAINT)
    m.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_ACTUATION)
    return m


def random_state(mujoco, m, rng):
    """Random ``qpos`` (unit quaternions, joints within their ranges), ``qvel``, ``qacc``,
    ``qfrc`` for the MuJoCo model."""
    qpos = m.qpos0.copy()
    for j in range(m.njnt):
        a, t = m.jnt_qposadr[j], m.jnt_type[j]
        if t == mujoco.mjtJoint.mjJNT_FREE:
            qpos[a:a + 3] = rng.uniform(-1, 1, 3)
            quat = rng.normal(size=4)
            qpos[a + 3:a + 7] = quat / np.linalg.norm(quat)
        elif t == mujoco.mjtJoint.mjJNT_BALL:
            quat = rng.normal(size=4)
            qpos[a:a + 4] = quat / np.linalg.norm(quat)
        else:
            lo, hi = m.jnt_range[j] if m.jnt_limited[j] else (-1.5, 1.5)
            qpos[a] = rng.uniform(lo, hi)
    return qpos, rng.normal(size=m.nv), rng.normal(size=m.nv), rng.normal(size=m.nv)


def compare(mujoco, tree, m, rng, states=3):
    """Worst relative errors ``(M, ID, FD)`` over random states: ``|ours - theirs|_max /
    max(1, |theirs|_max)``."""
    d = mujoco.MjData(m)
    err = np.zeros(3)
    for _ in range(states):
        qpos, qvel, qacc, qfrc = random_state(mujoco, m, rng)
        q = q_from_mujoco(tree, qpos)
        T = velocity_map(tree, q)
        v = T @ qvel
        # mass matrix
        d.qpos[:], d.qvel[:], d.qacc[:] = qpos, qvel, qacc
        mujoco.mj_forward(m, d)
        M = np.zeros((m.nv, m.nv))
        mujoco.mj_fullM(m, d, M)
        H = np.asarray(tree.mass_matrix(q))
        err[0] = max(err[0], _rel(H, T @ M @ T.T))
        # inverse dynamics: ID - passive = T qfrc_inverse
        d.qacc[:] = qacc
        mujoco.mj_inverse(m, d)
        vdot = acceleration_from_mujoco(tree, q, v, qacc)
        tau = np.asarray(tree.inverse_dynamics(q, v, vdot)).ravel() - \
            np.asarray(tree.joint_passive_forces(q, v)).ravel()
        err[1] = max(err[1], _rel(tau, T @ d.qfrc_inverse))
        # forward dynamics with an applied force
        d.qfrc_applied[:] = qfrc
        mujoco.mj_forward(m, d)
        tau = T @ qfrc + np.asarray(tree.joint_passive_forces(q, v)).ravel()
        a = np.asarray(tree.forward_dynamics(q, v, tau)).ravel()
        err[2] = max(err[2], _rel(acceleration_to_mujoco(tree, q, v, a), d.qacc))
        d.qfrc_applied[:] = 0.0
    return err


def _rel(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))
