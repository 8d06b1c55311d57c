"""Base of the continuous-time (acceleration-level) constraint blocks.

A :class:`ContinuousTimeConstraintForce` contributes rows to the acceleration-level
problem that :class:`~multibody.plants.RigidBodySystem` solves at every
evaluation of its time derivatives:

.. math::

    H(q)\\,\\dot v + C(q, v) = \\tau_{act} + J(q)^T f ,\\qquad
    a = J(q)\\,\\dot v + b(q, v) ,

where every row of ``a`` is either

* ``EQUALITY`` (bilateral): ``a = 0`` with ``f`` free (loop closures, welds), or
* ``COMPLEMENTARITY`` (unilateral): ``a >= 0, f >= 0, a f = 0`` (contact normals, joint
  limits), possibly with friction rows bounded by ``mu f`` (Baraff 1994).

Baumgarte stabilization
-----------------------
For a position-level constraint ``phi(q) = 0`` with ``dphi/dt = J v`` the row is

.. math::

    J \\dot v + \\dot J v + 2 \\zeta \\omega\\, J v + \\omega^2 \\phi = 0 ,

so a violation obeys ``phi'' + 2 zeta omega phi' + omega^2 phi = 0`` (Baumgarte 1972).
The default is critically damped (``zeta = 1``) with time constant ``tau = 1/omega =
0.1 s``; ``baumgarte=None`` (or ``time_constant=None``) turns it off, and explicit gains
``(alpha, beta)`` give ``b = Jdot v + alpha J v + beta phi``.

Equality blocks implement :meth:`ContinuousTimeConstraintForce.equality_terms` with
:mod:`solvers.ops`-style operations, so that they evaluate on CasADi ``SX`` as well as on
numbers (``phi(vdot, f)`` with the kinematics fixed is :meth:`residual`).

References
----------
J. Baumgarte, "Stabilization of constraints and integrals of motion in dynamical
systems", Computer Methods in Applied Mechanics and Engineering 1 (1972) 1-16.
D. Baraff, "Fast contact force computation for nonpenetrating rigid bodies",
SIGGRAPH 1994.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

import numpy as np

from systems import LeafSystem

__all__ = ["EQUALITY", "COMPLEMENTARITY", "ContinuousTimeConstraintForce", "baumgarte_gains"]

EQUALITY, COMPLEMENTARITY = 0, 1
"""Row kinds: bilateral ``a = 0`` and unilateral ``0 <= a  _|_  f >= 0``."""


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


class ContinuousTimeConstraintForce(LeafSystem):
    """A constraint force block for :class:`~multibody.plants.RigidBodySystem`.

    Subclasses are either equality blocks (``unilateral = False``; implement
    :meth:`equality_terms` and :meth:`row_names`) or unilateral blocks
    (``unilateral = True``; see :class:`~multibody.continuous_constraints.contact.PointContact`
    and :class:`~multibody.continuous_constraints.joint_limit.JointLimit` for their
    interface: sites with a gap, acceleration rows, impact rows and witness functions).

    Parameters
    ----------
    tree : RigidBodyTree
    time_constant, damping_ratio, gains
        Baumgarte stabilization (:func:`baumgarte_gains`); ``time_constant=None`` disables it.
    name : str, optional
    """

    unilateral: bool = False

    def __init__(self, tree, *, time_constant: Optional[float] = 0.1, damping_ratio: float = 1.0,
                 gains: Optional[Sequence[float]] = None, name: Optional[str] = None) -> None:
        super().__init__(name)
        tree.finalize()
        self.tree = tree
        self.alpha, self.beta = baumgarte_gains(time_constant, damping_ratio, gains)

    # ------------------------------------------------------------------ equality interface
    @property
    def num_rows(self) -> int:
        """Number of equality rows ``m``."""
        return len(self.row_names())

    def row_names(self) -> list:
        """Names of the rows (``"<block>[<component>]"``), for reports and warnings."""
        raise NotImplementedError(f"constraint '{self.name}' must implement row_names")

    def position_error(self, q: Any):
        """``phi(q)`` (m,), numbers or CasADi."""
        raise NotImplementedError(f"constraint '{self.name}' must implement position_error")

    def kinematic_terms(self, q: Any, v: Any):
        """``(phi, J, Jdot_v)``: position error (m,), Jacobian (m x nv) and ``Jdot v`` (m,),
        numbers or CasADi (``q``, ``v`` of the same kind)."""
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
        """Row kinds (``EQUALITY`` for every row of an equality block)."""
        return np.full(self.num_rows, EQUALITY, dtype=int)
