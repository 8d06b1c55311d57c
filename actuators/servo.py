"""``PdServo``: a position servo, the joint-level loop of a hobby or industrial servo.

``tau = clip(kp (q_cmd - q) - kd v, +-effort)`` with ``kp = J w^2`` and ``kd = 2 zeta J w``
from a bandwidth ``w`` (rad/s), damping ratio ``zeta`` and the inertia ``J`` the servo is tuned
for, so that a joint of that inertia follows a step like a second-order system of natural
frequency ``w``: ``J qdd + kd qd + kp q = kp q_cmd`` (without saturation or gravity).
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from solvers import ops
from .base import Actuator

__all__ = ["PdServo"]


class PdServo(Actuator):
    """PD position servos on one-DOF joints (module docstring).

    Parameters
    ----------
    tree : RigidBodyTree
    joints : str or sequence of str
        One-DOF joints; the command is one position per joint.
    bandwidth : float or array_like
        ``w`` (rad/s), > 0.
    inertia : float or array_like
        ``J`` the gains are tuned for (kg m^2 or kg), > 0.
    damping_ratio : float or array_like
        ``zeta`` (default 1, critically damped), >= 0.
    effort_limit : float or array_like, optional
        Default the joints' own limits.
    name : str, optional

    Raises
    ------
    ValueError
        An unknown or multi-DOF joint, non-positive bandwidth or inertia.
    """

    def __init__(self, tree, joints, bandwidth, inertia, damping_ratio=1.0, effort_limit=None,
                 name: Optional[str] = None):
        tree.finalize()
        who = f"PdServo '{name}'" if name else "PdServo"
        joints = [joints] if isinstance(joints, str) else list(joints)
        qi, vi, lim = [], [], []
        for jn in joints:
            try:
                j = tree.get_joint(jn)
            except (KeyError, ValueError):
                raise ValueError(f"{who}: tree '{tree.name}' has no joint named {jn!r}") from None
            if j.nq != 1 or j.nv != 1:
                raise ValueError(f"{who}: joint '{jn}' ({j.type}) is not a one-DOF joint")
            qi.append(j.q_start)
            vi.append(j.v_start)
            lim.append(float(np.ravel(j.effort_limit)[0]))
        n = len(joints)

        def vec(x, nm, strict=True):
            a = np.atleast_1d(np.asarray(x, float)).ravel()
            a = np.full(n, a[0]) if a.shape[0] == 1 else a
            if a.shape[0] != n or np.any(np.isnan(a)) or (np.any(a <= 0) if strict else np.any(a < 0)):
                raise ValueError(f"{who}: {nm} must be {'> 0' if strict else '>= 0'}, one per joint "
                                 f"({n}), got {x!r}")
            return a
        w, J, z = vec(bandwidth, "bandwidth"), vec(inertia, "inertia"), vec(damping_ratio, "damping_ratio", False)
        self.kp, self.kd = J * w * w, 2.0 * z * J * w
        self.effort_limit = np.array(lim) if effort_limit is None else vec(effort_limit, "effort_limit")
        self.joints = joints
        self._qi, self._vi = np.array(qi, int), np.array(vi, int)
        self._B = np.zeros((tree.nv, n))
        self._B[self._vi, np.arange(n)] = 1.0
        super().__init__(tree, n, name)

    def generalized_force(self, context, q, v, command):
        """``B clip(kp (q_cmd - q) - kd v, +-effort)``."""
        tau = self.kp * (command - _take(q, self._qi)) - self.kd * _take(v, self._vi)
        if np.all(np.isinf(self.effort_limit)):
            return self._B @ tau
        return self._B @ ops.clip(tau, -self.effort_limit, self.effort_limit)


def _take(x, idx):
    """``x[idx]`` for numpy or CasADi vectors."""
    if ops.is_symbolic(x):
        return ops.vertcat(*[x[int(i)] for i in idx])
    return np.asarray(x)[idx]
