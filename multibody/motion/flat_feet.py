"""A marker fit whose feet rest flat on the floor: sole points as soft markers, foot marker
offsets recalibrated to a fixed point.

Why: a foot segment carries few markers (the HDM set: one heel marker on the foot, two on the
toes, the ankle marker on the shank), so a bias of a few millimetres in their offsets turns
the fitted foot by many degrees about the ankle; fitted with such offsets, a resting foot
stands rolled or pitched on the floor (13-20 deg on the HDM walk, its sole corners 3-5 cm
apart in height), which no rigid foot on a rigid floor can reproduce.
:func:`~multibody.motion.foot_calibration.flat_stance_offsets` corrects the offsets in one
pass, segment by segment: it turns each resting segment flat about its own joint at the
place the tilted fit gives it, so the toes' offsets keep the foot's tilt (the toe joint sits
where the pitched foot carries it) and the refit stays tilted.

:func:`fit_flat_feet` instead fits the whole chain with the sole in the cost. For every
contact segment ``b`` and contact point ``c_j`` (body frame) a *sole marker* is added to the
marker set, with the target ``s_jk = P_floor(c_j(q_k))`` (the point's current place
projected onto the floor) in the frames ``k`` where the segment rests (all its points slower
than ``speed_threshold``) and no target (occluded) elsewhere; the per-frame fit
(:class:`~multibody.motion.marker_fit.MarkerFitter`) then minimises

.. math::

    \\sum_i w_i^2 \\lVert p_i(q_k) - m_{ik} \\rVert^2 + w_s^2 \\sum_{j \\in \\text{rest}_k}
    \\lVert c_j(q_k) - s_{jk} \\rVert^2 + \\text{prior},

and the offsets of the markers on the contact segments are recalibrated on the result,
``o_i = mean_k R_k^T (m_ik - p_k)`` over the frames where marker ``i`` is visible (the
offset a rigid segment in that pose implies). Targets, resting frames, offsets and fit
alternate until the offsets move less than ``tolerance``: at the fixed point the feet's
markers agree with a flat resting sole as well as constant offsets allow.

Measured on the HDM walk (scaled model, ``examples/human_walking.py`` run's flat-stance
offsets as the start; ``sole_weight=3``, ``hold=True``, 5 refits, 8 s): resting feet and toes
1.2-1.6 deg from flat (13-23 deg before; ``flat_stance_offsets`` iterated three more times:
still 8-24 deg), sole corners 1-3 mm apart in height (29-52 mm), real markers 5.76 mm RMS
(5.28). The sole term must stay in the fit: refitted without it, with the recalibrated
offsets, the feet tilt back to 16-24 deg and the markers fit 1 mm closer (4.73 mm) -- the
markers that pull are the shank, knee and pelvis ones (LSHN 3.3 -> 8.4 mm with flat feet),
not the feet's: on this floor the fitted leg cannot put a flat foot where the leg markers
are (lowering the floor 1-3 cm makes it worse: 6.05-8.30 mm). Outside the resting frames such a fit still
drives the landing heels and the toes through the floor (lowest point per frame a median
13 mm below it, 36 mm at worst); ``lift=True`` pulls those points out too (2.4 mm, 11 mm at
worst; markers 6.79 mm, 23 s). Passed on to :class:`~multibody.motion.ConsistentMotion` as
markers (``sole_markers``, ``sole_targets``, weight 10) with a 0-1 cm contact band and
loaded points pulled onto the floor, the feet stay flat (1.5-2.3 deg), the loaded points on
the floor (median 0.3 mm) and the centre of pressure inside the support in every frame
(with points in the floor and sliding loaded points penalised, ``penetration_scale`` 2 mm,
``slip_speed_scale`` 3 cm/s: pelvis residual 0.24 N, markers 10.7 mm, feet 0.6-1.1 deg from
flat, sole points sliding 7 mm/s at rest). The forward pass
(:class:`~multibody.motion.forward_pass.ForwardPass`, points placed at their lowest loaded
height, pelvis feedback 1) on that reference still falls: it tracks to 2 cm through the
first single stance (0.46 s), then the swing foot, 14 mm above the floor in mid-swing (18
in the reference), catches the floor before the heel strike and sticks (13 cm behind at
0.53 s): down at 0.70 s in every perturbed run. With ``mu=0.3`` the catching foot slides and
the body stays up over both strides: markers 109 mm RMS (median of 8 runs, 94-315), joints
0.47 deg, 17.5x real time, pelvis within 10 cm for 1.43 s, drifting sideways with the
sliding feet.

References
----------
T.-W. Lu, J. J. O'Connor, "Bone position estimation from skin marker co-ordinates using
global optimisation with joint constraints", J. Biomech. 32, 1999 (the whole chain fitted at
once). A. Seth et al., "OpenSim: Simulating musculoskeletal dynamics and neuromuscular control
to study human and animal movement", PLoS Comput. Biol. 14, 2018 (inverse kinematics with
weighted virtual markers).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

import numpy as np

from .contact_inverse_dynamics import Floor
from .errors import MarkerFitError, MarkerSetError, TrajectoryError
from .marker_fit import MarkerFitResult, MarkerFitter

__all__ = ["FlatFeetFit", "fit_flat_feet", "resting_frames", "sole_geometry", "sole_targets"]


def _points(contact_points: Mapping) -> list:
    """``[(body, (3,) point), ...]`` in the order of ``contact_points``."""
    return [(b, np.asarray(p, float).ravel()) for b, pts in contact_points.items()
            for p in np.asarray(pts, float).reshape(-1, 3)]


def _check_contacts(tree, contact_points: Any, who: str) -> None:
    """Raise :class:`MarkerSetError` unless ``contact_points`` maps bodies of ``tree`` to
    finite points of 3 coordinates."""
    if not isinstance(contact_points, Mapping):
        raise MarkerSetError(f"{who}: contact_points must be a dict {{body: [(3,) point, ...]}}"
                             f", got {type(contact_points).__name__}")
    names = {b.name for b in tree.bodies}
    for b, pts in contact_points.items():
        if b not in names:
            raise MarkerSetError(f"{who}: contact body {b!r} is not a body of the tree")
        P = np.asarray(pts, float)
        if P.size == 0 or P.shape[-1] != 3 or P.ndim > 2 or not np.all(np.isfinite(P)):
            raise MarkerSetError(f"{who}: the contact points of {b!r} must be finite points of "
                                 f"3 coordinates, (P, 3), got shape {P.shape}")


def _check_q(tree, q: Any, who: str) -> np.ndarray:
    """``q`` as a finite (T, nq) array, or :class:`TrajectoryError`."""
    Q = np.atleast_2d(np.asarray(q, float))
    if Q.ndim != 2 or Q.shape[1] != tree.nq or Q.shape[0] == 0:
        raise TrajectoryError(f"{who}: q must have shape (T, nq) = (T, {tree.nq}), got "
                              f"{np.shape(q)}")
    if not np.all(np.isfinite(Q)):
        bad = ~np.isfinite(Q).all(axis=1)
        raise TrajectoryError(f"{who}: q is not finite at frame {int(np.argmax(bad))}")
    return Q


def _check_t(t: Any, T: int, who: str) -> np.ndarray:
    """``t`` as ``T`` finite, strictly increasing times, or :class:`TrajectoryError`."""
    t = np.asarray(t, float).ravel()
    if t.shape != (T,) or not np.all(np.isfinite(t)):
        raise TrajectoryError(f"{who}: t must be {T} finite times (one per frame of q), got "
                              f"shape {t.shape}")
    h = np.diff(t)
    if np.any(h <= 0):
        raise TrajectoryError(f"{who}: t must increase strictly (frame "
                              f"{int(np.argmax(h <= 0)) + 1})")
    return t


def sole_geometry(tree, contact_points: Mapping, q: Any, floor: Floor) -> dict:
    """Where the contact points of each segment are and how flat the segment lies.

    Parameters
    ----------
    tree : RigidBodyTree
    contact_points : dict
        ``{body: [(3,) point in the body frame, ...]}``.
    q : (T, nq) array_like
    floor : Floor

    Returns
    -------
    dict
        ``{body: {"world": (T, P, 3) points, "height": (T, P) heights above the floor (m),
        "spread": (T,) max - min height (m)}}``.

    Raises
    ------
    MarkerSetError
        A body of ``contact_points`` not in the tree, or points that are not (P, 3) finite.
    TrajectoryError
        ``q`` not finite or not (T, nq).
    """
    who = f"sole_geometry on tree '{tree.name}'"
    _check_contacts(tree, contact_points, who)
    Q = _check_q(tree, q, who)
    n = np.asarray(floor.normal, float)
    n = n / np.linalg.norm(n)
    p0 = np.asarray(floor.point, float)
    out = {}
    for body, pts in contact_points.items():
        P = np.asarray(pts, float).reshape(-1, 3)
        poses = np.array([np.asarray(tree.body_pose(body, qk), float) for qk in Q])
        W = poses[:, None, :3, 3] + np.einsum("kij,pj->kpi", poses[:, :3, :3], P)
        h = (W - p0) @ n
        out[body] = {"world": W, "height": h, "spread": h.max(axis=1) - h.min(axis=1)}
    return out


def resting_frames(tree, contact_points: Mapping, t: Any, q: Any, floor: Floor, *,
                   speed_threshold: float = 0.15, height_threshold: float = 0.05) -> dict:
    """Frames where each contact segment rests: all its points slower than
    ``speed_threshold`` (m/s; central differences over ``t``) and its lowest point within
    ``height_threshold`` (m) of the floor.

    Parameters
    ----------
    tree : RigidBodyTree
    contact_points : dict
        ``{body: [(3,) point in the body frame, ...]}``.
    t : (T,) array_like
        Frame times (s), strictly increasing, T >= 2.
    q : (T, nq) array_like
        The motion.
    floor : Floor
    speed_threshold : float
        Largest speed (m/s) of a resting segment's points.
    height_threshold : float
        Largest height (m) above the floor of a resting segment's lowest point.

    Returns
    -------
    dict
        ``{body: (T,) bool}``, True where the segment rests.

    Raises
    ------
    MarkerSetError
        A body of ``contact_points`` not in the tree, or points that are not (P, 3) finite.
    TrajectoryError
        ``q`` not finite or not (T, nq) with T >= 2; ``t`` not T finite, strictly increasing
        times.
    """
    who = f"resting_frames on tree '{tree.name}'"
    _check_contacts(tree, contact_points, who)
    Q = _check_q(tree, q, who)
    if Q.shape[0] < 2:
        raise TrajectoryError(f"{who}: q must hold T >= 2 frames (speeds), got {Q.shape[0]}")
    t = _check_t(t, Q.shape[0], who)
    geo = sole_geometry(tree, contact_points, Q, floor)
    out = {}
    for body, g in geo.items():
        speed = np.linalg.norm(np.gradient(g["world"], t, axis=0), axis=2).max(axis=1)
        out[body] = (speed < speed_threshold) & (g["height"].min(axis=1) < height_threshold)
    return out


def sole_targets(tree, contact_points: Mapping, q: Any, floor: Floor, rest: Mapping, *,
                 hold: bool = False, lift: bool = False) -> np.ndarray:
    """Targets of the sole markers: each contact point's place on the motion ``q`` projected
    onto the floor in the resting frames of its segment, NaN elsewhere.

    Parameters
    ----------
    tree : RigidBodyTree
    contact_points : dict
        ``{body: [(3,) point in the body frame, ...]}``.
    q : (T, nq) array_like
    floor : Floor
    rest : dict
        ``{body: (T,) bool}`` (:func:`resting_frames`).
    hold : bool
        Hold each target at the mean of its projections over every stretch of consecutive
        resting frames (the point neither tilts nor slides while the segment rests) instead
        of following the motion frame by frame.
    lift : bool
        Also give a target, its projection, to a point below the floor outside the resting
        frames (a landing heel pulled out of the floor).

    Returns
    -------
    (T, J, 3) ndarray
        ``J`` the contact points in the order of ``contact_points``.

    Raises
    ------
    MarkerSetError
        A body of ``contact_points`` not in the tree, points that are not (P, 3) finite, or
        a body missing from ``rest`` or whose ``rest`` is not (T,).
    TrajectoryError
        ``q`` not finite or not (T, nq).
    """
    who = f"sole_targets on tree '{tree.name}'"
    _check_contacts(tree, contact_points, who)
    Q = _check_q(tree, q, who)
    if not isinstance(rest, Mapping):
        raise MarkerSetError(f"{who}: rest must be a dict {{body: (T,) bool}}, got "
                             f"{type(rest).__name__}")
    for b in contact_points:
        if b not in rest or np.shape(rest[b]) != (Q.shape[0],):
            got = np.shape(rest[b]) if b in rest else "nothing"
            raise MarkerSetError(f"{who}: rest[{b!r}] must be ({Q.shape[0]},) bools (one per "
                                 f"frame of q), got {got}")
    n = np.asarray(floor.normal, float)
    n = n / np.linalg.norm(n)
    geo = sole_geometry(tree, contact_points, Q, floor)
    T = next(iter(geo.values()))["world"].shape[0] if geo else 0
    blocks = []
    for body, g in geo.items():
        on = g["world"] - g["height"][..., None] * n                # projected onto the floor
        S = np.full(on.shape, np.nan)
        r = np.asarray(rest[body], bool)
        if hold:
            edges = np.flatnonzero(np.diff(np.concatenate([[0], r.astype(int), [0]])))
            for a, b in zip(edges[::2], edges[1::2]):
                S[a:b] = on[a:b].mean(axis=0)
        else:
            S[r] = on[r]
        if lift:
            below = (g["height"] < 0) & ~r[:, None]
            S[below] = on[below]
        blocks.append(S)
    return np.concatenate(blocks, axis=1) if blocks else np.zeros((T, 0, 3))


@dataclass
class FlatFeetFit:
    """The result of :func:`fit_flat_feet`.

    Attributes
    ----------
    fitter : MarkerFitter
        The input fitter with the recalibrated offsets (real markers only).
    fit : MarkerFitResult
        The last fit with the sole markers; its ``q`` is the flat-feet motion, its errors and
        ``rms`` those of the real markers alone.
    rest : dict
        ``{body: (T,) bool}`` the resting frames (of the first fit ``q``, held throughout).
    sole_markers : list
        ``[(name, body, (3,) point)]`` the sole markers (for other fits, e.g.
        :class:`~multibody.motion.ConsistentMotion`).
    sole_targets : (T, J, 3) ndarray
        Their targets (NaN outside the resting frames).
    offset_change : list of float
        Largest offset change (m) per iteration.
    spread : dict
        ``{body: median over the resting frames of the sole's height spread (m)}``.
    """

    fitter: MarkerFitter
    fit: MarkerFitResult
    rest: dict
    sole_markers: list
    sole_targets: np.ndarray
    offset_change: list = field(default_factory=list)
    spread: dict = field(default_factory=dict)


def fit_flat_feet(fitter: MarkerFitter, contact_points: Mapping, t: Any, positions: Any,
                  floor: Floor, q: Any, *, sole_weight: float = 1.0, iterations: int = 8,
                  tolerance: float = 5e-4, speed_threshold: float = 0.15,
                  height_threshold: float = 0.05, hold: bool = False, lift: bool = False,
                  bodies: Optional[Any] = None) -> FlatFeetFit:
    """Fit a capture with its resting feet flat on the floor (module docstring).

    Parameters
    ----------
    fitter : MarkerFitter
        The calibrated fitter (its prior and preferred pose are kept).
    contact_points : dict
        ``{body: [(3,) point in the body frame, ...]}``: the soles (e.g. the model's
        ``foot_contact_points``).
    t : (T,) array_like
        Frame times (s).
    positions : (T, M, 3) array_like
        The capture in ``fitter``'s marker order (m), NaN where occluded.
    floor : Floor
    q : (T, nq) array_like
        A first fit: the resting frames (:func:`resting_frames`, held over the iterations)
        and the first targets come from it.
    sole_weight : float
        ``w_s``: the weight of a sole marker against a real one (1: alike).
    iterations : int
        At most this many refits.
    tolerance : float
        Stop when no offset moved more than this (m).
    speed_threshold, height_threshold : float
        :func:`resting_frames`.
    hold : bool
        :func:`sole_targets`: each point's target held at one place over each stretch of
        resting frames (a foot that neither tilts nor slides while it rests).
    lift : bool
        :func:`sole_targets`: points below the floor outside the resting frames pulled onto
        it (targets of the previous fit's penetrating points).
    bodies : sequence of str, optional
        Segments whose markers are recalibrated (default: the keys of ``contact_points``).

    Returns
    -------
    FlatFeetFit

    Raises
    ------
    MarkerSetError
        ``positions`` or ``q`` of the wrong shape, a non-positive weight, a body of
        ``contact_points`` not in the tree or its points not (P, 3) finite, or a body of
        ``bodies`` not in the tree.
    MarkerFitError
        ``fitter`` not a :class:`MarkerFitter`.
    TrajectoryError
        ``t`` not finite or not strictly increasing, ``q`` not finite.
    """
    if not isinstance(fitter, MarkerFitter):
        raise MarkerFitError(f"fit_flat_feet: fitter must be a MarkerFitter, got "
                             f"{type(fitter).__name__}")
    tree = fitter.tree
    t = np.asarray(t, float).ravel()
    X = np.asarray(positions, float)
    Q = np.asarray(q, float)
    M = len(fitter.marker_names)
    who = f"fit_flat_feet on tree '{tree.name}'"
    if X.shape != (t.size, M, 3) or Q.shape != (t.size, tree.nq):
        raise MarkerSetError(f"{who}: positions must be (T, M, 3) = ({t.size}, {M}, 3) and q "
                             f"(T, nq) = ({t.size}, {tree.nq}), got {X.shape} and {Q.shape}")
    if not sole_weight > 0:
        raise MarkerSetError(f"{who}: sole_weight must be > 0, got {sole_weight}")
    _check_contacts(tree, contact_points, who)
    Q = _check_q(tree, Q, who)
    t = _check_t(t, Q.shape[0], who)
    names = {b.name for b in tree.bodies}
    for b in ([] if bodies is None else bodies):
        if b not in names:
            raise MarkerSetError(f"{who}: bodies: {b!r} is not a body of the tree")
    pts = _points(contact_points)
    sole = [(f"{b}:sole{j}", b, p) for j, (b, p) in enumerate(pts)]
    J = len(sole)
    w = np.concatenate([fitter.marker_weights, np.full(J, float(sole_weight))])
    both = MarkerFitter(tree, list(zip(fitter.marker_names, fitter.marker_bodies,
                                       fitter.marker_offsets)) + sole,
                        marker_weights=w, prior_weight=fitter.prior_weight,
                        preferred_q=fitter.preferred_q, locked_joints=fitter.locked_joints,
                        min_markers=fitter.min_markers, max_iterations=fitter.max_iterations,
                        tolerance=fitter.tolerance, cost_tolerance=fitter.cost_tolerance)
    recal = set(contact_points if bodies is None else bodies)
    idx = [i for i, b in enumerate(fitter.marker_bodies) if b in recal]
    offsets = fitter.marker_offsets.copy()
    sole_off = np.array([p for _, _, p in sole])
    changes = []
    # the resting frames of the first fit, held: refits pulled flat only where they rest
    # would otherwise move faster at the edges of the rest and lose those frames
    rest = resting_frames(tree, contact_points, t, Q, floor, speed_threshold=speed_threshold,
                          height_threshold=height_threshold)
    for _ in range(int(iterations)):
        S = sole_targets(tree, contact_points, Q, floor, rest, hold=hold, lift=lift)
        run = both.with_offsets(np.vstack([offsets, sole_off]))
        res = run.fit(np.concatenate([X, S], axis=1), q0=Q[0], progress=False)
        Q = res.q
        new = offsets.copy()
        poses = {b: np.array([np.asarray(tree.body_pose(b, qk), float) for qk in Q])
                 for b in {fitter.marker_bodies[i] for i in idx}}
        for i in idx:
            T_ = poses[fitter.marker_bodies[i]]
            ok = np.all(np.isfinite(X[:, i]), axis=1) & ~res.held
            if ok.any():
                d = X[ok, i] - T_[ok, :3, 3]
                new[i] = np.einsum("kji,kj->i", T_[ok, :3, :3], d) / ok.sum()
        changes.append(float(np.abs(new - offsets).max()))
        offsets = new
        if changes[-1] < tolerance:
            break
    # the last fit with the final offsets, errors of the real markers alone
    S = sole_targets(tree, contact_points, Q, floor, rest, hold=hold, lift=lift)
    res = both.with_offsets(np.vstack([offsets, sole_off])).fit(
        np.concatenate([X, S], axis=1), q0=Q[0], progress=False)
    err = res.marker_errors[:, :M]
    with np.errstate(invalid="ignore"):
        rms = np.sqrt(np.nanmean(err ** 2, axis=1))
    fit = MarkerFitResult(res.q, err, rms, res.iterations, np.isfinite(X[..., 0]).sum(axis=1),
                          res.held, res.seconds, res.cpu_seconds)
    geo = sole_geometry(tree, contact_points, res.q, floor)
    spread = {b: float(np.median(g["spread"][rest[b]])) if rest[b].any() else float("nan")
              for b, g in geo.items()}
    return FlatFeetFit(fitter.with_offsets(offsets), fit, rest, sole, S, changes, spread)
