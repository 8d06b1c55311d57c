"""The plants' class docstrings name their ports (issue 20, section 5): every port a plant
declares appears in its class docstring as ``name`` followed by its size or kind, or, for
the ports named after blocks (actuator commands, sensor outputs), the docstring says how
they are named."""
from __future__ import annotations

import re
import warnings

import pytest

from actuators import FirstOrderLagActuator, GeneralizedForceActuator
from multibody import models
from multibody.constraints import PointContactConstraint
from multibody.plants import RigidBodyPlant, RigidBodySystem, TimeSteppingRigidBodySystem
from sensors import FullStateSensor, Imu


def _blocks(tree):
    return dict(actuators=[GeneralizedForceActuator(tree, ["float"], name="push")],
                sensors=[FullStateSensor(tree, name="gps"), Imu(tree, "box", name="imu")],
                constraints=[PointContactConstraint(tree, name="contact")])


def _plants():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tree = models.box_on_ground()
        yield RigidBodyPlant(models.box_on_ground())
        yield RigidBodySystem(tree, **_blocks(tree))
        lagged = models.box_on_ground()                     # with actuator_state
        yield RigidBodySystem(lagged, actuators=[FirstOrderLagActuator(
            lagged, ["float"], 0.05, name="lag")])
        tree = models.box_on_ground()
        yield TimeSteppingRigidBodySystem(tree, 1e-3, **_blocks(tree))


@pytest.mark.parametrize("plant", list(_plants()), ids=lambda p: f"{type(p).__name__}")
def test_every_declared_port_is_documented_in_the_class_docstring(plant):
    doc = type(plant).__doc__
    assert re.search(r"^\s*Ports\n\s*-----", doc, re.M), "no Ports section"
    commands = {p.name for p in getattr(plant, "command_ports", []) if p is not None}
    sensors = set(getattr(plant, "sensor_ports", {}))
    if commands:
        assert "one per actuator with a command, named after the actuator" in doc
    if sensors:
        assert "one per sensor output port, named after the sensor" in doc
    ports = [("input", p) for p in plant.input_ports] + \
        [("output", p) for p in plant.output_ports]
    assert len(ports) >= 3
    for kind, port in ports:
        if port.name in commands or port.name in sensors:
            continue
        assert re.search(rf"``{re.escape(port.name)}`` \((nv|nq \+ nv|nz|6 per|abstract)",
                         doc), f"{kind} port '{port.name}' is not documented with its size"
