"""Servo, lag, friction and saturation reporting: closed forms and named errors."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from actuators import FirstOrderLagActuator, GeneralizedForceActuator, JointFriction, PdServo
from multibody import Prismatic, RigidBodyTree
from multibody.plants import RigidBodySystem
from systems import DiagramBuilder
from systems.analysis import Simulator
from systems.primitives import ConstantVectorSource, LogVectorOutput
from systems.symbolic import to_casadi

M = 2.0


def _slider():
    t = RigidBodyTree("slider", gravity=(0, 0, 0))
    t.add_body("cart", M, inertia=np.eye(3) * 0.1)
    t.add_joint(Prismatic("x", "world", "cart", axis=(1, 0, 0), effort_limit=50.0))
    return t


def _run(t, actuator, command, T, x0=(0.0, 0.0)):
    plant = RigidBodySystem(t, actuators=[actuator])
    b = DiagramBuilder()
    b.add_system(plant)
    if actuator.get_input_port("command").size:
        src = b.add_system(ConstantVectorSource(command))
        b.connect(src.get_output_port(), plant.get_input_port(actuator.name))
    log = LogVectorOutput(plant.get_output_port("state"), b)
    d = b.build()
    sim = Simulator(d, integrator="RK45", accuracy=1e-11)
    plant.set_positions(sim.get_context(), [x0[0]])
    plant.set_velocities(sim.get_context(), [x0[1]])
    sim.advance_to(T)
    data = log.find_log(sim.get_context())
    return data.sample_times(), data.data(), plant, sim


def test_pd_servo_step_is_a_critically_damped_second_order_response():
    t = _slider()
    w = 8.0
    servo = PdServo(t, "x", bandwidth=w, inertia=M, name="servo")
    ts, x, *_ = _run(t, servo, [0.1], 1.0)
    ref = 0.1 * (1 - (1 + w * ts) * np.exp(-w * ts))     # critically damped step
    np.testing.assert_allclose(x[0], ref, atol=1e-9)


def test_first_order_lag_effort_and_motion_match_the_closed_form():
    t = _slider()
    lag = FirstOrderLagActuator(t, "x", time_constant=0.2, name="lag")
    ts, x, *_ = _run(t, lag, [4.0], 1.0)
    # tau = 4 (1 - e^{-t/T}); v = tau integrated / M; x integrated again
    T = 0.2
    v = 4.0 / M * (ts - T * (1 - np.exp(-ts / T)))
    pos = 4.0 / M * (ts ** 2 / 2 - T * ts + T * T * (1 - np.exp(-ts / T)))
    np.testing.assert_allclose(x[1], v, atol=1e-9)
    np.testing.assert_allclose(x[0], pos, atol=1e-9)


def test_smoothed_coulomb_and_viscous_friction_decelerate_a_slider():
    t = _slider()
    fr = JointFriction(t, "x", viscous=0.5, coulomb=3.0, slip_speed=1e-4, name="friction")
    ts, x, *_ = _run(t, fr, [], 0.5, x0=(0.0, 1.0))
    ref = solve_ivp(lambda s, y: [y[1], (-0.5 * y[1] - 3.0 * np.tanh(y[1] / 1e-4)) / M],
                    (0, 0.5), [0.0, 1.0], t_eval=ts, rtol=1e-11, atol=1e-12, method="LSODA")
    np.testing.assert_allclose(x[1], ref.y[1], atol=1e-6)
    # while sliding: m vdot = -b v - F (the Coulomb limit)
    k = np.searchsorted(ts, 0.05)
    assert x[1][k] == pytest.approx(ref.y[1][k], abs=1e-6)


def test_saturation_is_reported_and_symbolic():
    t = _slider()
    act = GeneralizedForceActuator(t, ["x"], gear_ratio=10.0, name="motor",
                                   report_saturation=True)               # limit 50 N
    ctx = act.create_default_context()
    act.get_input_port("state").fix_value(ctx, [0.0, 0.0])
    act.get_input_port("command").fix_value(ctx, [6.0])
    assert act.get_output_port("saturated").eval(ctx)[0] == 1.0
    np.testing.assert_allclose(act.get_output_port("generalized_force").eval(ctx), [50.0])
    act.get_input_port("command").fix_value(ctx, [4.0])
    assert act.get_output_port("saturated").eval(ctx)[0] == 0.0
    cs = to_casadi(act)                                 # the flag converts (0/1 expression)
    assert cs.ny == 2


def test_bad_arguments_are_named():
    t = _slider()
    with pytest.raises(ValueError, match="bandwidth must be > 0"):
        PdServo(t, "x", bandwidth=0.0, inertia=1.0)
    with pytest.raises(ValueError, match="time_constant must be > 0"):
        FirstOrderLagActuator(t, "x", time_constant=-1.0)
    with pytest.raises(ValueError, match="slip_speed must be finite and > 0"):
        JointFriction(t, "x", coulomb=1.0, slip_speed=0.0)
    with pytest.raises(ValueError, match="no joint named 'y'"):
        PdServo(t, "y", bandwidth=1.0, inertia=1.0)


def test_series_elastic_actuator_conserves_momentum_and_oscillates_at_the_two_mass_frequency():
    from actuators import SeriesElasticActuator
    t = _slider()
    k, Jm = 50.0, 0.5
    sea = SeriesElasticActuator(t, "x", stiffness=k, motor_inertia=Jm, name="sea")
    plant = RigidBodySystem(t, actuators=[sea])
    b = DiagramBuilder()
    b.add_system(plant)
    src = b.add_system(ConstantVectorSource([0.0]))
    b.connect(src.get_output_port(), plant.get_input_port("sea"))
    log = LogVectorOutput(plant.get_output_port("state"), b, publish_period=0.01)
    d = b.build()
    sim = Simulator(d, integrator="RK45", accuracy=1e-11)
    ctx = sim.get_context()
    # state [q, v, theta, theta_dot]: the motor starts 0.1 ahead, everything at rest
    plant.get_my_context_from_root(ctx).set_continuous_state([0.0, 0.0, 0.1, 0.0])
    sim.advance_to(2.0)
    xs = plant.get_my_context_from_root(sim.get_context()).continuous_state
    assert M * xs[1] + Jm * xs[3] == pytest.approx(0.0, abs=1e-9)      # momentum
    w = np.sqrt(k * (1 / Jm + 1 / M))                                   # two-mass frequency
    # relative coordinate d = theta - q oscillates as 0.1 cos(w t)
    np.testing.assert_allclose(xs[2] - xs[0], 0.1 * np.cos(w * 2.0), atol=1e-8)


def test_a_pure_delay_is_a_discrete_time_delay_in_front_of_the_command():
    from systems.primitives import DiscreteTimeDelay
    t = _slider()
    act = GeneralizedForceActuator(t, ["x"], name="motor")
    plant = RigidBodySystem(t, actuators=[act])
    b = DiagramBuilder()
    b.add_system(plant)
    src = b.add_system(ConstantVectorSource([2.0]))
    delay = b.add_system(DiscreteTimeDelay(0.01, 5, 1))       # 5 samples of 10 ms: 50 ms
    b.connect(src.get_output_port(), delay.get_input_port())
    b.connect(delay.get_output_port(), plant.get_input_port("motor"))
    log = LogVectorOutput(plant.get_output_port("state"), b, publish_period=0.01)
    d = b.build()
    sim = Simulator(d, integrator="RK45", accuracy=1e-11)
    sim.advance_to(0.3)
    data = log.find_log(sim.get_context())
    ts, v = data.sample_times(), data.data()[1]
    assert np.all(np.abs(v[ts < 0.05 - 1e-9]) < 1e-12)        # nothing before the delay
    late = ts > 0.06
    np.testing.assert_allclose(v[late], 2.0 / M * (ts[late] - 0.05), atol=1e-9)


def test_a_controller_for_another_tree_does_not_connect():
    from systems import PortSizeError
    from systems.controllers import InverseDynamicsController
    from multibody import models
    from multibody.plants import RigidBodyPlant
    b = DiagramBuilder()
    plant = b.add_system(RigidBodyPlant(models.acrobot(), name="acrobot"))
    ctrl = b.add_system(InverseDynamicsController(models.pendulum(), 1.0, 0.0, 1.0))
    with pytest.raises(PortSizeError, match="estimated_state"):
        b.connect(plant.get_output_port("state"), ctrl.get_input_port("estimated_state"))


@pytest.mark.parametrize("make", [
    lambda t: PdServo(t, "x", bandwidth=5.0, inertia=M, name="act"),
    lambda t: FirstOrderLagActuator(t, "x", time_constant=0.1, effort_limit=10.0, name="act"),
    lambda t: JointFriction(t, "x", viscous=0.3, coulomb=1.0, name="act"),
    lambda t: __import__("actuators").SeriesElasticActuator(t, "x", stiffness=10.0,
                                                            motor_inertia=0.1, name="act"),
])
def test_continuous_actuators_convert_to_casadi(make):
    t = _slider()
    act = make(t)
    plant = RigidBodySystem(t, actuators=[act])
    cs = to_casadi(plant)
    assert cs.nx == 2 + act.num_continuous_states()
    ctx = plant.create_default_context()
    for port in plant.input_ports:
        if not port.optional:
            port.fix_value(ctx, np.full(port.size, 0.3))
    x = np.array(ctx.continuous_state, float) + 0.1
    ctx.set_continuous_state(x)
    u = np.concatenate([np.asarray(p.eval(ctx), float) for p in plant.input_ports
                        if not p.optional]) if cs.nu else np.zeros(0)
    np.testing.assert_allclose(np.ravel(cs.f(0.0, x, [], u, [])),
                               plant.eval_time_derivatives(ctx), atol=1e-12)
