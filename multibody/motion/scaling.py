"""Scaling a skeleton model to a subject: segment sizes, marker offsets and poses in one fit.

:func:`fit_segment_scales` estimates one scale factor ``s_n`` per segment ``n`` of a
:class:`~multibody.models.HumanModel` (isotropic: every point fixed on the segment, its
joint anchors, markers and centre of mass, moves as ``x -> s_n x`` in the body frame, so the
bone vectors between the joint centres scale by ``s_n``), together with the marker offsets
and the poses of a set of frames (a static pose, or frames sampled over the whole trial).
With ``o_i^0`` the nominal offset of marker ``i`` on segment ``b_i`` and ``d_i`` its
correction, the model marker is ``p_i(q, s, d) = X_{W,b_i}(q, s) (s_{b_i} o_i^0 + d_i)``,
where a joint's origin in its parent segment ``P`` is scaled by ``s_P``. The fit solves

.. math::

    \\min_{q_k, s, d} \\; \\sum_k \\sum_{i \\in V_k} w_i^2 \\lVert p_i(q_k, s, d) - m_{ik}
    \\rVert^2 + \\lambda_q^2 \\sum_k \\lVert \\ominus(q_\\text{ref}, q_k)_J \\rVert^2
    + \\lambda_s^2 \\lVert s - 1 \\rVert^2 + \\lambda_d^2 \\lVert d \\rVert^2

(``V_k`` the visible markers of frame ``k``; ``lambda_s`` in metres per unit of scale,
``lambda_d`` dimensionless: the mild priors keeping the scales near 1 and the offsets near
their nominal placement on the scaled segment) subject to the joint limits and
``s_lo <= s <= s_hi``, by projected Levenberg-Marquardt (Madsen et al. 2004) with exact
derivatives: one CasADi function, compiled to C, gives the marker positions and their
Jacobians with respect to the joint velocity coordinates (tangent space of ``q``), the
scales and the offsets; the per-frame pose blocks of the normal equations are eliminated
by their Schur complement (bundle adjustment's reduced camera system, Triggs et al. 2000),
so a step costs one small solve per frame and one of size ``#scales + 3 #markers``.

Priors: the default ``lambda_s = 0.05`` m (a 10 % change of a scale costs as much as 5 mm of
error on one marker in one frame) keeps the scales that the markers barely see (the spine
during a walk) near 1 on real captures, where the rigid shapes do not match the subject;
along well-seen scales it biases the result by about ``lambda_s^2 / c`` of the departure
from 1 (``c`` the data's curvature along that scale), so on exact synthetic data a weaker
prior (``1e-3``) recovers the lengths to a small fraction of a millimetre (the tests).

Identifiability: a segment with fewer than three markers cannot fix its own rotation
against free offsets (the markers' offsets follow any rotation about the joint); for the
feet that rotation decides where the contact points meet the floor, so the markers on the
contact segments keep their nominal placement by default (``fixed_offsets``). Over a
moving trial the joint centres, hence the bone lengths, are
determined by the markers whatever their offsets; from a static pose they are not (each
marker's own offset could absorb any length), so fit a static pose with
``fit_offsets=False`` (the scales then follow the nominal marker placements). A segment
with no marker on it or below it cannot be seen and takes its parent segment's scale.
After the fit the skeleton is rebuilt with the scaled dimensions
(:meth:`HumanModel.scaled`): masses are the scaled shapes' volumes times the densities
(``s^3``), inertias those of the scaled shapes (``s^5``), and the model exports as URDF
(:meth:`ScalingResult.write_urdf`).

References
----------
K. Madsen, H. B. Nielsen, O. Tingleff, "Methods for non-linear least squares problems",
IMM DTU, 2004. B. Triggs, P. McLauchlan, R. Hartley, A. Fitzgibbon, "Bundle adjustment -- a
modern synthesis", Vision Algorithms 2000 (the Schur complement). K. Werling et al.,
"AddBiomechanics: automating model scaling, inverse kinematics, and inverse dynamics from
human motion data through sequential optimization", PLoS ONE 2023 (scales, marker offsets
and poses fitted together).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import casadi as ca
import numpy as np

from solvers.compiled import CompiledFunction
from .errors import ScalingError
from .marker_fit import MarkerFitter
from .marker_set import marker_set_arrays, marker_weight_array
from ._scaling_problem import ScalingProblem

__all__ = ["ScalingError", "ScalingResult", "fit_segment_scales", "bone_lengths",
           "scaled_marker_kinematics"]


def bone_lengths(tree) -> dict:
    """Lengths of the bone vectors of a tree: ``{"parent->child": |t_j|}`` for every joint
    ``j`` between two bodies, ``t_j`` the joint origin's translation in the parent body frame
    (for a skeleton model: from the parent segment's proximal joint centre, or the root's
    centre, to the joint centre) (m)."""
    return {f"{j.parent}->{j.child}": float(np.linalg.norm(np.asarray(j.origin)[:3, 3]))
            for j in tree.joints if j.parent != "world"}


@dataclass
class ScalingResult:
    """Result of :func:`fit_segment_scales` (K fitted frames, M markers).

    Attributes
    ----------
    segment_scale : dict
        ``{segment: s_n}`` for every segment of the model (isotropic factor, relative to the
        model passed in); unseen segments carry their parent's factor.
    model : HumanModel
        The scaled model, its markers at the calibrated offsets.
    marker_offsets : (M, 3) ndarray
        Calibrated marker positions in the scaled body frames (m): ``s_b o^0 + d``.
    offset_corrections : (M, 3) ndarray
        ``d``: the offsets' departure from their nominal place on the scaled segment (m).
    q : (K, nq) ndarray
        Poses of the fitted frames on the scaled model.
    frames : (K,) ndarray of int
        Indices of the fitted frames in the capture.
    marker_errors : (K, M) ndarray
        Distances between model and measured markers after the fit (m); NaN where occluded.
    marker_rms : float
        RMS of ``marker_errors`` over the visible markers (m).
    marker_rms_initial : float
        The same on the nominal model with the nominal offsets, each frame fitted alone (m).
    fitted_segments : list of str
        The segments whose scale was estimated (the others inherit their parent's).
    iterations : int
        Levenberg-Marquardt iterations.
    converged : bool
        Whether the step or the cost decrease fell under its tolerance.
    seconds : float
        Wall time of the joint fit, the initial per-frame fits included.
    cost_history : list of float
        The cost after each accepted step (the first entry: the start).
    """

    segment_scale: dict
    model: Any
    marker_offsets: np.ndarray
    offset_corrections: np.ndarray
    q: np.ndarray
    frames: np.ndarray
    marker_errors: np.ndarray
    marker_rms: float
    marker_rms_initial: float
    fitted_segments: list
    iterations: int
    converged: bool
    seconds: float
    cost_history: list = field(default_factory=list)

    @property
    def markers(self) -> list:
        """The calibrated markers ``(name, body, offset)`` of the scaled model."""
        return list(self.model.markers)

    def bone_lengths(self) -> dict:
        """:func:`bone_lengths` of the scaled model's tree (m)."""
        return bone_lengths(self.model.tree)

    def write_urdf(self, path=None) -> str:
        """URDF of the scaled model (:meth:`HumanModel.write_urdf`)."""
        return self.model.write_urdf(path)

    def report(self) -> dict:
        """JSON-ready summary: ``segment_scale`` ({segment: factor}, isotropic per segment)
        and ``scaling`` (marker RMS before and after in metres, frames, iterations, mass and
        height before and after)."""
        return {"segment_scale": {k: float(v) for k, v in self.segment_scale.items()},
                "scaling": {"kind": "isotropic per segment (all dimensions of a segment times "
                                    "its factor; mass times factor^3)",
                            "marker_rms_before_m": float(self.marker_rms_initial),
                            "marker_rms_after_m": float(self.marker_rms),
                            "frames": [int(k) for k in self.frames],
                            "fitted_segments": list(self.fitted_segments),
                            "iterations": int(self.iterations),
                            "converged": bool(self.converged),
                            "seconds": float(self.seconds),
                            "mass_kg": float(self.model.mass),
                            "height_m": float(self.model.height),
                            "max_offset_correction_m": float(np.max(np.linalg.norm(
                                self.offset_corrections, axis=1), initial=0.0))}}


# ---------------------------------------------------------------------- kinematics
def _skew(w):
    return ca.vertcat(ca.horzcat(0, -w[2], w[1]), ca.horzcat(w[2], 0, -w[0]),
                      ca.horzcat(-w[1], w[0], 0))


def scaled_marker_kinematics(tree, markers: Sequence, segments: Sequence) -> ca.Function:
    """Marker positions of a tree with scaled segments, and their exact derivatives.

    Marker ``i`` (offset ``o_i^0`` on body ``b_i``) is at ``p_i = X_{W,b_i}(q, s) (s_{b_i}
    o_i^0 + d_i)``; a joint's origin translation in its parent body ``P`` is multiplied by
    ``s_P`` (bodies not in ``segments`` keep scale 1). The tangent derivative ``J_v`` is taken
    through a first-order motion ``xi`` of every joint in its child frame,
    ``X_J(q) (1 + [S(q) xi]^)`` at ``xi = 0``, ``S`` the joint's motion subspace (the tree's
    ``integrate`` moves ``q`` the same way to first order).

    Parameters
    ----------
    tree : RigidBodyTree
    markers : sequence of (name, body, offset)
        Nominal markers (:func:`~multibody.motion.marker_set_arrays`).
    segments : sequence of str or of tuples of str
        The scaled bodies, in the order of ``s``; a tuple's bodies share one scale.

    Returns
    -------
    casadi.Function
        ``(q (nq,), s (S,), d (3M,)) -> (p (3M,), J_v (3M, nv), J_s (3M, S), J_d (3M, 3M))``.
    """
    _, bodies, offsets0 = marker_set_arrays(tree, markers, "scaled_marker_kinematics")
    col = {n: k for k, e in enumerate(segments) for n in ((e,) if isinstance(e, str) else e)}
    unknown = [n for n in col if n not in {b.name for b in tree.bodies}]
    if unknown:
        raise ScalingError(f"scaled_marker_kinematics: {unknown} are not bodies of tree "
                           f"'{tree.name}'")
    nq, nv, M = tree.nq, tree.nv, len(bodies)
    q, xi = ca.SX.sym("q", nq), ca.SX.sym("xi", nv)
    s, d = ca.SX.sym("s", len(segments)), ca.SX.sym("d", 3 * M)
    by_child = {j.child: j for j in tree.joints}
    poses = {"world": ca.SX.eye(4)}

    def scale(body):
        return s[col[body]] if body in col else 1.0

    def world(body):
        if body not in poses:
            j = by_child[body]
            O = np.asarray(j.origin, float)
            Oj = ca.vertcat(ca.horzcat(ca.SX(O[:3, :3]), ca.SX(O[:3, 3]) * scale(j.parent)),
                            ca.SX(O[3:4, :]))
            qj = q[j.q_start:j.q_start + j.nq]
            X = ca.SX(j.joint_transform(qj))
            if j.nv:
                tw = ca.mtimes(ca.SX(j.motion_subspace(qj)), xi[j.v_start:j.v_start + j.nv])
                E = ca.vertcat(ca.horzcat(ca.SX.eye(3) + _skew(tw[0:3]), tw[3:6]),
                               ca.SX([[0, 0, 0, 1]]))
                X = ca.mtimes(X, E)
            poses[body] = ca.mtimes(ca.mtimes(world(j.parent), Oj), X)
        return poses[body]

    P = []
    for i, b in enumerate(bodies):
        T = world(b)
        x = scale(b) * ca.SX(offsets0[i]) + d[3 * i:3 * i + 3]
        P.append(ca.mtimes(T[0:3, 0:3], x) + T[0:3, 3])
    P = ca.vertcat(*P)
    zero = ca.SX.zeros(nv)
    p0 = ca.substitute(P, xi, zero)
    Jv = ca.substitute(ca.jacobian(P, xi), xi, zero)
    return ca.Function("scaled_marker_kinematics", [q, s, d],
                       [p0, Jv, ca.jacobian(p0, s), ca.jacobian(p0, d)],
                       ["q", "s", "d"], ["p", "J_v", "J_s", "J_d"])


def _observed_segments(tree, bodies: list, candidates: list) -> list:
    """Candidates whose subtree (the segment and its descendants) carries a marker."""
    children: dict = {}
    for j in tree.joints:
        children.setdefault(j.parent, []).append(j.child)
    seen = set(bodies)

    def carries(b):
        return b in seen or any(carries(c) for c in children.get(b, ()))

    return [n for n in candidates if carries(n)]


# ---------------------------------------------------------------------- the fit
def _pairs(names: list) -> list:
    """Right/left pairs (``r...``/``l...``) as tuples sharing a scale; the others alone."""
    out, done = [], set()
    for n in names:
        if n in done:
            continue
        twin = ({"r": "l", "l": "r"}.get(n[:1], "") + n[1:]) if n[:1] in "rl" else None
        if twin and twin != n and twin in names:
            out.append((n, twin))
            done.update((n, twin))
        else:
            out.append(n)
            done.add(n)
    return out


def _default_frames(vis_count: np.ndarray, min_markers: int, n: int) -> np.ndarray:
    ok = np.flatnonzero(vis_count >= min_markers)
    if ok.size <= n:
        return ok
    return ok[np.unique(np.linspace(0, ok.size - 1, n).round().astype(int))]


def fit_segment_scales(model, positions: Any, frames: Optional[Sequence[int]] = None, *,
                       fit_scales: bool = True, fit_offsets: bool = True,
                       segments: Optional[Sequence[str]] = None, symmetric: bool = False,
                       fixed_offsets: Optional[Sequence[str]] = None,
                       scale_prior: float = 0.05,
                       offset_prior: float = 0.05, pose_prior: float = 1e-3,
                       scale_bounds: tuple = (0.5, 2.0), marker_weights: Any = None,
                       mass: Optional[float] = None, max_frames: int = 30,
                       min_markers: int = 6, max_iterations: int = 100,
                       tolerance: float = 1e-10, cost_tolerance: float = 1e-6
                       ) -> ScalingResult:
    """Fit segment scales, marker offsets and frame poses to a capture (module docstring).

    Parameters
    ----------
    model : HumanModel
        The nominal model (:func:`multibody.models.human_model`) with its markers.
    positions : (T, M, 3) array_like
        Measured marker positions (m) in ``model.markers`` order, NaN where occluded
        (a static pose: ``T = 1`` or a few frames of it).
    frames : sequence of int, optional
        Frames of ``positions`` to fit (default: ``max_frames`` evenly spaced frames with at
        least ``min_markers`` visible markers).
    fit_scales, fit_offsets : bool
        Estimate the scales / the offset corrections ``d`` (``fit_scales=False``: the
        offsets-only calibration; ``fit_offsets=False``: for a static pose).
    segments : sequence of str, optional
        Segments to scale (default all); those without a marker on or below them are left
        out and take their parent's scale.
    symmetric : bool
        One scale for each right/left pair of segments (names differing only in a leading
        ``r``/``l``, such as ``ru-leg`` and ``lu-leg``).
    fixed_offsets : sequence of str, optional
        Segments whose markers keep their nominal placement on the scaled segment (``d_i =
        0``). Default: the segments carrying foot contact points
        (``model.foot_contact_points``). A foot carries one marker (the heel) and its toes
        two: with free offsets the foot's pitch about the ankle is not identifiable (the
        heel offset follows any pitch), and on the HDM walking trial the fit pitched the
        feet about 30 deg toe-up, so the forefoot never reached the floor in stance and the
        contact inverse dynamics lost its ground force around toe-off (pelvis residual
        48.8 N RMS against 5.1 N with the foot offsets held). Pass ``()`` to fit every offset.
    scale_prior : float
        ``lambda_s`` (m per unit of scale, >= 0).
    offset_prior : float
        ``lambda_d`` (>= 0; in frames' worth of marker error per metre of correction).
    pose_prior : float
        ``lambda_q`` (m/rad, >= 0): pull of the joint coordinates to the reference pose.
    scale_bounds : (float, float)
        ``(s_lo, s_hi)``, ``0 < s_lo < 1 < s_hi``.
    marker_weights : (M,) array_like, optional
        ``w_i`` (default 1).
    mass : float, optional
        Total mass of the scaled model (kg); default: the densities times the scaled volumes.
    max_frames, min_markers, max_iterations : int
    tolerance : float
        Stop when the largest step component is below it.
    cost_tolerance : float
        ... or when an accepted step lowers the cost by less than this fraction of it.

    Returns
    -------
    ScalingResult
        ``segment_scale``, the scaled ``model`` with calibrated markers, ``marker_rms``
        before (``marker_rms_initial``) and after, the frame poses; ``report()`` for JSON.

    Raises
    ------
    ScalingError
        ``positions`` of the wrong shape, an unknown segment, a frame out of range, bad
        priors, bounds or weights, an unknown segment in ``fixed_offsets``, or fewer than
        ``min_markers`` visible markers in a frame.

    Examples
    --------
    >>> model = human_model("cooper-skeleton.txt", "cooper-markers.txt")  # doctest: +SKIP
    >>> res = fit_segment_scales(model, X)            # X (T, M, 3), metres # doctest: +SKIP
    >>> res.segment_scale["ru-leg"], res.marker_rms                         # doctest: +SKIP
    >>> res.write_urdf("scaled.urdf")                                       # doctest: +SKIP
    """
    t0 = time.perf_counter()
    tree = model.tree
    who = "fit_segment_scales"
    names, bodies, offsets0 = marker_set_arrays(tree, model.markers, who)
    if any(b != m[1] for b, m in zip(bodies, model.markers)):
        raise ScalingError(f"{who}: markers must be fixed on segments, not frames "
                           f"({[m[1] for m, b in zip(model.markers, bodies) if b != m[1]]})")
    X = np.asarray(positions, float)
    M = len(names)
    if X.ndim != 3 or X.shape[1:] != (M, 3) or X.shape[0] < 1:
        raise ScalingError(f"{who}: positions must have shape (T, {M}, 3) (markers "
                           f"{names[:3]}... in model.markers order), got {X.shape}")
    for what, val in (("scale_prior", scale_prior), ("offset_prior", offset_prior),
                      ("pose_prior", pose_prior)):
        if not (np.isfinite(val) and val >= 0):
            raise ScalingError(f"{who}: {what} must be finite and >= 0, got {val!r}")
    lo_s, hi_s = (float(b) for b in scale_bounds)
    if not (0 < lo_s < 1 < hi_s < np.inf):
        raise ScalingError(f"{who}: scale_bounds must satisfy 0 < lo < 1 < hi, got "
                           f"{scale_bounds!r}")
    w = marker_weight_array(marker_weights, M, who, error=ScalingError)
    all_segments = list(model.skeleton.segments)
    chosen = all_segments if segments is None else list(segments)
    unknown = [n for n in chosen if n not in model.skeleton.segments]
    if unknown:
        raise ScalingError(f"{who}: unknown segments {unknown} (segments: "
                           f"{', '.join(all_segments)})")
    fixed = (set(getattr(model, "foot_contact_points", {}) or {}) if fixed_offsets is None
             else set(fixed_offsets))
    bad = sorted(fixed - set(model.skeleton.segments))
    if bad:
        raise ScalingError(f"{who}: fixed_offsets names unknown segments {bad} (segments: "
                           f"{', '.join(all_segments)})")
    vis_count = np.all(np.isfinite(X), axis=2).sum(axis=1)
    if frames is None:
        frames = _default_frames(vis_count, min_markers, int(max_frames))
    frames = np.asarray(frames, int).ravel()
    if frames.size == 0 or np.any(frames < 0) or np.any(frames >= X.shape[0]):
        raise ScalingError(f"{who}: frames must be indices in [0, {X.shape[0]}), got "
                           f"{frames.tolist()[:10]}")
    few = frames[vis_count[frames] < min_markers]
    if few.size:
        raise ScalingError(f"{who}: frame {int(few[0])} has {int(vis_count[few[0]])} visible "
                           f"markers, at least {min_markers} needed")
    Xf = X[frames]
    fitted = _observed_segments(tree, bodies, chosen) if fit_scales else []
    groups = _pairs(fitted) if symmetric else list(fitted)
    q_ref = model.reference_configuration()

    # start: each frame fitted alone on the nominal model
    start = MarkerFitter(tree, model.markers, preferred_q=q_ref,
                         prior_weight=max(pose_prior, 1e-3), marker_weights=w,
                         min_markers=min_markers).fit(Xf, progress=False)
    fun = CompiledFunction(scaled_marker_kinematics(tree, model.markers, groups))
    held = [i for i, b in enumerate(bodies) if b in fixed]
    prob = ScalingProblem(tree, fun, Xf, w, q_ref, pose_prior, scale_prior, offset_prior,
                    len(groups), fit_scales, fit_offsets, (lo_s, hi_s), held)
    Q = start.q.copy()
    p = np.concatenate([np.ones(len(groups)), np.zeros(3 * M)])
    cost, *lin = prob.evaluate(Q, p)
    history = [cost]
    mu, nu, converged, it = 1e-6, 2.0, False, 0
    for it in range(1, int(max_iterations) + 1):
        dv, dp, pred = prob.step(Q, p, lin, mu)
        if pred <= 1e-15 * cost + 1e-30:
            converged = True
            break
        Qn, pn = prob.move(Q, p, dv, dp)
        cost_n, *lin_n = prob.evaluate(Qn, pn)
        size = max(float(np.max(np.abs(np.concatenate(dv)))), float(np.max(np.abs(dp),
                                                                             initial=0.0)))
        if cost_n <= cost:
            small = cost - cost_n <= cost_tolerance * cost
            Q, p, cost, lin = Qn, pn, cost_n, lin_n
            history.append(cost)
            mu, nu = max(mu / 3.0, 1e-12), 2.0
            if size < tolerance or small:
                converged = True
                break
        else:
            mu, nu = mu * nu, nu * 2.0
            if size < tolerance or mu > 1e10:
                converged = size < tolerance
                break
    # the result: scales of every segment, the scaled model with the calibrated offsets
    s, d = p[:len(groups)], p[len(groups):].reshape(M, 3)
    scale = {n: float(v) for g, v in zip(groups, s) for n in ((g,) if isinstance(g, str) else g)}
    parent = {j.child: j.parent for j in tree.joints}
    for n in all_segments:
        b = n
        while b not in scale and parent.get(b, "world") != "world":
            b = parent[b]
        scale.setdefault(n, scale.get(b, 1.0))
    offsets = np.array([scale[b] * o for b, o in zip(bodies, offsets0)]) + d
    scaled = model.scaled(scale, marker_offsets=offsets, mass=mass)
    P = np.array([np.asarray(fun(q, s, p[len(groups):])[0]).reshape(M, 3) for q in Q])
    errs = np.linalg.norm(P - Xf, axis=2)
    e = errs[np.isfinite(errs)]
    return ScalingResult(segment_scale={n: scale[n] for n in all_segments}, model=scaled,
                         marker_offsets=offsets, offset_corrections=d.copy(), q=Q,
                         frames=frames, marker_errors=errs,
                         marker_rms=float(np.sqrt(np.mean(e ** 2))),
                         marker_rms_initial=start.rms, fitted_segments=list(fitted),
                         iterations=it, converged=converged,
                         seconds=time.perf_counter() - t0, cost_history=history)
