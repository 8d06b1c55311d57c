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


def _two_input_two_output_diagram(u=(1.0, -1.0), drake: bool = False):
    """u_a, u_b -> Adder -> p (xdot = -x + 2 u, y = 3 x + 0.5 u) -> y, and y4 = 4 y, with
    u_a, u_b fixed to ``u``: ours, or with ``drake`` the same diagram in pydrake."""
    if drake:
        pf = pytest.importorskip("pydrake.systems.framework")
        pp = pytest.importorskip("pydrake.systems.primitives")
        b = pf.DiagramBuilder()
        add_system, connect, build = b.AddSystem, b.Connect, b.Build
        export_input, export_output = b.ExportInput, b.ExportOutput
        Linear, Adder, Gain, named = pp.LinearSystem, pp.Adder, pp.Gain, {}
    else:
        from systems.primitives import Adder, Gain
        b = DiagramBuilder()
        add_system, connect, build = b.add_system, b.connect, b.build
        export_input, export_output = b.export_input, b.export_output
        Linear, named = LinearSystem, {"name": "p"}
    plant = add_system(Linear(A=[[-1.0]], B=[[2.0]], C=[[3.0]], D=[[0.5]], **named))
    add = add_system(Adder(2, 1))
    g = add_system(Gain(4.0, 1))
    connect(add.get_output_port(), plant.get_input_port())
    export_input(add.get_input_port(0), "u_a")
    export_input(add.get_input_port(1), "u_b")
    export_output(plant.get_output_port(), "y")
    connect(plant.get_output_port(), g.get_input_port())
    export_output(g.get_output_port(), "y4")
    d = build()
    if drake:
        ctx = d.CreateDefaultContext()
        d.get_input_port(0).FixValue(ctx, [u[0]])
        d.get_input_port(1).FixValue(ctx, [u[1]])
    else:
        ctx = d.create_default_context()
        d.get_input_port("u_a").fix_value(ctx, [u[0]])
        d.get_input_port("u_b").fix_value(ctx, [u[1]])
    return d, ctx


def test_linearize_selects_one_input_and_one_output_port():
    from systems.analysis import linearize
    d, ctx = _two_input_two_output_diagram(u=(0.0, 0.0))
    full = linearize(d, ctx, input_port_index="all", output_port_index="all")
    assert full.B.shape == (1, 2) and full.C.shape == (2, 1)
    lin = linearize(d, ctx, input_port_index="u_b", output_port_index=1)
    np.testing.assert_allclose(lin.A, [[-1.0]])
    np.testing.assert_allclose(lin.B, [[2.0]])
    np.testing.assert_allclose(lin.C, [[12.0]])
    np.testing.assert_allclose(lin.D, [[2.0]])
    with pytest.raises(ValueError, match="linearize: system 'diagram' has no input port named 'v'"):
        linearize(d, ctx, input_port_index="v")


# --------------------------------------------------------------------------- issue 20 parity
# Each item has a test with the expected values written out (runs without pydrake) and,
# where pydrake is installed, a test that compares with it directly.

def test_linearize_defaults_to_the_first_input_and_output_port_as_drake():
    from systems.analysis.linearize import PortSelection, first_order_taylor_approximation, linearize
    d, ctx = _two_input_two_output_diagram()
    lin = linearize(d, ctx)                        # u = u_a only, y = y only
    np.testing.assert_allclose(lin.A, [[-1.0]])
    np.testing.assert_allclose(lin.B, [[2.0]])
    np.testing.assert_allclose(lin.C, [[3.0]])
    np.testing.assert_allclose(lin.D, [[0.5]])
    np.testing.assert_allclose(lin.u0, [1.0])
    assert lin.num_input_ports() == 1 and lin.num_output_ports() == 1
    every = linearize(d, ctx, input_port_index=PortSelection.ALL, output_port_index="all")
    np.testing.assert_allclose(every.B, [[2.0, 2.0]])
    np.testing.assert_allclose(every.C, [[3.0], [12.0]])
    np.testing.assert_allclose(every.D, [[0.5, 0.5], [2.0, 2.0]])
    bare = linearize(d, ctx, input_port_index="none", output_port_index=PortSelection.NONE)
    assert bare.B.shape == (1, 0) and bare.C.shape == (0, 1)
    assert bare.num_input_ports() == 0 and bare.num_output_ports() == 0
    aff = first_order_taylor_approximation(d, ctx)   # same default selection
    np.testing.assert_allclose(aff.B, [[2.0]])
    np.testing.assert_allclose(aff.C, [[3.0]])
    # xdot = -x + 2 u_a + 2 u_b with u_b = -1 held: f0 = 2 u_b = -2; y0 = 0.5 u_b = -0.5
    np.testing.assert_allclose(aff.f0, [-2.0])
    np.testing.assert_allclose(aff.y0, [-0.5])
    with pytest.raises(TypeError, match="input_port_index=None"):
        linearize(d, ctx, input_port_index=None)


def test_linearize_port_selection_equals_drakes():
    from systems.analysis.linearize import first_order_taylor_approximation, linearize
    pf = pytest.importorskip("pydrake.systems.framework")
    pp = pytest.importorskip("pydrake.systems.primitives")
    dd, dctx = _two_input_two_output_diagram(drake=True)
    d, ctx = _two_input_two_output_diagram()
    cases = [({}, {}),
             (dict(input_port_index=1, output_port_index=1),
              dict(input_port_index=pf.InputPortIndex(1), output_port_index=pf.OutputPortIndex(1))),
             (dict(input_port_index="none", output_port_index="none"),
              dict(input_port_index=pf.InputPortSelection.kNoInput,
                   output_port_index=pf.OutputPortSelection.kNoOutput))]
    for ours_kw, drake_kw in cases:
        ours, theirs = linearize(d, ctx, **ours_kw), pp.Linearize(dd, dctx, **drake_kw)
        for name in "ABCD":
            np.testing.assert_allclose(getattr(ours, name), getattr(theirs, name)(), atol=1e-14,
                                       err_msg=f"{name} with {ours_kw}")
        assert ours.num_input_ports() == theirs.num_input_ports()
        assert ours.num_output_ports() == theirs.num_output_ports()
    ours, theirs = first_order_taylor_approximation(d, ctx), pp.FirstOrderTaylorApproximation(dd, dctx)
    for name in ("A", "B", "f0", "C", "D", "y0"):
        np.testing.assert_allclose(getattr(ours, name), getattr(theirs, name)(), atol=1e-14)


# Controllability: A = diag(1, 2) with B = s [1; 1] is controllable for every input scale s
# (the two modes are distinct and B excites both); B = [1; 0] leaves mode 2 uncontrollable.
_CTRB_A = np.diag([1.0, 2.0])
_CTRB_CASES = [(1e-8, True), (1.0, True), (1e8, True)]


@pytest.mark.parametrize("s, expected", _CTRB_CASES)
def test_controllability_does_not_depend_on_the_input_scale(s, expected):
    from systems.analysis import is_controllable, is_observable
    assert is_controllable(_CTRB_A, s * np.array([[1.0], [1.0]]), threshold=1e-6) is expected
    assert is_observable(_CTRB_A, s * np.array([[1.0, 1.0]]), threshold=1e-6) is expected
    sys = LinearSystem(A=_CTRB_A, B=s * np.ones((2, 1)), C=s * np.ones((1, 2)))
    assert is_controllable(sys, threshold=1e-6) and is_observable(sys, threshold=1e-6)
    assert not is_controllable(_CTRB_A, s * np.array([[1.0], [0.0]]), threshold=1e-6)
    assert not is_observable(_CTRB_A, s * np.array([[0.0, 1.0]]), threshold=1e-6)
    # two inputs of very different units: each column is scaled on its own
    assert is_controllable(np.zeros((2, 2)), np.diag([s, 1.0]), threshold=1e-6)
    assert not is_controllable(np.zeros((2, 2)), s * np.ones((2, 2)), threshold=1e-6)


def test_controllability_and_observability_equal_drakes():
    pp = pytest.importorskip("pydrake.systems.primitives")
    from systems.analysis import is_controllable, is_observable
    for s, expected in _CTRB_CASES:
        d = pp.LinearSystem(_CTRB_A, s * np.ones((2, 1)), s * np.ones((1, 2)), np.zeros((1, 1)))
        assert pp.IsControllable(d, 1e-6) is expected and pp.IsObservable(d, 1e-6) is expected
    # Random systems, half of them uncontrollable by construction (a block-triangular pair in
    # random coordinates), input scales 1e-8 .. 1e8. A is scaled to unit norm: Drake ranks
    # [B, AB, ..., A^(n-1) B], whose columns grow as ||A||^k, so only there is its verdict
    # independent of the units of time (ours is at every scale of A).
    rng = np.random.default_rng(20)
    verdicts = set()
    for trial in range(300):
        n, m = int(rng.integers(1, 6)), int(rng.integers(1, 3))
        A, B = rng.normal(size=(n, n)), rng.normal(size=(n, m))
        if trial % 2 and n >= 2:
            k = int(rng.integers(1, n))
            A[k:, :k], B[k:, :] = 0.0, 0.0
            T = rng.normal(size=(n, n))
            A, B = T @ A @ np.linalg.inv(T), T @ B
        A, B = A / np.linalg.norm(A, 2), 10.0 ** int(rng.integers(-8, 9)) * B
        d = pp.LinearSystem(A, B, B.T, np.zeros((m, m)))
        dual = pp.LinearSystem(A.T, B, B.T, np.zeros((m, m)))
        theirs = pp.IsControllable(d, 1e-6)
        assert is_controllable(A, B, threshold=1e-6) is theirs, (trial, n, m)
        assert is_observable(A.T, B.T, threshold=1e-6) is pp.IsObservable(dual, 1e-6), (trial, n, m)
        verdicts.add(theirs)
    assert verdicts == {True, False}


def test_lqr_constraint_f_analytic():
    """A = 0, B = I, Q = R = I on the line x1 = x2 (F = [1, -1]): in y = (x1 + x2)/sqrt(2),
    ydot = p u with |p| = 1 and cost y^2 + |u|^2, so S_y = 1, S = p'p = [[.5, .5], [.5, .5]]
    and K = B'S = S."""
    K, S = LinearQuadraticRegulator(np.zeros((2, 2)), np.eye(2), np.eye(2), np.eye(2),
                                    F=[[1.0, -1.0]])
    np.testing.assert_allclose(S, [[0.5, 0.5], [0.5, 0.5]], atol=1e-12)
    np.testing.assert_allclose(K, [[0.5, 0.5], [0.5, 0.5]], atol=1e-12)
    K0, _ = LinearQuadraticRegulator(np.zeros((2, 2)), np.eye(2), np.eye(2), np.eye(2),
                                     np.zeros((0, 0)), np.zeros((0, 2)))    # empty N, F: absent
    np.testing.assert_allclose(K0, np.eye(2), atol=1e-12)
    with pytest.raises(ValueError, match="F has rank 2 = num_states"):
        LinearQuadraticRegulator(np.zeros((2, 2)), np.eye(2), np.eye(2), np.eye(2), F=np.eye(2))


def _lqr_f_problem():
    rng = np.random.default_rng(7)
    A, B = rng.normal(size=(4, 4)), rng.normal(size=(4, 2))
    Q, R = np.diag([1.0, 2.0, 3.0, 4.0]), np.array([[2.0, 0.3], [0.3, 1.0]])
    N = 0.1 * rng.normal(size=(4, 2))
    return A, B, Q, R, N, rng.normal(size=(2, 4))


def test_lqr_constraint_f_is_the_reduced_riccati_problem():
    A, B, Q, R, N, F = _lqr_f_problem()
    K, S = LinearQuadraticRegulator(A, B, Q, R, N, F)
    # by hand: another orthonormal basis of null(F) (from a complete QR of F'), the reduced
    # CARE in those coordinates, and back; S and K do not depend on the basis chosen
    Qf, _ = np.linalg.qr(F.T, mode="complete")
    P = Qf[:, 2:].T
    np.testing.assert_allclose(P @ F.T, 0.0, atol=1e-12)
    Sy = solve_continuous_are(P @ A @ P.T, P @ B, P @ Q @ P.T, R, s=P @ N)
    np.testing.assert_allclose(S, P.T @ Sy @ P, atol=1e-10)
    np.testing.assert_allclose(K, np.linalg.solve(R, B.T @ S + N.T @ P.T @ P), atol=1e-10)
    np.testing.assert_allclose(S @ F.T, 0.0, atol=1e-10)     # no cost off the subspace
    np.testing.assert_allclose(K @ F.T, 0.0, atol=1e-10)
    # the reduced closed loop is stable
    assert np.all(np.linalg.eigvals(P @ (A - B @ K) @ P.T).real < 0)


def test_lqr_constraint_f_equals_drakes():
    pc = pytest.importorskip("pydrake.systems.controllers")
    A, B, Q, R, N, F = _lqr_f_problem()
    for kw in (dict(F=F), dict(N=N, F=F), dict(N=N, F=F[:1])):
        K, S = LinearQuadraticRegulator(A, B, Q, R, **kw)
        K_drake, S_drake = pc.LinearQuadraticRegulator(A, B, Q, R, **kw)
        np.testing.assert_allclose(S, S_drake, atol=1e-9, err_msg=str(list(kw)))
        np.testing.assert_allclose(K, K_drake, atol=1e-9, err_msg=str(list(kw)))


@pytest.mark.parametrize("name, where, value", [("A", (0, 1), np.nan), ("B", (1, 0), np.inf),
                                                ("Q", (1, 1), np.nan), ("R", (0, 0), np.inf),
                                                ("N", (0, 0), np.nan), ("F", (0, 1), np.nan)])
def test_lqr_names_the_matrix_with_non_finite_entries(name, where, value):
    from systems.errors import NonFiniteMatrixError
    mats = dict(A=np.array([[0.0, 1.0], [0.0, 0.0]]), B=np.array([[0.0], [1.0]]), Q=np.eye(2),
                R=np.eye(1), N=np.zeros((2, 1)), F=np.array([[1.0, 0.0]]))
    mats[name] = mats[name].copy()
    mats[name][where] = value
    pattern = (rf"LinearQuadraticRegulator: {name} has 1 non-finite entry, the first "
               rf"{name}\[{where[0]}, {where[1]}\] = {value}")
    with pytest.raises(NonFiniteMatrixError, match=pattern):
        LinearQuadraticRegulator(**mats)
    if name != "F":
        from systems.controllers.lqr import DiscreteTimeLinearQuadraticRegulator
        disc = {k: v for k, v in mats.items() if k != "F"}
        with pytest.raises(NonFiniteMatrixError, match=rf"DiscreteTimeLinearQuadraticRegulator: {name} has"):
            DiscreteTimeLinearQuadraticRegulator(**disc)


def test_lqr_of_a_system_with_an_infinite_jacobian_names_a():
    """xdot = sqrt(x) + u at x = 0 is an equilibrium whose Jacobian d sqrt(x)/dx is inf."""
    from solvers import ops
    from systems import LeafSystem
    from systems.errors import NonFiniteMatrixError

    class Root(LeafSystem):
        def __init__(self):
            super().__init__("root")
            self.declare_continuous_state(1)
            self.u = self.declare_input_port("u", 1)

        def time_derivatives(self, c):
            return ops.sqrt(c.continuous_state) + self.u.eval(c)

    plant = Root()
    ctx = plant.create_default_context()
    plant.get_input_port().fix_value(ctx, [0.0])
    message = (r"linearize: system 'root': A has 1 non-finite entry, the first A\[0, 0\] = inf at "
               r"row 0 \(dynamics of state root\[0\]\), column 0 \(state root\[0\]\)")
    with pytest.raises(NonFiniteMatrixError, match=message):
        LinearQuadraticRegulator(plant, ctx, np.eye(1), np.eye(1))


def test_lqr_of_a_system_uses_input_port_0_as_drake():
    from systems.primitives import Adder
    b = DiagramBuilder()
    plant = b.add_system(LinearSystem(A=[[0.0, 1.0], [0.0, 0.0]], B=[[0.0], [1.0]], C=np.eye(2), name="p"))
    add = b.add_system(Adder(2, 1))
    b.connect(add.get_output_port(), plant.get_input_port())
    b.export_input(add.get_input_port(0), "u")
    b.export_input(add.get_input_port(1), "disturbance")
    d = b.build()
    ctx = d.create_default_context()
    d.get_input_port("u").fix_value(ctx, [0.0])
    d.get_input_port("disturbance").fix_value(ctx, [0.0])
    ctrl = LinearQuadraticRegulator(d, ctx, np.eye(2), np.eye(1))
    # double integrator with Q = I, R = 1: K = [1, sqrt(3)]
    np.testing.assert_allclose(ctrl.K, [[1.0, np.sqrt(3.0)]], atol=1e-10)
    both = LinearQuadraticRegulator(d, ctx, np.eye(2), np.eye(2), input_port_index="all")
    assert both.K.shape == (2, 2)
    with pytest.raises(TypeError, match="the constraint F is accepted only with matrices"):
        LinearQuadraticRegulator(d, ctx, np.eye(2), np.eye(1), F=[[1.0, 0.0]])
