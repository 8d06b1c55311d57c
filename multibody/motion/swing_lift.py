"""Swing-foot clearance of a forward pass's reference: the swing foot lifted where the
reference skims the floor.

A marker-fitted walk carries the swing heel a few millimetres above the floor at swing speed
just before heel strike (the HDM walk: 2-5 mm at 3-4.5 m/s for 60 ms). Re-simulated on a
rigid floor, a swing foot that tracks its reference to within a few millimetres catches the
floor early, sticks by friction and trips the body. :func:`swing_lift` moves the joint
targets of each leg so that its foot rises by

.. math::

    \\ell_k(t) = \\max_{j \\in \\text{leg } k,\\ \\text{unloaded}}
        \\max(c - \\phi_j(t), 0)\\,\\min(|v^t_j(t)| / v_c, 1),

(``phi_j`` a contact point's height above the floor, ``v^t_j`` its speed along it, ``c`` the
clearance, ``v_c`` the speed of full clearance), smoothed over a few frames: a fast point
passes at least ``c`` above the floor, a slow one (the heel as it lands) comes down where the
reference puts it. The foot is moved straight up, its orientation kept, by the leg joints
alone (damped least squares on the foot Jacobian's leg columns,
``dq = J^T (J J^T + lambda I)^{-1} [0; l n]``); the root is left alone, so the lift changes
only the controller's targets (the forward pass's errors are still measured against the
reference itself).

The rule is per point: a foot with one point pushing (the heel just down) and another
skimming at speed (the toes coming down) is still lifted for the skimming one, and the box
filter ramps the lift into the first frames of a stance (1-4 mm over three frames): in
effect a softer landing. The stricter rule, no lift in a frame where any point of the foot
pushes and none spread into it, did worse on the HDM walk's rigid reference (16 perturbed
runs of ``benchmarks/bench_forward_pass.py --saved /tmp/h57/cm_s1`` with the walking
settings: markers median 121 mm against 48 mm with softer ankles, 202 against 59 mm
without), so it is not used.
"""
from __future__ import annotations

from typing import Mapping, Optional, Sequence

import numpy as np

from .contact_inverse_dynamics import Floor
from .errors import MotionError

__all__ = ["swing_lift"]


def swing_lift(tree, q, times, contact_points: Mapping, floor: Floor, legs: Sequence,
               loads: Optional[Mapping] = None, *, clearance: float = 0.012,
               speed: float = 0.5, min_load: float = 20.0, smoothing: int = 3,
               damping: float = 1e-6) -> tuple:
    """The reference ``q`` with its swing feet lifted (module docstring).

    Parameters
    ----------
    tree : RigidBodyTree
        Its first joint is the free root; the leg joints have ``nq == nv``.
    q : (K, nq) array_like
        The reference motion at ``times`` (K,).
    times : (K,) array_like
    contact_points : dict
        ``{body: (P, 3) points in the body frame}`` (the forward pass's placed points).
    floor : Floor
    legs : sequence
        ``[(foot body, command indices, velocity indices)]``
        (:func:`~multibody.motion.balance.leg_chains`); a contact body belongs to the leg of
        its side (name up to the first ``'-'`` or ``'_'``).
    loads : dict, optional
        ``{body: (K, P) normal forces}`` of the reference: points loaded above ``min_load``
        (N) in a frame are never lifted for (default: every point may be).
    clearance, speed : float
        ``c`` (m) and ``v_c`` (m/s).
    smoothing : int
        Half-width (frames) of the box filter on the lift.
    damping : float
        ``lambda`` of the least squares.

    Returns
    -------
    q_lifted : (K, nq) ndarray
    lift : (K, legs) ndarray
        ``l_k`` per frame (m).

    Raises
    ------
    MotionError
        Bad shapes, a non-positive ``speed``, a negative ``clearance``, a leg joint with
        ``nq != nv``.
    """
    q = np.asarray(q, float)
    t = np.asarray(times, float).ravel()
    if q.ndim != 2 or q.shape != (len(t), tree.nq) or len(t) < 2:
        raise MotionError(f"swing_lift: q must be (K, {tree.nq}) with K = len(times) >= 2 "
                          f"({len(t)}), got {q.shape}")
    if not speed > 0 or not clearance >= 0:
        raise MotionError(f"swing_lift: speed must be > 0 and clearance >= 0, got {speed!r}, "
                          f"{clearance!r}")
    qv = {}
    for j in tree.joints[1:]:
        for i in range(j.nv):
            qv[j.v_start + i] = j.q_start + i if j.nq == j.nv else None
    n = np.asarray(floor.normal, float)
    n = n / np.linalg.norm(n)
    side = (lambda b: b.split("-")[0].split("_")[0])
    K = len(t)
    out = q.copy()
    lift = np.zeros((K, len(legs)))
    for k_leg, (foot, _, vi) in enumerate(legs):
        bad = [v for v in vi if qv.get(v) is None]
        if bad:
            raise MotionError(f"swing_lift: the leg of '{foot}' has velocities {bad} of joints "
                              "with nq != nv")
        for b, P in contact_points.items():
            if side(b) != side(foot):
                continue
            P = np.asarray(P, float).reshape(-1, 3)
            X = np.empty((K, len(P), 3))
            for k, qk in enumerate(q):
                T = np.asarray(tree.body_pose(b, qk), float)
                X[k] = P @ T[:3, :3].T + T[:3, 3]
            H = floor.height(X.reshape(-1, 3)).reshape(K, len(P))
            V = np.gradient(X, t, axis=0)
            Vt = V - (V @ n)[..., None] * n
            need = np.clip(clearance - H, 0.0, None) * np.clip(
                np.linalg.norm(Vt, axis=2) / speed, 0.0, 1.0)
            if loads is not None and b in loads:
                L = np.asarray(loads[b], float)
                if L.shape != (K, len(P)):
                    raise MotionError(f"swing_lift: loads['{b}'] must be ({K}, {len(P)}) "
                                      f"(frames, contact points), got {L.shape}")
                need[L > min_load] = 0.0
            lift[:, k_leg] = np.maximum(lift[:, k_leg], need.max(axis=1))
        if smoothing > 0:
            w = int(smoothing)
            pad = np.pad(lift[:, k_leg], w, mode="edge")
            lift[:, k_leg] = np.convolve(pad, np.ones(2 * w + 1) / (2 * w + 1), "valid")
        cols = [qv[v] for v in vi]
        for k in np.flatnonzero(lift[:, k_leg] > 0):
            J = np.asarray(tree.jacobian(foot, q[k]), float)[:, list(vi)]
            tw = np.r_[0.0, 0.0, 0.0, lift[k, k_leg] * n]
            out[k, cols] += J.T @ np.linalg.solve(J @ J.T + damping * np.eye(6), tw)
    return out, lift
