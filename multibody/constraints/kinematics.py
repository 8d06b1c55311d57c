"""What a constraint sees of the tree at a state: the two kinematics views, one per plant.

Every constraint kind is written once against the *frame interface* ``kin.frame(body,
X_BF) -> (R, p, Jw, Jv)`` (world rotation and origin of a frame fixed on a body, and the
rows mapping the plant's generalized velocity to the frame's world angular velocity and to
the world velocity of its origin). Two classes provide it:

* :class:`StepKinematics` for :class:`~multibody.plants.TimeSteppingRigidBodySystem`: numbers
  at the start of a step, from one compiled call (body poses and world-axes motion columns
  ``W``, ``U`` of the step's velocity coordinates), plus vectorized point rows for contacts;
* :class:`TreeKinematics` for :class:`~multibody.plants.RigidBodySystem`: the tree's
  symbolic-capable methods at ``q`` (numbers or CasADi symbols), so that a constraint's rows
  are CasADi expressions and ``Jdot v`` follows by differentiation
  (:func:`jacobian_dot_times_v`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import casadi as ca
import numpy as np

from solvers import ops

__all__ = ["StepKinematics", "TreeKinematics", "cross_rows", "jacobian_dot_times_v"]


def cross_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cross product of (m, 3) arrays (much cheaper than ``np.cross`` for small m)."""
    out = np.empty_like(a)
    out[:, 0] = a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1]
    out[:, 1] = a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2]
    out[:, 2] = a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]
    return out


@dataclass
class StepKinematics:
    """Kinematics at the start of a step, shared by all constraint blocks.

    Attributes
    ----------
    tree : RigidBodyTree
    q, v : ndarray, shapes (nq,), (nv,)
    h : float
        Time step.
    time : float
    R : ndarray, shape (N, 3, 3)
        World rotation of every body (index = ``body.index``; 0 is the world).
    p : ndarray, shape (N, 3)
        World position of every body origin.
    W, U : ndarray, shape (3, nv)
        World-axes spatial motion columns at the world origin: generalized velocity
        column ``c`` moves body ``b`` (if joint ``c`` is an ancestor of ``b``) with angular
        velocity ``W[:, c]`` and the velocity ``U[:, c] + W[:, c] x x`` of the point ``x``.
    mask : ndarray, shape (N, nv)
        1 where column ``c`` is on the path from the world to body ``b``, else 0.
    v_free : ndarray, shape (nv,), optional
        The velocity at the end of the step without constraint impulses (set by the
        time-stepping plant before it asks for rows; contacts align friction with it).
    """

    tree: Any
    q: np.ndarray
    v: np.ndarray
    h: float
    time: float
    R: np.ndarray
    p: np.ndarray
    W: np.ndarray
    U: np.ndarray
    mask: np.ndarray
    cache: dict = field(default_factory=dict)
    v_free: Any = None

    def point_rows(self, bodies: np.ndarray, points: np.ndarray,
                   directions: np.ndarray) -> np.ndarray:
        """Rows (m, nv) of ``d_k . v(x_k)``: the velocity along ``directions[k]`` of the world
        point ``points[k]`` moving with body ``bodies[k]`` (vectorized;
        ``d . (u + w x x) = d . u + (x x d) . w``)."""
        d = np.asarray(directions, float).reshape(-1, 3)
        x = np.asarray(points, float).reshape(-1, 3)
        rows = d @ self.U + cross_rows(x, d) @ self.W
        return rows * self.mask[np.asarray(bodies, int)]

    def point_jacobian(self, body: int, x: np.ndarray) -> np.ndarray:
        """Translational Jacobian (3, nv) of the world point ``x`` moving with ``body``:
        ``U - [x]_x W`` on the body's ancestor columns."""
        x0, x1, x2 = x.tolist()
        S = np.array(((0.0, -x2, x1), (x2, 0.0, -x0), (-x1, x0, 0.0)))
        return (self.U - S @ self.W) * self.mask[body]

    def angular_rows(self, bodies: np.ndarray, directions: np.ndarray) -> np.ndarray:
        """Rows (m, nv) of ``d_k . w_b``: body angular velocity along ``directions[k]``."""
        d = np.asarray(directions, float).reshape(-1, 3)
        return (d @ self.W) * self.mask[np.asarray(bodies, int)]

    def frame_pose(self, body: int, X_BF: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """World ``(R, p)`` of a frame with pose ``X_BF`` (4 x 4) on body index ``body``."""
        Rb, pb = self.R[body], self.p[body]
        return Rb @ X_BF[:3, :3], pb + Rb @ X_BF[:3, 3]

    def frame(self, body: int, X_BF: np.ndarray):
        """``(R, p, Jw, Jv)`` of a frame with pose ``X_BF`` on body index ``body``: world
        rotation (3, 3), world origin (3,), and the rows (3, nv) giving its world angular
        velocity and the world velocity of its origin (the frame interface the constraints
        are written against; :class:`TreeKinematics` is the continuous plant's)."""
        R, p = self.frame_pose(body, X_BF)
        return R, p, self.W * self.mask[body], self.point_jacobian(body, p)

    def point_velocity(self, body: int, x: np.ndarray) -> np.ndarray:
        """World velocity (3,) at ``v`` of the world point ``x`` moving with ``body``."""
        mv = self.mask[body] * self.v
        w, u = self.W @ mv, self.U @ mv
        return u + np.cross(w, x)  # single point


class TreeKinematics:
    """The frame interface on the tree's own (symbolic-capable) methods at ``q``.

    Parameters
    ----------
    tree : RigidBodyTree
    q : array_like or casadi.SX, shape (nq,)
    """

    def __init__(self, tree, q: Any) -> None:
        self.tree = tree
        self.q = q
        self._body_names = [b.name for b in tree.bodies]

    def frame(self, body: int, X_BF: np.ndarray):
        """``(R, p, Jw, Jv)`` of the frame ``X_BF`` on body index ``body`` (see the module
        docstring); the rows are the world-aligned Jacobian ``tree.jacobian`` of the point."""
        name = self._body_names[body]
        T = self.tree.body_pose(name, self.q)
        R = T[0:3, 0:3] @ X_BF[:3, :3]
        p = T[0:3, 3] + T[0:3, 0:3] @ X_BF[:3, 3]
        if body == 0:
            z = ca.SX.zeros(3, self.tree.nv) if ops.is_symbolic(self.q) else np.zeros((3, self.tree.nv))
            return R, p, z, z
        J = self.tree.jacobian(name, self.q, X_BF[:3, 3])
        return R, p, J[0:3, :], J[3:6, :]


def jacobian_dot_times_v(J: Any, q: Any, v: Any, qdot: Any):
    """``Jdot v = d(J(q) v)/dq . qdot`` for rows ``J`` (m, nv) given as a CasADi expression of
    the symbols ``q`` (with ``v`` held fixed); ``qdot = N(q) v``. Returns (m,) expressions."""
    return ca.jtimes(ca.SX(J) @ v, q, qdot)
