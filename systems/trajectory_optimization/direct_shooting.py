"""Direct (multiple) shooting: an integrator per interval.

The state at each knot is a decision variable and each interval's end must equal the
integration of the dynamics from its start under a zero-order-hold input:
``x_{k+1} = Phi_h(t_k, x_k, u_k)``, with ``Phi`` ``m`` classical Runge-Kutta 4 steps
(``integrator="rk4"``) or CasADi's CVODES (``integrator="cvodes"``, variable-step BDF with
sensitivities). The running cost is ``sum_{k<N-1} h g(t_k, x_k, u_k)``. (H. G. Bock and K. J.
Plitt, "A multiple shooting algorithm for direct solution of optimal control problems", IFAC
1984.)
"""
from __future__ import annotations

import casadi as ca
import numpy as np

from .multiple_shooting import MultipleShooting
from .result import TrajectoryOptimizationError

__all__ = ["DirectShooting"]


class DirectShooting(MultipleShooting):
    """Multiple shooting with a fixed interval length (module docstring).

    Parameters
    ----------
    system : System
        With continuous state.
    context : Context
    num_intervals : int
        Number of intervals (``num_intervals + 1`` knots), >= 1.
    time_step : float
        Interval length ``h > 0``.
    integrator : {"rk4", "cvodes"}
    steps_per_interval : int
        RK4 steps per interval (``"rk4"``).
    input_port_index : int or str, optional

    Raises
    ------
    TrajectoryOptimizationError
        No continuous state, an unknown integrator, a bad step count.
    """

    name = "DirectShooting"

    def __init__(self, system, context, num_intervals: int, time_step: float, *,
                 integrator: str = "rk4", steps_per_interval: int = 4,
                 input_port_index=None) -> None:
        who = f"DirectShooting of system '{system.name}'"
        if system.num_continuous_states() == 0:
            raise TrajectoryOptimizationError(f"{who}: the system has no continuous state")
        if integrator not in ("rk4", "cvodes"):
            raise TrajectoryOptimizationError(f"{who}: integrator must be 'rk4' or 'cvodes', got "
                                              f"{integrator!r}")
        if int(steps_per_interval) != steps_per_interval or steps_per_interval < 1:
            raise TrajectoryOptimizationError(f"{who}: steps_per_interval must be a whole number "
                                              f">= 1, got {steps_per_interval!r}")
        try:
            n_int = int(num_intervals)
        except (TypeError, ValueError):
            n_int = -1
        if n_int != num_intervals or n_int < 1:
            raise TrajectoryOptimizationError(f"{who}: num_intervals must be a whole number >= 1, "
                                              f"got {num_intervals!r}")
        self.integrator = integrator
        self.steps_per_interval = int(steps_per_interval)
        super().__init__(system, context, n_int + 1, input_port_index=input_port_index,
                         fixed_time_step=time_step)

    def _flow(self) -> ca.Function:
        """``Phi(t, x, u) -> x(t + h)`` with ``u`` held."""
        f, h = self._dynamics, self.fixed_time_step
        t = ca.SX.sym("t")
        x = ca.SX.sym("x", self.nx)
        u = ca.SX.sym("u", self.nu)
        if self.integrator == "rk4":
            m = self.steps_per_interval
            dt = h / m
            xs, ts = x, t
            for _ in range(m):
                k1 = f(ts, xs, u)
                k2 = f(ts + dt / 2, xs + dt / 2 * k1, u)
                k3 = f(ts + dt / 2, xs + dt / 2 * k2, u)
                k4 = f(ts + dt, xs + dt * k3, u)
                xs = xs + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
                ts = ts + dt
            return ca.Function("flow", [t, x, u], [xs])
        tau = ca.SX.sym("tau")
        dae = {"x": x, "p": ca.vertcat(t, u), "t": tau,
               "ode": f(t + tau, x, u)}
        I = ca.integrator("interval", "cvodes", dae, 0.0, h, {"abstol": 1e-10, "reltol": 1e-10})
        tp, xp, up = ca.MX.sym("t"), ca.MX.sym("x", self.nx), ca.MX.sym("u", self.nu)
        return ca.Function("flow", [tp, xp, up],
                           [I(x0=xp, p=ca.vertcat(tp, up))["xf"]])

    def add_dynamic_constraints(self) -> None:
        """``x_{k+1} = Phi(t_k, x_k, u_k)`` for every interval."""
        N = self.N
        nxt = self._flow().map(N - 1)(self._T[:, :-1], self._X[:, :-1], self._U[:, :-1])
        self.opti.subject_to(ca.vec(self._X[:, 1:] - nxt) == 0)

    def _running_cost_weights(self):
        return ca.MX(ca.DM(np.concatenate([np.full(self.N - 1, self.fixed_time_step), [0.0]])))

    def solve(self, solver: str = "ipopt", options=None, verbose: bool = False, warm_start=None):
        """As :meth:`MultipleShooting.solve` (CVODES intervals are not expanded to SX)."""
        if self.integrator == "cvodes":
            opts = dict(options or {})
            opts.setdefault("hessian_approximation", "limited-memory")
            return self._solve_unexpanded(solver, opts, verbose, warm_start)
        return super().solve(solver, options, verbose, warm_start)

    def _solve_unexpanded(self, solver, options, verbose, warm_start):
        self._expand = False
        try:
            return super().solve(solver, options, verbose, warm_start)
        finally:
            self._expand = True
