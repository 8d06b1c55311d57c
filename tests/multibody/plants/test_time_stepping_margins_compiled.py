"""Per-geometry contact margins (``PointContactConstraint(geometry_margins=...)``, MuJoCo's
``margin``) on the compiled step: each geometry pair's candidate carries the sum of its two
margins (``pair_margin``); the narrow phase looks that much further and the pair's signed
distance is taken as ``phi - (m_a + m_b)``, so bodies rest that far apart. The compiled and
pivoting steps agree within 1e-7; the numpy twin equals the C kernel. h = 1e-3."""
from __future__ import annotations

import numpy as np
import pytest

from _compiled_step import final_state, without_compiler
from _time_stepping_models import free_boxes, free_spheres
from multibody.constraints import PointContactConstraint
from multibody.plants import TimeSteppingRigidBodySystem

G = 9.81
H = 1e-3
pytestmark = pytest.mark.skipif(
    __import__("solvers.compiled", fromlist=["x"]).find_compiler() is None,
    reason="no C compiler: the compiled step is not built")


def _agree(tree, q, v, steps, tol=1e-7, **kw):
    fast = TimeSteppingRigidBodySystem(tree, H, constraints=[PointContactConstraint(tree, **kw)])
    slow = TimeSteppingRigidBodySystem(tree, H, constraints=[PointContactConstraint(tree, **kw)],
                                       contact_solver="lcp")
    assert fast.step_method == "compiled_pgs", fast.step_method_reason
    qf, vf, cf = final_state(fast, q, v, steps)
    qs, vs, _ = final_state(slow, q, v, steps)
    np.testing.assert_allclose(qf, qs, atol=tol, rtol=0)
    np.testing.assert_allclose(vf, vs, atol=tol, rtol=0)
    assert fast.get_output_port("step").eval(cf).status.fallback_from is None
    return fast, cf, qf, vf


def test_sphere_comes_to_rest_the_summed_margins_above_the_ground():
    """A 0.1 m sphere with margin 0.004 over a ground with margin 0.006, dropped from 0.13 m:
    it rests with its centre at r + 0.01 (within the CFM's compliance), carrying its weight;
    the contact's distance is the gap minus the margins."""
    tree = free_spheres(1, radius=0.1, mass=2.0)
    q = np.array([1.0, 0, 0, 0, 0, 0, 0.13])
    fast, cf, qf, vf = _agree(tree, q, np.zeros(6), 400, mu=0.5,
                              geometry_margins={"ground": 0.006, "ball0_geom": 0.004})
    assert qf[6] == pytest.approx(0.11, abs=1e-6)
    np.testing.assert_allclose(vf, 0.0, atol=1e-7)
    res = fast.get_output_port("contact_results").eval(cf)
    assert len(res) == 1
    assert res.normal_forces().sum() == pytest.approx(2.0 * G, rel=1e-6)
    assert abs(res[0].distance) < 1e-6


def test_box_slides_on_its_margin_as_with_the_pivoting_step():
    """A box with a 5 mm margin pushed along the ground at 30 deg: it rides 5 mm up and
    decelerates by mu g, the same motion as the pivoting step."""
    mu, v0, n = 0.4, 1.0, 150
    d = np.array([np.cos(np.radians(30.0)), np.sin(np.radians(30.0)), 0.0])
    q = np.array([1.0, 0, 0, 0, 0, 0, 0.105])
    _, _, qf, vf = _agree(free_boxes(1), q, np.concatenate([np.zeros(3), v0 * d]), n, mu=mu,
                          geometry_margins={"ground": 0.005})
    assert qf[6] == pytest.approx(0.105, abs=1e-6)
    np.testing.assert_allclose(vf[3:], (v0 - mu * G * H * n) * d, atol=1e-9)


def test_stack_with_margins_and_box_friction_agrees_with_the_pivoting_step():
    """Two boxes stacked, each with its own margin, friction='box': the upper box rests the
    two boxes' margins above the lower one."""
    tree = free_boxes(2)
    q = np.zeros(14)
    q[0:7] = [1, 0, 0, 0, 0, 0, 0.102]
    q[7:14] = [1, 0, 0, 0, 0.01, 0, 0.102 + 0.2 + 0.005]
    margins = {"box0_geom": 0.002, "box1_geom": 0.003}
    names = [g.name for b in tree.bodies for g in b.collision_geometries]
    margins = {k: v for k, v in margins.items() if k in names}
    assert len(margins) == 2, names
    _, _, qf, vf = _agree(tree, q, np.zeros(12), 200, mu=0.5, friction="box",
                          geometry_margins=margins)
    assert qf[13] - qf[6] == pytest.approx(0.205, abs=1e-6)


@pytest.mark.filterwarnings("ignore::solvers.compiled.CompilationWarning")
def test_numpy_twin_equals_the_c_kernel_with_margins(monkeypatch):
    q = np.array([1.0, 0, 0, 0, 0, 0, 0.12])
    v = np.array([0.3, 0.0, 0.5, 0.7, 0.7, -0.2])
    kw = dict(mu=0.4, geometry_margins={"ground": 0.01})
    tree = free_boxes(1)
    fast = TimeSteppingRigidBodySystem(tree, H, constraints=[PointContactConstraint(tree, **kw)])
    qc, vc, _ = final_state(fast, q, v, 60)
    without_compiler(monkeypatch)
    tb = free_boxes(1)
    twin = TimeSteppingRigidBodySystem(tb, H, constraints=[PointContactConstraint(tb, **kw)])
    assert twin.step_method == "numpy_pgs"
    qn, vn, _ = final_state(twin, q, v, 60)
    np.testing.assert_allclose(qn, qc, atol=1e-12, rtol=0)
    np.testing.assert_allclose(vn, vc, atol=1e-12, rtol=0)


def test_whole_run_with_box_friction_and_margins_equals_the_interpreted_run():
    """``Simulator(diagram, compiled=True)`` reads the same tables (the header's
    ``friction_box``, the candidates' ``pair_margin``): a spinning box landing on a ground
    with a margin, friction='box', ends where the interpreted run ends (bitwise here)."""
    from systems import DiagramBuilder
    from systems.analysis import Simulator
    tree = free_boxes(1)
    plant = TimeSteppingRigidBodySystem(tree, H, constraints=[PointContactConstraint(
        tree, mu=0.4, friction="box", geometry_margins={"ground": 0.004}, name="contact")],
        name="plant")
    b = DiagramBuilder("d")
    b.add_system(plant)
    d = b.build()
    ctx = d.create_default_context()
    pc = plant.get_my_context_from_root(ctx)
    plant.set_positions(pc, [1, 0, 0, 0, 0, 0, 0.12])
    plant.set_velocities(pc, [0.3, 0, 0.5, 0.7, 0.7, 0])
    c1, c2 = ctx.clone(), ctx.clone()
    Simulator(d, c1).advance_to(0.3)
    Simulator(d, c2, compiled=True).advance_to(0.3)
    x1 = np.asarray(plant.get_my_context_from_root(c1).discrete_state)
    x2 = np.asarray(plant.get_my_context_from_root(c2).discrete_state)
    np.testing.assert_allclose(x2, x1, atol=1e-12, rtol=0)
    assert x1[6] == pytest.approx(0.104, abs=1e-5)          # resting on the margin
