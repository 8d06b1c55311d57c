"""Sampled-data blocks: ZeroOrderHold and DiscreteTimeDelay."""
from __future__ import annotations

from typing import Optional

import numpy as np

from solvers import ops
from ..leaf_system import LeafSystem

__all__ = ["ZeroOrderHold", "DiscreteTimeDelay"]


class ZeroOrderHold(LeafSystem):
    """Samples ``u`` at t = offset + k * period and holds it: y = the last sample.

    The held value is discrete state (initially ``initial_value`` or zeros); the output
    has no direct feedthrough, so a ZeroOrderHold breaks algebraic loops.
    """

    def __init__(self, period_sec: float, vector_size: int, offset_sec: float = 0.0,
                 initial_value=None, name: Optional[str] = None):
        super().__init__(name)
        self.period = float(period_sec)
        u = self.declare_input_port("u", vector_size)
        init = np.zeros(vector_size) if initial_value is None else initial_value
        self.declare_discrete_state(np.asarray(init, dtype=float))
        self.declare_periodic_discrete_update(self.period, float(offset_sec), lambda c: u.eval(c))
        self.declare_output_port("y", vector_size, lambda c: c.discrete_state, feedthrough=False,
                                 prerequisites=["discrete_state"])


class DiscreteTimeDelay(LeafSystem):
    """y[n] = u[n - delay_steps], sampled every ``update_sec`` (a shift register).

    The state holds the last ``delay_steps + 1`` samples, oldest first (initially zeros):
    after the update at step n it is [u[n - delay_steps], ..., u[n]] and the output is its
    oldest entry, so the output held over [n T, (n + 1) T) is u[n - delay_steps].
    """

    def __init__(self, update_sec: float, delay_steps: int, vector_size: int,
                 name: Optional[str] = None):
        super().__init__(name)
        if delay_steps < 1:
            raise ValueError(f"DiscreteTimeDelay: delay_steps must be >= 1, got {delay_steps}")
        self.period, self.delay_steps, n = float(update_sec), int(delay_steps), int(vector_size)
        u = self.declare_input_port("u", n)
        self.declare_discrete_state(n * (self.delay_steps + 1))
        self.declare_periodic_discrete_update(
            self.period, 0.0, lambda c: ops.vertcat(c.discrete_state[n:], u.eval(c)))
        self.declare_output_port("y", n, lambda c: c.discrete_state[:n], feedthrough=False,
                                 prerequisites=["discrete_state"])
