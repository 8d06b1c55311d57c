"""InverseDynamicsController and InverseDynamics on the arm model: exact tracking, gravity
compensation holding any pose, symbolic conversion, named errors."""
import numpy as np
import pytest

from multibody import Free, RigidBodyTree, models
from multibody.parsing import parse_urdf
from multibody.plants import RigidBodyPlant
from systems import DiagramBuilder
from systems.analysis import Simulator
from systems.controllers import ControllerError, InverseDynamics, InverseDynamicsController
from systems.primitives import LogVectorOutput, TrajectorySource
from systems.symbolic import to_casadi
from systems.trajectories import PiecewisePolynomial


def _arm():
    return parse_urdf(models.model_path("arm7"))


def _reference(n, T=2.0):
    ts = np.linspace(0.0, T, 41)
    w = np.linspace(1.0, 2.0, n)[:, None]
    q = 0.3 * np.sin(w * ts) + 0.1
    qd = 0.3 * w * np.cos(w * ts)
    qdd = -0.3 * w * w * np.sin(w * ts)
    return ts, q, qd, qdd


def test_controller_on_the_exact_model_tracks_to_1e_6_rad():
    tree = _arm()
    n = tree.nv
    ts, q, qd, qdd = _reference(n)
    # desired state and acceleration as quintic-accurate splines of the analytic signals
    xd = PiecewisePolynomial.cubic_hermite(ts, np.vstack([q, qd]), np.vstack([qd, qdd]))
    ad = PiecewisePolynomial.cubic_hermite(ts, qdd, -np.vstack([
        0.3 * w ** 3 * np.cos(w * ts) for w in np.linspace(1.0, 2.0, n)]))
    b = DiagramBuilder()
    plant = b.add_system(RigidBodyPlant(tree, name="arm"))
    ctrl = b.add_system(InverseDynamicsController(tree, kp=100.0, ki=1.0, kd=20.0,
                                                  has_reference_acceleration=True))
    src_x = b.add_system(TrajectorySource(xd, name="xd"))
    src_a = b.add_system(TrajectorySource(ad, name="ad"))
    b.connect(plant.get_output_port("state"), ctrl.get_input_port("estimated_state"))
    b.connect(src_x.get_output_port("y"), ctrl.get_input_port("desired_state"))
    b.connect(src_a.get_output_port("y"), ctrl.get_input_port("desired_acceleration"))
    b.connect(ctrl.get_output_port("generalized_force"), plant.get_input_port("generalized_force"))
    log = LogVectorOutput(plant.get_output_port("state"), b)
    d = b.build()
    sim = Simulator(d, integrator="RK45", accuracy=1e-10)
    plant.set_positions(sim.get_context(), q[:, 0])
    plant.set_velocities(sim.get_context(), qd[:, 0])
    sim.advance_to(2.0)
    data = log.find_log(sim.get_context())
    ref = xd.vector_values(data.sample_times())[:n]
    assert np.max(np.abs(data.data()[:n] - ref)) < 1e-6


def test_controller_converts_to_casadi_and_closes_a_stable_loop():
    tree = _arm()
    b = DiagramBuilder()
    plant = b.add_system(RigidBodyPlant(tree, name="arm"))
    ctrl = b.add_system(InverseDynamicsController(tree, kp=25.0, ki=0.0, kd=10.0))
    b.connect(plant.get_output_port("state"), ctrl.get_input_port("estimated_state"))
    b.connect(ctrl.get_output_port("generalized_force"), plant.get_input_port("generalized_force"))
    b.export_input(ctrl.get_input_port("desired_state"), "desired_state")
    d = b.build()
    cs = to_casadi(d)
    import casadi as ca
    x = np.concatenate([np.full(7, 0.2), np.zeros(7), np.zeros(7)])
    u = np.concatenate([np.full(7, 0.2), np.zeros(7)])
    A = np.asarray(ca.Function("A", [cs.symbols["x"]], [ca.jacobian(
        cs.f(0, cs.symbols["x"], [], u, []), cs.symbols["x"])])(x))
    eig = np.linalg.eigvals(A[:14, :14])
    # exact cancellation: every joint is e'' + 10 e' + 25 e = 0 (double pole at -5)
    np.testing.assert_allclose(np.sort(eig.real), -5.0, atol=1e-4)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gravity_compensation_holds_any_pose_still(seed):
    tree = _arm()
    q0 = tree.random_configuration(np.random.default_rng(seed))
    b = DiagramBuilder()
    plant = b.add_system(RigidBodyPlant(tree, name="arm"))
    gc = b.add_system(InverseDynamics(tree, mode="gravity_compensation"))
    b.connect(plant.get_output_port("state"), gc.get_input_port("estimated_state"))
    b.connect(gc.get_output_port("generalized_force"), plant.get_input_port("generalized_force"))
    d = b.build()
    sim = Simulator(d, integrator="RK45", accuracy=1e-10)
    plant.set_positions(sim.get_context(), q0)
    sim.advance_to(1.0)
    np.testing.assert_allclose(plant.get_positions(sim.get_context()), q0, atol=1e-8)


def test_inverse_dynamics_mode_equals_rnea_minus_passive_forces():
    tree = _arm()
    blk = InverseDynamics(tree)
    ctx = blk.create_default_context()
    rng = np.random.default_rng(4)
    q, v, a = rng.normal(size=7), rng.normal(size=7), rng.normal(size=7)
    blk.get_input_port("estimated_state").fix_value(ctx, np.concatenate([q, v]))
    blk.get_input_port("desired_acceleration").fix_value(ctx, a)
    tau = blk.get_output_port("generalized_force").eval(ctx)
    # the plant integrates H vdot + C = tau + passive: the block's tau reproduces vdot = a
    np.testing.assert_allclose(tree.forward_dynamics(q, v, tau + tree.joint_passive_forces(q, v)),
                               a, atol=1e-9)


def test_bad_arguments_are_named():
    tree = _arm()
    with pytest.raises(ControllerError, match="kp has 3 entries, expected 1 or nv = 7"):
        InverseDynamicsController(tree, kp=[1, 2, 3], ki=0, kd=1)
    with pytest.raises(ControllerError, match="kd must be finite and >= 0"):
        InverseDynamicsController(tree, kp=1, ki=0, kd=-1)
    with pytest.raises(ControllerError, match="mode must be one of"):
        InverseDynamics(tree, mode="torque")
    t = RigidBodyTree("floating")
    t.add_body("b", 1.0, inertia=np.eye(3))
    t.add_joint(Free("f", "world", "b"))
    with pytest.raises(ControllerError, match="nq = 7 != nv = 6"):
        InverseDynamics(t, mode="gravity_compensation")
