"""PidControlledSystem: the closed loop of a double integrator equals its closed form."""
import numpy as np
import pytest

from systems.analysis import Simulator
from systems.controllers import PidControlledSystem
from systems.primitives import LinearSystem


def test_closed_loop_matches_the_second_order_response():
    plant = LinearSystem(A=[[0, 1], [0, 0]], B=[[0], [1]], C=np.eye(2), name="double_int")
    d = PidControlledSystem(plant, kp=4.0, ki=0.0, kd=4.0)      # s^2 + 4 s + 4: double pole -2
    sim = Simulator(d, integrator="RK45", accuracy=1e-10)
    ctx = sim.get_context()
    d.get_input_port("desired_state").fix_value(ctx, [1.0, 0.0])
    d.get_input_port("feedforward_control").fix_value(ctx, [0.0])
    sim.advance_to(2.0)
    x = plant.get_my_context_from_root(ctx).continuous_state[0]
    assert x == pytest.approx(1 - (1 + 2 * 2.0) * np.exp(-2 * 2.0), abs=1e-8)
    assert [p.name for p in d.input_ports] == ["desired_state", "feedforward_control"]


def test_feedforward_adds_to_the_control_and_sizes_are_checked():
    plant = LinearSystem(A=[[0, 1], [0, 0]], B=[[0], [1]], C=np.eye(2))
    d = PidControlledSystem(plant, kp=0.0, ki=0.0, kd=0.0)
    ctx = d.create_default_context()
    d.get_input_port("desired_state").fix_value(ctx, [0.0, 0.0])
    d.get_input_port("feedforward_control").fix_value(ctx, [3.0])
    np.testing.assert_allclose(d.eval_time_derivatives(ctx)[:2], [0.0, 3.0])   # plant part
    bad = LinearSystem(A=[[0.0]], B=[[1.0]], C=[[1.0]])
    with pytest.raises(ValueError, match="must be twice the control input"):
        PidControlledSystem(bad, 1.0, 0.0, 0.0)
