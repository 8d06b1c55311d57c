"""A configuration trajectory as one B-spline per coordinate, with ``q``, ``v`` and ``vdot`` of
the tree's joint conventions, numeric or CasADi-symbolic.

The trajectory is ``y(t) = sum_j B_j(t) c_j`` with uniform B-spline basis functions ``B_j``
of degree ``k`` (clamped knots on ``[t_0, t_end]``) and control points ``c_j`` in the tree's
coordinate space (``nq`` numbers). Coordinates whose velocity is their derivative (revolute,
prismatic, universal, Euler, planar ... joints) give ``q = y``, ``v = y'`` and
``vdot = y''``. For ball and free joints the four quaternion components are splined as
``s(t)`` and normalised, ``u = s / |s|``, with the angular velocity in the child frame and its
derivative

.. math:: \\omega = 2\\,\\mathrm{vec}(\\bar u \\otimes \\dot u), \\qquad
          \\dot\\omega = 2\\,\\mathrm{vec}(\\bar u \\otimes \\ddot u);

a free joint's position ``p(t)`` gives the child-frame linear velocity ``R^T p'`` and its
derivative ``R^T p'' - omega x (R^T p')`` (the conventions of
:func:`~multibody.motion.smooth_trajectory`). Because ``q, v, vdot`` at any time are smooth
functions of the control points, a trajectory optimisation on the control points has exact
derivatives, and the optimised motion can be evaluated at any rate with consistent
velocities and accelerations.

Bounds on the control points bound the spline (a B-spline lies in the convex hull of its
control points), which is how joint limits are imposed.

References
----------
C. de Boor, "A Practical Guide to Splines", Springer, 2001 (B-splines, the convex hull
property). J. Sola, "Quaternion kinematics for the error-state Kalman filter",
arXiv:1711.02508 (eq. 104).
"""
from __future__ import annotations

from typing import Any

import casadi as ca
import numpy as np
from scipy.interpolate import BSpline

from .errors import TrajectoryError

__all__ = ["UniformBSpline", "spline_state", "VQDOT_JOINT_TYPES"]

#: joint types whose generalized velocity is the derivative of their coordinates
VQDOT_JOINT_TYPES = ("revolute", "prismatic", "screw", "universal", "euler", "planar",
                     "translational")


class UniformBSpline:
    """Uniform clamped B-spline basis on ``[t0, t1]``.

    Parameters
    ----------
    t0, t1 : float
        Start and end time (s), ``t1 > t0``.
    knot_interval : float
        Approximate spacing of the knots (s); the interval is split into
        ``max(1, round((t1 - t0) / knot_interval))`` equal pieces.
    degree : int
        Polynomial degree ``k`` (>= 3 for continuous accelerations).

    Attributes
    ----------
    knots : ndarray
        Clamped knot vector (``k + 1`` repeated knots at each end).
    size : int
        Number of control points ``K = pieces + k``.

    Raises
    ------
    TrajectoryError
        ``t1 <= t0``, a non-positive knot interval or a degree below 3.
    """

    def __init__(self, t0: float, t1: float, knot_interval: float, degree: int = 3) -> None:
        if not (np.isfinite(t0) and np.isfinite(t1) and t1 > t0):
            raise TrajectoryError(f"UniformBSpline: need t1 > t0, got [{t0!r}, {t1!r}]")
        if not (np.isfinite(knot_interval) and knot_interval > 0):
            raise TrajectoryError(f"UniformBSpline: knot_interval must be > 0, got "
                                  f"{knot_interval!r}")
        if int(degree) < 3:
            raise TrajectoryError(f"UniformBSpline: degree must be >= 3, got {degree!r}")
        self.t0, self.t1, self.degree = float(t0), float(t1), int(degree)
        pieces = max(1, int(round((t1 - t0) / knot_interval)))
        inner = np.linspace(self.t0, self.t1, pieces + 1)
        k = self.degree
        self.knots = np.r_[[self.t0] * k, inner, [self.t1] * k]
        self.size = pieces + k

    def basis(self, t: Any, derivative: int = 0) -> np.ndarray:
        """Values (T, K) of the basis functions (or their ``derivative``-th derivatives) at
        the times ``t`` (clipped to ``[t0, t1]``)."""
        t = np.clip(np.asarray(t, float).ravel(), self.t0, self.t1)
        spl = BSpline(self.knots, np.eye(self.size), self.degree, extrapolate=False)
        B = spl(t, derivative) if derivative else spl(t)
        return np.nan_to_num(np.asarray(B, float))

    def fit(self, t: Any, values: Any, smoothing: float = 1e-9) -> np.ndarray:
        """Control points (K, n) of the least-squares fit to ``values`` (T, n) at ``t``, with
        a small penalty ``smoothing * sum |c_{j+1} - 2 c_j + c_{j-1}|^2`` that keeps control
        points without data determined."""
        B = self.basis(t)
        Y = np.asarray(values, float).reshape(B.shape[0], -1)
        D = np.diff(np.eye(self.size), 2, axis=0)
        A = np.vstack([B, np.sqrt(smoothing) * D])
        return np.linalg.lstsq(A, np.vstack([Y, np.zeros((D.shape[0], Y.shape[1]))]),
                               rcond=None)[0]


def _vec_conj_mul(a, b):
    """Vector part of conj(a) * b for quaternions [w, x, y, z] (CasADi column vectors)."""
    return a[0] * b[1:4] - b[0] * a[1:4] - ca.cross(a[1:4], b[1:4])


def _rotation(u):
    w, x, y, z = u[0], u[1], u[2], u[3]
    return ca.vertcat(
        ca.horzcat(1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)),
        ca.horzcat(2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)),
        ca.horzcat(2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)))


def _unit(s, sd, sdd):
    n = ca.sqrt(ca.dot(s, s))
    u = s / n
    nd = ca.dot(u, sd)
    a = sd - u * nd
    ud = a / n
    ad = sdd - ud * nd - u * (ca.dot(ud, sd) + ca.dot(u, sdd))
    return u, ud, ad / n - a * nd / n ** 2


def spline_state(tree, y, yd, ydd) -> tuple[Any, Any, Any]:
    """``q, v, vdot`` of the tree from spline values ``y, y', y''`` (module docstring).

    Parameters
    ----------
    tree : RigidBodyTree
    y, yd, ydd : (nq,) casadi.SX or casadi.MX
        The splined coordinates and their first two time derivatives (quaternions need not
        be normalised).

    Returns
    -------
    q : (nq,) casadi expression
        Configuration with unit quaternions.
    v, vdot : (nv,) casadi expressions

    Raises
    ------
    TrajectoryError
        A joint type that is not a ball or free joint and whose ``v`` is not ``qdot``.
    """
    qp, vp, ap = [], [], []
    for j in tree.joints:
        qs = j.q_start
        if j.nq == 0:
            continue
        if j.type in ("ball", "free"):
            u, ud, udd = _unit(y[qs:qs + 4], yd[qs:qs + 4], ydd[qs:qs + 4])
            om, omd = 2 * _vec_conj_mul(u, ud), 2 * _vec_conj_mul(u, udd)
            qp.append(u)
            vp.append(om)
            ap.append(omd)
            if j.type == "free":
                R = _rotation(u)
                vb = R.T @ yd[qs + 4:qs + 7]
                qp.append(y[qs + 4:qs + 7])
                vp.append(vb)
                ap.append(R.T @ ydd[qs + 4:qs + 7] - ca.cross(om, vb))
        elif j.nq == j.nv and j.type in VQDOT_JOINT_TYPES:
            qp.append(y[qs:qs + j.nq])
            vp.append(yd[qs:qs + j.nq])
            ap.append(ydd[qs:qs + j.nq])
        else:
            raise TrajectoryError(f"spline_state on tree '{tree.name}': joint '{j.name}' of "
                                  f"type '{j.type}' is not supported (v must be qdot, or a "
                                  "ball or free joint)")
    return ca.vertcat(*qp), ca.vertcat(*vp), ca.vertcat(*ap)
