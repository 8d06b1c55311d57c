"""``JointFriction``: viscous plus (smoothed) Coulomb friction on joints, for continuous-time
plants.

``tau = -b v - F tanh(v / v_s)`` per coordinate: viscous damping ``b`` and Coulomb friction
``F`` smoothed over the slip speed ``v_s`` (Coulomb's sign function is the limit ``v_s -> 0``;
the smoothing makes the continuous plant's ODE smooth, at the price of a slow creep below
``v_s``). The time-stepping plant models exact Coulomb friction (sticking included) with
:class:`~multibody.constraints.JointFrictionConstraint` instead. No command: the block's
``command`` input has size 0.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from solvers import ops
from .base import Actuator, per_actuator_vector

__all__ = ["JointFriction"]


class JointFriction(Actuator):
    """Viscous and smoothed Coulomb friction (module docstring).

    Parameters
    ----------
    tree : RigidBodyTree
    joints : str or sequence of str, optional
        Default every joint with velocity coordinates.
    viscous : float or array_like
        ``b`` per velocity coordinate of the joints (>= 0).
    coulomb : float or array_like
        ``F`` (N m or N, >= 0).
    slip_speed : float
        ``v_s`` > 0 (rad/s or m/s).
    name : str, optional

    Raises
    ------
    ValueError
        An unknown joint, negative coefficients or a non-positive slip speed.
    """

    def __init__(self, tree, joints=None, viscous=0.0, coulomb=0.0, slip_speed: float = 1e-3,
                 name: Optional[str] = None):
        tree.finalize()
        who = f"JointFriction '{name}'" if name else "JointFriction"
        chosen, _, vi = tree.joint_coordinates(joints, who=who)
        n = len(vi)

        self.b = per_actuator_vector(viscous, n, "viscous", who, nonneg=True)
        self.F = per_actuator_vector(coulomb, n, "coulomb", who, nonneg=True)
        if not (np.isfinite(slip_speed) and slip_speed > 0):
            raise ValueError(f"{who}: slip_speed must be finite and > 0, got {slip_speed!r}")
        self.slip_speed = float(slip_speed)
        self.joints = [j.name for j in chosen]
        self._B = np.zeros((tree.nv, n))
        self._B[vi, np.arange(n)] = 1.0
        super().__init__(tree, 0, name)

    def generalized_force(self, context, q, v, command):
        """``B (-b v_j - F tanh(v_j / v_s))``."""
        vj = self._B.T @ v
        return self._B @ (-self.b * vj - self.F * ops.tanh(vj / self.slip_speed))
