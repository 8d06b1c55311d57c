"""Joint friction in the compiled step (issue 21, item 1): each velocity coordinate of a
JointFrictionConstraint is a one-dof box row of the contact kernel (J = e_i, no bias,
always active, |p| <= h F, the block's cfm; a 1 x 1 PGS block projected on [-h F, h F]).
A block on a slope (a prismatic joint along the slope) is held by joint friction while
m g sin(theta) <= F and slides with a = g sin(theta) - F / m past it (analytic); the
compiled and pivoting steps agree within 1e-7 on the slope, and at every step on a
double pendulum with joint friction and limits (one-dof rows at their bounds enter the
polish's right-hand side); the numpy twin equals the C kernel; the context's friction is used.
h = 1e-3."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from _compiled_step import trajectory, without_compiler

from multibody import Prismatic, Revolute, RigidBodyTree
from multibody.constraints import JointFrictionConstraint, JointLimitConstraint
from multibody.plants import TimeSteppingRigidBodySystem

G, H = 9.81, 1e-3
M = 2.0                               # the block's mass (kg)
F = M * G * np.sin(0.4)               # joint friction: holds the block up to 0.4 rad
pytestmark = pytest.mark.skipif(
    __import__("solvers.compiled", fromlist=["x"]).find_compiler() is None,
    reason="no C compiler: the compiled step is not built")


def _slope(theta: float) -> RigidBodyTree:
    """A block on a prismatic joint along a slope of ``theta`` rad (down the slope is +)."""
    t = RigidBodyTree("slope", gravity=(0, 0, -G))
    t.add_body("block", M, inertia=np.eye(3) * 0.01)
    t.add_joint(Prismatic("slide", "world", "block",
                          axis=(np.cos(theta), 0.0, -np.sin(theta))))
    return t


def _pendulum() -> RigidBodyTree:
    """Two links about world y (a double pendulum) with limits on both hinges."""
    t = RigidBodyTree("double")
    t.add_body("l1", 1.0, com=(0.3, 0, 0), inertia=np.eye(3) * 0.01)
    t.add_body("l2", 0.7, com=(0.25, 0, 0), inertia=np.eye(3) * 0.008)
    t.add_joint(Revolute("h1", "world", "l1", axis=(0, 1, 0), lower=-0.6, upper=0.5))
    X = np.eye(4)
    X[0, 3] = 0.6
    t.add_joint(Revolute("h2", "l1", "l2", origin=X, axis=(0, 1, 0), lower=-0.8, upper=0.7))
    return t


def _pair(tree, blocks):
    fast = TimeSteppingRigidBodySystem(tree, H, constraints=blocks(tree))
    slow = TimeSteppingRigidBodySystem(tree, H, constraints=blocks(tree), contact_solver="lcp")
    assert fast.step_method == "compiled_pgs", fast.step_method_reason
    assert slow.step_method == "lcp"
    return fast, slow


@pytest.mark.parametrize("theta", [0.2, 0.39, 0.41, 0.6])
def test_block_on_a_slope_is_held_by_joint_friction_until_the_slope_exceeds_it(theta):
    """Below 0.4 rad the block stays (its row carries the impulse -h m g sin(theta), inside
    the bound h F); above, it slides with a = g sin(theta) - F / m (v = n h a, q = h^2 a
    n (n + 1) / 2 after n semi-implicit steps) and the impulse sits on its bound -h F; both
    methods agree within 1e-7."""
    fast, slow = _pair(_slope(theta),
                       lambda t: [JointFrictionConstraint(t, ["slide"], friction=F, name="rub")])
    n = 300
    runs = []
    for plant in (fast, slow):
        traj, ctx = trajectory(plant, [0.0], [0.0], n)
        sol = plant.get_output_port("step").eval(ctx)
        a = G * np.sin(theta) - F / M
        if a < 0:
            np.testing.assert_allclose(traj, 0.0, atol=1e-12, rtol=0)
            np.testing.assert_allclose(sol.impulses[0], [-H * M * G * np.sin(theta)],
                                       rtol=1e-9)
        else:
            np.testing.assert_allclose(traj[-1, 1], n * H * a, rtol=1e-9)
            np.testing.assert_allclose(traj[-1, 0], H * H * a * n * (n + 1) / 2, rtol=1e-9)
            np.testing.assert_allclose(sol.impulses[0], [-H * F], rtol=1e-12)
        rows = sol.rows[0]
        np.testing.assert_array_equal(rows.J, [[1.0]])
        np.testing.assert_allclose(rows.hi, [H * F], rtol=1e-15)
        np.testing.assert_allclose(rows.lo, [-H * F], rtol=1e-15)
        runs.append(traj)
    np.testing.assert_allclose(runs[0], runs[1], atol=1e-7, rtol=0)


def test_the_context_s_friction_is_used():
    """A context whose friction is halved lets the block slide on a 0.3 rad slope (F / 2 <
    m g sin 0.3 < F), on both methods."""
    fast, slow = _pair(_slope(0.3),
                       lambda t: [JointFrictionConstraint(t, ["slide"], friction=F, name="rub")])
    for plant in (fast, slow):
        traj, _ = trajectory(plant, [0.0], [0.0], 100, parameters={"rub.friction": [F / 2]})
        assert traj[-1, 1] == pytest.approx(100 * H * (G * np.sin(0.3) - F / 2 / M), rel=1e-9)


def _friction_and_limits(t):
    """Limits on the first hinge, friction on the second (a limit and friction on one
    coordinate are two parallel rows: an ill-conditioned pair on which both methods only
    agree to their acceptance tolerance, not to 1e-7)."""
    return [JointLimitConstraint(t, ["h1"], name="lim", erp=0.3, cfm=1e-7),
            JointFrictionConstraint(t, ["h2"], friction=[1.0], name="rub")]


def test_double_pendulum_with_joint_friction_and_limits_agrees_with_the_pivoting_step():
    """Swinging into its limits with joint friction on the elbow: compiled vs pivoting
    within 1e-7 at every step of 1500 (coupled through the mass matrix); the run has steps
    where the friction row slips (its impulse on its bound) and sticks, with the limit
    active, every step compiled."""
    fast, slow = _pair(_pendulum(), _friction_and_limits)
    q0, v0 = [0.1, -0.2], [4.0, -3.0]
    n = 1500
    one, ctx = trajectory(fast, q0, v0, n)
    two, _ = trajectory(slow, q0, v0, n)
    np.testing.assert_allclose(one, two, atol=1e-7, rtol=0)
    # rerun: bitwise
    again, _ = trajectory(fast, q0, v0, n)
    np.testing.assert_array_equal(one, again)
    sol = fast.get_output_port("step").eval(ctx)
    assert sol.status.method == "compiled_pgs"
    # what the run went through: friction on its bound and inside it, the limit active
    ctx2 = fast.create_default_context()
    fast.set_positions(ctx2, q0)
    fast.set_velocities(ctx2, v0)
    at_bound = inside = limit_active = False
    for _ in range(n):
        fast.advance(ctx2, 1)
        s = fast.get_output_port("step").eval(ctx2)
        assert s.status.method == "compiled_pgs"
        p = abs(float(s.impulses[1][0]))
        at_bound |= p == pytest.approx(H * 1.0, rel=1e-12)
        inside |= 0 < p < H * 1.0 * (1 - 1e-6)
        limit_active |= s.impulses[0].size > 0
    assert at_bound and inside and limit_active


def test_the_numpy_twin_equals_the_c_kernel(monkeypatch):
    """The kernel's numpy twin on the double pendulum with friction and limits: equal to
    the C kernel within 1e-9 (PGS sweep tolerance 1e-10 relative) at every step."""
    tree = _pendulum()
    q0, v0 = [0.1, -0.2], [4.0, -3.0]
    c_plant = TimeSteppingRigidBodySystem(tree, H, constraints=_friction_and_limits(tree))
    one, _ = trajectory(c_plant, q0, v0, 600)
    without_compiler(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        n_plant = TimeSteppingRigidBodySystem(tree, H, constraints=_friction_and_limits(tree))
        assert n_plant.step_method == "numpy_pgs"
        twin, _ = trajectory(n_plant, q0, v0, 600)
    np.testing.assert_allclose(twin, one, atol=1e-9, rtol=0)
