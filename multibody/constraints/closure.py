"""Bilateral constraints between two frames: ball (point-to-point), weld and distance.

Frames are bodies or frames of the tree (``tree.get_frame``); loop closures of a
mechanism modelled as a spanning tree are written with them (a four-bar: a tree of three
links plus a :class:`BallConstraint` or a :class:`WeldConstraint` closing the loop).

With the world positions ``x_A``, ``x_B`` of the frame origins and the rotations ``R_A``,
``R_B`` (world axes), the rows are

* ball: ``phi = x_B - x_A`` (3 rows, world axes), ``J v = v_B(x_B) - v_A(x_A)``;
* weld: the ball rows plus ``phi = log(R_B R_A^T)`` (rotation vector, world axes) with
  ``J v = d phi / dt = J_l^{-1}(phi) (w_B - R_B R_A^T w_A)`` (3 rows, first; ``w_B - w_A``
  near ``phi = 0``);
* distance: ``phi = |x_B - x_A| - d`` with ``J v = u . (v_B(x_B) - v_A(x_A))``, ``u`` the
  unit vector from ``x_A`` to ``x_B``;

each ``BILATERAL`` with Baumgarte/ERP stabilization ``b = erp * phi / h`` (or a spring-
damper through ``kp``, ``kd``). The time-stepping system also post-stabilizes positions of
these blocks (``project_positions``).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from .base import BILATERAL, ConstraintRows, StepKinematics, TimeSteppingConstraintForce

__all__ = ["BallConstraint", "WeldConstraint", "DistanceConstraint", "rotation_log",
           "left_jacobian_inverse"]

_E = np.eye(3)


def rotation_log(R: np.ndarray) -> np.ndarray:
    """Rotation vector (3,) ``theta * axis`` of a rotation matrix (log map, theta < pi)."""
    c = np.clip(0.5 * (np.trace(R) - 1.0), -1.0, 1.0)
    th = np.arccos(c)
    w = 0.5 * np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    s = np.sin(th)
    return w * (th / s) if s > 1e-9 else w


def _skew(w: np.ndarray) -> np.ndarray:
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def left_jacobian_inverse(phi: np.ndarray) -> np.ndarray:
    """Inverse left Jacobian of SO(3) at the rotation vector ``phi``: ``d/dt log(R) =
    J_l^{-1}(phi) w`` for ``dR/dt = [w]_x R`` (Barfoot, *State Estimation for Robotics*,
    2017, eq. 7.79)."""
    th = float(np.linalg.norm(phi))
    K = _skew(phi)
    if th < 1e-6:
        return np.eye(3) - 0.5 * K + K @ K / 12.0
    c = 1.0 / th ** 2 - (1.0 + np.cos(th)) / (2.0 * th * np.sin(th))
    return np.eye(3) - 0.5 * K + c * K @ K


class _TwoFrameConstraint(TimeSteppingConstraintForce):
    kind_name = "frame"

    def __init__(self, tree, frame_a: str, frame_b: str, *, erp: float, cfm: float,
                 kp: Optional[float], kd: Optional[float], name: Optional[str]) -> None:
        super().__init__(tree, erp=erp, cfm=cfm, kp=kp, kd=kd, name=name)
        frames = []
        for role, fname in (("frame_a", frame_a), ("frame_b", frame_b)):
            try:
                f = tree.get_frame(fname)
            except (KeyError, ValueError, TypeError):
                raise ValueError(f"{self.kind_name} constraint '{self.name}': {role} {fname!r} is "
                                 f"not a body or frame of tree '{tree.name}'") from None
            frames.append(f)
        fa, fb = frames
        if tree.get_body(fa.body).index == tree.get_body(fb.body).index:
            raise ValueError(f"{self.kind_name} constraint '{self.name}': frames '{frame_a}' and "
                             f"'{frame_b}' are on the same body '{fa.body}'")
        self.frame_a, self.frame_b = frame_a, frame_b
        self._a, self._b = tree.get_body(fa.body).index, tree.get_body(fb.body).index
        self._Xa, self._Xb = np.array(fa.pose, float), np.array(fb.pose, float)

    def is_bilateral(self) -> bool:
        return True

    def _poses(self, kin: StepKinematics):
        return kin.frame_pose(self._a, self._Xa), kin.frame_pose(self._b, self._Xb)

    def _translation(self, kin):
        (_, xa), (_, xb) = self._poses(kin)
        return kin.point_jacobian(self._b, xb) - kin.point_jacobian(self._a, xa), xb - xa

    def _finish(self, context, kin, J, phi) -> ConstraintRows:
        erp, cfm = self.softening(context, kin.h)
        return ConstraintRows.make(J, erp * phi / kin.h, BILATERAL, cfm=cfm, phi=phi)


class BallConstraint(_TwoFrameConstraint):
    """The origins of ``frame_a`` and ``frame_b`` coincide (3 bilateral rows; module
    docstring). Raises ValueError naming an unknown frame or two frames on one body."""

    kind_name = "ball"

    def __init__(self, tree, frame_a: str, frame_b: str, *, erp: float = 0.2, cfm: float = 0.0,
                 kp: Optional[float] = None, kd: Optional[float] = None,
                 name: Optional[str] = None) -> None:
        super().__init__(tree, frame_a, frame_b, erp=erp, cfm=cfm, kp=kp, kd=kd, name=name)

    def calc_rows(self, context, kin: StepKinematics) -> ConstraintRows:
        """Three rows: world x, y, z components of ``x_B - x_A``."""
        J, phi = self._translation(kin)
        return self._finish(context, kin, J, phi)


class WeldConstraint(_TwoFrameConstraint):
    """``frame_b`` coincides with ``frame_a`` in position and orientation (6 rows: rotation
    then translation; module docstring)."""

    kind_name = "weld"

    def __init__(self, tree, frame_a: str, frame_b: str, *, erp: float = 0.2, cfm: float = 0.0,
                 kp: Optional[float] = None, kd: Optional[float] = None,
                 name: Optional[str] = None) -> None:
        super().__init__(tree, frame_a, frame_b, erp=erp, cfm=cfm, kp=kp, kd=kd, name=name)

    def calc_rows(self, context, kin: StepKinematics) -> ConstraintRows:
        """Rotation rows ``d/dt log(R_B R_A^T) = J_l^{-1} (w_B - R_err w_A)`` (exact, also for
        large errors) then the three translation rows."""
        (Ra, _), (Rb, _) = self._poses(kin)
        Rerr = Rb @ Ra.T
        phi = rotation_log(Rerr)
        Jr = left_jacobian_inverse(phi) @ (kin.W * kin.mask[self._b]
                                           - Rerr @ (kin.W * kin.mask[self._a]))
        Jt, pt = self._translation(kin)
        return self._finish(context, kin, np.vstack([Jr, Jt]), np.concatenate([phi, pt]))


class DistanceConstraint(_TwoFrameConstraint):
    """The frame origins stay ``distance`` apart (1 row; module docstring).

    Raises ValueError for a non-positive distance (use :class:`BallConstraint` for 0).
    """

    kind_name = "distance"

    def __init__(self, tree, frame_a: str, frame_b: str, distance: float, *, erp: float = 0.2,
                 cfm: float = 0.0, kp: Optional[float] = None, kd: Optional[float] = None,
                 name: Optional[str] = None) -> None:
        super().__init__(tree, frame_a, frame_b, erp=erp, cfm=cfm, kp=kp, kd=kd, name=name)
        if not (np.isfinite(distance) and distance > 0):
            raise ValueError(f"distance constraint '{self.name}': distance must be finite and > 0, "
                             f"got {distance}")
        self.declare_numeric_parameter("distance", distance)

    def calc_rows(self, context, kin: StepKinematics) -> ConstraintRows:
        """One row along the line between the two origins."""
        (_, xa), (_, xb) = self._poses(kin)
        d = xb - xa
        r = float(np.linalg.norm(d))
        u = d / r if r > 1e-12 else np.array([0.0, 0.0, 1.0])
        J = (kin.point_rows([self._b], xb[None], u[None])
             - kin.point_rows([self._a], xa[None], u[None]))
        phi = np.array([r - float(context.get_parameter("distance")[0])])
        return self._finish(context, kin, J, phi)
