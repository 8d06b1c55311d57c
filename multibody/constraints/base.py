"""Base of the constraint-force blocks: one vocabulary for both rigid-body plants.

A :class:`ConstraintForce` is a System block (a :class:`~systems.LeafSystem` whose numeric
parameters hold its softening and model constants) that gives each plant what it solves
for, from one definition of its position error ``phi(q)`` and Jacobian ``J(q)``:

* for :class:`~multibody.plants.TimeSteppingRigidBodySystem`, *velocity-level rows*
  (:class:`ConstraintRows`, :meth:`ConstraintForce.calc_rows`) for the state ``(q, v)`` at
  the start of a step of length ``h``;
* for :class:`~multibody.plants.RigidBodySystem`, *acceleration-level rows*
  ``J vdot + b`` (:meth:`ConstraintForce.equality_terms` for bilateral kinds, written so
  that they evaluate on CasADi symbols; the site interface of the unilateral kinds, contact
  and joint limits, for the acceleration-level complementarity problem).

Velocity level (time stepping)
------------------------------
Each row is

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

MuJoCo's soft constraints (``solref``/``solimp``, :class:`MuJoCoSoftening` given as
``mujoco=``) set each row's ``cfm`` and ``bias`` from its violation, its velocity and its
Delassus diagonal at every step (:mod:`multibody.constraints.mujoco_softening`); joint limits
and contact normals support it.

Acceleration level (continuous time)
------------------------------------
A position-level constraint ``phi(q) = 0`` with ``dphi/dt = J v`` gives the row

.. math::

    J \\dot v + \\dot J v + 2 \\zeta \\omega\\, J v + \\omega^2 \\phi = 0 ,

so a violation obeys ``phi'' + 2 zeta omega phi' + omega^2 phi = 0`` (Baumgarte 1972).
The default is critically damped (``zeta = 1``) with time constant ``1/omega = 0.1 s``;
``time_constant=None`` turns it off and explicit gains ``(alpha, beta)`` give ``b = Jdot v
+ alpha J v + beta phi``. Unilateral rows ``a >= 0, f >= 0, a f = 0`` with friction bounded
by ``mu f`` follow Baraff (1994).

References
----------
J. Baumgarte, "Stabilization of constraints and integrals of motion in dynamical
systems", Computer Methods in Applied Mechanics and Engineering 1 (1972) 1-16.
D. Baraff, "Fast contact force computation for nonpenetrating rigid bodies", SIGGRAPH 1994.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence, Tuple

import numpy as np

from systems import LeafSystem

from .mujoco_softening import MuJoCoSoftening, check_solimp, check_solref, soft_rows

__all__ = ["BILATERAL", "UNILATERAL", "BOUNDED", "FRICTION_BOX", "FRICTION_CONE",
           "EQUALITY", "COMPLEMENTARITY", "ConstraintRows", "ConstraintForce",
           "softening_from_spring", "baumgarte_gains"]

BILATERAL, UNILATERAL, BOUNDED, FRICTION_BOX, FRICTION_CONE = 0, 1, 2, 3, 4
"""Row kinds of :class:`ConstraintRows` (see the module docstring)."""

EQUALITY, COMPLEMENTARITY = 0, 1
"""Kinds of acceleration-level rows: bilateral ``a = 0`` and unilateral ``0 <= a _|_ f >= 0``."""


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


def baumgarte_gains(time_constant: Optional[float] = 0.1, damping_ratio: float = 1.0,
                    gains: Optional[Sequence[float]] = None) -> Tuple[float, float]:
    """Baumgarte gains ``(alpha, beta)`` with ``b = Jdot v + alpha J v + beta phi``.

    Parameters
    ----------
    time_constant : float or None
        ``1/omega`` (s); ``None`` disables stabilization (``(0, 0)``).
    damping_ratio : float
        ``zeta`` (1: critically damped): ``alpha = 2 zeta omega``, ``beta = omega^2``.
    gains : (alpha, beta), optional
        Explicit gains (override the two above).
    """
    if gains is not None:
        a, b = (float(g) for g in gains)
        if not (np.isfinite(a) and np.isfinite(b) and a >= 0 and b >= 0):
            raise ValueError(f"Baumgarte gains must be finite and >= 0, got {gains}")
        return a, b
    if time_constant is None:
        return 0.0, 0.0
    tc = float(time_constant)
    if not (np.isfinite(tc) and tc > 0):
        raise ValueError(f"Baumgarte time constant must be finite and > 0 (or None), got {time_constant}")
    w = 1.0 / tc
    return 2.0 * float(damping_ratio) * w, w * w


class ConstraintForce(LeafSystem):
    """Base class of the constraint-force blocks (module docstring), usable in both plants.

    Subclasses give the time-stepping rows (:meth:`calc_rows`, optionally :meth:`results`)
    and the continuous-time terms: bilateral kinds (``unilateral = False``) implement
    :meth:`position_terms` (or :meth:`kinematic_terms`) and :meth:`row_names`; unilateral
    kinds (``unilateral = True``: contact, joint limits) the site interface
    (``num_sites``, ``site_names``, ``gap``, ``site_points``) that the continuous plant's
    complementarity solve uses. A kind without an acceleration-level form sets
    ``continuous = False`` (the continuous plant refuses it, naming it).

    Parameters
    ----------
    tree : RigidBodyTree
    erp : float
        Time stepping: error reduction parameter in [0, 1] (fraction of the position error
        removed per step).
    cfm : float
        Time stepping: constraint force mixing (>= 0, force units).
    kp, kd : float, optional
        Time stepping: spring-damper softening instead of ``(erp, cfm)`` (give both or
        neither).
    mujoco : MuJoCoSoftening, optional
        Time stepping: MuJoCo's soft constraints instead of ERP (blocks that support it:
        joint limits, contact normals; ``cfm`` still softens their other rows). Its block
        ``solref`` and ``solimp`` become the parameters ``"solref"`` (2,) and ``"solimp"`` (5,).
    time_constant, damping_ratio, gains
        Continuous time: Baumgarte stabilization (:func:`baumgarte_gains`);
        ``time_constant=None`` disables it.
    name : str, optional
    """

    unilateral: bool = False
    continuous: bool = True
    time_stepping: bool = True
    supports_mujoco: bool = False

    def __init__(self, tree, *, erp: float = 0.2, cfm: float = 0.0, kp: Optional[float] = None,
                 kd: Optional[float] = None, time_constant: Optional[float] = 0.1,
                 damping_ratio: float = 1.0, gains: Optional[Sequence[float]] = None,
                 mujoco: Optional[MuJoCoSoftening] = None, name: Optional[str] = None) -> None:
        super().__init__(name)
        tree.finalize()
        self.tree = tree
        if mujoco is not None:
            if not isinstance(mujoco, MuJoCoSoftening):
                raise TypeError(f"constraint '{self.name}': mujoco must be a MuJoCoSoftening, "
                                f"got {type(mujoco).__name__}")
            if not self.supports_mujoco:
                raise ValueError(f"constraint '{self.name}' ({type(self).__name__}) has no "
                                 "MuJoCo softening (joint limits and contacts have)")
            if kp is not None or kd is not None:
                raise ValueError(f"constraint '{self.name}': give MuJoCo softening or a "
                                 "spring-damper (kp, kd), not both")
            self.declare_numeric_parameter("solref", np.asarray(mujoco.solref, float))
            self.declare_numeric_parameter("solimp", np.asarray(mujoco.solimp, float))
        self.mujoco = mujoco
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
        try:
            self.alpha, self.beta = baumgarte_gains(time_constant, damping_ratio, gains)
        except ValueError as exc:
            raise ValueError(f"constraint '{self.name}': {exc}") from None

    # ------------------------------------------------------------------ time stepping
    def softening(self, context, h: float) -> Tuple[float, float]:
        """``(erp, cfm)`` for the step ``h`` from the parameters in ``context``."""
        if self.spring:
            return softening_from_spring(float(context.get_parameter("kp")[0]),
                                         float(context.get_parameter("kd")[0]), h)
        return float(context.get_parameter("erp")[0]), float(context.get_parameter("cfm")[0])

    def mujoco_rows(self, context, kin, r, vel, diag, names=None, pairs=None):
        """``(cfm, bias)`` (m,) of MuJoCo-softened rows (:func:`soft_rows`): violations
        ``r``, velocities ``vel``, ``Ahat`` ``diag``; ``solref``/``solimp`` per row from the
        elements ``names`` (joints) or geometry ``pairs``, else the block's parameters."""
        mj = self.mujoco
        what = f"constraint '{self.name}'"
        ref = check_solref(context.get_parameter("solref"), what)
        imp = check_solimp(context.get_parameter("solimp"), what)
        if pairs is not None:
            ref, imp = mj.pair_values(pairs, ref, imp)
        elif names is not None:
            ref, imp = mj.element_values(names, ref, imp)
        return soft_rows(r, vel, diag, ref, imp, kin.h, mj.refsafe)

    @staticmethod
    def delassus_diagonal(kin, J: np.ndarray) -> np.ndarray:
        """``diag(J M^{-1} J^T)`` (m,) with ``M`` the tree's mass matrix at the step's ``q``
        (armature included; MuJoCo's ``A``, without the plant's implicit damping term),
        computed once per step and shared by the blocks (``kin.cache``)."""
        Minv = kin.cache.get("mass_matrix_inverse")
        if Minv is None:
            M = np.asarray(kin.tree.mass_matrix(kin.q), float)
            Minv = kin.cache["mass_matrix_inverse"] = np.linalg.inv(M)
        return np.einsum("ij,jk,ik->i", J, Minv, J)

    def calc_rows(self, context, kin) -> ConstraintRows:
        """Override: the rows of this block at the start of the step (``kin``, a
        :class:`~multibody.constraints.kinematics.StepKinematics`)."""
        raise NotImplementedError(f"constraint '{self.name}' must implement calc_rows")

    def results(self, rows: ConstraintRows, impulses: np.ndarray, v_next: np.ndarray,
                kin) -> list:
        """Reports of the solved rows (default none); contact blocks return
        :class:`~multibody.constraints.PointContactResult` objects."""
        return []

    def is_bilateral(self) -> bool:
        """True for blocks whose rows are all bilateral position constraints (these are
        projected back onto the constraint manifold after a time step when the system's
        ``project_positions`` is on)."""
        return False

    # ------------------------------------------------------------------ continuous time
    @property
    def num_rows(self) -> int:
        """Number of equality rows ``m`` (bilateral kinds)."""
        return len(self.row_names())

    def row_names(self) -> list:
        """Names of the rows (``"<block>[<component>]"``), for reports and warnings."""
        raise NotImplementedError(f"constraint '{self.name}' must implement row_names")

    def position_error(self, q: Any):
        """``phi(q)`` (m,), numbers or CasADi."""
        return self.kinematic_terms(q, None)[0]

    def kinematic_terms(self, q: Any, v: Any):
        """``(phi, J, Jdot_v)``: position error (m,), Jacobian (m x nv) and ``Jdot v`` (m,),
        numbers or CasADi (``v=None``: ``Jdot v`` not computed)."""
        raise NotImplementedError(f"constraint '{self.name}' must implement kinematic_terms")

    def equality_terms(self, q: Any, v: Any):
        """``(J, b)`` of the rows ``J vdot + b = 0``, ``b = Jdot v + alpha J v + beta phi``
        (module docstring). Works on numbers and CasADi symbols."""
        phi, J, jdv = self.kinematic_terms(q, v)
        b = jdv
        if self.alpha:
            b = b + self.alpha * (J @ v)
        if self.beta:
            b = b + self.beta * phi
        return J, b

    def residual(self, q: Any, v: Any, vdot: Any, f: Any = None):
        """``phi(vdot, f)`` with the kinematics fixed at ``(q, v)``: the row values
        ``J vdot + b`` (zero for a consistent equality solution; ``f`` is not used by
        equality rows and accepted for the common signature)."""
        J, b = self.equality_terms(q, v)
        return J @ vdot + b

    def kinds(self) -> np.ndarray:
        """Acceleration-level row kinds (``EQUALITY`` for every row of a bilateral block)."""
        return np.full(self.num_rows, EQUALITY, dtype=int)
