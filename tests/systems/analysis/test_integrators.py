"""Integrators of the Simulator against analytic solutions: harmonic oscillator and
exponential decay for every integrator, convergence orders of the fixed-step schemes,
energy behaviour of semi-explicit Euler, Butcher-table consistency."""
import math

import numpy as np
import pytest

from systems import LeafSystem
from systems.analysis import INTEGRATOR_NAMES, Simulator
from systems.analysis.integrators import TABLEAUS

FIXED_ONLY = ("explicit_euler", "semi_explicit_euler", "runge_kutta4")
ORDERS = {"explicit_euler": 1, "semi_explicit_euler": 1, "runge_kutta2": 2,
          "runge_kutta3": 3, "runge_kutta4": 4}


class Oscillator(LeafSystem):
    """q'' = -w^2 q as x = [q; v] (num_q = num_v = 1), with energy recorded per step."""

    def __init__(self, w=1.0, q0=1.0, v0=0.0, record=False):
        super().__init__("oscillator")
        self.w = w
        self.declare_continuous_state(2, num_q=1, num_v=1, initial=[q0, v0])
        self.energies = []
        if record:
            self.declare_per_step_publish(self._record)

    def time_derivatives(self, context):
        q, v = context.continuous_state
        return [v, -self.w ** 2 * q]

    def energy(self, x):
        return 0.5 * x[1] ** 2 + 0.5 * self.w ** 2 * x[0] ** 2

    def _record(self, context):
        self.energies.append(self.energy(context.continuous_state))


class Decay(LeafSystem):
    """xdot = -lam * x (a non-mechanical z state)."""

    def __init__(self, lam=1.5, x0=2.0):
        super().__init__("decay")
        self.lam = lam
        self.declare_continuous_state(1, initial=[x0])

    def time_derivatives(self, context):
        return -self.lam * context.continuous_state


def run_oscillator(name, T=1.0, **kw):
    sys_ = Oscillator(w=2.0)
    sim = Simulator(sys_, integrator=name, **kw)
    sim.advance_to(T)
    x = sim.get_context().continuous_state
    exact = np.array([math.cos(2.0 * T), -2.0 * math.sin(2.0 * T)])
    return float(np.max(np.abs(x - exact))), sim


def run_decay(name, T=1.0, **kw):
    sim = Simulator(Decay(), integrator=name, **kw)
    sim.advance_to(T)
    x = sim.get_context().continuous_state[0]
    return abs(x - 2.0 * math.exp(-1.5 * T)), sim


@pytest.mark.parametrize("name", [n for n in INTEGRATOR_NAMES if n in ORDERS])
def test_fixed_step_error_within_order_bound(name):
    h = 0.01
    p = ORDERS[name]
    err_o, sim = run_oscillator(name, max_step=h, fixed_step=True)
    err_d, _ = run_decay(name, max_step=h, fixed_step=True)
    # Global error of an order-p method: C h^p with C of order max|x^(p+1)| T = 2^(p+1) * 2.
    assert err_o <= 4.0 * 2 ** (p + 1) * h ** p
    assert err_d <= 4.0 * 2.0 * 1.5 ** (p + 1) * h ** p
    assert sim.get_num_steps_taken() == 100


@pytest.mark.parametrize("name", ["runge_kutta2", "runge_kutta3", "RK45", "DOP853", "Radau",
                                  "BDF", "LSODA"])
def test_error_controlled_meets_tolerance(name):
    acc = 1e-7
    err_o, sim = run_oscillator(name, accuracy=acc, max_step=0.5)
    err_d, _ = run_decay(name, accuracy=acc, max_step=0.5)
    assert err_o < 300 * acc and err_d < 300 * acc
    # Looser accuracy gives a larger error and fewer steps: error control is doing the work.
    err_loose, sim_loose = run_oscillator(name, accuracy=1e-3, max_step=0.5)
    assert sim_loose.get_num_steps_taken() <= sim.get_num_steps_taken()
    assert err_loose > err_o


@pytest.mark.parametrize("name", list(ORDERS))
def test_convergence_order_of_fixed_step_schemes(name):
    p = ORDERS[name]
    h = {1: 0.01, 2: 0.02, 3: 0.04, 4: 0.05}[p]
    for run in (run_oscillator, run_decay):
        e1, _ = run(name, max_step=h, fixed_step=True)
        e2, _ = run(name, max_step=h / 2, fixed_step=True)
        measured = math.log2(e1 / e2)
        assert abs(measured - p) < 0.2, (run.__name__, measured)


def test_semi_explicit_euler_energy_bounded_explicit_euler_not():
    h, n = 0.01, 10_000
    osc = Oscillator(w=1.0, record=True)
    sim = Simulator(osc, integrator="semi_explicit_euler", max_step=h)
    sim.advance_to(h * n)
    assert sim.get_num_steps_taken() == n
    e = np.array(osc.energies)
    assert len(e) == n + 1
    # Symplectic Euler conserves a modified energy: |E - E0| / E0 <= ~h w / 2 forever.
    assert np.max(np.abs(e - e[0])) / e[0] < 0.6 * h
    osc2 = Oscillator(w=1.0, record=True)
    sim2 = Simulator(osc2, integrator="explicit_euler", max_step=h)
    sim2.advance_to(h * n)
    # Explicit Euler multiplies the energy by (1 + h^2 w^2) per step.
    assert osc2.energies[-1] / osc2.energies[0] == pytest.approx((1 + h * h) ** n, rel=1e-9)


def test_semi_explicit_euler_update_order():
    osc = Oscillator(w=1.0, q0=1.0, v0=0.5)
    sim = Simulator(osc, integrator="semi_explicit_euler", max_step=0.1)
    sim.advance_to(0.1)
    v1 = 0.5 + 0.1 * (-1.0)
    q1 = 1.0 + 0.1 * v1
    np.testing.assert_allclose(sim.get_context().continuous_state, [q1, v1], rtol=0, atol=1e-15)


@pytest.mark.parametrize("tableau", list(TABLEAUS.values()), ids=list(TABLEAUS))
def test_butcher_tables_are_consistent(tableau):
    c, a, b = tableau.c, tableau.a, tableau.b
    assert sum(b) == pytest.approx(1.0)
    for i in range(tableau.num_stages):
        assert sum(a[i]) == pytest.approx(c[i])
    if tableau.has_error_estimate:
        assert sum(tableau.b_error) == pytest.approx(1.0)
    if tableau.order >= 2:
        assert sum(bi * ci for bi, ci in zip(b, c)) == pytest.approx(0.5)
    if tableau.order >= 3:
        assert sum(bi * ci ** 2 for bi, ci in zip(b, c)) == pytest.approx(1.0 / 3.0)
    if tableau.fsal:
        assert tuple(a[-1]) == tuple(b[:-1])


def test_fixed_step_lands_on_final_time_exactly():
    osc = Oscillator()
    sim = Simulator(osc, integrator="runge_kutta4", max_step=0.1)
    sim.advance_to(1.0)
    assert sim.get_context().time == 1.0
    assert sim.get_num_steps_taken() == 10
    sim.advance_to(1.05)
    assert sim.get_num_steps_taken() == 11


class MassSpringDamper(LeafSystem):
    """q'' = (u - c q' - k q) / m, x = [q; v]; input force, output state."""

    def __init__(self, m=1.0, c=0.5, k=2.0):
        super().__init__("plant")
        self.m, self.c, self.k = m, c, k
        self.declare_continuous_state(2, num_q=1, num_v=1)
        self._u = self.declare_input_port("force", 1)
        self.declare_output_port("state", 2, lambda ctx: ctx.continuous_state, feedthrough=False)

    def time_derivatives(self, context):
        q, v = context.continuous_state
        return np.array([v, (self._u.eval(context)[0] - self.c * v - self.k * q) / self.m])


def test_semi_explicit_euler_on_a_diagram_with_q_v_and_z_states():
    from scipy.linalg import expm
    from systems import DiagramBuilder
    from systems.controllers import PidController
    from systems.primitives import ConstantVectorSource

    def build():
        b = DiagramBuilder()
        plant = b.add_system(MassSpringDamper())
        pid = b.add_system(PidController(10.0, 5.0, 2.0, name="pid"))   # z: the integral
        ref = b.add_system(ConstantVectorSource([1.0, 0.0], name="ref"))
        b.connect(plant.get_output_port(), pid.get_input_port("estimated_state"))
        b.connect(ref.get_output_port(), pid.get_input_port("desired_state"))
        b.connect(pid.get_output_port(), plant.get_input_port())
        return b.build()

    A = np.array([[0.0, 1.0, 0.0], [-12.0, -2.5, 5.0], [-1.0, 0.0, 0.0]])
    bvec = np.array([0.0, 10.0, 1.0])
    exact = expm(np.block([[A, bvec[:, None]], [np.zeros((1, 4))]]) * 2.0)[:3, 3]
    errors = []
    for h in (0.004, 0.002):
        diagram = build()
        assert [list(i) for i in diagram.continuous_state_partition()] == [[0], [1], [2]]
        sim = Simulator(diagram, integrator="semi_explicit_euler", max_step=h)
        sim.advance_to(2.0)
        errors.append(np.max(np.abs(sim.get_context().continuous_state - exact)))
    assert errors[0] < 0.05
    assert abs(math.log2(errors[0] / errors[1]) - 1.0) < 0.2
