"""Loop closures in the compiled step (private to :mod:`multibody.plants`).

The two-frame bilateral blocks of :mod:`multibody.constraints.closure` (ball, weld, distance,
point-on-line) are ``closure`` candidates of the contact kernel (``solvers.contact_step``'s
layout): each block's ``m`` rows are ``ceil(m / 3)`` slots of up to three rows. Every step
one compiled function of ``q`` gives the position errors ``phi`` and Jacobians ``J`` of all
closures (from the blocks' public ``kinematic_terms(q, None)``), which are written into the
kernel's input sections ``cphi``, ``cJ`` (in the slots' layout, two slices); the kernel
solves each slot as an unprojected block with the bias ``erp phi / h`` and the block's
cfm, as the pivoting step's ``BILATERAL`` rows have them.

After the kernel integrated ``q_n``, the rigid closures (no spring, ``cfm = 0``) are
post-stabilized as the pivoting step does (:func:`multibody.plants._ts_projection.
project_positions`: Gauss-Newton steps ``dq = -M^-1 J^T (J M^-1 J^T)^-1 phi(q_n)``, mass
matrix ``H + h D`` of the step's start; Cline & Pai 2003). Where every joint moves as
``q + dv`` (``nv <= 64``), :class:`ClosureProjection` does the same steps in one compiled
call that also gives the closure terms at the projected positions (the next step's kernel
input), so a step with closures has no numpy work of its own.
"""
from __future__ import annotations

import casadi as ca
import numpy as np

from solvers import ops
from solvers.compiled import CompiledFunction

from ..constraints import BallConstraint, DistanceConstraint, PointOnLineConstraint, WeldConstraint
from ..tree import Joint

__all__: list[str] = []  # private module

CLOSURE_BLOCKS = (BallConstraint, WeldConstraint, DistanceConstraint, PointOnLineConstraint)
"""The blocks the kernel takes as ``closure`` candidates."""


def closure_bodies(tree, blk) -> tuple:
    """Body indices of a closure block's two frames."""
    return tuple(tree.get_body(tree.get_frame(f).body).index for f in (blk.frame_a, blk.frame_b))


class ClosureTerms:
    """``q -> (phi, J)`` of every closure block, one compiled function, also in the
    kernel's slot layout.

    Parameters
    ----------
    tree : RigidBodyTree
    closures : sequence of constraint blocks
        Closure blocks (:data:`CLOSURE_BLOCKS`), in the plant's order.

    Attributes
    ----------
    rows : list of int
        Each block's number of rows ``m_i``; the function's outputs stack them.
    padded : ndarray of int, shape (m,)
        Each stacked row's place ``3 s + i`` in the slot layout (block ``b``'s rows are
        ``ceil(m_b / 3)`` slots of three places, its row ``3 j + i`` in the block's slot
        ``j``; the unused places are zero); ``P = 3 * slots`` places in all.
    """

    def __init__(self, tree, closures) -> None:
        self.nq, self.nv = tree.nq, tree.nv
        q = ca.SX.sym("q", tree.nq)
        phis, Js, self.rows = [], [], []
        for blk in closures:
            phi, J, _ = blk.kinematic_terms(q, None)
            phis.append(ca.vec(ca.SX(phi)))
            Js.append(ca.reshape(ca.SX(J), -1, tree.nv))
            self.rows.append(int(phis[-1].numel()))
        self.m = sum(self.rows)
        padded, s0 = [], 0
        for m in self.rows:
            padded.extend(3 * (s0 + i // 3) + i % 3 for i in range(m))
            s0 += -(-m // 3)
        self.padded, self.P = np.array(padded, dtype=np.intp), 3 * s0
        fun = ca.Function(ops.function_name("closures", "terms"), [q],
                          [ca.vertcat(*phis), ca.vertcat(*Js)])
        self.symbolic = fun
        """The CasADi function ``q -> (phi, J)`` (SX; :class:`ClosureProjection` inlines
        it)."""
        self.fn = CompiledFunction(ca.Function(
            ops.function_name("closures", "terms_padded"), [q],
            [ca.vertcat(*self.outputs(*fun(q)))]))
        self._last = (None, None)

    def outputs(self, phi, J) -> tuple:
        """The compiled outputs of symbolic ``phi`` (m x 1), ``J`` (m x nv), stacked in one
        vector by the callers (one output array: each further output of a compiled call
        costs ~0.2 us): ``phi`` and ``J`` in the slot layout (P, and P nv row by row), then
        ``phi`` and ``J`` row by row (m, m nv)."""
        idx = self.padded.tolist()
        pphi, pJ = ca.SX.zeros(self.P, 1), ca.SX.zeros(self.P, self.nv)
        pphi[idx] = phi
        pJ[idx, :] = J
        return pphi, ca.vec(pJ.T), phi, ca.vec(J.T)

    def padded_terms(self, terms: tuple) -> tuple:
        """``(phi (P,), J (P nv,))`` in the slot layout, of the terms ``terms``."""
        out, a = terms
        b = a + self.P
        return out[a:b], out[b:b + self.P * self.nv]

    def stacked(self, terms: tuple) -> tuple:
        """``(phi (m,), J (m, nv))`` of the terms ``terms``."""
        out, a = terms
        a += self.P * (1 + self.nv)
        return out[a:a + self.m], out[a + self.m:a + self.m * (1 + self.nv)].reshape(
            self.m, self.nv)

    def __call__(self, q: np.ndarray) -> tuple:
        """The terms at ``q`` (nq,): ``(out, a)``, the :meth:`outputs` stacked in ``out``
        from ``a`` on (read them with :meth:`padded_terms` and :meth:`stacked`; callers
        must not write into them). The last result is kept: a step's projection gives the
        terms at ``q_next``, which the next step starts from (a pure function of ``q``, so
        contexts may share it)."""
        q = np.asarray(q, float)
        key = q.tobytes()
        last_key, last = self._last
        if key == last_key:
            return last
        out = (self.fn(q), 0)
        self._last = (key, out)
        return out

    def remember(self, q: np.ndarray, terms: tuple) -> None:
        """Keep ``terms`` (as :meth:`__call__` gives them) as the terms at ``q`` (float64
        array; computed elsewhere, e.g. by :class:`ClosureProjection` at the positions it
        returns)."""
        self._last = (q.tobytes(), terms)


def closure_rows_index(slots: list) -> np.ndarray:
    """The flat row ``3 k + i`` of each stacked closure row in the kernel's input sections
    ``cphi`` (3 nc,) and ``cJ`` (3 nc, nv), so that one indexed assignment writes the
    closures' ``phi`` (m,) and ``J`` (m, nv); ``slots``: per slot ``(k, r0, nr)`` (slot,
    first row, row count)."""
    out = []
    for k, r0, nr in slots:
        out.extend((r0 + i, 3 * k + i) for i in range(nr))
    out.sort()
    return np.array([d for _, d in out], dtype=np.intp)


def project_closures(terms: ClosureTerms, rigid: np.ndarray, integrate, qn: np.ndarray,
                     M) -> np.ndarray:
    """The pivoting step's post-stabilization of the rigid closure rows at ``qn``.

    Parameters
    ----------
    terms : ClosureTerms
    rigid : ndarray of bool, shape (m,)
        The rows of rigid blocks (no spring, ``cfm = 0``).
    integrate : callable
        ``(q, dv, 1.0) -> q (+) dv`` (the plant's ``integrate``).
    qn : ndarray, shape (nq,)
    M : ndarray, shape (nv, nv), or callable
        ``H + h D`` at the start of the step (or a function giving it, called only when a
        correction is needed).

    Returns
    -------
    ndarray, shape (nq,)
        Positions after at most three Gauss-Newton steps (stopping as
        ``project_positions``: error below 1e-11, or after a step from below 1e-6).
    """
    if not rigid.any():
        return qn
    all_rigid = bool(rigid.all())
    for _ in range(3):
        phi, J = terms.stacked(terms(qn))
        if not all_rigid:
            phi, J = phi[rigid], J[rigid]
        err = float(np.abs(phi).max()) if phi.size else 0.0
        if err < 1e-11:
            break
        live = np.any(J != 0.0, axis=1)
        if not live.all():
            J, phi = J[live], phi[live]
        if callable(M):
            M = M()
        # (numpy's solves: the sizes are small, where scipy's call overhead dominates)
        MinvJT = np.linalg.solve(M, J.T)
        G = J @ MinvJT
        try:
            np.linalg.cholesky(G)                  # positive definite: independent rows
            lam = np.linalg.solve(G, phi)
        except np.linalg.LinAlgError:
            lam = np.linalg.lstsq(G, phi, rcond=1e-12)[0]
        qn = integrate(qn, -MinvJT @ lam, 1.0)
        if err < 1e-6:
            break
    return qn


PROJECTION_MAX_NV = 64
"""Largest ``nv`` for which :class:`ClosureProjection` unrolls the projection symbolically
(its factorization of ``H + h D`` has ``~nv^3 / 6`` operations)."""


def linear_positions(tree) -> bool:
    """Whether every joint of ``tree`` moves its positions as ``q + dv`` (the base class's
    integrate with ``nq == nv``), so that ``integrate(q, dv, 1)`` is ``q + dv``."""
    return all(type(j).integrate is Joint.integrate and j.nq == j.nv
               for j in tree.joints if j.nq)


def _cholesky(A, n: int):
    """Lower factor of the symmetric ``A`` (n x n SX, its lower triangle read) and its
    pivots (each ``A_kk - sum_j L_kj^2`` before the square root)."""
    Lf = [[None] * n for _ in range(n)]
    pivots = []
    for k in range(n):
        p = A[k, k] - sum((Lf[k][j] * Lf[k][j] for j in range(k)), ca.SX(0))
        pivots.append(p)
        Lf[k][k] = ca.sqrt(p)
        for i in range(k + 1, n):
            Lf[i][k] = (A[i, k] - sum((Lf[i][j] * Lf[k][j] for j in range(k)), ca.SX(0))) \
                / Lf[k][k]
    return Lf, pivots


def _cho_solve(Lf, n: int, b):
    """``(L L^T)^-1 b`` for the lower factor ``Lf`` (lists of SX) and ``b`` (n x k SX)."""
    y = [None] * n
    for i in range(n):
        y[i] = (b[i, :] - sum((Lf[i][j] * y[j] for j in range(i)), ca.SX.zeros(1, b.size2()))) \
            / Lf[i][i]
    x = [None] * n
    for i in reversed(range(n)):
        x[i] = (y[i] - sum((Lf[j][i] * x[j] for j in range(i + 1, n)),
                           ca.SX.zeros(1, b.size2()))) / Lf[i][i]
    return ca.vertcat(*x)


class ClosureProjection:
    """:func:`project_closures` in one compiled call, for trees whose joints all move as
    ``q + dv`` (:func:`linear_positions`).

    The three Gauss-Newton steps and their stopping tests are unrolled symbolically (each
    step taken only while the previous errors ask for it, ``if_else``), ``M = H + h D`` is
    factored once (Cholesky), the rows with an all-zero Jacobian row are kept out of the
    system by a unit diagonal (their multiplier does not move ``q``), and a non-positive
    pivot of ``J M^-1 J^T`` in a step that is taken is reported (the caller then runs
    :func:`project_closures`, whose least-squares solve handles dependent rows). The
    function also returns ``(phi, J)`` of every closure at the positions it returns (the
    next step's kernel input).

    Parameters
    ----------
    terms : ClosureTerms
    nq, nv : int

    Notes
    -----
    Inputs ``(qn (nq,), H (nv*nv,), d (nv,), rigid (m,))``: the integrated positions,
    ``H`` (symmetric, its lower triangle read), the diagonal ``h D`` added to it (zeros
    with the Euler damping split) and 1.0 on the rigid rows. One output vector: ``q``, the
    four terms of :meth:`ClosureTerms.outputs` at ``q``, and ``bad``.
    """

    def __init__(self, terms: ClosureTerms, nq: int, nv: int) -> None:
        self.terms, self.nq, self.nv, self.m = terms, nq, nv, terms.m
        q0 = ca.SX.sym("q", nq)
        Hs = ca.SX.sym("H", nv, nv)
        d = ca.SX.sym("d", nv)
        mask = ca.SX.sym("rigid", terms.m)
        Lm, _ = _cholesky(Hs + ca.diag(d), nv)
        q, stop, bad = q0, ca.SX(0), ca.SX(0)
        for _ in range(3):
            phi, J = terms.symbolic(q)
            phi, J = phi * mask, J * ca.repmat(mask, 1, nv)
            err = ca.mmax(ca.fabs(phi))
            take = ca.logic_and(ca.logic_not(stop), err >= 1e-11)
            dead = ca.sum2(J * J) <= 0
            X = _cho_solve(Lm, nv, J.T)                    # M^-1 J^T, nv x m
            G = ca.mtimes(J, X) + ca.diag(dead)
            Lg, piv = _cholesky(G, terms.m)
            lam = _cho_solve(Lg, terms.m, phi)
            bad = ca.logic_or(bad, ca.logic_and(take, ca.logic_not(ca.mmin(ca.vertcat(*piv))
                                                                    > 0)))
            q = ca.if_else(take, q - ca.mtimes(X, lam), q)
            stop = ca.logic_or(stop, err < 1e-6)
        fun = ca.Function(ops.function_name("closures", "projection"), [q0, Hs, d, mask],
                          [ca.vertcat(q, *terms.outputs(*terms.symbolic(q)), bad)])
        self.fn = CompiledFunction(fun)
        self._mask = (None, None)

    def __call__(self, qn: np.ndarray, H: np.ndarray, d: np.ndarray, rigid: np.ndarray,
                 integrate, M) -> np.ndarray:
        """The projected positions (as :func:`project_closures` gives them); ``H`` (nv, nv),
        ``d`` (nv,) the diagonal added to it, ``rigid`` the rigid rows (bool, a memoized
        array); ``integrate`` and ``M`` as :func:`project_closures` takes them, used only
        when a pivot of ``J M^-1 J^T`` is not positive. The terms at the returned positions
        are handed to ``terms`` (:meth:`ClosureTerms.remember`)."""
        key, mask = self._mask
        if key is not rigid:
            mask = np.asarray(rigid, float)
            self._mask = (rigid, mask)
        out = self.fn(qn, H.reshape(-1), d, mask)
        if out[-1] != 0.0:
            return project_closures(self.terms, rigid, integrate, qn, M)
        q = out[:self.nq]
        self.terms.remember(q, (out, self.nq))
        return q
