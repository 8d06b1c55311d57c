"""Joint-space actuators: a command per selected joint degree of freedom."""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from solvers import ops
from .base import Actuator

__all__ = ["GeneralizedForceActuator"]


class GeneralizedForceActuator(Actuator):
    """tau[v_i] = clip(gear_i * command_i, -effort_i, effort_i) on selected joint DOFs; with
    ``report_saturation`` an output ``saturated`` (one per command, 0 or 1) reports which
    commands are clipped.

    Parameters
    ----------
    tree : RigidBodyTree
    joints : sequence of str
        Joint names; every velocity DOF of each joint gets one command, in joint order.
    gear_ratio : float or array_like
        Per command (scalar broadcasts); the joint torque is ``gear_ratio * command``.
    effort_limit : float or array_like, optional
        Per command, on the joint side; default: the joints' own effort limits
        (``inf`` when a joint has none).
    report_saturation : bool
        Add the output port ``saturated``.

    Raises
    ------
    ValueError
        An unknown joint, a joint without velocity DOFs (a weld), or a gear ratio / limit
        whose size does not match the number of commands.
    """

    def __init__(self, tree, joints: Sequence[str], gear_ratio=1.0, effort_limit=None,
                 name: Optional[str] = None, *, report_saturation: bool = False):
        tree.finalize()
        if isinstance(joints, str):
            joints = [joints]
        idx, limits = [], []
        for jn in joints:
            try:
                j = tree.get_joint(jn)
            except Exception as exc:  # noqa: BLE001 - reraise with the actuator's view
                raise ValueError(f"GeneralizedForceActuator: unknown joint {jn!r} in tree "
                                 f"'{tree.name}' ({exc})") from None
            if j.nv == 0:
                raise ValueError(f"GeneralizedForceActuator: joint '{jn}' ({j.type}) has no "
                                 f"velocity degree of freedom to actuate")
            idx.extend(range(j.v_start, j.v_start + j.nv))
            lim = getattr(j, "effort_limit", None)
            lim = np.full(j.nv, np.inf) if lim is None else np.broadcast_to(np.asarray(lim, float), (j.nv,))
            limits.extend(lim)
        n = len(idx)
        self.v_indices = np.asarray(idx, dtype=int)
        self.gear_ratio = self._per_command(gear_ratio, n, "gear_ratio")
        self.effort_limit = (np.asarray(limits, float) if effort_limit is None
                             else self._per_command(effort_limit, n, "effort_limit"))
        if np.any(self.effort_limit <= 0):
            raise ValueError(f"GeneralizedForceActuator: effort limits must be > 0, got {self.effort_limit}")
        self._B = np.zeros((tree.nv, n))
        self._B[self.v_indices, np.arange(n)] = 1.0
        self.joints = list(joints)
        super().__init__(tree, n, name)
        if report_saturation:
            self.declare_output_port("saturated", n, self._saturated, feedthrough=True)

    @staticmethod
    def _per_command(value, n, what):
        arr = np.atleast_1d(np.asarray(value, float)).ravel()
        if arr.shape[0] == 1:
            arr = np.full(n, arr[0])
        if arr.shape[0] != n:
            raise ValueError(f"GeneralizedForceActuator: {what} has size {arr.shape[0]} but the "
                             f"joints give {n} commands")
        return arr

    def _saturated(self, context):
        """1 where the commanded joint effort exceeds its limit (the output is clipped), else 0
        (on symbols a 0/1 expression with zero derivative)."""
        effort = self.gear_ratio * self.command_port.eval(context)
        if ops.is_symbolic(effort):
            import casadi as ca
            return ca.fabs(effort) > ca.DM(self.effort_limit)
        return (np.abs(np.asarray(effort, float)) > self.effort_limit).astype(float)

    def generalized_force(self, context, q, v, command):
        """``B clip(gear * command, -effort, effort)`` (nv)."""
        lim = self.effort_limit
        tau_joint = self.gear_ratio * command
        if np.all(np.isinf(lim)):
            return self._B @ tau_joint
        return self._B @ ops.clip(tau_joint, -lim, lim)
