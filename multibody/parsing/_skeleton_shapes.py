"""Mass, inertia and half extents of the skeleton format's shapes (private to
:mod:`multibody.parsing.skeleton`).

Box, sphere, cylinder and capsule (axis z) of uniform density; the capsule is a cylinder of
length ``L`` with two hemispherical caps of radius ``r``, its inertia about the centre being
``Ixx = m1 (r^2/4 + L^2/12) + m2 (2 r^2/5 + 3 r L/8 + L^2/4)``, ``Izz = (m1/2 + 2 m2/5) r^2``
with ``m1`` the cylinder's and ``m2`` the caps' mass (the formulas of ODE's ``dMassSetCapsule``).
"""
from __future__ import annotations

import math

import numpy as np


def shape_inertia(shape: str, dims: tuple, density: float):
    """Mass, inertia about the centre (3 x 3) and half extents of a shape (ODE's formulas)."""
    if shape == "box":
        x, y, z = dims
        m = density * x * y * z
        I = m / 12.0 * np.diag([y * y + z * z, x * x + z * z, x * x + y * y])
        return m, I, np.array([x, y, z]) / 2.0
    if shape == "sphere":
        (r,) = dims
        m = density * 4.0 / 3.0 * math.pi * r ** 3
        return m, 0.4 * m * r * r * np.eye(3), np.array([r, r, r])
    L, r = dims
    if shape == "cylinder":
        m = density * math.pi * r * r * L
        ixx = m * (3 * r * r + L * L) / 12.0
        return m, np.diag([ixx, ixx, 0.5 * m * r * r]), np.array([r, r, L / 2.0])
    m1 = density * math.pi * r * r * L          # cylinder part
    m2 = density * 4.0 / 3.0 * math.pi * r ** 3  # the two caps
    ixx = m1 * (0.25 * r * r + L * L / 12.0) + m2 * (0.4 * r * r + 0.375 * r * L + 0.25 * L * L)
    izz = (0.5 * m1 + 0.4 * m2) * r * r
    return m1 + m2, np.diag([ixx, ixx, izz]), np.array([r, r, r + L / 2.0])
