"""Contact results: the forces found by a time-stepping contact solve, per contact point.

:class:`ContactResults` is the abstract value of the ``contact_results`` output port of
:class:`~multibody.plants.TimeSteppingRigidBodySystem` (and the value a sensor
with a ``contact_results`` input receives). Each entry is a :class:`PointContactResult`:
the two bodies and geometries, the world contact point, the unit normal from A to B, the
signed distance at the start of the step, and the force on B (the force on A is its
opposite): a normal force ``f_n >= 0`` along the normal and a tangential friction force.

Forces are the constraint impulses of the step divided by the time step, i.e. the mean
forces over the step ``[t, t + h]`` that starts at the context's time.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

import numpy as np

__all__ = ["PointContactResult", "ContactResults"]


@dataclass(frozen=True, eq=False)
class PointContactResult:
    """One contact point of a step.

    Attributes
    ----------
    body_a, body_b : str
        Body names; the normal points from A to B.
    geometry_a, geometry_b : str
        Collision geometry names.
    point : ndarray, shape (3,)
        World contact point (midway between the two witness points).
    normal : ndarray, shape (3,)
        Unit normal from A to B (world axes).
    distance : float
        Signed distance at the start of the step (negative: penetration).
    normal_force : float
        Normal force on B, ``>= 0`` (N).
    friction_force : ndarray, shape (3,)
        Tangential force on B (N), orthogonal to ``normal``.
    slip_velocity : ndarray, shape (3,)
        Tangential velocity of B relative to A at the point at the end of the step (m/s).
    """

    body_a: str
    body_b: str
    geometry_a: str
    geometry_b: str
    point: np.ndarray
    normal: np.ndarray
    distance: float
    normal_force: float
    friction_force: np.ndarray
    slip_velocity: np.ndarray

    @property
    def force(self) -> np.ndarray:
        """Total force (3,) on B: ``normal_force * normal + friction_force``."""
        return self.normal_force * self.normal + self.friction_force


@dataclass(frozen=True, eq=False)
class ContactResults:
    """The contact points of one step (iterable, indexable, ``len``).

    Attributes
    ----------
    time : float
        Start time of the step.
    contacts : tuple of PointContactResult
    """

    time: float = 0.0
    contacts: tuple = field(default_factory=tuple)

    def __len__(self) -> int:
        return len(self.contacts)

    def __iter__(self) -> Iterator[PointContactResult]:
        return iter(self.contacts)

    def __getitem__(self, i: int) -> PointContactResult:
        return self.contacts[i]

    def __repr__(self) -> str:
        return f"ContactResults(time={self.time!r}, contacts={len(self.contacts)})"

    def normal_forces(self) -> np.ndarray:
        """Normal forces (n,) of all contacts, in order."""
        return np.array([c.normal_force for c in self.contacts], dtype=float)

    def points(self) -> np.ndarray:
        """Contact points (n, 3)."""
        return np.array([c.point for c in self.contacts], dtype=float).reshape(-1, 3)

    def for_body(self, body: str) -> list[PointContactResult]:
        """The contacts that involve ``body`` (as A or B)."""
        return [c for c in self.contacts if body in (c.body_a, c.body_b)]

    def total_force(self, body: str) -> np.ndarray:
        """Net contact force (3,) on ``body`` (world axes) from all its contacts."""
        f = np.zeros(3)
        for c in self.contacts:
            if c.body_b == body:
                f += c.force
            if c.body_a == body:
                f -= c.force
        return f
