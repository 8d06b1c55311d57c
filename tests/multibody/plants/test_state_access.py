"""State access of the rigid-body plants (issue 20, section 5): ``set_positions``,
``set_velocities`` and ``set_positions_and_velocities`` with a wrong size raise
``InputSizeError`` naming the plant, the expected and the given size (not numpy's "could not
broadcast"); a NaN or infinite entry raises ``PortValueError`` naming the joint; valid
values round-trip through the getters, from the plant's own context or a diagram's."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from multibody import InputSizeError, models
from multibody.constraints import PointContactConstraint
from multibody.plants import RigidBodyPlant, RigidBodySystem, TimeSteppingRigidBodySystem
from systems import DiagramBuilder, PortValueError


def _plants():
    tree = models.box_on_ground()            # one free joint 'float': nq = 7, nv = 6
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [RigidBodyPlant(tree, name="rbp"),
                RigidBodySystem(tree, constraints=[PointContactConstraint(tree)], name="rbs"),
                TimeSteppingRigidBodySystem(tree, 1e-3, constraints=[
                    PointContactConstraint(tree)], name="ts")]


PLANTS = _plants()


@pytest.mark.parametrize("plant", PLANTS, ids=lambda p: p.name)
def test_wrong_sizes_name_the_plant_and_both_sizes(plant):
    ctx = plant.create_default_context()
    label = f"{type(plant).__name__} '{plant.name}'"
    cases = [(plant.set_positions, np.zeros(6), r"q has size 6 but tree 'box' has nq = 7"),
             (plant.set_positions, np.zeros(8), r"q has size 8 but tree 'box' has nq = 7"),
             (plant.set_velocities, np.zeros(7), r"v has size 7 but tree 'box' has nv = 6"),
             (plant.set_velocities, [], r"v has size 0 but tree 'box' has nv = 6"),
             (plant.set_positions_and_velocities, np.zeros(12),
              r"\[q; v\] has size 12 but tree 'box' has nq \+ nv = 13"),
             (plant.set_positions, np.zeros((2, 7)),
              r"q has size 14 \(shape \(2, 7\)\) but tree 'box' has nq = 7")]
    before = plant.get_positions_and_velocities(ctx)
    for setter, value, message in cases:
        with pytest.raises(InputSizeError, match=message) as info:
            setter(ctx, value)
        assert str(info.value).startswith(label)
        assert isinstance(info.value, ValueError)
    np.testing.assert_array_equal(plant.get_positions_and_velocities(ctx), before)


@pytest.mark.parametrize("plant", PLANTS, ids=lambda p: p.name)
def test_non_finite_and_non_numeric_values_are_refused(plant):
    ctx = plant.create_default_context()
    q = np.array([1, 0, 0, 0, 0, 0, 0.5])
    with pytest.raises(PortValueError, match=r"q\[6\] is nan \(joint 'float'\); positions "
                                             r"and velocities must be finite"):
        plant.set_positions(ctx, np.r_[q[:6], np.nan])
    with pytest.raises(PortValueError, match=r"v\[2\] is inf \(joint 'float'\)"):
        plant.set_velocities(ctx, [0, 0, np.inf, 0, 0, 0])
    with pytest.raises(PortValueError, match=r"\[q; v\]\[8\] is -inf"):
        plant.set_positions_and_velocities(ctx, np.r_[q, 0, -np.inf, 0, 0, 0, 0])
    with pytest.raises(PortValueError, match=r"q must be numeric \(nq = 7 numbers\), got str"):
        plant.set_positions(ctx, "1 0 0 0 0 0 0")
    np.testing.assert_array_equal(plant.get_positions(ctx),
                                  models.box_on_ground().neutral_configuration())


@pytest.mark.parametrize("plant", PLANTS, ids=lambda p: p.name)
def test_valid_values_round_trip_in_a_diagram_context(plant):
    b = DiagramBuilder("d")
    b.add_system(plant)
    ctx = b.build().create_default_context()
    q = np.array([np.cos(0.2), 0, 0, np.sin(0.2), 0.1, -0.2, 0.5])
    v = np.arange(6.0)
    plant.set_positions(ctx, q.reshape(7, 1))                 # a column is accepted
    plant.set_velocities(ctx, list(v))
    np.testing.assert_array_equal(plant.get_positions(ctx), q)
    np.testing.assert_array_equal(plant.get_velocities(ctx), v)
    np.testing.assert_array_equal(plant.get_positions_and_velocities(ctx), np.r_[q, v])
    plant.set_positions_and_velocities(ctx, np.r_[q, -v])
    np.testing.assert_array_equal(plant.get_velocities(ctx), -v)
    np.testing.assert_array_equal(plant.get_positions(ctx), q)
