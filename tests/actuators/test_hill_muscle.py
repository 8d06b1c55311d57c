"""HillMuscle: isometric force at optimal length, activation dynamics, force-velocity, an
elbow lifted against gravity, symbolic conversion."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from actuators import HillMuscle
from actuators.muscle import force_length, force_velocity, passive_force_length
from multibody import Revolute, RigidBodyTree
from multibody.plants import RigidBodySystem
from systems import DiagramBuilder
from systems.analysis import Simulator
from systems.primitives import ConstantVectorSource, LogVectorOutput
from systems.symbolic import to_casadi

F0, L0, LS, R, LMT0 = 500.0, 0.1, 0.2, 0.03, 0.3       # at q = 0 the fiber is at l0


def _forearm():
    t = RigidBodyTree("elbow")
    t.add_body("forearm", 1.5, com=(0.15, 0, 0), inertia=np.diag([0.001, 0.012, 0.012]))
    t.add_joint(Revolute("elbow", "world", "forearm", axis=(0, -1, 0)))   # +q lifts the hand
    return t


def _muscle(t, **kw):
    return HillMuscle(t, "elbow", max_isometric_force=F0, optimal_fiber_length=L0,
                      tendon_slack_length=LS, moment_arm=R, length_at_zero=LMT0,
                      name="biceps", **kw)


def test_curves_at_their_reference_points():
    assert force_length(1.0) == pytest.approx(1.0)
    assert force_velocity(0.0) == pytest.approx(1.0, abs=3e-3)       # De Groote's fit
    assert force_velocity(-1.0) == pytest.approx(0.0, abs=2e-2)      # v_max: no force
    assert force_velocity(0.5) > 1.2                                  # lengthening: stronger
    assert passive_force_length(1.0) == 0.0
    assert passive_force_length(1.6) == pytest.approx(1.0)


def test_isometric_force_and_torque_at_optimal_length():
    t = _forearm()
    m = _muscle(t)
    ctx = m.create_default_context()
    ctx.set_continuous_state([0.4])
    m.get_input_port("state").fix_value(ctx, [0.0, 0.0])
    m.get_input_port("command").fix_value(ctx, [0.4])
    F = m.get_output_port("muscle_force").eval(ctx)[0]
    assert F == pytest.approx(F0 * 0.4 * force_velocity(0.0), rel=1e-12)
    tau = m.get_output_port("generalized_force").eval(ctx)
    assert tau[0] == pytest.approx(R * F, rel=1e-12)
    # shortening lowers and lengthening raises the force (Hill)
    m.get_input_port("state").fix_value(ctx, [0.0, 5.0])              # joint flexing: shortening
    assert m.get_output_port("muscle_force").eval(ctx)[0] < F
    m.get_input_port("state").fix_value(ctx, [0.0, -5.0])
    assert m.get_output_port("muscle_force").eval(ctx)[0] > F


def test_activation_follows_thelen_dynamics():
    t = _forearm()
    m = _muscle(t)
    ctx = m.create_default_context()
    m.get_input_port("state").fix_value(ctx, [0.0, 0.0])
    m.get_input_port("command").fix_value(ctx, [1.0])
    sim = Simulator(m, ctx, integrator="RK45", accuracy=1e-10)
    sim.advance_to(0.05)
    ref = solve_ivp(lambda s, a: (1 - a) / (0.01 * (0.5 + 1.5 * a)), (0, 0.05), [0.0],
                    rtol=1e-11, atol=1e-12)
    assert sim.get_context().continuous_state[0] == pytest.approx(ref.y[0, -1], abs=1e-7)


def test_the_muscle_lifts_the_forearm_and_converts_to_casadi():
    t = _forearm()
    m = _muscle(t)
    plant = RigidBodySystem(t, actuators=[m])
    b = DiagramBuilder()
    b.add_system(plant)
    u = b.add_system(ConstantVectorSource([1.0]))
    b.connect(u.get_output_port(), plant.get_input_port("biceps"))
    log = LogVectorOutput(plant.get_output_port("state"), b, publish_period=0.01)
    d = b.build()
    sim = Simulator(d, integrator="RK45", accuracy=1e-8)
    sim.advance_to(0.3)
    q = log.find_log(sim.get_context()).data()[0]
    assert q[-1] > 0.2                                  # full excitation flexes the elbow
    cs = to_casadi(d)
    assert cs.nx == 3


def test_bad_parameters_are_named():
    t = _forearm()
    with pytest.raises(ValueError, match="max_isometric_force must be > 0"):
        HillMuscle(t, "elbow", max_isometric_force=-1, optimal_fiber_length=L0,
                   tendon_slack_length=LS, moment_arm=R, length_at_zero=LMT0)
