"""``DcMotor``: brushed DC motors driving joints through gears, with their electrical state.

For each driven joint coordinate (velocity ``v``) a motor with armature resistance ``R``
(ohm), inductance ``L`` (H), torque constant ``k_t`` (N m/A), back-EMF constant ``k_e``
(V s/rad), gear ratio ``N`` (motor turns per joint turn), efficiency ``eta`` and rotor inertia
``J_r`` (kg m^2) obeys

.. math::

    L \\frac{di}{dt} = \\operatorname{clip}(V, \\pm V_{max}) - R\\, i - k_e N v, \\qquad
    \\tau = \\eta N k_t \\operatorname{clip}(i, \\pm i_{max}),

with the applied voltage ``V`` its command and the current ``i`` its continuous state; the
rotor's inertia seen at the joint, ``N^2 J_r``, is added to the joint's armature (the mass
matrix diagonal) when the motor is built. (Standard armature-controlled DC motor model, e.g.
K. Ogata, *Modern Control Engineering*, 5th ed., section 3-3.) Written with
:mod:`solvers.ops`, so a diagram with motors linearizes and runs compiled.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from solvers import ops
from .base import Actuator, per_actuator_vector

__all__ = ["DcMotor"]


class DcMotor(Actuator):
    """Brushed DC motors with gears on the velocity coordinates of ``joints`` (module
    docstring). All quantities in SI units.

    Parameters
    ----------
    tree : RigidBodyTree
    joints : str or sequence of str
        Joints whose velocity coordinates each get a motor (in joint order).
    resistance : float or array_like
        ``R`` (ohm), > 0.
    inductance : float or array_like
        ``L`` (H), > 0.
    torque_constant : float or array_like
        ``k_t`` (N m/A), > 0.
    back_emf_constant : float or array_like, optional
        ``k_e`` (V s/rad), > 0; default ``k_t`` (equal in SI units for an ideal motor).
    gear_ratio : float or array_like
        ``N`` (motor speed / joint speed), > 0.
    efficiency : float or array_like
        ``eta`` in (0, 1] on the torque delivered to the joint.
    rotor_inertia : float or array_like
        ``J_r`` (kg m^2), >= 0; ``N^2 J_r`` is added to the joints' armature.
    voltage_limit, current_limit : float or array_like
        Symmetric saturation of the command and of the torque-producing current (default
        unlimited).
    name : str, optional

    Ports
    -----
    inputs ``state`` (nq + nv) and ``command`` (the voltages, one per motor); outputs
    ``generalized_force`` (nv) and ``current`` (one per motor, A).

    Raises
    ------
    ValueError
        An unknown joint or one without velocity coordinates, or a parameter of the wrong
        size or sign (non-positive gear ratio, resistance, inductance, constants).
    """

    def __init__(self, tree, joints, *, resistance, inductance, torque_constant,
                 back_emf_constant=None, gear_ratio=1.0, efficiency=1.0, rotor_inertia=0.0,
                 voltage_limit=np.inf, current_limit=np.inf, name: Optional[str] = None):
        tree.finalize()
        who = f"DcMotor '{name}'" if name else "DcMotor"
        chosen, _, vi = tree.joint_coordinates(joints, who=who)
        owners = [(j, k) for j in chosen for k in range(j.nv)]
        idx = list(vi)
        n = len(idx)
        self.R = per_actuator_vector(resistance, n, "resistance", who, positive=True)
        self.L = per_actuator_vector(inductance, n, "inductance", who, positive=True)
        self.k_t = per_actuator_vector(torque_constant, n, "torque_constant", who, positive=True)
        self.k_e = (self.k_t.copy() if back_emf_constant is None
                    else per_actuator_vector(back_emf_constant, n, "back_emf_constant", who, positive=True))
        self.N = per_actuator_vector(gear_ratio, n, "gear_ratio", who, positive=True)
        self.eta = per_actuator_vector(efficiency, n, "efficiency", who, positive=True)
        if np.any(self.eta > 1):
            raise ValueError(f"{who}: efficiency must be in (0, 1], got {self.eta.tolist()}")
        self.J_r = per_actuator_vector(rotor_inertia, n, "rotor_inertia", who, nonneg=True)
        self.V_max = per_actuator_vector(voltage_limit, n, "voltage_limit", who, positive=True,
                                allow_inf=True)
        self.i_max = per_actuator_vector(current_limit, n, "current_limit", who, positive=True,
                                allow_inf=True)
        self.joints = [j.name for j in chosen]
        self.v_indices = np.asarray(idx, dtype=int)
        self._B = np.zeros((tree.nv, n))
        self._B[self.v_indices, np.arange(n)] = 1.0
        # the rotors' inertia seen at the joints
        for m, (j, k) in enumerate(owners):
            if self.J_r[m]:
                a = np.array(j.armature, float)
                a[k] += self.N[m] ** 2 * self.J_r[m]
                tree.set_joint_armature(j.name, a)
        super().__init__(tree, n, name)
        self.declare_continuous_state(n)
        self.declare_output_port("current", n, lambda c: c.continuous_state,
                                 feedthrough=False, prerequisites=["continuous_state"])

    def _joint_speed(self, context):
        x = self.state_port.eval(context)
        v = x[self.nq:]
        return self._B.T @ v

    def time_derivatives(self, context):
        """``di/dt = (clip(V) - R i - k_e N v) / L``."""
        i = context.continuous_state
        V = self.command_port.eval(context)
        if np.any(np.isfinite(self.V_max)):
            V = ops.clip(V, -self.V_max, self.V_max)
        return (V - self.R * i - self.k_e * self.N * self._joint_speed(context)) / self.L

    def generalized_force(self, context, q, v, command):
        """``tau = eta N k_t clip(i)`` on the driven coordinates."""
        i = context.continuous_state
        if np.any(np.isfinite(self.i_max)):
            i = ops.clip(i, -self.i_max, self.i_max)
        return self._B @ (self.eta * self.N * self.k_t * i)
