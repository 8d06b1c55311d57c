"""Tests of multibody.geometry: shapes, signed distance, contact manifolds, filtering."""
from __future__ import annotations

import math
import zlib
from types import SimpleNamespace

import numpy as np
import pytest

from multibody.geometry import (
    Box, CandidatePair, Capsule, CollisionFilter, ContactPoint, Cylinder, DistanceResult,
    Halfspace, Mesh, Sphere, contact_points, signed_distance,
)
from multibody.geometry._gjk import gjk_epa

CONVEX = ("sphere", "box", "capsule", "cylinder")


# ----------------------------------------------------------------------------- helpers
def rot(axis, angle):
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + math.sin(angle) * K + (1 - math.cos(angle)) * K @ K


def pose(p=(0, 0, 0), R=np.eye(3)):
    X = np.eye(4)
    X[:3, :3] = R
    X[:3, 3] = p
    return X


def random_rotation(rng):
    q = rng.normal(size=4)
    w, x, y, z = q / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def random_pose(rng, spread):
    return pose(rng.normal(size=3) * spread, random_rotation(rng))


def random_shape(kind, rng):
    if kind == "sphere":
        return Sphere(rng.uniform(0.2, 0.8))
    if kind == "box":
        return Box(rng.uniform(0.2, 1.5, size=3))
    if kind == "capsule":
        return Capsule(rng.uniform(0.15, 0.6), rng.uniform(0.2, 1.5))
    if kind == "cylinder":
        return Cylinder(rng.uniform(0.2, 0.8), rng.uniform(0.2, 1.5))
    return Halfspace()


def world_support_value(shape, X, U):
    """h(u) = max_{x in shape} u.x for rows u of U, written independently of shape.support."""
    R, p = X[:3, :3], X[:3, 3]
    L = U @ R  # directions in the shape frame
    base = U @ p
    norms = np.linalg.norm(U, axis=1)
    if isinstance(shape, Sphere):
        return base + shape.radius * norms
    if isinstance(shape, Box):
        return base + np.abs(L) @ shape.half
    if isinstance(shape, Capsule):
        return base + shape.radius * norms + shape.half_length * np.abs(L[:, 2])
    if isinstance(shape, Cylinder):
        return base + shape.radius * np.hypot(L[:, 0], L[:, 1]) + shape.half_length * np.abs(L[:, 2])
    raise TypeError(shape)


def gap(sa, Xa, sb, Xb, U):
    """min_{b} u.b - max_{a} u.a: the signed distance is the maximum of this over unit u."""
    return -world_support_value(sb, Xb, -U) - world_support_value(sa, Xa, U)


def surface_distance(shape, X, p):
    return shape.distance_to_point((p - X[:3, 3]) @ X[:3, :3])


def check_invariants(sa, Xa, sb, Xb, r, tol):
    assert isinstance(r, DistanceResult)
    assert np.isfinite(r.distance)
    assert abs(np.linalg.norm(r.normal) - 1.0) < 1e-12
    assert abs(surface_distance(sa, Xa, r.point_a)) < tol
    assert abs(surface_distance(sb, Xb, r.point_b)) < tol
    np.testing.assert_allclose(r.point_b - r.point_a, r.distance * r.normal, atol=tol)
    swapped = signed_distance(sb, Xb, sa, Xa)
    assert abs(swapped.distance - r.distance) < tol
    # EPA on curved shapes resolves the normal to about sqrt(tolerance)
    np.testing.assert_allclose(swapped.normal, -r.normal, atol=1e-5 if tol > 1e-9 else 1e-9)
    # witness points need not be unique (face contacts), but they must be on the surfaces
    assert abs(surface_distance(sb, Xb, swapped.point_a)) < tol
    assert abs(surface_distance(sa, Xa, swapped.point_b)) < tol


# ----------------------------------------------------------------------------- shapes
@pytest.mark.parametrize("make", [
    lambda: Sphere(0.0), lambda: Sphere(-1.0), lambda: Sphere(float("nan")),
    lambda: Box((1.0, 0.0, 1.0)), lambda: Box((1.0, 1.0)), lambda: Box((1.0, -2.0, 1.0)),
    lambda: Cylinder(0.0, 1.0), lambda: Cylinder(1.0, -1.0), lambda: Capsule(-0.1, 1.0),
    lambda: Capsule(0.1, 0.0), lambda: Mesh(""), lambda: Mesh("a.stl", (1.0, 0.0, 1.0)),
    lambda: Sphere("big"),
])
def test_invalid_sizes_raise_value_error(make):
    with pytest.raises(ValueError):
        make()


def test_repr_names_shape_and_sizes():
    assert repr(Sphere(0.5)) == "Sphere(radius=0.5)"
    assert repr(Box((1, 2, 3))) == "Box(size=(1.0, 2.0, 3.0))"
    assert repr(Cylinder(0.5, 2)) == "Cylinder(radius=0.5, length=2.0)"
    assert repr(Capsule(0.5, 2)) == "Capsule(radius=0.5, length=2.0)"
    assert repr(Halfspace()) == "Halfspace()"
    assert repr(Mesh("m.obj", (2, 2, 2))) == "Mesh(filename='m.obj', scale=(2.0, 2.0, 2.0))"


@pytest.mark.parametrize("kind", CONVEX)
def test_support_is_on_surface_maximal_and_bounded(kind):
    rng = np.random.default_rng(1)
    shape = random_shape(kind, rng)
    U = rng.normal(size=(200, 3))
    h = world_support_value(shape, np.eye(4), U)
    for u, hu in zip(U, h):
        s = shape.support(u)
        assert abs(u @ s - hu) < 1e-12
        assert abs(shape.distance_to_point(s)) < 1e-12
        assert np.linalg.norm(s) <= shape.bounding_radius + 1e-12


def test_distance_to_point_known_values():
    assert Sphere(1.0).distance_to_point([0, 3, 4]) == pytest.approx(4.0)
    box = Box((2, 4, 6))
    assert box.distance_to_point([0, 0, 0]) == pytest.approx(-1.0)
    assert box.distance_to_point([2, 0, 0]) == pytest.approx(1.0)
    assert box.distance_to_point([4, 5, 3]) == pytest.approx(math.hypot(3, 3))
    cyl = Cylinder(1.0, 2.0)
    assert cyl.distance_to_point([0, 0, 0.5]) == pytest.approx(-0.5)
    assert cyl.distance_to_point([4, 0, 5]) == pytest.approx(5.0)
    cap = Capsule(0.5, 2.0)
    assert cap.distance_to_point([0, 0, 3]) == pytest.approx(1.5)
    assert cap.distance_to_point([1, 0, 0.3]) == pytest.approx(0.5)
    assert Halfspace().distance_to_point([5, 5, -2]) == -2


def test_support_refused_for_unbounded_or_mesh():
    with pytest.raises(NotImplementedError, match="Halfspace"):
        Halfspace().support(np.ones(3))
    with pytest.raises(NotImplementedError, match="Mesh"):
        Mesh("m.stl").support(np.ones(3))


# ----------------------------------------------------------------------------- analytic pairs
S2 = math.sqrt(2.0)
ANALYTIC_CASES = {
    # name: (shape_a, pose_a, shape_b, pose_b, distance, normal)
    "sphere-sphere separated": (Sphere(1.0), pose(), Sphere(0.5), pose((2, 0, 0)), 0.5, (1, 0, 0)),
    "sphere-sphere touching": (Sphere(1.0), pose(), Sphere(0.5), pose((0, 1.5, 0)), 0.0, (0, 1, 0)),
    "sphere-sphere penetrating": (Sphere(1.0), pose(), Sphere(0.5), pose((0, 0, -1)), -0.5, (0, 0, -1)),
    "halfspace-sphere separated": (Halfspace(), pose(), Sphere(1.0), pose((3, 1, 2)), 1.0, (0, 0, 1)),
    "halfspace-sphere touching": (Halfspace(), pose(), Sphere(1.0), pose((0, 0, 1)), 0.0, (0, 0, 1)),
    "halfspace-sphere tilted": (Halfspace(), pose((0, 0, 1), rot((1, 0, 0), math.pi / 2)),
                                Sphere(0.5), pose((0, -0.2, 0)), -0.3, (0, -1, 0)),
    "box-sphere face": (Box((2, 2, 2)), pose(), Sphere(0.5), pose((2, 0, 0)), 0.5, (1, 0, 0)),
    "box-sphere touching": (Box((2, 2, 2)), pose(), Sphere(0.5), pose((0, 0, -1.5)), 0.0, (0, 0, -1)),
    "box-sphere edge": (Box((2, 2, 2)), pose(), Sphere(0.5), pose((2, 2, 0)), S2 - 0.5,
                        (1 / S2, 1 / S2, 0)),
    "box-sphere penetrating": (Box((2, 2, 2)), pose(), Sphere(0.5), pose((1.2, 0, 0)), -0.3, (1, 0, 0)),
    "box-sphere centre inside": (Box((2, 2, 2)), pose(), Sphere(0.5), pose((0, 0.6, 0)), -0.9,
                                 (0, 1, 0)),
    "sphere-capsule side": (Sphere(0.5), pose((2, 0, 0.5)), Capsule(0.5, 2), pose(), 1.0, (-1, 0, 0)),
    "sphere-capsule cap": (Sphere(0.5), pose((0, 0, 2.5)), Capsule(0.5, 2), pose(), 0.5, (0, 0, -1)),
    "sphere-capsule penetrating": (Sphere(0.5), pose((0.8, 0, 0)), Capsule(0.5, 2), pose(), -0.2,
                                   (-1, 0, 0)),
    "capsule-capsule crossed": (Capsule(0.5, 2), pose(), Capsule(0.5, 2),
                                pose((0, 1.5, 0), rot((0, 1, 0), math.pi / 2)), 0.5, (0, 1, 0)),
    "capsule-capsule touching": (Capsule(0.5, 2), pose(), Capsule(0.25, 1),
                                 pose((0.75, 0, 0.2)), 0.0, (1, 0, 0)),
    "capsule-capsule end to end": (Capsule(0.5, 2), pose(), Capsule(0.5, 2), pose((0, 0, 2.8)),
                                   -0.2, (0, 0, 1)),
    "halfspace-capsule upright": (Halfspace(), pose(), Capsule(0.5, 2), pose((0, 0, 2)), 0.5,
                                  (0, 0, 1)),
    "halfspace-capsule lying": (Halfspace(), pose(), Capsule(0.5, 2),
                                pose((0, 0, 0.3), rot((1, 0, 0), math.pi / 2)), -0.2, (0, 0, 1)),
    "halfspace-box resting": (Halfspace(), pose(), Box((1, 1, 1)), pose((0, 0, 0.5)), 0.0, (0, 0, 1)),
    "halfspace-box sunk": (Halfspace(), pose(), Box((1, 1, 1)), pose((0, 0, 0.4)), -0.1, (0, 0, 1)),
    "halfspace-box on edge": (Halfspace(), pose(), Box((1, 1, 1)),
                              pose((0, 0, 1), rot((1, 0, 0), math.pi / 4)), 1 - 1 / S2, (0, 0, 1)),
    "halfspace-cylinder upright": (Halfspace(), pose(), Cylinder(0.5, 2), pose((0, 0, 1.5)), 0.5,
                                   (0, 0, 1)),
    "halfspace-cylinder lying": (Halfspace(), pose(), Cylinder(0.5, 2),
                                 pose((0, 0, 0.4), rot((0, 1, 0), math.pi / 2)), -0.1, (0, 0, 1)),
    "halfspace-cylinder tilted": (Halfspace(), pose(), Cylinder(0.5, 2),
                                  pose((0, 0, 2), rot((0, 1, 0), 0.3)),
                                  2 - math.cos(0.3) - 0.5 * math.sin(0.3), (0, 0, 1)),
    "cylinder-sphere side": (Cylinder(1, 2), pose(), Sphere(0.5), pose((2, 0, 0)), 0.5, (1, 0, 0)),
    "cylinder-sphere cap": (Cylinder(1, 2), pose(), Sphere(0.5), pose((0.3, 0, 2)), 0.5, (0, 0, 1)),
    "cylinder-sphere rim": (Cylinder(1, 2), pose(), Sphere(0.5), pose((0, 2, 2)), S2 - 0.5,
                            (0, 1 / S2, 1 / S2)),
    "cylinder-sphere touching": (Cylinder(1, 2), pose(), Sphere(0.5), pose((0, 0, -1.5)), 0.0,
                                 (0, 0, -1)),
    "cylinder-sphere centre inside": (Cylinder(1, 2), pose(), Sphere(0.5), pose((0.8, 0, 0)),
                                      -0.7, (1, 0, 0)),
    "box-box separated": (Box((1, 1, 1)), pose(), Box((1, 1, 1)), pose((2, 0, 0)), 1.0, (1, 0, 0)),
    "box-box touching": (Box((1, 1, 1)), pose(), Box((1, 1, 1)), pose((0.3, 1, 0.2)), 0.0, (0, 1, 0)),
    "box-box penetrating": (Box((1, 1, 1)), pose(), Box((1, 1, 1)), pose((0.8, 0.1, 0)), -0.2,
                            (1, 0, 0)),
    "box-box rotated vertex": (Box((1, 1, 1)), pose(), Box((1, 1, 1)),
                               pose((1.5, 0, 0), rot((0, 0, 1), math.pi / 4)), 1 - 1 / S2,
                               (1, 0, 0)),
}


@pytest.mark.parametrize("name", sorted(ANALYTIC_CASES))
def test_known_distances(name):
    sa, Xa, sb, Xb, dist, normal = ANALYTIC_CASES[name]
    r = signed_distance(sa, Xa, sb, Xb)
    assert r.distance == pytest.approx(dist, abs=1e-12)
    np.testing.assert_allclose(r.normal, normal, atol=1e-12)
    check_invariants(sa, Xa, sb, Xb, r, 1e-12)


def test_known_distance_general_pairs():
    # box-capsule, box-cylinder, capsule-cylinder, cylinder-cylinder (GJK/EPA)
    r = signed_distance(Box((2, 2, 2)), pose(), Capsule(0.5, 2), pose((2.5, 0, 0)))
    assert r.distance == pytest.approx(1.0, abs=1e-9)
    r = signed_distance(Box((2, 2, 2)), pose(), Capsule(0.5, 2), pose((0, 0, 1.8)))
    assert r.distance == pytest.approx(-0.7, abs=1e-9)
    np.testing.assert_allclose(r.normal, (0, 0, 1), atol=1e-9)
    r = signed_distance(Box((2, 2, 2)), pose(), Cylinder(0.5, 1), pose((0, 0, 1.3)))
    assert r.distance == pytest.approx(-0.2, abs=1e-9)
    r = signed_distance(Cylinder(1, 2), pose(), Cylinder(1, 2),
                        pose((3, 0, 0), rot((1, 0, 0), 0.7)))
    assert r.distance == pytest.approx(1.0, abs=1e-7)
    r = signed_distance(Capsule(0.5, 2), pose(), Cylinder(1, 2), pose((0, 0, 2.3)))
    assert r.distance == pytest.approx(-0.2, abs=1e-9)
    np.testing.assert_allclose(r.normal, (0, 0, 1), atol=1e-9)


# ----------------------------------------------------------------------------- invariants
ALL_PAIRS = [(a, b) for a in CONVEX + ("halfspace",) for b in CONVEX + ("halfspace",)
             if not (a == "halfspace" and b == "halfspace")]


@pytest.mark.parametrize("kind_a,kind_b", ALL_PAIRS)
def test_pair_invariants_random_poses(kind_a, kind_b):
    """Witnesses on the surfaces, point_b - point_a = distance * normal, unit normal, swap
    symmetry, and the distance equals max over unit u of the gap along u (independent
    support functions): the gap along the normal equals the distance and no direction
    has a larger gap."""
    rng = np.random.default_rng(zlib.crc32(f"{kind_a}-{kind_b}".encode()))
    curved = "cylinder" in (kind_a, kind_b) and kind_a != "halfspace" and kind_b != "halfspace"
    tol = 1e-8 if curved else 1e-9
    signs = set()
    for trial in range(12):
        sa, sb = random_shape(kind_a, rng), random_shape(kind_b, rng)
        Xa, Xb = random_pose(rng, 0.6), random_pose(rng, 0.6)
        r = signed_distance(sa, Xa, sb, Xb)
        check_invariants(sa, Xa, sb, Xb, r, tol)
        signs.add(r.distance > 0)
        # translating B by -distance * normal brings the shapes exactly into touch
        Xt = Xb.copy()
        Xt[:3, 3] -= r.distance * r.normal
        assert abs(signed_distance(sa, Xa, sb, Xt).distance) < tol
        if "halfspace" in (kind_a, kind_b):
            hs_is_a = kind_a == "halfspace"
            Xh, so, Xo = (Xa, sb, Xb) if hs_is_a else (Xb, sa, Xa)
            n = Xh[:3, 2]
            expected = -world_support_value(so, Xo, -n[None])[0] - n @ Xh[:3, 3]
            assert r.distance == pytest.approx(expected, abs=1e-12)
            np.testing.assert_allclose(r.normal, n if hs_is_a else -n, atol=1e-12)
            continue
        assert gap(sa, Xa, sb, Xb, r.normal[None])[0] == pytest.approx(r.distance, abs=tol)
        U = np.vstack([rng.normal(size=(300, 3)), r.normal + 0.05 * rng.normal(size=(200, 3))])
        U /= np.linalg.norm(U, axis=1)[:, None]
        assert gap(sa, Xa, sb, Xb, U).max() <= r.distance + tol
    assert signs == {True, False}, "random poses must cover separated and penetrating cases"


@pytest.mark.parametrize("kind_a,kind_b", [("sphere", "box"), ("capsule", "capsule"),
                                           ("box", "box"), ("sphere", "capsule"),
                                           ("sphere", "cylinder")])
def test_gjk_epa_matches_analytic(kind_a, kind_b):
    rng = np.random.default_rng(7)
    worst = 0.0
    n_pen = 0
    for seed in range(60):
        sa, sb = random_shape(kind_a, rng), random_shape(kind_b, rng)
        Xa, Xb = random_pose(rng, 0.6), random_pose(rng, 0.6)
        r = signed_distance(sa, Xa, sb, Xb)
        d, pa, pb, n = gjk_epa(sa, Xa, sb, Xb)
        n_pen += r.distance < 0
        worst = max(worst, abs(d - r.distance))
        if abs(r.distance) > 1e-3:  # normals are unique away from contact
            np.testing.assert_allclose(n, r.normal, atol=1e-5)
    assert worst < 1e-6
    assert 5 < n_pen < 55


@pytest.mark.parametrize("kind_a,kind_b", [("box", "box"), ("box", "capsule"),
                                           ("box", "cylinder"), ("capsule", "cylinder"),
                                           ("cylinder", "cylinder")])
def test_against_coal(kind_a, kind_b):
    """coal (hpp-fcl's successor) as an independent reference: distances to 1e-6 when
    separated (1e-5 with a cylinder: coal's own GJK tolerance), depths to 1e-4."""
    coal = pytest.importorskip("coal")

    def coal_shape(s):
        if isinstance(s, Box):
            return coal.Box(*s.size)
        if isinstance(s, Capsule):
            return coal.Capsule(s.radius, s.length)
        return coal.Cylinder(s.radius, s.length)

    rng = np.random.default_rng(zlib.crc32(f"coal {kind_a}-{kind_b}".encode()))
    curved = "cylinder" in (kind_a, kind_b)
    counts = {True: 0, False: 0}
    for _ in range(150 if kind_a == kind_b == "box" else 60):
        a, b = random_shape(kind_a, rng), random_shape(kind_b, rng)
        Xa, Xb = random_pose(rng, 0.7), random_pose(rng, 0.7)
        r = signed_distance(a, Xa, b, Xb)
        req, res = coal.DistanceRequest(), coal.DistanceResult()
        coal.distance(coal_shape(a), coal.Transform3s(Xa[:3, :3], Xa[:3, 3]),
                      coal_shape(b), coal.Transform3s(Xb[:3, :3], Xb[:3, 3]), req, res)
        ref = res.min_distance
        separated = r.distance > 0
        counts[separated] += 1
        if abs(r.distance) > 1e-5:
            assert (ref > 0) == separated
        tol = (1e-5 if curved else 1e-6) if separated else 1e-4
        assert r.distance == pytest.approx(ref, abs=tol)
    assert min(counts.values()) > 8


# ----------------------------------------------------------------------------- manifolds
@pytest.mark.parametrize("swap", [False, True])
def test_box_resting_on_halfspace_gives_four_corners(swap):
    R_plane = rot((1, 1, 0), 0.3)
    Xh = pose((0.2, -0.1, 0.5), R_plane)
    n = R_plane[:, 2]
    depth = 0.01
    box = Box((0.4, 0.6, 0.2))
    Xb = pose(Xh[:3, 3] + (0.1 - depth) * n, R_plane @ rot((0, 0, 1), 0.4))
    args = (box, Xb, Halfspace(), Xh) if swap else (Halfspace(), Xh, box, Xb)
    pts = contact_points(*args, margin=1e-3)
    assert len(pts) == 4
    for c in pts:
        assert isinstance(c, ContactPoint)
        assert c.distance == pytest.approx(-depth, abs=1e-12)
        np.testing.assert_allclose(c.normal, -n if swap else n, atol=1e-12)
        np.testing.assert_allclose(c.point_b - c.point_a, c.distance * c.normal, atol=1e-12)
    corners = box.vertices() @ Xb[:3, :3].T + Xb[:3, 3]
    on_box = [c.point_a if swap else c.point_b for c in pts]
    for p in on_box:
        assert np.min(np.linalg.norm(corners - p, axis=1)) < 1e-12
    # lifted above the margin: no contact; tilted: the one lowest corner
    assert contact_points(Halfspace(), Xh, box, pose(Xb[:3, 3] + 0.02 * n, Xb[:3, :3])) == []
    tilted = pose(Xh[:3, 3] + 0.15 * n, R_plane @ rot((1, 0.5, 0), 0.3))
    assert len(contact_points(Halfspace(), Xh, box, tilted, margin=0.0)) == 1


def test_cylinder_and_capsule_on_halfspace():
    cyl = Cylinder(0.3, 1.0)
    standing = contact_points(Halfspace(), pose(), cyl, pose((0, 0, 0.49)))
    assert len(standing) == 4
    for c in standing:
        assert c.distance == pytest.approx(-0.01)
        assert math.hypot(c.point_b[0], c.point_b[1]) == pytest.approx(0.3)
    lying = contact_points(Halfspace(), pose(), cyl, pose((0, 0, 0.29), rot((1, 0, 0), math.pi / 2)))
    assert len(lying) == 2
    assert sorted(round(c.point_b[1], 9) for c in lying) == [-0.5, 0.5]
    tilted = contact_points(Halfspace(), pose(), cyl, pose((0, 0, 0.5), rot((1, 0, 0), 0.4)))
    assert len(tilted) == 1
    expected = 0.5 - 0.5 * math.cos(0.4) - 0.3 * math.sin(0.4)
    assert tilted[0].distance == pytest.approx(expected)
    cap = contact_points(Halfspace(), pose(), Capsule(0.2, 1.0),
                         pose((0, 0, 0.15), rot((0, 1, 0), math.pi / 2)))
    assert len(cap) == 2 and all(c.distance == pytest.approx(-0.05) for c in cap)


def test_box_on_box_face_manifold():
    big, small = Box((2, 2, 1)), Box((0.5, 0.5, 0.5))
    Xs = pose((0.1, 0.2, 0.74), rot((0, 0, 1), 0.3))
    pts = contact_points(big, pose(), small, Xs)
    assert len(pts) == 4
    for c in pts:
        assert c.distance == pytest.approx(-0.01, abs=1e-12)
        np.testing.assert_allclose(c.normal, (0, 0, 1), atol=1e-12)
        assert c.point_a[2] == pytest.approx(0.5)
        assert abs(small.distance_to_point((c.point_b - Xs[:3, 3]) @ Xs[:3, :3])) < 1e-12
    swapped = contact_points(small, Xs, big, pose())
    assert len(swapped) == 4
    np.testing.assert_allclose(swapped[0].normal, (0, 0, -1), atol=1e-12)
    # equal squares, one turned 45 degrees: the octagon of their intersection
    octagon = contact_points(Box((1, 1, 1)), pose(), Box((1, 1, 1)),
                             pose((0, 0, 0.99), rot((0, 0, 1), math.pi / 4)))
    assert len(octagon) == 8
    for c in octagon:
        assert c.distance == pytest.approx(-0.01, abs=1e-12)
        assert max(abs(c.point_a[0]), abs(c.point_a[1])) <= 0.5 + 1e-12
    # resting with a small gap inside the margin still gives the face
    gap_pts = contact_points(big, pose(), small, pose((0, 0, 0.755)), margin=0.01)
    assert len(gap_pts) == 4 and all(c.distance == pytest.approx(0.005) for c in gap_pts)
    assert contact_points(big, pose(), small, pose((0, 0, 0.755))) == []


def test_single_point_pairs_match_signed_distance():
    a, b = Capsule(0.3, 1.0), Box((1, 1, 1))
    Xa, Xb = pose((0, 0, 1.5), rot((1, 0, 0), 0.3)), pose()
    r = signed_distance(a, Xa, b, Xb)
    assert r.distance == pytest.approx(1.5 - 0.5 * math.cos(0.3) - 0.3 - 0.5)
    (c,) = contact_points(a, Xa, b, Xb, margin=0.5)
    assert c.distance == pytest.approx(r.distance)
    np.testing.assert_allclose(c.point_a, r.point_a, atol=1e-12)
    assert contact_points(a, Xa, b, Xb, margin=0.0) == []
    with pytest.raises(ValueError, match="margin"):
        contact_points(a, Xa, b, Xb, margin=-1.0)


# ----------------------------------------------------------------------------- errors
def test_distance_errors_name_the_problem():
    with pytest.raises(NotImplementedError, match="Mesh"):
        signed_distance(Mesh("robot.stl"), pose(), Sphere(1.0), pose())
    with pytest.raises(NotImplementedError, match="Mesh"):
        contact_points(Halfspace(), pose(), Mesh("robot.stl"), pose())
    with pytest.raises(ValueError, match="Halfspace-Halfspace"):
        signed_distance(Halfspace(), pose(), Halfspace(), pose())
    with pytest.raises(ValueError, match="pose_b"):
        signed_distance(Sphere(1.0), pose(), Sphere(1.0), np.eye(3))
    with pytest.raises(TypeError):
        signed_distance("sphere", pose(), Sphere(1.0), pose())
    bad = pose()
    bad[0, 3] = np.nan
    with pytest.raises(RuntimeError, match="non-finite"):
        signed_distance(Sphere(1.0), bad, Box((1, 1, 1)), pose())


# ----------------------------------------------------------------------------- filtering
def geom(name, body, shape, p=(0, 0, 0)):
    return SimpleNamespace(name=name, body=body, shape=shape, pose=pose(p))


def test_filter_rules():
    f = CollisionFilter()
    assert f.is_filtered("a", "a")
    assert f.is_filtered("a", "b", parent_child=True)
    assert not f.is_filtered("a", "b")
    f.add_filter_group("hand", ["palm", "f1", "f2"])
    assert f.is_filtered("f1", "f2") and f.is_filtered("palm", "f2")
    assert not f.is_filtered("f1", "arm")
    f.exclude_pair("arm", "torso")
    assert f.is_filtered("torso", "arm")
    assert not CollisionFilter(skip_parent_child=False).is_filtered("a", "b", parent_child=True)
    with pytest.raises(ValueError, match="hand"):
        f.add_filter_group("hand", ["x"])
    with pytest.raises(ValueError, match="single string"):
        f.add_filter_group("other", "palm")


def test_candidate_pairs_filtering_and_broad_phase():
    geoms = [
        geom("floor", "world", Halfspace()),
        geom("base_box", "base", Box((0.2, 0.2, 0.2))),
        geom("base_ball", "base", Sphere(0.1), (0.3, 0, 0)),
        geom("link1_cap", "link1", Capsule(0.05, 0.3)),
        geom("link2_ball", "link2", Sphere(0.1)),
        geom("far_ball", "far", Sphere(0.1)),
        geom("visual_mesh", "link2", Mesh("x.stl")),
    ]
    body_poses = {"world": np.eye(4), "base": pose((0, 0, 0.5)), "link1": pose((0, 0, 0.6)),
                  "link2": pose((0.25, 0, 0.55)), "far": pose((5, 5, 0.05))}
    tree = [("world", "base"), ("base", "link1"), ("link1", "link2")]
    names = lambda pairs: {(p.geometry_a.name, p.geometry_b.name) for p in pairs}

    pairs = CollisionFilter().candidate_pairs(geoms, body_poses, tree)
    assert all(isinstance(p, CandidatePair) for p in pairs)
    # floor-base: parent/child; base_box-base_ball: same body; base-link1 and link1-link2:
    # parent/child; floor only reaches bodies whose bounding sphere crosses its plane.
    assert names(pairs) == {("base_box", "link2_ball"), ("base_ball", "link2_ball"),
                            ("floor", "far_ball")}
    p = next(p for p in pairs if p.geometry_b.name == "link2_ball")
    np.testing.assert_allclose(p.pose_b[:3, 3], (0.25, 0, 0.55))

    keep = CollisionFilter(skip_parent_child=False).candidate_pairs(
        geoms, body_poses, lambda a, b: (a, b) in tree)
    assert ("base_box", "link1_cap") in names(keep) and ("link1_cap", "link2_ball") in names(keep)
    assert ("base_box", "base_ball") not in names(keep)

    f = CollisionFilter()
    f.add_filter_group("arm", ["base", "link2"])
    f.exclude_pair("world", "far")
    assert names(f.candidate_pairs(geoms, body_poses, tree)) == set()
    # the margin widens the bounding-sphere test
    body_poses["far"] = pose((0.6, 0, 0.55))
    assert ("base_ball", "far_ball") not in names(CollisionFilter().candidate_pairs(
        geoms, body_poses, tree))
    assert ("base_ball", "far_ball") in names(CollisionFilter().candidate_pairs(
        geoms, body_poses, tree, margin=0.15))
    with pytest.raises(ValueError, match="base"):
        CollisionFilter().candidate_pairs(geoms, {"world": np.eye(4)}, tree)


def test_symmetric_deep_penetrations():
    """Coincident/coaxial shapes: GJK ends on a degenerate simplex and EPA must still find
    the exact depth (the lateral directions all give the same depth)."""
    X = pose((0.3, -0.2, 0.1), rot((1, 2, 3), 0.7))
    r = signed_distance(Cylinder(0.5, 1.0), X, Capsule(0.3, 0.8), X)
    # exact depth: min(0.5, 0.5 + 0.4) + 0.3 = 0.8. Every sideways direction is optimal:
    # EPA alone would have to refine the whole rim circle; the axial polish gets it.
    assert r.distance == pytest.approx(-0.8, abs=1e-9)
    assert abs(r.normal @ X[:3, 2]) < 1e-9  # sideways
    check_invariants(Cylinder(0.5, 1.0), X, Capsule(0.3, 0.8), X, r, 1e-9)
    r = signed_distance(Cylinder(0.5, 1.0), X, Cylinder(0.2, 3.0), X)
    assert r.distance == pytest.approx(-0.7, abs=1e-9)
    r = signed_distance(Box((1, 2, 4)), X, Box((1, 2, 4)), X)
    assert r.distance == pytest.approx(-1.0, abs=1e-12)
    np.testing.assert_allclose(np.abs(r.normal), np.abs(X[:3, 0]), atol=1e-12)
    r = signed_distance(Box((1, 2, 4)), X, Cylinder(0.2, 0.5), X)
    assert r.distance == pytest.approx(-0.7, abs=1e-9)  # 0.5 + 0.2 along the box x axis
    r = signed_distance(Capsule(0.2, 1.0), X, Capsule(0.3, 1.0), X)
    assert r.distance == pytest.approx(-0.5, abs=1e-12)


def test_box_box_edge_edge_contact_is_one_point():
    # cube A turned 45 degrees about x has a top edge along x; cube B turned 45 degrees
    # about y has a bottom edge along y; the edges cross at the origin's vertical
    h = 0.5 * math.sqrt(2)
    A = pose((0, 0, 0), rot((1, 0, 0), math.pi / 4))
    B = pose((0, 0, 2 * h - 0.01), rot((0, 1, 0), math.pi / 4))
    pts = contact_points(Box((1, 1, 1)), A, Box((1, 1, 1)), B, margin=0.02)
    r = signed_distance(Box((1, 1, 1)), A, Box((1, 1, 1)), B)
    assert len(pts) == 1
    assert r.distance == pytest.approx(-0.01, abs=1e-12)
    for c in (pts[0], r):
        assert c.distance == pytest.approx(-0.01, abs=1e-12)
        np.testing.assert_allclose(c.normal, (0, 0, 1), atol=1e-12)
        np.testing.assert_allclose(c.point_a, (0, 0, h), atol=1e-12)
        np.testing.assert_allclose(c.point_b, (0, 0, h - 0.01), atol=1e-12)


def test_box_box_tilted_manifold_keeps_only_points_within_margin():
    # a cube tilted about y by a small angle on a large box: one edge is the lowest
    big, cube = Box((4, 4, 1)), Box((1, 1, 1))
    tilt = 0.05
    low = 0.5 * math.cos(tilt) + 0.5 * math.sin(tilt)
    X = pose((0, 0, 0.5 + low - 0.002), rot((0, 1, 0), tilt))
    pts = contact_points(big, pose(), cube, X, margin=0.0)
    assert len(pts) == 2
    assert all(c.distance == pytest.approx(-0.002, abs=1e-12) for c in pts)
    wide = contact_points(big, pose(), cube, X, margin=0.1)
    assert len(wide) == 4
    assert sorted(round(c.distance, 9) for c in wide) == pytest.approx(
        [-0.002, -0.002, -0.002 + math.sin(tilt), -0.002 + math.sin(tilt)], abs=1e-9)


def test_shapes_compare_by_value():
    assert Box((1, 2, 3)) == Box([1.0, 2.0, 3.0])
    assert Box((1, 2, 3)) != Box((1, 2, 4))
    assert Sphere(1.0) != Cylinder(1.0, 1.0)
    assert Capsule(0.1, 1.0) == Capsule(0.1, 1.0) and Halfspace() == Halfspace()
    assert Mesh("a.stl", (1, 1, 1)) == Mesh("a.stl") != Mesh("b.stl")
    assert len({Sphere(1.0), Sphere(1.0), Box((1, 1, 1))}) == 2


def test_docstring_examples():
    import doctest

    import multibody.geometry._filter
    import multibody.geometry

    for module in (multibody.geometry, multibody.geometry._filter):
        failures, tried = doctest.testmod(module)
        assert tried > 0 and failures == 0


def test_cylinder_and_capsule_on_box_face():
    table = Box((2, 2, 0.2))
    Xt = pose((0.1, 0.0, -0.1), rot((0, 0, 1), 0.3))  # top face at z = 0
    cyl = Cylinder(0.3, 1.0)
    standing = contact_points(table, Xt, cyl, pose((0.2, 0.1, 0.495)))
    assert len(standing) == 4
    for c in standing:
        assert c.distance == pytest.approx(-0.005, abs=1e-9)
        np.testing.assert_allclose(c.normal, (0, 0, 1), atol=1e-9)
        np.testing.assert_allclose(c.point_b - c.point_a, c.distance * c.normal, atol=1e-12)
        assert c.point_a[2] == pytest.approx(0.0, abs=1e-12)
    swapped = contact_points(cyl, pose((0.2, 0.1, 0.495)), table, Xt)
    assert len(swapped) == 4
    np.testing.assert_allclose(swapped[0].normal, (0, 0, -1), atol=1e-9)
    lying = contact_points(table, Xt, Capsule(0.1, 0.8),
                           pose((0.0, 0.2, 0.098), rot((0, 1, 0), math.pi / 2)))
    assert len(lying) == 2
    assert all(c.distance == pytest.approx(-0.002, abs=1e-9) for c in lying)
    # overhanging the table edge: only the rim points over the face are kept
    edge_x = Xt[:3, 3] + 1.0 * Xt[:3, 0]
    over = contact_points(table, Xt, cyl, pose(edge_x + (0, 0, 0.499)))
    assert 1 <= len(over) < 4
    for c in over:
        local = (c.point_a - Xt[:3, 3]) @ Xt[:3, :3]
        assert abs(local[0]) <= 1.0 + 1e-9 and abs(local[1]) <= 1.0 + 1e-9
    # tilted: a single point, the same as signed_distance
    Xc = pose((0.0, 0.0, 0.6), rot((1, 1, 0), 0.2))
    r = signed_distance(table, Xt, cyl, Xc)
    (c,) = contact_points(table, Xt, cyl, Xc, margin=max(r.distance, 0) + 1e-6)
    assert c.distance == pytest.approx(r.distance, abs=1e-9)


def test_stacked_cylinders_and_box_on_cap():
    base = Cylinder(0.5, 1.0)  # top cap at z = 0.5
    small = Cylinder(0.2, 0.4)
    pts = contact_points(base, pose(), small, pose((0.1, 0, 0.699)))
    assert len(pts) == 4 and all(c.distance == pytest.approx(-0.001, abs=1e-9) for c in pts)
    # a wider cylinder on top: the base's rim points under its cap
    wide = Cylinder(0.8, 0.4)
    pts = contact_points(base, pose(), wide, pose((0.05, 0, 0.699)))
    assert len(pts) == 4
    for c in pts:
        assert c.distance == pytest.approx(-0.001, abs=1e-9)
        np.testing.assert_allclose(c.normal, (0, 0, 1), atol=1e-9)
        assert math.hypot(c.point_a[0], c.point_a[1]) == pytest.approx(0.5)
        np.testing.assert_allclose(c.point_b - c.point_a, c.distance * c.normal, atol=1e-12)
    # a box standing on the cap: its 4 bottom corners over the cap
    pts = contact_points(base, pose(), Box((0.3, 0.3, 0.3)), pose((0, 0.05, 0.648)))
    assert len(pts) == 4 and all(c.distance == pytest.approx(-0.002, abs=1e-9) for c in pts)


@pytest.mark.parametrize("kind_a,kind_b", ALL_PAIRS)
def test_contact_point_invariants_random_poses(kind_a, kind_b):
    """Every contact point: witnesses on the surfaces, point_b - point_a = distance *
    normal, distance <= margin; the deepest point has the signed distance; a manifold is
    reported exactly when the signed distance is within the margin."""
    rng = np.random.default_rng(zlib.crc32(f"contacts {kind_a}-{kind_b}".encode()))
    margin = 0.05
    counts = []
    for trial in range(25):
        sa, sb = random_shape(kind_a, rng), random_shape(kind_b, rng)
        Xa, Xb = random_pose(rng, 0.6), random_pose(rng, 0.6)
        if trial % 3 == 0:  # parallel frames: flat-on-flat cases
            Xb[:3, :3] = Xa[:3, :3] @ rot((0, 0, 1), rng.uniform(0, 6))
        r = signed_distance(sa, Xa, sb, Xb)
        pts = contact_points(sa, Xa, sb, Xb, margin=margin)
        assert (len(pts) > 0) == (r.distance <= margin)
        if not pts:
            continue
        counts.append(len(pts))
        assert min(c.distance for c in pts) == pytest.approx(r.distance, abs=1e-9)
        for c in pts:
            assert c.distance <= margin
            assert abs(np.linalg.norm(c.normal) - 1.0) < 1e-12
            np.testing.assert_allclose(c.point_b - c.point_a, c.distance * c.normal, atol=1e-9)
            assert abs(surface_distance(sa, Xa, c.point_a)) < 1e-8
            assert abs(surface_distance(sb, Xb, c.point_b)) < 1e-8
    assert counts


def test_broad_phase_matches_brute_force_on_a_random_scene():
    rng = np.random.default_rng(11)
    kinds = ["sphere", "box", "capsule", "cylinder"]
    geoms = [geom("floor", "world", Halfspace())]
    body_poses = {"world": np.eye(4)}
    for i in range(30):
        body = f"b{i // 2}"
        body_poses.setdefault(body, random_pose(rng, 1.0))
        g = geom(f"g{i}", body, random_shape(kinds[i % 4], rng), rng.normal(size=3) * 0.2)
        geoms.append(g)
    parent_child = [(f"b{i}", f"b{i + 1}") for i in range(14)]
    f = CollisionFilter()
    f.add_filter_group("grp", ["b3", "b7", "b9"])
    margin = 0.1
    got = {(p.geometry_a.name, p.geometry_b.name)
           for p in f.candidate_pairs(geoms, body_poses, parent_child, margin=margin)}
    expected = set()
    for m, ga in enumerate(geoms):
        for gb in geoms[m + 1:]:
            pc = (ga.body, gb.body) in parent_child or (gb.body, ga.body) in parent_child
            if f.is_filtered(ga.body, gb.body, pc):
                continue
            Xa, Xb = body_poses[ga.body] @ ga.pose, body_poses[gb.body] @ gb.pose
            if isinstance(ga.shape, Halfspace):
                ok = Xa[:3, 2] @ (Xb[:3, 3] - Xa[:3, 3]) <= gb.shape.bounding_radius + margin
            else:
                ok = (np.linalg.norm(Xb[:3, 3] - Xa[:3, 3])
                      <= ga.shape.bounding_radius + gb.shape.bounding_radius + margin)
            if ok:
                # a pair the broad phase keeps must be possible; one it drops must be apart
                expected.add((ga.name, gb.name))
            else:
                assert signed_distance(ga.shape, Xa, gb.shape, Xb).distance > margin
    assert got == expected
    assert 5 < len(got) < 200
