"""Acceleration-level rows of one contact point (the continuous plant's site interface).

Contact and joint-limit constraints describe each active point of a site in contact by a
:class:`ContactPointRows`: its normal row, its tangent rows and their ``Jdot v`` terms, with
the geometry that produced it; :class:`~multibody.plants.RigidBodySystem` assembles them into
its acceleration-level complementarity problem.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

__all__ = ["ContactPointRows"]


@dataclass
class ContactPointRows:
    """Rows of one contact point (all world axes).

    Attributes
    ----------
    Jn : ndarray (nv,)
        Normal row: ``Jn v`` is the normal velocity of B relative to A.
    jdv_n : float
        ``Jdot_n v`` (normal acceleration at ``vdot = 0``).
    vn, phi : float
        Normal velocity and signed distance.
    Jt : ndarray (2, nv) or None
        Tangent rows (None without friction).
    jdv_t, vt : ndarray (2,)
    tangents : ndarray (2, 3)
    point, normal : ndarray (3,)
    body_a, body_b, geometry_a, geometry_b : str
    mu : float
    """

    Jn: np.ndarray
    jdv_n: float
    vn: float
    phi: float
    Jt: Optional[np.ndarray]
    jdv_t: np.ndarray
    vt: np.ndarray
    tangents: np.ndarray
    point: np.ndarray
    normal: np.ndarray
    body_a: str
    body_b: str
    geometry_a: str
    geometry_b: str
    mu: float
