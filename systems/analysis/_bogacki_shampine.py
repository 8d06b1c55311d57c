"""One error-controlled Bogacki-Shampine 3(2) step on Python floats, written out (private to
:mod:`systems.analysis.integrators`, its ``runge_kutta3`` path for small states).

The same arithmetic as the generic float path (``RungeKuttaStepper._controlled_step_list``
over the tableau): each stage's sum term by term in tableau order, the error sum fused into
the norm's loop, the same step-size control; so the same numbers, bit for bit, without the
generic path's loops over the tableau's rows (Bogacki and Shampine, "A 3(2) pair of
Runge-Kutta formulas", Appl. Math. Lett. 2, 1989).
"""
from __future__ import annotations

import math
import struct

import numpy as np

__all__ = ["controlled_step", "list_valued"]

_A20, _A21, _A22 = 2.0 / 9.0, 1.0 / 3.0, 4.0 / 9.0
_PACK: dict = {}   # n -> struct packer of n doubles (the stage states' bytes)


def list_valued(f):
    """``f`` (``f(t, x) -> array``) as a function returning a list of floats."""
    def f_list(t, x):
        k = f(t, x)
        return k.tolist() if type(k) is np.ndarray else np.asarray(k, dtype=float).tolist()
    return f_list


def controlled_step(t: float, x: np.ndarray, k0: list, t_limit: float, *, f, next_h, adapt,
                    error_weights, max_step: float, atol: float, rtol: float, stretch: float):
    """``(t_new, x_new, k_new)`` of one accepted ``runge_kutta3`` step from ``(t, x)`` with
    ``k0 = f(t, x)`` (a list), ending at or before ``t_limit``; ``x_new`` is a frozen array
    and ``k_new = f(t_new, x_new)`` (first same as last).

    Parameters
    ----------
    f : callable
        ``f(t, x) -> list`` of the derivative at a frozen state.
    next_h : callable
        ``next_h()``: the stepper's next step size.
    adapt : callable
        ``adapt(norm, h, t, on_limit, h_min) -> bool``: the stepper's acceptance and
        step-size update (it counts rejections).
    error_weights : tuple of 4 float
        ``b - bhat`` of the tableau.
    max_step, atol, rtol, stretch : float
    """
    h_min = 16.0 * math.ulp(max(1.0, abs(t)))
    xl = x.tolist()
    n = len(xl)
    sqrt, fb = math.sqrt, np.frombuffer
    pk = _PACK.get(n)
    if pk is None:
        pk = _PACK[n] = struct.Struct(f"{n}d").pack
    w0, w1, w2, w3 = error_weights
    while True:
        h = min(next_h(), max_step)
        remaining = t_limit - t
        if remaining <= h * (1.0 + stretch):
            h, t_new = remaining, t_limit
        else:
            t_new = t + h
        c0 = h * 0.5
        k1 = f(t + 0.5 * h, fb(pk(*[a + c0 * p for a, p in zip(xl, k0)])))
        c0 = h * 0.75
        k2 = f(t + 0.75 * h, fb(pk(*[a + c0 * q for a, q in zip(xl, k1)])))
        c0, c1, c2 = h * _A20, h * _A21, h * _A22
        xnl = [a + c0 * p + c1 * q + c2 * r for a, p, q, r in zip(xl, k0, k1, k2)]
        x_new = fb(pk(*xnl))   # immutable: over its own bytes
        k3 = f(t + 1.0 * h, x_new)
        c0, c1, c2, c3 = h * w0, h * w1, h * w2, h * w3
        acc = 0.0
        for a, b, p, q, r, u in zip(xl, xnl, k0, k1, k2, k3):
            a, b = abs(a), abs(b)
            v = (c0 * p + c1 * q + c2 * r + c3 * u) / (atol + rtol * (a if a > b else b))
            acc += v * v
        if adapt(sqrt(acc / n), h, t, t_new == t_limit, h_min):
            return t_new, x_new, k3
