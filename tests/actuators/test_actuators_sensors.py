"""Actuator and sensor blocks: values, symbolic == numeric, errors, use in a diagram."""
import numpy as np
import pytest

from actuators import GeneralizedForceActuator
from multibody import RigidBodyTree
from multibody.plants import RigidBodyPlant
from multibody.models import model_path
from sensors import FullStateSensor, JointStateSensor
from systems import DiagramBuilder
from systems.analysis import Simulator
from systems.primitives import ConstantVectorSource
from _symbolic_check import symbolic_vs_numeric


@pytest.fixture()
def tree():
    return RigidBodyTree.from_urdf(str(model_path("acrobot")))


X = [0.1, 0.2, 0.3, 0.4]


def test_generalized_force_actuator_gear_and_limits(tree):
    a = GeneralizedForceActuator(tree, ["elbow", "shoulder"], gear_ratio=[2.0, 1.0], effort_limit=[3.0, 10.0])
    ctx = a.create_default_context()
    a.get_input_port("state").fix_value(ctx, X)
    a.get_input_port("command").fix_value(ctx, [5.0, -4.0])
    # elbow: 2 * 5 = 10 clipped to 3 (v index 1); shoulder: -4 (v index 0)
    np.testing.assert_allclose(a.get_output_port().eval(ctx), [-4.0, 3.0])
    assert a.has_direct_feedthrough("command", "generalized_force")
    assert symbolic_vs_numeric(a, ctx, [X, [5.0, -4.0]]) == 1
    unlimited = GeneralizedForceActuator(tree, ["elbow"])
    c2 = unlimited.create_default_context()
    unlimited.get_input_port("state").fix_value(c2, X)
    unlimited.get_input_port("command").fix_value(c2, [1e6])
    np.testing.assert_allclose(unlimited.get_output_port().eval(c2), [0.0, 1e6])


def test_actuator_errors(tree):
    with pytest.raises(ValueError, match="unknown joint 'knee'"):
        GeneralizedForceActuator(tree, ["knee"])
    with pytest.raises(ValueError, match="gear_ratio has size 3 but the joints give 2 commands"):
        GeneralizedForceActuator(tree, ["elbow", "shoulder"], gear_ratio=[1.0, 2.0, 3.0])
    weld = [j.name for j in tree.joints if j.nv == 0][0]
    with pytest.raises(ValueError, match="has no velocity degree of freedom"):
        GeneralizedForceActuator(tree, [weld])
    a = GeneralizedForceActuator(tree, ["elbow"])
    with pytest.raises(ValueError, match="size 2, expected size 1"):
        a.get_input_port("command").fix_value(a.create_default_context(), [1.0, 2.0])


def test_state_sensors(tree):
    full = FullStateSensor(tree)
    ctx = full.create_default_context()
    full.get_input_port("state").fix_value(ctx, X)
    np.testing.assert_array_equal(full.get_output_port().eval(ctx), X)
    js = JointStateSensor(tree, ["elbow"])
    ctx = js.create_default_context()
    js.get_input_port("state").fix_value(ctx, X)
    np.testing.assert_array_equal(js.get_output_port().eval(ctx), [0.2, 0.4])
    assert symbolic_vs_numeric(js, ctx, [X]) == 1
    with pytest.raises(ValueError, match="unknown joint 'wrist'"):
        JointStateSensor(tree, ["wrist"])


def test_blocks_around_a_plant_in_a_diagram(tree):
    def run(with_blocks):
        t = RigidBodyTree.from_urdf(str(model_path("acrobot")))
        plant = RigidBodyPlant(t)
        b = DiagramBuilder()
        b.add_system(plant)
        if with_blocks:
            act = b.add_system(GeneralizedForceActuator(t, ["elbow"], gear_ratio=2.0))
            sens = b.add_system(JointStateSensor(t, ["elbow"]))
            cmd = b.add_system(ConstantVectorSource([0.25]))
            b.connect(plant.get_output_port("state"), act.get_input_port("state"))
            b.connect(cmd.get_output_port(), act.get_input_port("command"))
            b.connect(act.get_output_port(), plant.get_input_port())
            b.connect(plant.get_output_port("state"), sens.get_input_port("state"))
            b.export_output(sens.get_output_port(), "elbow")
        else:
            tau = b.add_system(ConstantVectorSource([0.0, 0.5]))
            b.connect(tau.get_output_port(), plant.get_input_port())
        b.export_output(plant.get_output_port("state"), "state")
        d = b.build()
        ctx = d.create_default_context()
        Simulator(d, ctx, integrator="RK45", accuracy=1e-10).advance_to(1.0)
        return d, ctx

    d1, c1 = run(True)
    d2, c2 = run(False)
    x1 = d1.get_output_port("state").eval(c1)
    np.testing.assert_allclose(x1, d2.get_output_port("state").eval(c2), atol=1e-9)
    np.testing.assert_allclose(d1.get_output_port("elbow").eval(c1), x1[[1, 3]])
    assert abs(x1[1]) > 1e-3
