"""ContactForceSensor: a box resting on the ground carries its weight, in both plants."""
import numpy as np
import pytest

from _time_stepping_models import free_boxes
from multibody.constraints import PointContactConstraint
from multibody.models import box_on_ground
from multibody.plants import RigidBodySystem, TimeSteppingRigidBodySystem
from sensors import ContactForceSensor

M = 2.0


@pytest.mark.parametrize("kind", ["time_stepping", "continuous"])
def test_resting_box_reads_its_weight(kind):
    if kind == "time_stepping":
        tree = free_boxes(1, mass=M)
        sensor = ContactForceSensor(tree, "box0", name="fts")
        plant = TimeSteppingRigidBodySystem(tree, 1e-3, sensors=[sensor],
                                            constraints=[PointContactConstraint(tree, 0.5)])
        ctx = plant.create_default_context()
        plant.set_positions(ctx, [1, 0, 0, 0, 0.3, -0.2, 0.1])       # resting (half size 0.1)
        plant.advance(ctx, 50)
    else:
        tree = box_on_ground(mass=M)
        sensor = ContactForceSensor(tree, "box", name="fts")
        plant = RigidBodySystem(tree, sensors=[sensor],
                                constraints=[PointContactConstraint(tree, 0.5)])
        ctx = plant.create_default_context()
        plant.set_positions(ctx, [1, 0, 0, 0, 0.3, -0.2, 0.1])       # size z 0.2: resting
        plant.reset_modes(ctx)
    w = np.asarray(plant.get_output_port("fts").eval(ctx), float)
    np.testing.assert_allclose(w[3:], [0, 0, M * 9.81], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(w[:3], 0.0, atol=1e-6)                # symmetric support


def test_unknown_body_is_named():
    with pytest.raises(ValueError, match="has no body named 'lid'"):
        ContactForceSensor(box_on_ground(), "lid")
