"""``PdServo``: a position servo, the joint-level loop of a hobby or industrial servo.

``tau = clip(kp (q_cmd - q) - kd v, +-effort)`` with ``kp = J w^2`` and ``kd = 2 zeta J w``
from a bandwidth ``w`` (rad/s), damping ratio ``zeta`` and the inertia ``J`` the servo is tuned
for, so that a joint of that inertia follows a step like a second-order system of natural
frequency ``w``: ``J qdd + kd qd + kp q = kp q_cmd`` (without saturation or gravity).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from solvers import ops
from .base import Actuator, per_actuator_vector

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
        chosen, qi, vi = tree.joint_coordinates(joints, one_dof=True, who=who)
        lim = [float(np.ravel(j.effort_limit)[0]) for j in chosen]
        n = len(chosen)

        w = per_actuator_vector(bandwidth, n, "bandwidth", who, positive=True)
        J = per_actuator_vector(inertia, n, "inertia", who, positive=True)
        z = per_actuator_vector(damping_ratio, n, "damping_ratio", who, nonneg=True)
        self.kp, self.kd = J * w * w, 2.0 * z * J * w
        self.effort_limit = (np.array(lim) if effort_limit is None else per_actuator_vector(
            effort_limit, n, "effort_limit", who, positive=True, allow_inf=True))
        self.joints = [j.name for j in chosen]
        self._qi, self._vi = qi, vi
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
