"""Encoder: quantization within half a count, held between samples, named errors."""
import numpy as np
import pytest

from multibody import Revolute, RigidBodyTree
from multibody.plants import RigidBodyPlant
from sensors import Encoder
from systems import DiagramBuilder
from systems.analysis import Simulator
from systems.primitives import ConstantVectorSource, LogVectorOutput


def test_quantized_and_sampled_positions():
    t = RigidBodyTree("wheel", gravity=(0, 0, 0))
    t.add_body("wheel", 1.0, inertia=np.eye(3) * 0.1)
    t.add_joint(Revolute("axle", "world", "wheel", axis=(0, 0, 1)))
    cpr, period = 1024, 0.01
    b = DiagramBuilder()
    plant = b.add_system(RigidBodyPlant(t))
    enc = b.add_system(Encoder(t, "axle", cpr, period))
    torque = b.add_system(ConstantVectorSource([0.05]))
    b.connect(torque.get_output_port(), plant.get_input_port("generalized_force"))
    b.connect(plant.get_output_port("state"), enc.get_input_port("state"))
    pos = LogVectorOutput(enc.get_output_port("position"), b, publish_period=period)
    cnt = LogVectorOutput(enc.get_output_port("counts"), b, publish_period=period)
    true = LogVectorOutput(plant.get_output_port("state"), b, publish_period=period)
    d = b.build()
    sim = Simulator(d, integrator="RK45", accuracy=1e-10)
    sim.advance_to(1.0)
    ctx = sim.get_context()
    p, c, x = pos.find_log(ctx).data()[0], cnt.find_log(ctx).data()[0], true.find_log(ctx).data()[0]
    step = 2 * np.pi / cpr
    np.testing.assert_array_equal(c, np.round(c))                   # whole counts
    # Drake's order: the log at t_k sees the sample taken at t_(k-1) (the update at t_k runs
    # after the publishes at t_k), the true angle at t_(k-1) quantized
    assert np.max(np.abs(p[1:] - x[:-1])) <= 0.5 * step + 1e-12
    assert np.max(np.abs(p - x)) > 1e-4 * step                      # it does quantize
    np.testing.assert_allclose(p, c * step)


def test_bad_arguments_are_named():
    t = RigidBodyTree("wheel")
    t.add_body("wheel", 1.0, inertia=np.eye(3) * 0.1)
    t.add_joint(Revolute("axle", "world", "wheel", axis=(0, 0, 1)))
    with pytest.raises(ValueError, match="no joint named 'hub'"):
        Encoder(t, "hub", 1000, 0.01)
    with pytest.raises(ValueError, match="counts_per_revolution must be > 0"):
        Encoder(t, "axle", 0, 0.01)
    with pytest.raises(ValueError, match="sample_period must be finite and > 0"):
        Encoder(t, "axle", 1000, -1.0)
