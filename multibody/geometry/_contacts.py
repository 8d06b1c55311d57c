"""Contact points (manifolds) between posed shapes for the contact dynamics (private; the
algorithms are those of :mod:`solvers.collision_numpy`, through ``_narrow``)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import _narrow
from ._distance import as_pose, describe_pair
from ._shapes import Shape

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
    da, db = describe_pair(shape_a, shape_b)
    raw = _narrow.manifold(da, as_pose(pose_a, "pose_a"), db, as_pose(pose_b, "pose_b"), margin)
    return [ContactPoint(pa, pb, n, float(d)) for pa, pb, n, d in raw]
