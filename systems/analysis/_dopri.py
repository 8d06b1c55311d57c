"""Dormand-Prince 5(4) on Python floats: the ``RK45`` integrator for small states (private to
:mod:`systems.analysis.integrators`).

The same method and the same error control as ``scipy.integrate.RK45`` (Dormand and Prince,
"A family of embedded Runge-Kutta formulae", J. Comp. Appl. Math. 6, 1980; step size
control of Hairer, Norsett and Wanner, *Solving ODEs I*, 1993, section II.4), stepped on
Python floats instead of numpy arrays (for a handful of states numpy's per-call cost
dominates scipy's step):

* error ``err = h sum_i E_i k_i`` (seven stages, the last one f(t + h, x_new), first same as
  last), norm ``rms(err / (atol + rtol max(|x|, |x_new|)))``; accepted when < 1;
* next step ``h * min(10, 0.9 norm^(-1/5))`` (10 when the norm is 0), at most ``h`` after a
  rejection within the same step; a rejected step shrinks by ``max(0.2, 0.9 norm^(-1/5))``;
  a step below ``10 ulp(t)`` fails (:class:`~systems.errors.StepSizeError`);
* a step that would pass ``t_limit`` is cut to end on it, and the next step grows from the
  cut one (as scipy's ``t_bound``);
* the first step: Hairer's starting-step rule with scipy's caps (the interval to
  ``t_limit``, ``max_step``); after :meth:`reset` (a state jump) the last proposed step, cut
  to the interval and ``max_step`` (as the :class:`ScipyStepper` re-creates scipy's solver).

The states are those of scipy's RK45 up to rounding (the sums are taken term by term in
tableau order, scipy's with matrix products). Differences: ``state_at`` re-integrates one
step of the method from the start of the last step (fifth order, as the other Runge-Kutta
steppers and Drake do) instead of scipy's quartic interpolant, and rejected steps are
counted in ``num_rejected``. The runs of steps are written-out Python
(:mod:`systems.analysis._unrolled`) or, where a C compiler is found, the same loop in C
(:mod:`systems.analysis._native_runs`; the same bits).
"""
from __future__ import annotations

import math
import struct

import numpy as np

from ._float_sums import frozen
from ._native_runs import native_dopri_run
from ._unrolled import checked, entries, evaluate, make_run

__all__ = ["DormandPrinceStepper"]

_C = (0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0)
_A = ((),
      (1 / 5,),
      (3 / 40, 9 / 40),
      (44 / 45, -56 / 15, 32 / 9),
      (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
      (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656))
_A1, _A2, _A3, _A4, _A5 = _A[1:]
_B = (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84)
# fifth- minus fourth-order weights over the seven stages (k7 = f(t + h, x_new))
_E = (-71 / 57600, 0.0, 71 / 16695, -71 / 1920, 17253 / 339200, -22 / 525, 1 / 40)
_SAFETY, _MIN_FACTOR, _MAX_FACTOR, _EXPONENT = 0.9, 0.2, 10.0, -1.0 / 5.0


def _body(n: int) -> list:
    """One accepted step's source for ``n`` entries (as :meth:`DormandPrinceStepper.step`,
    expression for expression; stages ``p = k0, q, r, s, w, z = k5``, ``u = f(t_new, x_new)``)."""
    def stage(names, coefs):   # x_i + a_0 k0_i + a_1 k1_i + ... for every entry
        return entries(" + ".join(["x{i}"] + [f"{c} * {k}{{i}}" for c, k in zip(coefs, names)]),
                       n)
    return [
        "min_step = 10.0 * abs(nextafter(t, inf) - t)",
        "h_abs = max_step if hn > max_step else (min_step if hn < min_step else hn)",
        "rej = False",
        "while True:",
        "    if not h_abs >= min_step:",
        "        raise StepSizeError(f'RK45: step size {h_abs:.3g} s fell below the resolution '",
        "                            f'of time at t={t!r} (or the derivative is not finite)')",
        "    t_new = t + h_abs",
        "    if t_new > t_limit:",
        "        t_new = t_limit",
        "    h = t_new - t",
        "    h_abs = abs(h)",
        "    a10 = h * A10",
        "    a20, a21 = h * A20, h * A21",
        "    a30, a31, a32 = h * A30, h * A31, h * A32",
        "    a40, a41, a42, a43 = h * A40, h * A41, h * A42, h * A43",
        "    a50, a51, a52, a53, a54 = h * A50, h * A51, h * A52, h * A53, h * A54",
        "    ts = t + C1 * h",
        evaluate("q", f"fb(pk({stage('p', ['a10'])}))"),
        "    ts = t + C2 * h",
        evaluate("r", f"fb(pk({stage('pq', ['a20', 'a21'])}))"),
        "    ts = t + C3 * h",
        evaluate("s", f"fb(pk({stage('pqr', ['a30', 'a31', 'a32'])}))"),
        "    ts = t + C4 * h",
        evaluate("w", f"fb(pk({stage('pqrs', ['a40', 'a41', 'a42', 'a43'])}))"),
        "    ts = t + h",
        evaluate("z", f"fb(pk({stage('pqrsw', ['a50', 'a51', 'a52', 'a53', 'a54'])}))"),
        "    b0, b2, b3, b4, b5 = h * B0, h * B2, h * B3, h * B4, h * B5",
        *(f"    y{i} = x{i} + b0 * p{i} + b2 * r{i} + b3 * s{i} + b4 * w{i} + b5 * z{i}"
          for i in range(n)),
        f"    x_new = fb(pk({entries('y{i}', n)}))",
        "    ts = t_new",
        evaluate("u", "x_new", keep="k_new"),
        "    e0, e2, e3, e4, e5, e6 = h * E0, h * E2, h * E3, h * E4, h * E5, h * E6",
        *(line for i in range(n) for line in (
            f"    a, b = abs(x{i}), abs(y{i})",
            f"    v{i} = (e0 * p{i} + e2 * r{i} + e3 * s{i} + e4 * w{i} + e5 * z{i} + e6 * u{i}) / "
            f"(atol + (a if a > b else b) * rtol)")),
        f"    norm = sqrt(({' + '.join(f'v{i} * v{i}' for i in range(n))}) / {n})",
        "    if norm < 1.0:",
        "        factor = MAX_FACTOR if norm == 0.0 else SAFETY * norm ** EXPONENT",
        "        if not factor < MAX_FACTOR:   # min(MAX_FACTOR, factor)",
        "            factor = MAX_FACTOR",
        "        if rej:",
        "            factor = min(1.0, factor)",
        "        h_abs *= factor",
        "        hn = h_abs",
        "        break",
        "    rejected()",
        "    rej = True",
        "    h_abs *= max(MIN_FACTOR, SAFETY * norm ** EXPONENT) if isfinite(norm) else MIN_FACTOR",
    ]


_CONSTANTS = dict(
    C1=_C[1], C2=_C[2], C3=_C[3], C4=_C[4], A10=_A1[0], A20=_A2[0], A21=_A2[1], A30=_A3[0],
    A31=_A3[1], A32=_A3[2], A40=_A4[0], A41=_A4[1], A42=_A4[2], A43=_A4[3], A50=_A5[0],
    A51=_A5[1], A52=_A5[2], A53=_A5[3], A54=_A5[4], B0=_B[0], B2=_B[2], B3=_B[3], B4=_B[4],
    B5=_B[5], E0=_E[0], E2=_E[2], E3=_E[3], E4=_E[4], E5=_E[5], E6=_E[6], SAFETY=_SAFETY,
    MIN_FACTOR=_MIN_FACTOR, MAX_FACTOR=_MAX_FACTOR, EXPONENT=_EXPONENT)


def _unchecked(t, x, t0) -> None:
    """No check of the states of single steps (the Simulator checks them itself)."""


class DormandPrinceStepper:
    """``RK45`` for small states (see the module docstring); the :class:`Stepper` contract.

    Parameters
    ----------
    f : callable
        ``f(t, x) -> xdot``, shapes (nx,).
    max_step, rtol, atol : float
    """

    error_controlled = True
    runs_steps = False   # (True once reset with a state: see run)
    run_steps = 0

    def __init__(self, f, *, max_step: float, rtol: float, atol: float):
        self.f = f
        self.max_step, self.rtol, self.atol = float(max_step), float(rtol), float(atol)
        self.t = self.t_prev = 0.0
        self.x = self.x_prev = np.zeros(0)
        self.num_rejected = 0
        self._k0 = None          # f(t, x) as a list, when known
        self._k0_prev = None     # f(t_prev, x_prev)
        self._h = None           # the next step's size (None: choose one)
        self._hint = None        # the last proposal, kept across a reset
        # every state handed to f here is immutable (frozen): the derivative function's
        # list variant, when it has one, skips the array round trip
        self._eval = getattr(f, "as_list", None) or self._eval_array
        self._run = self._run_n = None   # the written-out runs of steps, for a state size

    def reset(self, t, x) -> None:
        """Restart at ``(t, x)`` (a state jump): the derivative is re-evaluated and the next
        step starts from the last proposed size."""
        self.t = self.t_prev = float(t)
        xl = np.asarray(x, dtype=float).ravel().tolist()
        self._pack = struct.Struct(f"{len(xl)}d").pack   # stage states: immutable, own bytes
        self.x = self.x_prev = frozen(xl)
        if self._h is not None:
            self._hint = self._h
        self._h = None
        self._k0 = self._k0_prev = None
        if self._run_n != len(xl):
            self._run_n = len(xl)
            g, report = checked(self._eval)
            call, take = getattr(self._eval, "raw", (None, None))
            self._run = None if not xl else native_dopri_run(
                len(xl), call or g, report, self._rejected, self._save, max_step=self.max_step,
                atol=self.atol, rtol=self.rtol, constants=_CONSTANTS, take=take) or make_run(
                "RK45", len(xl), _body, dict(_CONSTANTS, f=g, report=report,
                                             rejected=self._rejected, save=self._save,
                                             max_step=self.max_step, atol=self.atol,
                                             rtol=self.rtol),
                inline=getattr(self._eval, "inline", None))   # (the same loop in C, or Python)
        self.runs_steps = self._run is not None

    def _rejected(self) -> None:
        self.num_rejected += 1

    def _save(self, t, x, k0, t_prev, x_prev, k0_prev, h, steps) -> None:
        """The end of a written-out run (see :mod:`systems.analysis._unrolled`)."""
        self.run_steps = steps
        if steps:
            self.t, self.x, self._k0, self._h = t, x, k0, h
            self.t_prev, self.x_prev, self._k0_prev = t_prev, x_prev, k0_prev

    def run(self, t_limit: float, t_event: float, t_final: float, check) -> None:
        """Accepted steps until the Simulator's next stop (:meth:`Stepper.run
        <systems.analysis.integrators.Stepper.run>`): the written-out :meth:`step`."""
        t, x = self.t, self.x
        k0 = self._k0 if self._k0 is not None else self._eval(t, x)
        if self._h is None:
            self._h = self._first_step(t, x.tolist(), k0, t_limit)
        self.run_steps = 0
        self._run(t, x, k0, t_limit, self._h, t_event, t_final, check)

    def _eval_array(self, t, x):
        k = self.f(t, x)
        return k.tolist() if type(k) is np.ndarray else np.asarray(k, dtype=float).tolist()

    def _first_step(self, t, xl, k0, t_limit) -> float:
        interval = abs(t_limit - t)
        if self._hint is not None:
            return min(self._hint, interval, self.max_step)
        if interval == 0.0:
            return 0.0
        atol, rtol, n = self.atol, self.rtol, len(xl)
        scale = [atol + abs(a) * rtol for a in xl]
        d0 = math.sqrt(sum([(a / s) ** 2 for a, s in zip(xl, scale)]) / n)
        d1 = math.sqrt(sum([(p / s) ** 2 for p, s in zip(k0, scale)]) / n)
        h0 = 1e-6 if d0 < 1e-5 or d1 < 1e-5 else 0.01 * d0 / d1
        h0 = min(h0, interval)
        k1 = self._eval(t + h0, frozen([a + h0 * p for a, p in zip(xl, k0)]))
        d2 = math.sqrt(sum([((q - p) / s) ** 2 for p, q, s in zip(k0, k1, scale)]) / n) / h0
        if d1 <= 1e-15 and d2 <= 1e-15:
            h1 = max(1e-6, h0 * 1e-3)
        else:
            h1 = (0.01 / max(d1, d2)) ** (1.0 / 5.0)
        return min(100.0 * h0, h1, interval, self.max_step)

    def _stages(self, t, xl, h, k0):
        """The six stages and the fifth-order solution (a list) of one step of size h (each
        stage's sum unrolled, term by term in tableau order)."""
        f, c, fb, pk = self._eval, _C, np.frombuffer, self._pack
        a10 = h * _A1[0]   # h a_ij, written out (no per-step loops over the tableau)
        a20, a21 = h * _A2[0], h * _A2[1]
        a30, a31, a32 = h * _A3[0], h * _A3[1], h * _A3[2]
        a40, a41, a42, a43 = h * _A4[0], h * _A4[1], h * _A4[2], h * _A4[3]
        a50, a51, a52, a53, a54 = h * _A5[0], h * _A5[1], h * _A5[2], h * _A5[3], h * _A5[4]
        k1 = f(t + c[1] * h, fb(pk(*[a + a10 * p for a, p in zip(xl, k0)])))
        k2 = f(t + c[2] * h, fb(pk(*[a + a20 * p + a21 * q for a, p, q in zip(xl, k0, k1)])))
        k3 = f(t + c[3] * h, fb(pk(*[a + a30 * p + a31 * q + a32 * r
                                     for a, p, q, r in zip(xl, k0, k1, k2)])))
        k4 = f(t + c[4] * h, fb(pk(*[a + a40 * p + a41 * q + a42 * r + a43 * u
                                     for a, p, q, r, u in zip(xl, k0, k1, k2, k3)])))
        k5 = f(t + h, fb(pk(*[a + a50 * p + a51 * q + a52 * r + a53 * u + a54 * w
                              for a, p, q, r, u, w in zip(xl, k0, k1, k2, k3, k4)])))
        b0, b2, b3, b4, b5 = h * _B[0], h * _B[2], h * _B[3], h * _B[4], h * _B[5]
        x_new = [a + b0 * p + b2 * r + b3 * u + b4 * w + b5 * z
                 for a, p, r, u, w, z in zip(xl, k0, k2, k3, k4, k5)]
        return (k0, k1, k2, k3, k4, k5), x_new

    def step(self, t_limit: float) -> None:
        """One accepted step, ending at or before ``t_limit`` (exactly on it when reached):
        a run of one step (the states are not checked)."""
        if self._run is None:
            raise ValueError("RK45: reset the stepper with a non-empty state first")
        self.run(t_limit, math.inf, -math.inf, _unchecked)

    def state_at(self, tau: float) -> np.ndarray:
        """The state at ``tau`` in the last step: one step of the method from its start."""
        if tau == self.t:
            return self.x
        if tau == self.t_prev:
            return self.x_prev
        t0 = self.t_prev
        k0 = self._k0_prev if self._k0_prev is not None else self._eval(t0, self.x_prev)
        _, x_tau = self._stages(t0, self.x_prev.tolist(), tau - t0, k0)
        return frozen(x_tau)
