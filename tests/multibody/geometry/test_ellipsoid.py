"""Ellipsoid shape: support function, point distance and the distance queries that use them,
checked against independent computations (a sphere written as an ellipsoid, the closed form
of the halfspace distance, constrained minimization with scipy)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize

from multibody.geometry import (Box, Capsule, Cylinder, Ellipsoid, Halfspace, Sphere,
                                contact_points, signed_distance)


def _random_rotation(rng):
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    w, x, y, z = q
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def _pose(rng, spread=1.0):
    X = np.eye(4)
    X[:3, :3] = _random_rotation(rng)
    X[:3, 3] = rng.uniform(-spread, spread, 3)
    return X


def _surface(radii, n=60):
    th, ph = np.meshgrid(np.linspace(0, np.pi, n), np.linspace(0, 2 * np.pi, 2 * n))
    return np.stack([radii[0] * np.sin(th) * np.cos(ph), radii[1] * np.sin(th) * np.sin(ph),
                     radii[2] * np.cos(th)], -1).reshape(-1, 3)


def test_validation_and_value_semantics():
    e = Ellipsoid((0.3, 0.2, 0.1))
    assert e == Ellipsoid([0.3, 0.2, 0.1]) and hash(e) == hash(Ellipsoid((0.3, 0.2, 0.1)))
    assert e != Ellipsoid((0.3, 0.2, 0.2))
    assert e.bounding_radius == 0.3 and e.is_convex
    for bad in [(0.1, 0.0, 0.1), (0.1, -1, 0.1), (0.1, np.inf, 0.1), (0.1, 0.2), "abc"]:
        with pytest.raises(ValueError, match="Ellipsoid"):
            Ellipsoid(bad)


def test_support_is_the_maximizer_over_the_surface():
    rng = np.random.default_rng(0)
    radii = np.array([0.5, 0.2, 0.05])
    e = Ellipsoid(radii)
    pts = _surface(radii, 120)
    assert np.max(np.linalg.norm(pts, axis=1)) <= e.bounding_radius + 1e-15
    for _ in range(50):
        d = rng.normal(size=3)
        s = e.support(d)
        assert abs(np.sum((s / radii) ** 2) - 1.0) < 1e-14          # on the surface
        assert d @ s >= np.max(pts @ d) - 1e-12                     # no sampled point beats it
        # the support value in closed form: h(d) = |A d|
        assert d @ s == pytest.approx(np.linalg.norm(radii * d), rel=1e-14)
    assert np.allclose(e.support(np.zeros(3)), [0.5, 0, 0])
    assert np.allclose(e.support(np.array([1e-300, 0, 0])), [0.5, 0, 0])


@pytest.mark.parametrize("radii", [(0.5, 0.2, 0.05), (0.3, 0.3, 0.1), (0.1, 0.4, 0.4),
                                   (0.2, 0.2, 0.2)])
def test_point_distance_against_constrained_minimization(radii):
    rng = np.random.default_rng(1)
    radii = np.array(radii)
    e = Ellipsoid(radii)
    points = [rng.normal(size=3) * 0.4 for _ in range(12)]
    points += [rng.normal(size=3) * radii * 0.3 for _ in range(8)]          # inside
    points += [np.array([0.0, 0.0, 0.0]), np.array([0.05, 0.0, 0.0]),       # principal planes
               np.array([0.0, 0.03, 0.0]), np.array([0.02, 0.01, 0.0]), np.array([0.6, 0, 0])]
    grid = _surface(radii, 80)
    for p in points:
        d = e.distance_to_point(p)
        x = e.closest_surface_point(p)
        assert abs(np.sum((x / radii) ** 2) - 1.0) < 1e-12
        # independent: nearest grid point, refined over the angles
        k = int(np.argmin(np.linalg.norm(grid - p, axis=1)))
        gx = grid[k] / radii
        th0, ph0 = math.acos(np.clip(gx[2], -1, 1)), math.atan2(gx[1], gx[0])

        def f(a):
            s = radii * np.array([math.sin(a[0]) * math.cos(a[1]),
                                  math.sin(a[0]) * math.sin(a[1]), math.cos(a[0])])
            return float(np.sum((s - p) ** 2))
        ref = math.sqrt(minimize(f, [th0, ph0], method="Nelder-Mead",
                                 options={"xatol": 1e-12, "fatol": 1e-16, "maxiter": 4000}).fun)
        inside = np.sum((p / radii) ** 2) < 1
        assert (d < 0) == inside
        assert abs(abs(d) - ref) < 1e-7, (p, d, ref)
        assert abs(d) <= ref + 1e-12          # never worse than the independent minimum


def test_sphere_as_ellipsoid_matches_sphere():
    rng = np.random.default_rng(2)
    r = 0.15
    others = [Sphere(0.1), Box((0.3, 0.2, 0.1)), Capsule(0.05, 0.3), Cylinder(0.1, 0.2),
              Halfspace()]
    for other in others:
        for _ in range(15):
            Xa, Xb = _pose(rng, 0.3), _pose(rng, 0.3)
            ref = signed_distance(Sphere(r), Xa, other, Xb)
            got = signed_distance(Ellipsoid((r, r, r)), Xa, other, Xb)
            tol = 1e-6 if ref.distance > 0 else 2e-4
            assert got.distance == pytest.approx(ref.distance, abs=tol), other
            if ref.distance > 1e-3:
                assert np.allclose(got.normal, ref.normal, atol=1e-3)
                assert np.allclose(got.point_b - got.point_a, got.distance * got.normal,
                                   atol=1e-9)


def test_halfspace_against_closed_form():
    rng = np.random.default_rng(3)
    radii = np.array([0.4, 0.1, 0.25])
    e = Ellipsoid(radii)
    for _ in range(30):
        Xh, Xe = _pose(rng, 0.2), _pose(rng, 0.2)
        n = Xh[:3, 2]
        # closed form: distance = n . (c - o) - |A R^T n|
        expected = n @ (Xe[:3, 3] - Xh[:3, 3]) - np.linalg.norm(radii * (Xe[:3, :3].T @ n))
        res = signed_distance(Halfspace(), Xh, e, Xe)
        assert res.distance == pytest.approx(expected, abs=1e-14)
        assert np.allclose(res.normal, n)
        # the witness on the ellipsoid lies on its surface, the other on the plane
        local = Xe[:3, :3].T @ (res.point_b - Xe[:3, 3])
        assert abs(np.sum((local / radii) ** 2) - 1) < 1e-12
        assert abs(n @ (res.point_a - Xh[:3, 3])) < 1e-12
        swapped = signed_distance(e, Xe, Halfspace(), Xh)
        assert swapped.distance == res.distance and np.allclose(swapped.normal, -n)
    # an ellipsoid lying on the ground: one contact point at the lowest point
    X = np.eye(4)
    X[2, 3] = 0.1 - 1e-3
    cps = contact_points(Halfspace(), np.eye(4), Ellipsoid((0.4, 0.2, 0.1)), X)
    assert len(cps) == 1 and cps[0].distance == pytest.approx(-1e-3, abs=1e-15)


def test_ellipsoid_pairs_against_constrained_minimization():
    rng = np.random.default_rng(4)
    ea, eb = Ellipsoid((0.3, 0.1, 0.2)), Ellipsoid((0.05, 0.2, 0.1))
    ra, rb = ea.radii, eb.radii
    checked = 0
    for _ in range(20):
        Xa, Xb = _pose(rng, 0.4), _pose(rng, 0.4)
        res = signed_distance(ea, Xa, eb, Xb)
        if res.distance < 0.02:
            continue

        def dist(z):
            pa = Xa[:3, :3] @ z[:3] + Xa[:3, 3]
            pb = Xb[:3, :3] @ z[3:] + Xb[:3, 3]
            return float(np.sum((pa - pb) ** 2))
        cons = [{"type": "ineq", "fun": lambda z: 1 - np.sum((z[:3] / ra) ** 2)},
                {"type": "ineq", "fun": lambda z: 1 - np.sum((z[3:] / rb) ** 2)}]
        z0 = np.concatenate([Xa[:3, :3].T @ (res.point_a - Xa[:3, 3]),
                             Xb[:3, :3].T @ (res.point_b - Xb[:3, 3])]) * 0.9
        sol = minimize(dist, z0, constraints=cons, method="SLSQP",
                       options={"ftol": 1e-16, "maxiter": 500})
        assert res.distance == pytest.approx(math.sqrt(sol.fun), abs=1e-6)
        checked += 1
    assert checked >= 5
