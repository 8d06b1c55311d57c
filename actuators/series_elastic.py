"""``SeriesElasticActuator``: a motor driving a joint through a spring (and damper).

Per driven coordinate ``q`` the motor (rotor inertia ``J_m`` seen at the joint side, angle
``theta``) is commanded a torque ``u`` and connected to the joint by a spring ``k`` and damper
``b``:

.. math::

    J_m \\ddot\\theta = u - \\tau, \\qquad \\tau = k (\\theta - q) + b (\\dot\\theta - \\dot q),

``tau`` acting on the joint (G. A. Pratt and M. M. Williamson, "Series elastic actuators",
IROS 1995). State: ``[theta; theta_dot]`` per coordinate; output ``deflection`` (``theta - q``,
what an SEA's spring encoder measures, ``tau = k deflection + ...``).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from solvers import ops
from .base import Actuator, per_actuator_vector

__all__ = ["SeriesElasticActuator"]


class SeriesElasticActuator(Actuator):
    """Spring-coupled motors on joints (module docstring).

    Parameters
    ----------
    tree : RigidBodyTree
    joints : str or sequence of str
    stiffness : float or array_like
        ``k`` > 0 (N m/rad or N/m).
    motor_inertia : float or array_like
        ``J_m`` > 0, referred to the joint side.
    damping : float or array_like
        ``b`` >= 0.
    name : str, optional

    Raises
    ------
    ValueError
        An unknown joint or a parameter of the wrong sign or size.
    """

    def __init__(self, tree, joints, stiffness, motor_inertia, damping=0.0,
                 name: Optional[str] = None):
        tree.finalize()
        who = f"SeriesElasticActuator '{name}'" if name else "SeriesElasticActuator"
        chosen, qi, vi = tree.joint_coordinates(joints, one_dof=True, who=who)
        n = len(chosen)
        self.k = per_actuator_vector(stiffness, n, "stiffness", who, positive=True)
        self.J_m = per_actuator_vector(motor_inertia, n, "motor_inertia", who, positive=True)
        self.b = per_actuator_vector(damping, n, "damping", who, nonneg=True)
        self.joints, self._qi, self._vi = [j.name for j in chosen], qi, vi
        self._B = np.zeros((tree.nv, n))
        self._B[vi, np.arange(n)] = 1.0
        super().__init__(tree, n, name)
        self.n_motors = n
        self.declare_continuous_state(2 * n)
        self.declare_output_port("deflection", n, self._deflection, feedthrough=True)

    def _spring_torque(self, context):
        n = self.n_motors
        s = context.continuous_state
        qj, vj = _select_q(self, context)
        return self.k * (s[:n] - qj) + self.b * (s[n:] - vj)

    def joint_indices(self):
        """``(q_indices, v_indices)`` of the driven coordinates."""
        return self._qi, self._vi

    def _deflection(self, context):
        qj, _ = _select_q(self, context)
        return context.continuous_state[:self.n_motors] - qj

    def time_derivatives(self, context):
        """``[theta_dot; (u - tau) / J_m]``."""
        n = self.n_motors
        s = context.continuous_state
        tau = self._spring_torque(context)
        u = self.command_port.eval(context)
        return ops.vertcat(s[n:], (u - tau) / self.J_m)

    def generalized_force(self, context, q, v, command):
        """``B tau`` (the spring-damper torque on the joints)."""
        return self._B @ self._spring_torque(context)


def _select_q(act: "SeriesElasticActuator", context):
    """Joint positions and velocities of the actuated coordinates (numbers or CasADi)."""
    x = act.state_port.eval(context)
    q, v = x[:act.nq], x[act.nq:]
    qi, vi = act.joint_indices()
    if ops.is_symbolic(x):
        return (ops.vertcat(*[q[int(i)] for i in qi]), ops.vertcat(*[v[int(i)] for i in vi]))
    return np.asarray(q)[qi], np.asarray(v)[vi]

