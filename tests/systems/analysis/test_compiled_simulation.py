"""Compiled simulation (CVODES and compiled fixed-step loops) against references."""
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from systems import DiagramBuilder, LeafSystem, SymbolicEvaluationError
from systems.analysis.compiled import CompiledSimulator
from systems.primitives import ConstantVectorSource, LogVectorOutput
from systems.symbolic import to_casadi
from _systems_models import X0, _closed_loop_lqr, _plant_context, _sampled_data_loop



def _reference(diagram, x0, t_final):
    cs = to_casadi(diagram)
    p = diagram.create_default_context().parameters
    sol = solve_ivp(lambda t, x: np.ravel(cs.f(t, x, [], [], p)), (0.0, t_final), x0,
                    rtol=1e-12, atol=1e-12, dense_output=True)
    return sol.sol


@pytest.mark.parametrize("integrator, max_step, tol", [
    ("cvodes", 0.1, 1e-7), ("runge_kutta4", 1e-3, 1e-9), ("runge_kutta3", 1e-3, 1e-7),
    ("runge_kutta2", 1e-3, 1e-4), ("explicit_euler", 1e-4, 1e-2)])
def test_pendulum_under_lqr_matches_reference(integrator, max_step, tol):
    d, _ = _closed_loop_lqr()
    ctx = d.create_default_context()
    ctx.set_continuous_state(X0)
    sim = CompiledSimulator(d, ctx, integrator=integrator, accuracy=1e-10, max_step=max_step)
    sim.advance_to(3.0)
    ref = _reference(d, X0, 3.0)
    assert ctx.time == 3.0
    np.testing.assert_allclose(ctx.continuous_state, ref(3.0), atol=tol)


def test_logging_times_and_values_match_reference():
    d0, _ = _closed_loop_lqr()
    # Rebuild with log sinks (a system can be in one diagram only).
    from systems.controllers.lqr import LinearQuadraticRegulator
    plant, pctx = _plant_context(np.pi)
    ctrl = LinearQuadraticRegulator(plant, pctx, np.diag([10.0, 1.0]), np.array([[1.0]]))
    b = DiagramBuilder()
    b.add_system(plant)
    b.add_system(ctrl)
    b.connect(plant.get_output_port("state"), ctrl.get_input_port())
    b.connect(ctrl.get_output_port(), plant.get_input_port())
    every_step = LogVectorOutput(plant.get_output_port("state"), b)
    periodic = LogVectorOutput(ctrl.get_output_port(), b, publish_period=0.25)
    d = b.build()
    ctx = d.create_default_context()
    ctx.set_continuous_state(X0)
    sim = CompiledSimulator(d, ctx, integrator="cvodes", accuracy=1e-10, output_period=0.05)
    sim.advance_to(1.0)
    log = every_step.find_log(ctx)
    np.testing.assert_allclose(log.sample_times(), np.linspace(0.0, 1.0, 21), atol=1e-12)
    ref = _reference(d0, X0, 1.0)
    np.testing.assert_allclose(log.data(), ref(log.sample_times()), atol=1e-7)
    plog = periodic.find_log(ctx)
    np.testing.assert_allclose(plog.sample_times(), [0.0, 0.25, 0.5, 0.75, 1.0], atol=1e-12)
    states = ref(plog.sample_times())
    np.testing.assert_allclose(plog.data()[0], ctrl.u0[0] - (ctrl.K @ (states - ctrl.x0[:, None]))[0], atol=1e-6)


def _closed_form(T, n, x0):
    Ad = np.exp(0.5 * T)
    Bd = (np.exp(0.5 * T) - 1.0) / 0.5
    x, zoh, xc = x0, 0.0, 0.0
    out = [x]
    for _ in range(n):
        zoh, xc = x, 0.5 * xc + zoh          # simultaneous updates from pre-update values
        u = -0.8 * xc - 0.3 * zoh
        x = Ad * x + Bd * u
        out.append(x)
    return np.array(out)


@pytest.mark.parametrize("integrator, max_step", [("cvodes", 0.1), ("runge_kutta4", 0.1 / 16)])
def test_sampled_data_loop_matches_closed_form_discretization(integrator, max_step):
    T = 0.1
    d, sink = _sampled_data_loop(T)
    ctx = d.create_default_context()
    ctx.set_continuous_state([1.0])
    sim = CompiledSimulator(d, ctx, integrator=integrator, accuracy=1e-12, max_step=max_step)
    sim.advance_to(2.0)
    log = sink.find_log(ctx)
    np.testing.assert_allclose(log.sample_times(), T * np.arange(21), atol=1e-12)
    tol = 1e-9 if integrator == "cvodes" else 1e-8
    np.testing.assert_allclose(log.data()[0], _closed_form(T, 20, 1.0), atol=tol)


def test_fixed_step_loop_backends_agree():
    d, _ = _closed_loop_lqr()
    results = []
    for backend in ("c", "casadi"):
        ctx = d.create_default_context()
        ctx.set_continuous_state(X0)
        CompiledSimulator(d, ctx, integrator="runge_kutta4", max_step=1e-2, backend=backend).advance_to(1.0)
        results.append(np.array(ctx.continuous_state))
    np.testing.assert_allclose(results[0], results[1], rtol=1e-13, atol=1e-15)


def test_compiled_mode_refuses_events_it_cannot_run_and_bad_names():
    class Bouncy(LeafSystem):
        def __init__(self):
            super().__init__("bouncy")
            self.declare_continuous_state(2)
            self.declare_witness_function("ground", "positive_then_nonpositive", lambda c: c.continuous_state[0])

        def time_derivatives(self, c):
            return [c.continuous_state[1], -9.81]

    with pytest.raises(SymbolicEvaluationError, match="system 'bouncy' declares witness function 'ground'"):
        CompiledSimulator(Bouncy())
    with pytest.raises(ValueError, match="unknown integrator 'rk9'.*cvodes"):
        CompiledSimulator(ConstantVectorSource([1.0]), integrator="rk9")
    d, _ = _closed_loop_lqr()
    sim = CompiledSimulator(d)
    sim.advance_to(0.5)
    with pytest.raises(ValueError, match="earlier than the current time"):
        sim.advance_to(0.1)
    for bad in (float("nan"), float("inf")):      # refused before anything runs
        with pytest.raises(ValueError, match="final time must be a finite number"):
            sim.advance_to(bad)
    assert sim.get_context().time == 0.5
