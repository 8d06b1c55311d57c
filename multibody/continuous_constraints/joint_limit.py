"""Joint position limits as unilateral acceleration-level constraints.

For a one-DOF joint with coordinate ``q_i`` (velocity ``v_i``) and limits
``lower <= q_i <= upper`` there are two sites, each with one row:

* lower: ``phi = q_i - lower >= 0``, ``a = vdot_i + alpha v_i + beta phi >= 0``, force
  ``f >= 0`` acting as ``+f`` on ``v_i``;
* upper: ``phi = upper - q_i``, ``a = -vdot_i - alpha v_i + beta phi >= 0``, acting as ``-f``;

complementary (``a f = 0``) while the site is active. Reaching a limit is a witness event
with an impulse of restitution ``e`` (``0``: the joint stops at the limit).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from .base import ContinuousTimeConstraintForce
from .contact import ContactPointRows

__all__ = ["JointLimitForce"]


class JointLimitForce(ContinuousTimeConstraintForce):
    """Position limits of a one-DOF joint (module docstring).

    Parameters
    ----------
    tree : RigidBodyTree
    joint : str
        A joint with ``nq = nv = 1`` (revolute, prismatic, screw).
    lower, upper : float, optional
        Default: the joint's own limits (at least one must be finite).
    restitution : float
        In [0, 1].
    time_constant, damping_ratio, gains, name
        As for every constraint block.

    Raises
    ------
    ValueError
        An unknown joint, a joint with more than one DOF, no finite limit, lower > upper.
    """

    unilateral = True

    def __init__(self, tree, joint: str, lower: Optional[float] = None,
                 upper: Optional[float] = None, *, restitution: float = 0.0,
                 time_constant: Optional[float] = 0.1, damping_ratio: float = 1.0, gains=None,
                 name: Optional[str] = None) -> None:
        super().__init__(tree, time_constant=time_constant, damping_ratio=damping_ratio,
                         gains=gains, name=name)
        try:
            j = tree.get_joint(joint)
        except Exception:  # noqa: BLE001 - reraise with this block's view
            raise ValueError(f"joint limit '{self.name}': tree '{tree.name}' has no joint {joint!r}") from None
        if j.nq != 1 or j.nv != 1:
            raise ValueError(f"joint limit '{self.name}': joint '{joint}' ({j.type}) must have one "
                             f"DOF, it has nq={j.nq}, nv={j.nv}")
        lo = float(np.ravel(j.lower)[0]) if lower is None and j.lower is not None else lower
        hi = float(np.ravel(j.upper)[0]) if upper is None and j.upper is not None else upper
        lo = -np.inf if lo is None else float(lo)
        hi = np.inf if hi is None else float(hi)
        if not (np.isfinite(lo) or np.isfinite(hi)):
            raise ValueError(f"joint limit '{self.name}': joint '{joint}' has no finite limit")
        if lo > hi:
            raise ValueError(f"joint limit '{self.name}': lower {lo} > upper {hi}")
        if not (0.0 <= restitution <= 1.0):
            raise ValueError(f"joint limit '{self.name}': restitution must be in [0, 1]")
        self.joint, self.lower, self.upper = joint, lo, hi
        self.restitution, self.mu = float(restitution), 0.0
        self._qi, self._vi = j.q_start, j.v_start
        self._sides = [s for s, b in ((1.0, lo), (-1.0, hi)) if np.isfinite(b)]

    @property
    def num_sites(self) -> int:
        """One site per finite limit."""
        return len(self._sides)

    def site_names(self) -> list:
        """One name per limit side, ``"block[lower]"`` / ``"block[upper]"``."""
        return [f"{self.name}[{'lower' if s > 0 else 'upper'}]" for s in self._sides]

    def gap(self, q, i: int) -> float:
        """Distance (rad or m) of the joint from limit side ``i``; negative past the limit."""
        s = self._sides[i]
        return float(q[self._qi] - self.lower) if s > 0 else float(self.upper - q[self._qi])

    def site_points(self, q, v, i: int) -> list:
        """One row (as a :class:`ContactPointRows` without friction)."""
        s = self._sides[i]
        Jn = np.zeros(self.tree.nv)
        Jn[self._vi] = s
        z = np.zeros(2)
        return [ContactPointRows(Jn, 0.0, float(Jn @ v), self.gap(q, i), None, z, z,
                                 np.zeros((2, 3)), np.zeros(3), np.zeros(3), self.joint,
                                 self.joint, "lower" if s > 0 else "upper", "", 0.0)]
