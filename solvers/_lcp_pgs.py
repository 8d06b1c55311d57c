"""Projected Gauss-Seidel / SOR kernel (private part of :mod:`solvers.lcp`).

One sweep updates every row in turn,

.. math::

    x_i \\leftarrow \\Pi_{[l_i, u_i]}\\bigl(x_i - \\omega\\,(A_i x + b_i) / A_{ii}\\bigr),

where, for a friction row ``i`` with ``findex[i] = j``, the bounds are
``l_i = -|lo_i x_j|`` and ``u_i = |hi_i x_j|`` taken from the current ``x_j``
(Cottle, Pang & Stone 1992, section 5.2; the friction coupling as in ODE's
quickstep).  Converges for symmetric positive definite ``A`` and
``0 < omega < 2``; for a standard LCP ``lo = 0``, ``hi = inf``.

The row loop is plain Python (Gauss-Seidel is sequential); each row costs one
dot product of length ``n``, so a sweep costs ``O(n^2)`` flops plus ``n``
interpreter steps (about 2-4 microseconds per row).
"""
from __future__ import annotations

import numpy as np

__all__: list[str] = []


def effective_bounds(lo: np.ndarray, hi: np.ndarray, findex: np.ndarray | None,
                     x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bounds with friction rows scaled by the current normal variable."""
    if findex is None:
        return lo, hi
    fr = np.flatnonzero(findex >= 0)
    if fr.size == 0:
        return lo, hi
    lo_e, hi_e = lo.copy(), hi.copy()
    xn = x[findex[fr]]
    lo_e[fr] = -np.abs(lo[fr] * xn)
    hi_e[fr] = np.abs(hi[fr] * xn)
    return lo_e, hi_e


def box_residual(x: np.ndarray, w: np.ndarray, lo: np.ndarray,
                 hi: np.ndarray) -> float:
    """``|| x - clip(x - w, lo, hi) ||_inf`` (natural-map residual)."""
    if x.size == 0:
        return 0.0
    return float(np.max(np.abs(x - np.clip(x - w, lo, hi))))


def pgs(A: np.ndarray, b: np.ndarray, lo: np.ndarray, hi: np.ndarray,
        findex: np.ndarray | None, x0: np.ndarray | None, *, omega: float,
        max_iter: int, tol: float) -> tuple[np.ndarray, str, int, str]:
    """Projected SOR.  Returns ``(x, status, sweeps, message)``; stops when
    the natural-map residual (with the bounds of the current iterate) is at
    most ``tol``."""
    n = b.shape[0]
    diag = np.diag(A).copy()
    if np.any(diag <= 0.0):
        i = int(np.flatnonzero(diag <= 0.0)[0])
        return (np.zeros(n), "singular", 0,
                f"projected Gauss-Seidel needs a positive diagonal; "
                f"A[{i},{i}] = {diag[i]:g}")
    x = np.zeros(n) if x0 is None else np.array(x0, dtype=float)
    lo_e, hi_e = effective_bounds(lo, hi, findex, x)
    x = np.clip(x, lo_e, hi_e)
    rows = [A[i] for i in range(n)]
    step = (omega / diag).tolist()
    bl = b.tolist()
    fi = [-1] * n if findex is None else findex.tolist()
    lol, hil = lo.tolist(), hi.tolist()
    res = np.inf
    for sweep in range(max_iter + 1):
        w = A @ x + b
        lo_e, hi_e = effective_bounds(lo, hi, findex, x)
        res = box_residual(x, w, lo_e, hi_e)
        if res <= tol:
            return x, "solved", sweep, f"residual {res:.3g} after {sweep} sweeps"
        if sweep == max_iter:
            break
        for i in range(n):
            xi = float(x[i]) - step[i] * (float(rows[i] @ x) + bl[i])
            j = fi[i]
            if j >= 0:
                xn = float(x[j])
                lo_i, hi_i = -abs(lol[i] * xn), abs(hil[i] * xn)
            else:
                lo_i, hi_i = lol[i], hil[i]
            x[i] = hi_i if xi > hi_i else (lo_i if xi < lo_i else xi)
    return (x, "max_iterations", max_iter,
            f"residual {res:.3g} > tol={tol:g} after max_iter={max_iter} sweeps")
