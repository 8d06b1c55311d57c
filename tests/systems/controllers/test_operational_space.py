"""OperationalSpaceController: the arm7 end effector tracks a circle (exact model) while the
null-space posture task keeps the redundant arm away from drift."""
import numpy as np
import pytest

from multibody import models
from multibody.parsing import parse_urdf
from multibody.plants import RigidBodyPlant
from solvers import ops
from systems import DiagramBuilder, LeafSystem
from systems.analysis import Simulator
from systems.controllers import ControllerError, OperationalSpaceController
from systems.primitives import LogVectorOutput

R_CIRCLE, W = 0.08, 2 * np.pi * 0.5


class Circle(LeafSystem):
    """[x_d; xdot_d; xddot_d] of a circle of radius R about ``center`` in a vertical plane."""

    def __init__(self, center):
        super().__init__("circle")
        self.c = np.asarray(center, float)
        self.declare_output_port("motion", 9, self._calc, feedthrough=False,
                                 prerequisites=["time"])

    def _calc(self, context):
        t = context.time
        s, c = ops.sin(W * t), ops.cos(W * t)
        return ops.vertcat(self.c[0] + R_CIRCLE * c, self.c[1] + R_CIRCLE * s, self.c[2],
                           -R_CIRCLE * W * s, R_CIRCLE * W * c, 0.0,
                           -R_CIRCLE * W * W * c, -R_CIRCLE * W * W * s, 0.0)


def test_end_effector_tracks_a_circle():
    tree = parse_urdf(models.model_path("arm7"))
    ee = tree.bodies[-1].name
    q0 = np.array([0.2, 0.5, -0.1, -1.2, 0.1, 0.6, 0.0])
    p0 = tree.body_pose(ee, q0)[:3, 3]
    center = p0 - np.array([R_CIRCLE, 0.0, 0.0])        # start on the circle (angle 0)
    b = DiagramBuilder()
    plant = b.add_system(RigidBodyPlant(tree, name="arm"))
    osc = b.add_system(OperationalSpaceController(tree, ee, kp=400.0, kd=40.0,
                                                   posture_kp=20.0, posture_kd=10.0, posture=q0))
    ref = b.add_system(Circle(center))
    b.connect(plant.get_output_port("state"), osc.get_input_port("estimated_state"))
    b.connect(ref.get_output_port("motion"), osc.get_input_port("desired_motion"))
    b.connect(osc.get_output_port("generalized_force"), plant.get_input_port("generalized_force"))
    log = LogVectorOutput(plant.get_output_port("state"), b, publish_period=0.05)
    d = b.build()
    sim = Simulator(d, compiled=True, integrator="cvodes", accuracy=1e-10)
    plant.set_positions(sim.get_context(), q0)
    # start with the circle's initial velocity (J v = [0, R w, 0]) by least squares
    J = tree.jacobian(ee, q0)[3:6]
    plant.set_velocities(sim.get_context(), np.linalg.pinv(J) @ [0.0, R_CIRCLE * W, 0.0])
    sim.advance_to(2.0)
    data = log.find_log(sim.get_context())
    errs = []
    for t, x in zip(data.sample_times(), data.data().T):
        p = tree.body_pose(ee, x[:7])[:3, 3]
        ref = center + R_CIRCLE * np.array([np.cos(W * t), np.sin(W * t), 0.0])
        errs.append(np.linalg.norm(p - ref))
    assert max(errs) < 1e-6                              # exact model: the error stays zero
    assert np.ptp(data.data()[0]) > 0.01                 # the arm did move


def test_bad_arguments_are_named():
    tree = parse_urdf(models.model_path("arm7"))
    with pytest.raises(ControllerError, match="no body or frame named 'gripper'"):
        OperationalSpaceController(tree, "gripper")
    with pytest.raises(ControllerError, match="kp has 2 entries"):
        OperationalSpaceController(tree, tree.bodies[-1].name, kp=[1, 2])
