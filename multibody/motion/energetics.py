"""Joint powers and mechanical work of a movement.

The power at joint ``j`` is ``P_j(t) = tau_j(t) . v_j(t)`` summed over the joint's velocity
coordinates (W). Over a movement, per joint,

.. math::

    W_j^+ = \\int \\max(P_j, 0)\\,dt, \\qquad W_j^- = \\int \\min(P_j, 0)\\,dt,
    \\qquad |W|_j = \\int |P_j|\\,dt

(positive, negative and absolute work, J; trapezoidal rule on the positive and negative
parts); the energetic cost of the movement is the absolute work summed over the joints
(Winter 2009, section 7.2: mechanical work from joint powers, no transfer between joints).

References
----------
D. A. Winter, "Biomechanics and Motor Control of Human Movement", 4th ed., Wiley, 2009.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np

from .errors import TrajectoryError

__all__ = ["JointWork", "joint_powers", "joint_work"]


@dataclass
class JointWork:
    """Joint powers and work over a movement (T samples, J joints).

    Attributes
    ----------
    joints : list of str
    t : (T,) ndarray
    power : (T, J) ndarray
        ``P_j(t)`` (W).
    positive, negative, absolute : (J,) ndarray
        ``W+``, ``W-`` (<= 0) and ``|W|`` per joint (J).
    """

    joints: list
    t: np.ndarray
    power: np.ndarray
    positive: np.ndarray
    negative: np.ndarray
    absolute: np.ndarray

    @property
    def total_positive(self) -> float:
        """Positive work summed over the joints (J)."""
        return float(self.positive.sum())

    @property
    def total_absolute(self) -> float:
        """Absolute work summed over the joints (J): the energetic cost."""
        return float(self.absolute.sum())

    def per_joint(self) -> dict:
        """``{joint: (positive, negative, absolute)}`` (J)."""
        return {j: (float(p), float(n), float(a)) for j, p, n, a in
                zip(self.joints, self.positive, self.negative, self.absolute)}


def joint_powers(tree, tau: Any, v: Any, joints: Optional[Sequence[str]] = None
                 ) -> tuple[list, np.ndarray]:
    """Power ``tau_j . v_j`` (T, J) of each joint (default: every joint with velocity
    coordinates except a free root).

    Parameters
    ----------
    tree : RigidBodyTree
    tau, v : (T, nv) array_like
        Generalized forces and velocities.
    joints : sequence of str, optional

    Returns
    -------
    names : list of str
    power : (T, J) ndarray (W)

    Raises
    ------
    TrajectoryError
        ``tau`` and ``v`` of different or wrong shapes, non-finite values, an unknown joint.
    """
    tau, v = np.asarray(tau, float), np.asarray(v, float)
    if tau.ndim != 2 or tau.shape != v.shape or tau.shape[1] != tree.nv:
        raise TrajectoryError(f"joint_powers on tree '{tree.name}': tau {tau.shape} and v "
                              f"{v.shape} must both be (T, nv = {tree.nv})")
    bad = ~(np.all(np.isfinite(tau), axis=1) & np.all(np.isfinite(v), axis=1))
    if bad.any():
        raise TrajectoryError(f"joint_powers on tree '{tree.name}': tau or v is not finite at "
                              f"sample {int(np.argmax(bad))}")
    if joints is None:
        chosen = [j for j in tree.joints if j.nv and not (j.type == "free" and j.parent == "world")]
    else:
        try:
            chosen = tree.joint_coordinates(joints, who="joint_powers")[0]
        except ValueError as e:
            raise TrajectoryError(str(e)) from None
    P = np.column_stack([np.sum(tau[:, j.v_start:j.v_start + j.nv] *
                                v[:, j.v_start:j.v_start + j.nv], axis=1) for j in chosen])
    return [j.name for j in chosen], P


def _integrate_part(t: np.ndarray, P: np.ndarray, sign: float) -> np.ndarray:
    """Trapezoidal integral of max(sign P, 0) with the zero crossings placed linearly."""
    out = np.zeros(P.shape[1])
    for c in range(P.shape[1]):
        y = sign * P[:, c]
        total = 0.0
        for k in range(len(t) - 1):
            a, b, h = y[k], y[k + 1], t[k + 1] - t[k]
            if a >= 0 and b >= 0:
                total += 0.5 * (a + b) * h
            elif a > 0 or b > 0:                 # one crossing: a triangle
                pos = max(a, b)
                total += 0.5 * pos * h * pos / (abs(a) + abs(b))
        out[c] = total
    return out


def joint_work(tree, t: Any, tau: Any, v: Any, joints: Optional[Sequence[str]] = None
               ) -> JointWork:
    """Positive, negative and absolute work per joint over a movement (module docstring).

    Parameters
    ----------
    tree : RigidBodyTree
    t : (T,) array_like
        Increasing times (s).
    tau, v : (T, nv) array_like
    joints : sequence of str, optional

    Returns
    -------
    JointWork

    Raises
    ------
    TrajectoryError
        Times not increasing or not matching ``tau``; see :func:`joint_powers`.
    """
    t = np.asarray(t, float).ravel()
    names, P = joint_powers(tree, tau, v, joints)
    if t.size != P.shape[0] or np.any(np.diff(t) <= 0):
        raise TrajectoryError(f"joint_work: t must be {P.shape[0]} increasing times, got "
                              f"{t.size} values")
    pos = _integrate_part(t, P, 1.0)
    neg = -_integrate_part(t, P, -1.0)
    return JointWork(names, t, P, pos, neg, pos - neg)
