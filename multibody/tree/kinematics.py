"""Kinematics of a :class:`~multibody.tree.RigidBodyTree`, written once for numpy and CasADi.

Each function takes a finalized tree and numeric or symbolic ``q``, ``v``, ``vdot``; the tree
builds CasADi Functions from them (``multibody.tree._functions``). Internally a rigid transform is
a pair ``(R, p)`` (rotation and position of a child frame in a parent frame), body spatial
velocities/accelerations are 6-vectors ``[angular; linear]`` in body coordinates
(Featherstone 2008, chapter 2 and section 5.3; accelerations are spatial, i.e. the linear
part is the derivative of the velocity field at a fixed point).

Frame semantics (DART style)
----------------------------
``frame_velocity(A, relative_to=B, expressed_in=C)`` is ``[w_A - w_B; d/dt_B (p_A - p_B)]``:
the angular velocity of A relative to B and the velocity of A's origin as observed in B
(the time derivative in B's rotating frame), both expressed in C's axes.
``frame_acceleration`` is the time derivative, observed in B, of that relative velocity
(classical accelerations), expressed in C. With B = world these are the usual angular
velocity/acceleration and the linear velocity/acceleration of the frame origin.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from solvers import ops

__all__ = ["cross_motion", "joint_placements", "joint_placements_split", "world_poses", "body_velocities", "body_accelerations",
           "frame_in_body", "frame_world_pose", "relative_transform", "body_jacobian_columns",
           "point_jacobian", "frame_velocity", "frame_acceleration", "point_acceleration", "motion_to_child",
           "force_to_parent", "center_of_mass", "center_of_mass_velocity"]


# ----------------------------------------------------------------------------- (R, p) helpers
def _cat(a: Any, b: Any):
    return ops.vertcat(a, b)


def motion_to_child(R: Any, p: Any, m: Any):
    """``^cX_p m``: motion ``m`` in parent coordinates to child coordinates, where ``(R, p)`` is
    the child's pose in the parent (Featherstone eq. 2.24)."""
    w, v = m[0:3], m[3:6]
    return _cat(R.T @ w, R.T @ (v - ops.cross(p, w)))


def force_to_parent(R: Any, p: Any, f: Any):
    """``^pX_c^* f``: force ``f = [n; f]`` in child coordinates to parent coordinates
    (moment about the parent origin; Featherstone eq. 2.25)."""
    n, fl = f[0:3], f[3:6]
    Rf = R @ fl
    return _cat(R @ n + ops.cross(p, Rf), Rf)


# ----------------------------------------------------------------------------- positions
def ancestors(tree, bodies) -> list[int]:
    """Sorted indices of the given bodies and all their ancestors (world excluded)."""
    out: set[int] = set()
    for b in bodies:
        while b > 0 and b not in out:
            out.add(b)
            b = tree.parent_indices[b]
    return sorted(out)


def _indices(tree, needed):
    return range(1, len(tree.bodies)) if needed is None else needed


def joint_placements_split(tree, q: Any, needed: list | None = None) -> list:
    """``(R_J, p_J, R_0, p_0)`` per body (entry 0 is None): the joint motion ``X_J(q)`` and
    the constant joint origin, so that the body pose in its parent is ``origin @ X_J``.
    ``needed``: ancestor-closed sorted body indices to compute (default all)."""
    out: list = [None] * len(tree.bodies)
    for i in _indices(tree, needed):
        j = tree.joints[i - 1]
        qj = q[j.q_start:j.q_start + j.nq] if j.nq else None
        Rj, pj = j.calc_rotation_translation(qj)
        out[i] = (Rj, pj, j.origin[:3, :3], j.origin[:3, 3])
    return out


def joint_placements(tree, q: Any, split: list | None = None,
                     needed: list | None = None) -> list:
    """Pose ``(R, p)`` of each body in its parent body; index by body (entry 0 is None)."""
    split = joint_placements_split(tree, q, needed) if split is None else split
    out: list = [None] * len(split)
    for i in _indices(tree, needed):
        Rj, pj, R0, p0 = split[i]
        if np.array_equal(R0, np.eye(3)):
            out[i] = (Rj, p0 + pj)
        else:
            out[i] = (R0 @ Rj, p0 + R0 @ pj)
    return out


def world_poses(tree, q: Any, X: list | None = None, needed: list | None = None) -> list:
    """World pose ``(R, p)`` of every (needed) body (entry 0: the world, identity)."""
    X = joint_placements(tree, q, needed=needed) if X is None else X
    poses: list = [(np.eye(3), np.zeros(3))] + [None] * (len(X) - 1)
    for i in _indices(tree, needed):
        lam = tree.parent_indices[i]
        R, p = X[i]
        if lam == 0:
            poses[i] = (R, p)
        else:
            Rl, pl = poses[lam]
            poses[i] = (Rl @ R, pl + Rl @ p)
    return poses


def frame_in_body(tree, name: str) -> tuple[int, np.ndarray, np.ndarray]:
    """``(body index, R, p)`` of a frame or body ``name`` in its body frame."""
    f = tree.get_frame(name)
    return tree.get_body(f.body).index, f.pose[:3, :3], f.pose[:3, 3]


def _needed(tree, *names: str) -> list[int]:
    return ancestors(tree, [frame_in_body(tree, n)[0] for n in names])


def frame_world_pose(tree, q: Any, name: str, poses: list | None = None):
    """World pose ``(R, p)`` of a frame or body."""
    b, Rf, pf = frame_in_body(tree, name)
    if b == 0:
        return Rf, pf
    poses = world_poses(tree, q) if poses is None else poses
    R, p = poses[b]
    return R @ Rf, p + R @ pf


def relative_transform(tree, q: Any, frame_a: str, frame_b: str):
    """Pose ``T_AB`` (4 x 4) of frame B in frame A (Drake's ``CalcRelativeTransform``)."""
    poses = world_poses(tree, q, needed=_needed(tree, frame_a, frame_b))
    Ra, pa = frame_world_pose(tree, q, frame_a, poses)
    Rb, pb = frame_world_pose(tree, q, frame_b, poses)
    R, p = Ra.T @ Rb, Ra.T @ (pb - pa)
    if ops.any_symbolic(R, p):
        import casadi as ca
        R = ca.SX(R) if isinstance(R, np.ndarray) else R
        return ca.vertcat(ca.horzcat(R, p), ca.DM([[0, 0, 0, 1]]))
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = R, p
    return T


# ----------------------------------------------------------------------------- velocities
def _joint_velocity(j, q, v):
    """``(S, S v_j)`` of a joint in its child frame (``None`` for nv = 0)."""
    if j.nv == 0:
        return None, None
    qj = q[j.q_start:j.q_start + j.nq]
    S = j.calc_motion_subspace(qj)
    return S, S @ v[j.v_start:j.v_start + j.nv]


def body_velocities(tree, q: Any, v: Any, X: list | None = None,
                    needed: list | None = None) -> list:
    """Spatial velocity of every (needed) body in body coordinates (Featherstone eq. 5.7)."""
    X = joint_placements(tree, q, needed=needed) if X is None else X
    V: list = [np.zeros(6)] + [None] * (len(X) - 1)
    for i in _indices(tree, needed):
        j = tree.joints[i - 1]
        R, p = X[i]
        lam = tree.parent_indices[i]
        Vi = motion_to_child(R, p, V[lam]) if lam else None
        _, vJ = _joint_velocity(j, q, v)
        if vJ is not None:
            Vi = vJ if Vi is None else Vi + vJ
        V[i] = np.zeros(6) if Vi is None else Vi
    return V


def body_accelerations(tree, q: Any, v: Any, vdot: Any, X: list | None = None,
                       V: list | None = None, a0: Any = None,
                       needed: list | None = None) -> list:
    """Spatial acceleration of every body in body coordinates (Featherstone eq. 5.8):
    ``a_i = X_i a_parent + S vdot_i + c_J + v_i x (S v_i)``; ``a0`` is the world's
    (default zero; ``[0; -g]`` folds gravity in)."""
    X = joint_placements(tree, q, needed=needed) if X is None else X
    V = body_velocities(tree, q, v, X, needed) if V is None else V
    A: list = [np.zeros(6) if a0 is None else a0] + [None] * (len(X) - 1)
    for i in _indices(tree, needed):
        j = tree.joints[i - 1]
        R, p = X[i]
        lam = tree.parent_indices[i]
        ai = motion_to_child(R, p, A[lam])
        if j.nv:
            qj = q[j.q_start:j.q_start + j.nq]
            vj = v[j.v_start:j.v_start + j.nv]
            S = j.calc_motion_subspace(qj)
            vJ = S @ vj
            ai = ai + S @ vdot[j.v_start:j.v_start + j.nv] + cross_motion(V[i], vJ)
            cJ = j.calc_bias(qj, vj)
            if cJ is not None:
                ai = ai + cJ
        A[i] = ai
    return A


def cross_motion(m, u):
    """Spatial motion cross product ``m x u`` (6,) of motion vectors [angular; linear]
    (Featherstone 2008, eq. 2.31): ``[w x a; w x b + v x a]``."""
    w, v, a, b = m[0:3], m[3:6], u[0:3], u[3:6]
    return _cat(ops.cross(w, a), ops.cross(w, b) + ops.cross(v, a))


def body_jacobian_columns(tree, q: Any, body: int, X: list | None = None) -> dict:
    """Columns of the body Jacobian in body coordinates: ``{joint: ^bX_k S_k}`` (6 x nv_k)
    for each joint ``k`` on the path from the world to ``body``."""
    X = joint_placements(tree, q) if X is None else X
    path = []
    i = body
    while i > 0:
        path.append(i)
        i = tree.parent_indices[i]
    cols: dict = {}
    for i in reversed(path):
        R, p = X[i]
        for k in list(cols):
            cols[k] = [motion_to_child(R, p, c) for c in cols[k]]
        j = tree.joints[i - 1]
        if j.nv:
            S = j.calc_motion_subspace(q[j.q_start:j.q_start + j.nq])
            cols[j] = [S[:, c] for c in range(j.nv)]
    return cols


def _expressed(tree, q, poses, expressed_in: str, w: Any, lin: Any):
    """Rotate world-axes vectors ``w``, ``lin`` into the axes of frame ``expressed_in``."""
    if expressed_in == "world":
        return _cat(w, lin)
    Re, _ = frame_world_pose(tree, q, expressed_in, poses)
    return _cat(Re.T @ w, Re.T @ lin)


def point_jacobian(tree, q: Any, frame: str, point: Any, expressed_in: str = "world"):
    """Jacobian (6 x nv) of ``[angular velocity; velocity of the point]`` of the frame,
    the point given in frame coordinates, rows expressed in the axes of ``expressed_in``
    ("world" = Pinocchio's LOCAL_WORLD_ALIGNED; the frame's own name = LOCAL).

    Column of joint k (an ancestor): ``w = R_k s_w``, ``v = R_k s_v + (p_k - p_P) x w``
    (world axes), rotated into ``expressed_in``; zero for the other joints."""
    need = _needed(tree, frame, expressed_in)
    poses = world_poses(tree, q, needed=need)
    b, Rf, pf = frame_in_body(tree, frame)
    Rb, pb = poses[b]
    P = pb + Rb @ (pf + Rf @ point)
    path = set(ancestors(tree, [b]))
    Re = None
    if expressed_in != "world":
        Re, _ = frame_world_pose(tree, q, expressed_in, poses)
    columns = []
    for i, j in enumerate(tree.joints, start=1):
        if j.nv == 0:
            continue
        if i not in path:
            columns.extend([np.zeros(6)] * j.nv)
            continue
        S = j.calc_motion_subspace(q[j.q_start:j.q_start + j.nq])
        R, p = poses[i]
        for c in range(j.nv):
            w = R @ S[0:3, c]
            lin = R @ S[3:6, c] + ops.cross(p - P, w)
            if Re is not None:
                w, lin = Re.T @ w, Re.T @ lin
            columns.append(_cat(w, lin))
    return ops.horzcat(*columns) if columns else np.zeros((6, 0))


def _frame_kinematics(tree, q, v, vdot, name, X, poses, V, A, point=None):
    """World-axes ``(R, p, w, vel, alpha, acc)`` of a frame origin, or of ``point`` (frame
    coordinates) when given (classical velocity and acceleration)."""
    b, Rf, pf = frame_in_body(tree, name)
    if point is not None:
        pf = pf + Rf @ point
    if b == 0:
        z = np.zeros(3)
        return Rf, pf, z, z, z, z
    Rb, pb = poses[b]
    Vb = V[b]
    w, vo = Vb[0:3], Vb[3:6]
    vel_b = vo + ops.cross(w, pf)
    R, p = Rb @ Rf, pb + Rb @ pf
    if A is None:
        return R, p, Rb @ w, Rb @ vel_b, None, None
    Ab = A[b]
    al, ao = Ab[0:3], Ab[3:6]
    acc_b = ao + ops.cross(al, pf) + ops.cross(w, vel_b)
    return R, p, Rb @ w, Rb @ vel_b, Rb @ al, Rb @ acc_b


def frame_velocity(tree, q: Any, v: Any, frame: str, relative_to: str = "world",
                   expressed_in: str = "world"):
    """Relative spatial velocity (6,) of ``frame`` w.r.t. ``relative_to`` in the axes of
    ``expressed_in`` (module docstring)."""
    need = _needed(tree, frame, relative_to, expressed_in)
    X = joint_placements(tree, q, needed=need)
    poses = world_poses(tree, q, X, need)
    V = body_velocities(tree, q, v, X, need)
    _, pa, wa, va, _, _ = _frame_kinematics(tree, q, v, None, frame, X, poses, V, None)
    _, pb, wb, vb, _, _ = _frame_kinematics(tree, q, v, None, relative_to, X, poses, V, None)
    w = wa - wb
    lin = va - vb - ops.cross(wb, pa - pb)
    return _expressed(tree, q, poses, expressed_in, w, lin)


def frame_acceleration(tree, q: Any, v: Any, vdot: Any, frame: str,
                       relative_to: str = "world", expressed_in: str = "world"):
    """Time derivative, observed in ``relative_to``, of :func:`frame_velocity` (classical
    relative accelerations), in the axes of ``expressed_in`` (6,)."""
    need = _needed(tree, frame, relative_to, expressed_in)
    X = joint_placements(tree, q, needed=need)
    poses = world_poses(tree, q, X, need)
    V = body_velocities(tree, q, v, X, need)
    A = body_accelerations(tree, q, v, vdot, X, V, needed=need)
    _, pa, wa, va, aa, la = _frame_kinematics(tree, q, v, vdot, frame, X, poses, V, A)
    _, pb, wb, vb, ab, lb = _frame_kinematics(tree, q, v, vdot, relative_to, X, poses, V, A)
    r = pa - pb
    ang = aa - ab - ops.cross(wb, wa - wb)
    dv = va - vb
    lin = la - lb - ops.cross(ab, r) - ops.cross(wb, dv) \
        - ops.cross(wb, dv - ops.cross(wb, r))
    return _expressed(tree, q, poses, expressed_in, ang, lin)


def point_acceleration(tree, q: Any, v: Any, vdot: Any, frame: str, point: Any):
    """``[alpha; a_P]`` (6,) in world axes: angular acceleration of the frame and classical
    acceleration of the point P (frame coordinates). With ``vdot = 0`` this is
    ``Jdot v`` of the world-aligned point Jacobian."""
    need = _needed(tree, frame)
    X = joint_placements(tree, q, needed=need)
    poses = world_poses(tree, q, X, need)
    V = body_velocities(tree, q, v, X, need)
    A = body_accelerations(tree, q, v, vdot, X, V, needed=need)
    _, _, _, _, al, acc = _frame_kinematics(tree, q, v, vdot, frame, X, poses, V, A, point)
    return _cat(al, acc)


# ----------------------------------------------------------------------------- mass properties
def center_of_mass(tree, q: Any, poses: list | None = None):
    """World position (3,) of the center of mass of all bodies."""
    M = tree.total_mass()
    if M <= 0:
        from ..errors import TreeError
        raise TreeError(f"tree '{tree.name}' has zero total mass: no center of mass")
    poses = world_poses(tree, q) if poses is None else poses
    acc = None
    for b in tree.bodies[1:]:
        if b.mass == 0:
            continue
        R, p = poses[b.index]
        term = b.mass * (p + R @ b.com)
        acc = term if acc is None else acc + term
    return acc / M


def center_of_mass_velocity(tree, q: Any, v: Any):
    """World velocity (3,) of the center of mass."""
    X = joint_placements(tree, q)
    poses = world_poses(tree, q, X)
    V = body_velocities(tree, q, v, X)
    acc = None
    for b in tree.bodies[1:]:
        if b.mass == 0:
            continue
        R, _ = poses[b.index]
        Vb = V[b.index]
        term = b.mass * (R @ (Vb[3:6] + ops.cross(Vb[0:3], b.com)))
        acc = term if acc is None else acc + term
    return acc / tree.total_mass()
