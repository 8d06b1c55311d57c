"""Loop closures in the compiled step (issue 21, item 1): each closure block's rows are
``closure`` candidates of the contact kernel (up to three rows a slot; phi and J of every
closure from one compiled function of q each step, bias erp phi / h, the block's cfm; an
unprojected block solved exactly in the PGS) and the rigid closures' positions are
post-stabilized after the step as the pivoting step does. A planar four-bar (ball closure
on x and z) agrees with the pivoting step within 1e-7 over 500 steps with the loop closed
to 1e-9; a pendulum hung from a ball closure (a free-floating rod whose end is held at a
world point, two directions constrained, plus the third by a second closure) moves as the
same rod on a revolute joint; the numpy twin equals the C kernel. h = 2e-3."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from _compiled_step import without_compiler
from _time_stepping_models import four_bar

from multibody import Free, Prismatic, Revolute, RigidBodyTree
from multibody.constraints import BallConstraint, WeldConstraint
from multibody.plants import TimeSteppingRigidBodySystem

H = 2e-3
XZ = [[1, 0, 0], [0, 0, 1]]
pytestmark = pytest.mark.skipif(
    __import__("solvers.compiled", fromlist=["x"]).find_compiler() is None,
    reason="no C compiler: the compiled step is not built")


def _loop(tree):
    return [BallConstraint(tree, "coupler_end", "rocker_end", axes=XZ, name="loop")]


def _run(plant, q, v, steps):
    ctx = plant.create_default_context()
    plant.set_positions(ctx, q)
    plant.set_velocities(ctx, v)
    out, meth = [], set()
    for _ in range(steps):
        plant.advance(ctx, 1)
        out.append(np.concatenate([plant.get_positions(ctx), plant.get_velocities(ctx)]))
        meth.add(plant.get_output_port("step").eval(ctx).status.method)
    return np.array(out), meth


def _loop_error(tree, q):
    blk = _loop(tree)[0]
    return float(np.max(np.abs(blk.kinematic_terms(q, None)[0])))


def test_four_bar_compiled_agrees_with_the_pivoting_step_and_stays_closed():
    """Four-bar from a loop-consistent velocity: compiled vs pivoting within 1e-7 at every
    step of 500, every step compiled, the loop closed to 1e-9."""
    tree, q0 = four_bar()
    fast = TimeSteppingRigidBodySystem(tree, H, constraints=_loop(tree))
    slow = TimeSteppingRigidBodySystem(tree, H, constraints=_loop(tree), contact_solver="lcp")
    assert fast.step_method == "compiled_pgs", fast.step_method_reason
    assert slow.step_method == "lcp"
    J = _loop(tree)[0].kinematic_terms(q0, None)[1]
    v0 = np.linalg.svd(J)[2][-1]                 # a velocity the loop admits
    v0 *= 3.0 / v0[0]                            # the crank at 3 rad/s
    one, meth = _run(fast, q0, v0, 500)
    two, _ = _run(slow, q0, v0, 500)
    assert meth == {"compiled_pgs"}
    np.testing.assert_allclose(one, two, atol=1e-7, rtol=0)
    assert max(_loop_error(tree, x[:tree.nq]) for x in one) < 1e-9
    # it moved: the crank turned by more than 0.5 rad (not an agreeing rest)
    assert np.ptp(one[:, 0]) > 0.5


@pytest.mark.parametrize("redundant", [False, True])
def test_four_bar_started_off_the_loop_is_projected_as_the_pivoting_step_does(redundant):
    """Started 2e-3 rad off the loop (error ~1e-3 m), the compiled projection's Gauss-Newton
    steps close it as the pivoting step's do: compiled vs pivoting within 1e-10 over 200
    steps, the loop closed to 1e-10 after every step; also with a second closure repeating
    the loop's x row (J M^-1 J^T singular)."""
    def blocks(tree):
        out = _loop(tree)
        if redundant:
            out.append(BallConstraint(tree, "coupler_end", "rocker_end", axes=[[1, 0, 0]],
                                      name="again"))
        return out
    tree, q0 = four_bar()
    q = q0 + np.array([2e-3, -1e-3, 0.5e-3])
    assert _loop_error(tree, q) > 5e-4
    fast = TimeSteppingRigidBodySystem(tree, H, constraints=blocks(tree))
    slow = TimeSteppingRigidBodySystem(tree, H, constraints=blocks(tree), contact_solver="lcp")
    one, meth = _run(fast, q, np.array([1.0, 0.0, 0.0]), 200)
    two, _ = _run(slow, q, np.array([1.0, 0.0, 0.0]), 200)
    assert meth == {"compiled_pgs"}
    np.testing.assert_allclose(one, two, atol=1e-10, rtol=0)
    assert max(_loop_error(tree, x[:tree.nq]) for x in one) < 1e-10


def _rod(tree: RigidBodyTree, joint) -> None:
    """A 1 kg rod along its x axis (com at 0.4) on ``joint``."""
    tree.add_body("rod", 1.0, com=(0.4, 0, 0), inertia=np.diag([1e-3, 0.02, 0.02]))
    tree.add_joint(joint)


def test_ball_closure_pendulum_equals_the_revolute_pendulum():
    """A rod on a revolute about y at the world origin, and the same rod hinged on a
    slider (a prismatic along x at the origin) whose origin a one-axis ball closure holds
    at the world origin: the closed chain moves as the plain pendulum within 1e-7 and the
    slider stays at 0 (1e-9)."""
    plain = RigidBodyTree("plain")
    _rod(plain, Revolute("hinge", "world", "rod", axis=(0, 1, 0)))
    closed = RigidBodyTree("closed")
    closed.add_body("slider", 0.5, inertia=np.eye(3) * 1e-3)
    closed.add_joint(Prismatic("slide", "world", "slider", axis=(1, 0, 0)))
    _rod(closed, Revolute("hinge", "slider", "rod", axis=(0, 1, 0)))
    closed.add_frame("anchor", "world", np.eye(4))
    blk = [BallConstraint(closed, "anchor", "slider", axes=[[1, 0, 0]], name="pin")]
    a = TimeSteppingRigidBodySystem(plain, H)
    b = TimeSteppingRigidBodySystem(closed, H, constraints=blk)
    assert b.step_method == "compiled_pgs", b.step_method_reason
    one, _ = _run(a, [0.7], [0.0], 400)
    two, meth = _run(b, [0.0, 0.7], [0.0, 0.0], 400)
    assert meth == {"compiled_pgs"}
    np.testing.assert_allclose(two[:, [1, 3]], one, atol=1e-7, rtol=0)
    assert np.max(np.abs(two[:, 0])) < 1e-9
    # the plain pendulum swung (not an agreeing rest)
    assert np.ptp(one[:, 0]) > 0.5


@pytest.mark.parametrize("kind", [BallConstraint, WeldConstraint])
def test_free_rod_held_by_a_three_row_ball_or_a_weld(kind):
    """A free rod whose origin is held at the world origin by a full ball (three rows, one
    slot) or a weld (six rows, two slots): compiled vs pivoting within 1e-7 over 300
    steps; the ball's rod swings with its origin held (1e-9), the weld's stays at rest."""
    runs = []
    for solver in ("auto", "lcp"):
        t = RigidBodyTree("free_rod")
        t.add_body("rod", 1.0, com=(0.4, 0, 0), inertia=np.diag([1e-2, 0.02, 0.025]))
        t.add_joint(Free("f", "world", "rod"))
        t.add_frame("anchor", "world", np.eye(4))
        p = TimeSteppingRigidBodySystem(t, H, constraints=[kind(t, "anchor", "rod", name="c")],
                                        contact_solver=solver)
        assert p.step_method == ("compiled_pgs" if solver == "auto" else "lcp")
        v = np.zeros(t.nv)
        v[:3] = [0.3, 1.0, -0.5]
        runs.append(_run(p, p.get_positions(p.create_default_context()), v, 300)[0])
    np.testing.assert_allclose(runs[0], runs[1], atol=1e-7, rtol=0)
    pos = runs[0][:, 4:7]                       # the free joint's position (after the quaternion)
    assert np.max(np.abs(pos)) < 1e-9
    if kind is BallConstraint:
        assert np.ptp(runs[0][:, :4], axis=0).max() > 0.1
    else:
        assert np.ptp(runs[0][:, :7], axis=0).max() < 1e-9


def test_the_numpy_twin_equals_the_c_kernel(monkeypatch):
    """The four-bar with the kernel's numpy twin: equal to the C kernel within 1e-9 at
    every step of 200."""
    tree, q0 = four_bar()
    J = _loop(tree)[0].kinematic_terms(q0, None)[1]
    v0 = 3.0 * np.linalg.svd(J)[2][-1]
    one, _ = _run(TimeSteppingRigidBodySystem(tree, H, constraints=_loop(tree)), q0, v0, 200)
    without_compiler(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        n_plant = TimeSteppingRigidBodySystem(tree, H, constraints=_loop(tree))
        assert n_plant.step_method == "numpy_pgs"
        twin, _ = _run(n_plant, q0, v0, 200)
    np.testing.assert_allclose(twin, one, atol=1e-9, rtol=0)
