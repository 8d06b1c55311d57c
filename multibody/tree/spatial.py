"""Spatial algebra: rotations, rigid transforms, Plucker transforms, spatial cross products
and spatial inertias, on numpy arrays and CasADi ``SX``/``MX`` values alike.

Conventions (ARCHITECTURE.md)
-----------------------------
* Spatial vectors are ``[angular; linear]`` (Featherstone 2008, chapter 2).
* Quaternions are ``[w, x, y, z]``; ``quaternion_to_rotation`` accepts non-unit quaternions
  only through :func:`quaternion_normalize` (the map itself assumes a unit quaternion).
* A *pose* ``T_AB`` (4 x 4) holds the rotation ``R_AB`` and the position ``p_AB`` of frame B
  in frame A: a point with B coordinates ``r_B`` has A coordinates ``R_AB r_B + p_AB``.
* ``rpy = (roll, pitch, yaw)`` means ``R = Rz(yaw) Ry(pitch) Rx(roll)`` (URDF convention).

Numeric inputs give numpy outputs; any CasADi ``SX``/``MX`` input gives a CasADi output.

References
----------
R. Featherstone, *Rigid Body Dynamics Algorithms*, Springer 2008 (chapters 2 and 4).
"""
from __future__ import annotations

from typing import Any

import casadi as ca
import numpy as np

from solvers import ops

__all__ = [
    "skew", "unskew", "rotation_x", "rotation_y", "rotation_z", "axis_angle_to_rotation",
    "rotation_to_axis_angle", "exp_so3", "log_so3", "rpy_to_rotation", "rotation_to_rpy",
    "quaternion_to_rotation", "rotation_to_quaternion", "quaternion_multiply",
    "quaternion_conjugate", "quaternion_normalize", "quaternion_exp", "quaternion_log",
    "pose", "pose_inverse", "pose_rotation", "pose_translation", "exp_se3", "log_se3",
    "motion_transform", "force_transform", "motion_cross", "force_cross",
    "cross_motion", "cross_force", "spatial_inertia", "inertia_parameters",
]

# Below this squared angle the trigonometric coefficients use their Taylor series.
_SMALL_ANGLE2 = 1e-6


def _sym(*xs: Any) -> bool:
    return any(ops.is_symbolic(x) or isinstance(x, ca.DM) for x in xs)


def _matrix(rows: list[list[Any]], symbolic: bool):
    """Build a matrix from rows of scalars (numpy array or CasADi matrix)."""
    if symbolic:
        return ca.vertcat(*[ca.horzcat(*r) for r in rows])
    return np.array([[float(e) for e in r] for r in rows])


def _vec3(x: Any):
    """A 3-vector as a 1-D numpy array or a CasADi column."""
    v = ops.vector(x)
    if ops.numel(v) != 3:
        raise ValueError(f"expected a 3-vector, got {ops.numel(v)} elements")
    return v


def skew(w: Any):
    """Skew-symmetric matrix ``[w]x`` with ``[w]x r = w x r``; shape (3, 3)."""
    w = _vec3(w)
    return _matrix([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]], _sym(w))


def unskew(S: Any):
    """The vector ``w`` of a skew-symmetric matrix ``S = [w]x`` (antisymmetric part)."""
    return ops.vertcat(0.5 * (S[2, 1] - S[1, 2]), 0.5 * (S[0, 2] - S[2, 0]),
                       0.5 * (S[1, 0] - S[0, 1]))


def rotation_x(angle: Any):
    """Rotation by ``angle`` about x (active, right-handed)."""
    c, s = ops.cos(angle), ops.sin(angle)
    return _matrix([[1, 0, 0], [0, c, -s], [0, s, c]], _sym(angle))


def rotation_y(angle: Any):
    """Rotation by ``angle`` about y."""
    c, s = ops.cos(angle), ops.sin(angle)
    return _matrix([[c, 0, s], [0, 1, 0], [-s, 0, c]], _sym(angle))


def rotation_z(angle: Any):
    """Rotation by ``angle`` about z."""
    c, s = ops.cos(angle), ops.sin(angle)
    return _matrix([[c, -s, 0], [s, c, 0], [0, 0, 1]], _sym(angle))


def axis_angle_to_rotation(axis: Any, angle: Any):
    """Rodrigues' formula ``R = I + sin(a) [u]x + (1 - cos(a)) [u]x^2`` for a unit ``axis`` u.

    A constant numeric axis with a symbolic angle gives an expression whose structure keeps
    the zeros of the axis (cheap generated code for coordinate axes).
    """
    sym = _sym(axis, angle)
    if not ops.is_symbolic(axis):
        u = np.asarray(axis, dtype=float).ravel()
        u = u / np.linalg.norm(u)
        K = np.array([[0, -u[2], u[1]], [u[2], 0, -u[0]], [-u[1], u[0], 0]])
        c, s = ops.cos(angle), ops.sin(angle)
        if not sym:
            c, s = float(c), float(s)
            return c * np.eye(3) + s * K + (1 - c) * np.outer(u, u)
        # R = c 1 + s [u]x + (1 - c) u u^T, entry by entry so that zeros of u stay zeros
        uu = np.outer(u, u)
        omc = 1 - c
        rows = []
        for i in range(3):
            row = []
            for j in range(3):
                e = c * (1.0 if i == j else 0.0) + s * K[i, j]
                if uu[i, j] != 0.0:
                    # a diagonal entry with u_i = +-1 is exactly 1
                    e = e + omc * uu[i, j] if i != j or uu[i, j] != 1.0 else 1.0
                row.append(e)
            rows.append(ca.horzcat(*row))
        return ca.vertcat(*rows)
    K = skew(axis)
    return ca.DM(np.eye(3)) + ops.sin(angle) * K + (1 - ops.cos(angle)) * (K @ K)


def exp_so3(w: Any):
    """Rotation matrix ``exp([w]x)`` of a rotation vector ``w`` (angle = |w|).

    Uses ``sin(t)/t`` and ``(1-cos t)/t^2`` with their Taylor series below a small angle, so
    the map and its derivatives are finite at ``w = 0``.
    """
    w = _vec3(w)
    a, b = _so3_coefficients(ops.dot(w, w))
    K = skew(w)
    I3 = np.eye(3)
    if _sym(w):
        return ca.DM(I3) + a * K + b * (K @ K)
    return I3 + a * K + b * (K @ K)


def _so3_coefficients(t2):
    """(sin t / t, (1 - cos t) / t^2) from t^2, series near zero."""
    small = t2 < _SMALL_ANGLE2
    if ops.is_symbolic(t2):
        t = ca.sqrt(ca.if_else(small, 1.0, t2))
        a = ca.if_else(small, 1 - t2 / 6 + t2 * t2 / 120, ca.sin(t) / t)
        b = ca.if_else(small, 0.5 - t2 / 24 + t2 * t2 / 720, (1 - ca.cos(t)) / (t * t))
        return a, b
    t2 = float(t2)
    if small:
        return 1 - t2 / 6 + t2 * t2 / 120, 0.5 - t2 / 24 + t2 * t2 / 720
    t = np.sqrt(t2)
    return np.sin(t) / t, (1 - np.cos(t)) / t2


def log_so3(R: Any):
    """Rotation vector ``w`` with ``exp_so3(w) = R`` (angle in [0, pi]).

    Numeric input handles angles near pi exactly; symbolic input uses
    ``w = t / (2 sin t) * vee(R - R^T)`` (accurate away from t = pi).
    """
    if _sym(R):
        R = ca.SX(R) if isinstance(R, ca.DM) else R
        c = ca.fmin(ca.fmax((R[0, 0] + R[1, 1] + R[2, 2] - 1) / 2, -1), 1)
        t = ca.acos(c)
        s = ca.sin(t)
        small = t * t < _SMALL_ANGLE2
        f = ca.if_else(small, 0.5 + t * t / 12, t / (2 * ca.if_else(small, 1.0, s)))
        return f * ca.vertcat(R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1])
    R = np.asarray(R, dtype=float)
    q = rotation_to_quaternion(R)
    return quaternion_log(q)


def rotation_to_axis_angle(R: Any):
    """``(axis, angle)`` of a rotation matrix; axis = (1, 0, 0) for the identity (numeric)."""
    w = log_so3(R)
    angle = ops.norm_2(w)
    if _sym(R):
        return w / ca.if_else(angle < 1e-12, 1.0, angle), angle
    if angle < 1e-12:
        return np.array([1.0, 0.0, 0.0]), 0.0
    return w / angle, angle


def rpy_to_rotation(rpy: Any):
    """``R = Rz(yaw) Ry(pitch) Rx(roll)`` for ``rpy = (roll, pitch, yaw)`` (URDF)."""
    rpy = _vec3(rpy)
    return rotation_z(rpy[2]) @ rotation_y(rpy[1]) @ rotation_x(rpy[0])


def rotation_to_rpy(R: Any):
    """``(roll, pitch, yaw)`` with ``rpy_to_rotation(rpy) = R``; pitch in [-pi/2, pi/2]."""
    roll = ops.atan2(R[2, 1], R[2, 2])
    pitch = ops.atan2(-R[2, 0], ops.sqrt(R[2, 1] * R[2, 1] + R[2, 2] * R[2, 2]))
    yaw = ops.atan2(R[1, 0], R[0, 0])
    return ops.vertcat(roll, pitch, yaw)


def quaternion_to_rotation(q: Any):
    """Rotation matrix of a unit quaternion ``q = [w, x, y, z]``."""
    q = ops.vector(q)
    w, x, y, z = q[0], q[1], q[2], q[3]
    return _matrix([
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ], _sym(q))


def rotation_to_quaternion(R: Any):
    """Unit quaternion ``[w, x, y, z]`` (w >= 0) of a rotation matrix (Shepperd's method).

    Symbolic input selects the best-conditioned branch with ``if_else``.
    """
    tr = R[0, 0] + R[1, 1] + R[2, 2]
    cands = [
        (1 + tr, lambda s: (s / 4, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s,
                            (R[1, 0] - R[0, 1]) / s)),
        (1 + R[0, 0] - R[1, 1] - R[2, 2],
         lambda s: ((R[2, 1] - R[1, 2]) / s, s / 4, (R[0, 1] + R[1, 0]) / s,
                    (R[0, 2] + R[2, 0]) / s)),
        (1 - R[0, 0] + R[1, 1] - R[2, 2],
         lambda s: ((R[0, 2] - R[2, 0]) / s, (R[0, 1] + R[1, 0]) / s, s / 4,
                    (R[1, 2] + R[2, 1]) / s)),
        (1 - R[0, 0] - R[1, 1] + R[2, 2],
         lambda s: ((R[1, 0] - R[0, 1]) / s, (R[0, 2] + R[2, 0]) / s,
                    (R[1, 2] + R[2, 1]) / s, s / 4)),
    ]
    if not _sym(R):
        R = np.asarray(R, dtype=float)
        k = int(np.argmax([c[0] for c in cands]))
        s = 2 * np.sqrt(max(cands[k][0], 1e-300))
        q = np.array(cands[k][1](s), dtype=float)
        q = q / np.linalg.norm(q)
        return -q if q[0] < 0 else q
    vals = [ca.vertcat(*c[1](2 * ca.sqrt(ca.fmax(c[0], 1e-12)))) for c in cands]
    best = vals[3]
    best_d = cands[3][0]
    for k in (2, 1, 0):
        better = cands[k][0] >= best_d
        best = ca.if_else(better, vals[k], best)
        best_d = ca.if_else(better, cands[k][0], best_d)
    best = ca.if_else(best[0] < 0, -best, best)
    return best / ca.norm_2(best)


def quaternion_multiply(a: Any, b: Any):
    """Hamilton product ``a * b`` of quaternions ``[w, x, y, z]`` (rotation a then b, body)."""
    a, b = ops.vector(a), ops.vector(b)
    aw, ax, ay, az = a[0], a[1], a[2], a[3]
    bw, bx, by, bz = b[0], b[1], b[2], b[3]
    return ops.vertcat(aw * bw - ax * bx - ay * by - az * bz,
                       aw * bx + ax * bw + ay * bz - az * by,
                       aw * by - ax * bz + ay * bw + az * bx,
                       aw * bz + ax * by - ay * bx + az * bw)


def quaternion_conjugate(q: Any):
    """``[w, -x, -y, -z]`` (the inverse of a unit quaternion)."""
    q = ops.vector(q)
    return ops.vertcat(q[0], -q[1], -q[2], -q[3])


def quaternion_normalize(q: Any):
    """``q / |q|``."""
    q = ops.vector(q)
    return q / ops.norm_2(q)


def quaternion_exp(w: Any):
    """Unit quaternion of the rotation vector ``w``: ``[cos(t/2), sin(t/2) w/t]``, t = |w|.

    ``sin(t/2)/t`` uses its Taylor series near zero (finite value and derivatives).
    """
    w = _vec3(w)
    t2 = ops.dot(w, w)
    small = t2 < _SMALL_ANGLE2
    if _sym(w):
        t = ca.sqrt(ca.if_else(small, 1.0, t2))
        c = ca.if_else(small, 1 - t2 / 8 + t2 * t2 / 384, ca.cos(t / 2))
        s = ca.if_else(small, 0.5 - t2 / 48 + t2 * t2 / 3840, ca.sin(t / 2) / t)
        return ca.vertcat(c, s * w)
    if small:
        return np.concatenate([[1 - t2 / 8 + t2 * t2 / 384], (0.5 - t2 / 48 + t2 * t2 / 3840) * w])
    t = np.sqrt(t2)
    return np.concatenate([[np.cos(t / 2)], np.sin(t / 2) / t * w])


def quaternion_log(q: Any):
    """Rotation vector ``w`` of a unit quaternion (angle in [0, pi]); inverse of
    :func:`quaternion_exp` up to the sign of ``q``."""
    q = ops.vector(q)
    if _sym(q):
        sgn = ca.if_else(q[0] < 0, -1.0, 1.0)
        w0, xyz = sgn * q[0], sgn * q[1:4]
        s2 = ca.sumsqr(xyz)
        small = s2 < _SMALL_ANGLE2
        s = ca.sqrt(ca.if_else(small, 1.0, s2))
        f = ca.if_else(small, 2 / w0 * (1 - s2 / (3 * w0 * w0)), 2 * ca.atan2(s, w0) / s)
        return f * xyz
    q = np.asarray(q, dtype=float)
    if q[0] < 0:
        q = -q
    s = np.linalg.norm(q[1:])
    if s < 1e-12:
        return 2 * q[1:] / q[0]
    return 2 * np.arctan2(s, q[0]) / s * q[1:]


# ----------------------------------------------------------------------------- poses
def pose(R: Any = None, p: Any = None):
    """4 x 4 homogeneous matrix from a rotation ``R`` (3 x 3) and a position ``p`` (3,)."""
    R = np.eye(3) if R is None else R
    p = np.zeros(3) if p is None else p
    if _sym(R, p):
        return ca.vertcat(ca.horzcat(R, ops.vector(p) if _sym(p) else ca.DM(np.ravel(p))),
                          ca.DM([[0, 0, 0, 1]]))
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = np.ravel(p)
    return T


def pose_rotation(T: Any):
    """Rotation block ``T[:3, :3]``."""
    return T[:3, :3]


def pose_translation(T: Any):
    """Translation ``T[:3, 3]`` as a vector."""
    return ops.vector(T[:3, 3]) if _sym(T) else np.asarray(T, dtype=float)[:3, 3].copy()


def pose_inverse(T: Any):
    """Inverse pose ``[R^T, -R^T p; 0, 1]``."""
    R, p = T[:3, :3], T[:3, 3]
    return pose(R.T, -(R.T @ p))


def exp_se3(twist: Any):
    """Pose ``exp([twist])`` of a twist ``[w; v]`` (4 x 4), body-frame convention:
    the motion of a frame moving with constant body velocity ``[w; v]`` for unit time.

    ``p = V(w) v`` with ``V = I + (1-cos t)/t^2 [w]x + (t - sin t)/t^3 [w]x^2`` (series
    near t = 0).
    """
    twist = ops.vector(twist)
    w, v = twist[0:3], twist[3:6]
    t2 = ops.dot(w, w)
    a, b = _so3_coefficients(t2)
    c = _so3_c(t2)
    K = skew(w)
    K2 = K @ K
    if _sym(twist):
        I3 = ca.DM(np.eye(3))
        return pose(I3 + a * K + b * K2, (I3 + b * K + c * K2) @ v)
    I3 = np.eye(3)
    return pose(I3 + a * K + b * K2, (I3 + b * K + c * K2) @ v)


def _so3_c(t2):
    """(t - sin t) / t^3 from t^2 with its series near zero."""
    small = t2 < _SMALL_ANGLE2
    if ops.is_symbolic(t2):
        t = ca.sqrt(ca.if_else(small, 1.0, t2))
        return ca.if_else(small, 1 / 6 - t2 / 120 + t2 * t2 / 5040, (t - ca.sin(t)) / (t2 * t))
    t2 = float(t2)
    if small:
        return 1 / 6 - t2 / 120 + t2 * t2 / 5040
    t = np.sqrt(t2)
    return (t - np.sin(t)) / (t2 * t)


def log_se3(T: Any):
    """Twist ``[w; v]`` with ``exp_se3([w; v]) = T`` (rotation angle below pi)."""
    R, p = T[:3, :3], T[:3, 3]
    w = log_so3(R)
    t2 = ops.dot(w, w)
    a, b = _so3_coefficients(t2)
    # V^-1 = I - 1/2 [w]x + (1 - a / (2 b)) / t^2 [w]x^2, with series near zero.
    small = t2 < _SMALL_ANGLE2
    if _sym(T):
        d = ca.if_else(small, 1 / 12 + t2 / 720, (1 - a / (2 * b)) / ca.if_else(small, 1.0, t2))
        K = skew(w)
        return ca.vertcat(w, (ca.DM(np.eye(3)) - 0.5 * K + d * (K @ K)) @ p)
    d = 1 / 12 + t2 / 720 if small else (1 - a / (2 * b)) / t2
    K = skew(w)
    return np.concatenate([w, (np.eye(3) - 0.5 * K + d * (K @ K)) @ np.asarray(p, dtype=float)])


# ----------------------------------------------------------------------------- Plucker
def motion_transform(T: Any):
    """Plucker transform ``^A X_B`` (6 x 6) of motion vectors for the pose ``T = T_AB``.

    Maps a spatial motion vector ``[w; v]`` given in B coordinates (linear part at B's
    origin) to A coordinates (at A's origin): ``[[R, 0], [[p]x R, R]]``
    (Featherstone 2008, eq. 2.24 written for the inverse transform).
    """
    R, p = T[:3, :3], pose_translation(T)
    P = skew(p) @ R
    if _sym(T):
        Z = ca.DM.zeros(3, 3)
        return ca.vertcat(ca.horzcat(R, Z), ca.horzcat(P, R))
    R = np.asarray(R, dtype=float)
    return np.block([[R, np.zeros((3, 3))], [P, R]])


def force_transform(T: Any):
    """Plucker transform ``^A X_B^*`` (6 x 6) of force vectors ``[n; f]`` for ``T = T_AB``:
    ``[[R, [p]x R], [0, R]]`` (moments taken about the new origin; Featherstone eq. 2.25)."""
    R, p = T[:3, :3], pose_translation(T)
    P = skew(p) @ R
    if _sym(T):
        Z = ca.DM.zeros(3, 3)
        return ca.vertcat(ca.horzcat(R, P), ca.horzcat(Z, R))
    R = np.asarray(R, dtype=float)
    return np.block([[R, P], [np.zeros((3, 3)), R]])


def motion_cross(m: Any):
    """Matrix ``m x`` (6 x 6) of the spatial motion cross product (Featherstone eq. 2.31)."""
    m = ops.vector(m)
    W, V = skew(m[0:3]), skew(m[3:6])
    if _sym(m):
        return ca.vertcat(ca.horzcat(W, ca.DM.zeros(3, 3)), ca.horzcat(V, W))
    return np.block([[W, np.zeros((3, 3))], [V, W]])


def force_cross(m: Any):
    """Matrix ``m x*`` = ``-(m x)^T`` (6 x 6) of the spatial force cross product (eq. 2.32)."""
    X = motion_cross(m)
    return -X.T


def cross_motion(m: Any, u: Any):
    """``m x u`` for spatial motion vectors: ``[w x uw; w x uv + v x uw]``."""
    m, u = ops.vector(m), ops.vector(u)
    w, v, a, b = m[0:3], m[3:6], u[0:3], u[3:6]
    return ops.vertcat(ops.cross(w, a), ops.cross(w, b) + ops.cross(v, a))


def cross_force(m: Any, f: Any):
    """``m x* f`` for a motion ``m = [w; v]`` and a force ``f = [n; f]``:
    ``[w x n + v x f; w x f]``."""
    m, f = ops.vector(m), ops.vector(f)
    w, v, n, fl = m[0:3], m[3:6], f[0:3], f[3:6]
    return ops.vertcat(ops.cross(w, n) + ops.cross(v, fl), ops.cross(w, fl))


def spatial_inertia(mass: Any, com: Any, inertia: Any):
    """Spatial inertia (6 x 6) at the body origin from the mass, the COM ``c`` (body frame)
    and the rotational inertia ``I_c`` about the COM:
    ``[[I_c + m [c]x [c]x^T, m [c]x], [m [c]x^T, m 1]]`` (Featherstone eq. 2.63)."""
    C = skew(com)
    if _sym(mass, com, inertia):
        I3 = ca.DM(np.eye(3))
        return ca.vertcat(ca.horzcat(inertia + mass * (C @ C.T), mass * C),
                          ca.horzcat(mass * C.T, mass * I3))
    m = float(mass)
    Ic = np.asarray(inertia, dtype=float)
    return np.block([[Ic + m * C @ C.T, m * C], [m * C.T, m * np.eye(3)]])


def inertia_parameters(I6: Any):
    """Inverse of :func:`spatial_inertia`: ``(mass, com, inertia about the COM)``."""
    m = I6[3, 3]
    C = I6[0:3, 3:6] / m
    c = unskew(C)
    Ic = I6[0:3, 0:3] - m * (C @ C.T)
    return m, c, Ic
