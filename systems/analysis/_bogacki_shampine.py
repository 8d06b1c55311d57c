"""One error-controlled Bogacki-Shampine 3(2) step on Python floats, written out (private to
:mod:`systems.analysis.integrators`, its ``runge_kutta3`` path for small states).

The same arithmetic as the generic float path (``RungeKuttaStepper._controlled_step_list``
over the tableau): each stage's sum term by term in tableau order, the error sum in the
norm, the same step-size control (``RungeKuttaStepper._adapt``); so the same numbers, bit
for bit (Bogacki and Shampine, "A 3(2) pair of Runge-Kutta formulas", Appl. Math. Lett. 2,
1989). :func:`unrolled_run` is the step's source for a state of ``n`` entries, every entry a
local variable, inside :mod:`systems.analysis._unrolled`'s run of steps; where a C compiler
is found the same run is the C loop of :mod:`systems.analysis._native_runs` (the same
expressions, the same bits).
"""
from __future__ import annotations

import numpy as np

from ._native_runs import native_run
from ._unrolled import checked, entries, evaluate, make_run

__all__ = ["list_valued", "unrolled_run"]

_A20, _A21, _A22 = 2.0 / 9.0, 1.0 / 3.0, 4.0 / 9.0


def list_valued(f):
    """``f`` (``f(t, x) -> array``) as a function returning a list of floats."""
    def f_list(t, x):
        k = f(t, x)
        return k.tolist() if type(k) is np.ndarray else np.asarray(k, dtype=float).tolist()
    return f_list


def _body(n: int) -> list:
    """One accepted step's source for ``n`` entries (the body of :func:`unrolled_run`)."""
    err = " + ".join(f"v{i} * v{i}" for i in range(n))
    lines = [
        "while True:",
        "    h = max_step if max_step < hn else hn",
        "    remaining = t_limit - t",
        "    if remaining <= h * (1.0 + stretch):",
        "        h, t_new = remaining, t_limit",
        "    else:",
        "        t_new = t + h",
        "    c0 = h * 0.5",
        "    ts = t + 0.5 * h",
        evaluate("q", f"fb(pk({entries('x{i} + c0 * p{i}', n)}))"),
        "    c0 = h * 0.75",
        "    ts = t + 0.75 * h",
        evaluate("r", f"fb(pk({entries('x{i} + c0 * q{i}', n)}))"),
        "    c0, c1, c2 = h * A20, h * A21, h * A22",
        *(f"    y{i} = x{i} + c0 * p{i} + c1 * q{i} + c2 * r{i}" for i in range(n)),
        f"    x_new = fb(pk({entries('y{i}', n)}))",
        "    ts = t + 1.0 * h",
        evaluate("u", "x_new", keep="k_new"),
        "    c0, c1, c2, c3 = h * w0, h * w1, h * w2, h * w3",
    ]
    for i in range(n):
        lines += [f"    a, b = abs(x{i}), abs(y{i})",
                  f"    v{i} = (c0 * p{i} + c1 * q{i} + c2 * r{i} + c3 * u{i}) / "
                  f"(atol + rtol * (a if a > b else b))"]
    return lines + [
        f"    norm = sqrt(({err}) / {n})",
        "    if norm <= 1.0:",
        "        factor = 5.0 if norm == 0.0 else 0.9 * norm ** exponent",
        "        if not factor < 5.0:   # min(5, factor)",
        "            factor = 5.0",
        "        h_next = h * factor",
        "        if t_new == t_limit and factor >= 1.0:",
        "            h_next = max(h_next, hn)",
        "        hn = h_next",
        "        break",
        "    factor = 0.2 if not isfinite(norm) else max(0.2, 0.9 * norm ** exponent)",
        "    hn = h * factor",
        "    rejected(hn)",
        "    if hn < 16.0 * ulp(max(1.0, abs(t))):",
        "        raise StepSizeError(f'{name}: step size {hn:.3g} s fell below the '",
        "                            f'resolution of time at t={t!r} (error norm {norm:.3g})')",
    ]


def unrolled_run(n: int, f, rejected, save, *, error_weights, exponent: float,
                 max_step: float, atol: float, rtol: float, stretch: float, name: str):
    """``run(t, x, k0, t_limit, h, t_event, t_final, check)``: accepted ``runge_kutta3``
    steps of a state of ``n`` entries, written out (:func:`systems.analysis._unrolled.make_run`),
    or their C loop (:func:`systems.analysis._native_runs.native_run`) when it is built.

    Each step is that of the generic float path with the stepper's ``_adapt``: accepted when
    the error norm is ``<= 1``, the next step ``h min(5, 0.9 norm^exponent)``, not shrunk
    after a step cut to land on ``t_limit``; a rejected try shrinks by
    ``max(0.2, 0.9 norm^exponent)``; below ``16 ulp(t)`` a :class:`StepSizeError`.

    Parameters
    ----------
    n : int
        Entries of the state.
    f : callable
        ``f(t, x) -> list`` of ``n`` floats at a frozen state ``x``; with
        ``f.unchecked = (g, report)`` the run calls ``g`` and ``report(t, values)`` when the
        sum of ``values`` is not finite (``f``'s own check, on the run's unpacked entries);
        the C loop uses ``f.raw`` too when ``f`` has it, the Python loop ``f.inline``
        (:mod:`systems.analysis._derivatives`).
    rejected : callable
        ``rejected(h)`` after each rejected try, with the smaller step size to try next
        (before the check against time's resolution).
    save : callable
        ``save(t, x, k0, t_prev, x_prev, k0_prev, h, steps)``, on the way out.
    error_weights : tuple of 4 float
        ``b - bhat`` of the tableau.
    exponent : float
        ``-1 / (p_hat + 1)``.
    max_step, atol, rtol, stretch : float
    name : str
        The integrator's name, for the error message.
    """
    w0, w1, w2, w3 = error_weights
    inline, (call, take) = getattr(f, "inline", None), getattr(f, "raw", (None, None))
    f, report = checked(f)
    run = native_run(n, call or f, report, rejected, save, error_weights=error_weights,
                     exponent=exponent, max_step=max_step, atol=atol, rtol=rtol,
                     stretch=stretch, name=name, take=take)
    if run is not None:   # the same loop in C
        return run
    return make_run("runge_kutta3", n, _body, dict(
        f=f, report=report, rejected=rejected, save=save, A20=_A20, A21=_A21, A22=_A22,
        w0=w0, w1=w1, w2=w2, w3=w3, exponent=exponent, max_step=max_step, atol=atol, rtol=rtol,
        stretch=stretch, name=name), inline=inline)
