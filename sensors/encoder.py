"""``Encoder``: incremental joint encoders sampled periodically.

Each selected joint coordinate is read every ``sample_period`` as a whole number of counts,
``floor(q / step + 1/2)`` with ``step = 2 pi / counts_per_revolution`` (rad per count for a
revolute joint; for a prismatic joint give ``counts_per_meter`` instead), and the output
``position`` holds ``counts * step`` until the next sample (a zero-order hold, as a
controller reading the encoder sees it). ``counts`` are also an output. The quantization
error is at most half a count.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from solvers import ops
from .base import Sensor

__all__ = ["Encoder"]


class Encoder(Sensor):
    """Quantized, sampled joint positions (module docstring).

    Parameters
    ----------
    tree : RigidBodyTree
    joints : str or sequence of str
        One-DOF joints (revolute, prismatic, screw).
    counts_per_revolution : float or array_like
        Per joint, > 0 (counts per 2 pi of the coordinate).
    sample_period : float
        > 0 (s).
    name : str, optional

    Raises
    ------
    ValueError
        An unknown joint, a joint with more than one coordinate, a non-positive resolution or
        sample period.
    """

    def __init__(self, tree, joints, counts_per_revolution, sample_period: float,
                 name: Optional[str] = None):
        super().__init__(tree, name=name)
        who = f"Encoder '{self.name}'"
        chosen, qi, _ = tree.joint_coordinates(joints, one_dof=True, who=who)
        cpr = np.atleast_1d(np.asarray(counts_per_revolution, dtype=float)).ravel()
        if cpr.shape[0] == 1:
            cpr = np.full(len(qi), cpr[0])
        if cpr.shape[0] != len(qi) or not np.all(np.isfinite(cpr)) or np.any(cpr <= 0):
            raise ValueError(f"{who}: counts_per_revolution must be > 0, one per joint "
                             f"({len(qi)}), got {counts_per_revolution!r}")
        h = float(sample_period)
        if not (np.isfinite(h) and h > 0):
            raise ValueError(f"{who}: sample_period must be finite and > 0, got {sample_period!r}")
        self.joints, self.sample_period = [j.name for j in chosen], h
        self._qi = qi
        self.step = 2.0 * np.pi / cpr
        n = len(qi)
        self.declare_discrete_state(np.zeros(n))
        self.declare_periodic_discrete_update(h, 0.0, self._sample)
        self.declare_output_port("counts", n, lambda c: c.discrete_state, feedthrough=False,
                                 prerequisites=["discrete_state"])
        self.declare_output_port("position", n, lambda c: c.discrete_state * self.step,
                                 feedthrough=False, prerequisites=["discrete_state"])

    def _sample(self, context):
        x = self.state_port.eval(context)
        q = (ops.vertcat(*[x[int(i)] for i in self._qi]) if ops.is_symbolic(x)
             else np.asarray(x, float)[self._qi])
        return ops.floor(q / self.step + 0.5)
