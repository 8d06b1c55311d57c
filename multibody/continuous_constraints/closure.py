"""Equality constraints between two frames at the acceleration level: ball, weld, distance.

Frames are bodies or frames of the tree (``tree.get_frame``; the world and frames on it
included). With ``x_A``, ``x_B`` the world positions of the frame origins, ``J_A``,
``J_B`` their world-aligned Jacobians (``tree.jacobian``, rows [angular; linear]) and
``(Jdot v)_A``, ``(Jdot v)_B`` from ``tree.jacobian_dot_times_v``:

* :class:`BallClosure`: ``phi = E (x_B - x_A)`` with ``E`` the constrained world
  directions (default the identity: 3 rows; two in-plane directions close a planar loop
  without a redundant out-of-plane row), ``J = E (J_B - J_A)_lin``;
* :class:`WeldClosure`: the ball rows plus three rotation rows ``phi_R = vee(skew(R_B
  R_A^T)) `` (the rotation vector to first order), ``J = (J_B - J_A)_ang``;
* :class:`DistanceClosure`: ``phi = |x_B - x_A| - d``, ``J = u^T (J_B - J_A)_lin`` with
  ``u`` the unit vector from A to B and ``Jdot v = u^T (a_B - a_A) + (|dv|^2 - (u^T
  dv)^2) / |x_B - x_A|``.

Each row is ``J vdot + Jdot v + alpha J v + beta phi = 0`` (Baumgarte, see
:mod:`~multibody.continuous_constraints.base`). Everything is written with the tree's
symbolic-capable methods, so the rows evaluate on CasADi ``SX`` (a closed-chain mechanism
converts to CasADi and linearizes).
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from solvers import ops
from .base import ContinuousTimeConstraintForce

__all__ = ["BallClosure", "WeldClosure", "DistanceClosure"]


class _TwoFrame(ContinuousTimeConstraintForce):
    kind_name = "frame"

    def __init__(self, tree, frame_a: str, frame_b: str, *, time_constant: Optional[float],
                 damping_ratio: float, gains, name: Optional[str]) -> None:
        super().__init__(tree, time_constant=time_constant, damping_ratio=damping_ratio,
                         gains=gains, name=name)
        bodies = []
        for role, fname in (("frame_a", frame_a), ("frame_b", frame_b)):
            try:
                bodies.append(tree.get_frame(fname).body)
            except (KeyError, ValueError, TypeError):
                raise ValueError(f"{self.kind_name} closure '{self.name}': {role} {fname!r} is not "
                                 f"a body or frame of tree '{tree.name}'") from None
        if bodies[0] == bodies[1]:
            raise ValueError(f"{self.kind_name} closure '{self.name}': frames '{frame_a}' and "
                             f"'{frame_b}' are both on body '{bodies[0]}'")
        self.frame_a, self.frame_b = frame_a, frame_b

    def _frames(self, q, v):
        t = self.tree
        out = []
        for f in (self.frame_a, self.frame_b):
            T = t.body_pose(f, q)
            out.append((T[0:3, 0:3], T[0:3, 3], t.jacobian(f, q), t.jacobian_dot_times_v(f, q, v)))
        return out


class BallClosure(_TwoFrame):
    """The origins of ``frame_a`` and ``frame_b`` coincide (along ``axes``).

    Parameters
    ----------
    tree : RigidBodyTree
    frame_a, frame_b : str
        Body or frame names (on different bodies).
    axes : array_like, shape (k, 3), optional
        World directions constrained (default: x, y and z). A planar loop uses its two
        in-plane directions.
    time_constant, damping_ratio, gains
        Baumgarte stabilization (default critically damped, 0.1 s; ``None`` disables it).
    name : str, optional

    Raises
    ------
    ValueError
        An unknown frame, both frames on one body, or ``axes`` not of shape (k, 3).
    """

    kind_name = "ball"

    def __init__(self, tree, frame_a: str, frame_b: str, *, axes: Optional[Sequence] = None,
                 time_constant: Optional[float] = 0.1, damping_ratio: float = 1.0, gains=None,
                 name: Optional[str] = None) -> None:
        super().__init__(tree, frame_a, frame_b, time_constant=time_constant,
                         damping_ratio=damping_ratio, gains=gains, name=name)
        E = np.eye(3) if axes is None else np.atleast_2d(np.asarray(axes, dtype=float))
        if E.ndim != 2 or E.shape[1] != 3 or E.shape[0] < 1 or not np.all(np.isfinite(E)):
            raise ValueError(f"ball closure '{self.name}': axes must have shape (k, 3), got "
                             f"{np.shape(axes)}")
        self.axes = E

    def row_names(self) -> list:
        labels = "xyz" if self.axes.shape[0] == 3 and np.allclose(self.axes, np.eye(3)) else \
            [str(i) for i in range(self.axes.shape[0])]
        return [f"{self.name}[{c}]" for c in labels]

    def position_error(self, q):
        t = self.tree
        d = t.body_pose(self.frame_b, q)[0:3, 3] - t.body_pose(self.frame_a, q)[0:3, 3]
        return self.axes @ d

    def kinematic_terms(self, q, v):
        (_, xa, Ja, aa), (_, xb, Jb, ab) = self._frames(q, v)
        E = self.axes
        return E @ (xb - xa), E @ (Jb[3:6, :] - Ja[3:6, :]), E @ (ab[3:6] - aa[3:6])


def _vee_skew(R: Any):
    """``vee((R - R^T) / 2)``: the rotation vector of R to first order."""
    return 0.5 * ops.vertcat(R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1])


class WeldClosure(_TwoFrame):
    """``frame_b`` coincides with ``frame_a`` in orientation and position (6 rows: rotation
    then translation, world axes). Parameters as :class:`BallClosure` (without ``axes``)."""

    kind_name = "weld"

    def __init__(self, tree, frame_a: str, frame_b: str, *, time_constant: Optional[float] = 0.1,
                 damping_ratio: float = 1.0, gains=None, name: Optional[str] = None) -> None:
        super().__init__(tree, frame_a, frame_b, time_constant=time_constant,
                         damping_ratio=damping_ratio, gains=gains, name=name)

    def row_names(self) -> list:
        return [f"{self.name}[{c}]" for c in ("rx", "ry", "rz", "x", "y", "z")]

    def position_error(self, q):
        t = self.tree
        Ta, Tb = t.body_pose(self.frame_a, q), t.body_pose(self.frame_b, q)
        return ops.vertcat(_vee_skew(Tb[0:3, 0:3] @ Ta[0:3, 0:3].T), Tb[0:3, 3] - Ta[0:3, 3])

    def kinematic_terms(self, q, v):
        (Ra, xa, Ja, aa), (Rb, xb, Jb, ab) = self._frames(q, v)
        phi = ops.vertcat(_vee_skew(Rb @ Ra.T), xb - xa)
        return phi, Jb - Ja, ab - aa


class DistanceClosure(_TwoFrame):
    """The origins of ``frame_a`` and ``frame_b`` stay ``distance`` apart (1 row).

    Raises ValueError for a non-positive distance (use :class:`BallClosure` for 0).
    """

    kind_name = "distance"

    def __init__(self, tree, frame_a: str, frame_b: str, distance: float, *,
                 time_constant: Optional[float] = 0.1, damping_ratio: float = 1.0, gains=None,
                 name: Optional[str] = None) -> None:
        super().__init__(tree, frame_a, frame_b, time_constant=time_constant,
                         damping_ratio=damping_ratio, gains=gains, name=name)
        if not (np.isfinite(distance) and distance > 0):
            raise ValueError(f"distance closure '{self.name}': distance must be finite and > 0, "
                             f"got {distance}")
        self.distance = float(distance)

    def row_names(self) -> list:
        return [f"{self.name}[d]"]

    def position_error(self, q):
        t = self.tree
        d = t.body_pose(self.frame_b, q)[0:3, 3] - t.body_pose(self.frame_a, q)[0:3, 3]
        return ops.vector(ops.norm_2(d) - self.distance)

    def kinematic_terms(self, q, v):
        (_, xa, Ja, aa), (_, xb, Jb, ab) = self._frames(q, v)
        d = xb - xa
        r = ops.norm_2(d)
        u = d / r
        Jl = Jb[3:6, :] - Ja[3:6, :]
        dv = Jl @ v
        ud = ops.dot(u, dv)
        jdv = ops.dot(u, ab[3:6] - aa[3:6]) + (ops.dot(dv, dv) - ud * ud) / r
        J = ops.transpose(u) @ Jl if ops.is_casadi(u) else (u @ Jl)[None, :]
        return ops.vector(r - self.distance), J, ops.vector(jdv)
