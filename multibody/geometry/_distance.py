"""Signed distance between posed shapes: result type and pair dispatch (private)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ._analytic import (
    box_sphere, capsule_capsule, cylinder_sphere, halfspace_box, halfspace_convex,
    halfspace_sphere, sphere_capsule, sphere_sphere,
)
from ._boxbox import box_box
from ._gjk import gjk_epa
from ._shapes import Box, Capsule, Cylinder, Ellipsoid, Halfspace, Mesh, Shape, Sphere

__all__ = ["DistanceResult", "signed_distance", "as_pose", "pair_function"]


@dataclass(frozen=True, eq=False)
class DistanceResult:
    """Signed distance between two shapes and its witnesses (all world frame).

    Attributes
    ----------
    distance : float
        Signed distance; negative values are the penetration depth.
    point_a, point_b : ndarray, shape (3,)
        Witness points on the surfaces of A and B, ``point_b - point_a = distance * normal``.
    normal : ndarray, shape (3,)
        Unit vector from A to B: translating B along ``+normal`` separates the shapes.
    """

    distance: float
    point_a: np.ndarray
    point_b: np.ndarray
    normal: np.ndarray

    def swapped(self) -> "DistanceResult":
        """The same result for the arguments in the other order (B, A)."""
        return DistanceResult(self.distance, self.point_b, self.point_a, -self.normal)


PairFunction = Callable[[Shape, np.ndarray, Shape, np.ndarray], tuple]

_CONVEX = (Sphere, Box, Cylinder, Capsule, Ellipsoid)

_PAIRS: dict[tuple[type, type], PairFunction] = {
    (Sphere, Sphere): sphere_sphere,
    (Sphere, Capsule): sphere_capsule,
    (Capsule, Capsule): capsule_capsule,
    (Box, Sphere): box_sphere,
    (Cylinder, Sphere): cylinder_sphere,
    (Box, Box): box_box,
}
for _t in _CONVEX:
    _PAIRS[(Halfspace, _t)] = halfspace_convex
_PAIRS[(Halfspace, Sphere)] = halfspace_sphere
_PAIRS[(Halfspace, Box)] = halfspace_box


def _check_shape(shape: Shape, which: str) -> None:
    if isinstance(shape, Mesh):
        raise NotImplementedError(
            f"signed_distance: {which} is {shape!r}; meshes are not collidable "
            "(use a Sphere, Box, Cylinder, Capsule, Ellipsoid or Halfspace)")
    if not isinstance(shape, Shape):
        raise TypeError(f"signed_distance: {which} must be a Shape, got {type(shape).__name__}")


def pair_function(shape_a: Shape, shape_b: Shape) -> tuple[PairFunction, bool]:
    """The pair routine for these shape types and whether it takes them swapped (B, A)."""
    ta, tb = type(shape_a), type(shape_b)
    fn = _PAIRS.get((ta, tb))
    if fn is not None:
        return fn, False
    fn = _PAIRS.get((tb, ta))
    if fn is not None:
        return fn, True
    _check_shape(shape_a, "shape_a")
    _check_shape(shape_b, "shape_b")
    if isinstance(shape_a, Halfspace) and isinstance(shape_b, Halfspace):
        raise ValueError("signed_distance: Halfspace-Halfspace has no finite signed distance "
                         "(two planes either intersect or are parallel)")
    if shape_a.is_convex and shape_b.is_convex:
        # canonical order, so that swapping the arguments gives the mirrored result exactly
        return gjk_epa, ta.__name__ > tb.__name__
    raise TypeError(f"signed_distance: no distance routine for {shape_a!r} and {shape_b!r}")


def as_pose(pose, which: str) -> np.ndarray:
    """Validate the shape of a 4x4 world pose (non-finite entries surface as a non-finite
    distance, which :func:`signed_distance` refuses)."""
    X = np.asarray(pose, dtype=float)
    if X.shape != (4, 4):
        raise ValueError(f"signed_distance: {which} must be a 4x4 pose, got shape {X.shape}")
    return X


def signed_distance(shape_a: Shape, pose_a: np.ndarray,
                    shape_b: Shape, pose_b: np.ndarray) -> DistanceResult:
    """Signed distance, witness points and normal between two posed shapes.

    Parameters
    ----------
    shape_a, shape_b : Shape
        Sphere, Box, Cylinder, Capsule, Ellipsoid or Halfspace (not both Halfspace). Mesh
        is refused.
    pose_a, pose_b : array_like, shape (4, 4)
        World poses of the shape frames.

    Returns
    -------
    DistanceResult
        ``distance`` (negative: penetration depth), ``point_a``/``point_b`` on the two
        surfaces with ``point_b - point_a = distance * normal``, and the unit ``normal``
        from A to B.

    Notes
    -----
    Analytic: sphere-sphere, sphere-capsule, capsule-capsule, sphere-box,
    sphere-cylinder and the halfspace against every convex shape (by the support point
    along the plane normal; for an ellipsoid ``A^2 n / |A n|``, exact). Box-box: separating axis test (15 axes) for penetration,
    GJK for separated boxes. Other pairs: GJK + EPA on the shape cores (spheres as
    points, capsules as segments, plus radius), see ``_geometry_gjk``.
    Degenerate configurations (coincident sphere centres, a sphere centre on a capsule
    axis, intersecting capsule axes) use a fixed, documented normal choice.
    """
    fn, swap = pair_function(shape_a, shape_b)
    Xa = as_pose(pose_a, "pose_a")
    Xb = as_pose(pose_b, "pose_b")
    if swap:
        d, pb, pa, n = fn(shape_b, Xb, shape_a, Xa)
        n = -n
    else:
        d, pa, pb, n = fn(shape_a, Xa, shape_b, Xb)
    if not math.isfinite(d):
        raise RuntimeError(f"signed_distance: non-finite result for {shape_a!r} and {shape_b!r}")
    return DistanceResult(float(d), pa, pb, n)
