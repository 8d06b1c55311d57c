"""Discrete-time approximations of continuous systems with the input held over each
period (Drake's ``DiscreteTimeApproximation``): exact for linear and affine systems, Runge-
Kutta for nonlinear ones."""
from __future__ import annotations

import math
from typing import Optional

import casadi as ca
import numpy as np
from scipy.linalg import expm

from solvers import ops
from ..errors import SymbolicEvaluationError
from ..leaf_system import LeafSystem
from ..symbolic import converted_input_ports, to_casadi
from ..system import System
from .linear import AffineSystem, LinearSystem

__all__ = ["discrete_time_approximation", "DiscreteTimeApproximation"]


def discrete_time_approximation(system: System, time_period: float,
                                integration_timestep: Optional[float] = None):
    r"""A discrete-time system that equals ``system`` at the sample times, with the input
    held (zero-order hold) over each period h.

    Linear and affine systems are discretized exactly:

    .. math::

        \exp\left(h \begin{bmatrix} A & B & f_0 \\ 0 & 0 & 0 \\ 0 & 0 & 0
        \end{bmatrix}\right) = \begin{bmatrix} A_d & B_d & f_{0d} \\ 0 & I & 0 \\
        0 & 0 & 1 \end{bmatrix},

    so ``x[n+1] = A_d x[n] + B_d u[n] + f0_d`` equals the continuous solution at the sample
    times; ``C``, ``D`` and ``y0`` are unchanged (Franklin, Powell and Workman, *Digital
    Control of Dynamic Systems*, 3rd ed., sec. 4.3.3; scipy's ``cont2discrete`` with
    ``method="zoh"`` gives the same A_d, B_d). Any other symbolic-capable continuous
    system becomes a :class:`DiscreteTimeApproximation` (classical Runge-Kutta steps).

    Parameters
    ----------
    system : System
        Continuous: a LinearSystem / AffineSystem with ``time_period == 0``, or any
        symbolic-capable leaf or diagram with continuous state and no discrete or abstract
        state.
    time_period : float
        h > 0.
    integration_timestep : float, optional
        Largest Runge-Kutta step for nonlinear systems (default: one step per period);
        ignored for linear and affine systems.

    Returns
    -------
    LinearSystem, AffineSystem or DiscreteTimeApproximation
        Named ``"<name>_discrete"``.

    Raises
    ------
    SymbolicEvaluationError
        (a ``TypeError``) For a system that cannot be converted to CasADi (the message names
        the block).
    ValueError
        For a system that is already discrete or a bad ``time_period``.
    """
    h = _positive(time_period, "time_period")
    if not isinstance(system, LinearSystem):
        return DiscreteTimeApproximation(system, h, integration_timestep)
    if system.time_period > 0:
        raise ValueError(f"discrete_time_approximation: system '{system.name}' is already discrete "
                         f"(time_period {system.time_period}); expected a continuous one")
    A, B, f0 = system.A, system.B, system.f0
    nx, nu = B.shape
    M = np.zeros((nx + nu + 1, nx + nu + 1))
    M[:nx, :nx], M[:nx, nx:nx + nu], M[:nx, -1] = A, B, f0
    E = expm(M * h)
    Ad, Bd, f0d = E[:nx, :nx], E[:nx, nx:nx + nu], E[:nx, -1]
    name = f"{system.name}_discrete"
    if isinstance(system, AffineSystem):
        return AffineSystem(Ad, Bd, f0d, system.C, system.D, system.y0, time_period=h, name=name)
    return LinearSystem(Ad, Bd, system.C, system.D, time_period=h, name=name)


def _positive(value, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)) \
            or not math.isfinite(float(value)) or value <= 0:
        raise ValueError(f"discrete_time_approximation: {what} must be a finite number > 0 "
                         f"(seconds), got {value!r}")
    return float(value)


class DiscreteTimeApproximation(LeafSystem):
    """A continuous system sampled every h with its input held: ``x[n+1] = Phi_h(t_n, x[n],
    u[n])``, ``y = g(t, x, u)``, where ``Phi_h`` is ``m`` classical Runge-Kutta (RK4) steps
    of size h/m of ``xdot = f(t, x, u)`` (``m = ceil(h / integration_timestep)``, 1 by
    default; local error O((h/m)^5)).

    Made by :func:`discrete_time_approximation` for systems other than Linear/AffineSystem.
    The wrapped system is converted once with :func:`~systems.symbolic.to_casadi`; the
    step is one CasADi function, so this block is symbolic-capable too. Ports mirror the
    wrapped system's vector inputs and outputs (same names and sizes); the discrete state
    starts at the wrapped system's default continuous state; its numeric parameters are
    frozen at their default values.

    Parameters
    ----------
    system : System
        Symbolic-capable, with continuous state, no discrete or abstract state.
    time_period : float
    integration_timestep : float, optional

    References
    ----------
    Drake, ``drake/systems/analysis/discrete_time_approximation.h``.
    """

    def __init__(self, system: System, time_period: float,
                 integration_timestep: Optional[float] = None, name: Optional[str] = None):
        super().__init__(name or f"{getattr(system, 'name', 'system')}_discrete")
        if not isinstance(system, System):
            raise TypeError(f"discrete_time_approximation: expected a System, got {type(system).__name__}")
        h = _positive(time_period, "time_period")
        if system.num_continuous_states() == 0 or system.num_discrete_states() or \
                system.num_abstract_states():
            raise ValueError(f"discrete_time_approximation: system '{system.name}' must have continuous "
                             f"state and no discrete or abstract state (it has "
                             f"{system.num_continuous_states()} continuous, "
                             f"{system.num_discrete_states()} discrete, {system.num_abstract_states()} "
                             f"abstract)")
        m = 1 if integration_timestep is None else \
            max(1, math.ceil(h / _positive(integration_timestep, "integration_timestep") - 1e-9))
        try:
            cs = to_casadi(system)
        except SymbolicEvaluationError as exc:
            raise SymbolicEvaluationError(f"discrete_time_approximation: system "
                                          f"'{system.name}' cannot be discretized: {exc}") from exc
        self.time_period, self.substeps, self.wrapped = h, m, system
        ctx = system.create_default_context()
        p = np.array(ctx.parameters, float)
        xd0 = np.zeros(0)
        t, x, u = ca.SX.sym("t"), ca.SX.sym("x", cs.nx), ca.SX.sym("u", cs.nu)
        dt = h / m
        xk = x
        for k in range(m):
            tk = t + k * dt
            k1 = cs.f(tk, xk, xd0, u, p)
            k2 = cs.f(tk + dt / 2, xk + dt / 2 * k1, xd0, u, p)
            k3 = cs.f(tk + dt / 2, xk + dt / 2 * k2, xd0, u, p)
            k4 = cs.f(tk + dt, xk + dt * k3, xd0, u, p)
            xk = xk + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        self._step = ca.Function("step", [t, x, u], [xk])
        self._out = ca.Function("output", [t, x, u], [cs.g(t, x, xd0, u, p)])
        self._ins = [self.declare_input_port(port.name, port.size) for port in converted_input_ports(system)]
        self.declare_discrete_state(np.array(ctx.continuous_state, float))
        self.declare_periodic_discrete_update(h, 0.0, lambda c: self._eval(self._step, c))
        for port in system.output_ports:
            if port.size is None:
                continue
            sl = cs.output_slices[port.name]
            self.declare_output_port(port.name, port.size,
                                     (lambda s: lambda c: self._eval(self._out, c)[s])(sl))

    def _eval(self, fun, context):
        u = [p.eval(context) for p in self._ins]
        u = ops.vertcat(*u) if u else np.zeros(0)
        t, x = context.time, context.discrete_state
        out = fun(t, x, u)
        if ops.any_symbolic(t, x, u):
            return out
        return np.asarray(out.full(), dtype=float).ravel()
