"""Friction rows of the pivoting boxed-LCP solvers (private part of
:mod:`solvers.lcp`).

The bounds of a friction row ``i`` (``findex[i] = j``) are
``[-|lo_i x_j|, |hi_i x_j|]``, which depend on the solution.
:func:`friction_rounds` solves a sequence of fixed-bound problems: the first
with zero friction bounds (or the bounds of a warm start), each following one
with the bounds implied by an exact solve of the previous partition with the
friction coupling ``x_i = +-mu_i x_j`` (a Newton step on the partition).  It
stops as soon as that exact partition solve is complementary, or when the
bounds stop changing; a partition that comes back damps the bound update.
After ``max_friction_iter`` rounds the problem is
written as a standard LCP (:func:`solvers._lcp_boxed.box_to_lcp`) and solved
by Lemke's method.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from . import _lcp_boxed, _lcp_certify, _lcp_lemke, _lcp_pgs

__all__: list[str] = []


def friction_lcp_problem(lo: np.ndarray, fi: np.ndarray | None) -> str:
    """Why the friction problem has no standard-LCP form here ("" if it has)."""
    if fi is None:
        return ""
    tgt = fi[fi >= 0]
    if np.any(fi[tgt] >= 0):
        return "a friction row's findex points to another friction row"
    if np.any(lo[tgt] < 0):
        return "the normal row of a friction row has lo < 0"
    return ""


def lemke_on_lcp_form(A: np.ndarray, b: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                       fi: np.ndarray | None, max_pivots: int | None,
                       tol: float) -> tuple[np.ndarray, str, int, str, np.ndarray | None]:
    """Lemke on the equivalent standard LCP (:func:`boxed_lcp_to_lcp`); the last item
    is a checked certificate of that LCP's infeasibility (status "infeasible") or None
    (:func:`solvers._lcp_certify.lemke_verdict`)."""
    M, q, xb, E = _lcp_boxed.box_to_lcp(A, b, lo, hi, fi)
    mp = 50 * (q.shape[0] + 1) if max_pivots is None else int(max_pivots)
    z, st, piv, msg, ray = _lcp_lemke.lemke(M, q, max_pivots=mp, tol=tol)
    st, msg, cert = _lcp_certify.lemke_verdict(M, q, z, st, msg, ray)
    x = xb + E @ z
    x = np.clip(x, *_lcp_pgs.effective_bounds(lo, hi, fi, x))
    return x, st, piv, f"Lemke on the equivalent LCP of size {q.shape[0]}: {msg}", cert


def friction_rounds(inner: Callable[..., tuple], A: np.ndarray, b: np.ndarray,
                     lo: np.ndarray, hi: np.ndarray, fi: np.ndarray | None,
                     x0: np.ndarray | None, accept: float, max_friction_iter: int,
                     max_pivots: int | None, tol: float
                     ) -> tuple[np.ndarray, str, int, str, np.ndarray | None]:
    """Friction-bound rounds around a fixed-bound solver
    ``inner(lo, hi, guess) -> (x, status, iters, msg, state)``; returns
    ``(x, status, iterations, message, certificate)``, the certificate from the
    final Lemke stage (see :func:`lemke_on_lcp_form`).

    After each round the partition of the result is solved exactly with the
    friction coupling (``x_i = +-mu_i x_j`` on bounds).  If that is
    complementary it is the answer; otherwise its solution (a Newton step on
    the partition) sets the friction bounds of the next round; when a
    partition comes back (a cycle) the bound update is damped.  After
    ``max_friction_iter`` rounds the equivalent standard LCP is solved by
    Lemke's method."""
    ptol = 1e-3 * accept
    guess = None
    if x0 is not None:
        lo_k, hi_k = _lcp_pgs.effective_bounds(lo, hi, fi, x0)
        guess = _lcp_boxed.partition_of(x0, lo_k, hi_k)
        if fi is not None:
            x = _lcp_boxed.solve_partition(A, b, lo, hi, guess, ptol, fi, x0)
            if x is not None:
                return x, "solved", 0, "warm start partition is complementary", None
    if fi is None:
        x, st, it, msg, _ = inner(lo, hi, guess)
        return x, st, it, msg, None
    fr = fi >= 0
    if x0 is None:
        lo_k, hi_k = lo.copy(), hi.copy()
        lo_k[fr] = hi_k[fr] = 0.0
    total = 0
    change = np.inf
    seen: set[bytes] = set()
    beta = 1.0
    for k in range(1, max_friction_iter + 1):
        x, st, it, msg, _ = inner(lo_k, hi_k, guess)
        total += it
        if st != "solved":
            break
        guess = _lcp_boxed.partition_of(x, lo_k, hi_k)
        xp = _lcp_boxed.partition_solution(A, b, lo, hi, guess, fi, x)
        if xp is not None:
            ok = _lcp_boxed.check_partition(A, b, lo, hi, guess, xp, ptol, fi)
            if ok is not None:
                return ok, "solved", total, (f"{total} pivots in {k} friction rounds, "
                                             "then an exact solve on the partition"), None
        lo_n, hi_n = _lcp_pgs.effective_bounds(lo, hi, fi, x)
        change = max(float(np.max(np.abs(lo_n[fr] - lo_k[fr]))),
                     float(np.max(np.abs(hi_n[fr] - hi_k[fr]))))
        if change <= 0.1 * accept:     # x solves the BLCP with its own bounds
            x = np.clip(x, lo_n, hi_n)
            return x, "solved", total, f"{total} pivots in {k} friction rounds", None
        if xp is not None:             # Newton step on the partition
            lo_n, hi_n = _lcp_pgs.effective_bounds(lo, hi, fi, xp)
        key = guess.tobytes()
        if key in seen:                # partitions cycle: damp the bound update
            beta = max(0.25, 0.5 * beta)
        seen.add(key)
        lo_k, hi_k = lo_k.copy(), hi_k.copy()
        lo_k[fr] += beta * (lo_n[fr] - lo_k[fr])
        hi_k[fr] += beta * (hi_n[fr] - hi_k[fr])
    head = (f"friction round {k}: {msg}" if st != "solved" else
            f"friction bounds not converged after max_friction_iter="
            f"{max_friction_iter} rounds (last change {change:.3e})")
    why = friction_lcp_problem(lo, fi)
    if why:
        return x, (st if st != "solved" else "max_iterations"), total, \
            f"{head}; no LCP form to fall back on: {why}", None
    xl, stl, itl, msgl, cert = lemke_on_lcp_form(A, b, lo, hi, fi, max_pivots, tol)
    if stl not in ("solved", "infeasible"):     # keep whichever iterate is closer
        res_l = _lcp_pgs.box_residual(xl, A @ xl + b, *_lcp_pgs.effective_bounds(lo, hi, fi, xl))
        res_r = _lcp_pgs.box_residual(x, A @ x + b, *_lcp_pgs.effective_bounds(lo, hi, fi, x))
        if res_r < res_l:
            return (x, "max_iterations", total + itl,
                    f"{head}; {msgl}; returning the last friction round", None)
    return xl, stl, total + itl, f"{head}; {msgl}", cert
