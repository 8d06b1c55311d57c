"""One constraint vocabulary: each kind works in both plants from one definition.

A point-on-line closure turns a free body into a slider: in the continuous plant (KKT,
Baumgarte) and in the time-stepping plant (velocity-level rows) a block released on a line
tilted by 30 degrees slides along it with the closed-form acceleration g sin(30 deg) and stays
on it. The weld and ball closures give rows whose J v is the derivative of phi in both plants'
kinematics views. A kind without an acceleration-level form is refused by name."""
import numpy as np
import pytest

from multibody import Free, Prismatic, RigidBodyTree
from multibody.constraints import (BallConstraint, JointFrictionConstraint, PointOnLineConstraint,
                                   StepKinematics, TreeKinematics, WeldConstraint)
from multibody.plants import RigidBodySystem, TimeSteppingRigidBodySystem

G = 9.81
ANGLE = np.deg2rad(30.0)
AXIS = np.array([np.cos(ANGLE), 0.0, -np.sin(ANGLE)])       # down the incline, in the x-z plane


def _free_slider():
    t = RigidBodyTree("slider")
    t.add_body("block", 2.0, inertia=np.eye(3) * 0.01)
    t.add_joint(Free("float", "world", "block"))
    return t


def _expected_position(t):
    return 0.5 * G * np.sin(ANGLE) * t ** 2 * AXIS


def test_point_on_line_slider_in_the_continuous_plant():
    t = _free_slider()
    c = PointOnLineConstraint(t, "world", "block", axis=AXIS, name="line")
    s = RigidBodySystem(t, constraints=[c])
    ctx = s.create_default_context()
    x = np.array(ctx.continuous_state, float)
    vdot = s.solve(ctx).vdot
    # free joint v = [omega; v] in the body frame (identity rotation here)
    np.testing.assert_allclose(vdot[3:], G * np.sin(ANGLE) * AXIS, atol=1e-9)
    np.testing.assert_allclose(vdot[:3], 0.0, atol=1e-9)
    from scipy.integrate import solve_ivp
    f = lambda tt, xx: np.asarray(s.eval_time_derivatives(_set(s, ctx, tt, xx)), float)
    sol = solve_ivp(f, (0.0, 1.0), x, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(sol.y[4:7, -1], _expected_position(1.0), atol=1e-7)
    np.testing.assert_allclose(c.position_error(sol.y[:7, -1]), 0.0, atol=1e-8)


def _set(s, ctx, t, x):
    ctx.set_time(t)
    ctx.set_continuous_state(x)
    return ctx


def test_point_on_line_slider_in_the_time_stepping_plant():
    t = _free_slider()
    h = 1e-3
    s = TimeSteppingRigidBodySystem(t, h, constraints=[
        PointOnLineConstraint(t, "world", "block", axis=AXIS, name="line")])
    ctx = s.create_default_context()
    s.advance(ctx, 1000)
    q = s.get_positions(ctx)
    # semi-implicit Euler on a constant acceleration: x_n = a h^2 n (n + 1) / 2
    n = 1000
    np.testing.assert_allclose(q[4:7], G * np.sin(ANGLE) * h * h * n * (n + 1) / 2 * AXIS,
                               atol=1e-6)
    np.testing.assert_allclose(q[:4], [1, 0, 0, 0], atol=1e-9)


@pytest.mark.parametrize("make", [
    lambda t: WeldConstraint(t, "a", "b"),
    lambda t: BallConstraint(t, "a", "b"),
    lambda t: PointOnLineConstraint(t, "a", "b", axis=(0.3, -0.2, 1.0)),
])
def test_one_definition_gives_consistent_rows_in_both_kinematics_views(make):
    t = RigidBodyTree("pair")
    for n in ("a", "b"):
        t.add_body(n, 1.0, inertia=np.eye(3) * 0.1)
    t.add_joint(Free("fa", "world", "a"))
    t.add_joint(Free("fb", "world", "b"))
    c = make(t)
    rng = np.random.default_rng(3)
    q = t.random_configuration(rng)
    v = rng.normal(size=t.nv)
    # continuous view: J v equals d phi / dt along the motion (central differences)
    phi, J, _ = c.kinematic_terms(q, v)
    eps = 1e-6
    dphi = (c.position_error(t.integrate(q, v, eps)) - c.position_error(t.integrate(q, v, -eps))) / (2 * eps)
    np.testing.assert_allclose(J @ v, dphi, rtol=1e-6, atol=1e-7)
    # the same phi in the time-stepping view
    s = TimeSteppingRigidBodySystem(t, 1e-3, constraints=[c])
    H, cc, kin = s.kinematics(q, v)
    phi_ts, _ = c.position_terms(kin)
    np.testing.assert_allclose(np.ravel(phi_ts), phi, atol=1e-12)


def test_a_kind_without_an_acceleration_level_form_is_refused_by_name():
    t = RigidBodyTree("rail")
    t.add_body("cart", 1.0, inertia=np.eye(3))
    t.add_joint(Prismatic("x", "world", "cart", axis=(1, 0, 0), friction=2.0))
    fr = JointFrictionConstraint(t, name="rail_friction")
    with pytest.raises(TypeError, match="constraint 'rail_friction' \\(JointFrictionConstraint\\) has no acceleration-level form"):
        RigidBodySystem(t, constraints=[fr])
    TimeSteppingRigidBodySystem(t, 1e-3, constraints=[fr])     # fine there
