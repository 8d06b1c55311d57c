"""Tests of solvers.collision, the compiled narrow phase: every pair against
multibody.geometry's numpy narrow phase on seeded random poses (closed forms to 1e-9, GJK/EPA
with curved shapes to the accuracy that implementation documents), resting manifolds with
analytic areas and counts, degenerate configurations, convex hulls against boxes and an
independent distance, the numpy fallback against the C library, and the argument checks."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import nnls
from scipy.spatial import ConvexHull
from scipy.spatial.transform import Rotation

import multibody.geometry as G
from solvers import collision as C

LIB = C.load_narrow_phase(numpy_fallback=False)
needs_cc = pytest.mark.skipif(LIB is None, reason="no C compiler")

# description for solvers.collision, the same shape for multibody.geometry
SHAPES = {
    "halfspace": (("halfspace",), G.Halfspace()),
    "sphere": (("sphere", 0.3), G.Sphere(0.3)),
    "box": (("box", (0.3, 0.2, 0.4)), G.Box((0.6, 0.4, 0.8))),
    "capsule": (("capsule", 0.15, 0.3), G.Capsule(0.15, 0.6)),
    "cylinder": (("cylinder", 0.25, 0.2), G.Cylinder(0.25, 0.4)),
    "ellipsoid": (("ellipsoid", (0.3, 0.2, 0.15)), G.Ellipsoid((0.3, 0.2, 0.15))),
}
BOUNDED = ["sphere", "box", "capsule", "cylinder", "ellipsoid"]
PAIRS = [("halfspace", b) for b in BOUNDED] + [(a, b) for a in BOUNDED for b in BOUNDED]
CLOSED = {("halfspace", b) for b in BOUNDED} | {
    ("sphere", "sphere"), ("sphere", "capsule"), ("capsule", "sphere"), ("capsule", "capsule"),
    ("sphere", "box"), ("box", "sphere"), ("sphere", "cylinder"), ("cylinder", "sphere"),
    ("box", "box")}
POLYTOPE = {("box", "capsule"), ("capsule", "box")}   # GJK/EPA exact to rounding
CURVED_GJK = {"cylinder", "ellipsoid"}


def random_pose(rng, spread=0.5) -> np.ndarray:
    X = np.eye(4)
    X[:3, :3] = Rotation.random(random_state=rng).as_matrix()
    X[:3, 3] = rng.uniform(-spread, spread, 3)
    return X


def pair_poses(rng, a: str, n: int, lift: float = 0.5):
    """Poses of A and B: B near A (about half the samples overlapping); above a halfspace,
    B's centre from 0.1 below to ``2 lift`` above the plane."""
    out = []
    for _ in range(n):
        Xa, Xb = random_pose(rng), random_pose(rng)
        if a == "halfspace":
            Xb[:3, 3] = Xa[:3, 3] + Xa[:3, 2] * rng.uniform(-0.1, 2 * lift)
        out.append((Xa, Xb))
    return out


def tolerances(a: str, b: str):
    """(distance, normal, points) tolerances against multibody.geometry."""
    if (a, b) in CLOSED or (a, b) in POLYTOPE or not ({a, b} & CURVED_GJK):
        return 1e-9, 1e-9, 1e-9
    if "cylinder" in (a, b):
        # EPA on a cylinder side resolves the normal to about the square root of its
        # tolerance (multibody.geometry._gjk): both implementations are that accurate
        return 1e-8, 2e-4, 2e-5
    return 1e-8, 1e-6, 1e-6


def records(contacts) -> np.ndarray:
    """multibody.geometry ContactPoints as (k, 10) records."""
    return np.array([np.concatenate([c.point_a, c.point_b, c.normal, [c.distance]])
                     for c in contacts]).reshape(-1, 10)


def manifold_records(m: C.Manifold) -> np.ndarray:
    return np.column_stack([m.points_a, m.points_b, m.normals, m.distances])


def assert_same_set(got: np.ndarray, ref: np.ndarray, tol: float, what: str):
    """The two record sets are equal up to order (a bijection within tol)."""
    assert got.shape == ref.shape, f"{what}: {len(got)} contacts, expected {len(ref)}"
    free = list(range(len(got)))
    for r in ref:
        errs = [np.abs(got[i] - r).max() for i in free]
        k = int(np.argmin(errs))
        assert errs[k] <= tol, f"{what}: contact {r} unmatched (closest off by {errs[k]:.2e})"
        free.pop(k)


def assert_witnesses_valid(d: C.Distance, ga, Xa, gb, Xb, tol):
    """point_b - point_a = distance * normal, unit normal, both points on their surfaces."""
    assert np.linalg.norm(d.normal) == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(d.point_b - d.point_a, d.distance * d.normal, atol=1e-9)
    for g, X, p in ((ga, Xa, d.point_a), (gb, Xb, d.point_b)):
        if not isinstance(g, G.Halfspace):
            local = X[:3, :3].T @ (p - X[:3, 3])
            assert abs(g.distance_to_point(local)) <= tol


# ---------------------------------------------------------------- against multibody.geometry
@needs_cc
@pytest.mark.parametrize("a,b", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_pair_matches_multibody_geometry(a, b):
    rng = np.random.default_rng(PAIRS.index((a, b)))
    (sa, ga), (sb, gb) = SHAPES[a], SHAPES[b]
    td, tn, tp = tolerances(a, b)
    seen_pen = seen_sep = 0
    for Xa, Xb in pair_poses(rng, a, 100, gb.bounding_radius):
        ref = G.signed_distance(ga, Xa, gb, Xb)
        got = C.signed_distance(sa, Xa, sb, Xb, backend=LIB)
        assert got.distance == pytest.approx(ref.distance, abs=td)
        np.testing.assert_allclose(got.normal, ref.normal, atol=tn)
        np.testing.assert_allclose(got.point_a, ref.point_a, atol=tp)
        np.testing.assert_allclose(got.point_b, ref.point_b, atol=tp)
        assert_witnesses_valid(got, ga, Xa, gb, Xb, 1e-7)
        seen_pen += ref.distance < 0
        seen_sep += ref.distance > 0
        for margin in (0.0, 0.05):
            m = C.contact_manifold(sa, Xa, sb, Xb, margin, backend=LIB)
            assert_same_set(manifold_records(m), records(G.contact_points(ga, Xa, gb, Xb, margin)),
                            max(tn, tp, td), f"{a}-{b} margin {margin}")
    assert seen_pen >= 5 and seen_sep >= 5          # both regimes exercised


@needs_cc
@pytest.mark.parametrize("a,b", [("box", "box"), ("box", "cylinder"), ("cylinder", "capsule"),
                                  ("sphere", "ellipsoid"), ("halfspace", "capsule")])
def test_swapping_the_arguments_mirrors_the_result(a, b):
    """Exactly for the pairs computed in a canonical order (as multibody.geometry does);
    box-box runs the separating axis test from either side (equal to rounding)."""
    rng = np.random.default_rng(7)
    (sa, _), (sb, _) = SHAPES[a], SHAPES[b]
    for Xa, Xb in pair_poses(rng, a, 20):
        m1 = manifold_records(C.contact_manifold(sa, Xa, sb, Xb, 0.05, backend=LIB))
        m2 = manifold_records(C.contact_manifold(sb, Xb, sa, Xa, 0.05, backend=LIB))
        mirrored = np.column_stack([m2[:, 3:6], m2[:, 0:3], -m2[:, 6:9], m2[:, 9]])
        if a == b == "box":
            assert_same_set(mirrored, m1, 1e-12, "box-box swapped")
        else:
            np.testing.assert_array_equal(mirrored, m1)


# ---------------------------------------------------------------- resting contacts, analytic
def pose(R=np.eye(3), p=(0.0, 0.0, 0.0)) -> np.ndarray:
    X = np.eye(4)
    X[:3, :3] = R
    X[:3, 3] = p
    return X


def polygon_area(points: np.ndarray, normal: np.ndarray) -> float:
    """Area of the convex polygon of coplanar points (projected on the plane of normal)."""
    e1 = np.cross(normal, [1.0, 0.0, 0.0] if abs(normal[0]) < 0.9 else [0.0, 1.0, 0.0])
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(normal, e1)
    uv = np.column_stack([points @ e1, points @ e2])
    return float(ConvexHull(uv).volume)


@needs_cc
def test_resting_manifolds_on_a_tilted_ground():
    Rg = Rotation.from_euler("xy", [0.3, -0.2]).as_matrix()     # ground tilted
    ground = pose(Rg, (0.1, -0.2, 0.3))
    n = Rg[:, 2]

    def on_ground(R_local, lift):                               # a body resting on it
        return pose(Rg @ R_local, ground[:3, 3] + lift * n)

    pen = 1e-3
    m = C.contact_manifold(("halfspace",), ground, ("box", (0.3, 0.2, 0.1)),
                           on_ground(np.eye(3), 0.1 - pen), backend=LIB)
    assert len(m) == 4 and polygon_area(m.points_b, n) == pytest.approx(0.6 * 0.4, rel=1e-12)
    np.testing.assert_allclose(m.distances, -pen, atol=1e-12)
    m = C.contact_manifold(("halfspace",), ground, ("cylinder", 0.25, 0.2),
                           on_ground(np.eye(3), 0.2 - pen), backend=LIB)  # standing
    assert len(m) == 4 and polygon_area(m.points_b, n) == pytest.approx(2 * 0.25 ** 2, rel=1e-12)
    lying = Rotation.from_euler("x", np.pi / 2).as_matrix()
    m = C.contact_manifold(("halfspace",), ground, ("cylinder", 0.25, 0.2),
                           on_ground(lying, 0.25 - pen), backend=LIB)
    assert len(m) == 2 and np.linalg.norm(m.points_b[0] - m.points_b[1]) == pytest.approx(0.4)
    m = C.contact_manifold(("halfspace",), ground, ("capsule", 0.1, 0.3),
                           on_ground(lying, 0.1 - pen), backend=LIB)
    assert len(m) == 2 and np.linalg.norm(m.points_b[0] - m.points_b[1]) == pytest.approx(0.6)
    np.testing.assert_allclose(m.distances, -pen, atol=1e-12)
    m = C.contact_manifold(("halfspace",), ground, ("ellipsoid", (0.3, 0.2, 0.1)),
                           on_ground(Rotation.from_euler("z", 0.4).as_matrix(), 0.1 - pen),
                           backend=LIB)
    assert len(m) == 1 and m.distances[0] == pytest.approx(-pen, abs=1e-12)


@needs_cc
@pytest.mark.parametrize("angle", [0.0, np.pi / 4, 0.3])
def test_box_on_box_face_polygon(angle):
    """A 1 x 1 box on a 2 x 2 box rotated about the normal: the overlap polygon is the
    smaller box's footprint (4 corners); a 2 x 2 box on a 2 x 2 one turned 45 degrees gives
    the regular octagon of area 8 (sqrt(2) - 1)."""
    Rz = Rotation.from_euler("z", angle).as_matrix()
    lower, pen = pose(), 1e-3
    m = C.contact_manifold(("box", (1.0, 1.0, 0.5)), lower, ("box", (0.5, 0.5, 0.5)),
                           pose(Rz, (0.1, 0.2, 1.0 - pen)), backend=LIB)
    assert len(m) == 4 and polygon_area(m.points_b, np.array([0, 0, 1.0])) == pytest.approx(1.0)
    np.testing.assert_allclose(m.normals, np.tile([0.0, 0.0, 1.0], (4, 1)), atol=1e-15)
    np.testing.assert_allclose(m.distances, -pen, atol=1e-12)
    m = C.contact_manifold(("box", (1.0, 1.0, 0.5)), lower, ("box", (1.0, 1.0, 0.5)),
                           pose(Rz, (0.0, 0.0, 1.0 - pen)), backend=LIB)
    if angle == np.pi / 4:
        assert len(m) == 8
        assert polygon_area(m.points_b, np.array([0, 0, 1.0])) == pytest.approx(
            8 * (np.sqrt(2) - 1), rel=1e-12)
    area = polygon_area(m.points_b, np.array([0, 0, 1.0]))
    assert area <= 4.0 + 1e-12 and len(m) in (4, 8)


@needs_cc
def test_cylinder_and_capsule_on_a_box_face():
    box, pen = ("box", (1.0, 1.0, 0.5)), 1e-3
    m = C.contact_manifold(box, pose(), ("cylinder", 0.2, 0.3), pose(p=(0.1, 0, 0.8 - pen)),
                           backend=LIB)
    assert len(m) == 4 and polygon_area(m.points_b, np.array([0, 0, 1.0])) == pytest.approx(0.08)
    np.testing.assert_allclose(m.distances, -pen, atol=1e-9)
    lying = Rotation.from_euler("y", np.pi / 2).as_matrix()
    m = C.contact_manifold(box, pose(), ("capsule", 0.1, 0.4), pose(lying, (0, 0, 0.6 - pen)),
                           backend=LIB)
    assert len(m) == 2 and np.ptp(m.points_b[:, 0]) == pytest.approx(0.8)


@needs_cc
def test_analytic_distances():
    lib = LIB
    d = C.signed_distance(("sphere", 0.2), pose(p=(1, 2, 3)), ("sphere", 0.3), pose(p=(1, 2, 4)),
                          backend=lib)
    assert d.distance == pytest.approx(0.5, abs=1e-15)
    np.testing.assert_allclose(d.normal, [0, 0, 1])
    # ellipsoid over a plane: the support function sqrt(sum (a_i n_i)^2) along the normal
    R = Rotation.from_euler("xyz", [0.3, 0.5, -0.2]).as_matrix()
    radii = np.array([0.3, 0.2, 0.1])
    d = C.signed_distance(("halfspace",), pose(), ("ellipsoid", tuple(radii)),
                          pose(R, (0.3, -0.1, 0.25)), backend=lib)
    assert d.distance == pytest.approx(0.25 - np.linalg.norm(radii * (R.T @ [0, 0, 1])), abs=1e-14)
    # crossed capsules: the axes' distance minus both radii
    d = C.signed_distance(("capsule", 0.1, 1.0), pose(Rotation.from_euler("x", np.pi / 2).as_matrix()),
                          ("capsule", 0.05, 1.0), pose(Rotation.from_euler("y", np.pi / 2).as_matrix(),
                                                       (0.0, 0.0, 0.4)), backend=lib)
    assert d.distance == pytest.approx(0.25, abs=1e-14)
    # ellipsoid against a sphere on its long axis (GJK on curved cores)
    d = C.signed_distance(("ellipsoid", (0.5, 0.2, 0.1)), pose(), ("sphere", 0.1), pose(p=(0.8, 0, 0)),
                          backend=lib)
    assert d.distance == pytest.approx(0.2, abs=1e-9)
    # rotated boxes separated along x: SAT then GJK
    Rz = Rotation.from_euler("z", np.pi / 4).as_matrix()
    d = C.signed_distance(("box", (0.5, 0.5, 0.5)), pose(), ("box", (0.5, 0.5, 0.5)),
                          pose(Rz, (2.0, 0.0, 0.0)), backend=lib)
    assert d.distance == pytest.approx(1.5 - 0.5 * np.sqrt(2), abs=1e-12)


# ---------------------------------------------------------------- degenerate configurations
@needs_cc
@pytest.mark.parametrize("a,b", [("sphere", "sphere"), ("box", "box"), ("capsule", "capsule"),
                                  ("cylinder", "cylinder"), ("ellipsoid", "ellipsoid"),
                                  ("box", "sphere"), ("cylinder", "sphere"),
                                  ("capsule", "sphere"), ("box", "cylinder")])
def test_coincident_shapes_give_finite_results(a, b):
    (sa, ga), (sb, gb) = SHAPES[a], SHAPES[b]
    for X in (pose(), pose(Rotation.from_euler("xyz", [0.1, 0.2, 0.3]).as_matrix(), (1, 2, 3))):
        got = C.signed_distance(sa, X, sb, X, backend=LIB)
        ref = G.signed_distance(ga, X, gb, X)
        assert np.isfinite(got.distance) and got.distance < 0
        assert got.distance == pytest.approx(ref.distance, abs=1e-6)
        m = C.contact_manifold(sa, X, sb, X, 0.0, backend=LIB)
        assert len(m) >= 1 and np.all(np.isfinite(manifold_records(m)))


@needs_cc
def test_parallel_capsules_and_aligned_faces():
    # parallel capsules side by side: the distance of the axes, a finite normal across them
    d = C.signed_distance(("capsule", 0.1, 0.5), pose(), ("capsule", 0.1, 0.5), pose(p=(0.15, 0, 0.2)),
                          backend=LIB)
    assert d.distance == pytest.approx(-0.05, abs=1e-15)
    np.testing.assert_allclose(d.normal, [1, 0, 0], atol=1e-15)
    # coaxial capsules end to end, and on the same axis (the fixed fallback normal)
    d = C.signed_distance(("capsule", 0.1, 0.5), pose(), ("capsule", 0.1, 0.5), pose(p=(0, 0, 0.3)),
                          backend=LIB)
    assert np.isfinite(d.normal).all() and d.distance == pytest.approx(-0.2, abs=1e-15)
    # identical boxes exactly face to face: a 4-point square of the full face
    m = C.contact_manifold(("box", (0.5, 0.5, 0.5)), pose(), ("box", (0.5, 0.5, 0.5)),
                           pose(p=(0, 0, 1.0)), backend=LIB)
    assert len(m) == 4 and np.allclose(m.distances, 0.0, atol=1e-15)
    assert polygon_area(m.points_b, np.array([0, 0, 1.0])) == pytest.approx(1.0)
    # a sphere centred on a capsule axis: the capsule's x axis
    d = C.signed_distance(("sphere", 0.1), pose(p=(0, 0, 0.1)), ("capsule", 0.2, 0.5), pose(),
                          backend=LIB)
    np.testing.assert_allclose(d.normal, [1, 0, 0])
    assert d.distance == pytest.approx(-0.3, abs=1e-15)


# ---------------------------------------------------------------- convex hulls
CUBE = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float) * [0.3, 0.2, 0.4]


@needs_cc
@pytest.mark.parametrize("b", ["halfspace"] + BOUNDED)
def test_convex_hull_of_box_corners_is_the_box(b):
    """The hull of a box's corners gives the box's distances (and, on a halfspace, its
    corner manifold)."""
    rng = np.random.default_rng(11)
    sb = SHAPES[b][0]
    for Xa, Xb in pair_poses(rng, "box", 25):
        if b == "halfspace":
            Xa[:3, 3] = Xb[:3, 3] + Xb[:3, 2] * rng.uniform(-0.2, 0.6)
        ref = C.signed_distance(("box", (0.3, 0.2, 0.4)), Xa, sb, Xb, backend=LIB)
        got = C.signed_distance(("convex", CUBE), Xa, sb, Xb, backend=LIB)
        assert got.distance == pytest.approx(ref.distance, abs=1e-9)
        if b == "halfspace":
            m1 = C.contact_manifold(("box", (0.3, 0.2, 0.4)), Xa, sb, Xb, 0.05, backend=LIB)
            m2 = C.contact_manifold(("convex", CUBE), Xa, sb, Xb, 0.05, backend=LIB)
            assert_same_set(manifold_records(m2), manifold_records(m1), 1e-12, "hull on plane")


def hull_point_distance(V: np.ndarray, p: np.ndarray) -> float:
    """Signed distance of p to conv(V), independently: outside by NNLS on the convex
    weights, inside by the hull's facet planes."""
    hull = ConvexHull(V)
    inside = np.max(hull.equations[:, :3] @ p + hull.equations[:, 3])
    if inside <= 0.0:
        return float(inside)
    w = 1e6
    A = np.vstack([V.T, w * np.ones(len(V))])
    lam, _ = nnls(A, np.concatenate([p, [w]]))
    return float(np.linalg.norm(V.T @ lam - p))


@needs_cc
def test_random_hull_against_a_sphere_matches_an_independent_distance():
    rng = np.random.default_rng(3)
    for _ in range(30):
        V = rng.normal(size=(25, 3)) * [0.3, 0.2, 0.25]
        Xa, Xb = random_pose(rng), random_pose(rng)
        got = C.signed_distance(("convex", V), Xa, ("sphere", 0.1), Xb, backend=LIB)
        centre = Xa[:3, :3].T @ (Xb[:3, 3] - Xa[:3, 3])
        assert got.distance == pytest.approx(hull_point_distance(V, centre) - 0.1, abs=1e-6)


@pytest.mark.parametrize("backend", [pytest.param("c", marks=needs_cc), "numpy"])
def test_many_hull_vertices_on_a_plane_are_reduced(backend):
    ang = np.linspace(0, 2 * np.pi, 64, endpoint=False)
    ring = np.column_stack([np.cos(ang), np.sin(ang), np.zeros(64)]) * 0.3
    V = np.vstack([ring + [0, 0, -0.1], ring + [0, 0, 0.1]])
    m = C.contact_manifold(("halfspace",), pose(), ("convex", V), pose(p=(0, 0, 0.099)),
                           backend=backend)
    assert len(m) == C.MAX_CONTACTS
    assert len({tuple(p) for p in m.points_b.round(12)}) == C.MAX_CONTACTS
    # the support polygon of the chosen points covers nearly all of the disc
    assert polygon_area(m.points_b, np.array([0, 0, 1.0])) > 0.9 * np.pi * 0.09


# ---------------------------------------------------------------- fallback, batch, errors
@needs_cc
def test_numpy_fallback_agrees_with_the_library():
    rng = np.random.default_rng(5)
    hull = ("convex", rng.normal(size=(12, 3)) * 0.2)
    kinds = {**{k: v[0] for k, v in SHAPES.items()}, "convex": hull}
    for a in kinds:
        for b in kinds:
            if a == b == "halfspace":
                continue
            for Xa, Xb in pair_poses(rng, a, 12):
                td, tn, tp = tolerances(a, b)
                d1 = C.signed_distance(kinds[a], Xa, kinds[b], Xb, backend=LIB)
                d2 = C.signed_distance(kinds[a], Xa, kinds[b], Xb, backend="numpy")
                assert d2.distance == pytest.approx(d1.distance, abs=td), (a, b)
                np.testing.assert_allclose(d2.normal, d1.normal, atol=tn, err_msg=f"{a}-{b}")
                np.testing.assert_allclose(d2.point_a, d1.point_a, atol=tp, err_msg=f"{a}-{b}")
                m1 = C.contact_manifold(kinds[a], Xa, kinds[b], Xb, 0.05, backend=LIB)
                m2 = C.contact_manifold(kinds[a], Xa, kinds[b], Xb, 0.05, backend="numpy")
                assert_same_set(manifold_records(m2), manifold_records(m1), max(td, tn, tp),
                                f"{a}-{b}")


@needs_cc
def test_batch_call_equals_single_calls():
    rng = np.random.default_rng(9)
    names = ["sphere", "box", "capsule", "cylinder", "ellipsoid"]
    specs, X = [], []
    for k in range(20):
        a, b = names[k % 5], names[(3 * k + 1) % 5]
        Xa, Xb = pair_poses(rng, a, 1)[0]
        specs.append((SHAPES[a][0], SHAPES[b][0]))
        X.append([C.parse_pose(Xa), C.parse_pose(Xb)])
    parsed = [C.parse_shape(s) for pair in specs for s in pair]
    kinds = np.array([p[0] for p in parsed], np.int32).reshape(-1, 2)
    nv = np.array([p[2] for p in parsed], np.int32).reshape(-1, 2)
    out = np.zeros((20, C.MAX_CONTACTS, C.CONTACT_DOUBLES))
    count = np.zeros(20, np.int32)
    assert LIB.collide_pairs(kinds, [p[1] for p in parsed], nv, np.array(X), 0.05, out, count) == 0
    for k, (sa, sb) in enumerate(specs):
        m = C.contact_manifold(sa, X[k][0], sb, X[k][1], 0.05, backend=LIB)
        assert count[k] == len(m)
        np.testing.assert_array_equal(out[k, :count[k]], manifold_records(m))


def test_without_a_compiler_the_numpy_implementation_is_used():
    lib = C.load_narrow_phase(compiler="/nonexistent/dynablocks-cc")
    assert isinstance(lib, C.NumpyNarrowPhase) and not lib.compiled
    assert C.load_narrow_phase(compiler="/nonexistent/dynablocks-cc", numpy_fallback=False) is None
    X = np.eye(4)
    X[2, 3] = 0.45
    m = C.contact_manifold(("halfspace",), np.eye(4).reshape(-1)[[0, 1, 2, 4, 5, 6, 8, 9, 10, 3, 7, 11]],
                           ("box", (0.5, 0.5, 0.5)), X, backend=lib)
    assert len(m) == 4 and np.allclose(m.distances, -0.05, atol=1e-15)


def test_malformed_arguments_are_refused_by_name():
    X = np.eye(4)
    with pytest.raises(C.ShapeDescriptionError, match="shape_b.*radius"):
        C.contact_manifold(("sphere", 1.0), X, ("sphere", -1.0), X)
    with pytest.raises(C.ShapeDescriptionError, match="shape_a.*kind"):
        C.contact_manifold(("torus", 1.0), X, ("sphere", 1.0), X)
    with pytest.raises(C.ShapeDescriptionError, match="shape_a.*box.*3"):
        C.contact_manifold(("box", (1.0, 2.0)), X, ("sphere", 1.0), X)
    with pytest.raises(C.ShapeDescriptionError, match="convex.*shape"):
        C.contact_manifold(("convex", np.zeros((4, 2))), X, ("sphere", 1.0), X)
    with pytest.raises(C.ShapeDescriptionError, match="pose_b.*orthonormal"):
        C.contact_manifold(("sphere", 1.0), X, ("sphere", 1.0), 2 * X)
    with pytest.raises(C.ShapeDescriptionError, match="margin"):
        C.contact_manifold(("sphere", 1.0), X, ("sphere", 1.0), X, margin=-1.0)
    with pytest.raises(C.CollisionQueryError, match="halfspace-halfspace"):
        C.signed_distance(("halfspace",), X, ("halfspace",), X)
