"""Joint position limits as unilateral time-stepping rows.

For each limited coordinate ``q_i`` (joints whose ``nq == nv``: revolute, prismatic, screw,
universal, euler, planar, translational) with lower limit ``l`` and upper limit ``u``:

* lower row ``phi = q_i - l >= 0`` with ``J = e_i``,
* upper row ``phi = u - q_i >= 0`` with ``J = -e_i``,

included when the limit may be reached within the step (``phi <= margin + h |v_i|``).
The bias is ``phi / h`` before contact (the joint may reach its limit exactly) and
``erp * phi / h`` on a violation, as for contacts (:mod:`multibody.constraints.contact`).
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from .base import UNILATERAL, ConstraintRows, StepKinematics, TimeSteppingConstraintForce

__all__ = ["JointLimitConstraint"]


class JointLimitConstraint(TimeSteppingConstraintForce):
    """Unilateral rows keeping joints within their ``lower``/``upper`` limits.

    Parameters
    ----------
    tree : RigidBodyTree
    joints : sequence of str, optional
        Joint names (default: every joint with ``nq == nv`` and a finite limit).
    margin : float
        Rows are included within ``margin + h |v_i|`` of a limit (default 1e-3, in the
        joint's units).
    erp, cfm, kp, kd, name
        See :class:`~multibody.constraints.base.TimeSteppingConstraintForce`.

    Raises
    ------
    ValueError
        An unknown joint, a quaternion joint (ball, free), or a listed joint without any
        finite limit.
    """

    def __init__(self, tree, joints: Optional[Sequence[str]] = None, *, margin: float = 1e-3,
                 erp: float = 0.2, cfm: float = 0.0, kp: Optional[float] = None,
                 kd: Optional[float] = None, name: Optional[str] = None) -> None:
        super().__init__(tree, erp=erp, cfm=cfm, kp=kp, kd=kd, name=name)
        nm = f"joint limit constraint '{self.name}'"
        if joints is None:
            chosen = [j for j in tree.joints if j.nq == j.nv and j.nv > 0 and
                      (np.any(np.isfinite(j.lower)) or np.any(np.isfinite(j.upper)))]
        else:
            chosen = []
            for jn in ([joints] if isinstance(joints, str) else joints):
                try:
                    j = tree.get_joint(jn)
                except ValueError as exc:
                    raise ValueError(f"{nm}: {exc}") from None
                if j.nq != j.nv:
                    raise ValueError(f"{nm}: joint '{jn}' ({j.type}) has quaternion coordinates; "
                                     "position limits apply to joints with nq == nv")
                if not (np.any(np.isfinite(j.lower)) or np.any(np.isfinite(j.upper))):
                    raise ValueError(f"{nm}: joint '{jn}' has no finite lower/upper limit")
                chosen.append(j)
        qi, vi, lo, up = [], [], [], []
        for j in chosen:
            for k in range(j.nq):
                qi.append(j.q_start + k)
                vi.append(j.v_start + k)
                lo.append(float(np.asarray(j.lower, float).ravel()[k]))
                up.append(float(np.asarray(j.upper, float).ravel()[k]))
        self.joints = [j.name for j in chosen]
        self._qi, self._vi = np.array(qi, int), np.array(vi, int)
        self._lower, self._upper = np.array(lo), np.array(up)
        self.margin = float(margin)

    def calc_rows(self, context, kin: StepKinematics) -> ConstraintRows:
        """Rows of the limits that may be reached in this step (lower ones first)."""
        nv, h = kin.v.shape[0], kin.h
        q, v = kin.q[self._qi], kin.v[self._vi]
        reach = self.margin + h * np.abs(v)
        phi_l, phi_u = q - self._lower, self._upper - q
        al, au = np.flatnonzero(phi_l <= reach), np.flatnonzero(phi_u <= reach)
        m = al.shape[0] + au.shape[0]
        if m == 0:
            return ConstraintRows.empty(nv)
        erp, cfm = self.softening(context, h)
        J = np.zeros((m, nv))
        J[np.arange(al.shape[0]), self._vi[al]] = 1.0
        J[al.shape[0] + np.arange(au.shape[0]), self._vi[au]] = -1.0
        phi = np.concatenate([phi_l[al], phi_u[au]])
        bias = np.where(phi > 0, phi / h, erp * phi / h)
        return ConstraintRows.make(J, bias, UNILATERAL, cfm=cfm, lo=0.0, phi=phi,
                                   info={"coordinates": np.concatenate([self._qi[al],
                                                                        self._qi[au]])})
