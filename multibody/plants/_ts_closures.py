"""Loop closures in the compiled step (private to :mod:`multibody.plants`).

The two-frame bilateral blocks of :mod:`multibody.constraints.closure` (ball, weld, distance,
point-on-line) are ``closure`` candidates of the contact kernel (``solvers.contact_step``'s
layout): each block's ``m`` rows are ``ceil(m / 3)`` slots of up to three rows. Every step
one compiled function of ``q`` gives the position errors ``phi`` and Jacobians ``J`` of all
closures (from the blocks' public ``kinematic_terms(q, None)``), which are written into the
kernel's input sections ``cphi``, ``cJ``; the kernel solves each slot as an unprojected
block with the bias ``erp phi / h`` and the block's cfm, as the pivoting step's
``BILATERAL`` rows have them.

After the kernel integrated ``q_n``, the rigid closures (no spring, ``cfm = 0``) are
post-stabilized as the pivoting step does (:func:`multibody.plants._ts_projection.
project_positions`: Gauss-Newton steps ``dq = -M^-1 J^T (J M^-1 J^T)^-1 phi(q_n)``, mass
matrix ``H + h D`` of the step's start; Cline & Pai 2003).
"""
from __future__ import annotations

import casadi as ca
import numpy as np

from solvers import ops
from solvers.compiled import CompiledFunction

from ..constraints import BallConstraint, DistanceConstraint, PointOnLineConstraint, WeldConstraint

__all__: list[str] = []  # private module

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
        self.fn = CompiledFunction(fun)
        self._last = (None, None)

    def __call__(self, q: np.ndarray) -> tuple:
        """``(phi (m,), J (m, nv))`` at ``q`` (nq,); callers must not write into them. The last
        result is kept: a
        step's projection evaluates the terms at ``q_next``, which the next step starts
        from (a pure function of ``q``, so contexts may share it)."""
        q = np.asarray(q, float)
        key = q.tobytes()
        last_key, last = self._last
        if key == last_key:
            return last
        phi, J = self.fn(q)
        out = (np.asarray(phi, float).reshape(self.m),
               np.asarray(J, float).reshape(self.m, self.nv))
        self._last = (key, out)
        return out


def write_closure_input(slots: list, phi: np.ndarray, J: np.ndarray, cphi: np.ndarray,
                        cJ: np.ndarray) -> None:
    """Write the closures' ``phi`` (m,) and ``J`` (m, nv) into the kernel's input views
    ``cphi`` (nc, 3) and ``cJ`` (nc, 3, nv); ``slots``: per slot ``(k, r0, nr)`` (slot, first
    row, row count)."""
    for k, r0, nr in slots:
        cphi[k, :nr] = phi[r0:r0 + nr]
        cJ[k, :nr] = J[r0:r0 + nr]


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
        phi, J = terms(qn)
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
