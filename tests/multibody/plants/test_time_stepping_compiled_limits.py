"""Joint limits in the compiled step (issue 21, item 1): each side of a JointLimitConstraint
is a unilateral one-dof row of the contact kernel (J = +-e_i, phi = q_i - lower or
upper - q_i, active within the block's margin + h |v_i|, bias phi / h before the limit and
erp phi / h past it, the block's cfm or (kp, kd)). A pendulum rests on its limit with the
analytic torque m g l cos(q); the compiled and pivoting steps agree within 1e-7 on a
pendulum hitting its limits (hard, ERP/CFM and spring softening) and on a limbed chain
with limits falling on the (frictionless) ground; the numpy twin equals the C kernel to 1e-12; reruns are
bitwise; softenings the kernel does not have are still refused by name. h = 1e-3."""
from __future__ import annotations

import numpy as np
import pytest

from _compiled_step import trajectory, without_compiler
from multibody import Free, Revolute, RigidBodyTree
from multibody.constraints import (JointFrictionConstraint, JointLimitConstraint,
                                   MuJoCoSoftening, PointContactConstraint)
from multibody.geometry import Box, Capsule, Halfspace
from multibody.plants import TimeSteppingRigidBodySystem

G, H = 9.81, 1e-3
M, ARM = 1.0, 0.5                  # the pendulum's mass (kg) and pivot-COM distance (m)
pytestmark = pytest.mark.skipif(
    __import__("solvers.compiled", fromlist=["x"]).find_compiler() is None,
    reason="no C compiler: the compiled step is not built")


def _pendulum(lower=-0.3, upper=0.4):
    """A link about the world y axis, COM ``ARM`` along its x axis: gravity's torque about
    the hinge is ``M g ARM cos(q)`` (positive: it drives q to the upper limit)."""
    t = RigidBodyTree("pendulum")
    t.add_body("link", M, com=(ARM, 0, 0), inertia=np.eye(3) * 0.01)
    t.add_joint(Revolute("hinge", "world", "link", axis=(0, 1, 0), lower=lower, upper=upper))
    return t


def _pair(tree, blocks):
    """The compiled and the pivoting plant with the constraint blocks ``blocks(tree)``."""
    fast = TimeSteppingRigidBodySystem(tree, H, constraints=blocks(tree))
    slow = TimeSteppingRigidBodySystem(tree, H, constraints=blocks(tree), contact_solver="lcp")
    assert fast.step_method == "compiled_pgs", fast.step_method_reason
    return fast, slow


# ---------------------------------------------------------------- the pendulum
def test_pendulum_rests_on_its_limit_with_the_gravity_torque():
    """At rest on the upper limit 0.4 rad the limit's row holds the link: its impulse is
    h M g ARM cos(0.4), tau_constraint = -M g ARM cos(0.4), q stays at the limit."""
    fast, slow = _pair(_pendulum(), lambda t: [JointLimitConstraint(t, name="lim")])
    for plant in (fast, slow):
        traj, ctx = trajectory(plant, [0.4], [0.0], 200)
        np.testing.assert_allclose(traj[:, 0], 0.4, atol=1e-12, rtol=0)
        np.testing.assert_allclose(traj[:, 1], 0.0, atol=1e-12, rtol=0)
        sol = plant.get_output_port("step").eval(ctx)
        tau = M * G * ARM * np.cos(0.4)
        np.testing.assert_allclose(sol.impulses[0], [H * tau], rtol=1e-9)
        np.testing.assert_allclose(sol.tau_constraint, [-tau], rtol=1e-9)
        rows = sol.rows[0]
        np.testing.assert_array_equal(rows.J, [[-1.0]])
        np.testing.assert_array_equal(rows.info["coordinates"], [0])
        assert sol.status.method == plant.step_method


def test_spring_softened_limit_rests_where_its_spring_holds_the_link():
    """(kp, kd) softening: at rest kp (q - upper) = M g ARM cos(q) (solved by Newton)."""
    kp = 400.0
    fast, slow = _pair(_pendulum(),
                       lambda t: [JointLimitConstraint(t, kp=kp, kd=20.0, name="lim")])
    q = 0.4
    for _ in range(50):                     # kp (q - 0.4) - M g ARM cos q = 0
        q -= (kp * (q - 0.4) - M * G * ARM * np.cos(q)) / (kp + M * G * ARM * np.sin(q))
    tf, _ = trajectory(fast, [0.4], [0.0], 3000)
    ts, _ = trajectory(slow, [0.4], [0.0], 3000)
    assert tf[-1, 0] == pytest.approx(q, abs=1e-9)
    np.testing.assert_allclose(tf, ts, atol=1e-7, rtol=0)


@pytest.mark.parametrize("softening", [{}, {"erp": 0.5, "cfm": 1e-4},
                                       {"kp": 2e3, "kd": 10.0}], ids=["hard", "erp_cfm", "kp_kd"])
def test_pendulum_hitting_its_limits_agrees_with_the_pivoting_step(softening):
    """Swinging from -0.2 rad at 3 rad/s into the upper limit, back to the lower one: the
    two methods agree within 1e-7 at every step; the limit is hit (its row carries an
    impulse) and held (q never passes the hard limit by more than the speculative step)."""
    fast, slow = _pair(_pendulum(), lambda t: [JointLimitConstraint(t, name="lim",
                                                                    **softening)])
    tf, cf = trajectory(fast, [-0.2], [3.0], 800)
    ts, _ = trajectory(slow, [-0.2], [3.0], 800)
    np.testing.assert_allclose(tf, ts, atol=1e-7, rtol=0)
    assert tf[:, 0].max() > 0.399                 # it reached the upper limit
    if not softening:
        assert tf[:, 0].max() <= 0.4 + 1e-12      # and the hard limit held it exactly


def test_limit_block_first_contact_block_second_keeps_the_block_order():
    """With [limits, contact] the step's impulses and rows come per block in the plant's
    order, as the pivoting step gives them."""
    tree = _chain()
    fast, slow = _pair(tree, lambda t: [JointLimitConstraint(t, name="lim"),
                                        PointContactConstraint(t, mu=0.0, name="touch")])
    q0, v0 = _chain_start(tree)
    _, cf = trajectory(fast, q0, v0, 320)
    _, cs = trajectory(slow, q0, v0, 320)
    a, b = (p.get_output_port("step").eval(c) for p, c in ((fast, cf), (slow, cs)))
    assert len(a.rows) == len(b.rows) == 2
    assert a.impulses[0].size > 0 and np.any(a.impulses[0] > 0)
    np.testing.assert_allclose(a.impulses[0], b.impulses[0], atol=1e-8)
    np.testing.assert_array_equal(a.rows[0].J, b.rows[0].J)
    np.testing.assert_array_equal(a.rows[0].info["coordinates"], b.rows[0].info["coordinates"])
    np.testing.assert_allclose(a.rows[0].bias, b.rows[0].bias, atol=1e-12)
    n = a.status.active_contacts                  # the contact block: its normals first
    assert n > 0 and b.status.active_contacts == n
    np.testing.assert_allclose(a.impulses[1][:n], b.impulses[1][:n], atol=1e-8)


# ---------------------------------------------------------------- a limbed chain
def _chain() -> RigidBodyTree:
    """A floating box torso with two legs (hip and knee revolutes with limits, capsule
    thigh and shin) and two arms (shoulder with limits, capsule), over the ground."""
    t = RigidBodyTree("chain")
    t.add_body("torso", 8.0, inertia=np.diag([0.12, 0.1, 0.06]))
    t.add_joint(Free("root", "world", "torso"))
    t.add_collision_geometry("torso", Box((0.3, 0.2, 0.4)), name="torso_g")
    cap = np.eye(4)
    cap[2, 3] = -0.15                                  # capsules along z below their joint
    for side, y in (("l", 0.08), ("r", -0.08)):
        t.add_body(f"thigh_{side}", 2.0, com=(0, 0, -0.15), inertia=np.diag([0.02, 0.02, 0.003]))
        X = np.eye(4)
        X[:3, 3] = (0, y, -0.2)
        t.add_joint(Revolute(f"hip_{side}", "torso", f"thigh_{side}", axis=(0, 1, 0),
                             origin=X, lower=-0.6, upper=0.3))
        t.add_collision_geometry(f"thigh_{side}", Capsule(0.04, 0.11), pose=cap,
                                 name=f"thigh_{side}_g")
        t.add_body(f"shin_{side}", 1.5, com=(0, 0, -0.15), inertia=np.diag([0.015, 0.015, 0.002]))
        X = np.eye(4)
        X[2, 3] = -0.3
        t.add_joint(Revolute(f"knee_{side}", f"thigh_{side}", f"shin_{side}", axis=(0, 1, 0),
                             origin=X, lower=0.0, upper=1.2))
        t.add_collision_geometry(f"shin_{side}", Capsule(0.035, 0.11), pose=cap,
                                 name=f"shin_{side}_g")
        t.add_body(f"arm_{side}", 1.0, com=(0, 0, -0.15), inertia=np.diag([0.01, 0.01, 0.001]))
        X = np.eye(4)
        X[:3, 3] = (0, 2.2 * y, 0.18)
        t.add_joint(Revolute(f"shoulder_{side}", "torso", f"arm_{side}", axis=(1, 0, 0),
                             origin=X, lower=-0.4 if side == "l" else -0.2,
                             upper=0.2 if side == "l" else 0.4))
        t.add_collision_geometry(f"arm_{side}", Capsule(0.03, 0.11), pose=cap,
                                 name=f"arm_{side}_g")
    t.add_collision_geometry("world", Halfspace(), name="ground")
    return t


def _chain_start(tree):
    """Tilted 0.3 rad about y, 2 mm above the ground at the lowest capsule, the joints
    swinging into their limits."""
    q = np.zeros(tree.nq)
    a = 0.3
    q[:4] = (np.cos(a / 2), 0, np.sin(a / 2), 0)
    q[6] = 1.0
    q[6] += 0.002 - _lowest_point(tree, q)
    v = np.zeros(tree.nv)
    for name, w in (("hip_l", -2.0), ("hip_r", 1.5), ("knee_l", 3.0), ("knee_r", -1.0),
                    ("shoulder_l", -2.0), ("shoulder_r", 2.5)):
        v[tree.get_joint(name).v_start] = w
    return q, v


def _lowest_point(tree, q):
    """The lowest point of the capsules (m above the ground)."""
    low = np.inf
    for b in tree.bodies:
        for g in b.collision_geometries:
            if isinstance(g.shape, Capsule):
                for s in (-1.0, 1.0):
                    p = tree.body_pose(g.body, q) @ g.pose @ np.array([0, 0, s * g.shape.half_length, 1])
                    low = min(low, p[2] - g.shape.radius)
    return low


def test_limbed_chain_with_limits_falls_on_the_ground_as_the_pivoting_step():
    """Limits and ground contact together: compiled vs pivoting within 1e-7 at every step
    of 400; limit rows and contacts are active in the run, every step compiled.

    The ground is frictionless: with friction the two methods solve different problems
    whenever a contact slides in a direction that turns within the step (the kernel's
    friction disc against the pivoting step's polyhedral cone aligned with the free slip:
    the shins' first impacts here differ by 5e-4 m/s at mu = 0.8)."""
    tree = _chain()
    q0, v0 = _chain_start(tree)
    assert _lowest_point(tree, q0) == pytest.approx(0.002, abs=1e-12)

    def blocks(t):
        return [PointContactConstraint(t, mu=0.0, name="touch"), JointLimitConstraint(t, name="lim")]
    fast, slow = _pair(tree, blocks)
    ctx_f, ctx_s = fast.create_default_context(), slow.create_default_context()
    for plant, ctx in ((fast, ctx_f), (slow, ctx_s)):
        plant.set_positions(ctx, q0)
        plant.set_velocities(ctx, v0)
    limit_steps = contact_steps = 0
    for _ in range(400):
        sol = fast.get_output_port("step").eval(ctx_f)
        assert sol.status.method == "compiled_pgs"
        limit_steps += bool(np.any(sol.impulses[1] > 0))
        contact_steps += sol.status.active_contacts > 0
        fast.advance(ctx_f, 1)
        slow.advance(ctx_s, 1)
        np.testing.assert_allclose(ctx_f.discrete_state, ctx_s.discrete_state, atol=1e-7, rtol=0)
    assert limit_steps > 20 and contact_steps > 20
    # every limit held: no coordinate past its limit by more than a hair of ERP recovery
    for j in ("hip_l", "hip_r", "knee_l", "knee_r", "shoulder_l", "shoulder_r"):
        jt = tree.get_joint(j)
        qj = fast.get_positions(ctx_f)[jt.q_start]
        assert jt.lower - 1e-2 <= qj <= jt.upper + 1e-2


def test_reruns_are_bitwise_and_the_numpy_twin_equals_the_c_kernel(monkeypatch):
    """The chain with limits: a rerun from the same state is bitwise the same. The numpy
    twin of the kernel equals the C kernel to 1e-12 on the pendulum hitting its limits (a
    1 x 1 block: both solve it exactly); on the chain (coupled limit rows and contacts,
    where PGS may end on its sweep tolerance 1e-10 relative, in a different sweep order of
    rounding) to 1e-9, with every step converged."""
    import warnings

    tree = _chain()
    q0, v0 = _chain_start(tree)

    def blocks(t):
        return [PointContactConstraint(t, mu=0.0, name="touch"),
                JointLimitConstraint(t, name="lim", erp=0.4, cfm=1e-6)]
    steps = 120                                   # limits and contacts
    c_plant = TimeSteppingRigidBodySystem(tree, H, constraints=blocks(tree))
    assert c_plant.step_method == "compiled_pgs"
    one, _ = trajectory(c_plant, q0, v0, steps)
    two, _ = trajectory(c_plant, q0, v0, steps)
    np.testing.assert_array_equal(one, two)
    pend = _pendulum()
    c_pend = TimeSteppingRigidBodySystem(pend, H, constraints=[JointLimitConstraint(pend)])
    p_one, _ = trajectory(c_pend, [-0.2], [3.0], 800)
    without_compiler(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        n_plant = TimeSteppingRigidBodySystem(tree, H, constraints=blocks(tree))
        assert n_plant.step_method == "numpy_pgs"
        twin, ctx = trajectory(n_plant, q0, v0, steps)
        n_pend = TimeSteppingRigidBodySystem(pend, H, constraints=[JointLimitConstraint(pend)])
        assert n_pend.step_method == "numpy_pgs"
        p_twin, _ = trajectory(n_pend, [-0.2], [3.0], 800)
    np.testing.assert_allclose(p_twin, p_one, atol=1e-12, rtol=0)
    np.testing.assert_allclose(twin, one, atol=1e-9, rtol=0)
    assert n_plant.get_output_port("step").eval(ctx).status.active_contacts > 0


def test_the_context_s_limit_softening_is_used():
    """A context whose limit erp is changed steps with it (the kernel reads the context's
    parameters), as the pivoting step does."""
    fast, slow = _pair(_pendulum(), lambda t: [JointLimitConstraint(t, name="lim", erp=0.2)])
    out = []
    for plant in (fast, slow):
        ctx = plant.create_default_context()
        ctx.set_parameter(plant.parameter_index("lim.erp"), [0.9])
        plant.set_positions(ctx, [0.45])           # 0.05 rad past the upper limit
        plant.advance(ctx, 1)
        out.append(plant.get_velocities(ctx)[0])
    # the limit's row: v = -erp phi / h (the gravity impulse is taken by the row too)
    assert out[0] == pytest.approx(-0.9 * 0.05 / H, rel=1e-9)
    assert out[0] == pytest.approx(out[1], abs=1e-9)


# ---------------------------------------------------------------- refusals
def test_softenings_the_kernel_does_not_have_are_still_refused_by_name():
    """MuJoCo-softened limits keep the pivoting step, named (limits with joint friction
    take the compiled step)."""
    import warnings

    tree = _pendulum()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        soft = TimeSteppingRigidBodySystem(tree, H, constraints=[JointLimitConstraint(
            tree, mujoco=MuJoCoSoftening(), name="mjlim")])
        both = TimeSteppingRigidBodySystem(tree, H, constraints=[
            JointLimitConstraint(tree, name="lim"),
            JointFrictionConstraint(tree, ["hinge"], friction=0.1, name="fric")])
    assert soft.step_method == "lcp"
    assert "mjlim" in soft.step_method_reason and "MuJoCo softening" in soft.step_method_reason
    assert both.step_method == "compiled_pgs"       # joint friction is compiled too
    limits = TimeSteppingRigidBodySystem(tree, H, constraints=[JointLimitConstraint(tree)])
    assert limits.step_method == "compiled_pgs" and limits.step_method_reason is None
