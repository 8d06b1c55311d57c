"""A RigidBodySystem is the tree block plus actuator, sensor and constraint blocks (issue 25,
Drake's 2016 design note): by default its inputs are its actuators' inputs and its outputs
its sensors' outputs; the state and contact results stay available as outputs."""
import numpy as np
import pytest

import multibody
from actuators import DcMotor, GeneralizedForceActuator
from multibody import RigidBodyTree
from multibody.plants import RigidBodyPlant, RigidBodySystem, TimeSteppingRigidBodySystem
from sensors import JointStateSensor
from systems import DiagramBuilder
from systems.analysis import Simulator
from systems.primitives import ConstantVectorSource, LogVectorOutput

R, L, KT, N = 1.5, 2e-3, 0.05, 10.0     # motor: ohm, H, N m/A, gear ratio


def _motor_plant():
    tree = RigidBodyTree.from_urdf(str(multibody.model_path("acrobot")))
    motor = DcMotor(tree, "elbow", resistance=R, inductance=L, torque_constant=KT,
                    gear_ratio=N, name="motor")
    encoder = JointStateSensor(tree, ["shoulder", "elbow"], name="encoder")
    return tree, motor, encoder, RigidBodySystem(tree, actuators=[motor], sensors=[encoder])


def test_motor_command_and_sensor_output_are_the_default_ports():
    tree, motor, encoder, plant = _motor_plant()
    assert plant.tree is tree and plant.actuators == [motor] and plant.sensors == [encoder]
    required = [(p.name, p.size) for p in plant.input_ports if not p.optional]
    assert required == [("motor", 1)]                 # the motor's command (volts)
    assert plant.actuator_input_port(motor) is plant.get_input_port("motor")
    assert plant.get_input_port() is plant.get_input_port("motor")       # the default ports
    assert plant.get_output_port() is plant.get_output_port("encoder")
    assert plant.actuator_input_port("motor") is plant.get_input_port("motor")
    out = plant.sensor_output_port(encoder)
    assert out is plant.get_output_port("encoder") and out.size == 4
    for name in ("state", "contact_results", "actuator_state"):   # available on request
        assert plant.has_output_port(name)
    with pytest.raises(ValueError, match="has no actuator 'brake'; its actuators are"):
        plant.actuator_input_port("brake")
    with pytest.raises(ValueError, match=r"no sensor output 'imu'.*\['encoder'\]"):
        plant.sensor_output_port("imu")


def test_motor_command_drives_the_arm_and_the_sensor_reads_it():
    tree, motor, encoder, plant = _motor_plant()
    ctx = plant.create_default_context()
    x = np.array([0.2, -0.3, 0.1, 0.4, 2.0])           # [q; v; motor current]
    ctx.set_continuous_state(x)
    plant.actuator_input_port(motor).fix_value(ctx, [5.0])
    xdot = plant.eval_time_derivatives(ctx)
    q, v, i = x[:2], x[2:4], x[4]
    # di/dt = (V - R i - k_e N v_elbow) / L, with k_e = k_t; tau_elbow = N k_t i
    assert xdot[4] == pytest.approx((5.0 - R * i - KT * N * v[1]) / L, rel=1e-12)
    tau = np.array([0.0, N * KT * i]) + tree.joint_passive_forces(q, v)
    np.testing.assert_allclose(xdot[2:4], tree.forward_dynamics(q, v, tau), atol=1e-10)
    np.testing.assert_allclose(plant.sensor_output_port(encoder).eval(ctx), x[:4], atol=0)

    b = DiagramBuilder()
    b.add_system(plant)
    volts = b.add_system(ConstantVectorSource([6.0], name="volts"))
    b.connect(volts.get_output_port(), plant.actuator_input_port(motor))   # the only input
    log = LogVectorOutput(plant.sensor_output_port(encoder), b)
    d = b.build()
    c = d.create_default_context()
    Simulator(d, c, integrator="RK45", accuracy=1e-9).advance_to(0.05)
    reading = log.find_log(c).data()[:, -1]
    np.testing.assert_allclose(reading, plant.get_output_port("state").eval(
        plant.get_my_context_from_root(c)), atol=0)
    assert reading[3] > 0.0      # a positive voltage turns the elbow forward from rest


def test_time_stepping_system_has_the_same_default_ports():
    tree = RigidBodyTree.from_urdf(str(multibody.model_path("acrobot")))
    act = GeneralizedForceActuator(tree, "elbow", name="elbow_torque")
    enc = JointStateSensor(tree, ["elbow"], name="encoder")
    ts = TimeSteppingRigidBodySystem(tree, actuators=[act], sensors=[enc], time_step=1e-3)
    assert [(p.name, p.size) for p in ts.input_ports if not p.optional] == [("elbow_torque", 1)]
    assert ts.sensor_output_port("encoder").size == 2
    assert ts.has_output_port("state") and ts.has_output_port("contact_results")


def test_rigid_body_plant_is_the_tree_block_with_options():
    tree = RigidBodyTree.from_urdf(str(multibody.model_path("arm7")))
    plant = RigidBodyPlant(tree)
    assert [(p.name, p.size) for p in plant.input_ports] == \
        [(p.name, p.size) for p in tree.input_ports] == [("generalized_force", 7)]
    assert [p.name for p in plant.output_ports] == ["state", "generalized_acceleration"]
    with pytest.raises(ValueError, match="has no actuator 'm'; its actuators are \\[\\]"):
        plant.actuator_input_port("m")
    x = np.linspace(-0.4, 0.6, 14)
    cs = []
    for blk in (tree, plant):
        c = blk.create_default_context()
        c.set_continuous_state(x)
        blk.get_input_port().fix_value(c, np.linspace(1, -1, 7))
        cs.append(blk.eval_time_derivatives(c))
    np.testing.assert_array_equal(cs[0], cs[1])
    undamped = RigidBodyPlant(tree, include_passive_forces=False, name="undamped")
    c = undamped.create_default_context()
    c.set_continuous_state(x)
    undamped.get_input_port().fix_value(c, np.linspace(1, -1, 7))
    assert not np.allclose(undamped.eval_time_derivatives(c), cs[0])   # the arm has damping
