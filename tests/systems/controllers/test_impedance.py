"""JointImpedanceController: holds the desired pose against gravity, and under a constant
push settles at the deflection tau / K of its programmed springs."""
import numpy as np
import pytest

from multibody import models
from multibody.parsing import parse_urdf
from multibody.plants import RigidBodySystem
from systems import DiagramBuilder
from systems.analysis import Simulator
from systems.controllers import ControllerError, JointImpedanceController
from systems.primitives import ConstantVectorSource


def _loop(push):
    tree = parse_urdf(models.model_path("arm7"))
    qd = np.array([0.3, -0.4, 0.2, -1.0, 0.1, 0.5, 0.0])
    K = np.array([300, 300, 200, 200, 100, 100, 50.0])
    b = DiagramBuilder()
    plant = b.add_system(RigidBodySystem(tree, name="arm"))
    ctrl = b.add_system(JointImpedanceController(tree, K, 2 * np.sqrt(K)))
    des = b.add_system(ConstantVectorSource(np.concatenate([qd, np.zeros(7)]), name="qd"))
    ext = b.add_system(ConstantVectorSource(push, name="push"))
    b.connect(plant.get_output_port("state"), ctrl.get_input_port("estimated_state"))
    b.connect(des.get_output_port(), ctrl.get_input_port("desired_state"))
    b.connect(ctrl.get_output_port("generalized_force"),
              plant.get_input_port("applied_generalized_force"))
    b.connect(ext.get_output_port(), plant.get_input_port("applied_spatial_force"))
    d = b.build()
    return d, plant, qd, K


def test_holds_the_desired_pose_against_gravity():
    tree = parse_urdf(models.model_path("arm7"))
    d, plant, qd, _ = _loop(np.zeros(6 * (len(tree.bodies) - 1)))
    sim = Simulator(d, integrator="RK45", accuracy=1e-9)
    plant.set_positions(sim.get_context(), qd)
    sim.advance_to(1.0)
    np.testing.assert_allclose(plant.get_positions(sim.get_context()), qd, atol=1e-8)


def test_a_constant_push_deflects_by_tau_over_k():
    tree = parse_urdf(models.model_path("arm7"))
    # a 5 N push along x at the last body's origin
    w = np.zeros(6 * (len(tree.bodies) - 1))
    w[-3] = 5.0
    d, plant, qd, K = _loop(w)
    sim = Simulator(d, compiled=True, integrator="cvodes", accuracy=1e-10)   # stiff: BDF
    plant.set_positions(sim.get_context(), qd)
    sim.advance_to(6.0)
    q = plant.get_positions(sim.get_context())
    J = tree.jacobian(tree.bodies[-1].name, q)
    tau_push = J.T @ w[-6:]
    # static balance: K (qd - q) + tau_push = 0 (gravity compensated)
    np.testing.assert_allclose(K * (q - qd), tau_push, atol=1e-6)
    assert np.max(np.abs(q - qd)) > 1e-3                       # it did give way


def test_bad_gains_are_named():
    tree = parse_urdf(models.model_path("arm7"))
    with pytest.raises(ControllerError, match="stiffness has 2 entries"):
        JointImpedanceController(tree, [1, 2], 1.0)
