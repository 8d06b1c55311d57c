"""Lemke's complementary pivoting method (private kernel of :mod:`solvers.lcp`).

The augmented system solved here is

.. math::

    w - M z - d\\,z_0 = q,\\qquad w, z, z_0 \\ge 0,\\qquad w^T z = 0,

with covering vector ``d`` (Lemke 1965; Cottle, Pang & Stone, *The Linear
Complementarity Problem*, 1992, section 4.4).  The basis inverse ``B^{-1}`` is
kept explicitly and updated by a rank-one (product-form) update at each pivot,
with a fresh factorization every ``_REFACTOR_EVERY`` pivots.  Ties in the
minimum-ratio test are broken by the lexicographic rule on the rows of
``[B^{-1} q, B^{-1}]`` (Cottle, Pang & Stone 1992, section 4.9), which rules out
cycling on degenerate problems.

The kernel returns raw arrays and a status string (and, on a secondary ray, the
ray's direction in ``z``); the public wrapper in :mod:`solvers.lcp` computes the
residual and decides whether the answer is accepted, and
:mod:`solvers._lcp_certify` decides what a failed run proves.
"""
from __future__ import annotations

import numpy as np

__all__: list[str] = []

_REFACTOR_EVERY = 50


def _lexmin_row(cand: np.ndarray, qbar: np.ndarray, binv: np.ndarray,
                scale: np.ndarray, tie_tol: float) -> int:
    """Row index among ``cand`` that lexicographically minimizes
    ``[qbar_i, binv_i] / scale_i`` (``scale_i > 0``)."""
    ratios = qbar[cand] / scale
    best = ratios.min()
    keep = ratios <= best + tie_tol * max(1.0, abs(best))
    cand, scale = cand[keep], scale[keep]
    col = 0
    n = binv.shape[1]
    while cand.size > 1 and col < n:
        r = binv[cand, col] / scale
        best = r.min()
        keep = r <= best + tie_tol * max(1.0, abs(best))
        cand, scale = cand[keep], scale[keep]
        col += 1
    return int(cand[0])


def basis_matrix(M: np.ndarray, basic: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Columns of ``[I, -M, -d]`` selected by ``basic``."""
    n = M.shape[0]
    B = np.zeros((n, basic.size))
    w = basic < n
    B[basic[w], np.flatnonzero(w)] = 1.0
    z = (basic >= n) & (basic < 2 * n)
    B[:, z] = -M[:, basic[z] - n]
    a = basic == 2 * n
    B[:, a] = -d[:, None]
    return B


class _SingularBasis(Exception):
    """The refactorization of the basis found it singular (caught in this module)."""


class _Basis:
    """Basis of the augmented Lemke system with an explicit inverse.

    Variables are numbered ``0..n-1`` for ``w``, ``n..2n-1`` for ``z`` and
    ``2n`` for the artificial ``z0``.
    """

    def __init__(self, M: np.ndarray, q: np.ndarray, d: np.ndarray,
                 basic: np.ndarray, binv: np.ndarray | None = None) -> None:
        self.M, self.q, self.d = M, q, d
        self.n = M.shape[0]
        self.basic = basic.copy()
        self.pivots = 0
        if binv is None:
            self.refactor()
        else:
            self.binv = binv
            self.qbar = binv @ q
            self.updates = 0

    def matrix(self) -> np.ndarray:
        return basis_matrix(self.M, self.basic, self.d)

    def refactor(self) -> None:
        try:
            self.binv = np.linalg.inv(self.matrix())
        except np.linalg.LinAlgError:
            # the product-form updates let a (numerically) dependent column into the
            # basis, e.g. on the identical rows of redundant contacts
            raise _SingularBasis(f"the basis became singular at its refactorization "
                                 f"(basic variables {[_name(int(b), self.n) for b in self.basic]})"
                                 ) from None
        self.qbar = self.binv @ self.q
        self.updates = 0

    def entering_column(self, var: int) -> np.ndarray:
        n = self.n
        if var < n:
            return self.binv[:, var].copy()
        if var < 2 * n:
            return -(self.binv @ self.M[:, var - n])
        return -(self.binv @ self.d)

    def pivot(self, r: int, a: np.ndarray, var: int) -> int:
        """Pivot column ``a`` (= B^-1 col(var)) into row ``r``; return the
        variable that left."""
        leaving = int(self.basic[r])
        piv = a[r]
        row = self.binv[r] / piv
        qr = self.qbar[r] / piv
        self.binv -= np.outer(a, row)
        self.qbar -= a * qr
        self.binv[r] = row
        self.qbar[r] = qr
        self.basic[r] = var
        self.pivots += 1
        self.updates += 1
        if self.updates >= _REFACTOR_EVERY:
            self.refactor()
        return leaving


def lemke(M: np.ndarray, q: np.ndarray, *, max_pivots: int, tol: float,
          z_guess: np.ndarray | None = None,
          d: np.ndarray | None = None
          ) -> tuple[np.ndarray, str, int, str, np.ndarray | None]:
    """Run Lemke's method.  Returns ``(z, status, pivots, message, ray)`` with
    ``status`` one of ``"solved"`` (``z0`` left the basis: not yet verified),
    ``"ray_termination"``, ``"max_iterations"``, ``"singular"``; ``ray``
    (shape ``(n,)``) is the ``z`` part of the secondary ray's direction on
    ``"ray_termination"``, None otherwise.

    With ``z_guess`` the method starts from the complementary basis whose
    basic ``z`` are the positive entries of the guess and uses the covering
    vector ``d = B 1`` (so that ``B^{-1} d = 1``); if that basis already solves
    the problem no pivot is needed.  A warm start that ends on a ray is
    retried from the cold start.
    """
    n = q.shape[0]
    if n == 0:
        return np.zeros(0), "solved", 0, "empty problem", None
    if z_guess is not None and np.any(z_guess > 0.0):
        basic = np.where(z_guess > 0.0, np.arange(n) + n, np.arange(n))
        Bm = basis_matrix(M, basic, np.ones(n))
        try:
            binv = np.linalg.inv(Bm)
        except np.linalg.LinAlgError:
            binv = None
        if (binv is not None and np.all(np.isfinite(binv)) and
                np.linalg.norm(binv, np.inf) * np.linalg.norm(Bm, np.inf) < 1e12):
            z, status, piv, msg, _ = _lemke_from(M, q, basic, Bm @ np.ones(n),
                                                 max_pivots=max_pivots, tol=tol,
                                                 binv=binv)
            if status == "solved":
                return z, status, piv, "warm start: " + msg, None
            zc, statc, pivc, msgc, ray = lemke(M, q, max_pivots=max_pivots, tol=tol,
                                               d=d)
            return zc, statc, piv + pivc, (f"warm start ended with {status}; "
                                           f"cold start: {msgc}"), ray
    if d is None:
        d = np.ones(n)
    return _lemke_from(M, q, np.arange(n), d, max_pivots=max_pivots, tol=tol,
                       binv=np.eye(n))


def _lemke_from(M: np.ndarray, q: np.ndarray, basic: np.ndarray,
                d: np.ndarray, *, max_pivots: int, tol: float,
                binv: np.ndarray | None = None
                ) -> tuple[np.ndarray, str, int, str, np.ndarray | None]:
    n = q.shape[0]
    basis = _Basis(M, q, d, basic, binv)
    scale_q = max(1.0, float(np.max(np.abs(q))))
    feas_tol = tol * scale_q
    if np.all(basis.qbar >= -feas_tol):
        return _extract(basis), "solved", 0, "initial basis is feasible", None
    z0_var = 2 * n
    # First pivot: z0 enters at the level that makes every basic variable
    # nonnegative; the row leaving is the lexicographic minimum of
    # [qbar_i, Binv_i] / |a_i| over all rows (a = B^-1(-d) < 0 required).
    a = basis.entering_column(z0_var)
    if np.any(a >= -tol):
        return (np.zeros(n), "singular", 0,
                "covering vector is not positive in the starting basis", None)
    r = _lexmin_row(np.arange(n), basis.qbar, basis.binv, -a, tol)
    try:
        return _pivot_loop(basis, basis.pivot(r, a, z0_var), max_pivots, tol)
    except _SingularBasis as err:
        return (_extract(basis), "singular", basis.pivots,
                f"{err}; no solution from this pivoting (add a small diagonal to M)", None)


def _pivot_loop(basis: _Basis, leaving: int, max_pivots: int,
                tol: float) -> tuple[np.ndarray, str, int, str, np.ndarray | None]:
    """Complementary pivots after ``z0`` entered (``leaving`` left)."""
    n = basis.n
    z0_var = 2 * n
    pivots = 1
    while pivots < max_pivots:
        entering = leaving + n if leaving < n else leaving - n
        a = basis.entering_column(entering)
        piv_tol = tol * max(1.0, float(np.max(np.abs(a))))
        cand = np.flatnonzero(a > piv_tol)
        if cand.size == 0:
            return (_extract(basis), "ray_termination", pivots,
                    f"secondary ray after {pivots} pivots: variable "
                    f"{_name(entering, n)} can increase without bound",
                    _ray_direction(basis, entering, a))
        # Prefer z0 leaving whenever it ties for the minimum ratio.
        ratios = basis.qbar[cand] / a[cand]
        best = ratios.min()
        z0_row = np.flatnonzero(basis.basic == z0_var)[0]
        if (a[z0_row] > piv_tol
                and basis.qbar[z0_row] / a[z0_row] <= best + tol * max(1.0, abs(best))):
            r = int(z0_row)
        else:
            r = _lexmin_row(cand, basis.qbar, basis.binv, a[cand], tol)
        leaving = basis.pivot(r, a, entering)
        pivots += 1
        if leaving == z0_var:
            return (_extract(basis), "solved", pivots,
                    f"z0 left the basis after {pivots} pivots", None)
    return (_extract(basis), "max_iterations", pivots,
            f"no solution after max_pivots={max_pivots} pivots", None)


def _ray_direction(basis: _Basis, entering: int, a: np.ndarray) -> np.ndarray:
    """``z`` part of the secondary ray: the entering variable grows at rate 1 and the
    basic variables at rates ``-a`` (``a = B^{-1}`` times the entering column)."""
    n = basis.n
    dz = np.zeros(n)
    zmask = (basis.basic >= n) & (basis.basic < 2 * n)
    dz[basis.basic[zmask] - n] = -a[zmask]
    if n <= entering < 2 * n:
        dz[entering - n] = 1.0
    return dz


def _name(var: int, n: int) -> str:
    if var < n:
        return f"w[{var}]"
    if var < 2 * n:
        return f"z[{var - n}]"
    return "z0"


def _extract(basis: _Basis) -> np.ndarray:
    """z from the current basis, recomputed by a fresh solve for accuracy
    (when the artificial variable is nonbasic)."""
    n = basis.n
    z = np.zeros(n)
    if 2 * n in basis.basic:
        vals = basis.qbar
    else:
        try:
            vals = np.linalg.solve(basis.matrix(), basis.q)
        except np.linalg.LinAlgError:
            vals = basis.qbar
    zmask = (basis.basic >= n) & (basis.basic < 2 * n)
    z[basis.basic[zmask] - n] = vals[zmask]
    return np.maximum(z, 0.0)
