"""DcMotor: step response against the closed-form second-order solution, reflected inertia
in the mass matrix, exact linearization through the motor, named errors."""
import casadi as ca
import numpy as np
import pytest

from actuators import DcMotor
from multibody import Revolute, RigidBodyTree, models
from multibody.parsing import parse_urdf
from multibody.plants import RigidBodyPlant
from systems import DiagramBuilder
from systems.analysis import Simulator
from systems.primitives import ConstantVectorSource, LogVectorOutput
from systems.symbolic import to_casadi

R, L, K, N, JR, I_LOAD, V = 1.0, 0.01, 0.05, 10.0, 1e-5, 0.01, 6.0


def _rotor_on_a_disk():
    t = RigidBodyTree("disk")
    t.add_body("disk", 1.0, inertia=np.diag([0.01, 0.01, I_LOAD]))
    t.add_joint(Revolute("spin", "world", "disk", axis=(0, 0, 1)))   # no gravity torque
    return t


def _driven(voltage=V):
    t = _rotor_on_a_disk()
    motor = DcMotor(t, "spin", resistance=R, inductance=L, torque_constant=K, gear_ratio=N,
                    rotor_inertia=JR, name="motor")
    b = DiagramBuilder()
    plant = b.add_system(RigidBodyPlant(t, name="disk"))
    m = b.add_system(motor)
    src = b.add_system(ConstantVectorSource([voltage]))
    b.connect(src.get_output_port(), m.get_input_port("command"))
    b.connect(plant.get_output_port("state"), m.get_input_port("state"))
    b.connect(m.get_output_port("generalized_force"), plant.get_input_port("generalized_force"))
    log = LogVectorOutput(plant.get_output_port("state"), b)
    return b.build(), plant, m, log


def test_step_response_equals_the_closed_form_second_order_solution():
    d, plant, motor, log = _driven()
    sim = Simulator(d, integrator="RK45", accuracy=1e-11)
    sim.advance_to(0.3)
    data = log.find_log(sim.get_context())
    t, w = data.sample_times(), data.data()[1]
    J = I_LOAD + N * N * JR
    # L J w'' + R J w' + k^2 N^2 w = k N V: overdamped, roots s1, s2
    s1, s2 = np.roots([L * J, R * J, K * K * N * N])
    assert np.isreal(s1) and np.isreal(s2)
    w_ss = V / (K * N)
    ref = w_ss * (1 + (s2 * np.exp(s1 * t) - s1 * np.exp(s2 * t)) / (s1 - s2))
    np.testing.assert_allclose(w, ref, atol=1e-7 * w_ss)
    i_final = np.asarray(motor.get_output_port("current").eval(
        motor.get_my_context_from_root(sim.get_context())), float)
    np.testing.assert_allclose(i_final, 0.0, atol=1e-3)          # no load torque at steady state


def test_reflected_inertia_adds_n_squared_rotor_inertia_to_the_mass_matrix_diagonal():
    tree = parse_urdf(models.model_path("arm7"))
    q = tree.random_configuration(np.random.default_rng(0))
    H0 = tree.mass_matrix(q)
    names = [j.name for j in tree.joints if j.nv]
    gears = np.array([100, 100, 80, 80, 50, 50, 30], float)
    DcMotor(tree, names, resistance=0.5, inductance=1e-3, torque_constant=0.1,
            gear_ratio=gears, rotor_inertia=2e-5)
    H1 = tree.mass_matrix(q)
    np.testing.assert_allclose(H1 - H0, np.diag(gears ** 2 * 2e-5), atol=1e-12)


def test_linearization_through_the_motor_matches_finite_differences():
    d, plant, motor, log = _driven()
    cs = to_casadi(d)
    x, u = ca.SX.sym("x", cs.nx), cs.symbols["u"]
    f = ca.Function("f", [x], [cs.f(0, x, [], [], [])])
    A = np.asarray(ca.Function("A", [x], [ca.jacobian(cs.f(0, x, [], [], []), x)])(
        [0.2, 3.0, 1.5]))
    x0 = np.array([0.2, 3.0, 1.5])
    eps = 1e-6
    fd = np.column_stack([(np.ravel(f(x0 + eps * e)) - np.ravel(f(x0 - eps * e))) / (2 * eps)
                          for e in np.eye(3)])
    np.testing.assert_allclose(A, fd, atol=1e-6)
    J = I_LOAD + N * N * JR
    np.testing.assert_allclose(A[1, 2], N * K / J, rtol=1e-9)     # d(wdot)/di
    np.testing.assert_allclose(A[2, 1], -K * N / L, rtol=1e-9)    # d(di/dt)/dw
    del u


def test_bad_parameters_are_named():
    t = _rotor_on_a_disk()
    kw = dict(resistance=1.0, inductance=0.01, torque_constant=0.05)
    with pytest.raises(ValueError, match="gear_ratio must be > 0"):
        DcMotor(t, "spin", gear_ratio=0.0, **kw)
    with pytest.raises(ValueError, match="no joint named 'elbow'"):
        DcMotor(t, "elbow", **kw)
    with pytest.raises(ValueError, match="efficiency must be in"):
        DcMotor(t, "spin", efficiency=1.5, **kw)
    with pytest.raises(ValueError, match="resistance has 2 entries but the joints give 1"):
        DcMotor(t, "spin", **dict(kw, resistance=[1.0, 2.0]))
