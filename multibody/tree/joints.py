"""Joint types: Weld, Revolute, Prismatic, Screw, Universal, Euler, Ball, Planar,
Translational, Free (DART's ten).

Each type is a small class giving ``nq``, ``nv``, the joint transform ``X_J(q)``, the motion
subspace ``S(q)`` (child frame), the bias ``c_J``, ``qdot = N(q) v`` and integration on the
configuration manifold; the bookkeeping (limits, damping, friction, springs) lives in
:class:`~multibody._joint_base.Joint`. Conventions (ARCHITECTURE.md): quaternions
``[w, x, y, z]``; Ball ``v`` = angular velocity in the child frame; Free ``q = [qw, qx, qy,
qz, x, y, z]``, ``v = [omega; v]`` (the child frame's spatial velocity in the child frame).

References
----------
R. Featherstone, *Rigid Body Dynamics Algorithms*, Springer 2008, section 4.4 and table 4.1.
"""
from __future__ import annotations

from typing import Any

import casadi as ca
import numpy as np

from solvers import ops

from . import spatial
from ._joint_base import Joint, _unit_axis
from ..errors import JointError

__all__ = ["Joint", "Weld", "Revolute", "Prismatic", "Screw", "Universal", "Euler", "Ball",
           "Planar", "Translational", "Free", "JOINT_TYPES"]

_AXES = {"x": np.array([1.0, 0.0, 0.0]), "y": np.array([0.0, 1.0, 0.0]),
         "z": np.array([0.0, 0.0, 1.0])}


def _col6(top: Any, bottom: Any):
    """A 6-vector from two 3-vectors (numpy when both numeric)."""
    return ops.vertcat(top, bottom)


def _S(columns: list[Any]):
    """6 x n motion subspace from 6-vector columns (numpy when all numeric)."""
    if any(ops.is_symbolic(c) for c in columns):
        return ca.horzcat(*[c if ops.is_symbolic(c) else ca.DM(np.ravel(c)) for c in columns])
    return np.column_stack(columns) if columns else np.zeros((6, 0))


class Weld(Joint):
    """Rigid connection (nq = nv = 0): the child frame is the joint frame."""

    type = "weld"
    nq = 0
    nv = 0

    def calc_rotation_translation(self, q):
        return np.eye(3), np.zeros(3)

    def calc_motion_subspace(self, q):
        return np.zeros((6, 0))


class Revolute(Joint):
    """Rotation by ``q`` about a unit ``axis`` of the joint frame (nq = nv = 1).
    ``S = [axis; 0]``."""

    type = "revolute"
    nq = 1
    nv = 1

    def __init__(self, name: str, parent: str, child: str, *, axis: Any = (0, 0, 1),
                 **kwargs: Any) -> None:
        self.axis = _unit_axis(axis, name)
        super().__init__(name, parent, child, **kwargs)

    def calc_rotation_translation(self, q):
        return spatial.axis_angle_to_rotation(self.axis, q[0]), np.zeros(3)

    def calc_motion_subspace(self, q):
        return np.concatenate([self.axis, np.zeros(3)]).reshape(6, 1)


class Prismatic(Joint):
    """Translation by ``q`` along a unit ``axis`` (nq = nv = 1). ``S = [0; axis]``."""

    type = "prismatic"
    nq = 1
    nv = 1

    def __init__(self, name: str, parent: str, child: str, *, axis: Any = (0, 0, 1),
                 **kwargs: Any) -> None:
        self.axis = _unit_axis(axis, name)
        super().__init__(name, parent, child, **kwargs)

    def calc_rotation_translation(self, q):
        return np.eye(3), self.axis * q[0] if not ops.is_symbolic(q) else ca.DM(self.axis) * q[0]

    def calc_motion_subspace(self, q):
        return np.concatenate([np.zeros(3), self.axis]).reshape(6, 1)

    def _is_angle(self, i):
        return False


class Screw(Joint):
    """Rotation by ``q`` about ``axis`` with translation ``pitch * q`` along it
    (metres per radian; nq = nv = 1). ``S = [axis; pitch * axis]``."""

    type = "screw"
    nq = 1
    nv = 1

    def __init__(self, name: str, parent: str, child: str, *, axis: Any = (0, 0, 1),
                 pitch: float = 0.1, **kwargs: Any) -> None:
        self.axis = _unit_axis(axis, name)
        self.pitch = float(pitch)
        if not np.isfinite(self.pitch):
            raise JointError(f"joint '{name}': pitch must be finite, got {pitch!r}")
        super().__init__(name, parent, child, **kwargs)

    def calc_rotation_translation(self, q):
        t = self.pitch * q[0]
        p = self.axis * t if not ops.is_symbolic(q) else ca.DM(self.axis) * t
        return spatial.axis_angle_to_rotation(self.axis, q[0]), p

    def calc_motion_subspace(self, q):
        return np.concatenate([self.axis, self.pitch * self.axis]).reshape(6, 1)


class _RotationChain(Joint):
    """Rotations about fixed unit axes applied in sequence (intrinsic):
    ``R = R(a_1, q_1) R(a_2, q_2) ... R(a_n, q_n)``, ``v = qdot``.

    In the child frame, ``s_k = (R_{k+1} ... R_n)^T a_k`` and
    ``c_J = sum_k (s_k x w_{>k}) qdot_k`` with ``w_{>k} = sum_{j>k} s_j qdot_j``.
    """

    _chain_axes: list[np.ndarray]

    def calc_rotation_translation(self, q):
        R = None
        for k, a in enumerate(self._chain_axes):
            Rk = spatial.axis_angle_to_rotation(a, q[k])
            R = Rk if R is None else R @ Rk
        return R, np.zeros(3)

    def _columns(self, q):
        cols = []
        Rtail = None  # R_{k+1} ... R_n
        for k in reversed(range(len(self._chain_axes))):
            a = self._chain_axes[k]
            s = a if Rtail is None else Rtail.T @ a
            cols.append(s)
            Rk = spatial.axis_angle_to_rotation(a, q[k])
            Rtail = Rk if Rtail is None else Rk @ Rtail
        return cols[::-1]

    def calc_motion_subspace(self, q):
        return _S([_col6(s, np.zeros(3)) for s in self._columns(q)])

    def calc_bias(self, q, v):
        cols = self._columns(q)
        n = len(cols)
        w_after = None
        c = None
        for k in reversed(range(n)):
            if w_after is not None:
                term = ops.cross(cols[k], w_after) * v[k]
                c = term if c is None else c + term
            sk = cols[k] * v[k]
            w_after = sk if w_after is None else w_after + sk
        return _col6(c, np.zeros(3))


class Universal(_RotationChain):
    """Two rotations: about ``axis1`` (joint frame) then ``axis2`` (intermediate frame),
    ``R = R(axis1, q1) R(axis2, q2)`` (nq = nv = 2)."""

    type = "universal"
    nq = 2
    nv = 2

    def __init__(self, name: str, parent: str, child: str, *, axis1: Any = (1, 0, 0),
                 axis2: Any = (0, 1, 0), **kwargs: Any) -> None:
        self.axis1 = _unit_axis(axis1, name, "axis1")
        self.axis2 = _unit_axis(axis2, name, "axis2")
        if abs(self.axis1 @ self.axis2) > 1 - 1e-9:
            raise JointError(f"joint '{name}': axis1 and axis2 must not be parallel")
        self._chain_axes = [self.axis1, self.axis2]
        super().__init__(name, parent, child, **kwargs)


class Euler(_RotationChain):
    """Three intrinsic rotations about coordinate axes, e.g. ``axes="zyx"`` gives
    ``R = Rz(q1) Ry(q2) Rx(q3)`` (any of the 12 orders; nq = nv = 3, ``v = qdot``)."""

    type = "euler"
    nq = 3
    nv = 3

    def __init__(self, name: str, parent: str, child: str, *, axes: str = "xyz",
                 **kwargs: Any) -> None:
        axes = str(axes).lower()
        if len(axes) != 3 or any(a not in _AXES for a in axes) or axes[0] == axes[1] \
                or axes[1] == axes[2]:
            raise JointError(f"joint '{name}': axes must be one of the 12 Euler orders such as "
                             f"'xyz' or 'zyz', got {axes!r}")
        self.axes = axes
        self._chain_axes = [_AXES[a] for a in axes]
        super().__init__(name, parent, child, **kwargs)


def _quat_rate(quat, w):
    """``1/2 quat * [0, w]`` (w in the rotated frame)."""
    return 0.5 * spatial.quaternion_multiply(quat, ops.vertcat(0.0, w))


class Ball(Joint):
    """Spherical joint: ``q`` = unit quaternion ``[w, x, y, z]``, ``v`` = angular velocity of
    the child in the child frame (nq = 4, nv = 3). ``S = [1; 0]``; integration
    ``q+ = q * exp(v dt)`` keeps ``q`` unit."""

    type = "ball"
    nq = 4
    nv = 3

    def calc_rotation_translation(self, q):
        return spatial.quaternion_to_rotation(q), np.zeros(3)

    def calc_motion_subspace(self, q):
        return np.vstack([np.eye(3), np.zeros((3, 3))])

    def qdot(self, q, v):
        return _quat_rate(ops.vector(q), ops.vector(v))

    def integrate(self, q, v, dt):
        return spatial.quaternion_multiply(q, spatial.quaternion_exp(ops.vector(v) * dt))

    def difference(self, q0, q1):
        return spatial.quaternion_log(
            spatial.quaternion_multiply(spatial.quaternion_conjugate(q0), q1))

    def normalize_configuration(self, q):
        return spatial.quaternion_normalize(q)

    def neutral_configuration(self):
        return np.array([1.0, 0.0, 0.0, 0.0])

    def random_configuration(self, rng):
        u = rng.normal(size=4)
        u /= np.linalg.norm(u)
        return u if u[0] >= 0 else -u


def _plane_axes(n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """In-plane unit axes (e1, e2) for the normal n: e1 = x projected on the plane (y when
    x is nearly normal), e2 = n x e1. For n = z this gives e1 = x, e2 = y."""
    ref = np.array([1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    e1 = ref - (ref @ n) * n
    e1 /= np.linalg.norm(e1)
    return e1, np.cross(n, e1)


class Planar(Joint):
    """Motion in the plane normal to ``axis``: ``q = [x, y, theta]``, ``v = qdot``
    (nq = nv = 3). The child frame is translated by ``x e1 + y e2`` and rotated by ``theta``
    about the normal, where ``e1``/``e2`` are the in-plane axes (x/y for axis = z; otherwise
    e1 is the x axis projected on the plane and e2 = axis x e1)."""

    type = "planar"
    nq = 3
    nv = 3

    def __init__(self, name: str, parent: str, child: str, *, axis: Any = (0, 0, 1),
                 **kwargs: Any) -> None:
        self.axis = _unit_axis(axis, name)
        self.e1, self.e2 = _plane_axes(self.axis)
        super().__init__(name, parent, child, **kwargs)

    def calc_rotation_translation(self, q):
        R = spatial.axis_angle_to_rotation(self.axis, q[2])
        if ops.is_symbolic(q):
            return R, ca.DM(self.e1) * q[0] + ca.DM(self.e2) * q[1]
        return R, self.e1 * q[0] + self.e2 * q[1]

    def calc_motion_subspace(self, q):
        R = spatial.axis_angle_to_rotation(self.axis, q[2])
        z = np.zeros(3)
        return _S([_col6(z, R.T @ self.e1), _col6(z, R.T @ self.e2), _col6(self.axis, z)])

    def calc_bias(self, q, v):
        R = spatial.axis_angle_to_rotation(self.axis, q[2])
        lin = R.T @ (ca.DM(self.e1) * v[0] + ca.DM(self.e2) * v[1]) if ops.is_symbolic(v) \
            else R.T @ (self.e1 * v[0] + self.e2 * v[1])
        return _col6(np.zeros(3), -ops.cross(self.axis, lin) * v[2])

    def _is_angle(self, i):
        return i == 2


class Translational(Joint):
    """Translation ``q = [x, y, z]`` in the joint frame, ``v = qdot`` (nq = nv = 3)."""

    type = "translational"
    nq = 3
    nv = 3

    def calc_rotation_translation(self, q):
        return np.eye(3), q

    def calc_motion_subspace(self, q):
        return np.vstack([np.zeros((3, 3)), np.eye(3)])

    def _is_angle(self, i):
        return False


class Free(Joint):
    """Floating joint: ``q = [qw, qx, qy, qz, x, y, z]`` (orientation and position of the
    child in the joint frame), ``v = [omega; v]`` (the child's spatial velocity in the child
    frame; ``v`` is the velocity of the child origin); nq = 7, nv = 6, ``S = 1``.
    Integration follows the SE(3) exponential: ``T+ = T exp(dt [omega; v])``."""

    type = "free"
    nq = 7
    nv = 6

    def calc_rotation_translation(self, q):
        return spatial.quaternion_to_rotation(q[0:4]), q[4:7]

    def calc_motion_subspace(self, q):
        return np.eye(6)

    def qdot(self, q, v):
        q, v = ops.vector(q), ops.vector(v)
        R = spatial.quaternion_to_rotation(q[0:4])
        return ops.vertcat(_quat_rate(q[0:4], v[0:3]), R @ v[3:6])

    def integrate(self, q, v, dt):
        q, v = ops.vector(q), ops.vector(v)
        T = spatial.pose(spatial.quaternion_to_rotation(q[0:4]), q[4:7])
        Tn = T @ spatial.exp_se3(v * dt)
        quat = spatial.quaternion_multiply(q[0:4], spatial.quaternion_exp(v[0:3] * dt))
        return ops.vertcat(quat, spatial.pose_translation(Tn))

    def difference(self, q0, q1):
        q0, q1 = ops.vector(q0), ops.vector(q1)
        T0 = spatial.pose(spatial.quaternion_to_rotation(q0[0:4]), q0[4:7])
        T1 = spatial.pose(spatial.quaternion_to_rotation(q1[0:4]), q1[4:7])
        return spatial.log_se3(spatial.pose_inverse(T0) @ T1)

    def normalize_configuration(self, q):
        q = ops.vector(q)
        return ops.vertcat(spatial.quaternion_normalize(q[0:4]), q[4:7])

    def neutral_configuration(self):
        return np.array([1.0, 0, 0, 0, 0, 0, 0])

    def random_configuration(self, rng):
        quat = Ball.random_configuration(self, rng)
        q = np.concatenate([quat, np.zeros(3)])
        for i in range(4, 7):
            lo, hi = self.lower[i], self.upper[i]
            q[i] = rng.uniform(lo if np.isfinite(lo) else -1.0, hi if np.isfinite(hi) else 1.0)
        return q


JOINT_TYPES = {cls.type: cls for cls in (Weld, Revolute, Prismatic, Screw, Universal, Euler,
                                         Ball, Planar, Translational, Free)}
