"""ODE's friction pyramid (``PointContactConstraint(friction="box")``) on the compiled step:
one row per tangent direction (t1 against the free slip, t2 = n x t1, as the pivoting
step's ``friction_basis``), each bounded by ``mu p_n`` (PGS clamps each row; the polish
holds each row free, at ``+mu p_n`` or at ``-mu p_n``). The compiled step and the pivoting
step (``contact_solver="lcp"``, Dantzig's boxed LCP) agree within 1e-7 on scenes whose
impulses are unique; rest forces equal the weights; the numpy twin equals the C kernel.
h = 1e-3."""
from __future__ import annotations

import numpy as np
import pytest

from _compiled_step import final_state, without_compiler
from _time_stepping_models import box_inertia, free_boxes, free_spheres
from _time_stepping_models import (quat_axis_angle as _quat, quat_mul as _qmul,
                                   quat_to_rot as _rot)
from multibody import Free, RigidBodyTree
from multibody.constraints import PointContactConstraint
from multibody.geometry import Box
from multibody.plants import TimeSteppingRigidBodySystem

G = 9.81
H = 1e-3
pytestmark = pytest.mark.skipif(
    __import__("solvers.compiled", fromlist=["x"]).find_compiler() is None,
    reason="no C compiler: the compiled step is not built")


def _plants(tree, **kw):
    fast = TimeSteppingRigidBodySystem(tree, H, constraints=[PointContactConstraint(
        tree, friction="box", **kw)])
    slow = TimeSteppingRigidBodySystem(tree, H, constraints=[PointContactConstraint(
        tree, friction="box", **kw)], contact_solver="lcp")
    assert fast.step_method == "compiled_pgs", fast.step_method_reason
    return fast, slow


def _assert_agrees_with_pivoting(tree, q, v, steps, tol=1e-7, **kw):
    """Both methods from (q, v) for ``steps`` steps: equal within ``tol``, every compiled
    step taken by the kernel (no fallback)."""
    fast, slow = _plants(tree, **kw)
    qf, vf, cf = final_state(fast, q, v, steps)
    qs, vs, _ = final_state(slow, q, v, steps)
    np.testing.assert_allclose(qf, qs, atol=tol, rtol=0)
    np.testing.assert_allclose(vf, vs, atol=tol, rtol=0)
    st = fast.get_output_port("step").eval(cf).status
    assert st.method == "compiled_pgs" and st.fallback_from is None
    return fast, cf, qf, vf


def _slope_tree(alpha, heading):
    """A 0.2 m x 0.2 m x 0.1 m box (1 kg) on a fixed box tilted by ``alpha`` about y, then
    turned by ``heading`` about z; returns the tree, the box's resting pose and the slope's
    rotation."""
    qs = _qmul(_quat((0, 0, 1), heading), _quat((0, 1, 0), alpha))
    Rs = _rot(qs)
    Xs = np.eye(4)
    Xs[:3, :3], Xs[:3, 3] = Rs, -0.5 * Rs[:, 2]            # top face through the origin
    t = RigidBodyTree("slope")
    t.add_body("b", 1.0, inertia=box_inertia(1.0, (0.2, 0.2, 0.1)))
    t.add_joint(Free("f", "world", "b"))
    t.add_collision_geometry("b", Box((0.2, 0.2, 0.1)), name="g")
    t.add_collision_geometry("world", Box((2.0, 2.0, 1.0)), pose=Xs, name="slope")
    return t, np.concatenate([qs, 0.05 * Rs[:, 2]]), Rs


# ---------------------------------------------------------------- sliding, any heading
@pytest.mark.parametrize("heading_deg", [0.0, 30.0, 45.0])
def test_flat_slide_decelerates_by_mu_g_at_every_heading(heading_deg):
    """Pushed along ``heading`` on flat ground: t1 is against the slip, so the pyramid's
    friction is mu m g along it (v = v0 - mu g t), the same as the pivoting step to 1e-7."""
    mu, v0, n = 0.4, 1.0, 150
    d = np.array([np.cos(np.radians(heading_deg)), np.sin(np.radians(heading_deg)), 0.0])
    q = np.array([1.0, 0, 0, 0, 0, 0, 0.1])
    v = np.concatenate([np.zeros(3), v0 * d])
    _, _, _, vf = _assert_agrees_with_pivoting(free_boxes(1), q, v, n, mu=mu)
    np.testing.assert_allclose(vf[3:], (v0 - mu * G * H * n) * d, atol=1e-9)


@pytest.mark.parametrize("heading_deg", [0.0, 30.0, 45.0])
def test_spinning_slide_agrees_with_the_pivoting_step(heading_deg):
    """Sliding along ``heading`` while spinning about z and rolling about x (each corner
    slips its own way, the two tangent rows of a corner at different bounds): the same
    motion as the pivoting step's boxed LCP to 1e-7."""
    d = np.array([np.cos(np.radians(heading_deg)), np.sin(np.radians(heading_deg)), 0.0])
    q = np.array([1.0, 0, 0, 0, 0, 0, 0.1])
    v = np.concatenate([[0.3, 0.0, 0.5], d])
    _assert_agrees_with_pivoting(free_boxes(1), q, v, 150, mu=0.4)


@pytest.mark.parametrize("heading_deg", [0.0, 30.0, 45.0])
def test_box_slides_down_a_slope_at_the_coulomb_rate(heading_deg):
    """A box released on a 25 deg slope whose downhill direction is at ``heading``: it slides
    at g (sin a - mu cos a) (t1 against the impending slip: one row at its bound), as the
    pivoting step has it."""
    a, mu, steps = np.radians(25.0), 0.2, 200
    tree, q, Rs = _slope_tree(a, np.radians(heading_deg))
    _, _, qf, vf = _assert_agrees_with_pivoting(tree, q, np.zeros(6), steps, mu=mu)
    down = Rs[:, 0] if Rs[2, 0] < 0 else -Rs[:, 0]
    speed = (_rot(qf[:4]) @ vf[3:6]) @ down
    rate = G * (np.sin(a) - mu * np.cos(a))
    assert abs(speed - rate * steps * H) < 2e-3 * rate * steps * H


def test_box_launched_across_a_tilted_slope_agrees_with_the_pivoting_step():
    """Launched sideways across a 15 deg slope turned by 30 deg (the slip turns downhill
    over the run): the same motion as the pivoting step to 1e-7."""
    tree, q, Rs = _slope_tree(np.radians(15.0), np.radians(30.0))
    v = np.zeros(6)
    v[3:6] = _rot(q[:4]).T @ (0.8 * Rs[:, 1])              # body-frame linear velocity
    _assert_agrees_with_pivoting(tree, q, v, 200, mu=0.5)


def test_box_sticks_on_a_gentle_slope():
    """On a 10 deg slope with mu = 0.5 (tan 10 deg < mu) the box stays put: no motion, the
    friction inside the pyramid (velocities of the CFM's compliance only, below 1e-7 m/s)."""
    tree, q, _ = _slope_tree(np.radians(10.0), np.radians(30.0))
    _, _, qf, vf = _assert_agrees_with_pivoting(tree, q, np.zeros(6), 200, mu=0.5)
    np.testing.assert_allclose(vf, 0.0, atol=1e-7)
    np.testing.assert_allclose(qf[4:], q[4:], atol=1e-7)


# ---------------------------------------------------------------- resting
def test_sphere_at_rest_carries_its_weight():
    tree = free_spheres(1, radius=0.1, mass=2.0)
    q = np.array([1.0, 0, 0, 0, 0, 0, 0.1])
    fast, cf, qf, vf = _assert_agrees_with_pivoting(tree, q, np.zeros(6), 100, mu=0.5)
    res = fast.get_output_port("contact_results").eval(cf)
    assert len(res) == 1
    assert res.normal_forces().sum() == pytest.approx(2.0 * G, rel=1e-6)
    np.testing.assert_allclose(vf, 0.0, atol=1e-9)


def test_stack_of_boxes_rests_as_with_the_pivoting_step():
    """Three boxes stacked with offsets: they stay, the ground carries the three weights."""
    tree = free_boxes(3)
    q = np.zeros(21)
    for i in range(3):
        q[7 * i:7 * i + 7] = [1, 0, 0, 0, 0.02 * i, -0.01 * i, 0.1 + 0.2 * i]
    fast, cf, qf, vf = _assert_agrees_with_pivoting(tree, q, np.zeros(18), 200, mu=0.6)
    np.testing.assert_allclose(vf, 0.0, atol=1e-8)
    res = fast.get_output_port("contact_results").eval(cf)
    assert res.total_force("box0")[2] == pytest.approx(G, rel=1e-6)   # net: its own weight


# ---------------------------------------------------------------- the numpy twin
@pytest.mark.filterwarnings("ignore::solvers.compiled.CompilationWarning")
def test_numpy_twin_equals_the_c_kernel_with_box_friction(monkeypatch):
    q = np.array([1.0, 0, 0, 0, 0, 0, 0.1])
    v = np.array([0.3, 0.0, 0.5, 0.7, 0.7, 0.0])
    fast, _ = _plants(free_boxes(1), mu=0.4)
    qc, vc, _ = final_state(fast, q, v, 60)
    without_compiler(monkeypatch)
    tb = free_boxes(1)
    twin = TimeSteppingRigidBodySystem(tb, H, constraints=[PointContactConstraint(
        tb, mu=0.4, friction="box")])
    assert twin.step_method == "numpy_pgs"
    qn, vn, cn = final_state(twin, q, v, 60)
    np.testing.assert_allclose(qn, qc, atol=1e-12, rtol=0)
    np.testing.assert_allclose(vn, vc, atol=1e-12, rtol=0)
    assert twin.get_output_port("step").eval(cn).status.fallback_from is None


def test_stack_riding_a_sliding_box_stays_on_the_compiled_step():
    """Three boxes stacked, the bottom one launched at 0.5 m/s (a statically indeterminate
    stack over a sliding base, where simultaneous mode changes of the polish can cycle: it
    changes one mode per pass): every one of 300 steps is taken by the kernel (no fallback),
    and the ground carries the three weights."""
    tree = free_boxes(3)
    fast = TimeSteppingRigidBodySystem(tree, H, constraints=[PointContactConstraint(
        tree, mu=0.5, friction="box")])
    ctx = fast.create_default_context()
    q = tree.neutral_configuration()
    for i in range(3):
        q[7 * i:7 * i + 7] = [1, 0, 0, 0, 0.01 * i, 0, 0.1 + 0.2 * i]
    fast.set_positions(ctx, q)
    v = np.zeros(18)
    v[3] = 0.5
    fast.set_velocities(ctx, v)
    for _ in range(300):
        fast.advance(ctx, 1)
        st = fast.get_output_port("step").eval(ctx).status
        assert st.method == "compiled_pgs" and st.fallback_from is None, st
    res = fast.get_output_port("contact_results").eval(ctx)
    ground = sum(c.normal_force for c in res if "ground" in (c.geometry_a, c.geometry_b))
    assert ground == pytest.approx(3 * G, rel=1e-6)
