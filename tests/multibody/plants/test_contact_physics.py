"""Physical checks of contact in TimeSteppingRigidBodySystem with analytic answers (issue 6,
"must show 2"): resting contact forces, a dropped sphere, a box on an incline (stick / slide
with a = g (sin - mu cos)), a stack of boxes, a sliding sphere ending in rolling, the two
non-penetration formulations, a quadruped standing. h = 1e-3 unless stated. The closure and
joint-limit checks are in test_constraints.py.
"""
from __future__ import annotations

import numpy as np
import pytest

from _time_stepping_models import free_boxes, free_spheres
from multibody.constraints import PointContactConstraint
from multibody.plants import TimeSteppingRigidBodySystem

G = 9.81


def _system(tree, constraints, h=1e-3, **kw):
    s = TimeSteppingRigidBodySystem(tree, h, constraints=constraints, **kw)
    return s, s.create_default_context()


def test_sphere_drop_comes_to_rest_with_mg():
    tree = free_spheres(1, radius=0.1, mass=2.0)
    s, ctx = _system(tree, [PointContactConstraint(tree, mu=0.5, name="contact")])
    q = tree.neutral_configuration()
    q[6] = 0.4  # 0.3 m free fall
    s.set_positions(ctx, q)
    s.advance(ctx, 1000)
    z = s.get_positions(ctx)[6]
    res = s.get_output_port("contact_results").eval(ctx)
    assert len(res) == 1
    c = res[0]
    assert c.body_a == "world" and c.body_b == "ball0"
    assert 0.1 - z < 1e-3                       # penetration below 1 mm
    assert abs(z - 0.1) < 1e-6                  # (in fact ~1e-9 at rest)
    assert c.normal_force == pytest.approx(2.0 * G, rel=1e-2)
    assert c.normal_force == pytest.approx(2.0 * G, rel=1e-9)
    np.testing.assert_allclose(s.get_velocities(ctx), 0.0, atol=1e-9)
    assert np.allclose(c.normal, [0, 0, 1]) and np.allclose(c.friction_force, 0, atol=1e-12)


@pytest.mark.parametrize("friction", ["cone", "box"])
def test_box_resting_corner_forces_split_evenly_with_cfm(friction):
    tree = free_boxes(1, mass=1.5)
    s, ctx = _system(tree, [PointContactConstraint(tree, mu=0.5, cfm=1e-6, friction=friction,
                                                   name="contact")])
    q = tree.neutral_configuration()
    q[6] = 0.1
    s.set_positions(ctx, q)
    s.advance(ctx, 200)
    res = s.get_output_port("contact_results").eval(ctx)
    f = res.normal_forces()
    assert len(res) == 4
    assert f.sum() == pytest.approx(1.5 * G, rel=1e-6)
    np.testing.assert_allclose(f, 1.5 * G / 4, rtol=1e-2)
    np.testing.assert_allclose(res.total_force("box0"), [0, 0, 1.5 * G], atol=1e-6)
    np.testing.assert_allclose(res.total_force("world"), [0, 0, -1.5 * G], atol=1e-6)


def _incline(angle, mu, friction="cone", steps=600):
    g = G * np.array([np.sin(angle), 0.0, -np.cos(angle)])   # tilt gravity, not the ground
    tree = free_boxes(1, gravity=g)
    s, ctx = _system(tree, [PointContactConstraint(tree, mu=mu, friction=friction,
                                                   name="contact")])
    q = tree.neutral_configuration()
    q[6] = 0.1
    s.set_positions(ctx, q)
    xs = []
    for _ in range(steps // 100):
        s.advance(ctx, 100)
        xs.append((ctx.time, s.get_positions(ctx)[4], s.get_velocities(ctx)[3]))
    return s, ctx, np.array(xs)


@pytest.mark.parametrize("friction", ["cone", "box"])
def test_box_on_incline_slides_with_analytic_acceleration(friction):
    angle, mu = np.deg2rad(30.0), 0.3
    s, ctx, xs = _incline(angle, mu, friction)
    a_expected = G * (np.sin(angle) - mu * np.cos(angle))
    a = (xs[-1, 2] - xs[1, 2]) / (xs[-1, 0] - xs[1, 0])
    assert a == pytest.approx(a_expected, rel=2e-2)
    assert a == pytest.approx(a_expected, rel=1e-6)       # exact for a slide along t1
    c = s.get_output_port("contact_results").eval(ctx)
    fn = c.normal_forces().sum()
    ft = sum(np.linalg.norm(r.friction_force) for r in c)
    assert ft == pytest.approx(mu * fn, rel=1e-6)        # sliding: on the cone's boundary
    assert all(r.slip_velocity[0] > 0 for r in c)


def test_box_on_incline_sticks_below_friction_angle():
    angle, mu = np.deg2rad(10.0), 0.3
    assert np.tan(angle) < mu
    s, ctx, xs = _incline(angle, mu)
    assert abs(xs[-1, 1]) < 1e-6 and abs(xs[-1, 2]) < 1e-6
    c = s.get_output_port("contact_results").eval(ctx)
    ft = sum(r.friction_force for r in c)
    np.testing.assert_allclose(ft, [-G * np.sin(angle), 0, 0], atol=1e-6)


def test_stack_of_five_boxes_stays_for_10_s():
    # h = 1e-2 here (1000 steps): at h = 1e-3 the 10 s run is 1e4 LCP solves of size 120,
    # too slow for a unit test; the stack is as still at 1e-3 (checked over 0.2 s below).
    n, size = 5, 0.2
    for h, steps in ((1e-2, 1000), (1e-3, 200)):
        tree = free_boxes(n)
        s, ctx = _system(tree, [PointContactConstraint(tree, mu=0.5, cfm=1e-6,
                                                       name="contact")], h=h)
        q0 = tree.neutral_configuration()
        for i in range(n):
            q0[7 * i + 6] = size / 2 + size * i
        s.set_positions(ctx, q0)
        s.advance(ctx, steps)
        q = s.get_positions(ctx).reshape(n, 7)
        drift = np.abs(q[:, 4:] - q0.reshape(n, 7)[:, 4:])
        assert drift.max() < 1e-3, (h, drift.max())
        assert np.abs(q[:, 1:4]).max() < 1e-6
        res = s.get_output_port("contact_results").eval(ctx)
        f_ground = sum(c.normal_force for c in res if c.body_a == "world")
        assert f_ground == pytest.approx(n * G, rel=1e-6)


def test_quadruped_stands_under_pd_control():
    from actuators import Actuator
    from multibody import RigidBodyTree
    from multibody.geometry import CollisionFilter, Halfspace
    from multibody.models import model_path
    from solvers import ops

    class LegPD(Actuator):
        """PD on the 12 leg joints toward fixed angles (command unused)."""

        def __init__(self, tree, q_des, kp=300.0, kd=8.0):
            super().__init__(tree, 1, name="pd")
            self.q_des, self.kp, self.kd = q_des, kp, kd

        def generalized_force(self, context, q, v, command):
            return ops.vertcat(np.zeros(6), self.kp * (self.q_des - q[7:]) - self.kd * v[6:])

    tree = RigidBodyTree.from_urdf(str(model_path("quadruped")), floating_base=True)
    tree.add_collision_geometry("world", Halfspace(), name="ground")
    robot = CollisionFilter()
    robot.add_filter_group("robot", [b.name for b in tree.bodies if b.name != "world"])
    legs = np.tile([0.0, 0.6, -1.2], 4)
    q = tree.neutral_configuration()
    q[7:] = legs
    feet = [b.name for b in tree.bodies if b.name.endswith("_foot")]
    q[6] = 0.02 - min(tree.body_pose(f, q)[2, 3] for f in feet)     # feet on the ground
    contact = PointContactConstraint(tree, mu=0.8, collision_filter=robot, name="contact")
    s = TimeSteppingRigidBodySystem(tree, 1e-3, actuators=[LegPD(tree, legs)],
                                    constraints=[contact])
    ctx = s.create_default_context()
    s.set_positions(ctx, q)
    s.get_input_port("pd").fix_value(ctx, [0.0])
    s.advance(ctx, 800)
    res = s.get_output_port("contact_results").eval(ctx)
    assert sorted(c.body_b for c in res) == sorted(feet)
    mg = tree.total_mass() * G
    assert res.normal_forces().sum() == pytest.approx(mg, rel=1e-2)
    qn = s.get_positions(ctx)
    assert abs(qn[6] - q[6]) < 0.03                       # the trunk sags a little, stands
    assert np.abs(s.get_velocities(ctx)).max() < 0.05


@pytest.mark.parametrize("formulation, remaining", [("stewart_trinkle", 0.0),
                                                     ("anitescu_potra", 0.8)])
def test_penetration_recovery_by_formulation(formulation, remaining):
    # 1 cm initial penetration, no gravity: Stewart-Trinkle removes it in one step (phi / h),
    # Anitescu-Potra removes the fraction erp = 0.2 per step (erp phi / h)
    tree = free_spheres(1, radius=0.1)
    tree.gravity = (0, 0, 0)
    s, ctx = _system(tree, [PointContactConstraint(tree, formulation=formulation, cfm=0.0,
                                                   name="contact")])
    q = tree.neutral_configuration()
    q[6] = 0.09
    s.set_positions(ctx, q)
    s.advance(ctx, 1)
    assert s.get_positions(ctx)[6] - 0.1 == pytest.approx(-0.01 * remaining, abs=1e-12)


def test_sliding_sphere_ends_rolling_at_five_sevenths():
    # a solid sphere launched sliding without spin: friction mu m g decelerates it until
    # v = r w; angular momentum about the contact point gives v_roll = 5/7 v0, reached at
    # t* = 2 v0 / (7 mu g)
    r, m, mu, v0 = 0.1, 1.0, 0.4, 2.0
    tree = free_spheres(1, radius=r, mass=m)
    s, ctx = _system(tree, [PointContactConstraint(tree, mu=mu, name="contact")])
    q = tree.neutral_configuration()
    q[6] = r
    s.set_positions(ctx, q)
    s.set_velocities(ctx, [0, 0, 0, v0, 0, 0])
    t_star = 2 * v0 / (7 * mu * G)
    s.advance(ctx, int(round(t_star / 1e-3)) - 20)
    R = tree.body_pose("ball0", s.get_positions(ctx))[:3, :3]
    assert (R @ s.get_velocities(ctx)[3:])[0] > 5 / 7 * v0 + 0.01   # still sliding (world x)
    s.advance(ctx, 300)
    v = s.get_velocities(ctx)
    R = tree.body_pose("ball0", s.get_positions(ctx))[:3, :3]
    vx, wy = (R @ v[3:])[0], (R @ v[:3])[1]
    assert vx == pytest.approx(5 / 7 * v0, rel=1e-4)
    assert wy * r == pytest.approx(vx, rel=1e-6)                  # rolling without slip


def test_fast_sphere_does_not_tunnel():
    # 20 m/s toward the ground from 5 cm: 2 cm per step, beyond the 5 mm base margin; the
    # speed-dependent margin sees the contact a step ahead and the gap closes exactly
    tree = free_spheres(1, radius=0.1)
    s, ctx = _system(tree, [PointContactConstraint(tree, mu=0.5, name="contact")])
    q = tree.neutral_configuration()
    q[6] = 0.15
    s.set_positions(ctx, q)
    s.set_velocities(ctx, [0, 0, 0, 0, 0, -20.0])
    zs = []
    for _ in range(10):
        s.advance(ctx, 1)
        zs.append(s.get_positions(ctx)[6])
    assert min(zs) > 0.1 - 1e-6                 # never (noticeably: CFM) below the surface
    assert zs[-1] == pytest.approx(0.1, abs=1e-6)
    assert abs(s.get_velocities(ctx)[5]) < 0.1  # stopped (inelastic impact)


def test_pinned_rod_resting_on_a_support_carries_half_its_weight():
    # contact rows together with bilateral closure rows (eliminated before the contact
    # problem, on both step methods): a uniform rod pinned at one end by a ball closure, its
    # other end resting on the ground: moments about the pin give N = m g / 2 at the tip
    # when the tip's friction along the rod is zero
    from multibody import Free, RigidBodyTree
    from multibody.constraints import BallConstraint
    from multibody.geometry import Halfspace, Sphere
    L, m, r = 0.8, 2.0, 0.02
    t = RigidBodyTree("rod")
    t.add_body("rod", m, com=(L / 2, 0, 0), inertia=np.diag([1e-4, m * L * L / 12,
                                                                m * L * L / 12]))
    t.add_joint(Free("float", "world", "rod"))
    t.add_collision_geometry("rod", Sphere(r), pose=np.array(
        [[1, 0, 0, L], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]]), name="tip")
    X = np.eye(4)
    X[2, 3] = -r
    t.add_collision_geometry("world", Halfspace(), pose=X, name="ground")
    s, ctx = _system(t, [BallConstraint(t, "world", "rod", name="pin"),
                         PointContactConstraint(t, mu=0.5, name="contact")])
    s.advance(ctx, 300)
    res = s.get_output_port("contact_results").eval(ctx)
    assert len(res) == 1 and res[0].geometry_b == "tip"
    # the friction along the rod f and the normal force N trade through the tip's offset r
    # below the rod's axis (the rod may turn about the line from the pin to the contact: an
    # indeterminate split, issue 21); determined are the moment about the pin,
    # L N + r f = m g L / 2, the vertical and horizontal sums with the pin's force, the cone
    N, f = res[0].normal_force, res[0].friction_force
    assert L * N + r * f[0] == pytest.approx(m * G * L / 2, rel=1e-9)
    assert np.linalg.norm(f) <= 0.5 * N * (1 + 1e-9)
    # with |f| <= mu N the moment balance bounds N: m g L / (2 (L + r mu)) <= N <=
    # m g L / (2 (L - r mu)), within 1.25 % of m g / 2 here (not one split of it)
    assert m * G * L / (2 * (L + 0.5 * r)) * (1 - 1e-9) <= N <= m * G * L / (2 * (L - 0.5 * r)) * (1 + 1e-9)
    step = s.get_output_port("step").eval(ctx)
    pin = step.impulses[0] / 1e-3
    np.testing.assert_allclose(pin + [f[0], f[1], N], [0, 0, m * G], atol=1e-9)
    assert np.linalg.norm(s.get_positions(ctx)[4:]) < 1e-9
