"""Names from model files ("my.robot-v1.2", spaces, accents, doubled separators) are made safe
for generated code: every plant builds, steps and converts to CasADi with such a tree name."""
from __future__ import annotations

import re

import numpy as np
import pytest

from multibody import Free, Revolute, RigidBodyTree
from multibody.constraints import PointContactConstraint
from multibody.geometry import Halfspace, Sphere
from multibody.plants import RigidBodyPlant, RigidBodySystem, TimeSteppingRigidBodySystem
from solvers.ops import function_name
from systems import Simulator
from systems.symbolic import to_casadi

NAMES = ["my.robot-v1.2", "robot arm", "bras_é__droit", "3dof", "jac", "a..b--c"]


@pytest.mark.parametrize("raw, expected", [
    ("my.robot-v1.2", "my_robot_v1_2"), ("a__b", "a_b"), ("3dof", "f_3dof"), ("jac", "f_jac"),
    ("bras_é", "bras"), ("", "f"), ("__x__", "x"), ("naïve robot", "na_ve_robot")])
def test_function_name_is_a_valid_casadi_name(raw, expected):
    assert function_name(raw) == expected
    assert re.fullmatch(r"[A-Za-z][A-Za-z0-9]*(_[A-Za-z0-9]+)*", function_name(raw, "dynamics"))


def _ball(name: str) -> RigidBodyTree:
    tree = RigidBodyTree(name)
    tree.add_body("ball", 1.0, inertia=0.004 * np.eye(3))
    tree.add_joint(Free("float", "world", "ball"))
    tree.add_collision_geometry("world", Halfspace(), name="ground")
    tree.add_collision_geometry("ball", Sphere(0.1), name="ball.shape")
    return tree


@pytest.mark.parametrize("name", NAMES)
def test_time_stepping_plant_steps_with_a_model_file_name(name):
    tree = _ball(name)
    plant = TimeSteppingRigidBodySystem(tree, 1e-3, constraints=[PointContactConstraint(tree)])
    assert "." not in plant.name
    context = plant.create_default_context()
    q0 = np.array([1.0, 0, 0, 0, 0, 0, 0.3])
    plant.set_positions(context, q0)
    sim = Simulator(plant, context)
    sim.advance_to(0.05)
    z = plant.get_positions(sim.get_context())[6]
    assert z == pytest.approx(0.3 - 0.5 * 9.81 * 0.05 ** 2, abs=2e-3)   # free fall, first order


@pytest.mark.parametrize("name", NAMES)
def test_continuous_plants_convert_with_a_model_file_name(name):
    tree = RigidBodyTree(name)
    tree.add_body("link", 1.0, com=(0, 0, -0.5), inertia=0.01 * np.eye(3))
    tree.add_joint(Revolute("hinge", "world", "link", axis=(0, 1, 0)))
    for plant in (RigidBodyPlant(tree), RigidBodySystem(tree)):
        fns = to_casadi(plant)
        assert fns.f.name() == function_name(plant.name, "f")
        sizes = [fns.f.size1_in(i) for i in range(fns.f.n_in())]
        args = [np.zeros(n) for n in sizes]
        args[fns.f.index_in("x")] = np.array([0.3, 0.0])            # angle, rate
        xdot = np.asarray(fns.f(*args)).ravel()
        # pendulum about y with the COM 0.5 below: vdot = -m g l sin(q) / (I + m l^2)
        assert xdot[1] == pytest.approx(-9.81 * 0.5 * np.sin(0.3) / (0.01 + 0.25), rel=1e-12)
