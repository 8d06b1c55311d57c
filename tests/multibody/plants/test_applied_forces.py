"""The plants' optional applied-force inputs (Drake's port names): unconnected they read as
zeros and stay out of the CasADi conversion; a spatial force on a body acts through the
body's Jacobian, the same in both plants."""
import numpy as np
import pytest

from multibody import Free, Revolute, RigidBodyTree
from multibody.plants import RigidBodySystem, TimeSteppingRigidBodySystem
from systems.symbolic import to_casadi


def _pendulum():
    t = RigidBodyTree("pendulum", gravity=(0, 0, 0))
    t.add_body("link", 2.0, com=(0, 0, -0.5), inertia=np.eye(3) * 0.01)
    t.add_joint(Revolute("hinge", "world", "link", axis=(0, 1, 0)))
    return t


@pytest.mark.parametrize("kind", ["continuous", "time_stepping"])
def test_applied_forces_act_through_the_body_jacobian(kind):
    t = _pendulum()
    plant = RigidBodySystem(t) if kind == "continuous" else TimeSteppingRigidBodySystem(t, 1e-3)
    ctx = plant.create_default_context()
    accel = plant.get_output_port("generalized_acceleration")
    np.testing.assert_allclose(accel.eval(ctx), [0.0], atol=1e-14)          # unconnected: 0
    I = 0.01 + 2.0 * 0.25
    # a force of 3 N along +x at the origin of 'link' (the pivot) makes no torque; the same
    # force is 3 N x 0.5 m about the pivot when applied as a torque about y
    plant.get_input_port("applied_spatial_force").fix_value(ctx, [0, 1.5, 0, 3.0, 0, 0])
    np.testing.assert_allclose(accel.eval(ctx), [1.5 / I], rtol=1e-9)
    plant.get_input_port("applied_generalized_force").fix_value(ctx, [-1.5])
    np.testing.assert_allclose(accel.eval(ctx), [0.0], atol=1e-12)


def test_a_force_at_the_free_body_origin_accelerates_it_in_any_direction():
    t = RigidBodyTree("puck", gravity=(0, 0, 0))
    t.add_body("puck", 4.0, inertia=np.eye(3))
    t.add_joint(Free("float", "world", "puck"))
    plant = RigidBodySystem(t)
    ctx = plant.create_default_context()
    f = np.array([1.0, -2.0, 0.5])
    plant.get_input_port("applied_spatial_force").fix_value(ctx, np.concatenate([[0, 0, 0], f]))
    np.testing.assert_allclose(plant.get_output_port("generalized_acceleration").eval(ctx)[3:],
                               f / 4.0, atol=1e-12)


def test_optional_inputs_stay_out_of_the_casadi_conversion():
    plant = RigidBodySystem(_pendulum())
    cs = to_casadi(plant)
    assert cs.nu == 0 and cs.nx == 2
