"""Collision geometry: shapes, signed distance, contact manifolds and collision filtering.

Lives here: the shapes, the distance and contact queries between them, and the collision
filter. The distance and contact algorithms are the numpy narrow phase of
:mod:`solvers.collision_numpy` (the one implementation, shared with the compiled narrow
phase's fallback); this package converts its shapes for it and imports nothing else of
the project (the tree attaches shapes to bodies; the constraints call the queries).

Shapes (each in its own frame):
``Sphere(radius)``, ``Box(size)``, ``Cylinder(radius, length)`` (axis z),
``Capsule(radius, length)`` (axis z), ``Ellipsoid(radii)`` (semi-axes along x, y, z), ``Halfspace()`` (``z <= 0``) and ``Mesh(filename,
scale)`` (reference only, not collidable).

Queries (numpy; poses are 4x4 world poses of the shape frames):

* :func:`signed_distance` -> :class:`DistanceResult` (``distance``, ``point_a``,
  ``point_b``, ``normal`` from A to B) for every pair of Halfspace, Sphere, Box, Capsule,
  Cylinder and Ellipsoid except Halfspace-Halfspace. Closed forms for the pairs with spheres,
  capsules and halfspaces, the separating axis test for box-box, and GJK + EPA
  (on the shapes' support functions) for the remaining convex pairs.
* :func:`contact_points` -> list of :class:`ContactPoint`: a contact manifold for the
  flat-on-flat cases (box, cylinder or capsule on a halfspace; box face on box face;
  cylinder or capsule on a box face; box, cylinder or capsule on a cylinder cap).
* :func:`ray_cast`: distance along a ray to a shape (range sensors).
* :class:`CollisionFilter`: same-body, parent/child, filter-group and explicit
  exclusions, then a bounding-sphere broad phase -> :class:`CandidatePair` list.

Design notes
------------
The general convex pairs use our own GJK + EPA (in :mod:`solvers.collision_numpy`) rather
than a collision library.
coal (the maintained successor of hpp-fcl) was the candidate backend; it is used by the
tests as the reference for box-box instead, because the shape set is small and convex
with closed-form support functions, the closed forms cover the pairs called every time
step, and staying numpy-only keeps this layer free of a compiled dependency. Results
agree with coal to 1e-6 (separated) and 1e-4 (penetration depth) on random box pairs.

Box-box contacts give a clipped face polygon (up to 8 points); edge-edge contacts give
one point. Pairs with a sphere, capsule-capsule, and contacts whose normal is not a
face normal give a single contact point.

Examples
--------
>>> import numpy as np
>>> from multibody.geometry import Box, Halfspace, signed_distance
>>> X = np.eye(4); X[2, 3] = 0.4
>>> r = signed_distance(Halfspace(), np.eye(4), Box((1.0, 1.0, 1.0)), X)
>>> round(r.distance, 12), r.normal.tolist()
(-0.1, [0.0, 0.0, 1.0])
"""
from __future__ import annotations

from ._contacts import ContactPoint, contact_points
from ._distance import DistanceResult, signed_distance
from ._filter import CandidatePair, CollisionFilter
from ._raycast import ray_cast
from ._shapes import Box, Capsule, Cylinder, Ellipsoid, Halfspace, Mesh, Shape, Sphere

__all__ = [
    "ray_cast",
    "Shape", "Sphere", "Box", "Cylinder", "Capsule", "Ellipsoid", "Halfspace", "Mesh",
    "DistanceResult", "signed_distance",
    "ContactPoint", "contact_points",
    "CollisionFilter", "CandidatePair",
]
