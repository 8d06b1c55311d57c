"""Joint Coulomb friction as bounded time-stepping rows.

One row per velocity coordinate ``v_i`` of the selected joints: ``J = e_i``, no bias, and
the impulse bounded by the friction force over the step, ``|p_i| <= h F_i``. The row asks
for ``v_i(t + h) = 0`` (sticking) and the bound makes the joint slip with the friction
force ``-F_i sign(v_i)`` when more is needed: exact Coulomb friction at the velocity level
(ODE's "friction motor", a joint motor with zero target speed and maximum force ``F``).
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from .base import BOUNDED, ConstraintForce, ConstraintRows
from .kinematics import StepKinematics

__all__ = ["JointFrictionConstraint"]


class JointFrictionConstraint(ConstraintForce):
    """Coulomb friction ``F`` (N or N m) on joint velocity coordinates (time stepping only:
    exact Coulomb friction needs the velocity-level bounds; a continuous-time model uses a
    smoothed friction force on the joint instead).

    Parameters
    ----------
    tree : RigidBodyTree
    joints : sequence of str, optional
        Default: every joint whose ``friction`` attribute is positive.
    friction : float or array_like, optional
        Per velocity coordinate of the listed joints (scalar broadcasts); default the
        joints' own ``friction``. Parameter ``friction``.
    cfm, name
        See :class:`~multibody.constraints.ConstraintForce` (ERP is unused).

    Raises
    ------
    ValueError
        Unknown joints, a negative friction or one whose size does not match.
    """

    continuous = False

    def __init__(self, tree, joints: Optional[Sequence[str]] = None, friction=None, *,
                 cfm: float = 0.0, name: Optional[str] = None) -> None:
        super().__init__(tree, erp=0.0, cfm=cfm, name=name)
        nm = f"joint friction constraint '{self.name}'"
        if joints is None:
            chosen = [j for j in tree.joints if j.nv and np.any(np.asarray(j.friction) > 0)]
        else:
            chosen = []
            for jn in ([joints] if isinstance(joints, str) else joints):
                try:
                    chosen.append(tree.get_joint(jn))
                except ValueError as exc:
                    raise ValueError(f"{nm}: {exc}") from None
        vi, own = [], []
        for j in chosen:
            vi.extend(range(j.v_start, j.v_start + j.nv))
            own.extend(np.broadcast_to(np.asarray(j.friction, float), (j.nv,)))
        self.joints = [j.name for j in chosen]
        self._vi = np.array(vi, int)
        F = np.array(own, float) if friction is None else np.atleast_1d(np.asarray(friction, float))
        if F.shape[0] == 1 and self._vi.shape[0] != 1:
            F = np.full(self._vi.shape[0], F[0])
        if F.shape[0] != self._vi.shape[0]:
            raise ValueError(f"{nm}: friction has size {F.shape[0]} but the joints have "
                             f"{self._vi.shape[0]} velocity coordinates")
        if np.any(F < 0) or not np.all(np.isfinite(F)):
            raise ValueError(f"{nm}: friction must be finite and >= 0, got {F}")
        self.declare_numeric_parameter("friction", F if F.size else np.zeros(1))

    def calc_rows(self, context, kin: StepKinematics) -> ConstraintRows:
        """One bounded row per coordinate with ``|p| <= h F``."""
        nv, h = kin.v.shape[0], kin.h
        m = self._vi.shape[0]
        if m == 0:
            return ConstraintRows.empty(nv)
        F = np.asarray(context.get_parameter("friction"), float)[:m]
        J = np.zeros((m, nv))
        J[np.arange(m), self._vi] = 1.0
        _, cfm = self.softening(context, h)
        return ConstraintRows.make(J, 0.0, BOUNDED, cfm=cfm, lo=-h * F, hi=h * F)
