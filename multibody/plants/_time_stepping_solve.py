"""The constraint-impulse solve of one time step (private part of
:mod:`multibody.plants`).

Given the Delassus operator ``A = J M^-1 J^T + diag(cfm / h)`` and ``b = J v_free + bias``
(rows as in :mod:`multibody.constraints.base`), find the impulses ``p`` with
``w = A p + b`` complementary to ``p`` row by row:

1. Bilateral rows are eliminated by a Schur complement (Cholesky of ``A_ee``; a
   pseudo-inverse when ``A_ee`` is singular, e.g. a redundant closure row, giving the
   minimum-norm impulse of the redundant rows).
2. Without polyhedral-cone rows the rest is a boxed LCP (``solve_boxed_lcp``, Dantzig
   with a PGS fallback; friction-box rows carry ODE's friction index).
3. With cone rows it is the Stewart-Trinkle/Anitescu-Potra LCP: a multiplier ``lambda_c``
   per contact with ``d_i . v_rel + lambda_c >= 0 _|_ beta_i >= 0`` and
   ``mu p_n - sum_i beta_i >= 0 _|_ lambda_c >= 0``, solved by Lemke's method
   (``solve_lcp`` or, with bounded rows, ``solve_boxed_lcp(method="lemke")``).
   Fallback when Lemke fails: the friction pyramid of the cone (opposite directions
   merged into one row bounded by ``+-mu p_n``; needs an even ``k``) by PGS, with a
   warning; if that fails too, :class:`~solvers.lcp.LCPSolveError`.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from solvers.lcp import LCPResult, LCPSolveError, solve_boxed_lcp, solve_lcp

from ..constraints.base import BILATERAL, BOUNDED, FRICTION_BOX, FRICTION_CONE, UNILATERAL
from ..errors import TimeSteppingWarning

__all__ = ["TimeSteppingWarning", "SolveReport", "solve_impulses", "one_blas_thread"]


PIVOT_TOL = 1e-10
"""Relative pivot tolerance of Lemke's method here. The solvers' default (1e-12) lets Lemke
pivot on round-off-sized entries of the friction-cone LCPs of piles of spheres (it then
cycles to the pivot limit); 1e-10 solves them (e.g. 139 pivots for a size-168 LCP)."""


_BLAS: list = []


def one_blas_thread():
    """A context limiting BLAS to one thread (threadpoolctl), so that no BLAS thread spins
    on the small products of a step; the controller is built once per process, after which
    a limit costs ~10 us."""
    if not _BLAS:
        from threadpoolctl import ThreadpoolController
        _BLAS.append(ThreadpoolController())
    return _BLAS[0].limit(limits=1, user_api="blas")


@dataclass(frozen=True)
class SolveReport:
    """Status of a step's solve: ``status`` ("solved", "fallback", "no_rows"),
    ``method``, ``residual`` of the reduced problem, ``size`` of the LCP (or the number of
    contact rows of the compiled PGS) and ``iterations`` (PGS sweeps; 0 for pivoting)."""

    status: str
    method: str
    residual: float
    size: int
    iterations: int = 0


def _inv_apply(Aee: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    try:
        c = sla.cho_factor(Aee, check_finite=False)
        out = sla.cho_solve(c, rhs, check_finite=False)
        if np.all(np.isfinite(out)):
            return out
    except (np.linalg.LinAlgError, ValueError):
        pass
    return np.linalg.pinv(Aee, rcond=1e-12, hermitian=True) @ rhs


def _cone_lcp(Ar, br, kind, lo, hi, normal):
    """Stewart-Trinkle LCP matrix over the reduced rows plus one lambda per contact."""
    n = Ar.shape[0]
    cone = np.flatnonzero(kind == FRICTION_CONE)
    contacts, slot = np.unique(normal[cone], return_inverse=True)
    nl = contacts.shape[0]
    M = np.zeros((n + nl, n + nl))
    M[:n, :n] = Ar
    M[cone, n + slot] = 1.0
    M[n + slot, cone] = -1.0
    mu = np.zeros(nl)
    mu[slot] = hi[cone]
    M[n + np.arange(nl), contacts] = mu
    q = np.concatenate([br, np.zeros(nl)])
    lo_f = np.concatenate([np.where(kind == BOUNDED, lo, 0.0), np.zeros(nl)])
    hi_f = np.concatenate([np.where(kind == BOUNDED, hi, np.inf), np.full(nl, np.inf)])
    return M, q, lo_f, hi_f


def _pyramid_fallback(Ar, br, kind, lo, hi, normal, context, tol):
    """The cone problem as a friction pyramid (opposite directions merged), by PGS."""
    cone = np.flatnonzero(kind == FRICTION_CONE)
    keep = np.ones(Ar.shape[0], bool)
    partner = {}
    for c in np.unique(normal[cone]):
        rows = cone[normal[cone] == c]
        k = rows.shape[0]
        if k % 2:
            return None
        for i in range(k // 2):
            partner[rows[i]] = rows[i + k // 2]
            keep[rows[i + k // 2]] = False
    idx = np.flatnonzero(keep)
    pos = -np.ones(Ar.shape[0], int)
    pos[idx] = np.arange(idx.shape[0])
    kb = kind[idx].copy()
    lob, hib = lo[idx].copy(), hi[idx].copy()
    fi = -np.ones(idx.shape[0], int)
    for r_new, r in enumerate(idx):
        if kind[r] == FRICTION_CONE:
            kb[r_new] = FRICTION_BOX
            lob[r_new], hib[r_new] = -hi[r], hi[r]
            fi[r_new] = pos[normal[r]]
        elif kind[r] == FRICTION_BOX:
            fi[r_new] = pos[normal[r]]
        elif kind[r] == UNILATERAL:
            lob[r_new], hib[r_new] = 0.0, np.inf
    res = solve_boxed_lcp(Ar[np.ix_(idx, idx)], br[idx], lob, hib, fi, method="pgs",
                          max_iter=5000, tol=tol, context=context)
    if not res.success and not _near_miss(res, br):
        return None      # (a near miss is returned: the caller keeps it as the last resort)
    p = np.zeros(Ar.shape[0])
    for r_new, r in enumerate(idx):
        x = res.x[r_new]
        if kind[r] == FRICTION_CONE:
            p[r], p[partner[r]] = max(x, 0.0), max(-x, 0.0)
        else:
            p[r] = x
    return p, res


NEAR_MISS = 1e-5
"""Largest natural-map residual (velocity units, relative to ``max(1, ||q||_inf)``) of a
solution kept when every method ended above the step's tolerance: a velocity error of
1e-5 m/s moves a body 1e-8 m in a 1 ms step. Beyond it the step raises
:class:`LCPSolveError`."""


def _near_miss(res, q) -> bool:
    z = res.z
    return (z is not None and bool(np.all(np.isfinite(z))) and np.isfinite(res.residual)
            and res.residual <= NEAR_MISS * max(1.0, float(np.max(np.abs(q), initial=0.0))))


def _solve_reduced(Ar, br, kind, lo, hi, normal, context, on_failure, z0=None,
                   tol=1e-7):
    n = Ar.shape[0]
    if np.any(kind == FRICTION_CONE):
        M, q, lo_f, hi_f = _cone_lcp(Ar, br, kind, lo, hi, normal)
        contacts = np.unique(normal[kind == FRICTION_CONE])
        if z0 is not None:
            z0 = np.concatenate([z0[0], z0[1][contacts]])
            if not np.any(z0 > 0):
                z0 = None
        box = np.any(kind == FRICTION_BOX)

        def lemke(z_start):
            if box:
                fi = np.concatenate([np.where(kind == FRICTION_BOX, normal, -1),
                                     -np.ones(M.shape[0] - n, int)])
                lo_b = lo_f.copy()
                hi_b = hi_f.copy()
                lo_b[:n] = np.where(kind == FRICTION_BOX, lo, lo_f[:n])
                hi_b[:n] = np.where(kind == FRICTION_BOX, hi, hi_f[:n])
                return solve_boxed_lcp(M, q, lo_b, hi_b, fi, method="lemke", x0=z_start,
                                       residual_tol=tol, tol=PIVOT_TOL, context=context)
            if np.any(kind == BOUNDED):
                return solve_boxed_lcp(M, q, lo_f, hi_f, method="lemke", x0=z_start,
                                       residual_tol=tol, tol=PIVOT_TOL, context=context)
            return solve_lcp(M, q, "lemke", z0=z_start, residual_tol=tol, tol=PIVOT_TOL,
                             context=context)
        res = lemke(z0)
        if not res.success and z0 is not None:
            res = lemke(None)                 # a warm start gone wrong: retry cold
        if res.success:
            lam = np.zeros(n)
            lam[contacts] = res.z[n:]
            return res.z[:n], SolveReport(res.status, res.method, res.residual, M.shape[0]), lam
        if on_failure == "raise":
            raise LCPSolveError(res, context)
        fb = None if box else _pyramid_fallback(Ar, br, kind, lo, hi, normal, context, tol)
        if fb is None and _near_miss(res, q):
            # Lemke ended a hair above the tolerance (a breakdown on a large degenerate
            # problem, e.g. 98 rows of a standing human model): its impulses are kept
            warnings.warn(f"{context}: Lemke's method ended with status '{res.status}' and "
                          f"residual {res.residual:.3e} (tolerance {tol:g}); its solution is "
                          f"used (within the near-miss bound {NEAR_MISS:g} m/s)",
                          TimeSteppingWarning, stacklevel=4)
            lam = np.zeros(n)
            lam[contacts] = res.z[n:]
            return res.z[:n], SolveReport("near_miss", res.method, res.residual, M.shape[0]), lam
        if fb is None:
            raise LCPSolveError(res, context + " (the friction-pyramid PGS fallback failed too)")
        if not fb[1].success:
            # both ended above the tolerance, the pyramid PGS within the near-miss bound
            # (a Lemke breakdown on a stack of boxes, four points per face: issue 21)
            warnings.warn(f"{context}: Lemke's method failed on the friction-cone LCP "
                          f"(status '{res.status}', residual {res.residual:.3e}) and the "
                          f"friction-pyramid PGS ended at residual {fb[1].residual:.3e} "
                          f"(tolerance {tol:g}); its solution is used (within the near-miss "
                          f"bound {NEAR_MISS:g} m/s)", TimeSteppingWarning, stacklevel=4)
            return fb[0], SolveReport("near_miss", "pgs", fb[1].residual, n), None
        warnings.warn(f"{context}: Lemke's method failed on the friction-cone LCP (status "
                      f"'{res.status}', residual {res.residual:.3e}); using the friction-pyramid "
                      f"PGS solution (residual {fb[1].residual:.3e})", TimeSteppingWarning,
                      stacklevel=4)
        return fb[0], SolveReport("fallback", "pgs", fb[1].residual, n), None
    lo_b = np.where(kind == UNILATERAL, 0.0, lo)
    hi_b = np.where(kind == UNILATERAL, np.inf, hi)
    fi = np.where(kind == FRICTION_BOX, normal, -1)
    if z0 is not None:
        z0 = z0[0] if np.any(z0[0] != 0) else None
    fi_or_none = fi if np.any(fi >= 0) else None
    res: LCPResult = solve_boxed_lcp(Ar, br, lo_b, hi_b, fi_or_none, method="dantzig", x0=z0,
                                     residual_tol=tol, context=context)
    if not res.success and z0 is not None:
        res = solve_boxed_lcp(Ar, br, lo_b, hi_b, fi_or_none, method="dantzig",
                              residual_tol=tol, context=context)
    if res.success:
        return res.x, SolveReport(res.status, res.method, res.residual, n), None
    if on_failure == "raise":
        raise LCPSolveError(res, context)
    fb = solve_boxed_lcp(Ar, br, lo_b, hi_b, fi_or_none, method="pgs", max_iter=5000,
                         tol=tol, context=context)
    if not fb.success:
        best = min((r for r in (res, fb) if _near_miss(r, br)), key=lambda r: r.residual,
                   default=None)
        if best is None:
            raise LCPSolveError(fb, context + f" (Dantzig failed with status '{res.status}', "
                                "then PGS)")
        warnings.warn(f"{context}: Dantzig and PGS ended above the tolerance {tol:g}; the "
                      f"{best.method} solution (residual {best.residual:.3e}) is used (within "
                      f"the near-miss bound {NEAR_MISS:g} m/s)", TimeSteppingWarning,
                      stacklevel=4)
        return best.x, SolveReport("near_miss", best.method, best.residual, n), None
    warnings.warn(f"{context}: the Dantzig boxed-LCP solve failed (status '{res.status}', "
                  f"residual {res.residual:.3e}); using the PGS solution (residual "
                  f"{fb.residual:.3e})", TimeSteppingWarning, stacklevel=4)
    return fb.x, SolveReport("fallback", "pgs", fb.residual, n), None


def solve_impulses(A: np.ndarray, b: np.ndarray, kind: np.ndarray, lo: np.ndarray,
                   hi: np.ndarray, normal: np.ndarray, context: str,
                   on_failure: str = "fallback", warm: tuple | None = None,
                   tol: float = 1e-7) -> tuple[np.ndarray, SolveReport, np.ndarray | None]:
    """Impulses ``p`` (m,) of the rows (module docstring), a :class:`SolveReport` and the
    maximum-dissipation multipliers ``lambda`` (m,) of the friction-cone LCP at the normal
    rows of the cone contacts (the sliding speeds; None without cone rows).

    ``normal`` holds global row indices for friction rows; ``context`` names the system
    and time in warnings and errors; ``on_failure`` is "fallback" or "raise"; ``warm``
    a warm start ``(p, lambda)`` (m,) each, e.g. the previous step's values mapped onto
    these rows; it only changes the pivoting path, never the acceptance test of the
    solution, and a warm start that fails is retried cold; ``tol`` the acceptance of
    the natural-map residual (velocity units, relative to ``max(1, ||b||_inf)``).
    """
    m = b.shape[0]
    if m == 0:
        return np.zeros(0), SolveReport("no_rows", "none", 0.0, 0), None
    e = kind == BILATERAL
    if not e.any():
        return _solve_reduced(A, b, kind, lo, hi, normal, context, on_failure, warm, tol)
    # bilateral rows with a zero Jacobian (redundant directions, e.g. the out-of-plane row
    # of a planar loop closure) carry no impulse; dropping them keeps A_ee definite
    d = np.diagonal(A)
    dead = e & (d <= 1e-14 * max(1.0, float(np.max(d))))
    if dead.any():
        e = e & ~dead
    ie, iu = np.flatnonzero(e), np.flatnonzero(~e & ~dead)
    Aee = A[np.ix_(ie, ie)]
    Aeu = A[np.ix_(ie, iu)]
    X = _inv_apply(Aee, np.column_stack([Aeu, b[ie]]))
    p = np.zeros(m)
    if iu.shape[0] == 0:
        p[ie] = -X[:, -1]
        return p, SolveReport("solved", "cholesky", 0.0, 0), None
    Aue = A[np.ix_(iu, ie)]
    Ar = A[np.ix_(iu, iu)] - Aue @ X[:, :-1]
    br = b[iu] - Aue @ X[:, -1]
    pos = -np.ones(m, int)
    pos[iu] = np.arange(iu.shape[0])
    nr = normal[iu]
    nr = np.where(nr >= 0, pos[np.maximum(nr, 0)], -1)
    wu = None if warm is None else (warm[0][iu], warm[1][iu])
    pu, rep, lam_u = _solve_reduced(Ar, br, kind[iu], lo[iu], hi[iu], nr, context, on_failure,
                                    wu, tol)
    p[iu] = pu
    p[ie] = -(X[:, -1] + X[:, :-1] @ pu)
    lam = None
    if lam_u is not None:
        lam = np.zeros(m)
        lam[iu] = lam_u
    return p, rep, lam
