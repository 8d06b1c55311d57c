"""Direct transcription: fixed time step, forward Euler for continuous systems and the exact
discrete update for discrete-time systems.

Continuous: ``x_{k+1} = x_k + h f(t_k, x_k, u_k)``; discrete (period ``h``): ``x_{k+1} =
update(t_k, x_k, u_k)``. The running cost is ``sum_{k<N-1} h g(t_k, x_k, u_k)`` (Drake's
``DirectTranscription`` conventions).
"""
from __future__ import annotations

import casadi as ca
import numpy as np

from .multiple_shooting import MultipleShooting
from .result import TrajectoryOptimizationError

__all__ = ["DirectTranscription"]


class DirectTranscription(MultipleShooting):
    """Transcription with a fixed time step (module docstring).

    Parameters
    ----------
    system : System
        Continuous (forward Euler) or discrete-time (its periodic update, whose period must
        equal ``time_step``).
    context : Context
    num_time_samples : int
        ``N >= 2`` knots.
    time_step : float
        ``h > 0``.
    input_port_index : int or str, optional

    Raises
    ------
    TrajectoryOptimizationError
        A system with both continuous and discrete state, a discrete system whose period is
        not ``time_step``, or any error of :class:`MultipleShooting`.
    """

    name = "DirectTranscription"

    def __init__(self, system, context, num_time_samples: int, time_step: float,
                 input_port_index=None) -> None:
        nx, nxd = system.num_continuous_states(), system.num_discrete_states()
        who = f"DirectTranscription of system '{system.name}'"
        if nx and nxd:
            raise TrajectoryOptimizationError(f"{who}: the system has both continuous and "
                                              "discrete state; transcribe one kind")
        if not (nx or nxd):
            raise TrajectoryOptimizationError(f"{who}: the system has no state")
        discrete = nxd > 0
        super().__init__(system, context, num_time_samples, input_port_index=input_port_index,
                         fixed_time_step=time_step, discrete=discrete)
        if discrete:
            period = self.cs.update_period
            if period is None or abs(period - float(time_step)) > 1e-12 * max(1.0, period):
                raise TrajectoryOptimizationError(f"{who}: time_step {time_step} differs from "
                                                  f"the system's update period {period}")

    def add_dynamic_constraints(self) -> None:
        """``x_{k+1} = x_k + h f_k`` (continuous) or ``x_{k+1} = update_k`` (discrete)."""
        N = self.N
        R = self._dynamics.map(N - 1)(self._T[:, :-1], self._X[:, :-1], self._U[:, :-1])
        if self.discrete:
            nxt = R
        else:
            nxt = self._X[:, :-1] + self.fixed_time_step * R
        self.opti.subject_to(ca.vec(self._X[:, 1:] - nxt) == 0)

    def _running_cost_weights(self):
        return ca.MX(ca.DM(np.concatenate([np.full(self.N - 1, self.fixed_time_step), [0.0]])))
