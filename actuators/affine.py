"""Affine joint actuators: MuJoCo's ``general`` actuator with a fixed gain and an affine bias
on a joint transmission (its ``motor``, ``position`` and ``velocity`` shortcuts included).

For actuator ``i`` on a one-DOF joint ``j`` with gear ``g``, control ``u`` (clamped to the
control range when one is given), length ``L = g q_j`` and velocity ``Ldot = g v_j``:

.. math::

    f_i = \\mathrm{clip}\\big(k_i\\, u_i + b_{0,i} + b_{1,i} L_i + b_{2,i} \\dot L_i,\\;
    f_{\\min,i},\\ f_{\\max,i}\\big),\\qquad \\tau_j \\mathrel{+}= g_i f_i .

A position servo is ``k = kp``, ``b = (0, -kp, -kv)``; a velocity servo ``k = kv``,
``b = (0, 0, -kv)``; a motor ``k = 1``, ``b = 0``. Reference: MuJoCo documentation, XML
reference, ``actuator/general`` (gain, bias, gear, ctrlrange, forcerange) and "Computation:
actuation model".
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from solvers import ops
from .base import Actuator, per_actuator_vector

__all__ = ["AffineJointActuator"]


class AffineJointActuator(Actuator):
    """Affine actuators on one-DOF joints (module docstring): the command is one control per
    actuator; several actuators may drive one joint (their forces add).

    Parameters
    ----------
    tree : RigidBodyTree
    joints : sequence of str
        The joint of each actuator (one-DOF; repeats allowed).
    gain : float or array_like
        ``k`` per actuator.
    bias : array_like, shape (3,) or (n, 3)
        ``(b0, b1, b2)`` per actuator.
    gear : float or array_like
        ``g`` per actuator (default 1), nonzero.
    ctrlrange : array_like, shape (2,) or (n, 2), optional
        ``(lo, hi)`` clamping the control; ``(-inf, inf)`` entries for none.
    forcerange : array_like, shape (2,) or (n, 2), optional
        ``(f_min, f_max)`` clamping the actuator force (before the gear).
    name : str, optional

    Raises
    ------
    ValueError
        An unknown or multi-DOF joint, a zero gear, non-finite gains or biases, a range
        with ``lo > hi``; the message names the actuator block and the entry.
    """

    def __init__(self, tree, joints, gain, bias, gear=1.0, ctrlrange=None, forcerange=None,
                 name: Optional[str] = None):
        tree.finalize()
        who = f"AffineJointActuator '{name}'" if name else "AffineJointActuator"
        joints = [joints] if isinstance(joints, str) else list(joints)
        qi, vi = [], []
        for jn in joints:
            _, q_idx, v_idx = tree.joint_coordinates([jn], one_dof=True, who=who)
            qi.append(int(np.ravel(q_idx)[0]))
            vi.append(int(np.ravel(v_idx)[0]))
        n = len(joints)
        self.gain = per_actuator_vector(gain, n, "gain", who)
        self.gear = per_actuator_vector(gear, n, "gear", who)
        if np.any(self.gear == 0):
            raise ValueError(f"{who}: gear must be nonzero, got {self.gear.tolist()}")
        self.bias = _rows(bias, n, 3, "bias", who, finite=True)
        self.ctrlrange = _rows((-np.inf, np.inf) if ctrlrange is None else ctrlrange, n, 2,
                               "ctrlrange", who)
        self.forcerange = _rows((-np.inf, np.inf) if forcerange is None else forcerange, n, 2,
                                "forcerange", who)
        self.joints = joints
        self._vi = np.array(vi, dtype=int)
        self._qi = np.array(qi, dtype=int)
        self._B = np.zeros((tree.nv, n))
        self._B[self._vi, np.arange(n)] = self.gear
        self._clip_u = bool(np.isfinite(self.ctrlrange).any())
        self._clip_f = bool(np.isfinite(self.forcerange).any())
        super().__init__(tree, n, name)

    def generalized_force(self, context, q, v, command):
        """``tau = B f`` with ``f`` of the module docstring, ``B`` the gears on the joints'
        velocity columns (nv x n)."""
        u = ops.clip(command, self.ctrlrange[:, 0], self.ctrlrange[:, 1]) if self._clip_u \
            else command
        L = self.gear * _take(q, self._qi)
        Ld = self.gear * _take(v, self._vi)
        f = self.gain * u + self.bias[:, 0] + self.bias[:, 1] * L + self.bias[:, 2] * Ld
        if self._clip_f:
            f = ops.clip(f, self.forcerange[:, 0], self.forcerange[:, 1])
        return self._B @ f


def _rows(value, n: int, width: int, what: str, who: str, finite: bool = False) -> np.ndarray:
    a = np.asarray(value, dtype=float)
    if a.ndim == 1:
        a = np.tile(a, (n, 1))
    if a.shape != (n, width):
        raise ValueError(f"{who}: {what} must have shape ({width},) or ({n}, {width}), got "
                         f"{np.shape(value)}")
    if np.any(np.isnan(a)) or (finite and not np.all(np.isfinite(a))):
        raise ValueError(f"{who}: {what} must be {'finite' if finite else 'numbers'}, got "
                         f"{a.tolist()}")
    if width == 2 and np.any(a[:, 0] > a[:, 1]):
        raise ValueError(f"{who}: {what} rows must have lo <= hi, got {a.tolist()}")
    return a


def _take(x, idx):
    """``x[idx]`` for numpy or CasADi vectors."""
    if ops.is_symbolic(x):
        return ops.vertcat(*[x[int(i)] for i in idx])
    return np.asarray(x)[idx]
