"""Smoothing and differentiation of a configuration trajectory ``q(t)`` on the tree's
configuration manifold: ``q``, ``v`` and ``vdot`` consistent with the joint conventions.

Per joint:

* coordinates with ``v = qdot`` (revolute, prismatic, screw, universal, Euler, planar,
  translational): each coordinate is low-pass filtered (optional) and interpolated by a
  quintic spline; ``v`` and ``vdot`` are its first and second derivatives;
* ball joints (unit quaternion ``u``, ``v`` = angular velocity in the child frame): the four
  components (made sign-continuous) are splined as ``s(t)``, ``u = s/|s|`` and

  .. math:: \\omega = 2\\,\\mathrm{vec}(\\bar u \\otimes \\dot u), \\qquad
            \\dot\\omega = 2\\,\\mathrm{vec}(\\bar u \\otimes \\ddot u)

  (the scalar part of ``conj(u') u'`` is real, so it drops out of the derivative);
* free joints: the quaternion as above and the position ``p(t)`` splined; the linear
  velocity is the child-frame velocity ``R^T p'`` with derivative ``R^T p'' - omega x
  (R^T p')`` (the free joint's ``v = [omega; v]`` in the child frame).

The optional low-pass filter is a zero-phase Butterworth filter (second order, applied
forward and backward, Winter 2009, section 3.4) at ``cutoff_hz``; it needs uniform
sampling.

References
----------
D. A. Winter, "Biomechanics and Motor Control of Human Movement", 4th ed., Wiley, 2009.
J. Sola, "Quaternion kinematics for the error-state Kalman filter", arXiv:1711.02508 (the
angular velocity of a unit quaternion, eq. 104).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
from scipy.interpolate import make_interp_spline
from scipy.signal import butter, filtfilt

from .errors import MotionError, TrajectoryError

__all__ = ["JointTrajectory", "smooth_trajectory", "zero_phase_lowpass"]


@dataclass
class JointTrajectory:
    """Configurations, velocities and accelerations at sample times.

    Attributes
    ----------
    t : (T,) ndarray
        Times (s).
    q : (T, nq) ndarray
        Configurations (quaternions of unit norm).
    v : (T, nv) ndarray
        Generalized velocities.
    vdot : (T, nv) ndarray
        Generalized accelerations.
    """

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    vdot: np.ndarray


def _qmul_conj_vec(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Vector part of conj(a) * b for rows of quaternions [w, x, y, z] (T, 4) -> (T, 3)."""
    wa, xa = a[:, :1], a[:, 1:]
    wb, xb = b[:, :1], b[:, 1:]
    return wa * xb - wb * xa - np.cross(xa, xb)


def _unit_derivatives(s: np.ndarray, sd: np.ndarray, sdd: np.ndarray):
    """u = s/|s| and its first two time derivatives (rows)."""
    n = np.linalg.norm(s, axis=1, keepdims=True)
    u = s / n
    nd = np.sum(u * sd, axis=1, keepdims=True)
    a = sd - u * nd
    ud = a / n
    ad = sdd - ud * nd - u * (np.sum(ud * sd, axis=1, keepdims=True)
                              + np.sum(u * sdd, axis=1, keepdims=True))
    udd = ad / n - a * nd / n ** 2
    return u, ud, udd


def _quat_to_rot(u: np.ndarray) -> np.ndarray:
    """Rotation matrices (T, 3, 3) of unit quaternions (T, 4)."""
    w, x, y, z = u.T
    return np.stack([np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
                     np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
                     np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1)],
                    axis=1)


def _sign_continuous(u: np.ndarray) -> np.ndarray:
    u = u.copy()
    for k in range(1, len(u)):
        if u[k] @ u[k - 1] < 0:
            u[k] = -u[k]
    return u


def zero_phase_lowpass(times, x, cutoff_hz: Optional[float], who: str = "zero_phase_lowpass",
                       error: type = MotionError) -> np.ndarray:
    """``x`` (T, m) filtered along its rows by a second-order Butterworth low-pass at
    ``cutoff_hz``, run forward and backward (zero phase, the amplitude response squared;
    Winter 2009, section 3.4; padded by up to 9 samples); ``times`` (T,) uniform. ``None``:
    a copy of ``x``.

    Raises
    ------
    MotionError
        (or ``error``, its message led by ``who``) Fewer than 2 samples, non-uniform
        ``times``, or a cut-off outside (0, Nyquist).
    """
    x = np.asarray(x, float)
    if cutoff_hz is None:
        return x.copy()
    b, a, padlen = _lowpass(times, cutoff_hz, who, error)
    return filtfilt(b, a, x, axis=0, padlen=padlen)


def _lowpass(times, cutoff_hz: float, who: str, error: type) -> tuple:
    """``(b, a, padlen)`` of :func:`zero_phase_lowpass` on ``times``, checked."""
    dt = np.diff(np.asarray(times, float).ravel())
    if dt.size < 1:
        raise error(f"{who}: the low-pass filter needs at least 2 samples, got {dt.size + 1}")
    if np.ptp(dt) > 1e-6 * dt.mean():
        raise error(f"{who}: the low-pass filter needs uniformly spaced samples (spacing "
                    f"{dt.min():.6g}-{dt.max():.6g} s)")
    nyq = 0.5 / dt.mean()
    if not 0 < cutoff_hz < nyq:
        raise error(f"{who}: cutoff_hz must lie in (0, {nyq:g}) Hz (Nyquist), got "
                    f"{cutoff_hz!r}")
    b, a = butter(2, cutoff_hz / nyq)
    return b, a, min(3 * max(len(a), len(b)), dt.size)


def smooth_trajectory(tree, t: Any, q: Any, *, cutoff_hz: Optional[float] = None,
                      degree: int = 5) -> JointTrajectory:
    """Smooth ``q(t)`` and differentiate it on the configuration manifold (module docstring).

    Parameters
    ----------
    tree : RigidBodyTree
    t : (T,) array_like
        Strictly increasing times (s); uniform when ``cutoff_hz`` is given.
    q : (T, nq) array_like
        Configurations.
    cutoff_hz : float, optional
        Cut-off frequency of the zero-phase Butterworth low-pass filter (none by default:
        the spline interpolates the samples).
    degree : int
        Spline degree (5: quintic, continuous accelerations; at least 3).

    Returns
    -------
    JointTrajectory
        At the sample times ``t``.

    Raises
    ------
    TrajectoryError
        Times not strictly increasing (or not uniform with a filter), fewer than
        ``degree + 1`` samples, non-finite or wrongly sized ``q``, a cut-off at or above the
        Nyquist frequency, or a joint type whose ``v`` is not ``qdot`` and is not a ball or
        free joint.
    """
    t = np.asarray(t, float).ravel()
    Q = np.asarray(q, float)
    who = f"smooth_trajectory on tree '{tree.name}'"
    if Q.ndim != 2 or Q.shape != (t.size, tree.nq):
        raise TrajectoryError(f"{who}: q must have shape (T, nq) = ({t.size}, {tree.nq}), got "
                              f"{Q.shape}")
    if not np.all(np.isfinite(Q)) or not np.all(np.isfinite(t)):
        bad = np.argwhere(~np.isfinite(Q))
        raise TrajectoryError(f"{who}: non-finite q or t (first at sample "
                              f"{bad[0, 0] if bad.size else '?'})")
    degree = int(degree)
    if degree < 3:
        raise TrajectoryError(f"{who}: degree must be >= 3 (accelerations), got {degree}")
    if t.size < degree + 1:
        raise TrajectoryError(f"{who}: {t.size} samples, at least {degree + 1} needed")
    dt = np.diff(t)
    if np.any(dt <= 0):
        raise TrajectoryError(f"{who}: times must increase strictly (sample "
                              f"{int(np.argmax(dt <= 0)) + 1})")
    if cutoff_hz is not None:
        b, a, padlen = _lowpass(t, cutoff_hz, who, TrajectoryError)

    def filt(y):
        return y if cutoff_hz is None else filtfilt(b, a, y, axis=0, padlen=padlen)

    def spline(y):
        s = make_interp_spline(t, filt(y), k=degree, axis=0)
        return s(t), s(t, 1), s(t, 2)

    T = t.size
    q_out = np.zeros_like(Q)
    v = np.zeros((T, tree.nv))
    vdot = np.zeros((T, tree.nv))
    for j in tree.joints:
        qs, vs = j.q_start, j.v_start
        if j.nq == 0:
            continue
        if j.type in ("ball", "free"):
            u0 = _sign_continuous(Q[:, qs:qs + 4])
            s, sd, sdd = spline(u0)
            u, ud, udd = _unit_derivatives(s, sd, sdd)
            om, omd = 2 * _qmul_conj_vec(u, ud), 2 * _qmul_conj_vec(u, udd)
            q_out[:, qs:qs + 4] = u
            v[:, vs:vs + 3], vdot[:, vs:vs + 3] = om, omd
            if j.type == "free":
                p, pd, pdd = spline(Q[:, qs + 4:qs + 7])
                R = _quat_to_rot(u)
                vb = np.einsum("kji,kj->ki", R, pd)
                ab = np.einsum("kji,kj->ki", R, pdd) - np.cross(om, vb)
                q_out[:, qs + 4:qs + 7] = p
                v[:, vs + 3:vs + 6], vdot[:, vs + 3:vs + 6] = vb, ab
        elif j.nq == j.nv and j.type in ("revolute", "prismatic", "screw", "universal",
                                         "euler", "planar", "translational"):
            y, yd, ydd = spline(Q[:, qs:qs + j.nq])
            q_out[:, qs:qs + j.nq] = y
            v[:, vs:vs + j.nv], vdot[:, vs:vs + j.nv] = yd, ydd
        else:
            raise TrajectoryError(f"{who}: joint '{j.name}' of type '{j.type}' is not "
                                  "supported (v must be qdot, or a ball or free joint)")
    return JointTrajectory(t.copy(), q_out, v, vdot)
