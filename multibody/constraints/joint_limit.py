"""Joint position limits as unilateral constraints, for both plants.

For each limited coordinate ``q_i`` (joints whose ``nq == nv``: revolute, prismatic, screw,
universal, euler, planar, translational) with lower limit ``l`` and upper limit ``u`` there is
one *side* per finite limit, defined once:

* lower: ``phi = q_i - l >= 0`` with ``J = e_i``;
* upper: ``phi = u - q_i >= 0`` with ``J = -e_i``.

Time stepping: a side is a ``UNILATERAL`` row when the limit may be reached within the step
(``phi <= margin + h |v_i|``); its bias is ``phi / h`` before contact (the joint may reach its
limit exactly) and ``erp * phi / h`` on a violation, as for contacts. With MuJoCo softening
(``mujoco=MuJoCoSoftening(...)``) a side is a row only while violated (``phi < 0``, MuJoCo's
rule with a zero joint margin), with MuJoCo's ``cfm`` and bias
(:mod:`multibody.constraints.mujoco_softening`): ``solref``/``solimp`` per joint, ``Ahat``
the joint's ``invweight`` or the row's Delassus diagonal ``(M^{-1})_{ii}``.

Continuous time: each side is a site of the acceleration-level complementarity problem,
``a = J vdot + alpha J v + beta phi >= 0`` complementary to ``f >= 0`` while the site is
active; reaching a limit is a witness event with an impulse of restitution ``e`` (``0``:
the joint stops at the limit).
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from .base import UNILATERAL, ConstraintForce, ConstraintRows
from .contact_rows import ContactPointRows

__all__ = ["JointLimitConstraint"]


class JointLimitConstraint(ConstraintForce):
    """Unilateral limits keeping joints within ``lower``/``upper`` (module docstring).

    Parameters
    ----------
    tree : RigidBodyTree
    joints : str or sequence of str, optional
        Joint names (default: every joint with ``nq == nv`` and a finite limit).
    lower, upper : float, optional
        With a single one-DOF joint: limits replacing the joint's own.
    margin : float
        Time stepping: rows are included within ``margin + h |v_i|`` of a limit (default
        1e-3, in the joint's units).
    restitution : float
        Continuous time: Newton's coefficient of restitution at a limit, in [0, 1].
    erp, cfm, kp, kd, mujoco, time_constant, damping_ratio, gains, name
        Softening for each plant (:class:`~multibody.constraints.ConstraintForce`).

    Raises
    ------
    ValueError
        An unknown joint, a quaternion joint (ball, free), a listed joint without any finite
        limit, ``lower > upper``, or ``lower``/``upper`` given for several coordinates.
    """

    unilateral = True
    supports_mujoco = True

    def __init__(self, tree, joints: Optional[Sequence[str]] = None, lower: Optional[float] = None,
                 upper: Optional[float] = None, *, margin: float = 1e-3, restitution: float = 0.0,
                 **softening) -> None:
        super().__init__(tree, **softening)
        nm = f"joint limit constraint '{self.name}'"
        if joints is None:
            chosen = [j for j in tree.joints if j.nq == j.nv and j.nv > 0 and
                      (np.any(np.isfinite(j.lower)) or np.any(np.isfinite(j.upper)))]
        else:
            chosen = []
            for jn in ([joints] if isinstance(joints, str) else joints):
                try:
                    j = tree.get_joint(jn)
                except (KeyError, ValueError):
                    raise ValueError(f"{nm}: tree '{tree.name}' has no joint named {jn!r}") from None
                if j.nq != j.nv:
                    raise ValueError(f"{nm}: joint '{jn}' ({j.type}) has quaternion coordinates; "
                                     "position limits apply to joints with nq == nv")
                chosen.append(j)
        qi, vi, lo, up, names = [], [], [], [], []
        for j in chosen:
            for k in range(j.nq):
                qi.append(j.q_start + k)
                vi.append(j.v_start + k)
                lo.append(float(np.asarray(j.lower, float).ravel()[k]) if j.lower is not None else -np.inf)
                up.append(float(np.asarray(j.upper, float).ravel()[k]) if j.upper is not None else np.inf)
                names.append(j.name if j.nq == 1 else f"{j.name}.{k}")
        if lower is not None or upper is not None:
            if len(qi) != 1:
                raise ValueError(f"{nm}: lower/upper override the limits of one one-DOF joint; "
                                 f"{len(qi)} coordinates are selected")
            lo[0] = lo[0] if lower is None else float(lower)
            up[0] = up[0] if upper is None else float(upper)
        for n, l, u in zip(names, lo, up):
            if not (np.isfinite(l) or np.isfinite(u)):
                raise ValueError(f"{nm}: joint '{n}' has no finite limit (lower or upper)")
            if l > u:
                raise ValueError(f"{nm}: joint '{n}' has lower {l} > upper {u}")
        if not (0.0 <= restitution <= 1.0):
            raise ValueError(f"{nm}: restitution must be in [0, 1], got {restitution}")
        self.joints = [j.name for j in chosen]
        self.joint = self.joints[0] if len(self.joints) == 1 else None
        self._qi, self._vi = np.array(qi, int), np.array(vi, int)
        self._lower, self._upper = np.array(lo, float), np.array(up, float)
        self._coord_names = names
        self._joint_of = [j.name for j in chosen for _ in range(j.nq)]
        if self.mujoco is not None and self.mujoco.invweight is not None:
            for jn in self.joints:
                self._invweight(self.mujoco, jn)
        self.lower = float(lo[0]) if len(lo) == 1 else self._lower.copy()
        self.upper = float(up[0]) if len(up) == 1 else self._upper.copy()
        self.margin = float(margin)
        self.restitution, self.mu = float(restitution), 0.0
        # the sides, defined once: (coordinate, sign, bound)
        self._sides = ([(k, 1.0, lo[k]) for k in range(len(qi)) if np.isfinite(lo[k])]
                       + [(k, -1.0, up[k]) for k in range(len(qi)) if np.isfinite(up[k])])

    def _invweight(self, mj, joint: str) -> float:
        try:
            return float(mj.invweight[joint])
        except KeyError:
            raise ValueError(f"joint limit constraint '{self.name}': MuJoCoSoftening.invweight "
                             f"has no value for joint '{joint}'") from None

    def _side_terms(self, q, side):
        """``(phi, vi, s)`` of one side: position error, velocity index and sign of ``J``."""
        k, s, bound = side
        return s * (float(q[self._qi[k]]) - bound), int(self._vi[k]), s

    # ------------------------------------------------------------------ time stepping
    def calc_rows(self, context, kin) -> ConstraintRows:
        """Rows of the sides that may be reached in this step (lower sides first)."""
        nv, h = kin.v.shape[0], kin.h
        act = []
        mj = self.mujoco
        for side in self._sides:
            phi, vi, s = self._side_terms(kin.q, side)
            if (phi < 0.0) if mj is not None else (phi <= self.margin + h * abs(float(kin.v[vi]))):
                act.append((phi, vi, s, side))
        if not act:
            return ConstraintRows.empty(nv)
        erp, cfm = self.softening(context, h)
        J = np.zeros((len(act), nv))
        for r, (_, vi, s, _) in enumerate(act):
            J[r, vi] = s
        phi = np.array([a[0] for a in act])
        if mj is None:
            bias = np.where(phi > 0, phi / h, erp * phi / h)
        else:
            names = [self._joint_of[a[3][0]] for a in act]
            if mj.invweight is None:
                diag = self.delassus_diagonal(kin, J)
            else:
                diag = np.array([self._invweight(mj, n) for n in names])
            cfm, bias = self.mujoco_rows(context, kin, phi, J @ kin.v, diag, names=names)
        coords = np.array([self._qi[a[3][0]] for a in act], int)
        return ConstraintRows.make(J, bias, UNILATERAL, cfm=cfm, lo=0.0, phi=phi,
                                   info={"coordinates": coords})

    # ------------------------------------------------------------------ continuous time
    @property
    def num_sites(self) -> int:
        """One site per finite limit side."""
        return len(self._sides)

    def site_names(self) -> list:
        """``"block[lower]"`` / ``"block[upper]"`` (one coordinate) or
        ``"block[joint lower]"`` (several)."""
        out = []
        for k, s, _ in self._sides:
            side = "lower" if s > 0 else "upper"
            out.append(f"{self.name}[{side}]" if len(self._qi) == 1
                       else f"{self.name}[{self._coord_names[k]} {side}]")
        return out

    def gap(self, q, i: int) -> float:
        """Distance (rad or m) of the joint from limit side ``i``; negative past the limit."""
        return self._side_terms(q, self._sides[i])[0]

    def site_points(self, q, v, i: int) -> list:
        """One row (a :class:`ContactPointRows` without friction) for side ``i``."""
        phi, vi, s = self._side_terms(q, self._sides[i])
        Jn = np.zeros(self.tree.nv)
        Jn[vi] = s
        z = np.zeros(2)
        name = self._coord_names[self._sides[i][0]]
        side = "lower" if s > 0 else "upper"
        return [ContactPointRows(Jn, 0.0, float(Jn @ v), phi, None, z, z, np.zeros((2, 3)),
                                 np.zeros(3), np.zeros(3), name, name, side, "", 0.0)]
