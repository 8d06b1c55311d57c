"""Whole-trial marker fitting with temporal smoothness: every frame's pose fitted at once, the
poses tied together by a penalty on the generalized acceleration.

:class:`SmoothMarkerFitter` takes a :class:`~multibody.motion.MarkerFitter` (its markers,
marker weights ``w_i``, joint stiffness ``Lambda`` toward ``q_pref``, limits and locked joints)
and solves, over the configurations ``q_0 ... q_{T-1}`` of a whole capture,

.. math::

    \\min_{q_0..q_{T-1}} \\sum_k \\Big[ \\sum_{i \\in \\text{visible}(k)} w_i^2
    \\lVert p_i(q_k) - m_{ik} \\rVert^2
    + \\lVert \\Lambda \\, \\ominus(q_\\text{pref}, q_k)_J \\rVert^2 \\Big]
    + \\sum_{k=1}^{T-2} \\lVert \\gamma \\odot a_k \\rVert^2,
    \\qquad
    a_k = \\frac{2}{h_{k-1} + h_k} \\Big( \\frac{\\ominus(q_k, q_{k+1})}{h_k}
    - \\frac{\\ominus(q_{k-1}, q_k)}{h_{k-1}} \\Big)

subject to the joint limits, with ``h_k = t_{k+1} - t_k`` and ``ominus`` the tree's
configuration difference (the log map on the free root, so ``a_k`` is the finite-difference
generalized acceleration in the joints' own velocity coordinates). ``gamma`` (per velocity
coordinate, m s^2/rad for angles and s^2 for lengths) says how many metres of marker error
one unit of acceleration is worth. The acceleration term is the second-difference penalty
of the Whittaker smoother (Eilers 2003) -- the discrete form of the cubic smoothing spline
used for kinematic data in biomechanics (Woltring 1986) -- applied on the configuration
manifold and fitted jointly with the markers, so a joint that the markers see poorly in one
frame is carried by its neighbours in time and a frame without markers is interpolated.

The solver is the projected Levenberg-Marquardt iteration of :class:`MarkerFitter` on all
frames together: exact Jacobians (the markers' from the fitter's compiled function, those of
the configuration differences by CasADi at ``dv = 0`` of ``ominus(q_a (+) dv_a, q_b (+)
dv_b)``), the step ``dv`` (``T nv``) solving
``(J^T J + mu diag(J^T J) + mu I) dv = -J^T r``. Ordered frame after frame, ``J^T J`` is
block-banded (blocks of ``nv``, three blocks wide: the acceleration couples ``k-1, k,
k+1``), so the step is one banded Cholesky solve, ``O(T nv^3)``. Coordinates resting on a
bound with a step pointing outward are frozen for that step, as in :class:`MarkerFitter`.
The iteration starts from the per-frame fit (:meth:`MarkerFitter.fit`) unless given a start.

References
----------
P. H. C. Eilers, "A perfect smoother", Analytical Chemistry 75(14), 2003 (the Whittaker
smoother, a second-difference penalty). H. J. Woltring, "A Fortran package for generalized,
cross-validatory spline smoothing and differentiation", Advances in Engineering Software
8(2), 1986. K. Madsen, H. B. Nielsen, O. Tingleff, "Methods for non-linear least squares
problems", IMM DTU, 2004 (Levenberg-Marquardt).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Optional

import casadi as ca
import numpy as np
from scipy.linalg import LinAlgError, solveh_banded

from solvers.compiled import CompiledFunction
from solvers.progress import ProgressLine
from .errors import MarkerFitError, MarkerSetError
from .marker_fit import MarkerFitResult, MarkerFitter

__all__ = ["SmoothMarkerFitter", "SmoothMarkerFitResult"]

_BLAS: list = []


def _one_blas_thread():
    """A context limiting BLAS to one thread (threadpoolctl): the banded solve's BLAS threads
    oversubscribe a busy machine (ten times slower on two shared cores) for no gain at this
    size. The controller is built once per process."""
    if not _BLAS:
        from threadpoolctl import ThreadpoolController
        _BLAS.append(ThreadpoolController())
    return _BLAS[0].limit(limits=1, user_api="blas")


@dataclass
class SmoothMarkerFitResult(MarkerFitResult):
    """Result of :meth:`SmoothMarkerFitter.fit`: the fields of
    :class:`~multibody.motion.MarkerFitResult` (``iterations`` holds the whole-trial
    iteration count in every frame, ``held`` is all False: no frame is held), and

    Attributes
    ----------
    cost_terms : dict
        The three sums of the cost at the solution: ``markers`` (m^2), ``prior`` and
        ``acceleration``.
    converged : bool
        The iteration stopped on its step or cost tolerance (not on ``max_iterations``).
    acceleration : (T, nv) ndarray
        The finite-difference generalized accelerations ``a_k`` (zero at the two ends).
    """

    cost_terms: dict = field(default_factory=dict)
    converged: bool = False
    acceleration: Optional[np.ndarray] = None

    @property
    def cost(self) -> float:
        """The total cost (the sum of :attr:`cost_terms`)."""
        return float(sum(self.cost_terms.values()))


class SmoothMarkerFitter:
    """Whole-trial marker fit with a generalized-acceleration penalty (module docstring).

    Parameters
    ----------
    fitter : MarkerFitter
        The markers (with their offsets), marker weights, joint stiffness ``Lambda`` toward
        ``preferred_q``, joint limits and locked joints.
    acceleration_weight : float or (nv,) array_like
        ``gamma`` (m s^2 per rad, or s^2 for a length coordinate), one for all velocity
        coordinates or one each; 0 turns the penalty off (the per-frame problems, solved
        together).
    max_iterations : int
        Levenberg-Marquardt iterations over the whole trial.
    tolerance : float
        Stop when the largest step component is below it (rad or m).
    cost_tolerance : float
        ... or when an accepted step lowers the cost by less than this fraction of it.

    Raises
    ------
    MarkerFitError
        ``fitter`` not a :class:`MarkerFitter`, or an acceleration weight that is negative,
        not finite or of the wrong size.

    Examples
    --------
    >>> smooth = SmoothMarkerFitter(fitter, acceleration_weight=1e-4)   # doctest: +SKIP
    >>> result = smooth.fit(t, positions)        # positions (T, M, 3)  # doctest: +SKIP
    >>> result.q.shape, result.rms, result.cost_terms                   # doctest: +SKIP
    """

    def __init__(self, fitter: MarkerFitter, acceleration_weight: Any, *,
                 max_iterations: int = 50, tolerance: float = 1e-9,
                 cost_tolerance: float = 1e-8) -> None:
        if not isinstance(fitter, MarkerFitter):
            raise MarkerFitError(f"SmoothMarkerFitter: fitter must be a MarkerFitter, got "
                                 f"{type(fitter).__name__}")
        tree = fitter.tree
        gw = np.asarray(acceleration_weight, float)
        if gw.shape not in ((), (tree.nv,)) or not np.all(np.isfinite(gw)) or np.any(gw < 0):
            raise MarkerFitError(f"SmoothMarkerFitter on tree '{tree.name}': "
                                 f"acceleration_weight must be finite and >= 0, one number or "
                                 f"{tree.nv} (nv), got {acceleration_weight!r}")
        self.fitter = fitter
        self.tree = tree
        self.acceleration_weight = np.broadcast_to(gw, (tree.nv,)).copy()
        self.max_iterations = int(max_iterations)
        self.tolerance = float(tolerance)
        self.cost_tolerance = float(cost_tolerance)
        self._diff = CompiledFunction(self._build_difference())

    def _build_difference(self) -> ca.Function:
        """``d = ominus(q_a, q_b)`` and its Jacobians in the tangent steps of ``q_a``, ``q_b``."""
        tree = self.tree
        qa, qb = ca.SX.sym("qa", tree.nq), ca.SX.sym("qb", tree.nq)
        da, db = ca.SX.sym("da", tree.nv), ca.SX.sym("db", tree.nv)
        d = tree.difference(tree.integrate(qa, da, 1.0), tree.integrate(qb, db, 1.0))
        steps = ca.vertcat(da, db)
        outs = [ca.substitute(e, steps, ca.DM.zeros(2 * tree.nv))
                for e in (d, ca.jacobian(d, da), ca.jacobian(d, db))]
        return ca.Function("configuration_difference", [qa, qb], outs, ["qa", "qb"],
                           ["d", "Ja", "Jb"])

    def configuration_difference(self, qa: Any, qb: Any
                                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The configuration difference ``d = ominus(q_a, q_b)`` and its exact Jacobians in
        the tangent steps of either end, as used in the acceleration and prior terms.

        .. math::

            d = \\ominus(q_a, q_b), \\qquad
            J_a = \\frac{\\partial\\, \\ominus(q_a \\oplus \\delta_a, q_b)}
            {\\partial \\delta_a}\\Big|_0, \\qquad
            J_b = \\frac{\\partial\\, \\ominus(q_a, q_b \\oplus \\delta_b)}
            {\\partial \\delta_b}\\Big|_0

        Parameters
        ----------
        qa, qb : (nq,) array_like
            Two configurations of the tree.

        Returns
        -------
        d : (nv,) ndarray
            The velocity that carries ``q_a`` to ``q_b`` in unit time (the tree's
            ``difference``; the log map on the free root).
        Ja, Jb : (nv, nv) ndarray
            ``d d / d delta_a`` and ``d d / d delta_b`` at ``delta = 0``.

        Raises
        ------
        MarkerFitError
            ``qa`` or ``qb`` not nq finite numbers.
        """
        nq = self.tree.nq
        q = []
        for name, x in (("qa", qa), ("qb", qb)):
            x = np.asarray(x, float).ravel()
            if x.shape != (nq,) or not np.all(np.isfinite(x)):
                raise MarkerFitError(f"SmoothMarkerFitter on tree '{self.tree.name}': {name} "
                                     f"must be {nq} finite numbers (nq), got shape {x.shape}")
            q.append(x)
        d, Ja, Jb = self._diff(*q)
        return np.asarray(d, float).ravel(), np.asarray(Ja, float), np.asarray(Jb, float)

    def cost_and_gradient(self, t: Any, positions: Any, q: Any
                          ) -> tuple[dict, np.ndarray]:
        """The fit's cost (module docstring) and its exact gradient at the motion ``q``.

        Parameters
        ----------
        t : (T,) array_like
            Strictly increasing frame times (s), T >= 3.
        positions : (T, M, 3) array_like
            Measured marker positions (m), NaN for occlusions.
        q : (T, nq) array_like
            The motion.

        Returns
        -------
        terms : dict
            The three sums of the cost: ``markers`` (m^2), ``prior`` and ``acceleration``.
        gradient : (T, nv) ndarray
            ``d cost / d dv_k`` for the tangent steps ``q_k (+) dv_k`` (``2 J^T r``, the
            Gauss-Newton model's gradient, exact for the sum of squares).

        Raises
        ------
        MarkerSetError, MarkerFitError
            As :meth:`fit` (``q`` in the place of ``q0``).
        """
        t, X, h = self._check(t, positions, q)
        terms, _, g, _ = self._linearize(np.asarray(q, float), X, h)
        return terms, 2.0 * g

    # ------------------------------------------------------------------ checks
    def _check(self, t: Any, positions: Any, q0: Any):
        who = f"SmoothMarkerFitter on tree '{self.tree.name}'"
        X = np.asarray(positions, float)
        M = len(self.fitter.marker_names)
        if X.ndim != 3 or X.shape[1:] != (M, 3) or X.shape[0] < 3:
            raise MarkerSetError(f"{who}: positions must have shape (T, {M}, 3) with T >= 3 "
                                 f"(markers {self.fitter.marker_names[:3]}...), got {X.shape}")
        t = np.asarray(t, float).ravel()
        if t.shape != (X.shape[0],) or not np.all(np.isfinite(t)):
            raise MarkerFitError(f"{who}: t must be {X.shape[0]} finite times (one per frame "
                                 f"of positions), got shape {t.shape}")
        h = np.diff(t)
        if np.any(h <= 0):
            raise MarkerFitError(f"{who}: times must increase strictly (frame "
                                 f"{int(np.argmax(h <= 0)) + 1})")
        if not np.any(np.isfinite(X).all(axis=2)):
            raise MarkerFitError(f"{who}: no visible marker in any frame")
        if q0 is not None:
            Q = np.asarray(q0, float)
            if Q.shape != (X.shape[0], self.tree.nq) or not np.all(np.isfinite(Q)):
                raise MarkerFitError(f"{who}: q0 must be finite with shape ({X.shape[0]}, "
                                     f"{self.tree.nq}) (frames, nq), got {Q.shape}")
        return t, X, h

    # ------------------------------------------------------------------ the problem
    def _linearize(self, Q, X, h):
        """Cost terms, the block-banded ``J^T J`` (diagonal, first and second sub-diagonal
        blocks) and ``J^T r`` at the configurations ``Q``."""
        f = self.fitter
        T, nv = Q.shape[0], self.tree.nv
        w = f.marker_weights
        Pv, Wp = f.prior_velocity_indices, f.prior_matrix
        H0 = np.zeros((T, nv, nv))
        H1 = np.zeros((T - 1, nv, nv))          # block (k+1, k)
        H2 = np.zeros((T - 2, nv, nv))          # block (k+2, k)
        g = np.zeros((T, nv))
        c_mark = c_prior = 0.0
        for k in range(T):
            vis = np.isfinite(X[k]).all(axis=1)
            if vis.any():
                p, J = f.marker_kinematics(Q[k])
                wr = np.repeat(w[vis], 3)
                r = (p[vis] - X[k, vis]).ravel() * wr
                Jm = J[np.repeat(vis, 3)] * wr[:, None]
                H0[k] += Jm.T @ Jm
                g[k] += Jm.T @ r
                c_mark += float(r @ r)
            if Pv.size and np.any(Wp != 0):
                d, _, Jb = self._diff(f.preferred_q, Q[k])
                r = Wp @ np.asarray(d)[Pv]
                Jp = Wp @ np.asarray(Jb)[Pv]
                H0[k] += Jp.T @ Jp
                g[k] += Jp.T @ r
                c_prior += float(r @ r)
        acc = np.zeros((T, nv))
        c_acc = 0.0
        gam = self.acceleration_weight
        if np.any(gam > 0):
            D, Da, Db = (np.array(x) for x in zip(*(self._diff(Q[k], Q[k + 1])
                                                   for k in range(T - 1))))
            c = 2.0 / (h[:-1] + h[1:])                                    # (T-2,)
            acc[1:-1] = c[:, None] * (D[1:] / h[1:, None] - D[:-1] / h[:-1, None])
            r = gam * acc[1:-1]                                           # (T-2, nv)
            G = gam[None, :, None] * c[:, None, None]
            Am = -G * Da[:-1] / h[:-1, None, None]                        # d a_k / d dv_{k-1}
            A0 = G * (Da[1:] / h[1:, None, None] - Db[:-1] / h[:-1, None, None])
            Ap = G * Db[1:] / h[1:, None, None]                           # d a_k / d dv_{k+1}
            AmT, A0T, ApT = (np.swapaxes(x, 1, 2) for x in (Am, A0, Ap))
            H0[:-2] += AmT @ Am
            H0[1:-1] += A0T @ A0
            H0[2:] += ApT @ Ap
            H1[:-1] += A0T @ Am
            H1[1:] += ApT @ A0
            H2 += ApT @ Am
            g[:-2] += (AmT @ r[:, :, None])[:, :, 0]
            g[1:-1] += (A0T @ r[:, :, None])[:, :, 0]
            g[2:] += (ApT @ r[:, :, None])[:, :, 0]
            c_acc = float(np.sum(r * r))
        terms = {"markers": c_mark, "prior": c_prior, "acceleration": c_acc}
        return terms, (H0, H1, H2), g, acc

    def _band_index(self, T: int):
        """Row (``i - j``) and column (``j``) of each block entry in LAPACK's lower band."""
        nv = self.tree.nv
        a, b = np.meshgrid(np.arange(nv), np.arange(nv), indexing="ij")
        out = []
        for o in range(3):
            K = T - o
            k = np.arange(K)[:, None, None]
            i = (k + o) * nv + a[None]
            j = k * nv + b[None]
            keep = np.broadcast_to(i >= j, (K, nv, nv))
            out.append((keep, (i - j)[keep], np.broadcast_to(j, (K, nv, nv))[keep]))
        return out

    def _solve(self, blocks, g, mu, frozen, index):
        """The damped step ``dv`` (T, nv) with the ``frozen`` (T, nv) coordinates fixed."""
        T, nv = g.shape
        ab = np.zeros((3 * nv, T * nv))
        for (keep, row, col), B in zip(index, blocks):
            ab[row, col] = B[keep]
        diag = ab[0].copy()
        ab[0] += mu * (diag + 1.0)
        fz = frozen.ravel()
        rhs = -g.ravel().copy()
        if fz.any():                     # frozen rows and columns -> identity, zero step
            cols = np.flatnonzero(fz)
            ab[:, cols] = 0.0
            ab[0, cols] = 1.0
            for r in range(1, 3 * nv):
                c = cols - r
                c = c[c >= 0]
                ab[r, c] = 0.0
            rhs[fz] = 0.0
        try:
            dv = solveh_banded(ab, rhs, lower=True, check_finite=False)
        except LinAlgError:
            return None
        dv[fz] = 0.0
        return dv.reshape(T, nv)

    # ------------------------------------------------------------------ the fit
    def fit(self, t: Any, positions: Any, q0: Any = None, *,
            progress: Optional[bool] = None) -> SmoothMarkerFitResult:
        """Fit the whole capture at once.

        Parameters
        ----------
        t : (T,) array_like
            Strictly increasing frame times (s), T >= 3.
        positions : (T, M, 3) array_like
            Measured marker positions (m), markers in the fitter's order, NaN for
            occlusions (a frame may have none: the acceleration penalty carries it).
        q0 : (T, nq) array_like, optional
            Starting motion (default: the fitter's per-frame fit, :meth:`MarkerFitter.fit`).
        progress : bool, optional
            Show a progress line (default: when stderr is a terminal).

        Returns
        -------
        SmoothMarkerFitResult

        Raises
        ------
        MarkerSetError
            ``positions`` of the wrong shape.
        MarkerFitError
            Times not strictly increasing or not one per frame, no visible marker at all, a
            ``q0`` of the wrong shape; or the per-frame start's own errors.
        """
        t, X, h = self._check(t, positions, q0)
        f = self.fitter
        t0, c0 = time.perf_counter(), time.process_time()
        if q0 is None:
            Q = f.fit(X, progress=progress).q.copy()
        else:
            Q = np.array([f.clamp(q) for q in np.asarray(q0, float)])
        T, nv = Q.shape[0], self.tree.nv
        lim_q, lim_v = f.limited_coordinates
        lo, hi = (np.asarray(b, float) for b in self.tree.position_limits())
        locked = np.ones(nv, bool)
        locked[f.free_velocity_indices] = False
        index = self._band_index(T)
        terms, blocks, g, acc = self._linearize(Q, X, h)
        cost = sum(terms.values())
        mu, nu = 1e-6, 2.0
        converged = False
        iters = 0
        bar = ProgressLine(self.max_iterations, "smooth marker fit", enabled=progress,
                           delay=0.5, note_format="{:.0f} iterations")
        for iters in range(1, self.max_iterations + 1):
            frozen = np.broadcast_to(locked, (T, nv)).copy()
            for _ in range(3):                          # active set of the bounds
                with _one_blas_thread():
                    dv = self._solve(blocks, g, mu, frozen, index)
                if dv is None or not lim_q.size:
                    break
                ql = Q[:, lim_q]
                out = ((ql <= lo[lim_q] + 1e-12) & (dv[:, lim_v] < 0)) | \
                      ((ql >= hi[lim_q] - 1e-12) & (dv[:, lim_v] > 0))
                if not out.any():
                    break
                frozen[:, lim_v] |= out
            if dv is None:
                mu, nu = mu * nu, 2.0 * nu
                if mu > 1e8:
                    break
                continue
            step = float(np.max(np.abs(dv)))
            # predicted decrease of the Gauss-Newton model: (H + mu M) dv = -g
            fz = frozen.ravel()
            dvf, gf = dv.ravel(), g.ravel()
            Mdiag = np.diagonal(blocks[0], axis1=1, axis2=2).ravel() + 1.0
            predicted = -0.5 * (dvf @ gf) + 0.5 * mu * float(np.sum(Mdiag[~fz] * dvf[~fz] ** 2))
            if predicted <= 1e-15 * cost + 1e-30:
                converged = True
                break
            Qn = np.array([f.clamp(np.asarray(self.tree.integrate(q, d, 1.0), float).ravel())
                           for q, d in zip(Q, dv)])
            terms_n, blocks_n, g_n, acc_n = self._linearize(Qn, X, h)
            cost_n = sum(terms_n.values())
            if cost_n <= cost:
                small = cost - cost_n <= self.cost_tolerance * cost
                Q, cost, terms, blocks, g, acc = Qn, cost_n, terms_n, blocks_n, g_n, acc_n
                mu, nu = max(mu / 3.0, 1e-9), 2.0
                if step < self.tolerance or small:
                    converged = True
                    break
            else:
                mu, nu = mu * nu, 2.0 * nu
                if step < self.tolerance:
                    converged = True
                    break
                if mu > 1e8:
                    break
            bar.update(iters)
        bar.close()
        seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
        vis = np.isfinite(X).all(axis=2)
        errs = np.full(vis.shape, np.nan)
        for k in range(T):
            if vis[k].any():
                p = f.marker_positions(Q[k])
                errs[k, vis[k]] = np.linalg.norm(p[vis[k]] - X[k, vis[k]], axis=1)
        n_vis = vis.sum(axis=1)
        rms = np.full(T, np.nan)
        rms[n_vis > 0] = np.sqrt(np.nansum(errs ** 2, axis=1)[n_vis > 0] / n_vis[n_vis > 0])
        return SmoothMarkerFitResult(Q, errs, rms, np.full(T, iters), n_vis,
                                     np.zeros(T, bool), seconds, cpu, cost_terms=terms,
                                     converged=converged, acceleration=acc)
