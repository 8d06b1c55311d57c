r"""Loop closures in the compiled step (private to :mod:`multibody.plants`).

The two-frame bilateral blocks of :mod:`multibody.constraints.closure` (ball, weld, distance,
point-on-line) are eliminated exactly before the contact problem (:class:`ClosureElimination`).
Every step one compiled function of ``q`` gives the position errors ``phi`` and Jacobians
``J_c`` of all closures (from the blocks' public ``kinematic_terms(q, None)``); with
``M = H + h D`` (``H`` with MuJoCo's Euler damping split) and ``X = M^-1 J_c^T``,
``S = J_c X + diag(cfm / h)`` and the closures' bias ``b = erp phi / h``, the closures hold

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
impulses are ``lambda = -S^+ (J_c v_free + b + X^T J^T p)`` (:meth:`ClosureStep.finish`).

``S^+`` is the pseudo-inverse from a symmetric eigendecomposition: eigenvalues at or below
:data:`ELIMINATION_RCOND` times the largest are dropped, so redundant closure rows (a planar
four-bar's ball closure has a row that is identically zero, a mechanism's closures can be
dependent) get the minimum-norm impulse, as the pivoting step's pseudo-inverse of ``A_ee``
gives them.

After the kernel integrated ``q_n``, the rigid closures (no spring, ``cfm = 0``) are
post-stabilized as the pivoting step does (:func:`multibody.plants._ts_projection.
project_positions`: Gauss-Newton steps ``dq = -M^-1 J^T (J M^-1 J^T)^-1 phi(q_n)``, mass
matrix ``H + h D`` of the step's start; Cline & Pai 2003). Where every joint moves as
``q + dv`` (``nv <= 64``), :class:`ClosureProjection` does the same steps in one compiled
call that also gives the closure terms at the projected positions (the next step's input).

The kernel's ``closure`` candidates (a closure's rows in its PGS) are no longer written by
the tables: with contact, a contact's row can repeat a closure's row in the constrained
directions, an indeterminate split that a PGS over both rows does not resolve.
"""
from __future__ import annotations

from typing import Optional

import casadi as ca
import numpy as np

from solvers import ops
from solvers.compiled import CompiledFunction

from ..constraints import BallConstraint, DistanceConstraint, PointOnLineConstraint, WeldConstraint
from ..tree import Joint
from ._time_stepping_kinematics import quat_to_rot

__all__: list[str] = []  # private module

ELIMINATION_RCOND = 1e-12
"""Relative cut of ``S = J_c M^-1 J_c^T + diag(cfm / h)``'s eigenvalues in the closures'
elimination (module docstring): an eigenvalue at or below ``ELIMINATION_RCOND`` times the
largest is a redundant direction of the closure rows (its impulse is zero), as the pivoting
step's pseudo-inverse (``rcond=1e-12``) treats it."""

CLOSURE_BLOCKS = (BallConstraint, WeldConstraint, DistanceConstraint, PointOnLineConstraint)
"""The blocks the kernel takes as ``closure`` candidates."""


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
        :class:`CompiledElimination` inline it)."""
        self.fn = CompiledFunction(ca.Function(
            ops.function_name("closures", "terms_stacked"), [q],
            [ca.vertcat(*self.outputs(*fun(q)))]))
        self._last = (None, None)

    @staticmethod
    def outputs(phi, J) -> tuple:
        """The compiled outputs of symbolic ``phi`` (m x 1), ``J`` (m x nv), stacked in one
        vector by the callers (one output array: each further output of a compiled call
        costs ~0.2 us): ``phi``, then ``J`` row by row (m, m nv)."""
        return phi, ca.vec(J.T)

    def stacked(self, terms: tuple) -> tuple:
        """``(phi (m,), J (m, nv))`` of the terms ``terms``."""
        out, a = terms
        return out[a:a + self.m], out[a + self.m:a + self.m * (1 + self.nv)].reshape(
            self.m, self.nv)

    def __call__(self, q: np.ndarray) -> tuple:
        """The terms at ``q`` (nq,): ``(out, a)``, the :meth:`outputs` stacked in ``out``
        from ``a`` on (read them with :meth:`stacked`; callers must not write into them). The last result is kept: a step's projection gives the
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
    terms of :meth:`ClosureTerms.outputs` at ``q``, and ``bad``.
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


class ClosureStep:
    """One step's closure elimination (:meth:`ClosureElimination.prepare`): the closure terms
    at the step's start and the affine map of the kernel's contact force to the closures'
    impulses, ``lambda = g0 + G1 tau_c`` (``g0 = -S^+ (J_c v_free + b)``, ``G1 = -h S^+
    X^T``; :meth:`finish`).

    Attributes
    ----------
    terms : tuple
        The closure terms at ``q`` (:class:`ClosureTerms`' output; ``phi`` (m,) and ``J``
        (m, nv) are :attr:`phi`, :attr:`J`).
    impulses : ndarray, shape (m,) or None
        ``lambda`` once :meth:`finish` ran.
    """

    __slots__ = ("terms", "stacked", "g0", "G1", "JTh", "impulses")

    def __init__(self, stacked, terms, g0, G1, JTh) -> None:
        self.stacked, self.terms = stacked, terms
        self.g0, self.G1, self.JTh = g0, G1, JTh
        self.impulses = None

    @property
    def phi(self) -> np.ndarray:
        """The closures' position errors at the step's start, shape (m,)."""
        return self.stacked(self.terms)[0]

    @property
    def J(self) -> np.ndarray:
        """The closures' Jacobian at the step's start, shape (m, nv)."""
        return self.stacked(self.terms)[1]

    def finish(self, tauc: np.ndarray) -> np.ndarray:
        """The closures' impulses ``lambda = -S^+ (J_c v_free + b + X^T J^T p)`` from the
        kernel's contact force ``tauc = J^T p / h`` (nv,), which gets ``J_c^T lambda / h``
        added in place (the step's total constraint force, as the pivoting step's
        ``J^T p / h`` over every row). Returns ``lambda`` (m,)."""
        lam = self.g0 + self.G1 @ tauc
        tauc += self.JTh @ lam
        self.impulses = lam
        return lam


class ClosureElimination:
    """The loop closures' exact elimination before the contact problem (module docstring):
    per step, the kernel's affine map ``(cproj, cpv)`` and the closures' impulses after it.

    Parameters
    ----------
    terms : ClosureTerms
    tree : RigidBodyTree
        Its free joints' velocity ranges give the free velocity's rotating-frame term.
    """

    def __init__(self, terms: ClosureTerms, tree) -> None:
        self.terms, self.nv = terms, tree.nv
        fv = [j.v_start for j in tree.joints if j.type == "free"]
        fq = [j.q_start for j in tree.joints if j.type == "free"]
        self._quat = np.array([[s, s + 1, s + 2, s + 3] for s in fq],
                              dtype=np.intp).reshape(-1, 4)
        self._ang = np.array([[s, s + 1, s + 2] for s in fv], dtype=np.intp).reshape(-1, 3)
        self._lin = self._ang + 3
        self._eye = np.eye(tree.nv)
        self._zero = np.zeros(tree.nv)
        self._rows = (None, None, None)
        self.compiled = (CompiledElimination(terms, tree.nq, tree.nv)
                         if tree.nv <= PROJECTION_MAX_NV else None)
        """The compiled :meth:`prepare` (None beyond ``PROJECTION_MAX_NV``)."""

    def reframe(self, q_int: np.ndarray, q_proj: np.ndarray, v: np.ndarray) -> None:
        """Re-express the free joints' velocities ``v`` (in place), which the kernel gave in
        the body frames of its integrated positions ``q_int``, in the frames of the
        post-stabilized positions ``q_proj`` (``R_proj^T R_int``), as the pivoting step
        re-expresses them after its projection."""
        if not self._quat.shape[0] or np.array_equal(q_int, q_proj):
            return
        Rrel = np.matmul(quat_to_rot(q_proj[self._quat]).transpose(0, 2, 1),
                         quat_to_rot(q_int[self._quat]))
        for idx in (self._ang, self._lin):
            v[idx] = np.matmul(Rrel, v[idx][:, :, None])[:, :, 0]

    def _row_softening(self, values: tuple, h: float) -> tuple:
        """Per stacked row ``(erp / h, cfm / h)`` from the closures' ``((erp, cfm), ...)``
        (kept while they do not change)."""
        key, erp_h, cfm_h = self._rows
        if key != (values, h):
            rows = self.terms.rows
            erp_h = np.repeat([float(e) / h for e, _ in values], rows)
            cfm_h = np.repeat([float(c) / h for _, c in values], rows)
            self._rows = ((values, h), erp_h, cfm_h)
        return erp_h, cfm_h

    def prepare(self, q: np.ndarray, v: np.ndarray, tau: np.ndarray, H: np.ndarray,
                c: np.ndarray, damping_h: Optional[np.ndarray], softening: tuple, h: float,
                cproj: np.ndarray, cpv: np.ndarray) -> Optional[ClosureStep]:
        """Write the step's map into ``cproj`` (nv, nv) and ``cpv`` (nv,) and return its
        :class:`ClosureStep`, or None when ``M`` is singular (the kernel then reports it).
        One compiled call (:class:`CompiledElimination`) where it applies and ``S`` has no
        dependent live rows; else numpy with the eigendecomposition.

        Parameters
        ----------
        q, v, tau : ndarray
            The step's start and its generalized force (actuation and applied forces).
        H : ndarray, shape (nv, nv)
        c : ndarray, shape (nv,)
            ``C(q, v) - tau_passive`` (the kernel's input ``c``).
        damping_h : ndarray, shape (nv,), or None
            ``h D`` added to ``H`` (None with MuJoCo's Euler split: ``M = H``).
        softening : tuple of (erp, cfm)
            Each closure block's, in the plant's order.
        h : float
        """
        terms = self.terms(q)
        erp_h, cfm_h = self._row_softening(softening, h)
        vf = v
        if self._ang.shape[0]:              # v + h (0, w x v) at free joints
            vf = v.copy()
            vf[self._lin] += h * np.cross(v[self._ang], v[self._lin])
        fast = self.compiled
        if fast is not None:
            got = fast(q, H, self._zero if damping_h is None else damping_h, vf, h, tau - c,
                       erp_h, cfm_h, cproj, cpv)
            if got is not None:
                return ClosureStep(self.terms.stacked, terms, *got)
        phi, J = self.terms.stacked(terms)
        M = H if damping_h is None else H + np.diag(damping_h)
        try:
            X = np.linalg.solve(M, J.T)
        except np.linalg.LinAlgError:
            return None
        bias = erp_h * phi
        S = J @ X
        S[np.diag_indices_from(S)] += cfm_h
        w, V = np.linalg.eigh(0.5 * (S + S.T))
        top = float(w[-1]) if w.size else 0.0
        keep = w > ELIMINATION_RCOND * top
        Vk = V[:, keep]
        Splus = (Vk / w[keep]) @ Vk.T
        K = X @ Splus
        cproj[:] = self._eye - K @ J
        cpv[:] = -(K @ bias)
        a = J @ vf + X.T @ (h * (tau - c)) + bias      # J_c v_free + b
        return ClosureStep(self.terms.stacked, terms, -(Splus @ a), -h * (Splus @ X.T),
                           J.T / h)


class CompiledElimination:
    """:meth:`ClosureElimination.prepare` in one compiled call (``nv <=
    PROJECTION_MAX_NV``): ``phi, J`` at ``q``, the Cholesky factors of ``M`` and ``S``
    (unrolled symbolically; a row whose Jacobian is zero is kept out of ``S`` by a unit
    diagonal, its impulse zero), the map ``(cproj, cpv)``, the impulses' map ``(g0, G1)``
    and ``J^T / h`` (:class:`ClosureStep`); and a flag when a pivot of ``S`` is at or below
    ``ELIMINATION_RCOND`` times
    its largest diagonal (dependent rows) or one of ``M`` is not positive: the caller then
    takes the numpy path (the eigendecomposition's pseudo-inverse).

    Parameters
    ----------
    terms : ClosureTerms
    nq, nv : int
    """

    def __init__(self, terms: ClosureTerms, nq: int, nv: int) -> None:
        m = terms.m
        self.nv, self.m = nv, m
        q = ca.SX.sym("q", nq)
        Hs = ca.SX.sym("H", nv, nv)
        d = ca.SX.sym("d", nv)
        vf = ca.SX.sym("vf", nv)
        h = ca.SX.sym("h")
        g = ca.SX.sym("g", nv)                 # tau - c
        f = h * g
        erp_h = ca.SX.sym("erp_h", m)          # erp / h per row
        cfm_h = ca.SX.sym("cfm_h", m)          # cfm / h per row
        phi, J = terms.symbolic(q)
        live = ca.sum2(J * J) > 0
        Lm, mpiv = _cholesky(Hs + ca.diag(d), nv)
        X = _cho_solve(Lm, nv, J.T)                                   # nv x m
        S = ca.mtimes(J, X) + ca.diag(cfm_h * live + (1 - live))
        Ls, spiv = _cholesky(S, m)
        Sinv = _cho_solve(Ls, m, ca.diag(live))                       # dead rows: zero
        bias = erp_h * phi * live
        a = (ca.mtimes(J, vf) + ca.mtimes(X.T, f) + bias) * live
        K = ca.mtimes(X, Sinv)
        cproj = ca.SX.eye(nv) - ca.mtimes(K, J)
        cpv = -ca.mtimes(K, bias)
        smax = ca.mmax(ca.diag(S) * live)
        bad = ca.logic_or(ca.logic_not(ca.mmin(ca.vertcat(*mpiv)) > 0),
                          ca.logic_not(ca.mmin(ca.vertcat(*[p - ELIMINATION_RCOND * smax
                                                            for p in spiv])) > 0))
        G1 = -ca.mtimes(Sinv, X.T) * h                               # m x nv
        g0 = -ca.mtimes(Sinv, a)
        fun = ca.Function(ops.function_name("closures", "elimination"),
                          [q, Hs, d, vf, h, g, erp_h, cfm_h],
                          [ca.vertcat(ca.vec(cproj.T), cpv, g0, ca.vec(G1.T),
                                      ca.vec(J / h), bad)])
        self.fn = CompiledFunction(fun)
        k = nv * nv + nv
        self._g0 = slice(k, k + m)
        self._G1 = slice(k + m, k + m + m * nv)
        self._JTh = slice(k + m + m * nv, k + m + 2 * m * nv)

    def __call__(self, q, H, d, vf, h, g, erp_h, cfm_h, cproj, cpv):
        """Write ``cproj``, ``cpv`` and return ``(g0 (m,), G1 (m, nv), J^T / h (nv, m))``
        (:class:`ClosureStep`), or None (nothing written) when the numpy path must take the
        step; ``g = tau - c``."""
        out = self.fn(q, H.reshape(-1), d, vf, h, g, erp_h, cfm_h)
        if out[-1] != 0.0:
            return None
        nv, m = self.nv, self.m
        k = nv * nv
        cproj.reshape(-1)[:] = out[:k]
        cpv[:] = out[k:k + nv]
        return (out[self._g0], out[self._G1].reshape(m, nv),
                out[self._JTh].reshape(nv, m))
