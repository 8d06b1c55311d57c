"""Marker offsets of the feet calibrated on a flat stance: the foot segments' markers placed
where the capture sees them while the segment rests flat on the floor.

Marker sets put foot markers on the skin at heights the model's nominal placement does not
know (the fifth metatarsal marker sits on the side of the foot, lower than the toe marker on
its top; a heel marker's height varies with the shoe). Fitted with nominal offsets, such a
foot stands rolled or pitched by the difference (20-25 degrees on the HDM walk), its contact
points in and above the floor while it carries the body: no rigid foot on a rigid floor can
reproduce those contacts.

:func:`flat_stance_offsets` recalibrates the offsets of the markers on the given contact
segments from the frames where the segment rests on the floor (all its contact points
slower than ``speed_threshold``). In each such frame ``k`` the segment's fitted pose ``(R_k,
p_k)`` is replaced by the flat pose: the rotation ``R_f = Rot_n(theta_k) R_0`` (``R_0`` the
segment's rotation in the standing reference configuration, whose soles lie flat, ``Rot_n``
a rotation about the floor normal ``n``, ``theta_k`` the twist of ``R_k R_0^T`` about ``n``:
the swing-twist decomposition keeps the fitted heading) and the position that puts the
centroid ``c`` of the segment's contact points on the floor below its fitted place. The
marker's offset is the mean over those frames of ``R_f^T (x_k - p_f)`` (``x_k`` the
measured marker). Fitting the motion again with these offsets makes the feet stand flat
where the capture says they rest, the rest of the skeleton moving as little as the markers
allow.

References
----------
P. Dobrowolski, "Swing-twist decomposition in Clifford algebra", arXiv:1506.05481, 2015.
R. B. Davis et al., "A gait analysis data collection and reduction technique", Human Movement
Science 10, 1991 (markers on the foot and their anatomical placement).
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from .contact_inverse_dynamics import Floor
from .errors import MarkerSetError

__all__ = ["flat_stance_offsets"]


def _quat(R: np.ndarray) -> np.ndarray:
    """Unit quaternion ``[w, x, y, z]`` of a rotation matrix (Shepperd's method)."""
    tr = np.trace(R)
    i = int(np.argmax([tr, R[0, 0], R[1, 1], R[2, 2]]))
    if i == 0:
        w = np.sqrt(1.0 + tr) / 2
        return np.array([w, (R[2, 1] - R[1, 2]) / (4 * w), (R[0, 2] - R[2, 0]) / (4 * w),
                         (R[1, 0] - R[0, 1]) / (4 * w)])
    j, k = (i % 3) + 1, ((i + 1) % 3) + 1
    a, b, c = i - 1, j - 1, k - 1
    s = np.sqrt(1.0 + R[a, a] - R[b, b] - R[c, c]) * 2
    q = np.zeros(4)
    q[0] = (R[c, b] - R[b, c]) / s
    q[i] = s / 4
    q[j] = (R[b, a] + R[a, b]) / s
    q[k] = (R[c, a] + R[a, c]) / s
    return q


def _twist(R: np.ndarray, n: np.ndarray) -> np.ndarray:
    """The rotation about ``n`` of the swing-twist decomposition of ``R``."""
    q = _quat(R)
    w, a = q[0], float(q[1:] @ n)
    norm = np.hypot(w, a)
    if norm < 1e-12:                       # a half turn about an axis in the floor
        return np.eye(3)
    th = 2 * np.arctan2(a / norm, w / norm)
    K = np.array([[0, -n[2], n[1]], [n[2], 0, -n[0]], [-n[1], n[0], 0]])
    return np.eye(3) + np.sin(th) * K + (1 - np.cos(th)) * K @ K


def flat_stance_offsets(tree, markers: Sequence, contact_points: Mapping, t: Any, q: Any,
                        positions: Any, floor: Floor, reference_q: Any, *,
                        speed_threshold: float = 0.15, min_frames: int = 5) -> tuple:
    """Offsets of the markers on the contact segments from the frames where each rests flat
    (module docstring).

    Parameters
    ----------
    tree : RigidBodyTree
    markers : sequence of (name, body, (3,) offset)
    contact_points : dict
        ``{body: [(3,) point in the body frame, ...]}``: the segments that stand on the floor.
    t : (T,) array_like
        Frame times (s).
    q : (T, nq) array_like
        The fitted motion.
    positions : (T, M, 3) array_like
        The measured markers (m), in the order of ``markers``; NaN where occluded.
    floor : Floor
    reference_q : (nq,) array_like
        A configuration in which the segments' soles lie flat (the standing reference).
    speed_threshold : float
        A segment rests where all its contact points are slower than this (m/s).
    min_frames : int
        Markers of segments resting in fewer frames keep their offsets.

    Returns
    -------
    tuple
        ``(offsets (M, 3), frames {body: number of resting frames used})``.

    Raises
    ------
    MarkerSetError
        ``positions`` or ``q`` of the wrong shape.
    """
    t = np.asarray(t, float).ravel()
    Q = np.asarray(q, float)
    X = np.asarray(positions, float)
    M = len(markers)
    if Q.shape != (t.size, tree.nq) or X.shape != (t.size, M, 3):
        raise MarkerSetError(f"flat_stance_offsets: q must be (T, nq) = ({t.size}, {tree.nq}) "
                             f"and positions (T, M, 3) = ({t.size}, {M}, 3), got {Q.shape} "
                             f"and {X.shape}")
    n = np.asarray(floor.normal, float)
    n = n / np.linalg.norm(n)
    offsets = np.array([np.asarray(o, float) for _, _, o in markers])
    used = {}
    for body, pts in contact_points.items():
        idx = [i for i, (_, b, _) in enumerate(markers) if b == body]
        if not idx:
            continue
        P = np.asarray(pts, float).reshape(-1, 3)
        c = P.mean(axis=0)
        R0 = np.asarray(tree.body_pose(body, reference_q), float)[:3, :3]
        poses = np.array([np.asarray(tree.body_pose(body, qk), float) for qk in Q])
        R, p = poses[:, :3, :3], poses[:, :3, 3]
        world = p[:, None, :] + np.einsum("kij,pj->kpi", R, P)          # (T, P, 3)
        speed = np.linalg.norm(np.gradient(world, t, axis=0), axis=2).max(axis=1)
        rest = np.flatnonzero(speed < speed_threshold)
        used[body] = int(rest.size)
        if rest.size < min_frames:
            continue
        acc = np.zeros((len(idx), 3))
        cnt = np.zeros(len(idx))
        for k in rest:
            Rf = _twist(R[k] @ R0.T, n) @ R0
            # turned flat about the segment's joint (its origin: where the leg above puts it)
            pf = p[k]
            for a, i in enumerate(idx):
                if np.all(np.isfinite(X[k, i])):
                    acc[a] += Rf.T @ (X[k, i] - pf)
                    cnt[a] += 1
        for a, i in enumerate(idx):
            if cnt[a] > 0:
                offsets[i] = acc[a] / cnt[a]
    return offsets, used
