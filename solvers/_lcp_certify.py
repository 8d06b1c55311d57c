"""What a failed Lemke run proves (private part of :mod:`solvers.lcp`).

Infeasibility is decided by a checked certificate, never by a property of ``M`` alone.
The LCP ``(M, q)`` has no solution when its feasible set
``{z >= 0, M z + q >= 0}`` is empty, and by Farkas' lemma that set is empty exactly when
there is a vector ``y`` with

.. math::

    y \\ge 0,\\qquad M^T y \\le 0,\\qquad q^T y < 0

(for any ``z >= 0``, ``y^T (M z + q) = (M^T y)^T z + q^T y < 0``, so ``M z + q >= 0``
fails somewhere).  This holds for every ``M``; for monotone ``M`` (positive
semidefinite) the converse holds too: a feasible LCP has a solution (Cottle, Pang &
Stone, *The Linear Complementarity Problem*, 1992, section 4.4).

Floating-point check (:func:`check_farkas`), with ``y`` scaled to ``sum(y) = 1`` and
``tau = FARKAS_TAU * n * eps``::

    (M^T y)_j <= tau (|M|^T y)_j  for every j,        q^T y <= -tau |q|^T y < 0 .

It proves that the LCP ``(M + E, q)`` has no feasible point for some ``E`` with
``|E_ij| <= tau |M_ij|`` (a change of each entry at the level of its own rounding:
``E_ij = -|M_ij| (M^T y)_j^+ / (|M|^T y)_j``), and that ``(M, q)`` itself has no
feasible point with ``||z||_1 < -q^T y / max_j (M^T y)_j^+`` (the *radius*, reported;
infinite when ``M^T y <= 0`` exactly).

Where ``y`` comes from, cheapest first:

1. the ray itself: on a secondary ray of a copositive-plus ``M`` the ``z`` part of
   the ray's direction is such a ``y`` (Cottle, Pang & Stone 1992, section 4.4);
2. the linear program ``min q^T y`` over ``y >= 0, M^T y <= 0, sum(y) = 1`` (HiGHS
   through :func:`scipy.optimize.linprog`, on ``M`` and ``q`` scaled to unit size),
   its answer projected onto its active constraints before the check.  An optimum
   ``>= 0`` means, by LP duality, that the feasible set is nonempty (to the LP's
   tolerance): for monotone ``M`` the LCP then has a solution that the pivoting
   missed; for other ``M`` a feasible LCP may still have none.
"""
from __future__ import annotations

import numpy as np

__all__: list[str] = []

FARKAS_TAU = 64.0
"""Tolerance of :func:`check_farkas` in units of ``n * eps`` (``eps`` the float64
machine epsilon): a certificate must hold for a relative change of each entry of ``M``
of at most ``FARKAS_TAU * n * eps``."""

INACCURATE_RESIDUAL = 1e-6
"""Largest residual, relative to ``max(1, ||q||_inf)``, of a finished pivoting run
reported "inaccurate"; above it the run is a "breakdown" (see ``STATUSES``)."""


def lcp_scale(q: np.ndarray) -> float:
    """``max(1, ||q||_inf)``, the scale of the residual bounds."""
    return max(1.0, float(np.max(np.abs(q), initial=0.0)))


def check_farkas(M: np.ndarray, q: np.ndarray, y: np.ndarray) -> tuple[bool, float, str]:
    """Check a Farkas certificate of infeasibility of the LCP ``(M, q)``.

    Parameters
    ----------
    M : ndarray, shape (n, n)
    q : ndarray, shape (n,)
    y : ndarray, shape (n,)
        Candidate; must be nonnegative and nonzero (it is scaled to ``sum(y) = 1``).

    Returns
    -------
    ok : bool
        The checks of the module docstring pass.
    radius : float
        ``-q^T y / max_j (M^T y)_j^+`` (``inf`` when ``M^T y <= 0``): no feasible
        point of ``(M, q)`` has ``||z||_1`` below it (meaningful when ``ok``).
    detail : str
        The measured quantities, for messages.
    """
    n = q.shape[0]
    y = np.asarray(y, float)
    if y.shape != (n,) or not np.all(np.isfinite(y)) or np.any(y < 0) or not y.sum() > 0:
        return False, 0.0, "not a nonnegative nonzero vector"
    y = y / y.sum()
    tau = FARKAS_TAU * n * np.finfo(float).eps
    mty = M.T @ y
    allow = tau * (np.abs(M).T @ y)
    qy = float(q @ y)
    qallow = tau * float(np.abs(q) @ y)
    excess = float(np.max(mty - allow, initial=-np.inf))
    pos = float(np.max(mty, initial=0.0))
    radius = np.inf if pos <= 0.0 else -qy / pos
    ok = bool(excess <= 0.0 and qy <= -qallow and qy < 0.0)
    detail = (f"q^T y = {qy:.3e}, max (M^T y)_j = {float(np.max(mty, initial=0.0)):.3e} "
              f"(allowed {tau:.1e} (|M|^T y)_j), no feasible z with ||z||_1 < "
              f"{radius:.3g}")
    return ok, radius, detail


def _normalized(y: np.ndarray | None) -> np.ndarray | None:
    if y is None or not np.all(np.isfinite(y)):
        return None
    y = np.maximum(y, 0.0)
    s = float(y.sum())
    return y / s if s > 0 else None


def _polish(Ms: np.ndarray, y: np.ndarray) -> np.ndarray | None:
    """``y`` moved (least change) onto ``(M^T y)_J = 0`` on its support ``S``, ``J`` the
    constraints the LP left active: removes the LP's tolerance from the certificate."""
    big = float(np.max(y))
    S = np.flatnonzero(y > 1e-9 * big)
    mty = Ms.T @ y
    J = np.flatnonzero(mty > -1e-7)
    if J.size == 0:
        return y
    B = Ms[np.ix_(S, J)].T                       # (|J|, |S|)
    step, *_ = np.linalg.lstsq(B, B @ y[S], rcond=None)
    out = np.zeros_like(y)
    out[S] = y[S] - step
    return _normalized(out)


def _lp_certificate(M: np.ndarray, q: np.ndarray) -> tuple[list[np.ndarray], str]:
    """Candidates from the LP of the module docstring, and what the LP found."""
    from scipy.optimize import linprog

    n = q.shape[0]
    Ms = M / max(float(np.max(np.abs(M), initial=0.0)), 1e-300)
    qs = q / max(float(np.max(np.abs(q), initial=0.0)), 1e-300)
    try:
        lp = linprog(qs, A_ub=Ms.T, b_ub=np.zeros(n), A_eq=np.ones((1, n)), b_eq=[1.0],
                     bounds=(0, None), method="highs")
    except ValueError as err:                  # HiGHS refused the data
        return [], f"the certificate LP failed ({err})"
    if lp.status == 2:
        return [], ("no y >= 0 with M^T y <= 0 exists (the certificate LP is infeasible), "
                    "so the feasible set {z >= 0, M z + q >= 0} is nonempty")
    if lp.status != 0 or lp.x is None:
        return [], f"the certificate LP ended with status {lp.status} ({lp.message})"
    if lp.fun >= -1e-9:
        return [], (f"the certificate LP min q^T y (y >= 0, M^T y <= 0, sum y = 1) has "
                    f"optimum {lp.fun * max(float(np.max(np.abs(q))), 1e-300):.3g} >= 0, so "
                    "the feasible set {z >= 0, M z + q >= 0} is nonempty to the LP's "
                    "tolerance (for positive-semidefinite M the LCP then has a solution)")
    y = _normalized(np.asarray(lp.x, float))
    cands = [c for c in (_polish(Ms, y) if y is not None else None, y) if c is not None]
    return cands, (f"the certificate LP found q^T y = {lp.fun:.3g} (scaled) but its y "
                   "fails the rounding-level check")


def infeasibility_certificate(M: np.ndarray, q: np.ndarray, ray: np.ndarray | None
                              ) -> tuple[np.ndarray | None, str]:
    """A checked Farkas certificate ``y`` (``sum(y) = 1``) of the LCP ``(M, q)``, or
    None; and a sentence saying where it came from or why there is none."""
    found = _normalized(ray)
    if found is not None:
        ok, _, detail = check_farkas(M, q, found)
        if ok:
            return found, f"infeasible: the ray's direction y is a Farkas certificate ({detail})"
    cands, why = _lp_certificate(M, q)
    for y in cands:
        ok, _, detail = check_farkas(M, q, y)
        if ok:
            return y, f"infeasible: a Farkas certificate y from an LP ({detail})"
    return None, f"no certificate of infeasibility: {why}"


def lemke_verdict(M: np.ndarray, q: np.ndarray, z: np.ndarray, status: str, msg: str,
                  ray: np.ndarray | None) -> tuple[str, str, np.ndarray | None]:
    """Status, message and certificate of a Lemke run on ``(M, q)`` ending on ``z``.

    A run that ended on a ray, a singular basis, or a claimed solution whose residual
    is above ``INACCURATE_RESIDUAL`` is searched for a certificate of infeasibility:
    "infeasible" with it; otherwise a ray becomes "inconclusive" (neither a solution
    nor infeasibility is proven) and the other statuses are kept for the caller's
    residual check ("solved" with a large residual becomes "breakdown" there).
    """
    if status not in ("ray_termination", "singular", "solved"):
        return status, msg, None
    kept = "inconclusive" if status == "ray_termination" else status
    w = M @ z + q
    res = float(np.max(np.abs(np.minimum(z, w)), initial=0.0))
    if res <= INACCURATE_RESIDUAL * lcp_scale(q):
        return kept, msg, None                 # near a solution: the residual decides
    y, why = infeasibility_certificate(M, q, ray)
    if y is not None:
        return "infeasible", f"{msg}; {why}", y
    return kept, f"{msg}; {why}", None
