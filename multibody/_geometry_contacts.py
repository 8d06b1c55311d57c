"""Contact points (manifolds) between posed shapes for the contact dynamics (private)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._geometry_boxbox import box_box_manifold
from ._geometry_distance import as_pose, pair_function
from ._geometry_shapes import Box, Capsule, Cylinder, Halfspace, Shape

__all__ = ["ContactPoint", "contact_points"]


@dataclass(frozen=True, eq=False)
class ContactPoint:
    """One contact point between shapes A and B (all world frame).

    Attributes
    ----------
    point_a, point_b : ndarray, shape (3,)
        Points on the surfaces of A and B, ``point_b - point_a = distance * normal``.
    normal : ndarray, shape (3,)
        Unit contact normal from A to B.
    distance : float
        Signed distance at this point (negative: penetration).
    """

    point_a: np.ndarray
    point_b: np.ndarray
    normal: np.ndarray
    distance: float


def _halfspace_points(Xa: np.ndarray, points: np.ndarray, radius: float, margin: float):
    """Contacts of balls of ``radius`` centred at ``points`` (k, 3) with the halfspace."""
    n = Xa[:3, 2]
    dc = (points - Xa[:3, 3]) @ n
    out = []
    for p, d in zip(points, dc):
        dist = float(d) - radius
        if dist <= margin:
            out.append((p - d * n, p - radius * n, dist, n.copy()))
    return out


def _halfspace_cylinder(a, Xa, b: Cylinder, Xb, margin):
    n = Xa[:3, 2]
    e = Xb[:3, 2]
    u = -n + (n @ e) * e
    uu = u @ u
    u = u / math.sqrt(uu) if uu > 1e-18 else Xb[:3, 0]
    w = np.cross(e, u)
    c = Xb[:3, 3]
    r, h = b.radius, b.half_length
    rim = np.array([u, w, -u, -w]) * r
    points = np.vstack([c + h * e + rim, c - h * e + rim])
    return _halfspace_points(Xa, points, 0.0, margin)


def _manifold(a: Shape, Xa: np.ndarray, b: Shape, Xb: np.ndarray, margin: float, fn):
    ta, tb = type(a), type(b)
    if ta is Halfspace:
        if tb is Box:
            corners = b.vertices() @ Xb[:3, :3].T + Xb[:3, 3]
            return _halfspace_points(Xa, corners, 0.0, margin)
        if tb is Cylinder:
            return _halfspace_cylinder(a, Xa, b, Xb, margin)
        if tb is Capsule:
            e = Xb[:3, 2] * b.half_length
            ends = np.array([Xb[:3, 3] + e, Xb[:3, 3] - e])
            return _halfspace_points(Xa, ends, b.radius, margin)
    if ta is Box and tb is Box:
        return box_box_manifold(a, Xa, b, Xb, margin)
    d, pa, pb, n = fn(a, Xa, b, Xb)
    return [(pa, pb, d, n)] if d <= margin else []


def contact_points(shape_a: Shape, pose_a: np.ndarray, shape_b: Shape, pose_b: np.ndarray,
                   margin: float = 0.0) -> list[ContactPoint]:
    """Contact points between two posed shapes, a manifold where one point is not enough.

    Parameters
    ----------
    shape_a, shape_b : Shape
        As for :func:`signed_distance`.
    pose_a, pose_b : array_like, shape (4, 4)
        World poses of the shape frames.
    margin : float, optional
        Points with signed distance ``<= margin`` are reported (>= 0).

    Returns
    -------
    list of ContactPoint
        Empty when the shapes are farther apart than ``margin``.

    Notes
    -----
    * Halfspace-box: every corner within the margin (4 for a box resting on a face).
    * Halfspace-cylinder: four points 90 degrees apart on each cap rim, starting at the
      rim point deepest along the plane normal, within the margin (4 points for a
      cylinder standing on a cap, 2 for one lying on its side, 1 when tilted).
    * Halfspace-capsule: the two cap spheres (up to 2 points).
    * Box-box: face contacts give the incident face clipped to the reference face
      (up to 8 points); edge-edge contacts give one point.
    * Every other pair: the single point of :func:`signed_distance`.
    """
    try:
        margin = float(margin)
    except (TypeError, ValueError):
        raise ValueError(f"contact_points: margin must be a number, got {margin!r}") from None
    if not (math.isfinite(margin) and margin >= 0.0):
        raise ValueError(f"contact_points: margin must be finite and >= 0, got {margin!r}")
    fn, swap = pair_function(shape_a, shape_b)
    Xa = as_pose(pose_a, "pose_a")
    Xb = as_pose(pose_b, "pose_b")
    if swap:
        raw = _manifold(shape_b, Xb, shape_a, Xa, margin, fn)
        return [ContactPoint(pa, pb, -n, float(d)) for pb, pa, d, n in raw]
    raw = _manifold(shape_a, Xa, shape_b, Xb, margin, fn)
    return [ContactPoint(pa, pb, n, float(d)) for pa, pb, d, n in raw]
