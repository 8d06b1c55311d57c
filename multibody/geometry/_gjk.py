"""GJK distance and EPA penetration depth between convex shapes (private).

The algorithm (with its robustness measures and accuracy) lives once, in the numpy narrow
phase of :mod:`solvers.collision_numpy` (``solvers._collision_numpy_gjk`` documents it);
:func:`gjk_epa` runs it on this package's shapes through the adapter ``_narrow``.
"""
from __future__ import annotations

from ._narrow import gjk_epa

__all__ = ["gjk_epa"]
