"""Sampled-data blocks: ZeroOrderHold (vector or abstract values), DiscreteTimeDelay,
DiscreteDerivative and DiscreteTimeIntegrator.

Each samples at ``offset + k * period``; with the Simulator's (Drake's) event order, a
value held over ``[kT, (k+1)T)`` is the one sampled at ``kT``, and a publish at exactly
``kT`` still sees the previous one.
"""
from __future__ import annotations

import copy
import math
from typing import Any, Optional

import numpy as np

from solvers import ops
from ..leaf_system import LeafSystem

__all__ = ["ZeroOrderHold", "DiscreteTimeDelay", "DiscreteDerivative", "DiscreteTimeIntegrator"]


def _period(value, owner: str, what: str = "period") -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)) \
            or not math.isfinite(float(value)) or float(value) <= 0:
        raise ValueError(f"{owner}: {what} must be a finite number > 0 (seconds), got {value!r}")
    return float(value)


def _size(value, owner: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{owner}: the vector size must be an integer >= 1, got {value!r}")
    return int(value)


def _initial(value, n: int, owner: str) -> np.ndarray:
    """``value`` as (n,) floats (zeros when None), or a ValueError naming ``initial_value``."""
    if value is None:
        return np.zeros(n)
    v = np.asarray(value, dtype=float)
    if v.shape not in ((n,), (n, 1)):
        raise ValueError(f"{owner}: initial_value must have shape ({n},), got shape {v.shape}")
    return v.reshape(n)


class ZeroOrderHold(LeafSystem):
    """Samples ``u`` at t = offset + k * period and holds it: y = the last sample.

    Vector form ``ZeroOrderHold(period_sec, vector_size)``: the held value is discrete
    state (initially ``initial_value`` or zeros) updated by a periodic discrete update
    (symbolic-capable). Abstract form ``ZeroOrderHold(period_sec,
    abstract_model_value=value)`` (Drake's): input and output carry any Python object; the
    held copy is abstract state (initially a copy of ``abstract_model_value``) updated by
    a periodic unrestricted update. The output has no direct feedthrough, so a
    ZeroOrderHold breaks algebraic loops.

    Parameters
    ----------
    period_sec : float
        Sampling period T > 0.
    vector_size : int, optional
        Size of ``u`` and ``y`` (vector form).
    offset_sec : float
        Time of the first sample.
    initial_value : array_like of shape (vector_size,), optional
        Held value before the first sample (vector form).
    abstract_model_value : object, optional
        Model and initial held value (abstract form; give it instead of ``vector_size``).
    """

    def __init__(self, period_sec: float, vector_size: Optional[int] = None, offset_sec: float = 0.0,
                 initial_value=None, name: Optional[str] = None, *, abstract_model_value: Any = None):
        super().__init__(name)
        owner = f"ZeroOrderHold '{self.name}'"
        self.period = _period(period_sec, owner, "period_sec")
        if (vector_size is None) == (abstract_model_value is None):
            raise ValueError(f"{owner}: give exactly one of vector_size (a vector hold) and "
                             f"abstract_model_value (an abstract hold)")
        if abstract_model_value is not None:
            u = self.declare_abstract_input_port("u", abstract_model_value)
            self.declare_abstract_state(copy.deepcopy(abstract_model_value))

            def sample(context, state):
                state.set_abstract_state(0, copy.deepcopy(u.eval(context)))

            self.declare_periodic_unrestricted_update(self.period, float(offset_sec), sample)
            self.declare_abstract_output_port("y", lambda c: c.abstract_state[0],
                                              model_value=abstract_model_value, feedthrough=False,
                                              prerequisites=["abstract_state"])
            return
        n = _size(vector_size, owner)
        u = self.declare_input_port("u", n)
        self.declare_discrete_state(_initial(initial_value, n, owner))
        self.declare_periodic_discrete_update(self.period, float(offset_sec), lambda c: u.eval(c))
        self.declare_output_port("y", n, lambda c: c.discrete_state, feedthrough=False,
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


class DiscreteDerivative(LeafSystem):
    """Discrete-time derivative of the input: ``dudt = (u[n] - u[n-1]) / h``, n = floor(t/h).

    Drake's ``DiscreteDerivative``: the discrete state is ``x0 = u[n]``, ``x1 = u[n-1]``
    (initially zeros) and, with ``suppress_initial_transient`` (default), a sample count
    ``x2``; the update every h is

    .. math:: x_0^+ = u,\\quad x_1^+ = x_0,\\quad x_2^+ = x_2 + 1,

    and the output is ``(x0 - x1)/h``, or 0 while ``x2 < 2`` (fewer than two samples
    taken) when the transient is suppressed. No direct feedthrough.

    Parameters
    ----------
    num_inputs : int
        Size of ``u`` and ``dudt``.
    time_step : float
        Sampling period h > 0.
    suppress_initial_transient : bool

    References
    ----------
    Drake, ``drake/systems/primitives/discrete_derivative.h``.
    """

    def __init__(self, num_inputs: int, time_step: float, suppress_initial_transient: bool = True,
                 name: Optional[str] = None):
        super().__init__(name)
        owner = f"DiscreteDerivative '{self.name}'"
        n = self._n = _size(num_inputs, owner)
        h = self._h = _period(time_step, owner, "time_step")
        self._suppress = bool(suppress_initial_transient)
        u = self.declare_input_port("u", n)
        self.declare_discrete_state(2 * n + (1 if self._suppress else 0))

        def update(c):
            xd = c.discrete_state
            parts = [u.eval(c), xd[:n]]
            if self._suppress:
                parts.append(xd[2 * n:2 * n + 1] + 1.0)
            return ops.vertcat(*parts)

        def output(c):
            xd = c.discrete_state
            dudt = (xd[:n] - xd[n:2 * n]) / h
            if not self._suppress:
                return dudt
            return ops.if_else(xd[2 * n] >= 2.0, dudt, 0.0 * dudt)

        self.declare_periodic_discrete_update(h, 0.0, update)
        self.declare_output_port("dudt", n, output, feedthrough=False, prerequisites=["discrete_state"])

    def time_step(self) -> float:
        """The sampling period h."""
        return self._h

    def suppress_initial_transient(self) -> bool:
        """Whether the output is zero until two samples are taken."""
        return self._suppress

    def set_input_history(self, context, u_n, u_n_minus_1=None) -> None:
        """Set ``u[n]`` and ``u[n-1]`` (default: both ``u_n``, a zero derivative) in
        ``context``; marks the history as complete (Drake's ``set_input_history``)."""
        n = self._n
        a = np.asarray(u_n, float).reshape(-1)
        b = a if u_n_minus_1 is None else np.asarray(u_n_minus_1, float).reshape(-1)
        for what, v in (("u_n", a), ("u_n_minus_1", b)):
            if v.shape[0] != n:
                raise ValueError(f"DiscreteDerivative '{self.name}'.set_input_history: {what} has "
                                 f"size {v.shape[0]}, expected {n}")
        xd = np.concatenate([a, b, [2.0]] if self._suppress else [a, b])
        self.get_my_context_from_root(context).set_discrete_state(xd)


class DiscreteTimeIntegrator(LeafSystem):
    """Explicit-Euler integrator in discrete time: ``x[n+1] = x[n] + h u[n]``, ``y = x``.

    Drake's ``DiscreteTimeIntegrator``: input ``u``, output ``y`` (no direct
    feedthrough), discrete state ``x`` of ``size`` (initially zeros, or
    ``initial_value``), updated every ``time_step`` h.

    Parameters
    ----------
    size : int
    time_step : float
        h > 0.
    initial_value : array_like of shape (size,), optional

    References
    ----------
    Drake, ``drake/systems/primitives/discrete_time_integrator.h``.
    """

    def __init__(self, size: int, time_step: float, initial_value=None, name: Optional[str] = None):
        super().__init__(name)
        owner = f"DiscreteTimeIntegrator '{self.name}'"
        n = self._n = _size(size, owner)
        h = self._h = _period(time_step, owner, "time_step")
        u = self.declare_input_port("u", n)
        self.declare_discrete_state(_initial(initial_value, n, owner))
        self.declare_periodic_discrete_update(h, 0.0, lambda c: c.discrete_state + h * u.eval(c))
        self.declare_output_port("y", n, lambda c: c.discrete_state, feedthrough=False,
                                 prerequisites=["discrete_state"])

    def time_step(self) -> float:
        """The step h."""
        return self._h

    def set_integral_value(self, context, value) -> None:
        """Set the integral ``x`` in ``context`` (size checked)."""
        v = np.asarray(value, float).reshape(-1)
        if v.shape[0] != self._n:
            raise ValueError(f"DiscreteTimeIntegrator '{self.name}'.set_integral_value: got "
                             f"{v.shape[0]} values, expected {self._n}")
        self.get_my_context_from_root(context).set_discrete_state(v)
