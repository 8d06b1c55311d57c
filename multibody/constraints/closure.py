"""Bilateral constraints between two frames: ball, weld, distance and point-on-line.

Frames are bodies or frames of the tree (``tree.get_frame``, the world and frames on it
included); loop closures of a mechanism modelled as a spanning tree are written with them (a
four-bar: a tree of three links plus a :class:`BallConstraint` closing the loop).

Each kind is defined once, by its position error ``phi`` and Jacobian ``J`` written against
the frame interface of :mod:`multibody.constraints.kinematics` (``R``, ``p``: world rotation
and origin of a frame; ``Jw``, ``Jv``: rows of its world angular velocity and origin
velocity):

* ball: ``phi = E (p_B - p_A)`` (``E`` the constrained world directions, default all three),
  ``J = E (Jv_B - Jv_A)``;
* weld: ``phi = [vee((E - E^T) / 2); p_B - p_A]`` with ``E = R_B R_A^T`` (``sin(theta)``
  times the axis of the rotation error, then the ball rows) and its exact derivative
  ``J = [((tr E) I - E) Jw_B / 2 - ((tr E) I - E^T) Jw_A / 2; Jv_B - Jv_A]`` (from
  ``vee([a] E + E^T [a]) = ((tr E) I - E) a``; ``Jw_B - Jw_A`` at ``E = I``);
* distance: ``phi = |p_B - p_A| - d``, ``J = u^T (Jv_B - Jv_A)``, ``u`` the unit vector
  from A to B;
* point-on-line: the origin of B stays on the line through A's origin along ``axis``
  (fixed in A): ``phi = P^T r`` with ``r = p_B - p_A`` and ``P`` (3 x 2) two world directions
  normal to the line, ``J = P^T (Jv_B - Jv_A + [r]_x Jw_A)`` (the line turns with A).

The time-stepping plant uses ``(phi, J)`` at the start of a step as ``BILATERAL`` rows with
bias ``erp phi / h`` (or a spring-damper through ``kp``, ``kd``) and post-stabilizes these
blocks' positions (``project_positions``). The continuous plant uses ``J vdot + Jdot v +
alpha J v + beta phi = 0`` with ``Jdot v`` differentiated from the same ``J`` on CasADi
symbols, so a closed-chain mechanism converts to CasADi and linearizes.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import casadi as ca
import numpy as np

from solvers import ops
from .base import BILATERAL, ConstraintForce, ConstraintRows
from .kinematics import TreeKinematics, jacobian_dot_times_v

__all__ = ["BallConstraint", "WeldConstraint", "DistanceConstraint", "PointOnLineConstraint"]


def _vee_skew(R: Any):
    """``vee((R - R^T) / 2)``: the rotation vector of R to first order."""
    return 0.5 * ops.vertcat(R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1])


def _stack(parts, symbolic: bool):
    if symbolic:
        return ca.vertcat(*[ca.SX(p) for p in parts])
    return np.vstack([np.atleast_2d(p) for p in parts])


class _TwoFrameConstraint(ConstraintForce):
    """Common part: the two frames, both plants' row construction from
    :meth:`position_terms`."""

    kind_name = "frame"

    def __init__(self, tree, frame_a: str, frame_b: str, **softening) -> None:
        super().__init__(tree, **softening)
        ends = []
        for role, fname in (("frame_a", frame_a), ("frame_b", frame_b)):
            try:
                f = tree.get_frame(fname)
            except (KeyError, ValueError, TypeError):
                raise ValueError(f"{self.kind_name} constraint '{self.name}': {role} {fname!r} is "
                                 f"not a body or frame of tree '{tree.name}'") from None
            ends.append((tree.get_body(f.body).index, np.array(f.pose, float), f.body))
        if ends[0][0] == ends[1][0]:
            raise ValueError(f"{self.kind_name} constraint '{self.name}': frames '{frame_a}' and "
                             f"'{frame_b}' are on the same body '{ends[0][2]}'")
        self.frame_a, self.frame_b = frame_a, frame_b
        self._ends = [(i, X) for i, X, _ in ends]
        self._fun = None

    def is_bilateral(self) -> bool:
        return True

    def position_terms(self, kin, context=None):
        """Override: ``(phi, J)`` from the frame interface ``kin`` (module docstring)."""
        raise NotImplementedError

    def _frames(self, kin):
        (ia, Xa), (ib, Xb) = self._ends
        return kin.frame(ia, Xa), kin.frame(ib, Xb)

    # time stepping ---------------------------------------------------------------
    def calc_rows(self, context, kin) -> ConstraintRows:
        """Rows ``J`` with bias ``erp phi / h`` at the start of the step (module docstring)."""
        phi, J = self.position_terms(kin, context)
        erp, cfm = self.softening(context, kin.h)
        phi = np.asarray(phi, float).ravel()
        return ConstraintRows.make(np.asarray(J, float).reshape(phi.shape[0], -1),
                                   erp * phi / kin.h, BILATERAL, cfm=cfm, phi=phi)

    # continuous time -------------------------------------------------------------
    def kinematic_terms(self, q: Any, v: Any):
        """``(phi, J, Jdot v)`` from the one definition (:meth:`position_terms` on the tree's
        methods; ``Jdot v`` by differentiating ``J v`` along ``qdot = N(q) v``). Numbers in,
        numbers out (through a CasADi function built once); symbols in, expressions out."""
        if ops.is_symbolic(q) or (v is not None and ops.is_symbolic(v)):
            q = ca.SX(q) if not isinstance(q, ca.SX) else q
            phi, J = self.position_terms(TreeKinematics(self.tree, q))
            if v is None:
                return ca.SX(phi), ca.SX(J), None
            if not (isinstance(q, ca.SX) and q.is_valid_input()):
                # an expression of other symbols: go through the function of plain symbols
                return tuple(self._function()(q, v))
            v = ca.SX(v) if not isinstance(v, ca.SX) else v
            jdv = jacobian_dot_times_v(J, q, v, self.tree.qdot(q, v))
            return ca.SX(phi), ca.SX(J), jdv
        out = self._function()(np.asarray(q, float),
                               np.zeros(self.tree.nv) if v is None else np.asarray(v, float))
        phi, J, jdv = (np.asarray(o, float) for o in out)
        m = phi.size
        return phi.ravel(), J.reshape(m, self.tree.nv), (None if v is None else jdv.ravel())

    def _function(self) -> ca.Function:
        """``(q, v) -> (phi, J, Jdot v)`` as one CasADi function (built on first use; a
        property of the model, not of a run)."""
        if self._fun is None:
            q = ca.SX.sym("q", self.tree.nq)
            v = ca.SX.sym("v", self.tree.nv)
            phi, J, jdv = self.kinematic_terms(q, v)
            self._fun = ca.Function(ops.function_name(self.name, "terms"), [q, v], [phi, J, jdv])
        return self._fun


class BallConstraint(_TwoFrameConstraint):
    """The origins of ``frame_a`` and ``frame_b`` coincide (along ``axes``).

    Parameters
    ----------
    tree : RigidBodyTree
    frame_a, frame_b : str
        Body or frame names (on different bodies).
    axes : array_like, shape (k, 3), optional
        World directions constrained (default x, y and z). A planar loop uses its two
        in-plane directions, which avoids a redundant out-of-plane row.
    erp, cfm, kp, kd, time_constant, damping_ratio, gains, name
        Softening for each plant (:class:`~multibody.constraints.ConstraintForce`).

    Raises
    ------
    ValueError
        An unknown frame, both frames on one body, or ``axes`` not of shape (k, 3).
    """

    kind_name = "ball"

    def __init__(self, tree, frame_a: str, frame_b: str, *, axes: Optional[Sequence] = None,
                 **softening) -> None:
        super().__init__(tree, frame_a, frame_b, **softening)
        E = np.eye(3) if axes is None else np.atleast_2d(np.asarray(axes, dtype=float))
        if E.ndim != 2 or E.shape[1] != 3 or E.shape[0] < 1 or not np.all(np.isfinite(E)):
            raise ValueError(f"ball constraint '{self.name}': axes must have shape (k, 3), got "
                             f"{np.shape(axes)}")
        self.axes = E
        self._all_axes = axes is None

    def row_names(self) -> list:
        labels = "xyz" if self._all_axes else [str(i) for i in range(self.axes.shape[0])]
        return [f"{self.name}[{c}]" for c in labels]

    def position_terms(self, kin, context=None):
        """``phi = E (p_B - p_A)``, ``J = E (Jv_B - Jv_A)``."""
        (_, pa, _, Jva), (_, pb, _, Jvb) = self._frames(kin)
        if self._all_axes:
            return pb - pa, Jvb - Jva
        return self.axes @ (pb - pa), self.axes @ (Jvb - Jva)


class WeldConstraint(_TwoFrameConstraint):
    """``frame_b`` coincides with ``frame_a`` in orientation and position (6 rows: rotation
    then translation, world axes; module docstring). Parameters as :class:`BallConstraint`
    (without ``axes``)."""

    kind_name = "weld"

    def row_names(self) -> list:
        return [f"{self.name}[{c}]" for c in ("rx", "ry", "rz", "x", "y", "z")]

    def position_terms(self, kin, context=None):
        """Rotation rows ``vee(skew(E))``, ``E = R_B R_A^T``, with their exact Jacobian, then
        the ball rows (module docstring)."""
        (Ra, pa, Jwa, Jva), (Rb, pb, Jwb, Jvb) = self._frames(kin)
        E = Rb @ Ra.T
        phi = ops.vertcat(_vee_skew(E), pb - pa)
        if ops.is_symbolic(phi):
            tr = E[0, 0] + E[1, 1] + E[2, 2]
            I3 = ca.SX.eye(3)
            Jr = 0.5 * ((tr * I3 - E) @ Jwb - (tr * I3 - E.T) @ Jwa)
            return phi, _stack([Jr, Jvb - Jva], True)
        tr = float(np.trace(E))
        Jr = 0.5 * ((tr * np.eye(3) - E) @ Jwb - (tr * np.eye(3) - E.T) @ Jwa)
        return np.asarray(phi, float).ravel(), np.vstack([Jr, Jvb - Jva])


class DistanceConstraint(_TwoFrameConstraint):
    """The origins of ``frame_a`` and ``frame_b`` stay ``distance`` apart (1 row).

    Raises ValueError for a non-positive distance (use :class:`BallConstraint` for 0).
    """

    kind_name = "distance"

    def __init__(self, tree, frame_a: str, frame_b: str, distance: float, **softening) -> None:
        super().__init__(tree, frame_a, frame_b, **softening)
        if not (np.isfinite(distance) and distance > 0):
            raise ValueError(f"distance constraint '{self.name}': distance must be finite and > 0, "
                             f"got {distance}")
        self.declare_numeric_parameter("distance", distance)
        self.distance = float(distance)

    def row_names(self) -> list:
        return [f"{self.name}[d]"]

    def position_terms(self, kin, context=None):
        """``phi = |r| - d``, ``J = u^T (Jv_B - Jv_A)`` with ``r = p_B - p_A``, ``u = r/|r|``
        (``d`` from ``context``'s parameter when given, else the constructed value)."""
        (_, pa, _, Jva), (_, pb, _, Jvb) = self._frames(kin)
        d = self.distance if context is None else float(context.get_parameter("distance")[0])
        r = pb - pa
        if ops.is_symbolic(r):
            n = ops.norm_2(r)
            return ops.vector(n - d), ops.transpose(r / n) @ (Jvb - Jva)
        n = float(np.linalg.norm(r))
        u = r / n if n > 1e-12 else np.array([0.0, 0.0, 1.0])
        return np.array([n - d]), (u @ (Jvb - Jva))[None, :]


class PointOnLineConstraint(_TwoFrameConstraint):
    """The origin of ``frame_b`` stays on the line through the origin of ``frame_a`` along
    ``axis`` (a unit vector in ``frame_a``; 2 rows: a prismatic-like closure, module
    docstring).

    Raises ValueError for a zero or non-finite ``axis``.
    """

    kind_name = "point-on-line"

    def __init__(self, tree, frame_a: str, frame_b: str, axis: Sequence = (0.0, 0.0, 1.0),
                 **softening) -> None:
        super().__init__(tree, frame_a, frame_b, **softening)
        a = np.asarray(axis, float).ravel()
        if a.shape != (3,) or not np.all(np.isfinite(a)) or np.linalg.norm(a) < 1e-12:
            raise ValueError(f"point-on-line constraint '{self.name}': axis must be a finite "
                             f"nonzero 3-vector, got {axis!r}")
        a = a / np.linalg.norm(a)
        e = np.eye(3)[int(np.argmin(np.abs(a)))]
        n1 = np.cross(a, e)
        n1 /= np.linalg.norm(n1)
        self.axis = a
        self._normals_A = np.stack([n1, np.cross(a, n1)], axis=1)   # (3, 2) in frame_a

    def row_names(self) -> list:
        return [f"{self.name}[n1]", f"{self.name}[n2]"]

    def position_terms(self, kin, context=None):
        """``phi = P^T r``, ``J = P^T (Jv_B - Jv_A + [r]_x Jw_A)``, ``P = R_A P_A``."""
        (Ra, pa, Jwa, Jva), (_, pb, _, Jvb) = self._frames(kin)
        r = pb - pa
        P = Ra @ self._normals_A
        if ops.is_symbolic(r):
            rx = ca.skew(ca.SX(r))
            return ops.transpose(P) @ r, ops.transpose(P) @ (Jvb - Jva + rx @ Jwa)
        rx = np.array([[0.0, -r[2], r[1]], [r[2], 0.0, -r[0]], [-r[1], r[0], 0.0]])
        return P.T @ r, P.T @ (Jvb - Jva + rx @ Jwa)
