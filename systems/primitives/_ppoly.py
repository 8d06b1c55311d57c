"""Private: a scipy piecewise polynomial evaluated at a CasADi (symbolic) time."""
from __future__ import annotations

import casadi as ca
import numpy as np
from scipy.interpolate import PPoly


def ppoly_symbolic(pp: PPoly, t, n: int, hold: bool = True):
    """Exact piecewise expression of ``pp`` at symbolic ``t`` (an ``SX`` column of ``n``).

    Each piece's polynomial in Horner form, selected by ``if_else`` on its interval; with
    ``hold`` the time is clamped to the breaks (end values held), else the value outside
    the breaks is zero. Cost grows with the number of pieces.
    """
    x, c = pp.x, pp.c  # c: (order, pieces, ...)
    coeffs = np.asarray(c).reshape(c.shape[0], c.shape[1], n)
    tc = ca.fmin(ca.fmax(t, float(x[0])), float(x[-1])) if hold else t
    value = ca.SX.zeros(n, 1)
    for k in range(coeffs.shape[1]):
        dt = tc - x[k]
        poly = ca.SX.zeros(n, 1)
        for m in range(coeffs.shape[0]):
            poly = poly * dt + ca.DM(coeffs[m, k])
        last = k == coeffs.shape[1] - 1
        inside = ca.logic_and(tc >= x[k], (tc <= x[k + 1]) if last else (tc < x[k + 1]))
        value = value + ca.if_else(inside, poly, ca.SX.zeros(n, 1))
    return value
