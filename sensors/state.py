"""State sensors: the full state, or selected joints' positions and velocities."""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np

from solvers import ops
from .base import Sensor

__all__ = ["FullStateSensor", "JointStateSensor"]


class FullStateSensor(Sensor):
    """Output ``state`` = [q; v] (nq + nv)."""

    def __init__(self, tree, name: Optional[str] = None):
        super().__init__(tree, name=name)
        self.declare_output_port("state", self.nq + self.nv, lambda c: self.state_port.eval(c),
                                 feedthrough=True, prerequisites=())


class JointStateSensor(Sensor):
    """Output ``joint_state`` = [q of the joints; v of the joints], joints in the given order."""

    def __init__(self, tree, joints: Sequence[str], name: Optional[str] = None):
        tree.finalize()
        if isinstance(joints, str):
            joints = [joints]
        qi, vi = [], []
        for jn in joints:
            try:
                j = tree.get_joint(jn)
            except Exception as exc:  # noqa: BLE001
                raise ValueError(f"JointStateSensor: unknown joint {jn!r} in tree '{tree.name}' ({exc})") from None
            qi.extend(range(j.q_start, j.q_start + j.nq))
            vi.extend(range(j.v_start, j.v_start + j.nv))
        super().__init__(tree, name=name)
        self.joints = list(joints)
        self.indices = np.concatenate([np.asarray(qi, int), self.nq + np.asarray(vi, int)])
        idx = [int(i) for i in self.indices]
        self.declare_output_port("joint_state", len(idx),
                                 lambda c: ops.vertcat(*[self.state_port.eval(c)[i] for i in idx]),
                                 feedthrough=True, prerequisites=())
