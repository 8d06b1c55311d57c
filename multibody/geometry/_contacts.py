"""Contact points (manifolds) between posed shapes for the contact dynamics (private)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._boxbox import box_box_manifold
from ._distance import as_pose, pair_function
from ._gjk import _cross
from ._shapes import Box, Capsule, Cylinder, Halfspace, Shape

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


def _halfspace_points(Xa: np.ndarray, points, radius: float, margin: float):
    """Contacts of balls of ``radius`` centred at ``points`` (sequence of 3-sequences)
    with the halfspace of pose ``Xa`` (scalar arithmetic: these run every time step)."""
    X = Xa.tolist()
    nx, ny, nz = X[0][2], X[1][2], X[2][2]
    ox, oy, oz = X[0][3], X[1][3], X[2][3]
    normal = None
    out = []
    for px, py, pz in points:
        d = nx * (px - ox) + ny * (py - oy) + nz * (pz - oz)
        dist = d - radius
        if dist <= margin:
            if normal is None:
                normal = np.array((nx, ny, nz))
            out.append((np.array((px - d * nx, py - d * ny, pz - d * nz)),
                        np.array((px - radius * nx, py - radius * ny, pz - radius * nz)),
                        dist, normal))
    return out


def _box_corners(b: Box, Xb: np.ndarray):
    X = Xb.tolist()
    hx, hy, hz = b.half.tolist()
    cx, cy, cz = X[0][3], X[1][3], X[2][3]
    ax = (X[0][0] * hx, X[1][0] * hx, X[2][0] * hx)
    ay = (X[0][1] * hy, X[1][1] * hy, X[2][1] * hy)
    az = (X[0][2] * hz, X[1][2] * hz, X[2][2] * hz)
    return [(cx + sx * ax[0] + sy * ay[0] + sz * az[0],
             cy + sx * ax[1] + sy * ay[1] + sz * az[1],
             cz + sx * ax[2] + sy * ay[2] + sz * az[2])
            for sx in (-1.0, 1.0) for sy in (-1.0, 1.0) for sz in (-1.0, 1.0)]


def _halfspace_cylinder(a, Xa, b: Cylinder, Xb, margin):
    n = Xa[:3, 2]
    e = Xb[:3, 2]
    u = -n + (n @ e) * e
    uu = u @ u
    u = u / math.sqrt(uu) if uu > 1e-18 else Xb[:3, 0]
    w = _cross(e, u)
    c = Xb[:3, 3]
    r, h = b.radius, b.half_length
    rim = np.array([u, w, -u, -w]) * r
    top, bottom = c + h * e, c - h * e
    points = np.concatenate([top + rim, bottom + rim]).tolist()
    return _halfspace_points(Xa, points, 0.0, margin)


def _halfspace_capsule(Xa: np.ndarray, b: Capsule, Xb: np.ndarray, margin: float):
    """Capsule on a halfspace: the deepest point of the lower cap sphere, and the point of
    the upper end on the lowest line of the cylindrical surface (both on the surface;
    the two coincide with the cap spheres' lowest points when the capsule lies flat)."""
    n = Xa[:3, 2]
    e = Xb[:3, 2]
    c = Xb[:3, 3]
    ne = n @ e
    if ne > 0.0:
        e = -e
        ne = -ne
    low, high = c + b.half_length * e, c - b.half_length * e  # low: deeper along -n
    r = b.radius
    points = [(low - r * n).tolist()]
    m = n - ne * e
    mm = m @ m
    if mm > 1e-18:
        points.append((high - (r / math.sqrt(mm)) * m).tolist())
    return _halfspace_points(Xa, points, 0.0, margin)


_HALFSPACE = Halfspace()
_FLAT_TOL = 1e-6  # |cos| of the angle between the contact normal and a face normal


def _flat_face(shape: Shape, X: np.ndarray, direction: np.ndarray):
    """The flat face of ``shape`` whose outward normal is ``direction`` (within
    _FLAT_TOL), as (pose of the face plane with z outward, test 'point over the face'),
    or None: box faces and cylinder caps."""
    R = X[:3, :3]
    c = direction @ R
    if type(shape) is Box:
        k = int(np.argmax(np.abs(c)))
    elif type(shape) is Cylinder:
        k = 2
    else:
        return None
    if abs(c[k]) < 1.0 - _FLAT_TOL:
        return None
    s = 1.0 if c[k] > 0.0 else -1.0
    i, j = (k + 1) % 3, (k + 2) % 3
    half = shape.half[k] if type(shape) is Box else shape.half_length
    face = np.eye(4)
    face[:3, 0] = R[:, i]
    face[:3, 1] = s * R[:, j]
    face[:3, 2] = s * R[:, k]
    face[:3, 3] = X[:3, 3] + s * half * R[:, k]
    if type(shape) is Box:
        hi, hj = shape.half[i] * (1.0 + 1e-9), shape.half[j] * (1.0 + 1e-9)

        def over(p):
            q = (p - face[:3, 3]) @ R
            return abs(q[i]) <= hi and abs(q[j]) <= hj
    else:
        r2 = (shape.radius * (1.0 + 1e-9)) ** 2

        def over(p):
            q = (p - face[:3, 3]) @ R
            return q[0] * q[0] + q[1] * q[1] <= r2
    return face, over


def _face_manifold(a: Shape, Xa: np.ndarray, b: Shape, Xb: np.ndarray, n: np.ndarray,
                   margin: float):
    """Flat-face contacts: the points of each shape (box corners, cylinder rims, capsule
    ends) against the other's face plane, kept when they lie over that face."""
    out = []
    fa = _flat_face(a, Xa, n)
    if fa is not None:
        face, over = fa
        out += [c for c in _manifold(_HALFSPACE, face, b, Xb, margin, None) if over(c[0])]
    fb = _flat_face(b, Xb, -n)
    if fb is not None:
        face, over = fb
        out += [(pa, pb, d, -nb) for pb, pa, d, nb in
                _manifold(_HALFSPACE, face, a, Xa, margin, None) if over(pb)]
    return out


_FACE_PAIRS = {(Box, Cylinder), (Box, Capsule), (Capsule, Cylinder), (Cylinder, Cylinder)}


def _manifold(a: Shape, Xa: np.ndarray, b: Shape, Xb: np.ndarray, margin: float, fn):
    ta, tb = type(a), type(b)
    if ta is Halfspace:
        if tb is Box:
            return _halfspace_points(Xa, _box_corners(b, Xb), 0.0, margin)
        if tb is Cylinder:
            return _halfspace_cylinder(a, Xa, b, Xb, margin)
        if tb is Capsule:
            return _halfspace_capsule(Xa, b, Xb, margin)
    if ta is Box and tb is Box:
        return box_box_manifold(a, Xa, b, Xb, margin)
    d, pa, pb, n = fn(a, Xa, b, Xb)
    if d > margin:
        return []
    if (ta, tb) in _FACE_PAIRS:
        face_points = _face_manifold(a, Xa, b, Xb, n, margin)
        if face_points:
            return face_points
    return [(pa, pb, d, n)]


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
    * Box-cylinder, box-capsule, cylinder-cylinder, capsule-cylinder: when the contact
      normal is the normal of a box face or cylinder cap, the points of the other shape
      as against a halfspace (corners, rim points, capsule ends) that lie over that
      face, from both sides (a cylinder standing on a box or on a wider cylinder gives
      4 points, a capsule lying on a box 2).
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
