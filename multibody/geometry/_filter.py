"""Collision filtering and bounding-sphere broad phase (private).

Works on plain data so that it does not depend on the tree class: geometry objects with
``name``, ``body`` (body name), ``shape`` and ``pose`` (4x4 pose of the shape in the body
frame), the bodies' world poses, and which body pairs are parent/child.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Iterable, Mapping, NamedTuple, Union

import numpy as np

from ._shapes import Mesh

__all__ = ["CollisionFilter", "CandidatePair"]

ParentChild = Union[None, Callable[[str, str], bool], Iterable[tuple[str, str]]]


class CandidatePair(NamedTuple):
    """A pair of geometries that passed filtering and the broad phase.

    ``pose_a``/``pose_b`` are the world poses of the two shape frames (4x4).
    """

    geometry_a: Any
    geometry_b: Any
    pose_a: np.ndarray
    pose_b: np.ndarray


def _parent_child_predicate(parent_child: ParentChild) -> Callable[[str, str], bool]:
    if parent_child is None:
        return lambda a, b: False
    if callable(parent_child):
        return lambda a, b: bool(parent_child(a, b)) or bool(parent_child(b, a))
    pairs = set()
    for pair in parent_child:
        try:
            p, c = pair
        except (TypeError, ValueError):
            raise ValueError(
                f"CollisionFilter: parent_child entries must be (parent, child) body name "
                f"pairs, got {pair!r}") from None
        pairs.add(frozenset((p, c)))
    return lambda a, b: frozenset((a, b)) in pairs


class CollisionFilter:
    """Rules deciding which geometry pairs may collide, plus a bounding-sphere broad phase.

    Pairs are skipped when both geometries are on the same body, when their bodies are
    parent and child (unless ``skip_parent_child=False``), when both bodies belong to one
    collision filter group, or when the body pair was excluded explicitly. Mesh shapes
    (not collidable) and Halfspace-Halfspace pairs are never candidates.

    Parameters
    ----------
    skip_parent_child : bool, optional
        Skip geometry pairs on bodies joined by a joint (default True).

    Examples
    --------
    >>> f = CollisionFilter()
    >>> f.add_filter_group("hand", ["palm", "finger1", "finger2"])
    >>> f.exclude_pair("upper_arm", "torso")
    >>> f.is_filtered("finger1", "finger2")
    True
    """

    def __init__(self, skip_parent_child: bool = True) -> None:
        self.skip_parent_child = bool(skip_parent_child)
        self._groups: dict[str, frozenset[str]] = {}
        self._excluded: set[frozenset[str]] = set()

    def __repr__(self) -> str:
        return (f"CollisionFilter(skip_parent_child={self.skip_parent_child}, "
                f"groups={sorted(self._groups)}, excluded_pairs={len(self._excluded)})")

    @property
    def groups(self) -> dict[str, frozenset[str]]:
        """Filter groups by name (a copy)."""
        return dict(self._groups)

    def add_filter_group(self, name: str, bodies: Iterable[str]) -> None:
        """Declare a group of bodies whose geometries do not collide with each other.

        Raises
        ------
        ValueError
            If the name is empty or already used, or a body name is not a string.
        """
        if not isinstance(name, str) or not name:
            raise ValueError(f"CollisionFilter: group name must be a non-empty string, got {name!r}")
        if name in self._groups:
            raise ValueError(f"CollisionFilter: filter group {name!r} already exists")
        if isinstance(bodies, str):
            raise ValueError(f"CollisionFilter: group {name!r} needs a list of body names, "
                             f"got the single string {bodies!r}")
        members = frozenset(bodies)
        for body in members:
            if not isinstance(body, str):
                raise ValueError(f"CollisionFilter: group {name!r} body names must be strings, "
                                 f"got {body!r}")
        self._groups[name] = members

    def exclude_pair(self, body_a: str, body_b: str) -> None:
        """Never report collisions between geometries of ``body_a`` and ``body_b``."""
        for body in (body_a, body_b):
            if not isinstance(body, str):
                raise ValueError(f"CollisionFilter.exclude_pair: body names must be strings, "
                                 f"got {body!r}")
        self._excluded.add(frozenset((body_a, body_b)))

    def is_filtered(self, body_a: str, body_b: str, parent_child: bool = False) -> bool:
        """True when geometries of these two bodies must not be tested.

        ``parent_child`` says whether the bodies are joined by a joint.
        """
        if body_a == body_b:
            return True
        if parent_child and self.skip_parent_child:
            return True
        if frozenset((body_a, body_b)) in self._excluded:
            return True
        return any(body_a in g and body_b in g for g in self._groups.values())

    def candidate_pairs(self, geometries: Iterable[Any],
                        body_poses: Mapping[str, np.ndarray],
                        parent_child: ParentChild = None,
                        margin: float = 0.0) -> list[CandidatePair]:
        """Geometry pairs that pass the filter rules and the bounding-sphere test.

        Parameters
        ----------
        geometries : iterable
            Objects with ``name``, ``body`` (body name), ``shape`` and ``pose`` (4x4 shape
            pose in the body frame).
        body_poses : mapping
            World pose (4x4) of every body that carries a geometry, by body name.
        parent_child : callable or iterable of (parent, child) or None
            Which body pairs are joined by a joint: ``f(body_a, body_b) -> bool`` (either
            order is tried) or a collection of (parent, child) name pairs.
        margin : float, optional
            Pairs whose bounding spheres are farther apart than this are dropped (>= 0).

        Returns
        -------
        list of CandidatePair
            In the order of ``geometries`` (first index, then second), with the world
            poses of both shape frames.
        """
        if not (math.isfinite(margin) and margin >= 0.0):
            raise ValueError(f"CollisionFilter.candidate_pairs: margin must be >= 0, got {margin!r}")
        is_pc = _parent_child_predicate(parent_child)
        items = []
        for g in geometries:
            if isinstance(g.shape, Mesh):
                continue
            try:
                X_WB = np.asarray(body_poses[g.body], dtype=float)
            except KeyError:
                raise ValueError(f"CollisionFilter.candidate_pairs: no world pose for body "
                                 f"{g.body!r} of geometry {g.name!r}") from None
            X_BG = np.asarray(g.pose, dtype=float)
            if X_WB.shape != (4, 4) or X_BG.shape != (4, 4):
                raise ValueError(f"CollisionFilter.candidate_pairs: geometry {g.name!r} on body "
                                 f"{g.body!r} needs 4x4 poses")
            items.append((g, X_WB @ X_BG))
        if len(items) < 2:
            return []
        # Bounding-sphere test for all bounded pairs at once; halfspaces test the other
        # shape's bounding sphere against their plane.
        centres = np.array([X[:3, 3] for _, X in items])
        radii = np.array([g.shape.bounding_radius for g, _ in items])
        bounded = np.isfinite(radii)
        r = np.where(bounded, radii, 0.0)
        diff = centres[:, None, :] - centres[None, :, :]
        dist2 = np.einsum("ijk,ijk->ij", diff, diff)
        near = dist2 <= (r[:, None] + r[None, :] + margin) ** 2
        near &= bounded[:, None] & bounded[None, :]
        for m in np.flatnonzero(~bounded):  # halfspaces
            Xh = items[m][1]
            height = (centres - Xh[:3, 3]) @ Xh[:3, 2]
            hit = (height <= r + margin) & bounded
            near[m, :] |= hit
            near[:, m] |= hit
        out = []
        for m, k in zip(*np.nonzero(np.triu(near, 1))):
            (ga, Xa), (gb, Xb) = items[m], items[k]
            if not self.is_filtered(ga.body, gb.body, is_pc(ga.body, gb.body)):
                out.append(CandidatePair(ga, gb, Xa, Xb))
        return out
