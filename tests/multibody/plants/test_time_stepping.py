"""TimeSteppingRigidBodySystem as a System: bad input (issue 6, "must show 3"), ports and
blocks (actuators, sensors), the Simulator and diagrams, the symbolic refusal, the ERP/CFM
softening as the implicit spring-damper it stands for, joint Coulomb friction and the
reporting of a failed LCP solve."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from _time_stepping_models import free_boxes, free_spheres, pendulum
from actuators import GeneralizedForceActuator
from multibody import Prismatic, RigidBodyTree, Translational
from multibody.constraints import (BallConstraint, DistanceConstraint, JointFrictionConstraint,
                                   PointContactConstraint, WeldConstraint,
                                   softening_from_spring)
from multibody.constraints import ContactResults
from multibody.plants import TimeSteppingRigidBodySystem, TimeSteppingWarning
from sensors import FullStateSensor, JointStateSensor, Sensor
from systems import DiagramBuilder, SymbolicEvaluationError
from systems.analysis.simulator import Simulator
from systems.primitives import ConstantVectorSource
from systems.symbolic import to_casadi

G = 9.81


def _slider(mass=2.0, gravity=(0, 0, -G), friction=0.0):
    t = RigidBodyTree("slider", gravity=gravity)
    t.add_body("cart", mass, inertia=np.eye(3) * 0.01)
    t.add_joint(Prismatic("rail", "world", "cart", axis=(1, 0, 0), friction=friction))
    return t


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("h", [0.0, -1e-3, float("nan"), float("inf")])
def test_time_step_must_be_positive(h):
    tree = _slider()
    with pytest.raises(ValueError, match=r"'slider_time_stepping'.*time_step must be finite and > 0"):
        TimeSteppingRigidBodySystem(tree, h)


def test_contact_between_geometries_on_the_same_body_is_refused():
    tree = free_boxes(1)
    from multibody.geometry import Sphere
    tree.add_collision_geometry("box0", Sphere(0.05), name="knob")
    with pytest.raises(ValueError, match=r"'box0_geom' and 'knob' are both on body 'box0'"):
        PointContactConstraint(tree, pairs=[("box0_geom", "knob")], name="contact")
    with pytest.raises(ValueError, match=r"unknown collision geometry 'nope'"):
        PointContactConstraint(tree, pairs=[("box0_geom", "nope")])


@pytest.mark.parametrize("cls", [BallConstraint, WeldConstraint])
def test_constraint_naming_an_unknown_frame_is_refused(cls):
    tree = pendulum("free")
    with pytest.raises(ValueError, match=r"constraint 'loop': frame_b 'tip' is not a body or frame "
                                         r"of tree 'pendulum_free'"):
        cls(tree, "world", "tip", name="loop")
    with pytest.raises(ValueError, match=r"frame_a 'ghost'"):
        DistanceConstraint(tree, "ghost", "link", 1.0)


def test_actuator_that_does_not_fit_is_refused():
    tree = _slider()
    other = pendulum("free")                        # nv = 6, not 1
    act = GeneralizedForceActuator(other, ["float"], name="motor")
    with pytest.raises(ValueError, match=r"actuator 'motor' was built on tree 'pendulum_free', not "
                                         r"on this system's tree 'slider'"):
        TimeSteppingRigidBodySystem(tree, 1e-3, actuators=[act])
    # an actuator whose size does not match its joints fails when built
    with pytest.raises(ValueError, match=r"gear_ratio has size 2 but the joints give 1 commands"):
        GeneralizedForceActuator(tree, ["rail"], gear_ratio=[1.0, 2.0])

    class WrongSize(GeneralizedForceActuator):     # a (buggy) actuator with a wrong output size
        def __init__(self, tree):
            super().__init__(tree, ["rail"], name="bad")
            self.output_ports[0].size = 3
    with pytest.raises(ValueError, match=r"actuator 'bad' output 'generalized_force' has size 3 "
                                         r"but tree 'slider' has nv = 1"):
        TimeSteppingRigidBodySystem(tree, 1e-3, actuators=[WrongSize(tree)])


def test_duplicate_block_names_are_refused():
    tree = _slider()
    s1, s2 = FullStateSensor(tree, name="x"), FullStateSensor(tree, name="x")
    with pytest.raises(ValueError, match="duplicate block or port name 'x'"):
        TimeSteppingRigidBodySystem(tree, 1e-3, sensors=[s1, s2])


def test_not_symbolic_names_the_system():
    tree = _slider()
    sys = TimeSteppingRigidBodySystem(tree, 1e-3, name="plant")
    with pytest.raises(SymbolicEvaluationError, match=r"system 'plant'.*LCP with pivoting"):
        to_casadi(sys)


# ----------------------------------------------------------------------------- blocks, ports
def test_actuator_sensor_ports_and_exact_step():
    tree = _slider(mass=2.0)
    act = GeneralizedForceActuator(tree, ["rail"], gear_ratio=2.0, name="motor")
    full, js = FullStateSensor(tree, name="x"), JointStateSensor(tree, ["rail"], name="enc")
    h = 1e-2
    sys = TimeSteppingRigidBodySystem(tree, h, actuators=[act], sensors=[full, js])
    assert [p.name for p in sys.input_ports] == ["motor", "applied_generalized_force",
                                                "applied_spatial_force"]
    assert [p.optional for p in sys.input_ports] == [False, True, True]
    assert {"state", "contact_results", "step", "x", "enc"} <= {p.name for p in sys.output_ports}
    assert not sys.has_direct_feedthrough("motor", "x")
    ctx = sys.create_default_context()
    sys.get_input_port("motor").fix_value(ctx, [1.5])      # 3 N on 2 kg
    sys.advance(ctx, 10)
    # semi-implicit Euler: v_k = a k h, x_k = a h^2 k (k + 1) / 2
    a = 3.0 / 2.0
    np.testing.assert_allclose(sys.get_output_port("x").eval(ctx), [a * h * h * 55, a * h * 10],
                               rtol=1e-12)
    np.testing.assert_allclose(sys.get_output_port("enc").eval(ctx),
                               sys.get_output_port("state").eval(ctx), rtol=1e-15)
    step = sys.get_output_port("step").eval(ctx)
    np.testing.assert_allclose(step.tau_actuators, [3.0])
    np.testing.assert_allclose(step.generalized_acceleration, [a], rtol=1e-12)
    assert ctx.time == pytest.approx(0.1)


def test_simulator_and_diagram_agree_with_advance():
    tree = free_spheres(2)
    contact = PointContactConstraint(tree, mu=0.4, name="contact")
    sys = TimeSteppingRigidBodySystem(tree, 2e-3, constraints=[contact], name="plant")
    ctx = sys.create_default_context()
    q = tree.neutral_configuration()
    q[6], q[7 + 4], q[7 + 6] = 0.15, 0.05, 0.45    # second ball drops on the first, offset
    sys.set_positions(ctx, q)
    ref = ctx.clone()
    sys.advance(ref, 250)    # the Simulator updates at t = 0, ..., 0.5 - h (Drake's order:
    #                          the update due at exactly 0.5 is left pending)
    b = DiagramBuilder()
    plant = b.add_system(TimeSteppingRigidBodySystem(tree, 2e-3, constraints=[contact],
                                                     name="plant2"))
    b.export_output(plant.get_output_port("state"), "state")
    diagram = b.build()
    dctx = diagram.create_default_context()
    plant.set_positions(dctx, q)
    sim = Simulator(diagram, dctx)
    sim.advance_to(0.5)
    np.testing.assert_allclose(diagram.get_output_port("state").eval(dctx),
                               sys.get_output_port("state").eval(ref), atol=1e-9)
    # the balls collided: the top one was pushed sideways
    assert abs(sys.get_positions(ref)[7 + 4] - 0.05) > 1e-3


class _ContactCounter(Sensor):
    def __init__(self, tree):
        super().__init__(tree, needs_contact_results=True, name="touch")
        self.declare_output_port("count", 1, lambda c: [len(self.contact_port.eval(c))],
                                 feedthrough=True)


def test_sensor_reading_contact_results():
    tree = free_boxes(1)
    sys = TimeSteppingRigidBodySystem(tree, 1e-3, sensors=[_ContactCounter(tree)],
                                      constraints=[PointContactConstraint(tree, name="contact")])
    ctx = sys.create_default_context()
    q = tree.neutral_configuration()
    q[6] = 0.1
    sys.set_positions(ctx, q)
    sys.advance(ctx, 5)
    assert sys.get_output_port("touch").eval(ctx)[0] == 4
    res = sys.get_output_port("contact_results").eval(ctx)
    assert isinstance(res, ContactResults) and res.time == pytest.approx(0.005)


def test_block_parameters_are_system_parameters():
    tree = _slider(gravity=(G * np.sin(0.3), 0, -G * np.cos(0.3)))
    tree.add_collision_geometry("world", __import__("multibody.geometry", fromlist=["x"]).Halfspace())
    sys = TimeSteppingRigidBodySystem(tree, 1e-3, constraints=[JointFrictionConstraint(
        tree, ["rail"], friction=100.0, name="jf")])
    ctx = sys.create_default_context()
    assert ctx.get_parameter("jf.friction")[0] == 100.0
    sys.advance(ctx, 10)
    assert abs(sys.get_velocities(ctx)[0]) < 1e-12            # 100 N of friction holds it
    ctx.set_parameter("jf.friction", [1.0])
    sys.advance(ctx, 100)
    m = 2.0
    a = (m * G * np.sin(0.3) - 1.0) / m
    assert sys.get_velocities(ctx)[0] == pytest.approx(a * 0.1, rel=1e-9)


# ----------------------------------------------------------------------------- softening
def test_soft_row_is_the_implicit_spring_damper():
    m, kp, kd, h = 0.5, 400.0, 3.0, 1e-3
    tree = RigidBodyTree("mass", gravity=(0, 0, -G))
    tree.add_body("m", m, inertia=np.eye(3) * 1e-3)
    tree.add_joint(Translational("xyz", "world", "m"))
    spring = BallConstraint(tree, "world", "m", kp=kp, kd=kd, name="spring")
    sys = TimeSteppingRigidBodySystem(tree, h, constraints=[spring])
    ctx = sys.create_default_context()
    x, v = np.array([0.05, -0.02, 0.1]), np.array([0.3, 0.0, -0.1])
    sys.set_positions(ctx, x)
    sys.set_velocities(ctx, v)
    g = np.array([0, 0, -G])
    for _ in range(300):
        sys.advance(ctx, 1)
        # m (v+ - v) / h = -kp (x + h v+) - kd v+ + m g   (implicit Euler spring-damper)
        v = (m * v / h - kp * x + m * g) / (m / h + kp * h + kd)
        x = x + h * v
        np.testing.assert_allclose(sys.get_positions(ctx), x, atol=1e-12)
    # the same through (erp, cfm) from ODE's mapping
    erp, cfm = softening_from_spring(kp, kd, h)
    sys2 = TimeSteppingRigidBodySystem(tree, h, constraints=[BallConstraint(
        tree, "world", "m", erp=erp, cfm=cfm, name="spring")])
    c2 = sys2.create_default_context()
    sys2.set_positions(c2, [0.05, -0.02, 0.1])
    sys2.set_velocities(c2, [0.3, 0.0, -0.1])
    sys2.advance(c2, 300)
    np.testing.assert_allclose(sys2.get_positions(c2), x, atol=1e-12)
    # and it oscillates at the spring's frequency (static deflection m g / kp)
    assert sys.get_positions(ctx)[2] < 0.1


def test_failed_solve_is_reported_with_fallback(monkeypatch):
    import multibody.plants._time_stepping_solve as tss
    from solvers.lcp import LCPResult, LCPSolveError

    def broken(M, q, *a, **k):
        n = len(q)
        return LCPResult(np.zeros(n), np.asarray(q), "max_iterations", 1.0, 0, "lemke", "forced")
    monkeypatch.setattr(tss, "solve_lcp", broken)
    tree = free_spheres(1)
    sys = TimeSteppingRigidBodySystem(tree, 1e-3, constraints=[PointContactConstraint(tree)],
                                      contact_solver="lcp", name="plant")
    ctx = sys.create_default_context()
    q = tree.neutral_configuration()
    q[6] = 0.1
    sys.set_positions(ctx, q)
    with pytest.warns(TimeSteppingWarning, match=r"system 'plant' at t=0: Lemke.*residual"):
        sys.advance(ctx, 1)
    with pytest.warns(TimeSteppingWarning, match=r"system 'plant' at t=0.001"):
        assert sys.get_output_port("step").eval(ctx).report.status == "fallback"
    assert sys.get_positions(ctx)[6] == pytest.approx(0.1, abs=1e-6)     # still holds it
    strict = TimeSteppingRigidBodySystem(tree, 1e-3, constraints=[PointContactConstraint(tree)],
                                         lcp_failure="raise", contact_solver="lcp",
                                         name="strict")
    c2 = strict.create_default_context()
    strict.set_positions(c2, q)
    with pytest.raises(Exception, match=r"system 'strict' at t=0.*max_iterations"):
        strict.advance(c2, 1)


class _VelocityFilter(Sensor):
    """A sensor with internal state: y_{k+1} = y_k + alpha (v_k - y_k), updated every step."""

    def __init__(self, tree, period, alpha=0.5):
        super().__init__(tree, name="filt")
        self.declare_discrete_state(tree.nv)
        self.declare_periodic_discrete_update(
            period, 0.0, lambda c: c.discrete_state + alpha * (
                self.state_port.eval(c)[tree.nq:] - c.discrete_state))
        self.declare_output_port("y", tree.nv, lambda c: c.discrete_state, feedthrough=False)


def test_block_internal_state_is_part_of_the_system_state():
    tree = _slider(mass=1.0)
    act = GeneralizedForceActuator(tree, ["rail"], name="motor")
    h = 0.01
    sys = TimeSteppingRigidBodySystem(tree, h, actuators=[act], sensors=[_VelocityFilter(tree, h)])
    assert sys.num_discrete_states() == tree.nq + tree.nv + 1
    ctx = sys.create_default_context()
    sys.get_input_port("motor").fix_value(ctx, [1.0])
    y, vs = 0.0, []
    for k in range(5):
        vs.append(sys.get_velocities(ctx)[0])
        sys.advance(ctx, 1)
        y = y + 0.5 * (vs[-1] - y)                 # filter of the velocity at the step start
        assert sys.get_output_port("filt").eval(ctx)[0] == pytest.approx(y, abs=1e-15)
    with pytest.raises(ValueError, match=r"sensor 'filt' has a PeriodicEvent \(discrete\); only "
                                         r"periodic discrete updates with period time_step"):
        TimeSteppingRigidBodySystem(tree, h, sensors=[_VelocityFilter(tree, 2 * h)])


def test_spinning_free_body_keeps_its_world_velocity():
    # free-body velocities are body-frame; the step is taken world-aligned (no spurious
    # rotating-frame acceleration): a tumbling box in zero gravity moves on a straight line
    from _time_stepping_models import free_boxes as boxes
    tree = boxes(1, size=(0.1, 0.3, 0.5), gravity=(0, 0, 0), ground=False)
    sys = TimeSteppingRigidBodySystem(tree, 1e-3)
    ctx = sys.create_default_context()
    w_body, v_world = np.array([1.0, 2.0, 3.0]), np.array([1.0, -0.5, 0.2])
    sys.set_velocities(ctx, np.concatenate([w_body, v_world]))    # R = I at t = 0
    sys.advance(ctx, 1000)
    q, v = sys.get_positions(ctx), sys.get_velocities(ctx)
    R = tree.body_pose("box0", q)[:3, :3]
    np.testing.assert_allclose(R @ v[3:], v_world, atol=1e-12)
    np.testing.assert_allclose(q[4:], v_world * 1.0, atol=1e-12)
    assert np.linalg.norm(q[:4]) == pytest.approx(1.0, abs=1e-12)


def test_soft_joint_limit_deflects_as_its_spring():
    # a constant 2 N m torque presses a link into a limit softened by (kp, kd): at rest the
    # limit is passed by tau / kp
    from multibody import Revolute
    from multibody.constraints import JointLimitConstraint
    tree = RigidBodyTree("arm", gravity=(0, 0, 0))
    tree.add_body("link", 1.0, com=(0.3, 0, 0), inertia=np.eye(3) * 0.01)
    tree.add_joint(Revolute("shoulder", "world", "link", axis=(0, 0, 1), upper=0.5))
    act = GeneralizedForceActuator(tree, ["shoulder"], name="motor")
    lim = JointLimitConstraint(tree, kp=200.0, kd=5.0, name="limit")
    sys = TimeSteppingRigidBodySystem(tree, 1e-3, actuators=[act], constraints=[lim])
    ctx = sys.create_default_context()
    sys.set_positions(ctx, [0.45])
    sys.get_input_port("motor").fix_value(ctx, [2.0])
    sys.advance(ctx, 3000)
    assert sys.get_positions(ctx)[0] == pytest.approx(0.5 + 2.0 / 200.0, rel=1e-6)


def test_state_feedback_in_a_diagram_has_no_algebraic_loop():
    # u = -K [x; v] wired from the system's 'state' back into its actuator input: the
    # state output does not depend on the command (no feedthrough), so the loop is legal;
    # the discrete closed loop matches its own recurrence
    from systems.primitives import MatrixGain
    tree = _slider(mass=1.0)
    act = GeneralizedForceActuator(tree, ["rail"], name="motor")
    h, K = 1e-2, np.array([[40.0, 9.0]])
    b = DiagramBuilder()
    plant = b.add_system(TimeSteppingRigidBodySystem(tree, h, actuators=[act], name="plant"))
    gain = b.add_system(MatrixGain(-K, name="K"))
    b.connect(plant.get_output_port("state"), gain.get_input_port("u"))
    b.connect(gain.get_output_port("y"), plant.get_input_port("motor"))
    diagram = b.build()
    ctx = diagram.create_default_context()
    plant.set_positions(ctx, [0.2])
    Simulator(diagram, ctx).advance_to(1.0)
    x, v = 0.2, 0.0
    for _ in range(100):                      # updates at t = 0, h, ..., 1.0 - h (Drake's
        #                                       order: the one due at 1.0 stays pending)
        v = v + h * float(-K[0] @ [x, v])
        x = x + h * v
    np.testing.assert_allclose(plant.get_positions(ctx), [x], rtol=1e-12)
    assert abs(x) < 0.05


def test_failed_boxed_solve_falls_back_to_pgs(monkeypatch):
    import multibody.plants._time_stepping_solve as tss
    from solvers.lcp import LCPResult
    real = tss.solve_boxed_lcp

    def dantzig_broken(A, b, lo, hi, fi=None, *, method="dantzig", **kw):
        if method == "dantzig":
            return LCPResult(np.zeros(len(b)), np.asarray(b), "singular", 1.0, 0, "dantzig",
                             "forced")
        return real(A, b, lo, hi, fi, method=method, **kw)
    monkeypatch.setattr(tss, "solve_boxed_lcp", dantzig_broken)
    tree = free_boxes(1)
    sys = TimeSteppingRigidBodySystem(tree, 1e-3, constraints=[PointContactConstraint(
        tree, friction="box", cfm=1e-6)], contact_solver="lcp", name="plant")
    ctx = sys.create_default_context()
    q = tree.neutral_configuration()
    q[6] = 0.1
    sys.set_positions(ctx, q)
    with pytest.warns(TimeSteppingWarning, match=r"system 'plant' at t=0: the Dantzig boxed-LCP "
                                                 r"solve failed \(status 'singular'"):
        sys.advance(ctx, 1)
    with pytest.warns(TimeSteppingWarning):
        step = sys.get_output_port("step").eval(ctx)
    assert step.report.status == "fallback" and step.report.method == "pgs"
    assert step.contact_results.normal_forces().sum() == pytest.approx(G, rel=1e-4)
