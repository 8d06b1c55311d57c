"""``FirstOrderLagActuator``: a joint effort that follows its command with a time constant.

``T dtau/dt = clip(u, +-effort) - tau`` per commanded coordinate (a torque loop, a pneumatic
or hydraulic valve, a motor driver's current loop seen from the joint); ``tau`` is the
block's continuous state and its output. A pure delay is a
:class:`~systems.primitives.DiscreteTimeDelay` in front of any actuator's command.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from solvers import ops
from .base import Actuator, per_actuator_vector

__all__ = ["FirstOrderLagActuator"]


class FirstOrderLagActuator(Actuator):
    """First-order lag from command to joint effort (module docstring).

    Parameters
    ----------
    tree : RigidBodyTree
    joints : str or sequence of str
        Joints; one command per velocity coordinate, in joint order.
    time_constant : float or array_like
        ``T`` (s), > 0.
    effort_limit : float or array_like, optional
        Saturation of the command (default none).
    name : str, optional

    Raises
    ------
    ValueError
        An unknown joint, a non-positive time constant or limit.
    """

    def __init__(self, tree, joints, time_constant, effort_limit=np.inf,
                 name: Optional[str] = None):
        tree.finalize()
        who = f"FirstOrderLagActuator '{name}'" if name else "FirstOrderLagActuator"
        chosen, _, vi = tree.joint_coordinates(joints, who=who)
        n = len(vi)

        self.T = per_actuator_vector(time_constant, n, "time_constant", who, positive=True)
        self.effort_limit = per_actuator_vector(effort_limit, n, "effort_limit", who,
                                                positive=True, allow_inf=True)
        self.joints = [j.name for j in chosen]
        self._B = np.zeros((tree.nv, n))
        self._B[vi, np.arange(n)] = 1.0
        super().__init__(tree, n, name)
        self.declare_continuous_state(n)

    def time_derivatives(self, context):
        """``(clip(u) - tau) / T``."""
        u = self.command_port.eval(context)
        if np.any(np.isfinite(self.effort_limit)):
            u = ops.clip(u, -self.effort_limit, self.effort_limit)
        return (u - context.continuous_state) / self.T

    def generalized_force(self, context, q, v, command):
        """``B tau`` (the lagged effort)."""
        return self._B @ context.continuous_state
