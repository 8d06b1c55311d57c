"""Signed distance between posed shapes: result type and argument checks (private; the
algorithms are those of :mod:`solvers.collision_numpy`, through ``_narrow``)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import _narrow
from ._shapes import Halfspace, Mesh, Shape

__all__ = ["DistanceResult", "signed_distance", "as_pose", "describe_pair"]


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


def _check_shape(shape: Shape, which: str) -> None:
    if isinstance(shape, Mesh):
        raise NotImplementedError(
            f"signed_distance: {which} is {shape!r}; meshes are not collidable "
            "(use a Sphere, Box, Cylinder, Capsule, Ellipsoid or Halfspace)")
    if not isinstance(shape, Shape):
        raise TypeError(f"signed_distance: {which} must be a Shape, got {type(shape).__name__}")


def describe_pair(shape_a: Shape, shape_b: Shape) -> tuple:
    """The narrow-phase descriptions of both shapes; refuses, by name, a Mesh, a non-shape
    and Halfspace-Halfspace."""
    da, db = _narrow.describe(shape_a), _narrow.describe(shape_b)
    if da is not None and db is not None and not (da[0] == db[0] == "halfspace"):
        return da, db
    _check_shape(shape_a, "shape_a")
    _check_shape(shape_b, "shape_b")
    if isinstance(shape_a, Halfspace) and isinstance(shape_b, Halfspace):
        raise ValueError("signed_distance: Halfspace-Halfspace has no finite signed distance "
                         "(two planes either intersect or are parallel)")
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
    points, capsules as segments, plus radius). The algorithms are those of
    :mod:`solvers.collision_numpy` (the numpy narrow phase, shared with :mod:`solvers.collision`).
    Degenerate configurations (coincident sphere centres, a sphere centre on a capsule
    axis, intersecting capsule axes) use a fixed, documented normal choice.
    """
    da, db = describe_pair(shape_a, shape_b)
    d, pa, pb, n = _narrow.distance(da, as_pose(pose_a, "pose_a"), db, as_pose(pose_b, "pose_b"))
    if not math.isfinite(d):
        raise RuntimeError(f"signed_distance: non-finite result for {shape_a!r} and {shape_b!r}")
    return DistanceResult(float(d), pa, pb, n)
