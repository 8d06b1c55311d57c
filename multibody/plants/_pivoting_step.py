r"""The pivoting step of :class:`~multibody.plants.TimeSteppingRigidBodySystem` (private): the
reference step method, in numpy with the pivoting LCP solvers of
:mod:`._time_stepping_solve` (``contact_solver="lcp"``, and the fallback of the compiled
step). It covers every constraint block the plant accepts.

One step (:meth:`PivotingStep._step_impl`), forward:

1. dynamics: ``H, c`` and the blocks' kinematics at ``(q, v)`` (``plant.kinematics``);
2. free velocity ``v_free = v + (H + h D)^{-1} h (tau - c) + h (0, w x v)`` at free joints
   (the rotating-frame term, :meth:`PivotingStep.frame_rate_term`);
3. rows of every constraint block, the Delassus operator ``A = J (H + h D)^{-1} J^T +
   diag(cfm / h)`` and ``b = J v_free + bias``;
4. the impulses (``solve_impulses``: LCP or boxed LCP, warm-started by row key from the
   context's :class:`~multibody.plants.ContactWarmStart`);
5. ``v_n = v_free + (H + h D)^{-1} J^T p``, ``q_n = q (+) h N(q) v_n`` (``plant.integrate``)
   and the post-stabilization of the rigid bilateral blocks (:mod:`._ts_projection`);
6. the free joints' velocities re-expressed in their frames at ``t + h``.

Rows of a contact block with ``MuJoCoSoftening(noslip=True)`` (MuJoCo's soft pyramid edges,
``info["noslip_pairs"]``) get a second stage after step 4: MuJoCo's no-slip solve of the
opposing edges' differences on the unregularized ``A`` with every other impulse fixed
(:func:`~multibody.constraints.mujoco_softening.noslip_impulses`).

With the plant's ``damping_scheme="mujoco_euler"`` (MuJoCo's Euler integrator with its
implicit damping, ``mj_Euler`` in MuJoCo's ``engine_forward.c``; MuJoCo documentation,
"Computation > Numerical integration") steps 2-5 split the damping from the constraints:
the constraint forces are those of the undamped step (``M = H``, damping explicit in ``c``,
as MuJoCo's ``qacc`` from ``M qacc = qfrc_smooth + qfrc_constraint``) and the damping is
then taken implicitly on the resulting acceleration:

.. math::

    v_M &= v + H^{-1} (h (\tau - c) + J^T p) + h (0, w \times v),
    \qquad A = J H^{-1} J^T + \mathrm{diag}(cfm / h),\; b = J v_{free} + bias, \\
    v_n &= v + (H + h D)^{-1} H (v_M - v),

i.e. ``v_n = v + h (M + h D)^{-1} (qfrc_smooth + qfrc_constraint)``: the constraints hold
``v_M`` (the row complementarity is on ``J v_M``), not ``v_n``; a damped joint stopped by a
hard limit keeps ``v_n = h D v / (M + h D)``. Without damping both schemes are the same step.
"""
from __future__ import annotations

import numpy as np

from ..constraints import (BallConstraint, ConstraintRows, ContactResults, DistanceConstraint,
                           PointContactConstraint, PointOnLineConstraint, WeldConstraint)
from ..constraints.kinematics import cross_rows
from ..constraints.mujoco_softening import noslip_impulses
from ._step_method import StepInputs, StepMethod, implicit_damping, velocity_blocks
from ._time_stepping_kinematics import quat_to_rot
from ._time_stepping_solve import SolveReport, one_blas_thread, solve_impulses
from ._ts_projection import project_positions
from .solutions import ContactWarmStart, StepSolution, StepStatus

__all__ = ["PivotingStep", "constrained_free_velocity"]

_NO_ROWS = SolveReport("no_rows", "none", 0.0, 0)


def constrained_free_velocity(v_free: np.ndarray, Minv: np.ndarray, rows: list,
                               h: float) -> np.ndarray:
    """The free velocity with the closure rows ``rows`` held (no contact impulse):
    ``v_free - M^-1 J_c^T S^+ (J_c v_free + b)``, ``S = J_c M^-1 J_c^T + diag(cfm / h)``
    (pseudo-inverse with ``rcond=1e-12``: redundant rows carry nothing): the velocity whose
    slip the contacts align their friction directions with when closures are present (the
    slip the step would have without contact impulses).

    Parameters
    ----------
    v_free : ndarray, shape (nv,)
    Minv : ndarray, shape (nv, nv)
    rows : list of ConstraintRows
        The closure blocks' rows of the step.
    h : float
    """
    J = np.vstack([r.J for r in rows])
    if J.shape[0] == 0:
        return v_free
    X = Minv @ J.T
    S = J @ X
    S[np.diag_indices_from(S)] += np.concatenate([r.cfm for r in rows]) / h
    lam = np.linalg.pinv(S, rcond=1e-12, hermitian=True) @ (
        J @ v_free + np.concatenate([r.bias for r in rows]))
    return v_free - X @ lam


class PivotingStep(StepMethod):
    """The step with numpy and the pivoting LCP solvers (module docstring).

    Parameters
    ----------
    plant : TimeSteppingRigidBodySystem
        Its ``include_passive_forces`` decides the implicit joint damping, its
        ``damping_scheme`` where the damping enters (module docstring).
    """

    name = "lcp"
    description = "the pivoting (Lemke) step"

    def __init__(self, plant) -> None:
        super().__init__(plant)
        tree = plant.tree
        self.h = plant.time_step
        self.hD = self.h * np.diag(implicit_damping(tree, plant.include_passive_forces))
        # MuJoCo's split only differs from the implicit step where some joint is damped
        self._mujoco_euler = (plant.damping_scheme == "mujoco_euler"
                              and bool(np.any(self.hD)))
        free = [j for j in tree.joints if j.type == "free"]
        fq = np.array([j.q_start for j in free], int)
        fv = np.array([j.v_start for j in free], int)
        self._fq_quat = fq[:, None] + np.arange(4)
        self._fv_ang = fv[:, None] + np.arange(3)
        self._fv_lin = fv[:, None] + np.arange(3, 6)
        self._blocks = velocity_blocks(tree)
        self._closures = [i for i, cb in enumerate(plant.constraints)
                          if isinstance(cb, (BallConstraint, WeldConstraint, DistanceConstraint,
                                             PointOnLineConstraint))]
        sizes = sorted({b - a for a, b in self._blocks})
        self._block_groups = [(np.array([a for a, b in self._blocks if b - a == n]), n)
                              for n in sizes]

    # ------------------------------------------------------------------ helpers
    def inverse(self, M: np.ndarray) -> np.ndarray:
        """Inverse of the (block-diagonal) mass matrix: the subtrees hanging from the world
        are decoupled, so equal-sized blocks are inverted together (one batched call)."""
        if len(self._blocks) == 1:
            return np.linalg.inv(M)
        out = np.zeros_like(M)
        for starts, n in self._block_groups:
            idx = starts[:, None] + np.arange(n)
            sub = M[idx[:, :, None], idx[:, None, :]]
            out[idx[:, :, None], idx[:, None, :]] = np.linalg.inv(sub)
        return out

    def checked_inverse(self, M: np.ndarray, t: float) -> np.ndarray:
        """:meth:`inverse` of ``M`` (nv, nv), or a ``ValueError`` naming the plant, the tree
        and the time when ``M`` is singular."""
        try:
            Minv = self.inverse(M)
        except np.linalg.LinAlgError:
            Minv = None
        if Minv is None or not np.all(np.isfinite(Minv)) or np.any(np.diagonal(Minv) <= 0):
            raise ValueError(f"system '{self.plant.name}' at t={t:.6g}: the mass matrix of tree "
                             f"'{self.plant.tree.name}' is singular (a massless body without "
                             "inertia on a moving joint?)")
        return Minv

    def frame_rate_term(self, v: np.ndarray) -> np.ndarray:
        """``(0, w_b x v_b)`` at each free joint (zeros elsewhere).

        A free joint's velocity is expressed in its moving body frame, so ``C(q, v)`` holds
        the rotating-frame term ``-w x v``. The step is taken in world-aligned coordinates
        ``v' = T(q) v`` (``T = diag(R, R)`` per free joint, as Drake does for free bodies):
        with ``T^{-1} dT/dt v = (0, w x v)`` the update becomes
        ``v_free = v + h H^{-1}(tau - C) + h (0, w x v)`` in frame-n coordinates, and the
        result is re-expressed in the frame at ``t + h`` (:meth:`to_new_frames`). Taking
        ``-w x v`` explicitly in the body frame instead makes a spinning body gain speed
        (a rolling ball accelerates by ``h w^2`` per step)."""
        a = np.zeros_like(v)
        if self._fv_ang.shape[0]:
            a[self._fv_lin] = cross_rows(v[self._fv_ang], v[self._fv_lin])
        return a

    def to_new_frames(self, q: np.ndarray, qn: np.ndarray, vn: np.ndarray) -> np.ndarray:
        """Free joints' velocities (computed in the body frames at ``t``) re-expressed in
        the body frames at ``t + h``: ``R_{n+1}^T R_n`` on the angular and linear parts."""
        if not self._fq_quat.shape[0]:
            return vn
        R0 = quat_to_rot(q[self._fq_quat])
        R1 = quat_to_rot(qn[self._fq_quat])
        Rrel = np.matmul(R1.transpose(0, 2, 1), R0)
        out = vn.copy()
        for idx in (self._fv_ang, self._fv_lin):
            out[idx] = np.matmul(Rrel, vn[idx][:, :, None])[:, :, 0]
        return out

    @staticmethod
    def row_keys(i: int, r: ConstraintRows) -> list:
        """Keys identifying rows across steps (for the warm start): the block's own
        ``info["keys"]`` when it gives them (contacts: geometry pair and point), else
        (block index, row index)."""
        if isinstance(r.info, dict) and "keys" in r.info:
            return r.info["keys"]
        return [(i, k) for k in range(r.m)]

    # ------------------------------------------------------------------ the step
    def _step_impl(self, context, inputs: StepInputs) -> StepSolution:
        with one_blas_thread():            # no BLAS threads spinning on small products
            return self._solve(context, inputs)

    def _solve(self, context, inputs: StepInputs) -> StepSolution:
        plant = self.plant
        h, nq, nv = self.h, plant.nq, plant.nv
        t, xd, q, v, tau = inputs.time, inputs.xd, inputs.q, inputs.v, inputs.tau
        H, c, kinm = plant.kinematics(q, v, t)
        H = H.reshape(nv, nv)            # (a one-DOF tree gives H as (1,))
        # the constraints see H + h D (implicit), or H (MuJoCo's Euler split, module docstring)
        Minv = self.checked_inverse(H if self._mujoco_euler else H + self.hD, t)
        v_free = v + Minv @ (h * (tau - c)) + h * self.frame_rate_term(v)
        kinm.v_free = v_free          # contacts align their friction directions with it
        kinm.Minv = Minv              # MuJoCo softening: the rows' Delassus diagonals
        constraints = plant.constraints
        rows = [None] * len(constraints)
        if self._closures and len(self._closures) < len(constraints):
            # the slip the contacts align their friction directions with is that of the
            # closures' constrained free velocity (as the compiled step has it)
            for i in self._closures:
                rows[i] = constraints[i].calc_rows(
                    plant.block_context(constraints[i], context, xd), kinm)
            kinm.v_free = constrained_free_velocity(v_free, Minv, [rows[i] for i in
                                                                   self._closures], h)
        rows = [r if r is not None else cb.calc_rows(plant.block_context(cb, context, xd), kinm)
                for cb, r in zip(constraints, rows)]
        sizes = [r.m for r in rows]
        m = sum(sizes)
        if m:
            J = np.vstack([r.J for r in rows])
            offs = np.cumsum([0] + sizes[:-1])
            normal = np.concatenate([np.where(r.normal >= 0, r.normal + o, -1)
                                     for r, o in zip(rows, offs)])
            kind = np.concatenate([r.kind for r in rows])
            MinvJT = Minv @ J.T
            A = J @ MinvJT
            cfm_h = np.concatenate([r.cfm for r in rows]) / h
            A[np.diag_indices(m)] += cfm_h
            b = J @ v_free + np.concatenate([r.bias for r in rows])
            keys = [k for i, r in enumerate(rows) for k in self.row_keys(i, r)]
            last = inputs.warm_start
            warm = None if last is None else last.lookup(keys)
            p, report, lam = solve_impulses(
                A, b, kind, np.concatenate([r.lo for r in rows]),
                np.concatenate([r.hi for r in rows]), normal,
                f"system '{plant.name}' at t={t:.6g}", plant.lcp_failure, warm,
                plant.lcp_tolerance)
            pairs = [r.info["noslip_pairs"] + o for r, o in zip(rows, offs)
                     if isinstance(r.info, dict) and "noslip_pairs" in r.info]
            if pairs:                  # MuJoCo's no-slip stage on the hard friction
                A[np.diag_indices(m)] -= cfm_h
                p = noslip_impulses(A, b, p, np.concatenate(pairs),
                                    f"system '{plant.name}' at t={t:.6g} (no-slip stage)")
            warm_next = ContactWarmStart(self.name, keys, p, lam)
            vn = v_free + MinvJT @ p
            tau_c = J.T @ p / h
            impulses = np.split(p, np.cumsum(sizes)[:-1])
        else:
            vn, tau_c, impulses = v_free, np.zeros(nv), [np.zeros(0) for _ in rows]
            report = _NO_ROWS
            warm_next = None
        if self._mujoco_euler:         # MuJoCo's qacc = (vn - v) / h, then the implicit damping
            vn = v + self.checked_inverse(H + self.hD, t) @ (H @ (vn - v))
        qn = plant.integrate(q, vn, h)
        if plant.project_positions:
            qn = project_positions(plant, context, xd, qn, vn, Minv, t)

        def make_contacts() -> ContactResults:
            contacts = []
            for cblk, r, pi in zip(constraints, rows, impulses):
                if r.m:
                    contacts.extend(cblk.results(r, pi, vn, kinm))
            return ContactResults(t, tuple(contacts))

        name = self.name

        def make_status() -> StepStatus:
            points = sum(r.info["point"].shape[0] for cb, r in zip(constraints, rows)
                         if r.m and isinstance(cb, PointContactConstraint))
            return StepStatus(name, True, report.iterations, points, report.residual, m,
                              report)
        vn = self.to_new_frames(q, qn, vn)
        xd_next = np.array(xd, dtype=float)
        xd_next[:nq], xd_next[nq:nq + nv] = qn, vn
        return StepSolution(t, qn, vn, xd_next, tau, tau_c, impulses, rows, (vn - v) / h,
                            warm_next, make_contacts, make_status)
