"""Experiment (c) of ``human_walking.py``: the joint angles from a reduced marker set.

The HDM paper fits the walk again with only the head, hand and foot markers and finds the
joint angles "quite similar" to the full fit, because its dynamics and joint stiffness carry
the joints the markers no longer see. :func:`reduced_marker_experiment` fits the reduced set
(:func:`reduced_markers`) with the full fit's calibrated marker offsets and a joint
stiffness toward the subject's posture (a Gaussian prior from the calibration frames, where
the offsets were calibrated with every marker), and reports the RMS joint-angle difference
from the full fit (``reduced_marker_angle_rms_deg``, root excluded), next to the same fit
pulled toward the standing pose instead.
"""
from __future__ import annotations

import numpy as np

from multibody.motion import MarkerFitter


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
        The full set's per-frame fit (``fit.q``, shape (frames, nq)).
    args : argparse.Namespace
        ``prior_weight`` and ``reduced_prior_scale`` of the example's command line.

    Returns
    -------
    report : dict
        ``reduced_marker_angle_rms_deg`` (None when the marker set has fewer than four such
        markers), ``reduced_marker_angle_rms_deg_standing_prior`` and ``reduced_marker_set``.
    q_reduced : ndarray, shape (frames, nq), or None
        The reduced set's motion.
    """
    tree = model.tree
    names = [n for n, _, _ in model.markers]
    sub = reduced_markers(model)
    if len(sub) < 4:
        print(f"(c) skipped: {len(sub)} head/hand/foot markers in this marker set")
        return {"reduced_marker_angle_rms_deg": None}, None
    idx = [names.index(n) for n, _, _ in sub]
    plain = MarkerFitter(tree, sub, preferred_q=model.reference_configuration(),
                         prior_weight=args.prior_weight, min_markers=4
                         ).with_offsets(fitter.marker_offsets[idx])
    fit_p = plain.fit(X[:, idx], q0=fit.q[0])
    # joint stiffness toward the subject's posture: a Gaussian prior from the calibration
    # frames (where the offsets were calibrated with every marker): their mean joint angles,
    # a stiffness per axis inverse to the axis's spread there (sigma_m / max(std, 1 deg),
    # sigma_m in metres of marker error per std)
    cal = fit.q[calibration_frames(len(t))]
    posture = model.reference_configuration()
    root = tree.joints[0]
    jq = np.setdiff1d(np.arange(tree.nq), np.arange(root.q_start, root.q_start + root.nq))
    posture[jq] = cal[:, jq].mean(axis=0)
    spread = np.sqrt(np.mean([np.asarray(tree.difference(posture, q)) ** 2 for q in cal],
                             axis=0))
    stiffness = args.reduced_prior_scale / np.maximum(spread, np.radians(1.0))
    red = MarkerFitter(tree, sub, preferred_q=posture, prior_weight=stiffness,
                       min_markers=4).with_offsets(fitter.marker_offsets[idx])
    fit_r = red.fit(X[:, idx], q0=fit.q[0])
    report = {"reduced_marker_set": [n for n, _, _ in sub],
              "reduced_marker_angle_rms_deg": joint_angle_rms_deg(tree, fit.q, fit_r.q),
              "reduced_marker_angle_rms_deg_standing_prior": joint_angle_rms_deg(tree, fit.q,
                                                                                 fit_p.q)}
    print(f"(c) {len(sub)} head/hand/foot markers, joints held by a stiffness toward the "
          f"calibration posture: joint angles differ from the full set by "
          f"{report['reduced_marker_angle_rms_deg']:.2f} deg RMS (toward the standing pose: "
          f"{report['reduced_marker_angle_rms_deg_standing_prior']:.2f} deg)")
    return report, fit_r.q
