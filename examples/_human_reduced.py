"""Experiment (c) of ``human_walking.py``: the joint angles from a reduced marker set.

The HDM paper fits the walk again with only the head, hand and foot markers and finds the
joint angles "quite similar" to the full fit, because its dynamics and joint stiffness carry
the joints the markers no longer see. :func:`reduced_marker_experiment` fits the reduced set
(:func:`reduced_markers`) with the full fit's marker offsets and a joint stiffness toward the
subject's posture learnt from the 20 calibration frames alone (their poses fitted with every
marker): :func:`~multibody.motion.pose_prior.gaussian_pose_prior`, a Gaussian prior whose
covariance couples the joint axes the way they moved together in those 20 poses (shrunk
toward the per-axis variances by Schaefer and Strimmer's estimate), so the hands and feet say
where the hips, spine and arms are. The differences are taken over the other frames only (the
calibration frames' own poses built the prior).

What the reduced fit still borrows from the full marker set, as a subject calibration would:
the marker offsets. They come from the scaling (segment scales and offsets fitted on 30
frames with every marker) and, with flat feet (the default on a C3D), the feet's offsets
recalibrated over every frame where a foot rests. A protocol with a separate calibration
trial would take both from that trial; here they come from the same walk.
It reports the RMS joint-angle difference from
the full fit (``reduced_marker_angle_rms_deg``, root excluded) of the per-frame fit with that
prior, and next to it the same prior in the whole-trial fit with temporal smoothness
(:class:`~multibody.motion.smooth_marker_fit.SmoothMarkerFitter`,
``..._smoothed``), the per-axis stiffness alone (``..._per_axis_prior``: the prior's
shrinkage set to 1), a pull toward the standing pose (``..._standing_prior``) and a held-out
check (``..._held_out``: the prior from the first half's calibration frames, the difference
over the second half, whose poses it has not seen).
"""
from __future__ import annotations

import time

import numpy as np

from multibody.motion import MarkerFitter
from multibody.motion.pose_prior import gaussian_pose_prior
from multibody.motion.smooth_marker_fit import SmoothMarkerFitter

#: acceleration weight of the smoothed whole-trial fit (m s^2/rad: 100 rad/s^2 of joint
#: acceleration weigh as much as 1 cm of marker error)
ACCELERATION_WEIGHT = 1e-4


def joint_angle_rms_deg(tree, Qa, Qb, sl=slice(None)) -> float:
    """RMS over frames and joint coordinates (root excluded) of the angle difference (deg).

    Parameters
    ----------
    tree : RigidBodyTree
        The model; ``tree.difference(a, b)`` gives the velocity-space difference.
    Qa, Qb : ndarray, shape (frames, nq)
        The two motions.
    sl : slice, optional
        The frames compared.
    """
    d = np.array([tree.difference(a, b) for a, b in zip(Qa[sl], Qb[sl])])[:, 6:]
    return float(np.degrees(np.sqrt(np.mean(d ** 2))))


def calibration_frames(n: int) -> np.ndarray:
    """The frames ``MarkerFitter.calibrate`` uses by default: 20 evenly spaced ones."""
    return np.unique(np.linspace(0, n - 1, min(20, n)).astype(int))


def reduced_markers(model) -> list:
    """Experiment (c)'s marker subset: markers on head, hand, foot and toe segments."""
    words = ("head", "hand", "foot", "toe")
    return [m for m in model.markers if any(w in m[1] for w in words)]


def reduced_marker_experiment(model, fitter, X, t, fit, args) -> tuple[dict, np.ndarray | None]:
    """Fit the walk with the reduced marker set and compare its joint angles with the full fit.

    Parameters
    ----------
    model : HumanModel
        The (scaled) human model; ``model.markers`` in the order of ``X``'s columns.
    fitter : MarkerFitter
        The full set's fitter (its calibrated ``marker_offsets`` are reused).
    X : ndarray, shape (frames, markers, 3)
        The captured marker positions (m).
    t : ndarray, shape (frames,)
        Frame times (s).
    fit : MarkerFit
        The full set's per-frame fit (``fit.q``, shape (frames, nq)); only its calibration
        frames (:func:`calibration_frames`) enter the prior.
    args : argparse.Namespace
        ``prior_weight`` and ``reduced_prior_scale`` (``s`` of the pose prior: metres of
        marker error worth one standard deviation of the pose) of the example's command line.

    Returns
    -------
    report : dict
        ``reduced_marker_angle_rms_deg`` over the frames other than the calibration frames
        (None when the marker set has fewer than four such markers), ``..._all_frames``
        (every frame), ``..._smoothed``, ``..._per_axis_prior``, ``..._standing_prior``,
        ``..._held_out`` (the prior learnt from the calibration frames of the first half of
        the trial only, the difference over the second half; None with fewer than three
        such frames),
        ``reduced_marker_set``, ``reduced_marker_prior_shrinkage``,
        ``reduced_marker_rms_m`` and ``reduced_marker_seconds`` (per fit).
    q_reduced : ndarray, shape (frames, nq), or None
        The reduced set's motion (the per-frame fit with the coupled prior).
    """
    tree = model.tree
    names = [n for n, _, _ in model.markers]
    sub = reduced_markers(model)
    if len(sub) < 4:
        print(f"(c) skipped: {len(sub)} head/hand/foot markers in this marker set")
        return {"reduced_marker_angle_rms_deg": None}, None
    idx = [names.index(n) for n, _, _ in sub]
    Xr = X[:, idx]
    offsets = fitter.marker_offsets[idx]
    seconds = {}

    def per_frame(preferred_q, prior_weight, key):
        f = MarkerFitter(tree, sub, preferred_q=preferred_q, prior_weight=prior_weight,
                         min_markers=4).with_offsets(offsets)
        t0 = time.perf_counter()
        res = f.fit(Xr, q0=fit.q[0], progress=False)
        seconds[key] = time.perf_counter() - t0
        return f, res

    _, fit_p = per_frame(model.reference_configuration(), args.prior_weight, "standing_prior")
    # the joint stiffness toward the posture of the calibration frames (fitted with every
    # marker): coupled across axes (Gaussian, shrunk covariance), or per axis (shrinkage 1)
    cal = fit.q[calibration_frames(len(t))]
    unseen = np.setdiff1d(np.arange(len(t)), calibration_frames(len(t)))  # compared frames
    ref = model.reference_configuration()
    prior = gaussian_pose_prior(tree, cal, reference_q=ref, scale=args.reduced_prior_scale)
    axis = gaussian_pose_prior(tree, cal, reference_q=ref, scale=args.reduced_prior_scale,
                               shrinkage=1.0)
    _, fit_a = per_frame(axis.posture, axis.matrix, "per_axis_prior")
    red, fit_r = per_frame(prior.posture, prior.matrix, "coupled_prior")
    # held out: the prior from the calibration frames of the first half only, judged on the
    # frames of the second half (poses the prior has not seen; a check of the prior's reach)
    half = len(t) // 2
    early = cal[calibration_frames(len(t)) < half]
    held = None
    if len(early) >= 3:
        first = gaussian_pose_prior(tree, early, reference_q=ref, scale=args.reduced_prior_scale)
        _, fit_h = per_frame(first.posture, first.matrix, "held_out_prior")
        held = joint_angle_rms_deg(tree, fit.q, fit_h.q, unseen[unseen >= half])
    # the same prior in one whole-trial fit with an acceleration penalty (temporal smoothness)
    t0 = time.perf_counter()
    fit_s = SmoothMarkerFitter(red, ACCELERATION_WEIGHT).fit(t, Xr, q0=fit_r.q, progress=False)
    seconds["smoothed"] = time.perf_counter() - t0 + seconds["coupled_prior"]
    report = {"reduced_marker_set": [n for n, _, _ in sub],
              "reduced_marker_angle_rms_deg": joint_angle_rms_deg(tree, fit.q, fit_r.q, unseen),
              "reduced_marker_angle_rms_deg_all_frames": joint_angle_rms_deg(tree, fit.q,
                                                                             fit_r.q),
              "reduced_marker_angle_rms_deg_smoothed": joint_angle_rms_deg(tree, fit.q,
                                                                           fit_s.q, unseen),
              "reduced_marker_angle_rms_deg_per_axis_prior": joint_angle_rms_deg(tree, fit.q,
                                                                                 fit_a.q, unseen),
              "reduced_marker_angle_rms_deg_standing_prior": joint_angle_rms_deg(tree, fit.q,
                                                                                 fit_p.q, unseen),
              "reduced_marker_angle_rms_deg_held_out": held,
              "reduced_marker_prior_shrinkage": prior.shrinkage,
              "reduced_marker_acceleration_weight": ACCELERATION_WEIGHT,
              "reduced_marker_rms_m": fit_r.rms, "reduced_marker_rms_m_smoothed": fit_s.rms,
              "reduced_marker_seconds": seconds}
    print(f"(c) {len(sub)} head/hand/foot markers, joints held by a stiffness toward the "
          f"calibration posture coupled across axes (shrinkage {prior.shrinkage:.2f}): joint "
          f"angles differ from the full set by {report['reduced_marker_angle_rms_deg']:.2f} "
          f"deg RMS ({fit_r.seconds:.1f} s); whole-trial fit with temporal smoothness "
          f"{report['reduced_marker_angle_rms_deg_smoothed']:.2f} deg "
          f"({seconds['smoothed']:.1f} s); per-axis stiffness "
          f"{report['reduced_marker_angle_rms_deg_per_axis_prior']:.2f} deg; toward the "
          f"standing pose {report['reduced_marker_angle_rms_deg_standing_prior']:.2f} deg"
          + ("" if held is None else f"; prior from the first half's calibration frames, "
             f"judged on the second half: {held:.2f} deg"))
    return report, fit_r.q
