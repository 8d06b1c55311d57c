"""Linear complementarity problem (LCP) solvers.

Standard LCP ``(M, q)``: find ``z`` with

.. math::

    z \\ge 0,\\qquad w = M z + q \\ge 0,\\qquad z^T w = 0 .

Boxed LCP ``(A, b, lo, hi, findex)`` (BLCP, "mixed LCP"): find ``x`` with
``lo <= x <= hi``, ``w = A x + b`` and, per row, ``x_i = lo_i => w_i >= 0``,
``x_i = hi_i => w_i <= 0``, ``lo_i < x_i < hi_i => w_i = 0``.  Infinite bounds
are allowed (``lo = -inf, hi = inf`` is a bilateral, equality row).
Friction rows follow ODE's convention: ``findex[i] = j >= 0`` means the bounds
of row ``i`` are ``[-|lo_i x_j|, |hi_i x_j|]``, i.e. ``lo_i``/``hi_i`` store
the friction coefficients (``lo_i = -mu``, ``hi_i = mu``) and ``x_j`` is the
normal force of the same contact.

Solvers

* :func:`solve_lcp_lemke` -- Lemke's complementary pivoting method with the
  covering vector ``d = 1``, a lexicographic ratio test (no cycling on
  degenerate problems), optional warm start.  Solves every LCP with a P-matrix;
  for copositive-plus ``M`` (e.g. positive semidefinite) it ends with a solution
  or on a secondary ray, which in exact arithmetic proves the problem infeasible
  (Cottle, Pang & Stone, *The Linear Complementarity Problem*, 1992, section
  4.4).  In floating point a ray (or a singular basis, or a breakdown) proves
  nothing by itself: the verdict "infeasible" is given only with a checked Farkas
  certificate (``result.certificate``: from the ray's direction, else from a small
  LP solved by HiGHS; :mod:`solvers._lcp_certify`), and a ray without one is
  ``"inconclusive"``.
* :func:`solve_boxed_lcp_dantzig` -- principal pivoting in the style of
  Dantzig-Cottle/Baraff (1994) for the boxed problem.
* :func:`solve_lcp_pgs`, :func:`solve_boxed_lcp_pgs` -- projected
  Gauss-Seidel / SOR with warm start.
* :func:`solve_lcp`, :func:`solve_boxed_lcp` -- front doors choosing a method,
  with an optional ``fallback`` method.

Friction rows with the pivoting methods: the bounds of friction rows depend on
the solution.  The Dantzig solver solves a sequence of fixed-bound problems,
the first with zero friction bounds (or the bounds of the warm start ``x0``).
After each one the partition it found (rows free / on a lower bound / on an
upper bound) is solved exactly with the friction coupling ``x_i = -|lo_i x_j|``
or ``x_i = |hi_i x_j|`` on bounds; if that solution is complementary it is the
answer, otherwise it sets the bounds of the next round (a Newton step on the
partition), warm-started from the partition.  Most contact problems settle in
2 to 6 rounds.  (ODE's solver instead fixes a friction row's bounds from the
normal force at the moment the row is added, which leaves the final bounds
inconsistent with the final normal forces; here the returned answer satisfies
the friction bounds of its own normal forces.)  After ``max_friction_iter``
rounds the friction problem is written as an equivalent standard LCP
(:func:`boxed_lcp_to_lcp`) and solved by Lemke's method.  Limits: neither stage is guaranteed for large friction
coefficients (the friction problem is not monotone); the residual check then
reports the failure.  The Lemke method goes straight to the equivalent LCP.
PGS treats friction rows directly with the current ``x_j`` in every sweep.

Every result carries its residual, the natural-map residual

.. math::

    r = \\| x - \\Pi_{[lo, hi]}(x - w) \\|_\\infty ,

which is ``|| min(z, w) ||_inf`` for the standard LCP and uses the friction
bounds of the returned ``x`` for friction rows.  ``r = 0`` exactly at a
solution.  A solver declares ``"solved"`` exactly when ``r <= residual_tol *
max(1, ||q||_inf)`` (``||b||_inf`` for boxed problems), also when it stopped
early (ray, pivot limit) on a point that passes (a note in the message).  A
pivoting method that finishes with a larger residual reports ``"inaccurate"``
while ``r <= 1e-6 max(1, ||q||_inf)`` and ``"breakdown"`` beyond: a large
residual is never a near miss.  :data:`STATUSES` maps every status to what it
guarantees: only ``"solved"`` and ``"fallback"`` are successes and carry the
residual bound; only ``"infeasible"`` proves something about the problem.

Failures are never silent: ``result.success`` is False, ``result.status`` says
why, and with ``raise_on_failure=True`` an :class:`LCPSolveError` is raised
whose message holds the caller's ``context`` (e.g. ``"system 'plant' at
t=0.125"``), the status and the residual.  With ``fallback="pgs"`` (or another
method) the front doors re-solve a failed problem with that method, emit an
:class:`LCPFallbackWarning`, and return the fallback's result with status
``"fallback"`` if its residual passes the same check (not after a proof of
infeasibility, which the fallback could not overturn).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import _lcp_boxed, _lcp_certify, _lcp_friction, _lcp_lemke, _lcp_pgs
from ._lcp_result import (STATUSES, LCPFallbackWarning, LCPResult, LCPSolveError, finish,
                          front_door, verified)
from ._lcp_validate import check_boxed, check_lcp, check_start

_RESIDUAL_TOL = 1e-8
"""Default acceptance tolerance of the residual (relative to max(1, ||q||_inf))."""

__all__ = [
    "LCPResult", "LCPSolveError", "LCPFallbackWarning", "STATUSES",
    "lcp_residual", "boxed_lcp_residual", "boxed_lcp_to_lcp",
    "solve_lcp", "solve_lcp_lemke", "solve_lcp_pgs",
    "solve_boxed_lcp", "solve_boxed_lcp_dantzig", "solve_boxed_lcp_lemke",
    "solve_boxed_lcp_pgs",
]

# ----------------------------------------------------------------- helpers --

def lcp_residual(z: np.ndarray, w: np.ndarray) -> float:
    """Natural-map residual ``|| min(z, w) ||_inf`` of a standard LCP.

    Parameters
    ----------
    z, w : array_like, shape (n,)
        Candidate solution and ``M z + q``.

    Returns
    -------
    float
        Zero exactly when ``z >= 0``, ``w >= 0`` and ``z^T w = 0``.
    """
    z, w = np.asarray(z, float), np.asarray(w, float)
    return float(np.max(np.abs(np.minimum(z, w)), initial=0.0))


def boxed_lcp_residual(x: np.ndarray, w: np.ndarray, lo: np.ndarray,
                       hi: np.ndarray, findex: np.ndarray | None = None) -> float:
    """Natural-map residual of a boxed LCP.

    Parameters
    ----------
    x, w : array_like, shape (n,)
        Candidate solution and ``A x + b``.
    lo, hi : array_like, shape (n,)
        Bounds (friction coefficients on friction rows).
    findex : array_like of int, shape (n,), optional
        Friction index (module docstring).

    Returns
    -------
    float
        ``|| x - clip(x - w, lo_e, hi_e) ||_inf`` with ``lo_e``/``hi_e`` the
        bounds with friction rows scaled by ``x[findex]``; zero exactly at a
        solution.
    """
    x, w = np.asarray(x, float), np.asarray(w, float)
    fi = None if findex is None else np.asarray(findex, dtype=int)
    lo_e, hi_e = _lcp_pgs.effective_bounds(np.asarray(lo, float),
                                           np.asarray(hi, float), fi, x)
    return _lcp_pgs.box_residual(x, w, lo_e, hi_e)


def boxed_lcp_to_lcp(A: Any, b: Any, lo: Any, hi: Any, findex: Any = None
                     ) -> tuple[np.ndarray, np.ndarray, Callable[[np.ndarray], np.ndarray]]:
    """Equivalent standard LCP of a boxed LCP.

    Parameters
    ----------
    A : array_like, shape (n, n)
    b, lo, hi : array_like, shape (n,)
    findex : array_like of int, shape (n,), optional
        Friction index (module docstring).

    Returns
    -------
    M : ndarray, shape (N, N)
    q : ndarray, shape (N,)
    to_x : callable
        Maps an LCP solution ``z`` (shape ``(N,)``) to the BLCP solution.

    Notes
    -----
    Rows with ``lo`` finite, ``hi = inf`` map to ``x = lo + y``;
    ``lo = -inf`` and ``hi`` finite to ``x = hi - y``; finite boxes to
    ``x = lo + y`` with a multiplier ``v`` of the upper bound
    (``y ⟂ w + v``, ``v ⟂ hi - lo - y``); free rows to ``x = y+ - y-``;
    rows with ``lo = hi`` are eliminated.  Without friction rows and with
    ``A`` positive semidefinite, ``M`` is (nonsymmetric) positive
    semidefinite, hence copositive-plus, and Lemke's method solves it or
    proves it infeasible.

    A friction row ``i`` (``findex[i] = j``) becomes ``x_i = p - m`` with
    ``p ⟂ w_i + l_p``, ``m ⟂ -w_i + l_m``, ``l_p ⟂ |hi_i| x_j - p``,
    ``l_m ⟂ |lo_i| x_j - m`` (one multiplier ``l ⟂ mu x_j - p - m`` when
    ``|lo_i| = |hi_i| = mu``); this needs ``lo_j >= 0`` and row ``j`` not a
    friction row (ValueError otherwise).  That LCP is not copositive-plus in
    general (Lemke may end on a ray for large friction coefficients).
    """
    A, b, lo, hi, fi = check_boxed(A, b, lo, hi, findex)
    why = _lcp_friction.friction_lcp_problem(lo, fi)
    if why:
        raise ValueError(f"findex: no standard-LCP form: {why}")
    M, q, xb, E = _lcp_boxed.box_to_lcp(A, b, lo, hi, fi)
    return M, q, lambda z: xb + E @ np.asarray(z, float)


def _scale(v: np.ndarray) -> float:
    return max(1.0, float(np.max(np.abs(v), initial=0.0)))


def _verified(z: np.ndarray, w: np.ndarray, status: str, residual: float, scale: float,
              residual_tol: float, iterations: int, method: str, message: str,
              certificate: np.ndarray | None = None) -> LCPResult:
    return verified(z, w, status, residual, residual_tol * scale,
                    _lcp_certify.INACCURATE_RESIDUAL * scale, iterations, method, message,
                    certificate)


# --------------------------------------------------------- standard LCP --

def solve_lcp_lemke(M: Any, q: Any, *, max_pivots: int | None = None,
                    tol: float = 1e-10, z0: Any = None, d: Any = None,
                    residual_tol: float = _RESIDUAL_TOL,
                    raise_on_failure: bool = False, context: str = "") -> LCPResult:
    """Solve the standard LCP ``(M, q)`` by Lemke's method.

    Parameters
    ----------
    M : array_like, shape (n, n)
    q : array_like, shape (n,)
    max_pivots : int, optional
        Pivot limit; default ``50 * (n + 1)``.  Reaching it gives status
        ``"max_iterations"``.
    tol : float
        Pivot and tie tolerance (relative).
    z0 : array_like, shape (n,), optional
        Warm start: the complementary basis with ``z_i`` basic where
        ``z0_i > 0`` starts the method (covering vector ``B 1``); if it
        already solves the problem no pivot is made.  A warm start that ends
        on a ray is retried cold.
    d : array_like, shape (n,), optional
        Covering vector of the cold start, all entries > 0; default ones.
        The augmented problem is ``w = M z + q + d z0`` and the method starts
        on the primary ray ``z0 >= max(-q_i / d_i)``.
    residual_tol : float
        Acceptance: ``||min(z, w)||_inf <= residual_tol * max(1, ||q||_inf)``.
    raise_on_failure : bool
        Raise :class:`LCPSolveError` instead of returning a failed result.
    context : str
        Text naming the caller (system, time) used in error messages.

    Returns
    -------
    LCPResult
        Status ``"solved"``; ``"infeasible"`` with a checked certificate
        (``result.certificate = y``: ``y >= 0``, ``sum(y) = 1``, ``M^T y <= 0``,
        ``q^T y < 0`` to rounding level); ``"inconclusive"`` (a secondary ray
        without a certificate), ``"max_iterations"``, ``"singular"``,
        ``"inaccurate"`` or ``"breakdown"`` (:data:`STATUSES`).

    References
    ----------
    C. E. Lemke, "Bimatrix equilibrium points and mathematical programming",
    Management Science 11 (1965).  Cottle, Pang & Stone (1992), sections 4.4
    and 4.9 (lexicographic degeneracy resolution).

    Examples
    --------
    >>> import numpy as np
    >>> r = solve_lcp_lemke(np.array([[2.0, 1.0], [1.0, 2.0]]), np.array([-1.0, 1.0]))
    >>> r.status, np.round(r.z, 6)
    ('solved', array([0.5, 0. ]))
    """
    Mm, qv = check_lcp(M, q)
    n = qv.shape[0]
    zg = check_start("z0", z0, n)
    dv = check_start("d", d, n)
    if dv is not None and not np.all(dv > 0):
        raise ValueError(f"d (covering vector) must be positive; d[{int(np.argmin(dv))}] = "
                         f"{dv.min():g}")
    if max_pivots is None:
        max_pivots = 50 * (n + 1)
    if int(max_pivots) < 1:
        raise ValueError(f"max_pivots must be >= 1; got {max_pivots}")
    z, status, piv, msg, ray = _lcp_lemke.lemke(Mm, qv, max_pivots=int(max_pivots),
                                                tol=tol, z_guess=zg, d=dv)
    status, msg, cert = _lcp_certify.lemke_verdict(Mm, qv, z, status, msg, ray)
    w = Mm @ z + qv
    res = lcp_residual(z, w)
    out = _verified(z, w, status, res, _scale(qv), residual_tol, piv, "lemke", msg, cert)
    return finish(out, raise_on_failure, context)


def solve_lcp_pgs(M: Any, q: Any, z0: Any = None, *, omega: float = 1.0,
                  max_iter: int = 1000, tol: float = _RESIDUAL_TOL,
                  raise_on_failure: bool = False, context: str = "") -> LCPResult:
    """Solve the standard LCP ``(M, q)`` by projected Gauss-Seidel / SOR.

    ``z_i <- max(0, z_i - omega (M_i z + q_i) / M_ii)`` row by row.

    Parameters
    ----------
    M : array_like, shape (n, n)
        Needs a positive diagonal; converges for symmetric positive definite
        ``M`` and ``0 < omega < 2``.
    q : array_like, shape (n,)
    z0 : array_like, shape (n,), optional
        Warm start (projected onto ``z >= 0``).
    omega : float
        Relaxation factor in (0, 2); 1 is Gauss-Seidel.
    max_iter : int
        Maximum number of sweeps (status ``"max_iterations"`` when reached).
    tol : float
        Stop when ``||min(z, w)||_inf <= tol * max(1, ||q||_inf)``.
    raise_on_failure, context
        As in :func:`solve_lcp_lemke`.

    Returns
    -------
    LCPResult
        ``iterations`` counts sweeps.  Cost per sweep: ``n`` Python-level
        row updates of ``O(n)`` each.
    """
    Mm, qv = check_lcp(M, q)
    n = qv.shape[0]
    return solve_boxed_lcp_pgs(Mm, qv, np.zeros(n), np.full(n, np.inf), None,
                               x0=check_start("z0", z0, n), omega=omega,
                               max_iter=max_iter, tol=tol,
                               raise_on_failure=raise_on_failure, context=context)


def solve_lcp(M: Any, q: Any, method: str = "lemke", *, z0: Any = None,
              fallback: str | None = None, raise_on_failure: bool = False,
              context: str = "", **options: Any) -> LCPResult:
    """Solve the standard LCP ``(M, q)`` with ``method`` "lemke" or "pgs".

    Parameters
    ----------
    M : array_like, shape (n, n)
    q : array_like, shape (n,)
    method : {"lemke", "pgs"}
        :func:`solve_lcp_lemke` or :func:`solve_lcp_pgs`.
    z0 : array_like, shape (n,), optional
        Warm start, passed to both methods.
    fallback : {None, "lemke", "pgs"}
        Method (other than ``method``) that re-solves a failed problem with
        its default options and the same ``z0``.  An
        :class:`LCPFallbackWarning` naming ``context`` is emitted and a
        verified fallback solution is returned with status ``"fallback"``.
        If both fail, the result with the smaller residual is returned.  A
        result proven ``"infeasible"`` is returned without a fallback.
    raise_on_failure : bool
        Raise :class:`LCPSolveError` when no verified solution is found.
    context : str
        Text naming the caller (system, time) for warnings and errors.
    **options
        Keyword options of the chosen method (``max_pivots``, ``tol``,
        ``d``, ``residual_tol`` / ``omega``, ``max_iter``, ``tol``); unknown
        keywords raise TypeError.

    Returns
    -------
    LCPResult
    """
    solvers = {"lemke": lambda **kw: solve_lcp_lemke(M, q, z0=z0, **kw),
               "pgs": lambda **kw: solve_lcp_pgs(M, q, z0, **kw)}
    return front_door("solve_lcp", solvers, method, fallback, options,
                       raise_on_failure, context)


# ------------------------------------------------------------ boxed LCP --

def _boxed_result(A: np.ndarray, b: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                  fi: np.ndarray | None, x: np.ndarray, status: str, its: int,
                  method: str, msg: str, residual_tol: float,
                  cert: np.ndarray | None = None) -> LCPResult:
    w = A @ x + b
    res = boxed_lcp_residual(x, w, lo, hi, fi)
    return _verified(x, w, status, res, _scale(b), residual_tol, its, method, msg, cert)


def solve_boxed_lcp_dantzig(A: Any, b: Any, lo: Any, hi: Any, findex: Any = None, *,
                            x0: Any = None, max_pivots: int | None = None,
                            tol: float = 1e-12, residual_tol: float = _RESIDUAL_TOL,
                            max_friction_iter: int = 10,
                            raise_on_failure: bool = False,
                            context: str = "") -> LCPResult:
    """Solve a boxed LCP by Dantzig-style principal pivoting.

    Parameters
    ----------
    A : array_like, shape (n, n)
        Positive definite (or a P-matrix) for guaranteed termination; a
        singular ``A`` may give status ``"singular"``/``"unbounded"`` (add a
        small diagonal regularization (CFM) or use ``fallback``).
    b, lo, hi : array_like, shape (n,)
        ``lo <= hi``; infinite entries allowed outside friction rows.
    findex : array_like of int, shape (n,), optional
        Friction index (module docstring); -1 for ordinary rows.
    x0 : array_like, shape (n,), optional
        Warm start: its partition into lower/upper/free rows is tried first
        (one linear solve; no pivots if it is still complementary).
    max_pivots : int, optional
        Pivot limit per friction round, default ``50 * (n + 1)`` (for the
        Lemke stage ``50 * (N + 1)``, ``N`` the size of its LCP).
    tol : float
        Pivot tolerance (relative).
    residual_tol : float
        Acceptance: residual ``<= residual_tol * max(1, ||b||_inf)``.
    max_friction_iter : int
        Rounds of the friction-bound iteration before the equivalent
        standard LCP is handed to Lemke's method (module docstring).
    raise_on_failure, context
        As in :func:`solve_lcp_lemke`.

    Returns
    -------
    LCPResult
        ``x``/``z`` the solution, ``iterations`` the total number of pivots.

    References
    ----------
    D. Baraff, "Fast contact force computation for nonpenetrating rigid
    bodies", SIGGRAPH 1994; Cottle, Pang & Stone (1992), section 4.2
    (principal pivoting).
    """
    Am, bv, lov, hiv, fi = check_boxed(A, b, lo, hi, findex)
    n = bv.shape[0]
    xg = check_start("x0", x0, n)
    mp = 50 * (n + 1) if max_pivots is None else int(max_pivots)
    accept = residual_tol * _scale(bv)

    def inner(lo_k, hi_k, guess):
        return _lcp_boxed.dantzig(Am, bv, lo_k, hi_k, max_iter=mp, tol=tol, guess=guess)

    x, st, its, msg, cert = _lcp_friction.friction_rounds(
        inner, Am, bv, lov, hiv, fi, xg, accept, max_friction_iter, max_pivots, tol)
    out = _boxed_result(Am, bv, lov, hiv, fi, x, st, its, "dantzig", msg, residual_tol, cert)
    return finish(out, raise_on_failure, context)


def solve_boxed_lcp_lemke(A: Any, b: Any, lo: Any, hi: Any, findex: Any = None, *,
                          x0: Any = None, max_pivots: int | None = None,
                          tol: float = 1e-12, residual_tol: float = _RESIDUAL_TOL,
                          max_friction_iter: int = 10,
                          raise_on_failure: bool = False,
                          context: str = "") -> LCPResult:
    """Solve a boxed LCP by Lemke's method on the equivalent standard LCP.

    The LCP is built by :func:`boxed_lcp_to_lcp`, friction rows included.
    Slower than Dantzig (the LCP has up to ``2n`` rows, ``3`` per symmetric
    friction row) but it applies to positive semidefinite ``A``.

    Parameters
    ----------
    A : array_like, shape (n, n)
    b, lo, hi : array_like, shape (n,)
        As in :func:`solve_boxed_lcp_dantzig`.
    findex : array_like of int, shape (n,), optional
        Friction index (module docstring).
    x0 : array_like, shape (n,), optional
        Not used, except when friction rows have no LCP form (a normal row
        with ``lo < 0``): then the friction rounds of
        :func:`solve_boxed_lcp_dantzig` run with fixed-bound Lemke solves,
        starting from the bounds of ``x0``.
    max_pivots : int, optional
        Default ``50 * (N + 1)`` for an LCP of size ``N``.
    tol, residual_tol, max_friction_iter, raise_on_failure, context
        As in :func:`solve_boxed_lcp_dantzig`.

    Returns
    -------
    LCPResult
    """
    Am, bv, lov, hiv, fi = check_boxed(A, b, lo, hi, findex)
    n = bv.shape[0]
    xg = check_start("x0", x0, n)
    accept = residual_tol * _scale(bv)

    if not _lcp_friction.friction_lcp_problem(lov, fi):
        x, st, its, msg, cert = _lcp_friction.lemke_on_lcp_form(Am, bv, lov, hiv, fi,
                                                                max_pivots, tol)
    else:
        def inner(lo_k, hi_k, guess):
            xk, stk, itk, msgk, _ = _lcp_friction.lemke_on_lcp_form(Am, bv, lo_k, hi_k, None,
                                                                    max_pivots, tol)
            return xk, stk, itk, msgk, None

        x, st, its, msg, cert = _lcp_friction.friction_rounds(
            inner, Am, bv, lov, hiv, fi, xg, accept, max_friction_iter, max_pivots, tol)
    out = _boxed_result(Am, bv, lov, hiv, fi, x, st, its, "lemke", msg, residual_tol, cert)
    return finish(out, raise_on_failure, context)


def solve_boxed_lcp_pgs(A: Any, b: Any, lo: Any, hi: Any, findex: Any = None, *,
                        x0: Any = None, omega: float = 1.0, max_iter: int = 1000,
                        tol: float = _RESIDUAL_TOL, raise_on_failure: bool = False,
                        context: str = "") -> LCPResult:
    """Solve a boxed LCP by projected Gauss-Seidel / SOR.

    ``x_i <- clip(x_i - omega (A_i x + b_i) / A_ii, lo_i, hi_i)`` row by row,
    friction rows taking their bounds from the current ``x[findex[i]]``
    (Cottle, Pang & Stone 1992, section 5.2).

    Parameters
    ----------
    A : array_like, shape (n, n)
        Positive diagonal required; convergence is guaranteed for symmetric
        positive definite ``A`` without friction rows.
    b, lo, hi : array_like, shape (n,)
    findex : array_like of int, shape (n,), optional
        Friction index (module docstring).
    x0 : array_like, shape (n,), optional
        Warm start (clipped into the bounds).
    omega : float
        Relaxation factor in (0, 2).
    max_iter : int
        Maximum number of sweeps.
    tol : float
        Stop when the residual is at most ``tol * max(1, ||b||_inf)``.
    raise_on_failure, context
        As in :func:`solve_lcp_lemke`.

    Returns
    -------
    LCPResult
        ``iterations`` counts sweeps; each sweep costs ``n`` Python-level
        row updates of ``O(n)``.
    """
    Am, bv, lov, hiv, fi = check_boxed(A, b, lo, hi, findex)
    n = bv.shape[0]
    xg = check_start("x0", x0, n)
    if not 0.0 < omega < 2.0:
        raise ValueError(f"omega must be in (0, 2); got {omega}")
    if int(max_iter) < 0:
        raise ValueError(f"max_iter must be >= 0; got {max_iter}")
    x, st, its, msg = _lcp_pgs.pgs(Am, bv, lov, hiv, fi, xg, omega=omega,
                                   max_iter=int(max_iter), tol=tol * _scale(bv))
    out = _boxed_result(Am, bv, lov, hiv, fi, x, st, its, "pgs", msg, tol)
    return finish(out, raise_on_failure, context)


def solve_boxed_lcp(A: Any, b: Any, lo: Any, hi: Any, findex: Any = None, *,
                    method: str = "dantzig", x0: Any = None,
                    fallback: str | None = None, raise_on_failure: bool = False,
                    context: str = "", **options: Any) -> LCPResult:
    """Solve a boxed LCP with ``method`` "dantzig", "lemke" or "pgs".

    Parameters
    ----------
    A : array_like, shape (n, n)
    b, lo, hi : array_like, shape (n,)
    findex : array_like of int, shape (n,), optional
        Friction index (module docstring).
    method : {"dantzig", "lemke", "pgs"}
        :func:`solve_boxed_lcp_dantzig`, :func:`solve_boxed_lcp_lemke` or
        :func:`solve_boxed_lcp_pgs`.
    x0 : array_like, shape (n,), optional
        Warm start, passed to both methods.
    fallback : {None, "dantzig", "lemke", "pgs"}
        As in :func:`solve_lcp`, for example ``method="dantzig",
        fallback="pgs"``.
    raise_on_failure, context
        As in :func:`solve_lcp`.
    **options
        Keyword options of the chosen method.

    Returns
    -------
    LCPResult

    Examples
    --------
    One contact, normal row 0 and one friction row 1 with ``mu = 0.5``:

    >>> import numpy as np
    >>> A = np.array([[1.0, 0.2], [0.2, 1.0]])
    >>> r = solve_boxed_lcp(A, [-1.0, 2.0], [0.0, -0.5], [np.inf, 0.5], [-1, 0])
    >>> r.status, np.round(r.x, 6)
    ('solved', array([ 1.111111, -0.555556]))
    """
    fns = {"dantzig": solve_boxed_lcp_dantzig, "lemke": solve_boxed_lcp_lemke,
           "pgs": solve_boxed_lcp_pgs}
    solvers = {k: (lambda f: lambda **kw: f(A, b, lo, hi, findex, x0=x0, **kw))(f)
               for k, f in fns.items()}
    return front_door("solve_boxed_lcp", solvers, method, fallback, options,
                       raise_on_failure, context)
