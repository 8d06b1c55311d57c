r"""Loop closures in the compiled step (private to :mod:`multibody.plants`).

The two-frame bilateral blocks of :mod:`multibody.constraints.closure` (ball, weld, distance,
point-on-line) are eliminated exactly before the contact problem
(:class:`~._ts_elimination.ClosureElimination`). Every step the position errors ``phi``
and Jacobians ``J_c`` of all closures (from the blocks' public ``kinematic_terms(q,
None)``); with ``M = H + h D`` (``H`` with MuJoCo's Euler damping split) and ``X = M^-1
J_c^T``, ``S = J_c X + diag(cfm / h)`` and the closures' bias ``b = erp phi / h``, the
closures hold

.. math::

    v = v_f + X \lambda, \qquad J_c v + \mathrm{diag}(cfm / h) \lambda + b = 0
    \;\Rightarrow\; \lambda = -S^+ (J_c v_f + b),

for any velocity ``v_f`` (the free velocity plus the contacts' response ``M^-1 J^T p``).
The kernel is handed the affine map ``v -> (I - X S^+ J_c) v - X S^+ b``
(``solvers.contact_step``'s input sections ``cproj``, ``cpv``), which it applies to its free
velocity and to each row of ``M^-1 J^T`` of its contact and one-dof rows: its PGS and polish
then solve the contacts on the constrained Delassus operator
``J (M^-1 - X S^+ X^T) J^T + diag(cfm / h)`` (the Schur complement of the closure rows, as
the pivoting step's ``solve_impulses`` forms it), and its velocity satisfies the closures
exactly (to round-off) whatever the contact impulses. After the kernel the closures'
impulses are ``lambda = -S^+ (J_c v_free + b + X^T J^T p)``
(:class:`~._ts_elimination.ClosureStep`).

``S^+`` is the inverse from unrolled Cholesky factors in one compiled call where the rows
are independent, else the pseudo-inverse from a symmetric eigendecomposition (eigenvalues
at or below ``ELIMINATION_RCOND`` times the largest dropped), so redundant closure rows (a
mechanism's closures can be dependent; a planar four-bar's ball closure has a row that is
identically zero, kept out of ``S``) get the minimum-norm impulse, as the pivoting step's
pseudo-inverse of ``A_ee`` gives them.

After the kernel integrated ``q_n``, the rigid closures (no spring, ``cfm = 0``) are
post-stabilized as the pivoting step does (:func:`multibody.plants._ts_projection.
project_positions`: Gauss-Newton steps ``dq = -M^-1 J^T (J M^-1 J^T)^-1 phi(q_n)``, mass
matrix ``H + h D`` of the step's start; Cline & Pai 2003). Where every joint moves as
``q + dv`` (``nv <= 64``), :class:`ClosureProjection` does the same steps in one compiled
call.

The kernel's ``closure`` candidates (a closure's rows in its PGS) are no longer written by
the tables: with contact, a contact's row can repeat a closure's row in the constrained
directions, an indeterminate split that a PGS over both rows does not resolve.
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
"""The closure blocks the compiled step eliminates before the contact problem."""


def closure_bodies(tree, blk) -> tuple:
    """Body indices of a closure block's two frames."""
    return tuple(tree.get_body(tree.get_frame(f).body).index for f in (blk.frame_a, blk.frame_b))


class ClosureTerms:
    """``q -> (phi, J)`` of every closure block, one compiled function.

    Parameters
    ----------
    tree : RigidBodyTree
    closures : sequence of constraint blocks
        Closure blocks (:data:`CLOSURE_BLOCKS`), in the plant's order.

    Attributes
    ----------
    rows : list of int
        Each block's number of rows ``m_i``; the function's outputs stack them.
    m : int
        All rows.
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
        fun = ca.Function(ops.function_name("closures", "terms"), [q],
                          [ca.vertcat(*phis), ca.vertcat(*Js)])
        self.symbolic = fun
        """The CasADi function ``q -> (phi, J)`` (SX; :class:`ClosureProjection` and
        :class:`~._ts_elimination.CompiledElimination` inline it)."""
        phi_all, J_all = fun(q)
        J_rows = ca.vec(J_all.T)
        self.fn = CompiledFunction(ca.Function(
            ops.function_name("closures", "terms_stacked"), [q], [ca.vertcat(phi_all, J_rows)]))

    def stacked(self, out: np.ndarray) -> tuple:
        """``(phi (m,), J (m, nv))`` of the vector :meth:`__call__` gives (views)."""
        m = self.m
        return out[:m], out[m:m * (1 + self.nv)].reshape(m, self.nv)

    def __call__(self, q: np.ndarray) -> np.ndarray:
        """``phi`` then ``J`` row by row at ``q`` (nq,) in one vector (read it with
        :meth:`stacked`)."""
        return self.fn(np.asarray(q, float))


def closure_block_groups(tree, closures, mask: np.ndarray, block_of: np.ndarray) -> dict:
    """The velocity blocks the closures' elimination couples: ``{block: group}``, each group
    the set of blocks linked through closures (connected components of the blocks of both
    frames' ancestor columns, ``mask`` (N, nv) the bodies' ancestor columns, ``block_of``
    (nv,) each column's block). A row of ``M^-1 J^T`` mapped by the elimination reaches
    every block of its group (the kernel's touched blocks of a candidate)."""
    group: dict = {}
    for blk in closures:
        ia, ib = closure_bodies(tree, blk)
        cols = np.flatnonzero((mask[ia] != 0) | (mask[ib] != 0))
        g = {int(block_of[c]) for c in cols}
        for b in list(g):
            g |= group.get(b, set())
        for b in g:
            group[b] = g
    return group


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


def cholesky_sx(A, n: int):
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


def cho_solve_sx(Lf, n: int, b):
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
    :func:`project_closures`, whose least-squares solve handles dependent rows).

    Parameters
    ----------
    terms : ClosureTerms
    nq, nv : int

    Notes
    -----
    Inputs ``(qn (nq,), H (nv*nv,), d (nv,), rigid (m,))``: the integrated positions,
    ``H`` (symmetric, its lower triangle read), the diagonal ``h D`` added to it (zeros
    with the Euler damping split) and 1.0 on the rigid rows. One output vector: ``q`` and
    ``bad``.
    """

    def __init__(self, terms: ClosureTerms, nq: int, nv: int) -> None:
        self.terms, self.nq, self.nv, self.m = terms, nq, nv, terms.m
        q0 = ca.SX.sym("q", nq)
        Hs = ca.SX.sym("H", nv, nv)
        d = ca.SX.sym("d", nv)
        mask = ca.SX.sym("rigid", terms.m)
        Lm, _ = cholesky_sx(Hs + ca.diag(d), nv)
        q, stop, bad = q0, ca.SX(0), ca.SX(0)
        for _ in range(3):
            phi, J = terms.symbolic(q)
            phi, J = phi * mask, J * ca.repmat(mask, 1, nv)
            err = ca.mmax(ca.fabs(phi))
            take = ca.logic_and(ca.logic_not(stop), err >= 1e-11)
            dead = ca.sum2(J * J) <= 0
            X = cho_solve_sx(Lm, nv, J.T)                    # M^-1 J^T, nv x m
            G = ca.mtimes(J, X) + ca.diag(dead)
            Lg, piv = cholesky_sx(G, terms.m)
            lam = cho_solve_sx(Lg, terms.m, phi)
            bad = ca.logic_or(bad, ca.logic_and(take, ca.logic_not(ca.mmin(ca.vertcat(*piv))
                                                                    > 0)))
            q = ca.if_else(take, q - ca.mtimes(X, lam), q)
            stop = ca.logic_or(stop, err < 1e-6)
        fun = ca.Function(ops.function_name("closures", "projection"), [q0, Hs, d, mask],
                          [ca.vertcat(q, bad)])
        self.fn = CompiledFunction(fun)
        self.function = fun
        """The CasADi function compiled (``(qn, H, d, rigid) -> [q; bad]``, Notes): a
        compiled whole run generates its code into its own loop."""
        self._mask = (None, None)
        self._H = (None, None)

    def __call__(self, qn: np.ndarray, H: np.ndarray, d: np.ndarray, rigid: np.ndarray,
                 integrate, M) -> np.ndarray:
        """The projected positions (as :func:`project_closures` gives them); ``H`` (nv, nv),
        ``d`` (nv,) the diagonal added to it, ``rigid`` the rigid rows (bool, a memoized
        array); ``integrate`` and ``M`` as :func:`project_closures` takes them, used only
        when a pivot of ``J M^-1 J^T`` is not positive."""
        key, mask = self._mask
        if key is not rigid:
            mask = np.asarray(rigid, float)
            self._mask = (rigid, mask)
        key, flat = self._H
        if key is not H:                  # (a flat view of the context's H, made once)
            flat = H.reshape(-1)
            if H.flags.c_contiguous:
                self._H = (H, flat)
        out = self.fn(qn, flat, d, mask)
        nq = self.nq
        if out[nq] != 0.0:
            return project_closures(self.terms, rigid, integrate, qn, M)
        return out[:nq]
