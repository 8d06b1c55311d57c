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
    """Free set ``C`` (unordered) with the inverse ``P`` of ``A[C, C]`` kept in
    preallocated buffers; adding is a bordering update, removing swaps the
    row to the last position and applies the Schur downdate, both
    ``O(|C|^2)``."""

    def __init__(self, A: np.ndarray) -> None:
        n = A.shape[0]
        self.A = A
        self.buf = np.zeros((n, n))
        self.ibuf = np.zeros(n, dtype=int)
        self.pos = -np.ones(n, dtype=int)
        self.m = 0
        self.updates = 0

    @property
    def idx(self) -> np.ndarray:
        return self.ibuf[:self.m]

    @property
    def P(self) -> np.ndarray:
        return self.buf[:self.m, :self.m]

    def reset(self, C: np.ndarray) -> bool:
        """Set ``C`` and factor ``A[C, C]`` afresh; False if singular."""
        m = C.size
        if m:
            try:
                Pn = np.linalg.inv(self.A[np.ix_(C, C)])
            except np.linalg.LinAlgError:
                return False
            if not np.all(np.isfinite(Pn)):
                return False
            self.buf[:m, :m] = Pn
        self.pos[:] = -1
        self.ibuf[:m] = C
        self.pos[C] = np.arange(m)
        self.m = m
        self.updates = 0
        return True

    def schur(self, k: int) -> tuple[float, np.ndarray, np.ndarray]:
        if self.m == 0:
            return float(self.A[k, k]), np.zeros(0), np.zeros(0)
        C, P = self.idx, self.P
        u = self.A[C, k]
        v = self.A[k, C]
        Pu = P @ u
        return float(self.A[k, k] - v @ Pu), Pu, v @ P

    def add(self, k: int, s: float, Pu: np.ndarray, vP: np.ndarray) -> None:
        m = self.m
        B = self.buf
        if m:
            B[:m, :m] += np.outer(Pu / s, vP)
            B[:m, m] = -Pu / s
            B[m, :m] = -vP / s
        B[m, m] = 1.0 / s
        self.ibuf[m] = k
        self.pos[k] = m
        self.m = m + 1
        self._count()

    def remove(self, k: int) -> None:
        p, last = int(self.pos[k]), self.m - 1
        B, I = self.buf, self.ibuf
        if p != last:
            B[[p, last], :self.m] = B[[last, p], :self.m]
            B[:self.m, [p, last]] = B[:self.m, [last, p]]
            I[p], I[last] = I[last], I[p]
            self.pos[I[p]] = p
        piv = B[last, last]
        B[:last, :last] -= np.outer(B[:last, last] / piv, B[last, :last])
        self.pos[k] = -1
        self.m = last
        self._count()

    def _count(self) -> None:
        self.updates += 1
        if self.updates >= _REFACTOR_EVERY and self.m:
            self.reset(self.idx.copy())


def partition_solution(A: np.ndarray, b: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                       state: np.ndarray, findex: np.ndarray | None = None,
                       xref: np.ndarray | None = None) -> np.ndarray | None:
    """Solve the linear system of a partition (None if it is singular).

    Rows in FREE satisfy ``w_i = 0``, rows in LOWER/UPPER sit on their bound.
    With ``findex``, a friction row on a bound satisfies the linear equation
    ``x_i = -|lo_i| s_j x_j`` (LOWER) or ``x_i = |hi_i| s_j x_j`` (UPPER),
    ``s_j`` the sign of ``xref[j]`` (+1 without ``xref``), so that the
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
        j = findex[i]
        sj = -1.0 if (xref is not None and xref[j] < 0) else 1.0
        K[i, j] = sj * abs(lo[i]) if low[i] else -sj * abs(hi[i])
    if coupled.size == 0 and not np.any(free):
        return r
    try:
        x = np.linalg.solve(K, r)
    except np.linalg.LinAlgError:
        return None
    return x if np.all(np.isfinite(x)) else None


def solve_partition(A: np.ndarray, b: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                    state: np.ndarray, tol: float, findex: np.ndarray | None = None,
                    xref: np.ndarray | None = None) -> np.ndarray | None:
    """:func:`partition_solution` if it is complementary within ``tol`` for
    the bounds it implies, else None."""
    x = partition_solution(A, b, lo, hi, state, findex, xref)
    return None if x is None else check_partition(A, b, lo, hi, state, x, tol, findex)


def check_partition(A: np.ndarray, b: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                    state: np.ndarray, x: np.ndarray, tol: float,
                    findex: np.ndarray | None = None) -> np.ndarray | None:
    """``x`` clipped to its bounds if it is complementary for ``state``
    within ``tol``, else None."""
    low, up, free = state == LOWER, state == UPPER, state == FREE
    lo_e, hi_e = lo.copy(), hi.copy()
    if findex is not None and np.any(findex >= 0):
        f = np.flatnonzero(findex >= 0)
        lo_e[f] = -np.abs(lo[f] * x[findex[f]])
        hi_e[f] = np.abs(hi[f] * x[findex[f]])
    w = A @ x + b
    pinned = hi_e - lo_e <= tol          # lo = hi: any w is complementary
    low, up = low & ~pinned, up & ~pinned
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


def _warm_state(A: np.ndarray, b: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                guess: np.ndarray, x: np.ndarray, free: _FreeSet, tol: float
                ) -> np.ndarray:
    """Processed sets from a guessed partition, made complementary.

    Free rows whose solution leaves the box are released (fixed at the
    clipped value, unprocessed) until the free solution is inside the box;
    bound rows whose ``w`` has the wrong sign are released too.  Released rows
    are then driven by the usual pivoting.  Modifies ``x``; returns ``state``.
    """
    n = b.shape[0]
    state = np.zeros(n, dtype=int)
    low = (guess == LOWER) & np.isfinite(lo)
    up = (guess == UPPER) & np.isfinite(hi)
    x[low], x[up] = lo[low], hi[up]
    C = np.flatnonzero(guess == FREE)
    for _ in range(n + 1):
        if C.size == 0:
            break
        other = np.ones(n, dtype=bool)
        other[C] = False
        try:
            xc = np.linalg.solve(A[np.ix_(C, C)], -(b[C] + A[np.ix_(C, other)] @ x[other]))
        except np.linalg.LinAlgError:
            C = C[:0]
            break
        bad = (xc < lo[C] - tol) | (xc > hi[C] + tol) | ~np.isfinite(xc)
        x[C] = np.where(np.isfinite(xc), np.clip(xc, lo[C], hi[C]), x[C])
        if not np.any(bad):
            break
        C = C[~bad]
    if not free.reset(C):
        C = C[:0]
        free.reset(C)
    state[C] = FREE
    w = A @ x + b
    state[low & (w >= -tol)] = LOWER
    state[up & (w <= tol) & (state == 0)] = UPPER
    return state


def dantzig(A: np.ndarray, b: np.ndarray, lo: np.ndarray, hi: np.ndarray, *,
            max_iter: int, tol: float,
            guess: np.ndarray | None = None
            ) -> tuple[np.ndarray, str, int, str, np.ndarray]:
    """Principal pivoting for the BLCP with fixed bounds.

    Returns ``(x, status, pivots, message, state)``; ``state[i]`` is FREE,
    LOWER, UPPER (or FROZEN for a row left at an interior point because its
    free-set Schur complement vanished).  ``guess`` is a state array from a
    previous solve: if it is still complementary no pivot is made, otherwise
    its consistent part is the starting point of the pivoting.
    """
    n = b.shape[0]
    scale = max(1.0, float(np.max(np.abs(b), initial=0.0)))
    wtol = tol * scale * 1e2
    x = np.clip(np.zeros(n), lo, hi)
    free = _FreeSet(A)
    if guess is not None:
        xg = solve_partition(A, b, lo, hi, guess, wtol)
        if xg is not None:
            return xg, "solved", 0, "warm start partition is complementary", guess.copy()
        state = _warm_state(A, b, lo, hi, guess, x, free, wtol)
    else:
        state = np.zeros(n, dtype=int)
    w = A @ x + b
    # +1 on LOWER rows (w must stay >= 0), -1 on UPPER rows (w <= 0), else 0
    bsign = np.where(state == LOWER, 1.0, np.where(state == UPPER, -1.0, 0.0))

    def mark(k: int, st: int) -> None:
        state[k] = st
        bsign[k] = 1.0 if st == LOWER else (-1.0 if st == UPPER else 0.0)

    pivots = 0
    todo = np.flatnonzero(state == 0)
    # Bilateral rows first (they always end in C), then the others.
    todo = todo[np.argsort(np.isfinite(lo[todo]) | np.isfinite(hi[todo]), kind="stable")]
    dy = np.zeros(n)
    for i in todo:
        i = int(i)
        Aii_tol = tol * max(1.0, abs(A[i, i]))
        while True:
            if pivots >= max_iter:
                return (x, "max_iterations", pivots,
                        f"no solution after max_iter={max_iter} pivots", state)
            wi = w[i]
            if abs(wi) <= wtol:
                w[i] = 0.0
                if x[i] <= lo[i]:
                    mark(i, LOWER)
                elif x[i] >= hi[i]:
                    mark(i, UPPER)
                else:
                    s_i, Pu, vP = free.schur(i)
                    if abs(s_i) > Aii_tol:
                        free.add(i, s_i, Pu, vP)
                        mark(i, FREE)
                    else:
                        mark(i, FROZEN)
                break
            s = -1.0 if wi > 0 else 1.0
            bound_i = lo[i] if s < 0 else hi[i]
            if (x[i] - bound_i) * s >= 0:  # already on the bound it would move to
                mark(i, LOWER if s < 0 else UPPER)
                break
            C = free.idx
            dy[:] = 0.0
            dy[i] = s
            if free.m:
                dyC = free.P @ A[C, i] * (-s)
                dy[C] = dyC
            dw = A @ dy
            # Event on row i itself first: on a tie it ends the drive.
            t_best, event, who = np.inf, 0, i
            if dw[i] * wi < 0 and abs(dw[i]) > Aii_tol:
                t_best, event = -wi / dw[i], 1
            t_x = (bound_i - x[i]) * s
            if t_x < t_best:
                t_best, event = t_x, 2
            if free.m:
                dtol = tol * max(1.0, np.abs(dyC).max())
                # distance to the bound each free row moves towards
                gap = np.where(dyC > 0, hi[C], lo[C]) - x[C]
                ok = np.abs(dyC) > dtol
                if ok.any():
                    t_c = np.full(C.size, np.inf)
                    t_c[ok] = gap[ok] / dyC[ok]
                    k = int(np.argmin(t_c))
                    if t_c[k] < t_best:
                        t_best, event, who = max(float(t_c[k]), 0.0), 3, int(C[k])
            dwtol = tol * max(1.0, np.abs(dw).max())
            sdw = bsign * dw
            js = np.flatnonzero(sdw < -dwtol)
            if js.size:
                t_j = np.maximum(bsign[js] * w[js], 0.0) / -sdw[js]
                k = int(np.argmin(t_j))
                if t_j[k] < t_best:
                    t_best, event, who = float(t_j[k]), 4, int(js[k])
            if not np.isfinite(t_best):
                return (x, "unbounded", pivots,
                        f"row {i}: the pivoting direction is unbounded "
                        "(A is not positive definite on the free set)", state)
            pivots += 1
            x += t_best * dy
            w += t_best * dw
            if event == 1:
                w[i] = 0.0
                s_i, Pu, vP = free.schur(i)
                if abs(s_i) <= Aii_tol:
                    mark(i, FROZEN)
                else:
                    free.add(i, s_i, Pu, vP)
                    mark(i, FREE)
                break
            if event == 2:
                x[i] = bound_i
                mark(i, LOWER if s < 0 else UPPER)
                break
            j = who
            if event == 3:
                if dy[j] > 0:
                    x[j] = hi[j]
                    mark(j, UPPER)
                else:
                    x[j] = lo[j]
                    mark(j, LOWER)
                free.remove(j)
            else:  # a bound row's w reached zero: it becomes free
                w[j] = 0.0
                s_j, Pu, vP = free.schur(j)
                if abs(s_j) <= tol * max(1.0, abs(A[j, j])):
                    return (x, "singular", pivots,
                            f"row {j}: free-set matrix became singular "
                            "(A is not positive definite)", state)
                free.add(j, s_j, Pu, vP)
                mark(j, FREE)
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
    ``m ⟂ -w_i + l_m``, ``l_p ⟂ |hi_i| x_j - p``, ``l_m ⟂ |lo_i| x_j - m``;
    with ``|lo_i| = |hi_i| = mu`` one multiplier ``l = l_p = l_m`` with
    ``l ⟂ mu x_j - p - m`` suffices
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
        if abs(lo[i]) == abs(hi[i]):      # symmetric: one multiplier
            lam = var(-1, 0.0, -1, 0.0)
            extra += [(p, lam, 1.0), (m, lam, 1.0), (lam, p, -1.0), (lam, m, -1.0)]
            xlink += [(lam, j, abs(hi[i]))]
            continue
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
