"""Behaviours a Drake user relies on: sizes inferred from the matrices given, an integral-only
PID without direct feedthrough, the LQR cross term and its forms."""
import numpy as np
import pytest
from scipy.linalg import solve_continuous_are

from systems import DiagramBuilder
from systems.analysis import Simulator
from systems.controllers import PidController
from systems.controllers.lqr import LinearQuadraticRegulator
from systems.primitives import AffineSystem, Integrator, LinearSystem


def test_affine_and_linear_systems_infer_zero_sized_parts():
    y = AffineSystem(y0=[1.0, 2.0])
    assert y.num_continuous_states() == 0 and y.num_input_ports() == 0
    np.testing.assert_allclose(y.get_output_port().eval(y.create_default_context()), [1, 2])
    d = AffineSystem(D=[[1.0, 2.0]])
    assert d.get_input_port().size == 2 and d.num_continuous_states() == 0
    b = LinearSystem(B=[[1.0], [2.0]])
    assert b.num_continuous_states() == 2 and b.num_output_ports() == 0   # as Drake: no output
    ctx = b.create_default_context()
    b.get_input_port().fix_value(ctx, [3.0])
    np.testing.assert_allclose(b.eval_time_derivatives(ctx), [3.0, 6.0])


def test_integral_only_pid_closes_a_loop_without_an_algebraic_loop():
    pid = PidController(kp=0.0, ki=2.0, kd=0.0)
    assert pid.feedthrough_pairs() == set()
    b = DiagramBuilder()
    plant = b.add_system(LinearSystem(A=[[-1.0]], B=[[1.0]], C=[[1.0], [0.0]]))
    b.add_system(pid)
    b.connect(plant.get_output_port(), pid.get_input_port("estimated_state"))
    b.connect(pid.get_output_port("control"), plant.get_input_port())
    b.export_input(pid.get_input_port("desired_state"), "reference")
    d = b.build()                                      # no AlgebraicLoopError
    sim = Simulator(d, integrator="RK45", accuracy=1e-10)
    d.get_input_port("reference").fix_value(sim.get_context(), [1.0, 0.0])
    sim.advance_to(20.0)
    assert sim.get_context().continuous_state[0] == pytest.approx(1.0, abs=1e-4)


def test_lqr_honours_the_cross_term_and_refuses_unknown_keywords():
    A = np.array([[0.0, 1.0], [0.0, 0.0]])
    B = np.array([[0.0], [1.0]])
    Q, R, N = np.eye(2), np.eye(1), np.array([[0.1], [0.0]])
    K, S = LinearQuadraticRegulator(A, B, Q, R, N=N)
    S_ref = solve_continuous_are(A, B, Q, R, s=N)
    np.testing.assert_allclose(S, S_ref, atol=1e-10)
    np.testing.assert_allclose(K, np.linalg.solve(R, B.T @ S_ref + N.T), atol=1e-10)
    K2, _ = LinearQuadraticRegulator(A, B, Q, R, N)
    np.testing.assert_allclose(K2, K)
    with pytest.raises(TypeError, match=r"unknown keyword arguments \['Nx'\]"):
        LinearQuadraticRegulator(A, B, Q, R, Nx=N)
    # F is Drake's constraint F x = 0 (num_constraints x n), not another name for N
    with pytest.raises(ValueError, match=r"F has shape \(2, 1\), expected \(num_constraints, 2\)"):
        LinearQuadraticRegulator(A, B, Q, R, F=N)


def test_lqr_of_a_linear_system_needs_no_context():
    plant = LinearSystem(A=[[0.0, 1.0], [0.0, 0.0]], B=[[0.0], [1.0]], C=np.eye(2))
    ctrl = LinearQuadraticRegulator(plant, np.eye(2), np.eye(1))
    K, _ = LinearQuadraticRegulator(plant.A, plant.B, np.eye(2), np.eye(1))
    np.testing.assert_allclose(ctrl.D, -K)
    disc = LinearSystem(A=[[1.0, 0.1], [0.0, 1.0]], B=[[0.005], [0.1]], C=np.eye(2), time_period=0.1)
    dctrl = LinearQuadraticRegulator(disc, np.eye(2), np.eye(1))
    eig = np.linalg.eigvals(disc.A - disc.B @ dctrl.K)
    assert np.max(np.abs(eig)) < 1.0                       # stable discrete closed loop


def test_controllability_is_scale_invariant_and_stabilizability_detectability():
    from systems.analysis import is_controllable, is_detectable, is_observable, is_stabilizable
    A = np.array([[0.0, 1.0], [0.0, 0.0]])
    B = np.array([[0.0], [1.0]])
    C = np.array([[1.0, 0.0]])
    for scale in (1e-6, 1.0, 1e6):              # the same system in other units
        assert is_controllable(scale * A, scale * B)
        assert is_observable(scale * A, C)
    # an uncontrollable but stable mode: not controllable, stabilizable
    A2 = np.diag([-1.0, 2.0])
    B2 = np.array([[0.0], [1.0]])
    assert not is_controllable(A2, B2) and is_stabilizable(A2, B2)
    assert not is_stabilizable(np.diag([1.0, 2.0]), B2)
    C2 = np.array([[0.0, 1.0]])
    assert not is_observable(A2, C2) and is_detectable(A2, C2)
    assert not is_detectable(np.diag([1.0, 2.0]), C2)
    # discrete: |lam| >= 1 is what matters
    d = LinearSystem(A=np.diag([0.5, 1.2]), B=[[0.0], [1.0]], C=[[0.0, 1.0]], time_period=0.1)
    assert is_stabilizable(d) and is_detectable(d) and not is_controllable(d)


def test_linearize_selects_one_input_and_one_output_port():
    from systems.analysis import linearize
    from systems.primitives import Adder, Gain
    b = DiagramBuilder()
    plant = b.add_system(LinearSystem(A=[[-1.0]], B=[[2.0]], C=[[3.0]], D=[[0.5]], name="p"))
    add = b.add_system(Adder(2, 1))
    g = b.add_system(Gain(4.0, 1))
    b.connect(add.get_output_port(), plant.get_input_port())
    b.export_input(add.get_input_port(0), "u_a")
    b.export_input(add.get_input_port(1), "u_b")
    b.export_output(plant.get_output_port(), "y")
    b.connect(plant.get_output_port(), g.get_input_port())
    b.export_output(g.get_output_port(), "y4")
    d = b.build()
    ctx = d.create_default_context()
    d.get_input_port("u_a").fix_value(ctx, [0.0])
    d.get_input_port("u_b").fix_value(ctx, [0.0])
    full = linearize(d, ctx, input_port_index="all", output_port_index="all")
    assert full.B.shape == (1, 2) and full.C.shape == (2, 1)
    lin = linearize(d, ctx, input_port_index="u_b", output_port_index=1)
    np.testing.assert_allclose(lin.A, [[-1.0]])
    np.testing.assert_allclose(lin.B, [[2.0]])
    np.testing.assert_allclose(lin.C, [[12.0]])
    np.testing.assert_allclose(lin.D, [[2.0]])
    with pytest.raises(ValueError, match="linearize: system 'diagram' has no input port named 'v'"):
        linearize(d, ctx, input_port_index="v")
