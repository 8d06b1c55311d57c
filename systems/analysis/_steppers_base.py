"""The steppers' base class and scipy's ``OdeSolver`` classes as steppers (private; every name
is public in :mod:`systems.analysis.integrators`, which documents the stepper contract)."""
from __future__ import annotations

import math
from typing import Callable, Optional, Tuple

import numpy as np
import scipy.integrate

from ..errors import StepSizeError

__all__ = ["SCIPY_METHODS", "Stepper", "ScipyStepper"]

SCIPY_METHODS = {
    "RK45": scipy.integrate.RK45, "DOP853": scipy.integrate.DOP853,
    "Radau": scipy.integrate.Radau, "BDF": scipy.integrate.BDF, "LSODA": scipy.integrate.LSODA,
}


class Stepper:
    """Base of the integrators: one accepted step at a time over ``f(t, x)``.

    Attributes
    ----------
    t, x : float, ndarray (nx,)
        The current (last accepted) time and state.
    t_prev, x_prev : float, ndarray (nx,)
        Start of the last step.
    num_rejected : int
        Steps rejected by error control.
    error_controlled : bool
    runs_steps : bool
        Whether :meth:`run` takes runs of steps (else the caller steps one at a time).
    run_steps : int
        Steps accepted by the last :meth:`run`.
    """

    error_controlled = False
    runs_steps = False
    run_steps = 0

    def __init__(self, f: Callable[[float, np.ndarray], np.ndarray]):
        self.f = f
        self.t = self.t_prev = 0.0
        self.x = self.x_prev = np.zeros(0)
        self.num_rejected = 0

    def reset(self, t: float, x: np.ndarray) -> None:
        """Restart at ``(t, x)``, dropping any cached derivative or solver state."""
        self.t = self.t_prev = float(t)
        self.x = self.x_prev = np.array(x, dtype=float)

    def step(self, t_limit: float) -> None:  # pragma: no cover - interface
        """Take one accepted step, ending at or before ``t_limit`` (exactly on it when reached)."""
        raise NotImplementedError

    def run(self, t_limit: float, t_event: float, t_final: float, check) -> None:
        """Accepted steps toward ``t_limit`` until one ends at or after ``t_final``, within
        ``1e-12 max(1, |t|)`` of ``t_event`` or within ``4 ulp`` of ``t_limit`` (the
        Simulator's stops), each new state checked by ``check(t_new, x_new, t)`` when its sum
        is not finite; :attr:`run_steps` counts them, and whatever is raised, the stepper is
        left at the last accepted one. Only when :attr:`runs_steps`."""
        raise NotImplementedError  # pragma: no cover - interface

    def state_at(self, tau: float) -> np.ndarray:  # pragma: no cover - interface
        """The state at ``tau`` in ``[t_prev, t]`` (the last step)."""
        raise NotImplementedError

    @staticmethod
    def _fixed_h(t: float, t_limit: float, h_max: float) -> Tuple[float, float]:
        """Fixed step size and end time, stretched onto ``t_limit`` when within 1e-6 h."""
        remaining = t_limit - t
        if remaining <= h_max * (1.0 + 1e-6):
            return remaining, t_limit
        return h_max, t + h_max


#: Solvers whose ``t_bound`` may be moved between steps (LSODA fixes it in Fortran).
_MOVABLE_BOUND = (scipy.integrate.RK45, scipy.integrate.DOP853, scipy.integrate.Radau,
                  scipy.integrate.BDF)


class ScipyStepper(Stepper):
    """One of scipy's ``OdeSolver`` classes, stepped one step at a time.

    The solver is created with ``t_bound = t_limit``; when the limit moves without a
    state jump its bound is moved (RK45, DOP853, Radau, BDF) or the solver is re-created
    with the last step size as ``first_step`` (LSODA). ``state_at`` uses the solver's
    dense output of the last step.
    """

    error_controlled = True

    def __init__(self, f, method: str, *, max_step: float, rtol: float, atol: float):
        super().__init__(f)
        self.method = method
        self.cls = SCIPY_METHODS[method]
        self.max_step, self.rtol, self.atol = float(max_step), float(rtol), float(atol)
        self._solver = None
        self._dense = None
        self._h_hint: Optional[float] = None
        self._nfev_seen = 0

    def reset(self, t, x) -> None:
        super().reset(t, x)
        self._remember_hint()
        self._solver = None
        self._dense = None

    def _remember_hint(self):
        s = self._solver
        if s is not None:
            h = getattr(s, "h_abs", None)
            if h is None or not math.isfinite(h) or h <= 0:
                h = s.step_size
            if h is not None and h > 0:
                self._h_hint = float(h)

    def _create(self, t_limit):
        first = None
        if self._h_hint is not None:
            first = min(self._h_hint, t_limit - self.t, self.max_step)
            if not first > 0:
                first = None
        self._solver = self.cls(self.f, self.t, self.x, t_limit, max_step=self.max_step,
                                rtol=self.rtol, atol=self.atol, first_step=first)

    def step(self, t_limit: float) -> None:
        s = self._solver
        if s is None:
            self._create(t_limit)
        elif s.t_bound != t_limit:
            if isinstance(s, _MOVABLE_BOUND):
                s.t_bound = t_limit
                s.status = "running"
            else:
                self._remember_hint()
                self._create(t_limit)
        s = self._solver
        msg = s.step()
        if s.status == "failed":
            raise StepSizeError(f"scipy {self.method} failed at t={s.t!r}: {msg}")
        self.t_prev, self.x_prev = self.t, self.x
        self.t, self.x = float(s.t), s.y   # scipy assigns a fresh array every step
        self._dense = None

    def state_at(self, tau: float) -> np.ndarray:
        if tau == self.t:
            return self.x
        if tau == self.t_prev:
            return self.x_prev
        if self._dense is None:
            self._dense = self._solver.dense_output()
        return np.asarray(self._dense(tau), dtype=float)
