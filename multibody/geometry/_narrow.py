"""The one adapter between the shapes of this package and the numpy narrow phase of
:mod:`solvers.collision_numpy`, which holds the algorithms (closed forms, box-box, GJK +
EPA, flat-face manifolds; private).

A shape becomes a plain description ``(kind name, parameters)`` and a 4 x 4 pose the 12
numbers of the narrow phase (rotation row-major, then the origin); the results come back
as numpy 3-vectors. Shapes without a description (Mesh, anything not a Shape) give None,
for the callers to refuse by name.
"""
from __future__ import annotations

import numpy as np

from solvers import collision_numpy

from ._shapes import Box, Capsule, Cylinder, Ellipsoid, Halfspace, Shape, Sphere

__all__ = ["describe", "pose12", "distance", "manifold", "gjk_epa"]

_EPA_FAILED = "EPA: could not build an initial polytope (degenerate shapes)"


_KINDS = (Sphere, Box, Halfspace, Capsule, Cylinder, Ellipsoid)


def describe(shape: Shape):
    """``(kind, parameters)`` of a collidable shape for :mod:`solvers.collision_numpy`, or
    None (Mesh, or not a Shape)."""
    t = type(shape)
    if t not in _KINDS:                     # a subclass is described as its base
        t = next((k for k in _KINDS if isinstance(shape, k)), None)
    if t is Sphere:
        return "sphere", (shape.radius,)
    if t is Box:
        return "box", shape.half.tolist()
    if t is Halfspace:
        return "halfspace", ()
    if t is Capsule or t is Cylinder:
        return ("capsule" if t is Capsule else "cylinder"), (shape.radius, shape.half_length)
    if t is Ellipsoid:
        return "ellipsoid", shape.radii.tolist()
    return None


def pose12(X: np.ndarray) -> list:
    """The 12 numbers of a 4 x 4 pose: rotation row-major, then the origin."""
    (r00, r01, r02, px), (r10, r11, r12, py), (r20, r21, r22, pz), _ = X.tolist()
    return [r00, r01, r02, r10, r11, r12, r20, r21, r22, px, py, pz]


def distance(da, Xa: np.ndarray, db, Xb: np.ndarray):
    """``(distance, point_a, point_b, normal)`` of two described shapes (:func:`describe`)
    at 4 x 4 poses; RuntimeError when EPA cannot start (degenerate shapes)."""
    r = collision_numpy.pair_distance(da[0], da[1], pose12(Xa), db[0], db[1], pose12(Xb))
    if r is None:
        raise RuntimeError(_EPA_FAILED)
    return r[0], np.array(r[1]), np.array(r[2]), np.array(r[3])


def manifold(da, Xa: np.ndarray, db, Xb: np.ndarray, margin: float) -> list:
    """Contacts ``[(point_a, point_b, normal, distance)]`` within ``margin`` (numpy
    3-vectors, float), as :func:`solvers.collision_numpy.pair_manifold`."""
    rows = collision_numpy.pair_manifold(da[0], da[1], pose12(Xa), db[0], db[1], pose12(Xb),
                                         margin)
    if rows is None:
        raise RuntimeError(_EPA_FAILED)
    out, normal, last = [], None, None
    for c in rows:
        if c[6:9] != last:                  # points sharing a normal share its array
            last = c[6:9]
            normal = np.array(last)
        out.append((np.array(c[0:3]), np.array(c[3:6]), normal, c[9]))
    return out


def gjk_epa(shape_a: Shape, pose_a: np.ndarray, shape_b: Shape, pose_b: np.ndarray):
    """Signed distance between two bounded convex shapes by GJK (+ EPA when overlapping),
    whatever the pair (no closed form).

    Parameters
    ----------
    shape_a, shape_b : Shape
        Bounded convex shapes (Sphere, Box, Cylinder, Capsule, Ellipsoid).
    pose_a, pose_b : ndarray, shape (4, 4)
        World poses of the shape frames.

    Returns
    -------
    distance : float
        Signed distance (negative: penetration depth).
    point_a, point_b : ndarray, shape (3,)
        World witness points on the surfaces, ``point_b - point_a = distance * normal``.
    normal : ndarray, shape (3,)
        Unit normal from A to B.
    """
    da, db = describe(shape_a), describe(shape_b)
    r = collision_numpy.pair_gjk_epa(da[0], da[1], pose12(np.asarray(pose_a, float)),
                                     db[0], db[1], pose12(np.asarray(pose_b, float)))
    if r is None:
        raise RuntimeError(_EPA_FAILED)
    return r[0], np.array(r[1]), np.array(r[2]), np.array(r[3])
