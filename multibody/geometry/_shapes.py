"""Collision and visual shape primitives (private; re-exported by :mod:`multibody.geometry`).

Every shape is described in its own frame (see MULTIBODY_API.md, "Shapes"):

* ``Sphere(radius)``: centred at the origin.
* ``Box(size)``: full side lengths ``(lx, ly, lz)``, centred at the origin.
* ``Cylinder(radius, length)``: axis along z, ``z in [-length/2, length/2]``.
* ``Capsule(radius, length)``: axis along z, ``length`` between the two cap centres.
* ``Ellipsoid(radii)``: semi-axes ``(a, b, c)`` along x, y, z, centred at the origin.
* ``Halfspace()``: the set ``z <= 0``; boundary plane ``z = 0``, outward normal ``+z``.
* ``Mesh(filename, scale)``: a reference to a mesh file; not loaded, not collidable.

Convex bounded shapes (all but Halfspace and Mesh) give a support function
``support(d) = argmax_{x in shape} d . x`` and a signed distance to a point. For
robust GJK/EPA the rounded shapes are also described as a *core* (a point for the
sphere, a segment for the capsule) swept by a ball of radius ``core radius``
(van den Bergen 2003, "Collision Detection in Interactive 3D Environments", ch. 4).
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

__all__ = ["Shape", "Sphere", "Box", "Cylinder", "Capsule", "Ellipsoid", "Halfspace", "Mesh"]


def _positive(shape: str, name: str, value: float) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{shape}: {name} must be a positive number, got {value!r}") from None
    if not (math.isfinite(x) and x > 0.0):
        raise ValueError(f"{shape}: {name} must be positive and finite, got {value!r}")
    return x


def _vec3(shape: str, name: str, value: Sequence[float]) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{shape}: {name} must be 3 numbers, got {value!r}") from None
    if arr.shape != (3,):
        raise ValueError(f"{shape}: {name} must have 3 entries, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{shape}: {name} must be finite, got {value!r}")
    return arr


def _positive_vec3(shape: str, name: str, labels: tuple, value: Sequence[float]) -> np.ndarray:
    """Three finite, positive numbers (read-only array), each named ``f"{name} {label}"`` in
    the error (``Box: size lx must be positive and finite, got 0``)."""
    arr = _vec3(shape, name, value)
    for label, x in zip(labels, arr):
        _positive(shape, f"{name} {label}", x)
    arr.setflags(write=False)
    return arr


class Shape:
    """Base class of the geometric shapes (shape-frame description only).

    Subclasses fill in :meth:`support`, :meth:`distance_to_point` and the core
    description used by GJK/EPA. Shapes are treated as immutable values.
    """

    #: True for the bounded convex shapes that support distance queries.
    is_convex: bool = False
    #: Radius of the ball centred at the shape origin that encloses the shape.
    bounding_radius: float = math.inf
    #: Radius swept around the core (0 for shapes whose core is the shape itself).
    core_radius: float = 0.0

    def _key(self) -> tuple:
        """Parameters that define the shape (for equality and hashing)."""
        return ()

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._key() == other._key()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._key()))

    def support(self, direction: np.ndarray) -> np.ndarray:
        """Support point ``argmax_{x in shape} direction . x`` in the shape frame, shape (3,)."""
        raise NotImplementedError(
            f"{self!r} has no support function (only bounded convex shapes have one)")

    def core_support(self, direction: np.ndarray) -> np.ndarray:
        """Support point of the core (the shape shrunk by :attr:`core_radius`), shape (3,)."""
        raise NotImplementedError(f"{self!r} has no support function")

    def core_support_xyz(self, x: float, y: float, z: float) -> tuple:
        """:meth:`core_support` on plain floats, returning a tuple (used by GJK/EPA)."""
        raise NotImplementedError(f"{self!r} has no support function")

    def distance_to_point(self, point: np.ndarray) -> float:
        """Signed distance from the shape surface to ``point`` (shape frame; negative inside)."""
        raise NotImplementedError(f"{self!r} has no signed distance function")


class Sphere(Shape):
    """Sphere of the given radius centred at the origin of its frame.

    Parameters
    ----------
    radius : float
        Radius in metres, > 0.
    """

    is_convex = True

    def __init__(self, radius: float) -> None:
        self.radius = _positive("Sphere", "radius", radius)
        self.bounding_radius = self.radius
        self.core_radius = self.radius

    def _key(self) -> tuple:
        return (self.radius,)

    def __repr__(self) -> str:
        return f"Sphere(radius={self.radius!r})"

    def support(self, direction: np.ndarray) -> np.ndarray:
        d = np.asarray(direction, dtype=float)
        n = math.sqrt(d @ d)
        if n == 0.0:
            return np.array([self.radius, 0.0, 0.0])
        return d * (self.radius / n)

    def core_support(self, direction: np.ndarray) -> np.ndarray:
        return np.zeros(3)

    def core_support_xyz(self, x: float, y: float, z: float) -> tuple:
        return (0.0, 0.0, 0.0)

    def distance_to_point(self, point: np.ndarray) -> float:
        p = np.asarray(point, dtype=float)
        return math.sqrt(p @ p) - self.radius


class Box(Shape):
    """Axis-aligned box centred at the origin of its frame.

    Parameters
    ----------
    size : sequence of 3 floats
        Full side lengths ``(lx, ly, lz)`` in metres, each > 0.
    """

    is_convex = True

    def __init__(self, size: Sequence[float]) -> None:
        arr = self.size = _positive_vec3("Box", "size", ("lx", "ly", "lz"), size)
        self.half = arr / 2.0
        self.half.setflags(write=False)
        self._half_tuple = tuple(float(x) for x in self.half)
        self.bounding_radius = float(math.sqrt(self.half @ self.half))

    def _key(self) -> tuple:
        return tuple(float(x) for x in self.size)

    def __repr__(self) -> str:
        lx, ly, lz = (float(x) for x in self.size)
        return f"Box(size=({lx!r}, {ly!r}, {lz!r}))"

    def support(self, direction: np.ndarray) -> np.ndarray:
        d = np.asarray(direction, dtype=float)
        return np.where(d >= 0.0, self.half, -self.half)

    core_support = support

    def core_support_xyz(self, x: float, y: float, z: float) -> tuple:
        hx, hy, hz = self._half_tuple
        return (hx if x >= 0.0 else -hx, hy if y >= 0.0 else -hy, hz if z >= 0.0 else -hz)

    def distance_to_point(self, point: np.ndarray) -> float:
        q = np.abs(np.asarray(point, dtype=float)) - self.half
        outside = np.maximum(q, 0.0)
        return float(math.sqrt(outside @ outside) + min(float(q.max()), 0.0))

    def vertices(self) -> np.ndarray:
        """The 8 corners in the box frame, shape (8, 3)."""
        s = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], float)
        return s * self.half


class Cylinder(Shape):
    """Solid circular cylinder, axis along z, centred at the origin of its frame.

    Parameters
    ----------
    radius : float
        Radius in metres, > 0.
    length : float
        Length along z in metres, > 0; the cylinder spans ``z in [-length/2, length/2]``.
    """

    is_convex = True

    def __init__(self, radius: float, length: float) -> None:
        self.radius = _positive("Cylinder", "radius", radius)
        self.length = _positive("Cylinder", "length", length)
        self.half_length = self.length / 2.0
        self.bounding_radius = math.hypot(self.radius, self.half_length)

    def _key(self) -> tuple:
        return (self.radius, self.length)

    def __repr__(self) -> str:
        return f"Cylinder(radius={self.radius!r}, length={self.length!r})"

    def support(self, direction: np.ndarray) -> np.ndarray:
        d = np.asarray(direction, dtype=float)
        rho = math.hypot(d[0], d[1])
        z = self.half_length if d[2] >= 0.0 else -self.half_length
        if rho == 0.0:
            return np.array([0.0, 0.0, z])
        s = self.radius / rho
        return np.array([d[0] * s, d[1] * s, z])

    core_support = support

    def core_support_xyz(self, x: float, y: float, z: float) -> tuple:
        h = self.half_length if z >= 0.0 else -self.half_length
        rho = math.hypot(x, y)
        if rho == 0.0:
            return (0.0, 0.0, h)
        s = self.radius / rho
        return (x * s, y * s, h)

    def distance_to_point(self, point: np.ndarray) -> float:
        p = np.asarray(point, dtype=float)
        qx = math.hypot(p[0], p[1]) - self.radius
        qz = abs(p[2]) - self.half_length
        return math.hypot(max(qx, 0.0), max(qz, 0.0)) + min(max(qx, qz), 0.0)


class Capsule(Shape):
    """Capsule (segment swept by a ball), axis along z, centred at the origin of its frame.

    Parameters
    ----------
    radius : float
        Radius in metres, > 0.
    length : float
        Distance between the two cap centres in metres, > 0 (caps at ``z = +-length/2``).
    """

    is_convex = True

    def __init__(self, radius: float, length: float) -> None:
        self.radius = _positive("Capsule", "radius", radius)
        self.length = _positive("Capsule", "length", length)
        self.half_length = self.length / 2.0
        self.bounding_radius = self.half_length + self.radius
        self.core_radius = self.radius

    def _key(self) -> tuple:
        return (self.radius, self.length)

    def __repr__(self) -> str:
        return f"Capsule(radius={self.radius!r}, length={self.length!r})"

    def support(self, direction: np.ndarray) -> np.ndarray:
        d = np.asarray(direction, dtype=float)
        n = math.sqrt(d @ d)
        out = d * (self.radius / n) if n > 0.0 else np.zeros(3)
        out[2] += self.half_length if d[2] >= 0.0 else -self.half_length
        return out

    def core_support(self, direction: np.ndarray) -> np.ndarray:
        return np.array([0.0, 0.0, self.half_length if direction[2] >= 0.0 else -self.half_length])

    def core_support_xyz(self, x: float, y: float, z: float) -> tuple:
        return (0.0, 0.0, self.half_length if z >= 0.0 else -self.half_length)

    def distance_to_point(self, point: np.ndarray) -> float:
        p = np.asarray(point, dtype=float)
        z = min(max(p[2], -self.half_length), self.half_length)
        return math.sqrt(p[0] ** 2 + p[1] ** 2 + (p[2] - z) ** 2) - self.radius


class Ellipsoid(Shape):
    """Solid ellipsoid ``(x/a)^2 + (y/b)^2 + (z/c)^2 <= 1`` centred at the origin of its frame.

    Parameters
    ----------
    radii : sequence of 3 floats
        Semi-axes ``(a, b, c)`` along x, y and z in metres, each > 0.

    Notes
    -----
    Support function: with ``A = diag(a, b, c)``, ``support(d) = A^2 d / |A d|`` (the image
    of the unit sphere's support point ``A d / |A d|`` under ``A``). The signed distance to a
    point has no closed form; :meth:`distance_to_point` finds the closest surface point
    ``x_i = a_i^2 p_i / (a_i^2 + t)`` by bisection on the Lagrange multiplier ``t``
    (D. Eberly, "Distance from a Point to an Ellipse, an Ellipsoid, or a Hyperellipsoid",
    Geometric Tools, 2013), to rounding.
    """

    is_convex = True

    def __init__(self, radii: Sequence[float]) -> None:
        arr = self.radii = _positive_vec3("Ellipsoid", "radius", ("a", "b", "c"), radii)
        self._r = tuple(float(x) for x in arr)
        self.bounding_radius = float(arr.max())

    def _key(self) -> tuple:
        return self._r

    def __repr__(self) -> str:
        a, b, c = self._r
        return f"Ellipsoid(radii=({a!r}, {b!r}, {c!r}))"

    def support(self, direction: np.ndarray) -> np.ndarray:
        d = np.asarray(direction, dtype=float)
        return np.array(self.core_support_xyz(float(d[0]), float(d[1]), float(d[2])))

    core_support = support

    def core_support_xyz(self, x: float, y: float, z: float) -> tuple:
        a, b, c = self._r
        ax, by, cz = a * x, b * y, c * z
        big = max(abs(ax), abs(by), abs(cz))
        if big == 0.0:
            return (a, 0.0, 0.0)
        ax, by, cz = ax / big, by / big, cz / big       # scaled: no overflow or underflow
        n = math.sqrt(ax * ax + by * by + cz * cz)
        return (a * ax / n, b * by / n, c * cz / n)

    def closest_surface_point(self, point: np.ndarray) -> np.ndarray:
        """The point of the ellipsoid's surface nearest to ``point`` (shape frame), shape (3,).

        Solved in the first octant (the problem is symmetric in each sign) with the semi-axes
        sorted, following Eberly (2013): for ``y_i > 0`` the nearest point is
        ``x_i = a_i^2 y_i / (a_i^2 + t)`` with ``t`` the root of the decreasing function
        ``F(t) = sum_i (a_i y_i / (a_i^2 + t))^2 - 1`` (bisection to rounding); zero
        coordinates are handled by the lower-dimensional cases, including interior points on
        a principal plane whose nearest point lies off it.
        """
        p = np.asarray(point, dtype=float)
        sign = np.where(p < 0.0, -1.0, 1.0)
        order = np.argsort(-self.radii, kind="stable")      # a0 >= a1 >= a2
        x = _ellipsoid_octant(self.radii[order], np.abs(p)[order])
        out = np.empty(3)
        out[order] = x
        return out * sign

    def distance_to_point(self, point: np.ndarray) -> float:
        p = np.asarray(point, dtype=float)
        x = self.closest_surface_point(p)
        dist = float(np.linalg.norm(p - x))
        inside = float(np.sum((p / self.radii) ** 2)) < 1.0
        return -dist if inside else dist


def _ellipsoid_root(e: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Nearest surface point for ``y > 0`` (every entry): bisection on ``t`` in
    ``[-a_min^2 + a_min y_min, |a y|]``, where ``F >= 0`` at the left end and ``F <= 0`` at
    the right end."""
    e2 = e * e
    k = int(np.argmin(e))
    lo = -float(e2[k]) + float(e[k] * y[k])
    hi = float(np.linalg.norm(e * y))
    for _ in range(2100):            # bisection halves the bracket until it stops moving
        t = 0.5 * (lo + hi)
        if t <= lo or t >= hi:
            break
        r = e * y / (e2 + t)
        if float(r @ r) > 1.0:
            lo = t
        else:
            hi = t
    return e2 * y / (e2 + 0.5 * (lo + hi))


def _ellipsoid_octant(e: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Nearest surface point for ``y >= 0`` and semi-axes ``e`` sorted decreasingly (any
    dimension; Eberly 2013, sections 3-4)."""
    n = e.size
    x = np.zeros(n)
    if n == 1:
        x[0] = e[0]
        return x
    if y[-1] > 0.0:
        pos = y > 0.0
        x[pos] = _ellipsoid_root(e[pos], y[pos])
        return x
    denom = e[:-1] ** 2 - e[-1] ** 2
    numer = e[:-1] * y[:-1]
    if np.all(numer < denom):          # an interior point whose nearest point is off the plane
        xde = numer / denom
        discr = 1.0 - float(xde @ xde)
        if discr > 0.0:
            x[:-1] = e[:-1] * xde
            x[-1] = e[-1] * math.sqrt(discr)
            return x
    x[:-1] = _ellipsoid_octant(e[:-1], y[:-1])
    return x


class Halfspace(Shape):
    """The half space ``z <= 0`` of its frame (boundary plane ``z = 0``, outward normal ``+z``)."""

    is_convex = False

    def __repr__(self) -> str:
        return "Halfspace()"

    def distance_to_point(self, point: np.ndarray) -> float:
        return float(point[2])


class Mesh(Shape):
    """Reference to a mesh file (for visuals and export); not loaded and not collidable.

    Parameters
    ----------
    filename : str
        Path or URI of the mesh file, kept as given.
    scale : sequence of 3 floats, optional
        Per-axis scale factors, finite and non-zero (negative values mirror).
    """

    is_convex = False

    def __init__(self, filename: str, scale: Sequence[float] = (1.0, 1.0, 1.0)) -> None:
        if not isinstance(filename, str) or not filename:
            raise ValueError(f"Mesh: filename must be a non-empty string, got {filename!r}")
        self.filename = filename
        arr = _vec3("Mesh", "scale", scale)
        if np.any(arr == 0.0):
            raise ValueError(f"Mesh {filename!r}: scale entries must be non-zero, got {scale!r}")
        self.scale = arr
        self.scale.setflags(write=False)

    def _key(self) -> tuple:
        return (self.filename, tuple(float(x) for x in self.scale))

    def __repr__(self) -> str:
        s = tuple(float(x) for x in self.scale)
        return f"Mesh(filename={self.filename!r}, scale={s!r})"
