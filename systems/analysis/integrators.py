"""Integrators of the :class:`~systems.analysis.Simulator`: explicit Runge-Kutta schemes as
Butcher tables, semi-explicit (symplectic) Euler, and scipy's ``OdeSolver`` classes.

Every integrator is a *stepper* over a derivative function ``f(t, x) -> xdot`` (shape
(nx,)), with one contract (:class:`Stepper`):

* ``reset(t, x)`` restarts it (after a state jump, or when its caches are stale),
* ``step(t_limit)`` takes one accepted step from ``(t, x)`` to ``(t_new, x_new)`` with
  ``t_new <= t_limit``; it lands *exactly* on ``t_limit`` when it reaches it,
* ``state_at(tau)`` gives the state at ``t_prev <= tau <= t`` inside the last step (the
  dense output the simulator uses to isolate witness crossings),
* ``run(t_limit, t_event, t_final, check)``, when ``runs_steps``, takes the steps up to the
  simulator loop's next stop in one call (the same steps as one ``step`` at a time).

Schemes by name (:data:`INTEGRATOR_NAMES`):

=====================  ==========================================================
``explicit_euler``     order 1, fixed step
``semi_explicit_euler`` order 1, fixed step: v+ = v + h vdot(q, v);
                       q+ = q + h N(q) v+; z+ = z + h zdot(q, v, z)
                       (symplectic for mechanical systems, Hairer, Lubich and Wanner,
                       *Geometric Numerical Integration*, 2006, section I.1.2)
``runge_kutta2``       Heun's method (order 2) with an embedded explicit Euler
                       estimate: error-controlled unless ``fixed_step``
``runge_kutta3``       Bogacki-Shampine 3(2) (Bogacki and Shampine 1989, FSAL):
                       error-controlled unless ``fixed_step``
``runge_kutta4``       classical RK4, fixed step
``RK45``, ``DOP853``,  scipy.integrate's OdeSolver classes stepped one step at a time
                       (``RK45`` on a small state: our float Dormand-Prince stepper
                       with scipy's error control, :mod:`systems.analysis._dopri`)
``Radau``, ``BDF``,    (error-controlled; dense output for witness isolation)
``LSODA``
=====================  ==========================================================

Error control (the RK schemes with an embedded estimate): the error of a step is
``err = h * sum_i (b_i - bhat_i) k_i``, measured as the RMS norm of
``err / (atol + rtol * max(|x|, |x_new|))``; a step is accepted when that norm is <= 1
and the next step is ``h * min(5, max(0.2, 0.9 * norm**(-1 / (p_hat + 1))))`` with
``p_hat`` the order of the embedded solution (Hairer, Norsett and Wanner, *Solving ODEs
I*, 1993, section II.4).

States of at most :data:`SMALL_STATE` entries are stepped on Python floats (the numpy
expressions' sums, term by term in the same order: the same numbers); each stage's state
goes to ``f`` as an immutable array (``f`` may keep it). Error-controlled ``runge_kutta3``
and ``RK45`` on such states step through source written out once per state size
(:mod:`systems.analysis._unrolled`: no per-entry loops; the same expressions); where a C
compiler is found, these runs are C loops calling ``f`` for each stage
(:mod:`systems.analysis._native_runs`, built once per machine: the same expressions, the
same bits).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Dict, Optional, Tuple

import numpy as np

from ..errors import StepSizeError
from ._bogacki_shampine import list_valued as _list_valued
from ._bogacki_shampine import unrolled_run as _bs3_run
from ._dopri import DormandPrinceStepper
from ._float_sums import frozen as _frozen
from ._float_sums import lincomb as _lincomb
from ._float_sums import weighted as _weighted
from ._steppers_base import SCIPY_METHODS, ScipyStepper, Stepper

__all__ = [
    "ButcherTableau", "TABLEAUS", "SCIPY_METHODS", "INTEGRATOR_NAMES", "Stepper",
    "RungeKuttaStepper", "SemiExplicitEulerStepper", "ScipyStepper", "StepSizeError",
    "check_integrator_name", "make_stepper",
]


@dataclass(frozen=True)
class ButcherTableau:
    """An explicit Runge-Kutta scheme as data.

    Stages ``k_i = f(t + c_i h, x + h sum_{j<i} a_ij k_j)``; the solution is
    ``x_new = x + h sum_i b_i k_i``; an embedded solution of order ``error_order`` uses
    weights ``b_error`` (``None``: no error estimate, fixed step only).

    Attributes
    ----------
    name : str
    order : int
        Order of ``x_new``.
    c : tuple of float, shape (s,)
    a : tuple of tuples; row i has i entries
    b : tuple of float, shape (s,)
    b_error : tuple of float, shape (s,), or None
    error_order : int
        Order of the embedded solution (0 when there is none).
    fsal : bool
        The last stage is ``f(t + h, x_new)`` ("first same as last"): it is reused as
        the first stage of the next step.
    """

    name: str
    order: int
    c: Tuple[float, ...]
    a: Tuple[Tuple[float, ...], ...]
    b: Tuple[float, ...]
    b_error: Optional[Tuple[float, ...]] = None
    error_order: int = 0
    fsal: bool = False

    @property
    def num_stages(self) -> int:
        """Number of stages s."""
        return len(self.c)

    @property
    def num_solution_stages(self) -> int:
        """Stages needed for ``x_new`` alone (trailing stages with ``b_i = 0`` skipped)."""
        n = len(self.b)
        while n > 1 and self.b[n - 1] == 0.0:
            n -= 1
        return n

    @property
    def has_error_estimate(self) -> bool:
        """Whether an embedded solution gives an error estimate."""
        return self.b_error is not None


EXPLICIT_EULER = ButcherTableau("explicit_euler", 1, (0.0,), ((),), (1.0,))

#: Heun's method with explicit Euler embedded.
RUNGE_KUTTA2 = ButcherTableau(
    "runge_kutta2", 2, (0.0, 1.0), ((), (1.0,)), (0.5, 0.5),
    b_error=(1.0, 0.0), error_order=1)

#: Bogacki-Shampine 3(2), first same as last.
RUNGE_KUTTA3 = ButcherTableau(
    "runge_kutta3", 3, (0.0, 0.5, 0.75, 1.0),
    ((), (0.5,), (0.0, 0.75), (2.0 / 9.0, 1.0 / 3.0, 4.0 / 9.0)),
    (2.0 / 9.0, 1.0 / 3.0, 4.0 / 9.0, 0.0),
    b_error=(7.0 / 24.0, 0.25, 1.0 / 3.0, 0.125), error_order=2, fsal=True)

#: The classical fourth-order Runge-Kutta scheme.
RUNGE_KUTTA4 = ButcherTableau(
    "runge_kutta4", 4, (0.0, 0.5, 0.5, 1.0),
    ((), (0.5,), (0.0, 0.5), (0.0, 0.0, 1.0)),
    (1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0))

TABLEAUS: Dict[str, ButcherTableau] = {
    t.name: t for t in (EXPLICIT_EULER, RUNGE_KUTTA2, RUNGE_KUTTA3, RUNGE_KUTTA4)}

INTEGRATOR_NAMES = ("explicit_euler", "semi_explicit_euler", "runge_kutta2", "runge_kutta3",
                    "runge_kutta4") + tuple(SCIPY_METHODS)

#: A step that ends within this fraction of the limit is stretched to land on it.
_STRETCH = 0.01

#: States up to this size are stepped on Python floats (fewer numpy calls per step).
SMALL_STATE = 16


def check_integrator_name(name: str) -> str:
    """Return ``name`` if it is a known integrator, else raise ValueError listing the choices."""
    if not isinstance(name, str) or name not in INTEGRATOR_NAMES:
        raise ValueError(f"unknown integrator {name!r}; valid choices are "
                         f"{', '.join(INTEGRATOR_NAMES)}")
    return name


def _unchecked(t, x, t0) -> None:
    """No check of the states of single steps (the Simulator checks them itself)."""


def _rms(v: np.ndarray) -> float:
    return math.sqrt(float(v @ v) / v.shape[0])


class RungeKuttaStepper(Stepper):
    """An explicit Runge-Kutta scheme given by a :class:`ButcherTableau`.

    Fixed step ``h = max_step`` (the last step before a limit is shortened, or stretched by
    up to 1e-6 h, to land on it) unless ``error_controlled``. ``state_at`` re-integrates
    one step of the scheme from the start of the last step (as Drake isolates witnesses).
    """

    def __init__(self, f, tableau: ButcherTableau, *, max_step: float, error_controlled: bool,
                 rtol: float = 1e-4, atol: float = 1e-7):
        super().__init__(f)
        if error_controlled and not tableau.has_error_estimate:
            raise ValueError(f"integrator '{tableau.name}' has no error estimate; use it with "
                             f"fixed_step=True")
        self.tableau = tableau
        self._f_list = getattr(f, "as_list", None)
        self.error_controlled = bool(error_controlled)
        self.max_step, self.rtol, self.atol = float(max_step), float(rtol), float(atol)
        tb = tableau
        self._c = tb.c
        self._a = tb.a
        self._b = tb.b
        self._e = None if tb.b_error is None else tuple(b - be for b, be in zip(tb.b, tb.b_error))
        self._e_arr = None if self._e is None else np.array(self._e)
        self._last_stage_x: Optional[np.ndarray] = None
        self._exponent = -1.0 / (tb.error_order + 1.0)
        self._n_sol = tb.num_solution_stages
        self._k0: Optional[np.ndarray] = None      # f(t, x), when known
        self._k0_prev: Optional[np.ndarray] = None  # f(t_prev, x_prev)
        self._h: Optional[float] = None           # next error-controlled step
        # nonzero (index, value) of the stage rows, solution and error weights (float path)
        self._a_nz = tuple(tuple((j, v) for j, v in enumerate(row) if v != 0.0) for row in tb.a)
        self._b_nz = tuple((j, v) for j, v in enumerate(tb.b) if v != 0.0)
        self._e_nz = None if self._e is None else tuple((j, v) for j, v in enumerate(self._e)
                                                        if v != 0.0)
        # error-controlled Bogacki-Shampine on a small state: the written-out runs of steps,
        # made for the state's size at a reset
        self._bs3 = self._bs3_n = None
        self._bs3_ok = self.error_controlled and tableau is RUNGE_KUTTA3

    def _rejected(self, h: float) -> None:
        """A try of the written-out step was rejected; ``h`` is the next one's size."""
        self.num_rejected += 1
        self._h = h

    def _save(self, t, x, k0, t_prev, x_prev, k0_prev, h, steps) -> None:
        """The end of a written-out run (see :mod:`systems.analysis._unrolled`)."""
        self._h, self.run_steps = h, steps
        if steps:
            self.t, self.x, self._k0 = t, x, k0
            self.t_prev, self.x_prev, self._k0_prev = t_prev, x_prev, k0_prev

    def run(self, t_limit: float, t_event: float, t_final: float, check) -> None:
        t, x = self.t, self.x
        k0 = self._k0
        if k0 is None:
            k0 = self.f(t, x)
            k0 = k0.tolist() if type(k0) is np.ndarray else np.asarray(k0, dtype=float).tolist()
        if self._h is None:
            self._h = self._initial_step(t, x, np.array(k0))
        self.run_steps = 0
        self._bs3(t, x, k0, t_limit, self._h, t_event, t_final, check)

    def reset(self, t, x) -> None:
        super().reset(t, x)
        self._k0 = self._k0_prev = None
        n = self.x.shape[0]
        if self._bs3_ok and self._bs3_n != n:
            self._bs3_n = n
            self._bs3 = None if not 0 < n <= SMALL_STATE else _bs3_run(
                n, self._f_list or _list_valued(self.f), self._rejected, self._save,
                error_weights=tuple(w for _, w in self._e_nz), exponent=self._exponent,
                max_step=self.max_step, atol=self.atol, rtol=self.rtol, stretch=_STRETCH,
                name=self.tableau.name)
        self.runs_steps = self._bs3 is not None

    # -------------------------------------------------------------- one step of the scheme
    def _stages(self, t: float, x: np.ndarray, h: float, k0: np.ndarray, n: int) -> list:
        ks = [k0]
        c, a, f = self._c, self._a, self.f
        xi = x
        for i in range(1, n):
            xi = x
            for aij, kj in zip(a[i], ks):
                if aij != 0.0:
                    xi = xi + (h * aij) * kj
            ks.append(f(t + c[i] * h, xi))
        self._last_stage_x = xi
        return ks

    def _combine(self, x, h, weights, ks):
        out = x
        for w, k in zip(weights, ks):
            if w != 0.0:
                out = out + (h * w) * k
        return out

    def _solution(self, t, x, h, k0):
        ks = self._stages(t, x, h, k0, self._n_sol)
        return self._combine(x, h, self._b, ks)

    # -------------------------------------------------------------- stepping
    def step(self, t_limit: float) -> None:
        t, x = self.t, self.x
        if self.runs_steps:   # small state: the written-out step, the same numbers
            self.run(t_limit, math.inf, -math.inf, _unchecked)
            return
        k0 = self._k0 if self._k0 is not None else self.f(t, x)
        if x.shape[0] <= SMALL_STATE:
            if type(k0) is not list:
                k0 = np.asarray(k0, dtype=float).tolist()
            if not self.error_controlled:
                h, t_new = self._fixed_h(t, t_limit, self.max_step)
                ks, xi = self._stages_list(t, x.tolist(), h, k0, self._n_sol)
                x_new, k_new = _frozen(_lincomb(x.tolist(), *_weighted(h, self._b_nz, ks))), None
            else:
                t_new, x_new, k_new = self._controlled_step_list(t, x, k0, t_limit)
            self.t_prev, self.x_prev, self._k0_prev = t, x, k0
            self.t, self.x, self._k0 = t_new, x_new, k_new
            return
        if not self.error_controlled:
            h, t_new = self._fixed_h(t, t_limit, self.max_step)
            x_new = self._solution(t, x, h, k0)
            k_new = None
        else:
            t_new, x_new, k_new = self._controlled_step(t, x, k0, t_limit)
        self.t_prev, self.x_prev, self._k0_prev = t, x, k0
        self.t, self.x, self._k0 = t_new, x_new, k_new

    def _controlled_step(self, t, x, k0, t_limit):
        if self._h is None:
            self._h = self._initial_step(t, x, k0)
        h_min = 16.0 * np.spacing(max(1.0, abs(t)))
        tb = self.tableau
        while True:
            h = min(self._h, self.max_step)
            remaining = t_limit - t
            if remaining <= h * (1.0 + _STRETCH):
                h, t_new = remaining, t_limit
            else:
                t_new = t + h
            ks = self._stages(t, x, h, k0, tb.num_stages)
            if tb.fsal:   # the last stage is evaluated at x_new itself
                x_new, k_last = self._last_stage_x, ks[-1]
            else:
                x_new, k_last = self._combine(x, h, self._b, ks), None
            err = (h * self._e_arr) @ np.array(ks)
            scale = self.atol + self.rtol * np.maximum(np.abs(x), np.abs(x_new))
            norm = _rms(err / scale)
            if self._adapt(norm, h, t, t_new == t_limit, h_min):
                return t_new, x_new, k_last

    def _adapt(self, norm: float, h: float, t: float, on_limit: bool, h_min: float) -> bool:
        """Accept the step of size ``h`` (error ``norm``) or not; set the next step size."""
        if norm <= 1.0:
            factor = 5.0 if norm == 0.0 else min(5.0, 0.9 * norm ** self._exponent)
            proposal, self._h = self._h, h * factor
            if on_limit and factor >= 1.0:
                # A step shortened to land on a limit does not shrink the next one.
                self._h = max(self._h, proposal)
            return True
        self.num_rejected += 1
        factor = 0.2 if not math.isfinite(norm) else max(0.2, 0.9 * norm ** self._exponent)
        self._h = h * factor
        if self._h < h_min:
            raise StepSizeError(f"{self.tableau.name}: step size {self._h:.3g} s fell below the "
                                f"resolution of time at t={t!r} (error norm {norm:.3g})")
        return False

    # -------------------------------------------------------------- the float path
    def _stages_list(self, t: float, x: list, h: float, k0: list, n: int):
        """The stages on lists (as :meth:`_stages`); returns them and the last stage's
        state as a read-only array (None when ``n == 1``)."""
        ks = [k0]
        c, a_nz, f, ndarray, frozen = self._c, self._a_nz, self.f, np.ndarray, _frozen
        f_list = self._f_list   # stage states are frozen: the list variant, when f has one
        xi = None
        for i in range(1, n):
            nz = a_nz[i]
            if len(nz) == 1:   # the usual row of an explicit scheme: one term
                (j, v), = nz
                c0 = h * v
                xi = frozen([a + c0 * p for a, p in zip(x, ks[j])])
            else:
                xi = frozen(_lincomb(x, [h * v for _, v in nz], [ks[j] for j, _ in nz]))
            if f_list is not None:
                ks.append(f_list(t + c[i] * h, xi))
                continue
            k = f(t + c[i] * h, xi)
            ks.append(k.tolist() if type(k) is ndarray else np.asarray(k, dtype=float).tolist())
        return ks, xi

    def _controlled_step_list(self, t, x, k0, t_limit):
        """:meth:`_controlled_step` on Python floats (same stages, same error norm)."""
        if self._h is None:
            self._h = self._initial_step(t, x, np.array(k0))
        h_min = 16.0 * math.ulp(max(1.0, abs(t)))
        tb = self.tableau
        xl = x.tolist()
        n = len(xl)
        atol, rtol, sqrt, e_nz = self.atol, self.rtol, math.sqrt, self._e_nz
        while True:
            h = min(self._h, self.max_step)
            remaining = t_limit - t
            if remaining <= h * (1.0 + _STRETCH):
                h, t_new = remaining, t_limit
            else:
                t_new = t + h
            ks, xi = self._stages_list(t, xl, h, k0, tb.num_stages)
            if tb.fsal:   # the last stage is evaluated at x_new itself
                x_new, k_last = xi, ks[-1]
                xnl = x_new.tolist()
            else:
                xnl, k_last = _lincomb(xl, *_weighted(h, self._b_nz, ks)), None
                x_new = _frozen(xnl)
            acc = 0.0
            if len(e_nz) == 4:   # Bogacki-Shampine: the error sum fused into the norm's loop
                c0, c1, c2, c3 = (h * w for _, w in e_nz)
                for a, b, p, q, r, u in zip(xl, xnl, *(ks[j] for j, _ in e_nz)):
                    a, b = abs(a), abs(b)
                    v = (c0 * p + c1 * q + c2 * r + c3 * u) / (atol + rtol * (a if a > b else b))
                    acc += v * v
            else:
                for e, a, b in zip(_lincomb(None, *_weighted(h, e_nz, ks)), xl, xnl):
                    a, b = abs(a), abs(b)
                    v = e / (atol + rtol * (a if a > b else b))
                    acc += v * v
            norm = sqrt(acc / n)
            if self._adapt(norm, h, t, t_new == t_limit, h_min):
                return t_new, x_new, k_last

    def _initial_step(self, t, x, k0) -> float:
        """Starting step size (Hairer, Norsett and Wanner 1993, section II.4)."""
        scale = self.atol + self.rtol * np.abs(x)
        d0, d1 = _rms(x / scale), _rms(k0 / scale)
        h0 = 1e-6 if d0 < 1e-5 or d1 < 1e-5 else 0.01 * d0 / d1
        h0 = min(h0, self.max_step)
        k1 = self.f(t + h0, x + h0 * k0)
        d2 = _rms((k1 - k0) / scale) / h0
        p = self.tableau.error_order + 1
        if d1 <= 1e-15 and d2 <= 1e-15:
            h1 = max(1e-6, h0 * 1e-3)
        else:
            h1 = (0.01 / max(d1, d2)) ** (1.0 / p)
        return min(100.0 * h0, h1, self.max_step)

    def state_at(self, tau: float) -> np.ndarray:
        if tau == self.t:
            return self.x
        if tau == self.t_prev:
            return self.x_prev
        k0 = self._k0_prev if self._k0_prev is not None else self.f(self.t_prev, self.x_prev)
        return self._solution(self.t_prev, self.x_prev, tau - self.t_prev,
                              np.asarray(k0, dtype=float))


class SemiExplicitEulerStepper(Stepper):
    """Semi-explicit (symplectic) Euler with fixed step ``max_step``.

    With x = [q; v; z] split by ``partition = (q_idx, v_idx, z_idx)``::

        v+ = v + h vdot(t, x)
        q+ = q + h N(q) v+          (map_v(v+) evaluated with the context at (t, x))
        z+ = z + h zdot(t, x)

    ``map_v(v)`` must evaluate N(q) v at the state last passed to ``f``.
    """

    def __init__(self, f, map_v: Callable[[np.ndarray], np.ndarray], partition, *, max_step: float):
        super().__init__(f)
        self.map_v = map_v
        self.q_idx, self.v_idx, self.z_idx = (np.asarray(p, dtype=int) for p in partition)
        self.max_step = float(max_step)

    def _one(self, t, x, h):
        xdot = self.f(t, x)
        x_new = np.array(x, dtype=float)
        v_new = x[self.v_idx] + h * xdot[self.v_idx]
        x_new[self.v_idx] = v_new
        if self.q_idx.size:
            x_new[self.q_idx] = x[self.q_idx] + h * np.asarray(self.map_v(v_new), dtype=float).reshape(-1)
        if self.z_idx.size:
            x_new[self.z_idx] = x[self.z_idx] + h * xdot[self.z_idx]
        return x_new

    def step(self, t_limit: float) -> None:
        h, t_new = self._fixed_h(self.t, t_limit, self.max_step)
        x_new = self._one(self.t, self.x, h)
        self.t_prev, self.x_prev = self.t, self.x
        self.t, self.x = t_new, x_new

    def state_at(self, tau: float) -> np.ndarray:
        if tau == self.t:
            return self.x
        if tau == self.t_prev:
            return self.x_prev
        return self._one(self.t_prev, self.x_prev, tau - self.t_prev)


def make_stepper(name: str, f, *, fixed_step: bool, max_step: float, rtol: float, atol: float,
                 map_v=None, partition=None, size: Optional[int] = None) -> Stepper:
    """The stepper of integrator ``name`` (see :data:`INTEGRATOR_NAMES`) over ``f(t, x)``.

    Parameters
    ----------
    name : str
    f : callable
        ``f(t, x) -> xdot``, shapes (nx,).
    fixed_step : bool
        Force fixed steps for the RK schemes with an error estimate (refused for scipy's).
    max_step : float
        Fixed step size, or the largest error-controlled step.
    rtol, atol : float
        Error-control tolerances.
    map_v, partition
        For ``semi_explicit_euler``: ``map_v(v) -> qdot`` and ``(q_idx, v_idx, z_idx)``.
    size : int, optional
        The state's size, when known: ``RK45`` on at most :data:`SMALL_STATE` entries is
        stepped by our own float Dormand-Prince stepper (scipy's method and error control,
        see :mod:`systems.analysis._dopri`), otherwise by scipy's ``RK45``.
    """
    check_integrator_name(name)
    if name in SCIPY_METHODS:
        if fixed_step:
            raise ValueError(f"integrator '{name}' (scipy) is always error-controlled; "
                             f"fixed_step=True applies to {', '.join(INTEGRATOR_NAMES[:5])}")
        if name == "RK45" and size is not None and 0 < size <= SMALL_STATE:
            return DormandPrinceStepper(f, max_step=max_step, rtol=rtol, atol=atol)
        return ScipyStepper(f, name, max_step=max_step, rtol=rtol, atol=atol)
    if name == "semi_explicit_euler":
        return SemiExplicitEulerStepper(f, map_v, partition, max_step=max_step)
    tableau = TABLEAUS[name]
    controlled = tableau.has_error_estimate and not fixed_step
    return RungeKuttaStepper(f, tableau, max_step=max_step, error_controlled=controlled,
                             rtol=rtol, atol=atol)
