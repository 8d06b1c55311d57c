"""The :class:`Joint` base class: bookkeeping shared by every joint type.

A joint type fills in a handful of small methods (STYLE.md habit 2); the base class owns
validation, limits and the passive-force parameters. Every method taking ``q``/``v`` works
on numpy arrays and CasADi values (the joint's own slice of the tree's q and v).
"""
from __future__ import annotations

from typing import Any

import casadi as ca
import numpy as np

from solvers import ops

from . import spatial
from ..errors import JointError

__all__ = ["Joint"]


def _unit_axis(axis: Any, joint: str, what: str = "axis") -> np.ndarray:
    a = np.asarray(axis, dtype=float).ravel()
    if a.shape != (3,) or not np.all(np.isfinite(a)):
        raise JointError(f"joint '{joint}': {what} must be a finite 3-vector, got {axis!r}")
    n = np.linalg.norm(a)
    if n < 1e-12:
        raise JointError(f"joint '{joint}': {what} must be nonzero, got {axis!r}")
    return a / n


def _check_pose(T: Any, joint: str) -> np.ndarray:
    if T is None:
        return np.eye(4)
    T = np.asarray(T, dtype=float)
    if T.shape != (4, 4) or not np.all(np.isfinite(T)):
        raise JointError(f"joint '{joint}': origin must be a finite 4x4 pose, got shape "
                         f"{T.shape}")
    R = T[:3, :3]
    if (not np.allclose(R.T @ R, np.eye(3), atol=1e-9) or np.linalg.det(R) < 0
            or not np.allclose(T[3], [0, 0, 0, 1])):
        raise JointError(f"joint '{joint}': origin is not a rigid transform (rotation block "
                         "must be orthonormal with det +1, last row [0, 0, 0, 1])")
    return T.copy()


class Joint:
    """Base class of the joint types (the contract is documented here once).

    The child body frame is the joint frame ``origin`` (a fixed pose in the parent body
    frame) moved by the joint transform ``X_J(q)``: ``T_parent_child = origin @
    joint_transform(q)`` (URDF semantics).

    Subclasses set ``type``, ``nq``, ``nv`` and implement:

    * ``calc_rotation_translation(q)`` -> ``(R, p)`` of ``X_J(q)`` (``R`` may be a numpy constant);
    * ``calc_motion_subspace(q)`` -> ``S`` (6 x nv): the joint velocity of the child relative to
      the parent, expressed in the child frame, is ``S v`` (Featherstone 2008, eq. 4.5);
    * ``_bias(q, v)`` -> ``c_J`` (6,), the apparent derivative of ``S`` times ``v``, or
      ``None`` when ``S`` is constant (Featherstone eq. 4.10);
    * ``qdot``, ``integrate``, ``difference`` when ``q`` is not a plain vector space
      (the default is ``qdot = v``).

    Parameters
    ----------
    name, parent, child : str
        Joint name and the names of the parent and child bodies.
    origin : (4, 4) array_like, optional
        Pose of the joint frame in the parent body frame (default identity).
    lower, upper : float or (nq,) array_like, optional
        Position limits (None: unlimited, +-inf).
    velocity_limit, effort_limit : float or (nv,) array_like, optional
        Symmetric velocity and effort limits (None: unlimited).
    damping, friction, stiffness : float or (nv,) array_like
        Viscous damping, Coulomb friction and spring stiffness (>= 0).
    armature : float or (nv,) array_like
        Inertia added on each velocity coordinate (>= 0, kg m^2 or kg): a motor's rotor
        inertia reflected through its gear, ``N^2 J_rotor``. It adds to the mass matrix
        diagonal (``H + diag(armature)``) in every algorithm and to the kinetic energy.
    rest_position : (nq,) array_like, optional
        Spring rest configuration (default: the neutral configuration).
    """

    type: str = ""
    nq: int = 0
    nv: int = 0

    def __init__(self, name: str, parent: str, child: str, *, origin: Any = None,
                 lower: Any = None, upper: Any = None, velocity_limit: Any = None,
                 effort_limit: Any = None, damping: Any = 0.0, friction: Any = 0.0,
                 stiffness: Any = 0.0, rest_position: Any = None, armature: Any = 0.0) -> None:
        for what, val in (("name", name), ("parent", parent), ("child", child)):
            if not isinstance(val, str) or not val:
                raise JointError(f"joint {name!r}: {what} must be a non-empty string, "
                                 f"got {val!r}")
        if parent == child:
            raise JointError(f"joint '{name}': parent and child are the same body '{parent}'")
        self.name = name
        self.parent = parent
        self.child = child
        self.origin = _check_pose(origin, name)
        self.q_start: int | None = None
        self.v_start: int | None = None
        self.mimic: tuple[str, float, float] | None = None
        self.lower = self._param(lower, self.nq, -np.inf, "lower")
        self.upper = self._param(upper, self.nq, np.inf, "upper")
        bad = np.nonzero(self.lower > self.upper)[0]
        if bad.size:
            raise JointError(f"joint '{name}': lower limit {self.lower[bad[0]]} > upper limit "
                             f"{self.upper[bad[0]]} (coordinate {bad[0]})")
        self.velocity_limit = self._param(velocity_limit, self.nv, np.inf, "velocity_limit",
                                          nonneg=True)
        self.effort_limit = self._param(effort_limit, self.nv, np.inf, "effort_limit",
                                        nonneg=True)
        self.damping = self._param(damping, self.nv, 0.0, "damping", nonneg=True)
        self.friction = self._param(friction, self.nv, 0.0, "friction", nonneg=True)
        self.stiffness = self._param(stiffness, self.nv, 0.0, "stiffness", nonneg=True)
        self.armature = self._param(armature, self.nv, 0.0, "armature", nonneg=True)
        if rest_position is None:
            self.rest_position = self.neutral_configuration()
        else:
            self.rest_position = self._param(rest_position, self.nq, 0.0, "rest_position")

    # ------------------------------------------------------------------ validation
    def _param(self, value: Any, n: int, default: float, what: str,
               nonneg: bool = False) -> np.ndarray:
        if value is None:
            return np.full(n, default)
        arr = np.asarray(value, dtype=float)
        if arr.ndim == 0:
            arr = np.full(n, float(arr))
        arr = arr.ravel()
        if arr.shape != (n,):
            raise JointError(f"joint '{self.name}' ({self.type}): {what} must be a scalar or "
                             f"have size {n}, got size {arr.size}")
        if np.any(np.isnan(arr)):
            raise JointError(f"joint '{self.name}': {what} contains NaN")
        if nonneg and np.any(arr < 0):
            raise JointError(f"joint '{self.name}': {what} must be >= 0, got {arr}")
        return arr

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(name={self.name!r}, parent={self.parent!r}, "
                f"child={self.child!r}, nq={self.nq}, nv={self.nv})")

    # ------------------------------------------------------------------ contract
    def calc_rotation_translation(self, q: Any) -> tuple[Any, Any]:
        """Subclass hook: ``(R, p)`` of the child frame in the joint frame for a vector ``q``
        (nq,), numbers or CasADi. The algorithms call it with ``q`` already a vector; users call
        :meth:`joint_transform`."""
        raise NotImplementedError(f"joint type {type(self).__name__} must implement "
                                  "calc_rotation_translation")

    def calc_motion_subspace(self, q: Any) -> Any:
        """Subclass hook: motion subspace ``S(q)`` (6 x nv, child frame) for a vector ``q``;
        users call :meth:`motion_subspace`."""
        raise NotImplementedError(f"joint type {type(self).__name__} must implement "
                                  "calc_motion_subspace")

    def calc_bias(self, q: Any, v: Any) -> Any:
        """Subclass hook: ``c_J = dS/dt v`` (6,) or ``None`` when it is zero (constant ``S``);
        users call :meth:`bias_acceleration`."""
        return None

    # ------------------------------------------------------------------ public API
    def joint_transform(self, q: Any):
        """Pose ``X_J(q)`` (4 x 4) of the child frame in the joint frame."""
        R, p = self.calc_rotation_translation(ops.vector(q) if self.nq else q)
        return spatial.pose(R, p)

    def motion_subspace(self, q: Any):
        """Motion subspace ``S(q)`` (6 x nv), expressed in the child frame."""
        return self.calc_motion_subspace(ops.vector(q) if self.nq else q)

    def bias_acceleration(self, q: Any, v: Any):
        """``c_J = dS/dt v`` (6,), apparent derivative in the child frame (eq. 4.10)."""
        c = self.calc_bias(ops.vector(q), ops.vector(v)) if self.nv else None
        if c is None:
            return ops.zeros(6, like=q if ops.is_symbolic(q) else v)
        return c

    def qdot(self, q: Any, v: Any):
        """Configuration rate ``qdot = N(q) v`` (nq,)."""
        return ops.vector(v)

    def velocity_to_qdot(self, q: Any):
        """The matrix ``N(q)`` (nq x nv) with ``qdot = N(q) v``."""
        q = ops.vector(q)
        if ops.is_symbolic(q):
            vs = ca.SX.sym("v", self.nv) if isinstance(q, ca.SX) else ca.MX.sym("v", self.nv)
            return ca.jacobian(self.qdot(q, vs), vs)
        N = np.zeros((self.nq, self.nv))
        for k in range(self.nv):
            e = np.zeros(self.nv)
            e[k] = 1.0
            N[:, k] = self.qdot(q, e)
        return N

    def integrate(self, q: Any, v: Any, dt: Any):
        """Configuration reached from ``q`` moving with constant ``v`` for ``dt``."""
        return ops.vector(q) + ops.vector(v) * dt

    def difference(self, q0: Any, q1: Any):
        """Velocity ``v`` (nv,) with ``integrate(q0, v, 1) = q1``."""
        return ops.vector(q1) - ops.vector(q0)

    def normalize_configuration(self, q: Any):
        """Project ``q`` onto the configuration manifold (unit quaternions)."""
        return ops.vector(q)

    def neutral_configuration(self) -> np.ndarray:
        """Zero (identity quaternion), moved into the position limits when 0 is outside."""
        q = np.zeros(self.nq)
        lo, hi = getattr(self, "lower", None), getattr(self, "upper", None)
        if lo is not None:
            for i in range(self.nq):
                if q[i] < lo[i] or q[i] > hi[i]:
                    q[i] = 0.5 * (lo[i] + hi[i]) if np.isfinite(lo[i] + hi[i]) else (
                        lo[i] if np.isfinite(lo[i]) else hi[i])
        return q

    def random_configuration(self, rng: np.random.Generator) -> np.ndarray:
        """Uniform within finite limits; angles in [-pi, pi] and lengths in [-1, 1] otherwise."""
        q = np.empty(self.nq)
        for i in range(self.nq):
            lo, hi = self.lower[i], self.upper[i]
            if np.isfinite(lo) and np.isfinite(hi):
                q[i] = rng.uniform(lo, hi)
            else:
                span = np.pi if self._is_angle(i) else 1.0
                lo2 = lo if np.isfinite(lo) else (hi - 2 * span if np.isfinite(hi) else -span)
                hi2 = hi if np.isfinite(hi) else lo2 + 2 * span
                q[i] = rng.uniform(lo2, hi2)
        return q

    def _is_angle(self, i: int) -> bool:
        return True

    # ------------------------------------------------------------------ passive forces
    def passive_force(self, q: Any, v: Any):
        """``-damping * v - stiffness * difference(rest_position, q)`` (nv,)."""
        q, v = ops.vector(q), ops.vector(v)
        f = -self.damping * v if not ops.is_symbolic(v) else -ca.DM(self.damping) * v
        if np.any(self.stiffness):
            d = self.difference(self.rest_position, q)
            f = f - (ca.DM(self.stiffness) * d if ops.is_symbolic(d) else self.stiffness * d)
        return f
