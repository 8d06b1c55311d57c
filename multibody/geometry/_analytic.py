"""Closed-form signed distances for the common shape pairs (private).

Every function takes ``(shape_a, pose_a, shape_b, pose_b)`` for its own argument order
and returns ``(distance, point_a, point_b, normal)``: signed distance (negative is
penetration depth), world witness points on each surface and the unit normal from A to
B, with ``point_b - point_a = distance * normal``. Poses are 4x4 world poses.

Rounded shapes are handled as a core point/segment plus radius: two balls of radii
``r_a, r_b`` centred at the closest points ``c_a, c_b`` of the cores give
``distance = |c_b - c_a| - r_a - r_b`` (Ericson 2005, 4.5.1 and 5.1.9).
"""
from __future__ import annotations

import math

import numpy as np

from ._shapes import Box, Capsule, Cylinder, Shape, Sphere

__all__ = [
    "closest_points_segments", "sphere_sphere", "sphere_capsule", "capsule_capsule",
    "box_sphere", "cylinder_sphere", "halfspace_convex", "halfspace_sphere", "halfspace_box",
]

_EZ = np.array([0.0, 0.0, 1.0])


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a0, a1, a2 = a.tolist()
    b0, b1, b2 = b.tolist()
    return np.array((a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0))


def closest_points_segments(p1: np.ndarray, q1: np.ndarray, p2: np.ndarray, q2: np.ndarray):
    """Closest points of segments [p1, q1] and [p2, q2] (Ericson 2005, 5.1.9).

    Returns
    -------
    c1, c2 : ndarray, shape (3,)
        Closest points on the first and second segment.
    """
    d1 = q1 - p1
    d2 = q2 - p2
    r = p1 - p2
    a = d1 @ d1
    e = d2 @ d2
    f = d2 @ r
    if a <= 1e-30 and e <= 1e-30:
        return p1, p2
    if a <= 1e-30:
        s, t = 0.0, min(max(f / e, 0.0), 1.0)
    else:
        c = d1 @ r
        if e <= 1e-30:
            t, s = 0.0, min(max(-c / a, 0.0), 1.0)
        else:
            b = d1 @ d2
            denom = a * e - b * b
            s = min(max((b * f - c * e) / denom, 0.0), 1.0) if denom > 1e-14 * a * e else 0.0
            t = (b * s + f) / e
            if t < 0.0:
                t, s = 0.0, min(max(-c / a, 0.0), 1.0)
            elif t > 1.0:
                t, s = 1.0, min(max((b - c) / a, 0.0), 1.0)
    return p1 + s * d1, p2 + t * d2


def _any_perpendicular(u: np.ndarray) -> np.ndarray:
    k = int(np.argmin(np.abs(u)))
    e = np.zeros(3)
    e[k] = 1.0
    p = _cross(u, e)
    return p / math.sqrt(p @ p)


def _balls(ca: np.ndarray, ra: float, cb: np.ndarray, rb: float, fallback: np.ndarray):
    d = cb - ca
    length = math.sqrt(d @ d)
    n = d / length if length > 1e-15 else fallback
    return length - ra - rb, ca + ra * n, cb - rb * n, n


def _segment(capsule: Capsule, pose: np.ndarray):
    axis = pose[:3, 2] * capsule.half_length
    c = pose[:3, 3]
    return c - axis, c + axis


def sphere_sphere(a: Sphere, pose_a: np.ndarray, b: Sphere, pose_b: np.ndarray):
    """Sphere-sphere; coincident centres use the normal +z of the world."""
    return _balls(pose_a[:3, 3], a.radius, pose_b[:3, 3], b.radius, _EZ)


def sphere_capsule(a: Sphere, pose_a: np.ndarray, b: Capsule, pose_b: np.ndarray):
    """Sphere-capsule; a centre on the capsule axis uses the capsule's x axis as normal."""
    p, q = _segment(b, pose_b)
    c = pose_a[:3, 3]
    d = q - p
    t = min(max((c - p) @ d / (d @ d), 0.0), 1.0)
    return _balls(c, a.radius, p + t * d, b.radius, pose_b[:3, 0])


def capsule_capsule(a: Capsule, pose_a: np.ndarray, b: Capsule, pose_b: np.ndarray):
    """Capsule-capsule; intersecting axes use the normal of the plane of both axes."""
    pa, qa = _segment(a, pose_a)
    pb, qb = _segment(b, pose_b)
    ca, cb = closest_points_segments(pa, qa, pb, qb)
    n = _cross(pose_a[:3, 2], pose_b[:3, 2])
    nn = math.sqrt(n @ n)
    fallback = n / nn if nn > 1e-9 else _any_perpendicular(pose_a[:3, 2])
    return _balls(ca, a.radius, cb, b.radius, fallback)


def box_sphere(a: Box, pose_a: np.ndarray, b: Sphere, pose_b: np.ndarray):
    """Box-sphere: closest point of the box to the sphere centre (box frame)."""
    R, o = pose_a[:3, :3], pose_a[:3, 3]
    c = pose_b[:3, 3]
    p = (c - o) @ R
    h = a.half
    q = np.minimum(np.maximum(p, -h), h)
    d = p - q
    dd = d @ d
    if dd > 0.0:
        length = math.sqrt(dd)
        n_local = d / length
        signed = length
    else:  # centre inside the box: leave through the nearest face
        gaps = h - np.abs(p)
        k = int(np.argmin(gaps))
        n_local = np.zeros(3)
        n_local[k] = 1.0 if p[k] >= 0.0 else -1.0
        q = p.copy()
        q[k] = n_local[k] * h[k]
        signed = -gaps[k]
    n = R @ n_local
    r = b.radius
    return signed - r, R @ q + o, c - r * n, n


def cylinder_sphere(a: Cylinder, pose_a: np.ndarray, b: Sphere, pose_b: np.ndarray):
    """Cylinder-sphere: closest point of the cylinder to the sphere centre (cylinder frame)."""
    R, o = pose_a[:3, :3], pose_a[:3, 3]
    c = pose_b[:3, 3]
    p = (c - o) @ R
    rho = math.hypot(p[0], p[1])
    radial = np.array([p[0] / rho, p[1] / rho, 0.0]) if rho > 1e-15 else np.array([1.0, 0.0, 0.0])
    r, h = a.radius, a.half_length
    if rho > r or abs(p[2]) > h:
        q = radial * min(rho, r)
        q[2] = min(max(p[2], -h), h)
        d = p - q
        signed = math.sqrt(d @ d)
        n_local = d / signed
    else:
        side, cap = r - rho, h - abs(p[2])
        if side <= cap:
            q = radial * r
            q[2] = p[2]
            n_local, signed = radial, -side
        else:
            sz = 1.0 if p[2] >= 0.0 else -1.0
            q = np.array([p[0], p[1], sz * h])
            n_local, signed = np.array([0.0, 0.0, sz]), -cap
    n = R @ n_local
    return signed - b.radius, R @ q + o, c - b.radius * n, n


def halfspace_convex(a: Shape, pose_a: np.ndarray, b: Shape, pose_b: np.ndarray):
    """Halfspace (A) against any bounded convex shape (B) by B's support point.

    The deepest point of B is its support point in the direction ``-n`` of the plane
    normal ``n``: ``distance = n . (support_B(-n) - o)``, ``o`` a point on the plane.
    """
    n = pose_a[:3, 2]
    Rb = pose_b[:3, :3]
    p_low = Rb @ b.support(-(n @ Rb)) + pose_b[:3, 3]
    dist = float(n @ (p_low - pose_a[:3, 3]))
    return dist, p_low - dist * n, p_low, n.copy()


def halfspace_sphere(a: Shape, pose_a: np.ndarray, b: Sphere, pose_b: np.ndarray):
    """Halfspace (A) against a sphere (B); scalar arithmetic for speed (called every step)."""
    Xa = pose_a.tolist()
    nx, ny, nz = Xa[0][2], Xa[1][2], Xa[2][2]
    c = pose_b[:3, 3].tolist()
    r = b.radius
    dc = nx * (c[0] - Xa[0][3]) + ny * (c[1] - Xa[1][3]) + nz * (c[2] - Xa[2][3])
    n = np.array((nx, ny, nz))
    return dc - r, np.array((c[0] - dc * nx, c[1] - dc * ny, c[2] - dc * nz)), \
        np.array((c[0] - r * nx, c[1] - r * ny, c[2] - r * nz)), n


def halfspace_box(a: Shape, pose_a: np.ndarray, b: Box, pose_b: np.ndarray):
    """Halfspace (A) against a box (B): the box corner deepest along the plane normal."""
    Xa = pose_a.tolist()
    Xb = pose_b.tolist()
    nx, ny, nz = Xa[0][2], Xa[1][2], Xa[2][2]
    px, py, pz = Xb[0][3], Xb[1][3], Xb[2][3]
    for k, h in enumerate(b.half.tolist()):
        cx, cy, cz = Xb[0][k], Xb[1][k], Xb[2][k]
        if nx * cx + ny * cy + nz * cz > 0.0:
            h = -h
        px += h * cx
        py += h * cy
        pz += h * cz
    dist = nx * (px - Xa[0][3]) + ny * (py - Xa[1][3]) + nz * (pz - Xa[2][3])
    return dist, np.array((px - dist * nx, py - dist * ny, pz - dist * nz)), \
        np.array((px, py, pz)), np.array((nx, ny, nz))
