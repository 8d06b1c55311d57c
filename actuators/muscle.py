"""``HillMuscle``: Hill-type muscles acting on joints through moment arms.

Each muscle has a rigid tendon and no pennation (Zajac 1989), an activation ``a`` (its state)
driven by the excitation ``u`` in [0, 1] (its command) with Thelen's (2003) time constants,

.. math::

    \\dot a = \\frac{u - a}{\\tau(a, u)}, \\quad
    \\tau = \\begin{cases} \\tau_{act} (0.5 + 1.5 a) & u > a \\\\
                            \\tau_{deact} / (0.5 + 1.5 a) & u \\le a \\end{cases},

and a force

.. math::

    F = F_0 \\left(a\\, f_L(\\tilde l)\\, f_V(\\tilde v) + f_{PE}(\\tilde l)\\right), \\quad
    \\tilde l = \\frac{l_{MT}(q) - l_s}{l_0}, \\quad
    \\tilde v = \\frac{\\dot l_{MT}}{v_{max} l_0},

with the muscle-tendon length ``l_MT = l_MT0 - r q`` (moment arm ``r``: the muscle shortens
as the joint turns positively, and pulls it that way with torque ``r F``), the active
force-length curve ``f_L = exp(-(l~ - 1)^2 / 0.45)`` and passive curve
``f_PE = (exp(4 (l~ - 1) / 0.6) - 1) / (exp(4) - 1)`` for ``l~ > 1`` (Thelen 2003), and De
Groote et al.'s (2016) force-velocity curve
``f_V = d1 asinh(d2 v~ + d3) + d4`` (shortening ``v~ < 0`` lowers the force, lengthening raises
it). References: F. E. Zajac, Crit. Rev. Biomed. Eng. 17(4), 1989; D. G. Thelen, J. Biomech.
Eng. 125(1), 2003; F. De Groote et al., Ann. Biomed. Eng. 44(10), 2016.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from solvers import ops
from .base import Actuator, per_actuator_vector

__all__ = ["HillMuscle", "force_length", "force_velocity", "passive_force_length"]

_D1, _D2, _D3, _D4 = -0.318, -8.149, -0.374, 0.886     # De Groote et al. 2016


def force_length(l):
    """Active force-length ``exp(-(l - 1)^2 / 0.45)`` of the normalized fiber length."""
    return ops.exp(-((l - 1.0) ** 2) / 0.45)


def passive_force_length(l):
    """Passive force-length ``(exp(4 (l - 1) / 0.6) - 1) / (exp(4) - 1)`` for ``l > 1``."""
    return ops.fmax(0.0, (ops.exp(4.0 * (l - 1.0) / 0.6) - 1.0) / (np.exp(4.0) - 1.0))


def force_velocity(v):
    """``d1 asinh(d2 v + d3) + d4`` of the normalized fiber velocity (negative: shortening)."""
    z = _D2 * v + _D3
    return _D1 * ops.log(z + ops.sqrt(z * z + 1.0)) + _D4


class HillMuscle(Actuator):
    """Hill-type muscles on one-DOF joints (module docstring).

    Parameters
    ----------
    tree : RigidBodyTree
    joints : str or sequence of str
        One-DOF joint of each muscle.
    max_isometric_force : float or array_like
        ``F_0`` (N), > 0.
    optimal_fiber_length : float or array_like
        ``l_0`` (m), > 0.
    tendon_slack_length : float or array_like
        ``l_s`` (m), >= 0.
    moment_arm : float or array_like
        ``r`` (m); its sign sets the direction the muscle pulls the joint.
    length_at_zero : float or array_like
        ``l_MT0`` (m): muscle-tendon length at ``q = 0``, > 0.
    max_contraction_velocity : float or array_like
        ``v_max`` (optimal fiber lengths per second), > 0 (default 10).
    activation_time_constant, deactivation_time_constant : float
        Thelen's ``tau_act`` and ``tau_deact`` (s), default 0.01 and 0.04.
    name : str, optional

    Ports
    -----
    input ``command``: excitations (clipped to [0, 1]); outputs ``generalized_force`` and
    ``muscle_force`` (N, one per muscle). State: activations.

    Raises
    ------
    ValueError
        An unknown or multi-DOF joint, or a parameter of the wrong sign or size.
    """

    def __init__(self, tree, joints, *, max_isometric_force, optimal_fiber_length,
                 tendon_slack_length, moment_arm, length_at_zero,
                 max_contraction_velocity=10.0, activation_time_constant: float = 0.01,
                 deactivation_time_constant: float = 0.04, name: Optional[str] = None):
        tree.finalize()
        who = f"HillMuscle '{name}'" if name else "HillMuscle"
        chosen, qi, vi = tree.joint_coordinates(joints, one_dof=True, who=who)
        n = len(chosen)
        self.F0 = per_actuator_vector(max_isometric_force, n, "max_isometric_force", who,
                                      positive=True)
        self.l0 = per_actuator_vector(optimal_fiber_length, n, "optimal_fiber_length", who,
                                      positive=True)
        self.ls = per_actuator_vector(tendon_slack_length, n, "tendon_slack_length", who,
                                      nonneg=True)
        self.r = per_actuator_vector(moment_arm, n, "moment_arm", who)
        self.lmt0 = per_actuator_vector(length_at_zero, n, "length_at_zero", who, positive=True)
        self.vmax = per_actuator_vector(max_contraction_velocity, n, "max_contraction_velocity",
                                        who, positive=True)
        for nm, val in (("activation_time_constant", activation_time_constant),
                        ("deactivation_time_constant", deactivation_time_constant)):
            if not (np.isfinite(val) and val > 0):
                raise ValueError(f"{who}: {nm} must be finite and > 0, got {val!r}")
        self.tau_act, self.tau_deact = float(activation_time_constant), float(deactivation_time_constant)
        self.joints, self._qi, self._vi = [j.name for j in chosen], qi, vi
        self._B = np.zeros((tree.nv, n))
        self._B[vi, np.arange(n)] = 1.0
        super().__init__(tree, n, name)
        self.declare_continuous_state(n)
        self.declare_output_port("muscle_force", n, self._force_out, feedthrough=True)

    def fiber_state(self, q, v):
        """Normalized fiber length and velocity ``(l~, v~)`` at joint positions/velocities."""
        qj, vj = self._take(q, self._qi), self._take(v, self._vi)
        l = (self.lmt0 - self.r * qj - self.ls) / self.l0
        vt = (-self.r * vj) / (self.vmax * self.l0)
        return l, vt

    @staticmethod
    def _take(x, idx):
        if ops.is_symbolic(x):
            return ops.vertcat(*[x[int(i)] for i in idx])
        return np.asarray(x)[idx]

    def muscle_force(self, a, q, v):
        """``F = F_0 (a f_L f_V + f_PE)`` (one per muscle)."""
        l, vt = self.fiber_state(q, v)
        return self.F0 * (a * force_length(l) * force_velocity(vt) + passive_force_length(l))

    def _force_out(self, context):
        x = self.state_port.eval(context)
        return self.muscle_force(context.continuous_state, x[:self.nq], x[self.nq:])

    def time_derivatives(self, context):
        """Thelen's activation dynamics (module docstring)."""
        a = context.continuous_state
        u = ops.clip(self.command_port.eval(context), 0.0, 1.0)
        up = self.tau_act * (0.5 + 1.5 * a)
        down = self.tau_deact / (0.5 + 1.5 * a)
        return (u - a) / ops.if_else(u > a, up, down)

    def generalized_force(self, context, q, v, command):
        """``B (r F)``."""
        return self._B @ (self.r * self.muscle_force(context.continuous_state, q, v))
