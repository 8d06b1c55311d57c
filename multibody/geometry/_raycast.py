"""Ray casting against the collision shapes (for range sensors).

``ray_cast(shape, X_WG, origin, direction)`` returns the distance along the unit ray from
``origin`` (world) to the first point of ``shape`` (posed by ``X_WG``), or ``inf`` when the ray
misses; a ray starting inside a shape returns 0. Closed forms: halfspace (plane), sphere
(quadratic), box (slabs), cylinder (quadratic side plus caps), capsule (cylinder side plus two
spheres).
"""
from __future__ import annotations

import math

import numpy as np

from ._shapes import Box, Capsule, Cylinder, Halfspace, Sphere

__all__ = ["ray_cast"]


def _sphere(o, d, c, r):
    oc = o - c
    b = float(oc @ d)
    cc = float(oc @ oc) - r * r
    if cc <= 0.0:
        return 0.0
    disc = b * b - cc
    if disc < 0.0 or b > 0.0:
        return math.inf
    return -b - math.sqrt(disc)


def _box(o, d, half):
    t0, t1 = -math.inf, math.inf
    for k in range(3):
        if abs(d[k]) < 1e-15:
            if abs(o[k]) > half[k]:
                return math.inf
            continue
        a, b = (-half[k] - o[k]) / d[k], (half[k] - o[k]) / d[k]
        t0, t1 = max(t0, min(a, b)), min(t1, max(a, b))
    if t1 < max(t0, 0.0):
        return math.inf
    return max(t0, 0.0)


def _cylinder(o, d, r, h):
    best = math.inf
    if abs(o[2]) <= h and o[0] ** 2 + o[1] ** 2 <= r * r:
        return 0.0
    a = d[0] ** 2 + d[1] ** 2
    if a > 1e-15:                                   # side
        b = o[0] * d[0] + o[1] * d[1]
        c = o[0] ** 2 + o[1] ** 2 - r * r
        disc = b * b - a * c
        if disc >= 0.0:
            t = (-b - math.sqrt(disc)) / a
            if t >= 0.0 and abs(o[2] + t * d[2]) <= h:
                best = t
    if abs(d[2]) > 1e-15:                           # caps
        for z in (h, -h):
            t = (z - o[2]) / d[2]
            if 0.0 <= t < best:
                p = o + t * d
                if p[0] ** 2 + p[1] ** 2 <= r * r:
                    best = t
    return best


def ray_cast(shape, X_WG: np.ndarray, origin, direction) -> float:
    """Distance (m) along the unit ray ``origin + t direction`` (world) to ``shape`` posed by
    ``X_WG`` (4 x 4), ``inf`` on a miss, 0 from inside (module docstring). Raises TypeError for
    a shape without a closed form (Mesh)."""
    R, p = X_WG[:3, :3], X_WG[:3, 3]
    o = R.T @ (np.asarray(origin, float) - p)
    d = R.T @ np.asarray(direction, float)
    if isinstance(shape, Halfspace):                # z <= 0 in its frame
        if o[2] <= 0.0:
            return 0.0
        return -o[2] / d[2] if d[2] < 0.0 else math.inf
    if isinstance(shape, Sphere):
        return _sphere(o, d, np.zeros(3), shape.radius)
    if isinstance(shape, Box):
        return _box(o, d, shape.half)
    if isinstance(shape, Cylinder):
        return _cylinder(o, d, shape.radius, shape.half_length)
    if isinstance(shape, Capsule):
        h, r = shape.half_length, shape.radius
        return min(_cylinder(o, d, r, h), _sphere(o, d, np.array([0, 0, h]), r),
                   _sphere(o, d, np.array([0, 0, -h]), r))
    raise TypeError(f"ray_cast: no closed form for {type(shape).__name__}")
