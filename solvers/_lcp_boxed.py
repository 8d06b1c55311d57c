"""Boxed LCP kernels (private part of :mod:`solvers.lcp`).

Problem (BLCP, also "mixed LCP"): find ``x`` with ``lo <= x <= hi`` and
``w = A x + b`` such that for every row ``i``

* ``x_i = lo_i``  =>  ``w_i >= 0``,
* ``x_i = hi_i``  =>  ``w_i <= 0``,
* ``lo_i < x_i < hi_i``  =>  ``w_i = 0``.

Contents

* :func:`dantzig` -- a principal pivoting method in the style of Dantzig and
  Cottle's method as used for contact by Baraff (1994, "Fast contact force
  computation for nonpenetrating rigid bodies", SIGGRAPH), extended to boxes.
  Rows are added one at a time; the new row's variable is driven from zero
  towards complementarity while the rows already processed are kept
  complementary, each blocking event moving one row between the sets
  C (free, ``w = 0``), L (``x = lo``) and U (``x = hi``).  The inverse of
  ``A[C, C]`` is updated by bordering (add) and a Schur downdate (remove).
  Termination and uniqueness are guaranteed when ``A`` is positive definite
  (or a P-matrix); otherwise the kernel may stop with ``"singular"`` or
  ``"unbounded"`` and the caller's residual check decides.
* :func:`box_to_lcp` -- the transformation of a BLCP with fixed bounds into a
  standard LCP (used by the ``method="lemke"`` path and by the tests).
"""
from __future__ import annotations

import numpy as np

__all__: list[str] = []

FREE, LOWER, UPPER, FROZEN = 1, 2, 3, 4
_REFACTOR_EVERY = 40


class _FreeSet:
    """Ordered free set ``C`` with the inverse of ``A[C, C]``."""

    def __init__(self, A: np.ndarray) -> None:
        self.A = A
        self.idx: list[int] = []
        self.P = np.zeros((0, 0))
        self.updates = 0

    def schur(self, k: int) -> tuple[float, np.ndarray, np.ndarray]:
        A, C = self.A, self.idx
        if not C:
            return float(A[k, k]), np.zeros(0), np.zeros(0)
        Pu = self.P @ A[C, k]
        vP = A[k, C] @ self.P
        return float(A[k, k] - A[k, C] @ Pu), Pu, vP

    def add(self, k: int, s: float, Pu: np.ndarray, vP: np.ndarray) -> None:
        m = len(self.idx)
        P = np.empty((m + 1, m + 1))
        P[:m, :m] = self.P + np.outer(Pu, vP) / s
        P[:m, m] = -Pu / s
        P[m, :m] = -vP / s
        P[m, m] = 1.0 / s
        self.P = P
        self.idx.append(k)
        self._count()

    def remove(self, k: int) -> None:
        p = self.idx.index(k)
        P = self.P
        col = np.delete(P[:, p], p)
        row = np.delete(P[p, :], p)
        P = np.delete(np.delete(P, p, axis=0), p, axis=1)
        self.P = P - np.outer(col, row) / self.P[p, p]
        del self.idx[p]
        self._count()

    def _count(self) -> None:
        self.updates += 1
        if self.updates >= _REFACTOR_EVERY and self.idx:
            C = self.idx
            self.P = np.linalg.inv(self.A[np.ix_(C, C)])
            self.updates = 0


def partition_solution(A: np.ndarray, b: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                       state: np.ndarray,
                       findex: np.ndarray | None = None) -> np.ndarray | None:
    """Solve the linear system of a partition (None if it is singular).

    Rows in FREE satisfy ``w_i = 0``, rows in LOWER/UPPER sit on their bound.
    With ``findex``, a friction row on a bound satisfies the linear equation
    ``x_i = -|lo_i| x_j`` (LOWER) or ``x_i = |hi_i| x_j`` (UPPER), so that the
    friction coupling is solved exactly for the partition.
    """
    n = b.shape[0]
    low, up, free = state == LOWER, state == UPPER, state == FREE
    if np.any(~(low | up | free)):
        return None
    fr = np.zeros(n, dtype=bool) if findex is None else findex >= 0
    if not (np.all(np.isfinite(lo[low & ~fr])) and np.all(np.isfinite(hi[up & ~fr]))):
        return None
    K = np.zeros((n, n))
    r = np.zeros(n)
    K[free] = A[free]
    r[free] = -b[free]
    bound = np.flatnonzero(~free)
    K[bound, bound] = 1.0
    r[low & ~fr] = lo[low & ~fr]
    r[up & ~fr] = hi[up & ~fr]
    coupled = np.flatnonzero(fr & ~free)
    for i in coupled:
        K[i, findex[i]] = abs(lo[i]) if low[i] else -abs(hi[i])
    if coupled.size == 0 and not np.any(free):
        return r
    try:
        x = np.linalg.solve(K, r)
    except np.linalg.LinAlgError:
        return None
    return x if np.all(np.isfinite(x)) else None


def solve_partition(A: np.ndarray, b: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                    state: np.ndarray, tol: float,
                    findex: np.ndarray | None = None) -> np.ndarray | None:
    """:func:`partition_solution` if it is complementary within ``tol`` for
    the bounds it implies, else None."""
    x = partition_solution(A, b, lo, hi, state, findex)
    if x is None:
        return None
    low, up, free = state == LOWER, state == UPPER, state == FREE
    lo_e, hi_e = lo.copy(), hi.copy()
    if findex is not None and np.any(findex >= 0):
        f = np.flatnonzero(findex >= 0)
        lo_e[f] = -np.abs(lo[f] * x[findex[f]])
        hi_e[f] = np.abs(hi[f] * x[findex[f]])
    w = A @ x + b
    if (np.all(x[free] >= lo_e[free] - tol) and np.all(x[free] <= hi_e[free] + tol)
            and np.all(w[low] >= -tol) and np.all(w[up] <= tol)):
        return np.clip(x, lo_e, hi_e)
    return None


def partition_of(x: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """LOWER/UPPER where ``x`` sits on a bound (to rounding), FREE elsewhere."""
    tol = 1e-10 * np.maximum(1.0, np.abs(x))
    state = np.full(x.shape[0], FREE)
    state[x <= lo + tol] = LOWER
    state[(x >= hi - tol) & (state == FREE)] = UPPER
    return state


def dantzig(A: np.ndarray, b: np.ndarray, lo: np.ndarray, hi: np.ndarray, *,
            max_iter: int, tol: float,
            guess: np.ndarray | None = None
            ) -> tuple[np.ndarray, str, int, str, np.ndarray]:
    """Principal pivoting for the BLCP with fixed bounds.

    Returns ``(x, status, pivots, message, state)``; ``state[i]`` is FREE,
    LOWER, UPPER (or FROZEN for a row left at an interior point because its
    free-set Schur complement vanished).  ``guess`` is a state array from a
    previous solve; when it is still complementary no pivot is made.
    """
    n = b.shape[0]
    scale = max(1.0, float(np.max(np.abs(b), initial=0.0)))
    wtol = tol * scale * 1e2
    if guess is not None:
        x = solve_partition(A, b, lo, hi, guess, wtol)
        if x is not None:
            return x, "solved", 0, "warm start partition is complementary", guess.copy()
    # Shift so that x = 0 lies in the box: x = c + y, lo - c <= 0 <= hi - c.
    c = np.clip(np.zeros(n), lo, hi)
    lo_s, hi_s = lo - c, hi - c
    bs = b + A @ c
    y = np.zeros(n)
    w = bs.copy()
    state = np.zeros(n, dtype=int)
    free = _FreeSet(A)
    pivots = 0
    # Bilateral rows first (they always end in C), then the others.
    order = np.argsort(np.isfinite(lo_s) | np.isfinite(hi_s), kind="stable")
    for i in order:
        while True:
            if pivots >= max_iter:
                return (y + c, "max_iterations", pivots,
                        f"no solution after max_iter={max_iter} pivots", state)
            wi = w[i]
            if abs(wi) <= wtol:
                w[i] = 0.0
                if y[i] <= lo_s[i]:
                    state[i] = LOWER
                elif y[i] >= hi_s[i]:
                    state[i] = UPPER
                else:
                    s_i, Pu, vP = free.schur(i)
                    if abs(s_i) > tol * max(1.0, abs(A[i, i])):
                        free.add(i, s_i, Pu, vP)
                        state[i] = FREE
                    else:
                        state[i] = FROZEN
                break
            s = -1.0 if wi > 0 else 1.0
            bound_i = lo_s[i] if s < 0 else hi_s[i]
            if (y[i] - bound_i) * s >= 0:  # already at the bound it would move to
                state[i] = LOWER if s < 0 else UPPER
                break
            C = free.idx
            if C:
                dyC = -(free.P @ A[C, i]) * s
                dw = A[:, C] @ dyC + A[:, i] * s
            else:
                dyC = np.zeros(0)
                dw = A[:, i] * s
            t_best, event, who = np.inf, "", -1
            # Event on row i itself first: on a tie it ends the drive.
            if dw[i] * wi < 0 and abs(dw[i]) > tol * max(1.0, abs(A[i, i])):
                t_best, event, who = -wi / dw[i], "w_i", i
            t_x = (bound_i - y[i]) * s
            if t_x < t_best:
                t_best, event, who = t_x, "x_i", i
            if C:
                Ca = np.asarray(C)
                dtol = tol * max(1.0, float(np.max(np.abs(dyC))))
                up = dyC > dtol
                dn = dyC < -dtol
                with np.errstate(divide="ignore", invalid="ignore"):
                    t_c = np.full(len(C), np.inf)
                    t_c[up] = (hi_s[Ca[up]] - y[Ca[up]]) / dyC[up]
                    t_c[dn] = (lo_s[Ca[dn]] - y[Ca[dn]]) / dyC[dn]
                t_c = np.maximum(t_c, 0.0)
                k = int(np.argmin(t_c))
                if t_c[k] < t_best:
                    t_best, event, who = float(t_c[k]), "x_C", int(Ca[k])
            dwtol = tol * max(1.0, float(np.max(np.abs(dw))))
            for st, sign in ((LOWER, -1.0), (UPPER, 1.0)):
                js = np.flatnonzero((state == st) & (dw * sign > dwtol))
                if js.size:
                    t_j = np.maximum(-w[js] * sign, 0.0) / np.abs(dw[js])
                    k = int(np.argmin(t_j))
                    if t_j[k] < t_best:
                        t_best, event, who = float(t_j[k]), "w_LU", int(js[k])
            if not np.isfinite(t_best):
                return (y + c, "unbounded", pivots,
                        f"row {i}: the pivoting direction is unbounded "
                        "(A is not positive definite on the free set)", state)
            pivots += 1
            y[i] += s * t_best
            if C:
                y[C] += t_best * dyC
            w += t_best * dw
            if event == "w_i":
                w[i] = 0.0
                s_i, Pu, vP = free.schur(i)
                if abs(s_i) <= tol * max(1.0, abs(A[i, i])):
                    state[i] = FROZEN
                else:
                    free.add(i, s_i, Pu, vP)
                    state[i] = FREE
                break
            if event == "x_i":
                y[i] = bound_i
                state[i] = LOWER if s < 0 else UPPER
                break
            if event == "x_C":
                j = who
                if dyC[C.index(j)] > 0:
                    y[j], state[j] = hi_s[j], UPPER
                else:
                    y[j], state[j] = lo_s[j], LOWER
                free.remove(j)
            else:  # a bound row's w reached zero: it becomes free
                j = who
                w[j] = 0.0
                s_j, Pu, vP = free.schur(j)
                if abs(s_j) <= tol * max(1.0, abs(A[j, j])):
                    return (y + c, "singular", pivots,
                            f"row {j}: free-set matrix became singular "
                            "(A is not positive definite)", state)
                free.add(j, s_j, Pu, vP)
                state[j] = FREE
    x = y + c
    # Polish: recompute the free variables from a fresh factorization.
    C = np.flatnonzero(state == FREE)
    if C.size:
        other = np.flatnonzero(state != FREE)
        rhs = -(b[C] + A[np.ix_(C, other)] @ x[other])
        try:
            x[C] = np.linalg.solve(A[np.ix_(C, C)], rhs)
        except np.linalg.LinAlgError:
            pass
    return np.clip(x, lo, hi), "solved", pivots, f"{pivots} pivots", state


def box_to_lcp(A: np.ndarray, b: np.ndarray, lo: np.ndarray, hi: np.ndarray,
               findex: np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Standard LCP ``(M, q)`` equivalent to a BLCP.

    Returns ``(M, q, x_base, E)`` with ``x = x_base + E z`` recovering the
    BLCP solution from the LCP solution ``z``.

    Per ordinary row: ``lo`` finite, ``hi = inf``: ``x = lo + y``, ``y ⟂ w``;
    ``lo = -inf``, ``hi`` finite: ``x = hi - y``, ``y ⟂ -w``;
    both finite: ``x = lo + y``, ``y ⟂ w + v``, ``v ⟂ hi - lo - y``;
    both infinite: ``x = y+ - y-``, ``y+ ⟂ w``, ``y- ⟂ -w``;
    ``lo = hi``: ``x`` fixed, no LCP variable.

    Friction row ``i`` (``findex[i] = j``, whose row ``j`` must be an ordinary
    row with ``lo_j >= 0``): ``x_i = p - m`` with ``p ⟂ w_i + l_p``,
    ``m ⟂ -w_i + l_m``, ``l_p ⟂ |hi_i| x_j - p``, ``l_m ⟂ |lo_i| x_j - m``
    (the box-friction model written as an LCP, in the manner of Stewart and
    Trinkle's 1996 time-stepping LCP with one tangent direction per row).
    """
    n = b.shape[0]
    fr = np.zeros(n, dtype=bool) if findex is None else findex >= 0
    x_base = np.zeros(n)
    xmap: list[tuple[int, float]] = []     # per variable: (row of x, sign) or (-1, 0)
    wsel: list[tuple[int, float]] = []     # per variable: slack's (row of w, sign)
    extra: list[tuple[int, int, float]] = []   # (slack var, var, coefficient)
    const: dict[int, float] = {}
    xlink: list[tuple[int, int, float]] = []   # (slack var, row j of x, coefficient)

    def var(xrow: int, xs: float, wrow: int, ws: float) -> int:
        xmap.append((xrow, xs))
        wsel.append((wrow, ws))
        return len(xmap) - 1

    for i in np.flatnonzero(~fr):
        fl, fh = np.isfinite(lo[i]), np.isfinite(hi[i])
        if fl and fh and lo[i] == hi[i]:
            x_base[i] = lo[i]
        elif fl and fh:
            x_base[i] = lo[i]
            y = var(i, 1.0, i, 1.0)
            v = var(-1, 0.0, -1, 0.0)
            extra += [(y, v, 1.0), (v, y, -1.0)]
            const[v] = hi[i] - lo[i]
        elif fl:
            x_base[i] = lo[i]
            var(i, 1.0, i, 1.0)
        elif fh:
            x_base[i] = hi[i]
            var(i, -1.0, i, -1.0)
        else:
            var(i, 1.0, i, 1.0)
            var(i, -1.0, i, -1.0)
    for i in np.flatnonzero(fr):
        j = int(findex[i])
        p = var(i, 1.0, i, 1.0)
        m = var(i, -1.0, i, -1.0)
        lp = var(-1, 0.0, -1, 0.0)
        lm = var(-1, 0.0, -1, 0.0)
        extra += [(p, lp, 1.0), (m, lm, 1.0), (lp, p, -1.0), (lm, m, -1.0)]
        xlink += [(lp, j, abs(hi[i])), (lm, j, abs(lo[i]))]
    N = len(xmap)
    E = np.zeros((n, N))
    G = np.zeros((N, n))
    for k, (r, sg) in enumerate(xmap):
        if r >= 0:
            E[r, k] = sg
    for k, (r, sg) in enumerate(wsel):
        if r >= 0:
            G[k, r] = sg
    M = G @ A @ E
    q = G @ (A @ x_base + b)
    for k, l, c in extra:
        M[k, l] += c
    for k, c in const.items():
        q[k] += c
    for k, j, c in xlink:
        M[k] += c * E[j]
        q[k] += c * x_base[j]
    return M, q, x_base, E
