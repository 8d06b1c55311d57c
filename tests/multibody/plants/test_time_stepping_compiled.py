"""The compiled step of TimeSteppingRigidBodySystem (issue 12): it is the default where it
applies, agrees with the interpreted Lemke step and with closed forms, keeps its warm start
in the context (bitwise reruns), falls back to the interpreted step when the PGS does not
converge, and the plant runs without a C compiler (interpreted step). h = 1e-3."""
from __future__ import annotations

import numpy as np
import pytest

from _compiled_step import final_state, without_compiler
from _time_stepping_models import free_boxes, free_spheres
from multibody import RigidBodyTree
from multibody.constraints import MuJoCoSoftening, PointContactConstraint
from multibody.errors import StepMethodWarning
from multibody.geometry import Box, Halfspace, Sphere
from multibody.plants import TimeSteppingRigidBodySystem
from multibody.tree import Free, Revolute

G = 9.81
H = 1e-3
pytestmark = pytest.mark.skipif(
    __import__("solvers.compiled", fromlist=["x"]).find_compiler() is None,
    reason="no C compiler: the compiled step is not built (its fallback is tested below)")


def _pair(tree, **kw):
    """The same scene stepped by the compiled and by the interpreted path."""
    fast = TimeSteppingRigidBodySystem(tree, H, constraints=[PointContactConstraint(tree, **kw)])
    slow = TimeSteppingRigidBodySystem(tree, H, constraints=[PointContactConstraint(tree, **kw)],
                                       contact_solver="lcp")
    assert fast.step_method == "compiled_pgs" and slow.step_method == "lcp"
    return fast, slow


def _box_q(z=0.1, yaw=0.0):
    return np.array([np.cos(yaw / 2), 0, 0, np.sin(yaw / 2), 0.0, 0.0, z])


# ---------------------------------------------------------------- selection
def test_compiled_step_is_the_default_and_the_lcp_step_selectable():
    tree = free_boxes(1)
    fast, slow = _pair(tree, mu=0.5)
    assert fast.step_method_reason is None
    assert slow.step_method_reason == "contact_solver='lcp'"
    with pytest.raises(ValueError, match=r"contact_solver must be 'auto', 'pgs' or 'lcp'"):
        TimeSteppingRigidBodySystem(tree, H, constraints=[PointContactConstraint(tree)],
                                    contact_solver="fast")
    with pytest.raises(ValueError, match=r"pgs_max_sweeps must be an integer >= 1"):
        TimeSteppingRigidBodySystem(tree, H, constraints=[PointContactConstraint(tree)],
                                    pgs_max_sweeps=0)


def test_every_shape_pair_box_friction_and_margins_take_the_compiled_step():
    """Box-box pairs (no closed form) run in the kernel's compiled narrow phase, and so do
    the friction pyramid (friction='box') and per-geometry margins; MuJoCo softening still
    takes the interpreted step, with the reason named."""
    tree = free_boxes(2, ground=True)
    s = TimeSteppingRigidBodySystem(tree, H, constraints=[PointContactConstraint(tree)])
    assert s.step_method == "compiled_pgs" and s.step_method_reason is None
    box = free_boxes(1)
    s = TimeSteppingRigidBodySystem(box, H, constraints=[PointContactConstraint(
        box, friction="box")])
    assert s.step_method == "compiled_pgs" and s.step_method_reason is None
    s = TimeSteppingRigidBodySystem(box, H, constraints=[PointContactConstraint(
        box, geometry_margins={"ground": 1e-3})])
    assert s.step_method == "compiled_pgs" and s.step_method_reason is None
    with pytest.warns(StepMethodWarning):
        s = TimeSteppingRigidBodySystem(box, H, constraints=[PointContactConstraint(
            box, mujoco=MuJoCoSoftening())])
    assert s.step_method == "lcp" and "MuJoCo softening" in s.step_method_reason
    with pytest.raises(ValueError, match=r"contact_solver='pgs' is not available: constraint "
                                         r"'.*' has MuJoCo softening"):
        TimeSteppingRigidBodySystem(box, H, constraints=[PointContactConstraint(
            box, mujoco=MuJoCoSoftening())], contact_solver="pgs")


@pytest.mark.filterwarnings("ignore::solvers.compiled.CompilationWarning")
def test_without_a_compiler_the_step_runs_in_numpy_and_agrees_with_c(monkeypatch):
    """No compiler: the kernel's numpy twin takes the step (same tables and algorithm); a
    sphere dropped onto a sliding sphere ends where the C kernel puts it (to 1e-12)."""
    tree = free_spheres(2, radius=0.05, mass=0.1)
    q = tree.neutral_configuration()
    q[0:7] = [1, 0, 0, 0, 0, 0, 0.05]
    q[7:14] = [1, 0, 0, 0, 0.02, 0.0, 0.16]
    v = np.zeros(12)
    v[3] = 0.3
    c_plant = TimeSteppingRigidBodySystem(tree, H, constraints=[PointContactConstraint(tree)])
    qc, vc, _ = final_state(c_plant, q, v, 120)
    without_compiler(monkeypatch)
    s = TimeSteppingRigidBodySystem(tree, H, constraints=[PointContactConstraint(tree)])
    assert s.step_method == "numpy_pgs" and s.step_method_reason is None
    qn, vn, ctx = final_state(s, q, v, 120)
    np.testing.assert_allclose(qn, qc, atol=1e-12)
    np.testing.assert_allclose(vn, vc, atol=1e-11)
    assert qn[13] < 0.16 - 0.005 and s.get_output_port("step").eval(ctx).report.method == "pgs"
    import solvers.contact_step as kernel
    assert kernel.load_kernel(numpy_fallback=False) is None


# ---------------------------------------------------------------- agreement
def test_resting_box_matches_the_lcp_step_and_splits_its_weight():
    fast, slow = _pair(free_boxes(1, mass=1.5), mu=0.5, cfm=1e-6)
    q0 = _box_q()
    qf, vf, cf = final_state(fast, q0, np.zeros(6), 300)
    qs, vs, cs = final_state(slow, q0, np.zeros(6), 300)
    np.testing.assert_allclose(qf, qs, atol=1e-12)
    np.testing.assert_allclose(vf, vs, atol=1e-10)             # the PGS accepts 1e-10 m/s
    assert abs(qf[6] - 0.1) < 1e-7                  # the CFM's compliance: 18 nm, as Lemke
    res = fast.get_output_port("contact_results").eval(cf)
    assert len(res) == 4
    np.testing.assert_allclose(res.normal_forces(), 1.5 * G / 4, rtol=1e-9)
    np.testing.assert_allclose(res.total_force("box0"), [0, 0, 1.5 * G], atol=1e-9)
    rep = fast.get_output_port("step").eval(cf).report
    assert rep.method == "pgs" and rep.size == 12 and rep.residual < 1e-12


def test_resting_sphere_stack_drifts_as_little_as_the_lcp_step():
    """Three spheres stacked on the ground for 1 s: each sinks by the CFM's compliance only
    (below 1e-9 m), as with Lemke, and nothing moves sideways."""
    fast, slow = _pair(free_spheres(3, radius=0.05, mass=0.1), mu=0.5)
    q = np.zeros(21)
    for i in range(3):
        q[7 * i:7 * i + 7] = [1, 0, 0, 0, 0, 0, 0.05 + 0.1 * i]
    qf, vf, _ = final_state(fast, q, np.zeros(18), 1000)
    qs, _, _ = final_state(slow, q, np.zeros(18), 1000)
    drift = qf - q
    assert np.max(np.abs(drift)) < 1e-9
    np.testing.assert_allclose(qf, qs, atol=1e-15)
    np.testing.assert_allclose(vf, 0.0, atol=1e-12)


@pytest.mark.parametrize("heading_deg", [0.0, 30.0, 135.0])
def test_sliding_box_decelerates_by_mu_g_along_any_heading(heading_deg):
    """v(t) = v0 - mu g t along the heading, x(t) = v0 t - mu g t^2 / 2 (semi-implicit Euler:
    x_n = h sum v_k), until it sticks; the LCP step gives the same to 1e-10."""
    mu, v0, n = 0.4, 1.0, 150
    d = np.array([np.cos(np.deg2rad(heading_deg)), np.sin(np.deg2rad(heading_deg)), 0.0])
    fast, slow = _pair(free_boxes(1), mu=mu)
    v = np.concatenate([np.zeros(3), v0 * d])
    qf, vf, _ = final_state(fast, _box_q(), v, n)
    qs, vs, _ = final_state(slow, _box_q(), v, n)
    vk = v0 - mu * G * H * np.arange(1, n + 1)
    np.testing.assert_allclose(vf[3:], vk[-1] * d, atol=1e-9)
    np.testing.assert_allclose(qf[4:6], H * vk.sum() * d[:2], atol=1e-9)
    np.testing.assert_allclose(np.concatenate([qf, vf]), np.concatenate([qs, vs]), atol=1e-10)


def test_sphere_pile_agrees_with_the_lcp_step():
    """Three spheres on the ground with a fourth on top (a pyramid that spreads): the friction
    disc (compiled) and the slip-aligned cone (Lemke) give the same motion to 1e-7 m."""
    tree = RigidBodyTree("pile")
    tree.add_collision_geometry("world", Halfspace(), name="ground")
    r = 0.05
    for i in range(4):
        tree.add_body(f"b{i}", 0.1, inertia=np.eye(3) * 0.4 * 0.1 * r * r)
        tree.add_joint(Free(f"f{i}", "world", f"b{i}"))
        tree.add_collision_geometry(f"b{i}", Sphere(r), name=f"s{i}")
    fast, slow = _pair(tree, mu=0.5)
    d = 2 * r + 1e-4
    pos = [(0, 0, r), (d, 0, r), (d / 2, d * np.sqrt(3) / 2, r),
           (d / 2, d / (2 * np.sqrt(3)), r + d * np.sqrt(2 / 3) - 2e-3)]
    q = tree.neutral_configuration()
    for i, p in enumerate(pos):
        q[7 * i:7 * i + 7] = [1, 0, 0, 0, *p]
    qf, vf, cf = final_state(fast, q, np.zeros(tree.nv), 150)
    qs, vs, _ = final_state(slow, q, np.zeros(tree.nv), 150)
    np.testing.assert_allclose(qf, qs, atol=1e-7)
    np.testing.assert_allclose(vf, vs, atol=1e-6)
    assert qf[7 * 3 + 6] < pos[3][2] - 1e-3                   # the top sphere came down
    assert fast.get_output_port("step").eval(cf).report.method == "pgs"


@pytest.mark.parametrize("kw", [dict(formulation="stewart_trinkle"), dict(kp=2e4, kd=300.0),
                                dict(erp=0.5, cfm=1e-5)])
def test_formulations_and_softening_match_the_lcp_step(kw):
    """A box dropped 5 mm while sliding lands under the full-correction formulation, a
    spring-damper contact and ERP/CFM softening: both paths agree. (The slip is the same at
    the four corners, along a generator of the interpreted step's cone; with a spin the disc
    of the compiled step and that 4-direction cone differ, by design.)"""
    fast, slow = _pair(free_boxes(1), mu=0.3, **kw)
    v = np.array([0.0, 0.0, 0.0, 0.2, -0.1, -0.3])
    qf, vf, _ = final_state(fast, _box_q(z=0.105, yaw=0.3), v, 120)
    qs, vs, _ = final_state(slow, _box_q(z=0.105, yaw=0.3), v, 120)
    # the soft landing tilts the box by 1e-6 rad: the corners' slips then differ slightly
    # in direction, where disc and cone part (by 3e-8 m here)
    tol = 1e-7 if "kp" in kw else 1e-9
    np.testing.assert_allclose(qf, qs, atol=tol)
    np.testing.assert_allclose(vf, vs, atol=10 * tol)


def test_spinning_tumbling_body_in_flight_matches_the_tree_integration():
    """No contact within the margin: the kernel's integration (exponential map, straight-line
    position) and frame change equal the interpreted step's."""
    fast, slow = _pair(free_boxes(1), mu=0.5)
    q0 = _box_q(z=2.0)
    v0 = np.array([3.0, -1.0, 7.0, 0.5, 0.2, 1.0])
    qf, vf, _ = final_state(fast, q0, v0, 200)
    qs, vs, _ = final_state(slow, q0, v0, 200)
    np.testing.assert_allclose(qf, qs, atol=1e-13)
    np.testing.assert_allclose(vf, vs, atol=1e-12)


def test_pendulum_tip_on_the_ground_with_joint_damping():
    """A revolute chain (one velocity block of size 2, joint damping taken implicitly) whose
    tip sphere rests on a halfspace below the hinge."""
    tree = RigidBodyTree("arm")
    L = 0.5
    for i, parent in enumerate(["world", "l0"]):
        tree.add_body(f"l{i}", 1.0, com=[L / 2, 0, 0], inertia=np.diag([1e-3, 0.02, 0.02]))
        tree.add_joint(Revolute(f"j{i}", parent, f"l{i}", axis=[0, 1, 0], damping=0.3,
                                origin=np.eye(4) if i == 0 else np.array(
                                    [[1, 0, 0, L], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]])))
    tree.add_collision_geometry("l1", Sphere(0.03), pose=np.array(
        [[1, 0, 0, L], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]]), name="tip")
    X = np.eye(4)
    X[2, 3] = -0.6
    tree.add_collision_geometry("world", Halfspace(), pose=X, name="ground")
    fast, slow = _pair(tree, mu=0.8)
    q = np.array([0.6, 0.3])
    qf, vf, cf = final_state(fast, q, np.zeros(2), 400)
    qs, vs, _ = final_state(slow, q, np.zeros(2), 400)
    np.testing.assert_allclose(qf, qs, atol=1e-9)
    np.testing.assert_allclose(vf, vs, atol=1e-8)
    assert len(fast.get_output_port("contact_results").eval(cf)) == 1


# ---------------------------------------------------------------- memory and fallback
def test_warm_start_lives_in_the_context_and_reruns_are_bitwise():
    tree = free_spheres(3, radius=0.05, mass=0.1)
    s = TimeSteppingRigidBodySystem(tree, H, constraints=[PointContactConstraint(tree, mu=0.5)])
    q = tree.neutral_configuration()
    for i, p in enumerate([(0, 0, 0.05), (0.1001, 0, 0.05), (0.05, 0.03, 0.14)]):
        q[7 * i:7 * i + 7] = [1, 0, 0, 0, *p]
    a = s.create_default_context()
    s.set_positions(a, q)
    b = a.clone()
    s.advance(a, 60)
    warm = a.get_memory()["warm_start"]                  # the kernel's ContactWarmStart
    assert warm.method == "compiled_pgs" and np.any(warm.impulses > 0)
    c = s.create_default_context()                      # another run interleaved with b
    s.set_positions(c, q)
    for _ in range(60):
        s.advance(b, 1)
        s.advance(c, 1)
    assert np.array_equal(a.discrete_state, b.discrete_state)
    assert np.array_equal(b.discrete_state, c.discrete_state)


def test_contexts_stepped_from_two_threads_match_sequential_runs():
    """The kernel's buffers live in each context's memory (the C call releases the GIL)."""
    from concurrent.futures import ThreadPoolExecutor
    tree = free_spheres(3, radius=0.05, mass=0.1)
    s = TimeSteppingRigidBodySystem(tree, H, constraints=[PointContactConstraint(tree, mu=0.5)])
    starts = []
    for k in range(4):
        q = tree.neutral_configuration()
        for i, p in enumerate([(0, 0, 0.05), (0.1001, 0, 0.05), (0.05 + 0.01 * k, 0.03, 0.14)]):
            q[7 * i:7 * i + 7] = [1, 0, 0, 0, *p]
        starts.append(q)

    def run(q):
        ctx = s.create_default_context()
        s.set_positions(ctx, q)
        for _ in range(150):
            s.advance(ctx, 1)
        return np.array(ctx.discrete_state)
    sequential = [run(q) for q in starts]
    with ThreadPoolExecutor(2) as pool:
        threaded = list(pool.map(run, starts))
    for a, b in zip(sequential, threaded):
        assert np.array_equal(a, b)


def test_unconverged_pgs_falls_back_to_the_lcp_step():
    """With one sweep allowed the PGS cannot finish; every step is then the interpreted one."""
    tree = free_boxes(1)
    one = TimeSteppingRigidBodySystem(tree, H, constraints=[PointContactConstraint(tree, mu=0.5)],
                                      pgs_max_sweeps=1)
    slow = TimeSteppingRigidBodySystem(tree, H, constraints=[PointContactConstraint(tree, mu=0.5)],
                                       contact_solver="lcp")
    assert one.step_method == "compiled_pgs"
    v = np.array([0, 0, 2.0, 0.3, 0.0, -0.2])                 # spinning and landing
    q1, v1, c1 = final_state(one, _box_q(z=0.1005), v, 40)
    qs, vs, _ = final_state(slow, _box_q(z=0.1005), v, 40)
    assert one.get_output_port("step").eval(c1).report.method == "lemke"
    np.testing.assert_allclose(q1, qs, atol=1e-12)
    np.testing.assert_allclose(v1, vs, atol=1e-10)


def test_contact_results_of_the_compiled_step():
    """A sphere at rest: normal force m g, no friction, the point midway between the
    surfaces, the normal; the rows are available on demand and give ``tau_constraint``."""
    tree = free_spheres(1, radius=0.1, mass=2.0)
    s = TimeSteppingRigidBodySystem(tree, H, constraints=[PointContactConstraint(tree, mu=0.5)])
    ctx = s.create_default_context()
    q = tree.neutral_configuration()
    q[6] = 0.1
    s.set_positions(ctx, q)
    s.advance(ctx, 300)
    step = s.get_output_port("step").eval(ctx)
    (c,) = s.get_output_port("contact_results").eval(ctx)
    assert (c.body_a, c.body_b, c.geometry_b) == ("world", "ball0", "ball0_geom")
    np.testing.assert_allclose(c.normal, [0, 0, 1])
    np.testing.assert_allclose(c.point, [0, 0, (q[6] - 0.1) / 2], atol=1e-9)
    assert c.normal_force == pytest.approx(2.0 * G, rel=1e-9)
    np.testing.assert_allclose(c.friction_force, 0.0, atol=1e-12)
    rows = step.rows[0]
    assert rows.J.shape == (3, 6) and list(rows.kind[:1]) == [1]
    # w = J v_n + b + cfm/h p is zero on the normal row of a resting contact
    w = rows.J @ step.v_next + rows.bias + rows.cfm / H * step.impulses[0]
    assert abs(w[0]) < 1e-12 and np.all(rows.cfm == 1e-8)
    np.testing.assert_allclose(step.impulses[0], [2.0 * G * H, 0, 0], atol=1e-12)
    np.testing.assert_allclose(step.tau_constraint, rows.J.T @ step.impulses[0] / H, atol=1e-12)
