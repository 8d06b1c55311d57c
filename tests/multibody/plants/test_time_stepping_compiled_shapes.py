"""The compiled step on every shape pair of multibody.geometry (issue 21, item 1): box-box
manifolds, capsules, cylinders and ellipsoids run the narrow phase compiled into the contact
kernel, with the same contact points as the pivoting step's PointContactConstraint (which
asks multibody.geometry.contact_points); the two methods agree within 1e-7 on resting,
rolling and sliding scenes, rest forces equal the weights, a box slides down a slope at
g (sin a - mu cos a) whatever its heading, reruns are bitwise and the kernel's numpy twin
agrees with the C kernel to 1e-12. h = 1e-3."""
from __future__ import annotations

import numpy as np
import pytest

from _compiled_step import final_state, without_compiler
from _time_stepping_models import box_inertia
from _time_stepping_models import (quat_axis_angle as _quat, quat_mul as _qmul,
                                   quat_to_rot as _rot)
from multibody import Free, RigidBodyTree
from multibody.constraints import PointContactConstraint
from multibody.geometry import (Box, Capsule, Cylinder, Ellipsoid, Halfspace, Sphere,
                                contact_points)
from multibody.plants import TimeSteppingRigidBodySystem

G = 9.81
H = 1e-3
FORCE_TOL = 1e-3
"""Forces (N) of 1-6 kg bodies are exact to the kernel's acceptance: residual 1e-7 m/s
times m / h, below 6e-4 N."""
pytestmark = pytest.mark.skipif(
    __import__("solvers.compiled", fromlist=["x"]).find_compiler() is None,
    reason="no C compiler: the compiled step is not built")


def _inertia(shape, m):
    if isinstance(shape, Box):
        return box_inertia(m, 2 * shape.half)
    if isinstance(shape, Sphere):
        return np.eye(3) * 0.4 * m * shape.radius ** 2
    if isinstance(shape, Ellipsoid):
        a, b, c = shape.radii
        return m / 5 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])
    r, L = shape.radius, 2 * shape.half_length           # capsule as its cylinder: enough
    return m * np.diag([(3 * r * r + L * L) / 12, (3 * r * r + L * L) / 12, r * r / 2])


def _scene(shapes, ground=True, slope=None, masses=None):
    """Free bodies ``b0, b1, ...`` each with one collision shape, a Halfspace ground and/or
    a fixed Box ``slope`` (given as ``(half extents, 4 x 4 pose)``) on the world."""
    t = RigidBodyTree("shapes")
    for i, s in enumerate(shapes):
        m = 1.0 if masses is None else masses[i]
        t.add_body(f"b{i}", m, inertia=_inertia(s, m))
        t.add_joint(Free(f"f{i}", "world", f"b{i}"))
        t.add_collision_geometry(f"b{i}", s, name=f"g{i}")
    if ground:
        t.add_collision_geometry("world", Halfspace(), name="ground")
    if slope is not None:
        t.add_collision_geometry("world", Box(2 * np.asarray(slope[0])), pose=slope[1],
                                 name="slope")
    return t


def _plants(tree, **kw):
    fast = TimeSteppingRigidBodySystem(tree, H, constraints=[PointContactConstraint(tree, **kw)])
    slow = TimeSteppingRigidBodySystem(tree, H, constraints=[PointContactConstraint(tree, **kw)],
                                       contact_solver="lcp")
    assert fast.step_method == "compiled_pgs", fast.step_method_reason
    return fast, slow


def _agree(tree, q, v, steps, tol=1e-7, **kw):
    """Run both methods; they agree within ``tol``; returns the compiled plant, its final
    context and state."""
    fast, slow = _plants(tree, **kw)
    qf, vf, cf = final_state(fast, q, v, steps)
    qs, vs, _ = final_state(slow, q, v, steps)
    np.testing.assert_allclose(qf, qs, atol=tol, rtol=0)
    np.testing.assert_allclose(vf, vs, atol=tol, rtol=0)
    status = fast.get_output_port("step").eval(cf).status
    assert status.method == "compiled_pgs"
    return fast, cf, qf, vf


def _pose(q7):
    X = np.eye(4)
    X[:3, :3], X[:3, 3] = _rot(q7[:4]), q7[4:7]
    return X


# ---------------------------------------------------------------- the same manifolds
def test_the_kernel_finds_the_manifold_of_contact_points():
    """Box on a box turned 30 deg: the kernel's contacts of the step are the points
    multibody.geometry.contact_points gives (the clipped face polygon: 8 points)."""
    tree = _scene([Box((0.4, 0.4, 0.2)), Box((0.3, 0.3, 0.2))])
    q = np.concatenate([[1, 0, 0, 0, 0, 0, 0.1], _quat((0, 0, 1), np.pi / 6), [0, 0, 0.299]])
    fast, _ = _plants(tree, mu=0.5)
    ctx = fast.create_default_context()
    fast.set_positions(ctx, q)
    res = fast.get_output_port("contact_results").eval(ctx)
    mine = [c for c in res if {c.geometry_a, c.geometry_b} == {"g0", "g1"}]
    g0, g1 = tree.bodies[1].collision_geometries[0], tree.bodies[2].collision_geometries[0]
    ref = contact_points(g0.shape, _pose(q[:7]), g1.shape, _pose(q[7:]), 5e-3)
    assert len(mine) == len(ref) == 8
    got = np.array(sorted(c.point.tolist() for c in mine))
    want = np.array(sorted((0.5 * (c.point_a + c.point_b)).tolist() for c in ref))
    np.testing.assert_allclose(got, want, atol=1e-12)
    np.testing.assert_allclose([c.distance for c in mine], -1e-3, atol=1e-12)


# ---------------------------------------------------------------- resting scenes
def test_three_stacked_boxes_rest_with_the_weights_as_forces():
    s = Box((0.2, 0.2, 0.2))
    tree = _scene([s, s, s], masses=[1.0, 2.0, 3.0])
    q = np.concatenate([[1, 0, 0, 0, 0, 0, 0.1 + 0.2 * i] for i in range(3)])
    fast, ctx, qf, vf = _agree(tree, q, np.zeros(18), 300)
    np.testing.assert_allclose(qf[[6, 13, 20]], [0.1, 0.3, 0.5], atol=1e-6)
    res = fast.get_output_port("contact_results").eval(ctx)
    for i, m in enumerate([1.0, 2.0, 3.0]):        # within the kernel's acceptance m tol / h
        np.testing.assert_allclose(res.total_force(f"b{i}"), [0, 0, m * G], atol=FORCE_TOL)
    ground = sum(c.normal_force for c in res if "ground" in (c.geometry_a, c.geometry_b))
    assert abs(ground - 6.0 * G) < FORCE_TOL


def test_box_on_a_box_turned_30_degrees_rests():
    tree = _scene([Box((0.4, 0.4, 0.2)), Box((0.3, 0.3, 0.2))], masses=[2.0, 1.0])
    q = np.concatenate([[1, 0, 0, 0, 0, 0, 0.1], _quat((0, 0, 1), np.pi / 6), [0, 0, 0.3]])
    fast, ctx, qf, vf = _agree(tree, q, np.zeros(12), 300, mu=0.5)
    assert np.abs(vf).max() < 1e-6
    res = fast.get_output_port("contact_results").eval(ctx)
    assert sum(1 for c in res if c.geometry_a != "ground" and c.geometry_b != "ground") == 8
    np.testing.assert_allclose(res.total_force("b1"), [0, 0, G], atol=FORCE_TOL)


@pytest.mark.parametrize("shape, q7, height", [
    (Capsule(0.05, 0.3), [*_quat((1, 0, 0), np.pi / 2), 0, 0, 0.05], 0.05),   # lying
    (Cylinder(0.1, 0.2), [1, 0, 0, 0, 0, 0, 0.1], 0.1),                        # on its cap
    (Cylinder(0.1, 0.2), [*_quat((1, 0, 0), np.pi / 2), 0, 0, 0.1], 0.1),      # on its side
    (Ellipsoid((0.2, 0.1, 0.05)), [1, 0, 0, 0, 0, 0, 0.05], 0.05),
], ids=["capsule_lying", "cylinder_cap", "cylinder_side", "ellipsoid"])
def test_shapes_rest_on_the_ground(shape, q7, height):
    tree = _scene([shape], masses=[1.5])
    fast, ctx, qf, vf = _agree(tree, np.array(q7, float), np.zeros(6), 300, mu=0.6)
    assert abs(qf[6] - height) < 1e-6 and np.abs(vf).max() < 1e-6
    res = fast.get_output_port("contact_results").eval(ctx)
    np.testing.assert_allclose(res.total_force("b0"), [0, 0, 1.5 * G], atol=FORCE_TOL)


def test_capsule_rolls_on_the_ground():
    """A capsule lying along y and pushed along x rolls without slipping: v = w r."""
    tree = _scene([Capsule(0.05, 0.3)])
    q = np.array([*_quat((1, 0, 0), np.pi / 2), 0, 0, 0.05])
    v = np.zeros(6)
    R = _rot(q[:4])
    v[3:6] = R.T @ [0.5, 0, 0]                              # body-frame linear velocity
    v[0:3] = R.T @ [0, 0.5 / 0.05, 0]                       # rolling: w_y = v_x / r
    fast, ctx, qf, vf = _agree(tree, q, v, 300, mu=0.8)
    Rf = _rot(qf[:4])
    vx, wy = (Rf @ vf[3:6])[0], (Rf @ vf[0:3])[1]
    assert abs(vx - 0.5) < 1e-3 and abs(vx - 0.05 * wy) < 1e-6


# ---------------------------------------------------------------- sliding on a slope
@pytest.mark.parametrize("heading", [0.0, 30.0, 135.0])
def test_box_slides_down_a_tilted_box_at_the_coulomb_rate(heading):
    """A box on a slope (a fixed box tilted by 25 deg, its downhill direction at
    ``heading`` about z) slides at a = g (sin a - mu cos a), as with the pivoting step."""
    a, mu = np.radians(25.0), 0.2
    qs = _qmul(_quat((0, 0, 1), np.radians(heading)), _quat((0, 1, 0), a))
    Rs = _rot(qs)
    Xs = np.eye(4)
    Xs[:3, :3] = Rs
    Xs[:3, 3] = -0.5 * Rs[:, 2]                              # top face through the origin
    tree = _scene([Box((0.2, 0.2, 0.1))], ground=False, slope=((1.0, 1.0, 0.5), Xs))
    q = np.concatenate([qs, 0.05 * Rs[:, 2]])
    steps = 200
    fast, ctx, qf, vf = _agree(tree, q, np.zeros(6), steps, mu=mu)
    down = Rs[:, 0] if Rs[2, 0] < 0 else -Rs[:, 0]
    speed = (_rot(qf[:4]) @ vf[3:6]) @ down
    rate = G * (np.sin(a) - mu * np.cos(a))
    assert abs(speed - rate * steps * H) < 2e-3 * rate * steps * H


# ---------------------------------------------------------------- the issue's scene
def _boxes_and_ball():
    """Five boxes and a ball dropped onto a slope (a fixed box tilted by 20 deg, its top
    1.2 m up at the origin) over the ground."""
    a, top = np.radians(20.0), np.array([0.0, 0.0, 1.2])
    Rs = _rot(_quat((0, 1, 0), a))
    Xs = np.eye(4)
    Xs[:3, :3], Xs[:3, 3] = Rs, top - 0.5 * Rs[:, 2]
    shapes = [Box((0.2, 0.2, 0.2))] * 5 + [Sphere(0.1)]
    tree = _scene(shapes, ground=True, slope=((3.0, 1.0, 0.5), Xs))
    q = []
    for i in range(5):
        q += [*_quat((0, 1, 0), a), *(top + Rs @ [-2.0 + 0.45 * i, 0.0, 0.11 + 0.02 * i])]
    q += [1, 0, 0, 0, *(top + Rs @ [0.5, 0.0, 0.12])]
    return tree, np.array(q, float)


@pytest.mark.filterwarnings("ignore::multibody.errors.StepMethodWarning")
def test_five_boxes_and_a_ball_roll_down_a_slope_on_the_compiled_step():
    """The issue's scene (boxes, a ball, a slope and the ground): the compiled step takes
    the steps (the pivoting step only the few hard landing steps whose PGS does not
    converge), the ball rolls down, reruns are bitwise equal."""
    tree, q = _boxes_and_ball()
    fast = TimeSteppingRigidBodySystem(tree, H, constraints=[PointContactConstraint(tree,
                                                                                    mu=0.3)])
    assert fast.step_method == "compiled_pgs", fast.step_method_reason
    v = np.zeros(tree.nv)
    ctx = fast.create_default_context()
    fast.set_positions(ctx, q)
    fast.set_velocities(ctx, v)
    methods = []
    for _ in range(300):
        fast.advance(ctx, 1)
        methods.append(fast.get_output_port("step").eval(ctx).status.method)
    assert methods == ["compiled_pgs"] * 300          # no fallback (none in 2000 steps either)
    q1, v1 = fast.get_positions(ctx), fast.get_velocities(ctx)
    q2, v2, _ = final_state(fast, q, v, 300)
    assert np.array_equal(q1, q2) and np.array_equal(v1, v2)
    assert np.all(np.isfinite(q1)) and np.all(q1[6::7] > 0.09)
    assert q1[4 + 7 * 5] > q[4 + 7 * 5] + 0.05                 # the ball rolled downhill


# ---------------------------------------------------------------- the numpy twin
@pytest.mark.filterwarnings("ignore::solvers.compiled.CompilationWarning")
def test_numpy_twin_agrees_with_the_c_kernel_on_every_pair_family(monkeypatch):
    """Box-box, capsule, cylinder and ellipsoid contacts: the numpy twin of the kernel (the
    numpy narrow phase) ends where the C kernel does, to 1e-12."""
    shapes = [Box((0.2, 0.2, 0.2)), Box((0.15, 0.15, 0.1)), Capsule(0.05, 0.2),
              Cylinder(0.06, 0.1), Ellipsoid((0.08, 0.06, 0.05))]
    tree = _scene(shapes)
    q = np.concatenate([[1, 0, 0, 0, 0, 0, 0.1], [*_quat((0, 0, 1), 0.4), 0.02, 0.0, 0.26],
                        [*_quat((1, 0, 0), np.pi / 2), 0.5, 0, 0.06],
                        [*_quat((1, 0, 0), 0.2), -0.5, 0, 0.07],
                        [1, 0, 0, 0, 0, 0.5, 0.06]])
    v = np.zeros(tree.nv)
    v[6 + 3] = 0.3
    c_plant = TimeSteppingRigidBodySystem(tree, H, constraints=[PointContactConstraint(tree)])
    qc, vc, _ = final_state(c_plant, q, v, 60)
    without_compiler(monkeypatch)
    n_plant = TimeSteppingRigidBodySystem(tree, H, constraints=[PointContactConstraint(tree)])
    assert n_plant.step_method == "numpy_pgs"
    qn, vn, ctx = final_state(n_plant, q, v, 60)
    np.testing.assert_allclose(qn, qc, atol=1e-12, rtol=0)
    np.testing.assert_allclose(vn, vc, atol=1e-12, rtol=0)
    assert n_plant.get_output_port("step").eval(ctx).status.active_contacts >= 12


@pytest.mark.filterwarnings("ignore::multibody.errors.StepMethodWarning")
def test_bench_five_boxes_runs_the_issue_scene_on_the_compiled_step():
    """benchmarks/bench_five_boxes.py (2 s of the issue's scene timed there) builds the scene
    of the test above, and its short run takes every step on the compiled step."""
    import importlib.util
    import os
    path = os.path.join(os.path.dirname(__file__), "..", "..", "..", "benchmarks",
                        "bench_five_boxes.py")
    spec = importlib.util.spec_from_file_location("bench_five_boxes", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    tree, q = _boxes_and_ball()
    btree, bq = bench.scene()
    np.testing.assert_allclose(bq, q, rtol=0, atol=1e-15)

    def geometry(t):
        return [(b.name, g.name, type(g.shape).__name__, np.round(np.asarray(g.pose), 12).tolist(),
                 getattr(g.shape, "half", getattr(g.shape, "radius", None)).tolist()
                 if hasattr(g.shape, "half") else getattr(g.shape, "radius", None))
                for b in t.bodies for g in b.collision_geometries]
    assert geometry(btree) == geometry(tree)
    assert [b.mass for b in btree.bodies] == [b.mass for b in tree.bodies]
    res = bench.run("auto", 0.03, 1)
    assert res["method"] == "compiled_pgs" and res["steps"] == 30
    assert res["census"] == {"compiled_pgs": 30}
