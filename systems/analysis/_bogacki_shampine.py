"""One error-controlled Bogacki-Shampine 3(2) step on Python floats, written out (private to
:mod:`systems.analysis.integrators`, its ``runge_kutta3`` path for small states).

The same arithmetic as the generic float path (``RungeKuttaStepper._controlled_step_list``
over the tableau): each stage's sum term by term in tableau order, the error sum in the
norm, the same step-size control (``RungeKuttaStepper._adapt``); so the same numbers, bit
for bit (Bogacki and Shampine, "A 3(2) pair of Runge-Kutta formulas", Appl. Math. Lett. 2,
1989). :func:`unrolled_step` generates the step's source once per state size ``n`` with
every entry a local variable: no per-entry loops, lists or zips, no calls into the stepper
but on a rejection.
"""
from __future__ import annotations

import math
import struct

import numpy as np

from ..errors import StepSizeError

__all__ = ["list_valued", "unrolled_step"]

_A20, _A21, _A22 = 2.0 / 9.0, 1.0 / 3.0, 4.0 / 9.0
_PACK: dict = {}   # n -> struct packer of n doubles (the stage states' bytes)


def list_valued(f):
    """``f`` (``f(t, x) -> array``) as a function returning a list of floats."""
    def f_list(t, x):
        k = f(t, x)
        return k.tolist() if type(k) is np.ndarray else np.asarray(k, dtype=float).tolist()
    return f_list


_UNROLLED: dict = {}   # n -> the generated step's code object


def _unrolled_source(n: int) -> str:
    """The source of the step for ``n`` entries (see :func:`unrolled_step`)."""
    def row(fmt):
        return ", ".join(fmt.format(i=i) for i in range(n))
    err = " + ".join(f"v{i} * v{i}" for i in range(n))
    lines = [
        "def step(t, x, k0, t_limit, hn):",
        f"    {row('x{i}')}, = x.tolist()",
        f"    {row('p{i}')}, = k0",
        "    h_min = 16.0 * ulp(max(1.0, abs(t)))",
        "    while True:",
        "        h = max_step if max_step < hn else hn",
        "        remaining = t_limit - t",
        "        if remaining <= h * (1.0 + stretch):",
        "            h, t_new = remaining, t_limit",
        "        else:",
        "            t_new = t + h",
        "        c0 = h * 0.5",
        f"        k1 = f(t + 0.5 * h, fb(pk({row('x{i} + c0 * p{i}')})))",
        f"        {row('q{i}')}, = k1",
        "        c0 = h * 0.75",
        f"        k2 = f(t + 0.75 * h, fb(pk({row('x{i} + c0 * q{i}')})))",
        f"        {row('r{i}')}, = k2",
        "        c0, c1, c2 = h * A20, h * A21, h * A22",
        *(f"        y{i} = x{i} + c0 * p{i} + c1 * q{i} + c2 * r{i}" for i in range(n)),
        f"        x_new = fb(pk({row('y{i}')}))",
        "        k3 = f(t + 1.0 * h, x_new)",
        f"        {row('u{i}')}, = k3",
        "        c0, c1, c2, c3 = h * w0, h * w1, h * w2, h * w3",
    ]
    for i in range(n):
        lines += [f"        a, b = abs(x{i}), abs(y{i})",
                  f"        v{i} = (c0 * p{i} + c1 * q{i} + c2 * r{i} + c3 * u{i}) / "
                  f"(atol + rtol * (a if a > b else b))"]
    lines += [
        f"        norm = sqrt(({err}) / {n})",
        "        if norm <= 1.0:",
        "            factor = 5.0 if norm == 0.0 else min(5.0, 0.9 * norm ** exponent)",
        "            h_next = h * factor",
        "            if t_new == t_limit and factor >= 1.0:",
        "                h_next = max(h_next, hn)",
        "            return t_new, x_new, k3, h_next",
        "        factor = 0.2 if not isfinite(norm) else max(0.2, 0.9 * norm ** exponent)",
        "        hn = h * factor",
        "        rejected(hn)",
        "        if hn < h_min:",
        "            raise StepSizeError(f'{name}: step size {hn:.3g} s fell below the '",
        "                                f'resolution of time at t={t!r} (error norm {norm:.3g})')",
    ]
    return "\n".join(lines) + "\n"


def unrolled_step(n: int, f, rejected, *, error_weights, exponent: float, max_step: float,
                  atol: float, rtol: float, stretch: float, name: str):
    """``step(t, x, k0, t_limit, h) -> (t_new, x_new, k_new, h_next)``: one accepted
    ``runge_kutta3`` step of a state of ``n`` entries, written out.

    The same numbers as :func:`controlled_step` with the stepper's ``_adapt`` (the
    acceptance test ``norm <= 1`` and the next step ``h min(5, 0.9 norm^exponent)``, not
    shrunk after a step cut to land on ``t_limit``; a rejected step shrinks by
    ``max(0.2, 0.9 norm^exponent)``; below ``16 ulp(t)`` a :class:`StepSizeError`).

    Parameters
    ----------
    n : int
        Entries of the state.
    f : callable
        ``f(t, x) -> list`` of ``n`` floats at a frozen state ``x``.
    rejected : callable
        ``rejected(h)`` after each rejected try, with the smaller step size to try next
        (before the check against time's resolution).
    error_weights : tuple of 4 float
        ``b - bhat`` of the tableau.
    exponent : float
        ``-1 / (p_hat + 1)``.
    max_step, atol, rtol, stretch : float
    name : str
        The integrator's name, for the error message.

    Returns
    -------
    callable
        ``step(t, x, k0, t_limit, h)``: ``x`` the state (shape (n,)), ``k0 = f(t, x)`` (a
        list), ``h`` the proposed step size; returns the end time, the new state (a frozen
        array), ``f`` there (a list) and the next proposed step size.
    """
    code = _UNROLLED.get(n)
    if code is None:
        code = _UNROLLED[n] = compile(_unrolled_source(n), f"<runge_kutta3 step, {n} states>",
                                      "exec")
    pk = _PACK.get(n)
    if pk is None:
        pk = _PACK[n] = struct.Struct(f"{n}d").pack
    w0, w1, w2, w3 = error_weights
    scope = dict(f=f, rejected=rejected, fb=np.frombuffer, pk=pk, ulp=math.ulp, sqrt=math.sqrt,
                 isfinite=math.isfinite, StepSizeError=StepSizeError, A20=_A20, A21=_A21,
                 A22=_A22, w0=w0, w1=w1, w2=w2, w3=w3, exponent=exponent,
                 max_step=max_step, atol=atol, rtol=rtol, stretch=stretch, name=name)
    exec(code, scope)   # noqa: S102 - our own generated source (above), no user text
    return scope["step"]
