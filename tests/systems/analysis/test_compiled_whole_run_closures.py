"""Whole runs in compiled code with loop closures (issue 21, item 3): ``Simulator(diagram,
compiled=True)`` on a diagram whose time-stepping plant has ball closures (a planar
four-bar driven by an affine feedback, a pendulum hung from a ball closure that strikes the
floor) gives the interpreted Simulator's trajectory and logs (1e-12; the same generated
code of the plant's dynamics, closure elimination, kernel and projection), and the loop
stays closed; a step whose closure rows are dependent (a repeated row) is handed back to the
plant's own step and reported, the run still equal to the interpreted one; batches equal
single runs; closures the compiled loop does not evaluate (free joints) are refused with
the reason. h = 2e-3, a few hundred steps."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from _time_stepping_models import four_bar

from actuators import GeneralizedForceActuator
from multibody import Prismatic, Revolute, RigidBodyTree
from multibody.constraints import BallConstraint, PointContactConstraint
from multibody.geometry import Halfspace, Sphere
from multibody.plants import TimeSteppingRigidBodySystem
from multibody.tree import Free
from solvers.compiled import find_compiler
from systems import DiagramBuilder, SymbolicEvaluationError
from systems.analysis import Simulator
from systems.analysis.compiled import simulate_batch
from systems.primitives import AffineSystem, LogVectorOutput

pytestmark = pytest.mark.skipif(find_compiler() is None, reason="needs a C compiler")

H = 2e-3
XZ = [[1, 0, 0], [0, 0, 1]]
TOL = 1e-12


def _diagram(tree, constraints, joint, kp, kd, target, name, **plant_kw):
    """The plant with a generalized-force actuator on ``joint``, an affine PD on it
    (``kp (target - q) - kd v``; no state, traced on symbols) and a per-step state log."""
    act = GeneralizedForceActuator(tree, [joint], name="motor")
    plant = TimeSteppingRigidBodySystem(tree, H, actuators=[act], constraints=constraints,
                                        name="plant", **plant_kw)
    b = DiagramBuilder(name)
    b.add_system(plant)
    j = tree.get_joint(joint)
    D = np.zeros((1, tree.nq + tree.nv))
    D[0, j.q_start], D[0, tree.nq + j.v_start] = -kp, -kd
    pd = b.add_system(AffineSystem(D=D, y0=[kp * target], name="pd"))
    b.connect(plant.get_output_port("state"), pd.get_input_port("u"))
    b.connect(pd.get_output_port("y"), plant.get_input_port("motor"))
    log = LogVectorOutput(plant.get_output_port("state"), b)
    return b.build(), plant, log


def _run(diagram, plant, log, x0, T, compiled):
    ctx = diagram.create_default_context()
    plant.get_my_context_from_root(ctx).set_discrete_state(np.asarray(x0, float))
    sim = Simulator(diagram, ctx, compiled=compiled)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sim.advance_to(T)
    lg = log.find_log(ctx)
    return lg.sample_times(), lg.data(), sim


def _loop_error(tree, blk, q):
    return float(np.max(np.abs(blk.kinematic_terms(q, None)[0])))


def four_bar_diagram(redundant=False, project=True):
    tree, q0 = four_bar()
    blocks = [BallConstraint(tree, "coupler_end", "rocker_end", axes=XZ, name="loop")]
    if redundant:         # a second closure repeating the loop's x row: dependent rows
        blocks.append(BallConstraint(tree, "coupler_end", "rocker_end", axes=[[1, 0, 0]],
                                     name="again"))
    d, plant, log = _diagram(tree, blocks, "j_crank", 20.0, 0.5, 0.0, "four_bar_pd",
                             project_positions=project)
    return d, plant, log, tree, blocks[0], np.r_[q0, np.zeros(tree.nv)]


@pytest.mark.parametrize("project", [True, False])
def test_four_bar_with_a_controller_equals_the_interpreted_run(project):
    """A four-bar (ball closure on x and z) whose crank a PD drives: 300 compiled steps give
    the interpreted log within 1e-12, every step in the compiled loop, and the crank moved
    (not an agreeing rest); with the closures' post-stabilization (``project_positions``)
    the loop is closed to 1e-9 at every sample, without it it drifts (below 2 mm)."""
    d, plant, log, tree, blk, x0 = four_bar_diagram(project=project)
    assert plant.step_method == "compiled_pgs", plant.step_method_reason
    t1, one, _ = _run(d, plant, log, x0, 0.6, False)
    t2, two, sim = _run(d, plant, log, x0, 0.6, True)
    assert sim.fallback_steps == []
    np.testing.assert_array_equal(t1, t2)
    assert one.shape == (2 * tree.nq, 301)
    np.testing.assert_allclose(two, one, atol=TOL, rtol=0)
    err = max(_loop_error(tree, blk, x[:tree.nq]) for x in two.T)
    if project:
        assert err < 1e-9
    else:              # only the closures' bias holds the loop: it drifts (the C loop did
        assert 1e-8 < err < 2e-3      # not project), boundedly
    assert np.ptp(two[0]) > 0.3


def test_dependent_closure_rows_are_handed_to_the_plants_step():
    """With a closure repeating a row of the loop (S singular: the plant's elimination
    takes its numpy path) every step is handed back to the plant's own step and reported;
    the run still equals the interpreted one (1e-12) and a batch of two worlds equals the
    two single runs."""
    d, plant, log, tree, blk, x0 = four_bar_diagram(redundant=True)
    _, one, _ = _run(d, plant, log, x0, 0.05, False)
    _, two, sim = _run(d, plant, log, x0, 0.05, True)
    np.testing.assert_allclose(two, one, atol=TOL, rtol=0)
    reasons = {r for _, r in sim.fallback_steps}
    assert len(sim.fallback_steps) == 25
    assert len(reasons) == 1 and "dependent" in reasons.pop()
    x1 = x0.copy()
    x1[tree.nq] = 1.0                    # the crank spun up (the loop turns with it)
    _, other, _ = _run(d, plant, log, x1, 0.05, False)
    batch = simulate_batch(d, initial_states=np.array([x0, x1]), final_time=0.05)
    np.testing.assert_allclose(batch.logs[log.name][0], one, atol=TOL, rtol=0)
    np.testing.assert_allclose(batch.logs[log.name][1], other, atol=TOL, rtol=0)
    assert len(batch.fallback_steps) == 50


ROD, R, FLOOR = 0.8, 0.05, -0.7


def test_ball_closure_pendulum_striking_the_floor_equals_the_interpreted_run():
    """A rod hinged on a slider that a one-axis ball closure holds at the world origin,
    a sphere at its tip falling onto the floor, a PD on the hinge: 400 compiled steps equal
    the interpreted ones (1e-12), every step in the compiled loop; the slider stays at the
    origin (1e-9), the tip reaches the floor and stays above it (penetration < 2 mm)."""
    tree = RigidBodyTree("pendulum")
    tree.add_body("slider", 0.5, inertia=np.eye(3) * 1e-3)
    tree.add_joint(Prismatic("slide", "world", "slider", axis=(1, 0, 0)))
    tree.add_body("rod", 1.0, com=(0.4, 0, 0), inertia=np.diag([1e-3, 0.02, 0.02]))
    tree.add_joint(Revolute("hinge", "slider", "rod", axis=(0, 1, 0)))
    X = np.eye(4)
    X[0, 3] = ROD
    tree.add_collision_geometry("rod", Sphere(R), X, name="tip")
    Xf = np.eye(4)
    Xf[2, 3] = FLOOR
    tree.add_collision_geometry("world", Halfspace(), Xf, name="floor")
    tree.add_frame("anchor", "world", np.eye(4))
    tree.finalize()
    blocks = [BallConstraint(tree, "anchor", "slider", axes=[[1, 0, 0]], name="pin"),
              PointContactConstraint(tree, mu=0.5, name="contact")]
    d, plant, log = _diagram(tree, blocks, "hinge", 0.5, 0.05, 0.0, "pendulum_floor")
    assert plant.step_method == "compiled_pgs", plant.step_method_reason
    x0 = np.array([0.0, 0.3, 0.0, 0.0])
    _, one, _ = _run(d, plant, log, x0, 0.8, False)
    _, two, sim = _run(d, plant, log, x0, 0.8, True)
    assert len(sim.fallback_steps) <= 5
    assert all(r == "the contact kernel did not converge" for _, r in sim.fallback_steps)
    np.testing.assert_allclose(two, one, atol=TOL, rtol=0)
    assert np.max(np.abs(two[0])) < 1e-9                       # the slider held
    tip_z = -ROD * np.sin(two[1])
    assert tip_z.min() < FLOOR + R + 5e-3                     # it struck the floor
    assert tip_z.min() > FLOOR + R - 2e-3                     # and did not pass it


def test_closures_with_free_joints_are_refused_with_the_reason():
    """A free rod held by a ball closure: its elimination adds the free joints' rotating
    frame term in numpy, so the compiled whole run refuses, naming the plant and why."""
    t = RigidBodyTree("free_rod")
    t.add_body("rod", 1.0, com=(0.4, 0, 0), inertia=np.diag([1e-2, 0.02, 0.025]))
    t.add_joint(Free("f", "world", "rod"))
    t.add_frame("anchor", "world", np.eye(4))
    plant = TimeSteppingRigidBodySystem(t, H, constraints=[BallConstraint(t, "anchor", "rod",
                                                                          name="c")],
                                        name="held_rod")
    assert plant.step_method == "compiled_pgs"
    b = DiagramBuilder("held")
    b.add_system(plant)
    d = b.build()
    with pytest.raises(SymbolicEvaluationError, match="held_rod.*loop closures.*free joints"):
        Simulator(d, compiled=True)
