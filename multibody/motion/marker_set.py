"""A marker set on a tree: the one check of ``[(name, body, offset)]`` lists used by the
marker fitter (:class:`~multibody.motion.MarkerFitter`), the marker sensor
(:class:`sensors.MarkerSensor`) and the browser viewer.

Markers are points fixed on bodies (motion-capture markers); the lists come from a model
builder (:func:`multibody.models.human_model`'s ``markers``) or from a marker-placement file
(:func:`multibody.parsing.marker_offsets`).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from .errors import MarkerSetError

__all__ = ["marker_set_arrays", "marker_weight_array", "refine_marker_offsets"]


def marker_set_arrays(tree, markers: Sequence, who: str = "marker set"
                      ) -> tuple[list[str], list[str], np.ndarray]:
    """Validate ``markers`` = [(name, body, offset (3,))] against ``tree``.

    Frames are resolved to their body: a marker at ``o`` in frame ``F`` (pose ``X_B,F`` in its
    body ``B``) is at ``R_B,F o + p_B,F`` in the body frame.

    Parameters
    ----------
    tree : RigidBodyTree
    markers : sequence of (name, body, offset)
        Marker name, body or frame name, and its position (3,) in that frame (m).
    who : str
        The owner named in error messages (``"MarkerSensor 'mocap'"``).

    Returns
    -------
    names : list of str
    bodies : list of str
        The body each marker is fixed on.
    offsets : (M, 3) ndarray
        Marker positions in their body frames (m).

    Raises
    ------
    MarkerSetError
        An empty set, a malformed entry, a duplicate name, an unknown body or frame, an
        offset that is not 3 finite numbers.
    """
    names, bodies, offsets = [], [], []
    for entry in markers:
        try:
            name, body, offset = entry
        except (TypeError, ValueError):
            raise MarkerSetError(f"{who}: each marker is (name, body, offset), got "
                                 f"{entry!r}") from None
        if name in names:
            raise MarkerSetError(f"{who}: duplicate marker name {name!r}")
        try:
            frame = tree.get_frame(body)
        except (KeyError, ValueError, TypeError):
            raise MarkerSetError(f"{who}: marker {name!r} is on {body!r}, which is not a body "
                                 f"or frame of tree '{tree.name}'") from None
        p = np.asarray(offset, dtype=float).ravel()
        if p.shape != (3,) or not np.all(np.isfinite(p)):
            raise MarkerSetError(f"{who}: marker {name!r} offset must be 3 finite numbers, "
                                 f"got {offset!r}")
        X = np.asarray(frame.pose, float)
        names.append(str(name))
        bodies.append(frame.body)
        offsets.append(X[:3, :3] @ p + X[:3, 3])
    if not names:
        raise MarkerSetError(f"{who}: no markers given")
    return names, bodies, np.array(offsets)


def marker_weight_array(weights, count: int, who: str = "marker set",
                        error: type = MarkerSetError) -> np.ndarray:
    """Per-marker weights checked: ``(count,)`` finite numbers >= 0 (None: all ones).

    Parameters
    ----------
    weights : (count,) array_like or None
    count : int
        Number of markers M.
    who : str
        How the message names the caller.
    error : type
        The exception raised (a :class:`~multibody.motion.MotionError`).

    Returns
    -------
    (M,) ndarray

    Raises
    ------
    MarkerSetError (or ``error``)
        Wrong size, a non-finite or negative weight; the message names ``who``.
    """
    w = np.ones(count) if weights is None else np.asarray(weights, float).ravel()
    if w.shape != (count,) or not np.all(np.isfinite(w)) or np.any(w < 0):
        raise error(f"{who}: marker_weights must be {count} finite numbers >= 0, got "
                    f"{weights!r}")
    return w


def refine_marker_offsets(tree, bodies: Sequence[str], offsets, q, positions, *,
                          offset_scale: float, marker_scale: float, weights=None,
                          who: str = "marker set") -> np.ndarray:
    """Marker offsets refined on a motion: the per-marker correction ``delta_i`` (body
    frame) that minimises the marker error of the motion ``q`` plus a quadratic prior.

    With the pose ``(R_k, p_k)`` of marker ``i``'s body at frame ``k`` and ``r_ik = R_k^T
    (m_ik - p_k) - o_i`` the measured marker in the body frame less the current offset, the
    correction minimises

    .. math::

        \\frac{1}{N \\sigma_m^2} \\sum_{k,i} w_i \\lVert R_k \\delta_i - R_k r_{ik}
        \\rVert^2 + \\frac{1}{M \\sigma_o^2} \\sum_i \\lVert \\delta_i \\rVert^2,
        \\qquad \\delta_i = \\frac{w_i \\sum_k r_{ik}}{w_i n_i + N \\sigma_m^2 / (M
        \\sigma_o^2)}

    (``N`` visible samples, ``n_i`` of them of marker ``i``, ``M`` markers): the offsets'
    mean square change, scaled by ``sigma_o``, costs as much as the markers' mean square
    error scaled by ``sigma_m``, so at ``sigma_o = sigma_m`` a marker seen in an average
    number of frames moves half of its mean body-frame error. This is the offset step of a
    marker calibration (AddBiomechanics' marker-offset refinement, Werling et al., PLoS ONE
    2023), done on a given motion.

    Parameters
    ----------
    tree : RigidBodyTree
    bodies : sequence of str
        The body of each marker (M).
    offsets : (M, 3) array_like
        Current offsets ``o_i`` in the body frames (m).
    q : (T, nq) array_like
        The motion.
    positions : (T, M, 3) array_like
        Measured markers (m, world); NaN where occluded.
    offset_scale, marker_scale : float
        ``sigma_o`` and ``sigma_m`` (m), > 0.
    weights : (M,) array_like, optional
        ``w_i`` (default ones); a marker of weight 0 keeps its offset.
    who : str
        The owner named in error messages.

    Returns
    -------
    (M, 3) ndarray
        The refined offsets ``o_i + delta_i``.

    Raises
    ------
    MarkerSetError
        Shapes that do not agree, non-finite offsets or motion, scales not > 0.
    """
    o = np.asarray(offsets, float)
    Q = np.asarray(q, float)
    X = np.asarray(positions, float)
    M = len(bodies)
    for name, val in (("offset_scale", offset_scale), ("marker_scale", marker_scale)):
        if not (np.isfinite(val) and val > 0):
            raise MarkerSetError(f"{who}: {name} must be finite and > 0, got {val!r}")
    if o.shape != (M, 3) or not np.all(np.isfinite(o)):
        raise MarkerSetError(f"{who}: offsets must be finite with shape ({M}, 3), got "
                             f"{o.shape}")
    if Q.ndim != 2 or Q.shape[1] != tree.nq or not np.all(np.isfinite(Q)):
        raise MarkerSetError(f"{who}: q must be a finite (T, {tree.nq}) array, got "
                             f"{Q.shape}")
    if X.shape != (Q.shape[0], M, 3):
        raise MarkerSetError(f"{who}: positions must have shape ({Q.shape[0]}, {M}, 3), got "
                             f"{X.shape}")
    w = marker_weight_array(weights, M, who)
    vis = np.all(np.isfinite(X), axis=2)
    n = vis.sum(axis=0).astype(float)
    N = max(float(n.sum()), 1.0)
    acc = np.zeros((M, 3))
    poses = {b: np.array([np.asarray(tree.body_pose(b, qk), float) for qk in Q])
             for b in set(bodies)}
    for i, b in enumerate(bodies):
        P = poses[b][vis[:, i]]                                   # (n_i, 4, 4)
        r = np.einsum("kji,kj->ki", P[:, :3, :3], X[vis[:, i], i] - P[:, :3, 3]) - o[i]
        acc[i] = r.sum(axis=0)
    prior = N * marker_scale ** 2 / (M * offset_scale ** 2)
    return o + (w[:, None] * acc) / (w * n + prior)[:, None]
