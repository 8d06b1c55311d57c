"""Marker pose fitting (inverse kinematics from motion capture), frame by frame.

For each frame ``k`` with measured marker positions ``m_i`` (world, metres; NaN when
occluded) :class:`MarkerFitter` solves

.. math::

    \\min_q \\; \\sum_{i \\in \\text{visible}} w_i^2 \\,\\lVert p_i(q) - m_i \\rVert^2
    + \\lVert \\Lambda \\, \\ominus(q, q_\\text{pref})_J \\rVert^2
    \\quad \\text{s.t.}\\quad q_\\text{lo} \\le q \\le q_\\text{hi}

where ``p_i(q) = X_W,b_i(q) o_i`` is the world position of marker ``i`` (offset ``o_i`` on
body ``b_i``), ``ominus(q, q_pref)_J`` the tree's configuration difference restricted to the
joint coordinates (the floating base is not pulled) and ``Lambda`` the prior weight in
metres per radian (``lambda I``, a diagonal of stiffnesses per axis, or a full matrix). The
solver is a projected Levenberg-Marquardt iteration on the configuration manifold: the
residual and its exact Jacobian ``dp_i/dv`` (the linear rows of the tree's world-aligned
point Jacobians) come from one CasADi function compiled to C, the step ``dv`` solves
``(J^T J + mu diag(J^T J) + mu I) dv = -J^T r`` and the configuration moves by the tree's
exponential map ``q+ = integrate(q, dv)``; coordinates of one-DOF-per-coordinate joints with
finite limits are clamped to them, and a coordinate resting on a bound whose step points
outward is frozen for that step (an active set). Each frame starts from the previous frame's
solution (warm start), so a smooth capture needs one to three iterations per frame. The
first frame starts from the preferred pose moved rigidly onto the markers (Kabsch's
least-squares rotation, Kabsch 1976).

Occluded markers drop out of the sum; a frame with fewer than ``min_markers`` visible
markers keeps the previous pose and issues a :class:`~multibody.motion.MarkerFitWarning`.

References
----------
W. Kabsch, "A solution for the best rotation to relate two sets of vectors", Acta Cryst.
A32, 1976. K. Madsen, H. B. Nielsen, O. Tingleff, "Methods for non-linear least squares
problems", IMM DTU, 2004 (section 3.2, the Levenberg-Marquardt damping update).
"""
from __future__ import annotations

import copy
import time
from dataclasses import dataclass
from typing import Any, Optional, Sequence

import casadi as ca
import numpy as np

from solvers.compiled import CompiledFunction
from solvers.progress import ProgressLine
from .errors import MarkerFitError, MarkerSetError, warn
from .marker_set import marker_set_arrays, marker_weight_array

__all__ = ["MarkerFitter", "MarkerFitResult"]


def _kabsch(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rotation R and translation t minimising sum |R a_i + t - b_i|^2 (a, b: (n, 3))."""
    ca_, cb = a.mean(axis=0), b.mean(axis=0)
    H = (a - ca_).T @ (b - cb)
    U, _, Vt = np.linalg.svd(H)
    d = np.sign(np.linalg.det(Vt.T @ U.T)) or 1.0
    R = Vt.T @ np.diag([1.0, 1.0, d]) @ U.T
    return R, cb - R @ ca_


def _rotation_to_quaternion(R: np.ndarray) -> np.ndarray:
    """Unit quaternion [w, x, y, z] (w >= 0) of a rotation matrix (Shepperd's method)."""
    tr = np.trace(R)
    i = int(np.argmax([tr, R[0, 0], R[1, 1], R[2, 2]]))
    if i == 0:
        s = 2.0 * np.sqrt(1.0 + tr)
        q = [0.25 * s, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s]
    elif i == 1:
        s = 2.0 * np.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2])
        q = [(R[2, 1] - R[1, 2]) / s, 0.25 * s, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s]
    elif i == 2:
        s = 2.0 * np.sqrt(1.0 + R[1, 1] - R[0, 0] - R[2, 2])
        q = [(R[0, 2] - R[2, 0]) / s, (R[0, 1] + R[1, 0]) / s, 0.25 * s, (R[1, 2] + R[2, 1]) / s]
    else:
        s = 2.0 * np.sqrt(1.0 + R[2, 2] - R[0, 0] - R[1, 1])
        q = [(R[1, 0] - R[0, 1]) / s, (R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, 0.25 * s]
    q = np.array(q)
    q /= np.linalg.norm(q)
    return q if q[0] >= 0 else -q


@dataclass
class MarkerFitResult:
    """Per-frame result of :meth:`MarkerFitter.fit` (T frames, M markers).

    Attributes
    ----------
    q : (T, nq) ndarray
        Fitted configurations.
    marker_errors : (T, M) ndarray
        Distance (m) between each fitted and measured marker; NaN where occluded.
    marker_rms : (T,) ndarray
        Root-mean-square marker distance over the visible markers of each frame (m).
    iterations : (T,) ndarray of int
        Levenberg-Marquardt iterations per frame (0 for a held frame).
    visible : (T,) ndarray of int
        Number of visible markers per frame.
    held : (T,) ndarray of bool
        Frames with too few visible markers, whose pose was held from the previous frame.
    seconds : float
        Wall time of the fit (excluding building the compiled function).
    cpu_seconds : float
        Process CPU time of the fit (all threads of the process).
    """

    q: np.ndarray
    marker_errors: np.ndarray
    marker_rms: np.ndarray
    iterations: np.ndarray
    visible: np.ndarray
    held: np.ndarray
    seconds: float
    cpu_seconds: float = float("nan")

    @property
    def frames_per_second(self) -> float:
        """Frames fitted per second of wall time."""
        return len(self.q) / max(self.seconds, 1e-12)

    @property
    def rms(self) -> float:
        """RMS marker distance over all visible markers of all frames (m)."""
        e = self.marker_errors[np.isfinite(self.marker_errors)]
        return float(np.sqrt(np.mean(e ** 2))) if e.size else float("nan")


class MarkerFitter:
    """Frame-by-frame marker pose fitting on a :class:`~multibody.tree.RigidBodyTree`
    (module docstring: the cost, the projected Levenberg-Marquardt step, the warm start).

    Parameters
    ----------
    tree : RigidBodyTree
        The model, usually with a free-floating root joint.
    markers : sequence of (name, body, offset)
        Marker name, body (or frame) and position (3,) in that frame (m). Measured data
        passed to :meth:`fit` have the markers in this order.
    marker_weights : (M,) array_like, optional
        Weights ``w_i`` of the marker residuals (default 1).
    prior_weight : float, (nv,) or (nv, nv) array_like
        ``lambda`` (m/rad): the weak pull of the joint coordinates to ``preferred_q`` (one
        for all, or one per velocity coordinate: a stiffness per joint axis), or a matrix
        ``W``: the prior's residual is ``W ominus(q, q_pref)_J``, a coupled stiffness (e.g.
        ``sigma L^T`` with ``L L^T`` the inverse covariance of a Gaussian pose prior); the
        root's entries (rows and columns) are not used.
    preferred_q : (nq,) array_like, optional
        The preferred pose (default: the tree's neutral configuration clipped into the
        joint limits).
    locked_joints : sequence of str, optional
        Joints held at their ``preferred_q`` coordinates (removed from the fit).
    min_markers : int
        Fewest visible markers for a frame to be fitted (default 4).
    max_iterations : int
        Levenberg-Marquardt iterations per frame (the first frame gets ten times as many).
    tolerance : float
        Stop when the largest step component is below it (rad or m).
    cost_tolerance : float
        ... or when an accepted step lowers the cost by less than this fraction of it.

    Raises
    ------
    MarkerSetError
        A bad marker set (:func:`marker_set_arrays`) or weights of the wrong size.
    MarkerFitError
        A ``preferred_q`` of the wrong size, an unknown locked joint, a negative weight.

    Examples
    --------
    >>> fitter = MarkerFitter(tree, markers)                       # doctest: +SKIP
    >>> result = fitter.fit(positions)     # positions (T, M, 3)   # doctest: +SKIP
    >>> result.q.shape, result.rms                                 # doctest: +SKIP
    """

    def __init__(self, tree, markers: Sequence, *, marker_weights: Any = None,
                 prior_weight: float = 0.01, preferred_q: Any = None,
                 locked_joints: Optional[Sequence[str]] = None, min_markers: int = 4,
                 max_iterations: int = 20, tolerance: float = 1e-9,
                 cost_tolerance: float = 1e-6) -> None:
        who = f"MarkerFitter on tree '{tree.name}'"
        self.tree = tree.finalize()
        self.marker_names, self.marker_bodies, self.marker_offsets = \
            marker_set_arrays(tree, markers, who)
        M = len(self.marker_names)
        w = marker_weight_array(marker_weights, M, who)
        self.marker_weights = w
        pw = np.asarray(prior_weight, float)
        if pw.shape not in ((), (tree.nv,), (tree.nv, tree.nv)) or not np.all(np.isfinite(pw)) \
                or (pw.ndim < 2 and np.any(pw < 0)):
            raise MarkerFitError(f"{who}: prior_weight must be finite, one number or {tree.nv} "
                                 f"(nv) numbers >= 0, or an ({tree.nv}, {tree.nv}) matrix, got "
                                 f"shape {pw.shape}")
        self.prior_weight = float(pw) if pw.shape == () else pw.copy()
        self.min_markers = int(min_markers)
        self.max_iterations = int(max_iterations)
        self.tolerance = float(tolerance)
        self.cost_tolerance = float(cost_tolerance)
        nq, nv = tree.nq, tree.nv
        lo, hi = tree.position_limits()
        self._lo, self._hi = np.asarray(lo, float), np.asarray(hi, float)
        if preferred_q is None:
            qp = np.clip(tree.neutral_configuration(), self._lo, self._hi)
        else:
            qp = np.asarray(preferred_q, float).ravel()
            if qp.shape != (nq,) or not np.all(np.isfinite(qp)):
                raise MarkerFitError(f"{who}: preferred_q must be {nq} finite numbers (nq), got "
                                     f"shape {qp.shape}")
        self.preferred_q = qp
        joints = tree.joints
        base = [j for j in joints if j.type == "free"]
        self.root_joint = base[0] if base and base[0].parent == "world" else None
        self._prior_v = np.array([j.v_start + k for j in joints if j.type != "free"
                                  for k in range(j.nv)], dtype=int)
        # the prior's residual matrix W (rows and columns: the joints' velocity coordinates)
        self._prior_W = (pw[np.ix_(self._prior_v, self._prior_v)].copy() if pw.ndim == 2 else
                         np.diag(np.broadcast_to(pw, (nv,))[self._prior_v]))
        # coordinates that can be clamped: joints whose q and v coordinates coincide
        self._lim_q, self._lim_v = [], []
        for j in joints:
            if j.type in ("free", "ball") or j.nq != j.nv:
                continue
            for k in range(j.nq):
                if np.isfinite(self._lo[j.q_start + k]) or np.isfinite(self._hi[j.q_start + k]):
                    self._lim_q.append(j.q_start + k)
                    self._lim_v.append(j.v_start + k)
        self._lim_q = np.array(self._lim_q, int)
        self._lim_v = np.array(self._lim_v, int)
        locked_v, locked_q = [], []
        names = {j.name: j for j in joints}
        for name in (locked_joints or ()):
            if name not in names:
                raise MarkerFitError(f"{who}: locked joint {name!r} is not a joint of the tree")
            j = names[name]
            locked_v += list(range(j.v_start, j.v_start + j.nv))
            locked_q += list(range(j.q_start, j.q_start + j.nq))
        self.locked_joints = list(locked_joints or ())
        self._free_v = np.setdiff1d(np.arange(nv), locked_v)
        self._locked_q = np.array(locked_q, int)
        self._offsets_flat = self.marker_offsets.ravel().copy()
        self._fun = CompiledFunction(self._build_function())

    # ------------------------------------------------------------------ kinematics
    def _build_function(self) -> ca.Function:
        tree = self.tree
        q = ca.SX.sym("q", tree.nq)
        o = ca.SX.sym("offsets", 3 * len(self.marker_names))
        P, J = [], []
        poses = {}
        for i, body in enumerate(self.marker_bodies):
            if body not in poses:
                poses[body] = tree.body_pose(body, q)
            T = poses[body]
            oi = o[3 * i:3 * i + 3]
            P.append(T[0:3, 3] + T[0:3, 0:3] @ oi)
            J.append(tree.jacobian(body, q, oi, "world")[3:6, :])
        return ca.Function("marker_kinematics", [q, o], [ca.vertcat(*P), ca.vertcat(*J)],
                           ["q", "offsets"], ["p", "J"])

    def marker_positions(self, q: Any) -> np.ndarray:
        """World positions (M, 3) of the markers at configuration ``q`` (nq,)."""
        q = self._check_q(q, "q")
        p, _ = self._fun(q, self._offsets_flat)
        return np.asarray(p).reshape(-1, 3)

    def marker_jacobian(self, q: Any) -> np.ndarray:
        """Exact Jacobian (3M, nv) of the stacked marker positions with respect to ``v``
        (rows x, y, z of each marker in world axes)."""
        q = self._check_q(q, "q")
        _, J = self._fun(q, self._offsets_flat)
        return np.asarray(J)

    def marker_kinematics(self, q: Any) -> tuple[np.ndarray, np.ndarray]:
        """Marker positions and their exact Jacobian from one evaluation
        (:meth:`marker_positions` and :meth:`marker_jacobian` together).

        Parameters
        ----------
        q : (nq,) array_like
            The configuration.

        Returns
        -------
        p : (M, 3) ndarray
            World positions of the markers (m), in :attr:`marker_names` order.
        J : (3M, nv) ndarray
            ``d p / d dv`` for the tangent step ``q (+) dv`` (rows: marker 0's x, y, z, then
            marker 1's, ...).

        Raises
        ------
        MarkerFitError
            ``q`` not nq finite numbers.
        """
        q = self._check_q(q, "q")
        p, J = self._fun(q, self._offsets_flat)
        return np.asarray(p).reshape(-1, 3), np.asarray(J)

    @property
    def prior_velocity_indices(self) -> np.ndarray:
        """Velocity coordinates pulled to ``preferred_q`` (every joint but the free root)."""
        return self._prior_v.copy()

    @property
    def prior_matrix(self) -> np.ndarray:
        """The prior's residual matrix ``W`` on :attr:`prior_velocity_indices` (diagonal
        ``lambda`` unless ``prior_weight`` was a matrix; m/rad)."""
        return self._prior_W.copy()

    @property
    def free_velocity_indices(self) -> np.ndarray:
        """Velocity coordinates that are fitted (those of the locked joints removed)."""
        return self._free_v.copy()

    @property
    def limited_coordinates(self) -> tuple[np.ndarray, np.ndarray]:
        """Configuration and velocity indices ``(iq, iv)`` of the coordinates clamped to
        their joint limits (one-DOF-per-coordinate joints with a finite bound)."""
        return self._lim_q.copy(), self._lim_v.copy()

    def clamp(self, q: Any) -> np.ndarray:
        """``q`` (nq,) with the limited coordinates clipped to their bounds and the locked
        joints at their ``preferred_q`` coordinates (a copy)."""
        q = self._clamp(self._check_q(q, "q").copy())
        if self._locked_q.size:
            q[self._locked_q] = self.preferred_q[self._locked_q]
        return q

    def _check_q(self, q: Any, what: str) -> np.ndarray:
        q = np.asarray(q, float).ravel()
        if q.shape != (self.tree.nq,) or not np.all(np.isfinite(q)):
            raise MarkerFitError(f"MarkerFitter on tree '{self.tree.name}': {what} must be "
                                 f"{self.tree.nq} finite numbers (nq), got shape {q.shape}")
        return q

    # ------------------------------------------------------------------ one frame
    def initial_guess(self, measured: np.ndarray) -> np.ndarray:
        """The preferred pose moved rigidly (Kabsch) onto the visible markers of one frame
        (``measured`` (M, 3), NaN where occluded); the root must be a free joint for the
        rigid move, else the preferred pose is returned."""
        q = self.preferred_q.copy()
        vis = np.all(np.isfinite(measured), axis=1)
        if self.root_joint is None or vis.sum() < 3:
            return q
        j = self.root_joint
        model = self.marker_positions(q)[vis]
        R, t = _kabsch(model, measured[vis])
        T_world = np.eye(4)
        T_world[:3, :3], T_world[:3, 3] = R, t
        O = np.asarray(getattr(j, "origin", np.eye(4)), float)
        X = np.linalg.solve(O, T_world @ np.asarray(self.tree.body_pose(j.child, q), float))
        q[j.q_start:j.q_start + 4] = _rotation_to_quaternion(X[:3, :3])
        q[j.q_start + 4:j.q_start + 7] = X[:3, 3]
        return q

    def _cost(self, q, meas, rows, wr):
        p, J = self._fun(q, self._offsets_flat)
        r = (np.asarray(p)[rows] - meas) * wr
        Jm = np.asarray(J)[rows] * wr[:, None]
        if self._prior_v.size and np.any(self._prior_W != 0):
            d = np.asarray(self.tree.difference(self.preferred_q, q)).ravel()[self._prior_v]
            r = np.concatenate([r, self._prior_W @ d])
            Jp = np.zeros((self._prior_v.size, self.tree.nv))
            Jp[:, self._prior_v] = self._prior_W
            Jm = np.vstack([Jm, Jp])
        return float(r @ r), r, Jm

    def _clamp(self, q: np.ndarray) -> np.ndarray:
        if self._lim_q.size:
            q[self._lim_q] = np.clip(q[self._lim_q], self._lo[self._lim_q], self._hi[self._lim_q])
        return q

    def fit_frame(self, measured: Any, q_start: Any, max_iterations: Optional[int] = None
                  ) -> tuple[np.ndarray, int]:
        """Fit one frame.

        Parameters
        ----------
        measured : (M, 3) array_like
            Measured marker positions (m), NaN rows for occluded markers.
        q_start : (nq,) array_like
            Starting configuration (the previous frame's solution).
        max_iterations : int, optional

        Returns
        -------
        q : (nq,) ndarray
        iterations : int

        Raises
        ------
        MarkerFitError
            Fewer than ``min_markers`` visible markers, or a bad ``q_start``.
        """
        meas = np.asarray(measured, float).reshape(-1, 3)
        vis = np.all(np.isfinite(meas), axis=1)
        if vis.sum() < self.min_markers:
            raise MarkerFitError(f"MarkerFitter on tree '{self.tree.name}': {int(vis.sum())} "
                                 f"visible markers, at least {self.min_markers} needed")
        rows = np.repeat(vis, 3)
        target = meas[vis].ravel()
        wr = np.repeat(self.marker_weights[vis], 3)
        q = self._clamp(self._check_q(q_start, "q_start").copy())
        if self._locked_q.size:
            q[self._locked_q] = self.preferred_q[self._locked_q]
        cost, r, J = self._cost(q, target, rows, wr)
        mu, nu = 1e-6, 2.0
        iters = 0
        maxit = self.max_iterations if max_iterations is None else int(max_iterations)
        nv = self.tree.nv
        for iters in range(1, maxit + 1):
            g = J.T @ r
            H = J.T @ J
            free = self._free_v.copy()
            for _ in range(3):                 # active set of the bounds
                Hf = H[np.ix_(free, free)]
                A = Hf + mu * (np.diag(np.diag(Hf)) + np.eye(free.size))
                dv = np.zeros(nv)
                try:
                    dv[free] = -np.linalg.solve(A, g[free])
                except np.linalg.LinAlgError:
                    dv[free] = -np.linalg.lstsq(A, g[free], rcond=None)[0]
                if not self._lim_q.size:
                    break
                ql = q[self._lim_q]
                out = ((ql <= self._lo[self._lim_q] + 1e-12) & (dv[self._lim_v] < 0)) | \
                      ((ql >= self._hi[self._lim_q] - 1e-12) & (dv[self._lim_v] > 0))
                if not out.any():
                    break
                free = np.setdiff1d(free, self._lim_v[out])
            predicted = -(dv @ g) - 0.5 * (dv @ H @ dv)
            if predicted <= 1e-12 * cost + 1e-24:
                break                              # at a (bounded) minimum
            q_new = self._clamp(np.asarray(self.tree.integrate(q, dv, 1.0), float).ravel())
            cost_new, r_new, J_new = self._cost(q_new, target, rows, wr)
            step = float(np.max(np.abs(dv)))
            if cost_new <= cost:
                small = cost - cost_new <= self.cost_tolerance * cost
                q, cost, r, J = q_new, cost_new, r_new, J_new
                mu = max(mu / 3.0, 1e-9)
                nu = 2.0
                if step < self.tolerance or small:
                    break
            else:
                mu *= nu
                nu *= 2.0
                if step < self.tolerance or mu > 1e8:
                    break
        return q, iters

    # ------------------------------------------------------------------ calibration
    def with_offsets(self, offsets: Any) -> "MarkerFitter":
        """A fitter like this one with other marker offsets (M, 3) in the body frames (the
        compiled function is shared; this fitter is unchanged)."""
        o = np.asarray(offsets, float)
        if o.shape != self.marker_offsets.shape or not np.all(np.isfinite(o)):
            raise MarkerSetError(f"MarkerFitter on tree '{self.tree.name}': offsets must be "
                                 f"finite with shape {self.marker_offsets.shape}, got {o.shape}")
        other = copy.copy(self)
        other.marker_offsets = o.copy()
        other._offsets_flat = o.ravel().copy()
        return other

    def calibrate(self, positions: Any, frames: Any = None, *, iterations: int = 5,
                  offset_prior: float = 1.0) -> "MarkerFitter":
        """Fit the marker offsets over calibration frames (alternating with the poses).

        With the poses ``X_k = (R_k, p_k)`` of marker ``i``'s body fitted on the frames
        ``k`` where it is visible, the offset minimising
        ``sum_k |R_k o + p_k - m_ik|^2 + lambda^2 |o - o_i|^2`` is
        ``o = (sum_k R_k^T (m_ik - p_k) + lambda^2 o_i) / (K_i + lambda^2)`` (``o_i``: the
        current offset, ``lambda``: ``offset_prior``); poses and offsets alternate
        ``iterations`` times.

        Parameters
        ----------
        positions : (T, M, 3) array_like
            The capture (markers in this fitter's order).
        frames : sequence of int, optional
            Calibration frames (default: 20 evenly spaced frames).
        iterations : int
        offset_prior : float
            ``lambda`` (>= 0): the pull to the current offsets, in frames' worth.

        Returns
        -------
        MarkerFitter
            A fitter with the calibrated offsets (:meth:`with_offsets`).
        """
        X = np.asarray(positions, float)
        if frames is None:
            frames = np.unique(np.linspace(0, X.shape[0] - 1, min(20, X.shape[0])).astype(int))
        Xc = X[np.asarray(frames, int)]
        fitter = self
        q_start = None
        lam2 = float(offset_prior) ** 2
        for _ in range(int(iterations)):
            res = fitter.fit(Xc, q0=q_start, progress=False)
            q_start = res.q[0]
            new = fitter.marker_offsets.copy()
            poses = {b: [np.asarray(self.tree.body_pose(b, q), float) for q in res.q]
                     for b in set(self.marker_bodies)}
            for i, b in enumerate(self.marker_bodies):
                acc, n = lam2 * fitter.marker_offsets[i], lam2
                for k, T in enumerate(poses[b]):
                    m = Xc[k, i]
                    if np.all(np.isfinite(m)) and not res.held[k]:
                        acc = acc + T[:3, :3].T @ (m - T[:3, 3])
                        n += 1.0
                if n > 0:
                    new[i] = acc / n
            fitter = fitter.with_offsets(new)
        return fitter

    # ------------------------------------------------------------------ a trial
    def fit(self, positions: Any, q0: Any = None, *, progress: Optional[bool] = None
            ) -> MarkerFitResult:
        """Fit every frame of a capture, warm-starting each from the previous one.

        Parameters
        ----------
        positions : (T, M, 3) array_like
            Measured marker positions (m), markers in this fitter's order, NaN for
            occlusions.
        q0 : (nq,) array_like, optional
            Start of the first frame (default :meth:`initial_guess`).
        progress : bool, optional
            Show a progress bar (default: when stderr is a terminal).

        Returns
        -------
        MarkerFitResult

        Raises
        ------
        MarkerSetError
            ``positions`` of the wrong shape.
        MarkerFitError
            Too few visible markers on the first frame.
        """
        X = np.asarray(positions, float)
        M = len(self.marker_names)
        if X.ndim != 3 or X.shape[1:] != (M, 3) or X.shape[0] < 1:
            raise MarkerSetError(f"MarkerFitter on tree '{self.tree.name}': positions must have "
                                 f"shape (T, {M}, 3) (markers {self.marker_names[:3]}...), got "
                                 f"{X.shape}")
        T = X.shape[0]
        nq = self.tree.nq
        Q = np.zeros((T, nq))
        errs = np.full((T, M), np.nan)
        iters = np.zeros(T, int)
        held = np.zeros(T, bool)
        vis = np.all(np.isfinite(X), axis=2)
        bar = ProgressLine(T, "marker fit", enabled=progress, delay=0.5,
                           note_format=f"{{:.0f}}/{T} frames")
        t0, c0 = time.perf_counter(), time.process_time()
        q = None
        for k in range(T):
            if vis[k].sum() < self.min_markers:
                if q is None:
                    raise MarkerFitError(
                        f"MarkerFitter on tree '{self.tree.name}': frame 0 has "
                        f"{int(vis[k].sum())} visible markers, at least {self.min_markers} "
                        "needed to start")
                warn(f"MarkerFitter: frame {k} has {int(vis[k].sum())} visible markers "
                     f"(< {self.min_markers}); the pose of frame {k - 1} is held")
                Q[k], held[k] = q, True
            else:
                if q is None:
                    start = self.initial_guess(X[k]) if q0 is None else self._check_q(q0, "q0")
                    q, iters[k] = self.fit_frame(X[k], start, 10 * self.max_iterations)
                else:
                    q, iters[k] = self.fit_frame(X[k], q)
                Q[k] = q
            p = self.marker_positions(q)
            errs[k, vis[k]] = np.linalg.norm(p[vis[k]] - X[k, vis[k]], axis=1)
            bar.update(k + 1)
        seconds = time.perf_counter() - t0
        cpu = time.process_time() - c0
        bar.close()
        with np.errstate(invalid="ignore"):
            rms = np.sqrt(np.nanmean(errs ** 2, axis=1))
        return MarkerFitResult(Q, errs, rms, iters, vis.sum(axis=1), held, seconds, cpu)
