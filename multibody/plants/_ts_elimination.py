r"""The loop closures' exact elimination before the contact problem (private to
:mod:`multibody.plants`; the method is described in :mod:`._ts_closures`).

Per step, with ``M = H + h D``, ``X = M^-1 J_c^T``, ``S = J_c X + diag(cfm / h)``, the
closures' bias ``b = erp phi / h`` and the kernel's contact force ``tau_c = J^T p / h``:

.. math::

    \lambda = g_0 + G_1 \tau_c, \qquad g_0 = -S^+ (J_c v_f + h X^T (\tau - c) + b),
    \qquad G_1 = -h S^+ X^T,

and the step's total constraint force is ``tau_c + J_c^T lambda / h = E tau_c + e`` with
``E = I - J_c^T S^+ X^T`` and ``e = J_c^T g_0 / h``. The kernel is handed the affine map
``v -> (I - X S^+ J_c) v - X S^+ b`` (its input sections ``cproj``, ``cpv``).

Everything one step needs lies in one vector (:class:`EliminationLayout`), written by one
compiled call (:class:`CompiledElimination`, ``nv <= PROJECTION_MAX_NV``, independent
closure rows) or by numpy (:meth:`ClosureElimination.prepare`, with the pseudo-inverse
from an eigendecomposition where rows are dependent): after the kernel,
:meth:`ClosureStep.finish` is one product ``[E | e] [tau_c; 1]`` written into the kernel's
force, and the impulses ``[G_1 | g_0] [tau_c; 1]`` are formed only when asked for.
"""
from __future__ import annotations

from typing import Optional

import casadi as ca
import numpy as np

from solvers import ops
from solvers.compiled import CompiledFunction

from ._ts_closures import PROJECTION_MAX_NV, ClosureTerms, cho_solve_sx, cholesky_sx
from ._time_stepping_kinematics import quat_to_rot

__all__: list[str] = []  # private module

ELIMINATION_RCOND = 1e-12
"""Relative cut of ``S = J_c M^-1 J_c^T + diag(cfm / h)``'s eigenvalues in the closures'
elimination: an eigenvalue at or below ``ELIMINATION_RCOND`` times the largest is a
redundant direction of the closure rows (its impulse is zero), as the pivoting step's
pseudo-inverse (``rcond=1e-12``) treats it."""

CHOLESKY_PIVOT_GUARD = 1e-8
"""The compiled elimination's test for (nearly) dependent closure rows: a Cholesky pivot of
``S`` at or below this times its largest diagonal sends the step to the numpy path, whose
eigendecomposition then applies ``ELIMINATION_RCOND``. A pivot is never below the smallest
eigenvalue, so a cut as strict as ``ELIMINATION_RCOND`` on the pivots would keep some rows
the eigenvalue cut drops; the larger guard leaves every borderline case to the one rule."""


class EliminationLayout:
    """Where the parts of one step's elimination lie in its vector (``nv`` velocities,
    ``m`` closure rows), in this order: ``cproj`` (nv x nv, row-major), ``cpv`` (nv),
    ``P = [E | e]`` (nv x (nv + 1), row-major), ``aug`` (nv + 1: ``tau_c`` once
    :meth:`ClosureStep.finish` ran, then 1), ``Q = [G_1 | g_0]`` (m x (nv + 1), row-major),
    ``phi`` (m), ``J`` (m x nv, row-major), ``bad`` (one flag: the numpy path must take the
    step). Attributes are slices (``bad`` an index)."""

    def __init__(self, nv: int, m: int) -> None:
        self.nv, self.m = nv, m
        sizes = (("cproj", nv * nv), ("cpv", nv), ("P", nv * (nv + 1)), ("aug", nv + 1),
                 ("Q", m * (nv + 1)), ("phi", m), ("J", m * nv), ("bad", 1))
        k = 0
        for name, n in sizes:
            setattr(self, name, slice(k, k + n))
            k += n
        self.size = k
        self.bad = k - 1
        self.tauc = slice(self.aug.start, self.aug.start + nv)   # aug's head
        self.e = slice(self.P.start + nv, self.P.stop, nv + 1)    # P's last column

    def pack(self, cproj, cpv, P, Q, phi, J, bad=0.0) -> list:
        """The parts (symbolic or numeric) in this layout's order, flattened row-major by
        the caller (``aug`` is ``[0, ..., 0, 1]``)."""
        return [cproj, cpv, P, np.r_[np.zeros(self.nv), 1.0], Q, phi, J, bad]


class ClosureStep:
    """One step's closure elimination (:meth:`ClosureElimination.prepare`): its vector
    ``out`` laid out as :class:`EliminationLayout` says.

    Attributes
    ----------
    out : ndarray
        The step's vector (owned by this step).
    layout : EliminationLayout
    """

    __slots__ = ("out", "layout", "finished", "_lam")

    def __init__(self, out: np.ndarray, layout: EliminationLayout) -> None:
        self.out, self.layout = out, layout
        self.finished = False
        self._lam = None

    @property
    def phi(self) -> np.ndarray:
        """The closures' position errors at the step's start, shape (m,)."""
        return self.out[self.layout.phi]

    @property
    def J(self) -> np.ndarray:
        """The closures' Jacobian at the step's start, shape (m, nv)."""
        lay = self.layout
        return self.out[lay.J].reshape(lay.m, lay.nv)

    @property
    def impulses(self) -> Optional[np.ndarray]:
        """The closures' impulses ``lambda = g0 + G1 tau_c`` (m,) once :meth:`finish` ran
        (formed on first access), else None."""
        if self._lam is None and self.finished:
            lay = self.layout
            self._lam = self.out[lay.Q].reshape(lay.m, lay.nv + 1) @ self.out[lay.aug]
        return self._lam

    def finish(self, tauc: np.ndarray) -> None:
        """Add the closures' force ``J_c^T lambda / h`` to the kernel's contact force
        ``tauc = J^T p / h`` (nv,) in place: ``tauc <- E tauc + e`` (the step's total
        constraint force, as the pivoting step's ``J^T p / h`` over every row); ``tauc``
        is kept for :attr:`impulses`."""
        out, lay = self.out, self.layout
        out[lay.tauc] = tauc
        out[lay.P].reshape(lay.nv, lay.nv + 1).dot(out[lay.aug], out=tauc)
        self.finished = True


class ClosureStepWithoutContact(ClosureStep):
    """:class:`ClosureStep` of a kernel without candidates (closures alone): its contact
    force is zero, so the total force is ``e`` and ``aug`` keeps its zeros."""

    __slots__ = ()

    def finish(self, tauc: np.ndarray) -> None:
        """``tauc <- e`` (the kernel's ``tauc`` is zero: :meth:`ClosureStep.finish` with
        ``tau_c = 0``, bitwise)."""
        tauc[:] = self.out[self.layout.e]
        self.finished = True


class ClosureElimination:
    """The loop closures' exact elimination before the contact problem (module docstring):
    per step, the kernel's affine map ``(cproj, cpv)`` and the closures' impulses after it.

    Parameters
    ----------
    terms : ClosureTerms
    tree : RigidBodyTree
        Its free joints' velocity ranges give the free velocity's rotating-frame term.
    candidates : bool
        Whether the kernel has candidates (contact, limit or friction rows); without them
        its contact force is zero (:class:`ClosureStepWithoutContact`).
    """

    def __init__(self, terms: ClosureTerms, tree, candidates: bool = True) -> None:
        self.terms, self.nv = terms, tree.nv
        self.layout = EliminationLayout(tree.nv, terms.m)
        self.step_type = ClosureStep if candidates else ClosureStepWithoutContact
        """The :class:`ClosureStep` class of this plant's steps."""
        fv = [j.v_start for j in tree.joints if j.type == "free"]
        fq = [j.q_start for j in tree.joints if j.type == "free"]
        self._quat = np.array([[s, s + 1, s + 2, s + 3] for s in fq],
                              dtype=np.intp).reshape(-1, 4)
        self._ang = np.array([[s, s + 1, s + 2] for s in fv], dtype=np.intp).reshape(-1, 3)
        self._lin = self._ang + 3
        self._free = bool(fv)
        self._eye = np.eye(tree.nv)
        self._zero = np.zeros(tree.nv)
        self._rows = (None, None, None, None)
        self.compiled = (CompiledElimination(terms, tree.nq, tree.nv, self.layout,
                                             self.step_type)
                         if tree.nv <= PROJECTION_MAX_NV else None)
        """The compiled :meth:`prepare` (None beyond ``PROJECTION_MAX_NV``)."""

    def reframe(self, q_int: np.ndarray, q_proj: np.ndarray, v: np.ndarray) -> None:
        """Re-express the free joints' velocities ``v`` (in place), which the kernel gave in
        the body frames of its integrated positions ``q_int``, in the frames of the
        post-stabilized positions ``q_proj`` (``R_proj^T R_int``), as the pivoting step
        re-expresses them after its projection."""
        if not self._free or np.array_equal(q_int, q_proj):
            return
        Rrel = np.matmul(quat_to_rot(q_proj[self._quat]).transpose(0, 2, 1),
                         quat_to_rot(q_int[self._quat]))
        for idx in (self._ang, self._lin):
            v[idx] = np.matmul(Rrel, v[idx][:, :, None])[:, :, 0]

    @property
    def free_joints(self) -> bool:
        """Whether the tree has free joints (the free velocity then takes the rotating-frame
        term ``h (0, w x v)``, added in numpy before the compiled call)."""
        return self._free

    def row_softening(self, values: tuple, h: float) -> tuple:
        """Per stacked closure row ``(erp / h, cfm / h)`` (two arrays of shape (m,)) from
        each closure block's ``(erp, cfm)`` in ``values``, as :meth:`prepare` forms them."""
        return self._row_softening(tuple(values), h)

    def _row_softening(self, values: tuple, h: float) -> tuple:
        """Per stacked row ``(erp / h, cfm / h)`` from the closures' ``((erp, cfm), ...)``
        (kept while they do not change)."""
        vals, hh, erp_h, cfm_h = self._rows
        if values is vals and h == hh:
            return erp_h, cfm_h
        if values != vals or h != hh:
            rows = self.terms.rows
            erp_h = np.repeat([float(e) / h for e, _ in values], rows)
            cfm_h = np.repeat([float(c) / h for _, c in values], rows)
        self._rows = (values, h, erp_h, cfm_h)
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
        vals, hh, erp_h, cfm_h = self._rows
        if softening is not vals or h != hh:
            erp_h, cfm_h = self._row_softening(softening, h)
        vf = v
        if self._free:                      # v + h (0, w x v) at free joints
            vf = v.copy()
            vf[self._lin] += h * np.cross(v[self._ang], v[self._lin])
        fast = self.compiled
        if fast is not None:
            got = fast(q, H, self._zero if damping_h is None else damping_h, vf, h, tau, c,
                       erp_h, cfm_h, cproj, cpv)
            if got is not None:
                return got
        return self._prepare_numpy(q, vf, tau, H, c, damping_h, erp_h, cfm_h, h, cproj, cpv)

    def _prepare_numpy(self, q, vf, tau, H, c, damping_h, erp_h, cfm_h, h, cproj, cpv):
        """:meth:`prepare` by numpy: ``S^+`` from a symmetric eigendecomposition (dependent
        rows get the minimum-norm impulse)."""
        phi, J = self.terms.stacked(self.terms(q))
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
        cp = self._eye - K @ J
        cv = -(K @ bias)
        a = J @ vf + X.T @ (h * (tau - c)) + bias      # J_c v_free + b
        g0 = -(Splus @ a)
        P = np.column_stack([self._eye - J.T @ (Splus @ X.T), J.T @ g0 / h])
        Q = np.column_stack([-h * (Splus @ X.T), g0])
        out = np.concatenate([np.ravel(x) for x in
                              self.layout.pack(cp, cv, P, Q, phi, J)])
        cproj[:] = cp
        cpv[:] = cv
        return self.step_type(out, self.layout)


class CompiledElimination:
    """:meth:`ClosureElimination.prepare` in one compiled call (``nv <=
    PROJECTION_MAX_NV``): ``phi, J`` at ``q``, the Cholesky factors of ``M`` and ``S``
    (unrolled symbolically; a row whose Jacobian is zero is kept out of ``S`` by a unit
    diagonal, its impulse zero) and the step's vector (:class:`EliminationLayout`); its
    flag ``bad`` is set when a pivot of ``S`` is at or below ``CHOLESKY_PIVOT_GUARD`` times
    its largest diagonal (dependent rows) or one of ``M`` is not positive: the caller then
    takes the numpy path (the eigendecomposition's pseudo-inverse).

    Parameters
    ----------
    terms : ClosureTerms
    nq, nv : int
    layout : EliminationLayout
    step_type : type
        The :class:`ClosureStep` class it returns.
    """

    def __init__(self, terms: ClosureTerms, nq: int, nv: int, layout: EliminationLayout,
                 step_type: type = ClosureStep) -> None:
        m = terms.m
        self.nv, self.m, self.layout, self.step_type = nv, m, layout, step_type
        q = ca.SX.sym("q", nq)
        Hs = ca.SX.sym("H", nv, nv)
        d = ca.SX.sym("d", nv)
        vf = ca.SX.sym("vf", nv)
        h = ca.SX.sym("h")
        tau = ca.SX.sym("tau", nv)
        c = ca.SX.sym("c", nv)
        erp_h = ca.SX.sym("erp_h", m)          # erp / h per row
        cfm_h = ca.SX.sym("cfm_h", m)          # cfm / h per row
        f = h * (tau - c)
        phi, J = terms.symbolic(q)
        live = ca.sum2(J * J) > 0
        Lm, mpiv = cholesky_sx(Hs + ca.diag(d), nv)
        X = cho_solve_sx(Lm, nv, J.T)                                 # nv x m
        S = ca.mtimes(J, X) + ca.diag(cfm_h * live + (1 - live))
        Ls, spiv = cholesky_sx(S, m)
        Sinv = cho_solve_sx(Ls, m, ca.diag(live))                     # dead rows: zero
        bias = erp_h * phi * live
        a = (ca.mtimes(J, vf) + ca.mtimes(X.T, f) + bias) * live
        K = ca.mtimes(X, Sinv)
        cproj = ca.SX.eye(nv) - ca.mtimes(K, J)
        cpv = -ca.mtimes(K, bias)
        smax = ca.mmax(ca.diag(S) * live)
        bad = ca.logic_or(ca.logic_not(ca.mmin(ca.vertcat(*mpiv)) > 0),
                          ca.logic_not(ca.mmin(ca.vertcat(*[p - CHOLESKY_PIVOT_GUARD * smax
                                                            for p in spiv])) > 0))
        SXt = ca.mtimes(Sinv, X.T)                                    # m x nv
        g0 = -ca.mtimes(Sinv, a)
        P = ca.horzcat(ca.SX.eye(nv) - ca.mtimes(J.T, SXt), ca.mtimes(J.T, g0) / h)
        Q = ca.horzcat(-SXt * h, g0)
        parts = layout.pack(cproj, cpv, P, Q, phi, J, bad)
        flat = [ca.vec(ca.SX(x).T) if isinstance(x, ca.SX) else ca.SX(ca.DM(x))
                for x in parts]
        fun = ca.Function(ops.function_name("closures", "elimination_step"),
                          [q, Hs, d, vf, h, tau, c, erp_h, cfm_h], [ca.vertcat(*flat)])
        self.fn = CompiledFunction(fun)
        self.function = fun
        """The CasADi function compiled (inputs ``q, H (nv*nv, row-major), d, vf, h, tau, c,
        erp_h, cfm_h``; one output laid out as ``layout``): a compiled whole run generates
        its code into its own loop."""
        self._views = (None, None, None, None)

    def __call__(self, q, H, d, vf, h, tau, c, erp_h, cfm_h, cproj, cpv):
        """Write ``cproj``, ``cpv`` and return the step's :class:`ClosureStep`, or None
        (nothing written) when the numpy path must take the step."""
        views = self._views
        if views[0] is not H or views[1] is not cproj:     # flat views of the context's
            flat = H.flags.c_contiguous and cproj.flags.c_contiguous    # buffers, made once
            views = (H, cproj, H.reshape(-1), cproj.reshape(-1) if flat else None)
            if flat:
                self._views = views
        out = self.fn(q, views[2], d, vf, h, tau, c, erp_h, cfm_h)
        lay = self.layout
        if out[lay.bad] != 0.0:
            return None
        if views[3] is None:
            cproj[:] = out[lay.cproj].reshape(cproj.shape)
        else:
            views[3][:] = out[lay.cproj]
        cpv[:] = out[lay.cpv]
        return self.step_type(out, lay)
