"""Base of the time-stepping constraint blocks: rows, kinematics handed to them, softening.

A :class:`TimeSteppingConstraintForce` is a System block (a :class:`~systems.LeafSystem`
whose numeric parameters hold its softening and model constants) that, for the state
``(q, v)`` at the start of a step of length ``h``, gives constraint *rows*
(:class:`ConstraintRows`): a Jacobian ``J`` (m x nv) so that the generalized constraint
impulse is ``J^T p``, and for each row

.. math::

    w = J v_{n+1} + b + \\frac{\\mathrm{cfm}}{h} p ,

with ``b`` the velocity bias (Baumgarte/ERP stabilization ``erp * phi / h`` of the
position error ``phi``) and the row's complementarity type:

* ``BILATERAL``: ``w = 0``, ``p`` free (loop closures, welds);
* ``UNILATERAL``: ``p >= 0, w >= 0, p w = 0`` (contact normals, joint limits);
* ``BOUNDED``: ``lo <= p <= hi`` with ``w`` of the opposite sign on a bound, ``w = 0``
  inside (joint Coulomb friction: ``|p| <= h F``);
* ``FRICTION_BOX``: bounded by ``mu`` times the impulse of the row ``normal`` (ODE's
  friction pyramid, one row per tangent direction);
* ``FRICTION_CONE``: one of the ``k`` directions of a polyhedral friction cone whose
  normal row is ``normal`` and coefficient ``mu`` (Stewart & Trinkle 1996; Anitescu &
  Potra 1997): ``beta >= 0`` with the maximum-dissipation rows added by the system.

ERP/CFM (ODE's error reduction parameter and constraint force mixing, force units)
soften any row. A row given as a spring-damper ``(kp, kd)`` uses ODE's mapping

.. math::

    \\mathrm{erp} = \\frac{h k_p}{h k_p + k_d}, \\qquad
    \\mathrm{cfm} = \\frac{1}{h k_p + k_d},

with which the row ``J v_{n+1} + erp phi / h + cfm f = 0`` (``f = p / h``) is exactly the
implicit spring-damper ``f = -k_p phi_{n+1} - k_d J v_{n+1}``, ``phi_{n+1} = phi + h J
v_{n+1}`` (R. Smith, *Open Dynamics Engine user guide*, section 3.8).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from systems import LeafSystem

__all__ = ["BILATERAL", "UNILATERAL", "BOUNDED", "FRICTION_BOX", "FRICTION_CONE",
           "ConstraintRows", "StepKinematics", "TimeSteppingConstraintForce",
           "softening_from_spring", "cross_rows"]

BILATERAL, UNILATERAL, BOUNDED, FRICTION_BOX, FRICTION_CONE = 0, 1, 2, 3, 4
"""Row kinds of :class:`ConstraintRows` (see the module docstring)."""


def cross_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cross product of (m, 3) arrays (much cheaper than ``np.cross`` for small m)."""
    out = np.empty_like(a)
    out[:, 0] = a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1]
    out[:, 1] = a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2]
    out[:, 2] = a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]
    return out


def softening_from_spring(kp: float, kd: float, h: float) -> tuple[float, float]:
    """``(erp, cfm)`` of the implicit spring-damper ``(kp, kd)`` for the step ``h``
    (ODE's mapping, module docstring). ``kp >= 0``, ``kd >= 0``, ``h kp + kd > 0``."""
    den = h * kp + kd
    if not den > 0:
        raise ValueError(f"spring-damper needs h*kp + kd > 0, got kp={kp}, kd={kd}, h={h}")
    return h * kp / den, 1.0 / den


@dataclass
class ConstraintRows:
    """Constraint rows of one block for one step (``m`` rows, ``nv`` velocities).

    Attributes
    ----------
    J : ndarray, shape (m, nv)
        Row Jacobians; the generalized impulse of the rows is ``J^T p``.
    bias : ndarray, shape (m,)
        Velocity bias ``b`` in ``w = J v_{n+1} + b + cfm/h p``.
    cfm : ndarray, shape (m,)
        Constraint force mixing (force units, ``>= 0``).
    kind : ndarray of int, shape (m,)
        Row kinds (``BILATERAL`` ... ``FRICTION_CONE``).
    lo, hi : ndarray, shape (m,)
        Impulse bounds of ``BOUNDED`` rows; ``-mu``/``mu`` of friction rows.
    normal : ndarray of int, shape (m,)
        For friction rows the index (within these rows) of their normal row, else -1.
    phi : ndarray, shape (m,)
        Position error (constraint value) at the start of the step, for reports.
    info : Any
        Block-specific data used to report results (e.g. contact geometry).
    """

    J: np.ndarray
    bias: np.ndarray
    cfm: np.ndarray
    kind: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    normal: np.ndarray
    phi: np.ndarray
    info: Any = None

    @property
    def m(self) -> int:
        """Number of rows."""
        return int(self.bias.shape[0])

    @classmethod
    def empty(cls, nv: int) -> "ConstraintRows":
        """No rows."""
        z = np.zeros(0)
        return cls(np.zeros((0, nv)), z, z, np.zeros(0, int), z, z, np.zeros(0, int), z)

    @classmethod
    def make(cls, J: np.ndarray, bias: np.ndarray, kind: Any, *, cfm: Any = 0.0,
             lo: Any = -np.inf, hi: Any = np.inf, normal: Any = -1, phi: Any = 0.0,
             info: Any = None) -> "ConstraintRows":
        """Rows with scalars broadcast to ``m``."""
        J = np.asarray(J, float)
        m = J.shape[0]

        def vec(x, dtype=float):
            if isinstance(x, np.ndarray) and x.shape == (m,):
                return x.astype(dtype, copy=True)
            out = np.empty(m, dtype)
            out[:] = x
            return out
        return cls(J, vec(bias), vec(cfm), vec(kind, int), vec(lo), vec(hi), vec(normal, int),
                   vec(phi), info)


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

    def point_velocity(self, body: int, x: np.ndarray) -> np.ndarray:
        """World velocity (3,) at ``v`` of the world point ``x`` moving with ``body``."""
        mv = self.mask[body] * self.v
        w, u = self.W @ mv, self.U @ mv
        return u + np.cross(w, x)  # single point


class TimeSteppingConstraintForce(LeafSystem):
    """Base class of the time-stepping constraint blocks (module docstring).

    Subclasses implement :meth:`calc_rows`; they may override :meth:`results` to turn the
    solved impulses into reports (contact results). Every block has the numeric parameters
    ``erp`` and ``cfm``, or, when built with a spring-damper, ``kp`` and ``kd`` (mapped to
    ``(erp, cfm)`` per step, module docstring).

    Parameters
    ----------
    tree : RigidBodyTree
    erp : float
        Error reduction parameter in [0, 1] (fraction of the position error removed per
        step).
    cfm : float
        Constraint force mixing (>= 0, force units).
    kp, kd : float, optional
        Spring-damper softening instead of ``(erp, cfm)`` (give both or neither).
    name : str, optional
    """

    def __init__(self, tree, *, erp: float = 0.2, cfm: float = 0.0, kp: Optional[float] = None,
                 kd: Optional[float] = None, name: Optional[str] = None) -> None:
        super().__init__(name)
        tree.finalize()
        self.tree = tree
        if (kp is None) != (kd is None):
            raise ValueError(f"constraint '{self.name}': give both kp and kd (spring-damper "
                             f"softening) or neither, got kp={kp}, kd={kd}")
        self.spring = kp is not None
        if self.spring:
            if not (kp >= 0 and kd >= 0 and kp + kd > 0):
                raise ValueError(f"constraint '{self.name}': kp and kd must be >= 0 and not both "
                                 f"zero, got kp={kp}, kd={kd}")
            self.declare_numeric_parameter("kp", kp)
            self.declare_numeric_parameter("kd", kd)
        else:
            if not 0.0 <= erp <= 1.0:
                raise ValueError(f"constraint '{self.name}': erp must be in [0, 1], got {erp}")
            if not cfm >= 0.0:
                raise ValueError(f"constraint '{self.name}': cfm must be >= 0, got {cfm}")
            self.declare_numeric_parameter("erp", erp)
            self.declare_numeric_parameter("cfm", cfm)

    def softening(self, context, h: float) -> tuple[float, float]:
        """``(erp, cfm)`` for the step ``h`` from the parameters in ``context``."""
        if self.spring:
            return softening_from_spring(float(context.get_parameter("kp")[0]),
                                         float(context.get_parameter("kd")[0]), h)
        return float(context.get_parameter("erp")[0]), float(context.get_parameter("cfm")[0])

    def calc_rows(self, context, kin: StepKinematics) -> ConstraintRows:
        """Override: the rows of this block at the start of the step (``kin``)."""
        raise NotImplementedError(f"constraint '{self.name}' must implement calc_rows")

    def results(self, rows: ConstraintRows, impulses: np.ndarray, v_next: np.ndarray,
                kin: StepKinematics) -> list:
        """Reports of the solved rows (default none); contact blocks return
        :class:`~multibody.constraints.PointContactResult` objects."""
        return []

    def is_bilateral(self) -> bool:
        """True for blocks whose rows are all bilateral position constraints (these are
        projected back onto the constraint manifold after the step when the system's
        ``project_positions`` is on)."""
        return False
