"""Leaving the compiled step is never silent (issue 20, section 5; issue 21): a
TimeSteppingRigidBodySystem whose scene takes the pivoting (Lemke) step warns once per plant
with a StepMethodWarning naming the plant and the culprit (the friction pyramid, a MuJoCo-
softened joint limit), and the first step that falls back because the kernel did not converge
warns once per plant with the time and the residual. Compiled scenes (box on the ground, a
sphere pile, a closure with a contact block) and ``contact_solver="lcp"`` do not warn."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from _time_stepping_models import four_bar, free_boxes, free_spheres, pendulum
from multibody.constraints import (BallConstraint, JointFrictionConstraint, JointLimitConstraint,
                                   MuJoCoSoftening, PointContactConstraint)
from multibody.errors import StepMethodWarning
from multibody.plants import TimeSteppingRigidBodySystem

H = 1e-3
needs_compiler = pytest.mark.skipif(
    __import__("solvers.compiled", fromlist=["x"]).find_compiler() is None,
    reason="no C compiler: the compiled step is not built")


def _caught(fn):
    """``fn()``'s result and its StepMethodWarnings, every warning shown (``always``: the
    once-per-plant rule must not rely on Python's duplicate filter)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn()
    return out, [w for w in caught if issubclass(w.category, StepMethodWarning)]


def _box_pair_scene():
    tree = free_boxes(2, ground=True)
    plant = TimeSteppingRigidBodySystem(tree, H, constraints=[PointContactConstraint(
        tree, mu=0.5, friction="box", mujoco=MuJoCoSoftening(), name="contact")],
        name="stack")
    ctx = plant.create_default_context()
    q = tree.neutral_configuration()
    q[0:7] = [1, 0, 0, 0, 0, 0, 0.1]
    q[7:14] = [1, 0, 0, 0, 0.02, 0, 0.3]
    plant.set_positions(ctx, q)
    plant.advance(ctx, 30)
    return plant, ctx


def test_mujoco_softened_contact_warns_once_naming_the_plant_and_the_block():
    (plant, ctx), caught = _caught(_box_pair_scene)
    assert plant.step_method == "lcp"
    assert len(caught) == 1                                # once, not per step (30 steps)
    msg = str(caught[0].message)
    assert "TimeSteppingRigidBodySystem 'stack'" in msg
    assert "constraint 'contact' has MuJoCo softening" in msg
    assert "pivoting (Lemke)" in msg and plant.step_method_reason in msg
    assert caught[0].filename == __file__                  # points at the user's line
    # the pivoting step (its boxed LCP by Dantzig's pivoting), not the kernel's PGS
    assert plant.get_output_port("step").eval(ctx).report.method == "dantzig"


def test_mujoco_softened_limit_warns_once_naming_the_block():
    tree = pendulum(upper=0.3)

    def run():
        plant = TimeSteppingRigidBodySystem(tree, H, constraints=[
            JointLimitConstraint(tree, name="stops", mujoco=MuJoCoSoftening()),
            JointFrictionConstraint(tree, ["hinge"], friction=0.01, name="rub")], name="arm")
        ctx = plant.create_default_context()
        plant.set_positions(ctx, [0.2])
        plant.set_velocities(ctx, [3.0])                   # swings into the stop
        plant.advance(ctx, 50)
        return plant, ctx
    (plant, ctx), caught = _caught(run)
    assert len(caught) == 1
    msg = str(caught[0].message)
    assert "TimeSteppingRigidBodySystem 'arm'" in msg
    assert "constraint 'stops' has MuJoCo softening" in msg
    assert plant.get_positions(ctx)[0] <= 0.33     # the soft stop held (free: ~0.35)
    # a second plant on the same tree warns again: the memory is per plant
    _, again = _caught(lambda: TimeSteppingRigidBodySystem(
        tree, H, constraints=[JointLimitConstraint(tree, name="stops", mujoco=MuJoCoSoftening())],
        name="arm"))
    assert len(again) == 1
    # joint limits and joint friction take the compiled step: no warning
    (limits, _), none = _caught(lambda: (TimeSteppingRigidBodySystem(
        tree, H, constraints=[JointLimitConstraint(tree, name="stops"), JointFrictionConstraint(
            tree, ["hinge"], friction=0.01, name="rub")], name="arm"), None))
    assert none == [] and limits.step_method == "compiled_pgs"


def test_closure_and_contact_together_take_the_compiled_step_without_warning():
    # the closure eliminated before the contact problem (issue 21): no culprit, no warning
    from multibody.geometry import Halfspace, Sphere
    tree, q0 = four_bar()
    X = np.eye(4)
    X[2, 3] = -2.0
    tree.add_collision_geometry("world", Halfspace(), pose=X, name="floor")
    tree.add_collision_geometry("coupler", Sphere(0.05), name="knob")
    plant, caught = _caught(lambda: TimeSteppingRigidBodySystem(
        tree, H, constraints=[BallConstraint(tree, "coupler_end", "rocker_end", name="loop"),
                              PointContactConstraint(tree, name="touch")]))
    assert plant.step_method in ("compiled_pgs", "numpy_pgs"), plant.step_method_reason
    assert plant.step_method_reason is None
    assert caught == [] or plant.step_method == "numpy_pgs"   # no compiler: its own note
    with warnings.catch_warnings():
        warnings.simplefilter("error", StepMethodWarning)     # no fallback either
        ctx = plant.create_default_context()
        plant.set_positions(ctx, q0)
        plant.advance(ctx, 50)
    assert plant.get_output_port("step").eval(ctx).status.method == plant.step_method


def test_explicit_lcp_and_plants_without_constraints_do_not_warn():
    tree = free_boxes(2, ground=True)
    _, caught = _caught(lambda: TimeSteppingRigidBodySystem(
        tree, H, constraints=[PointContactConstraint(tree)], contact_solver="lcp"))
    assert caught == []
    _, caught = _caught(lambda: TimeSteppingRigidBodySystem(pendulum(), H))
    assert caught == []


@needs_compiler
@pytest.mark.parametrize("scene", ["box_on_ground", "sphere_pile"])
def test_compiled_scenes_do_not_warn(scene):
    if scene == "box_on_ground":
        tree = free_boxes(1)
        q = tree.neutral_configuration()
        q[:7] = [1, 0, 0, 0, 0, 0, 0.1005]
    else:
        tree = free_spheres(3, radius=0.05, mass=0.1)
        q = tree.neutral_configuration()
        for i, p in enumerate([(0, 0, 0.05), (0.1001, 0, 0.05), (0.05, 0.03, 0.14)]):
            q[7 * i:7 * i + 7] = [1, 0, 0, 0, *p]

    def run():
        plant = TimeSteppingRigidBodySystem(tree, H, constraints=[PointContactConstraint(
            tree, mu=0.5)])
        ctx = plant.create_default_context()
        plant.set_positions(ctx, q)
        plant.advance(ctx, 100)
        return plant, ctx
    (plant, ctx), caught = _caught(run)
    assert plant.step_method == "compiled_pgs" and caught == []
    assert plant.get_output_port("step").eval(ctx).report.method == "pgs"


@needs_compiler
def test_kernel_fallback_warns_once_per_plant_with_time_and_residual():
    """One PGS sweep cannot finish a landing spinning box: every step falls back; one
    warning, at the first such step, naming the plant, the time and the residual."""
    tree = free_boxes(1)
    plant = TimeSteppingRigidBodySystem(tree, H, constraints=[PointContactConstraint(
        tree, mu=0.5)], pgs_max_sweeps=1, name="one_sweep")
    assert plant.step_method == "compiled_pgs"

    def run():
        ctx = plant.create_default_context()
        plant.set_positions(ctx, [1, 0, 0, 0, 0, 0, 0.1005])
        plant.set_velocities(ctx, [0, 0, 2.0, 0.3, 0.0, -0.2])
        plant.advance(ctx, 40)
        return ctx
    ctx, caught = _caught(run)
    assert plant.get_output_port("step").eval(ctx).report.method == "lemke"
    assert len(caught) == 1
    msg = str(caught[0].message)
    assert "TimeSteppingRigidBodySystem 'one_sweep'" in msg and "fell back" in msg
    assert "did not converge: residual" in msg and "after 1 PGS sweeps" in msg
    t = float(msg.split("t=")[1].split()[0])
    assert 0.0 <= t < 40 * H
    # another run (another context) of the same plant: already reported
    _, later = _caught(run)
    assert later == []
    np.testing.assert_array_equal(run().discrete_state, ctx.discrete_state)
