"""The C loops of the small states' runge_kutta3 and RK45 runs (systems/analysis/_native_runs.py)
give the Python loops' results bit for bit: states, logs, counters, and what a failure leaves
(the error, its message and cause, the last accepted state), in runs of steps and in single
steps; without a compiler the Python loop runs."""
import math

import numpy as np
import pytest

from systems import DiagramBuilder, LeafSystem
from systems.analysis import NonFiniteStateError, SimulationError, Simulator
from systems.analysis import _native_runs
from systems.errors import SystemCallbackError
from systems.primitives import LogVectorOutput

pytestmark = pytest.mark.skipif(_native_runs._kernel() is None,
                                reason="no C compiler: the C loop is not built")


class _Pendulum(LeafSystem):
    """A damped, forced pendulum with z' = -z; it may fail after ``t_fail``."""

    def __init__(self, fail=None, t_fail=math.inf):
        super().__init__("pendulum")
        self.fail, self.t_fail = fail, t_fail
        self.declare_continuous_state(3, num_q=1, num_v=1)
        self.declare_output_port("state", 3, lambda c: c.continuous_state, feedthrough=False)

    def time_derivatives(self, context):
        q, v, z = context.continuous_state.tolist()
        t = context.time
        if t > self.t_fail:
            if self.fail == "raise":
                raise RuntimeError("broken at t > t_fail")
            if self.fail == "jump":   # a jump no step can resolve: StepSizeError
                return [v, 1e12, -z]   # (a list)
            return np.array([v, math.nan, -z])   # (an array)
        if t > 2.0:   # a tuple holding a numpy float: converted as the Python loop does
            return (v, np.float64(-9.81 * math.sin(q) - 0.2 * v), -z)
        return (v, -9.81 * math.sin(q) - 0.2 * v + math.cos(2.0 * t), -z)


class _Lag(LeafSystem):
    """w' = q - w, reading the pendulum's state (a second leaf with state; its value a
    list of one float)."""

    def __init__(self):
        super().__init__("lag")
        self.x_in = self.declare_input_port("x", 3)
        self.declare_continuous_state(1)

    def time_derivatives(self, context):
        return [self.x_in.eval(context)[0] - context.continuous_state[0]]


def _run(native, monitored, fail=None, t_fail=math.inf, period=0.25, accuracy=1e-7,
         lag=True, integrator="runge_kutta3"):
    _native_runs.ENABLED = native
    try:
        b = DiagramBuilder("runs")
        plant = b.add_system(_Pendulum(fail, t_fail))
        if lag:   # two leaves with state; else one (its values taken in C)
            b.connect(plant.get_output_port(), b.add_system(_Lag()).x_in)
        log = LogVectorOutput(plant.get_output_port(), b, publish_period=period)
        d = b.build()
        ctx = d.create_default_context()
        ctx.set_continuous_state([1.0, 0.0, 0.5, 0.0][:4 if lag else 3])
        sim = Simulator(d, ctx, integrator=integrator, accuracy=accuracy)
        if monitored:
            sim.set_monitor(lambda c: None)   # one step per loop iteration
        error = None
        try:
            sim.advance_to(3.0)
        except (NonFiniteStateError, SystemCallbackError, SimulationError) as exc:
            error = (type(exc), str(exc), type(exc.__cause__))
    finally:
        _native_runs.ENABLED = True
    stats = sim.get_statistics()
    data = log.find_log(ctx)
    return (error, ctx.time, np.array(ctx.continuous_state).tobytes(),
            data.sample_times().tobytes(), data.data().tobytes(), stats["steps"],
            stats["derivative_evaluations"], stats["rejected_steps"],
            sim._stepper.t, sim._stepper.x.tobytes(), sim._stepper._h)


@pytest.mark.parametrize("integrator", ["runge_kutta3", "RK45"])
@pytest.mark.parametrize("lag", [True, False])
@pytest.mark.parametrize("monitored", [False, True])
@pytest.mark.parametrize("fail", [None, "nan", "raise", "jump"])
def test_the_c_loop_gives_the_python_loops_bits(monitored, fail, lag, integrator):
    t_fail = math.inf if fail is None else 1.3
    c_loop = _run(True, monitored, fail, t_fail, lag=lag, integrator=integrator)
    assert c_loop == _run(False, monitored, fail, t_fail, lag=lag, integrator=integrator)
    error, t = c_loop[0], c_loop[1]
    if fail is None:
        assert error is None and t == 3.0
        assert c_loop[7] > 0 or integrator == "RK45"   # some steps rejected
        return
    assert 1.0 < t <= 1.3 + 1e-12   # the last accepted (finite) state is kept
    assert np.all(np.isfinite(np.frombuffer(c_loop[2])))
    if fail == "nan":
        assert error[0] is NonFiniteStateError
        assert error[1].startswith("time derivative of continuous state 1 of system "
                                   "'pendulum' is nan at t=")
    elif fail == "raise":
        assert error[0] is SystemCallbackError and error[2] is RuntimeError
        assert "system 'pendulum': time_derivatives raised RuntimeError" in error[1]
    else:
        assert error[0] is SimulationError and "fell below the resolution of time" in error[1]


@pytest.mark.parametrize("integrator", ["runge_kutta3", "RK45"])
def test_loose_and_tight_tolerances(integrator):
    for accuracy in (1e-3, 1e-10):
        assert _run(True, False, accuracy=accuracy, integrator=integrator) == \
            _run(False, False, accuracy=accuracy, integrator=integrator)


def test_without_a_compiler_the_python_loop_runs(monkeypatch):
    from solvers import compiled
    monkeypatch.setattr(compiled, "find_compiler", lambda *a, **k: None)
    monkeypatch.setattr(_native_runs, "_KERNELS", {})
    assert _native_runs._kernel() is None and _native_runs._kernel("dopri") is None
    assert _native_runs.native_run(3, None, None, None, None, error_weights=(0, 0, 0, 0),
                                  exponent=-1 / 3, max_step=0.1, atol=1e-9, rtol=1e-6,
                                  stretch=0.01, name="runge_kutta3") is None
    assert _run(True, False)[1] == 3.0   # the Python loops
    assert _run(True, False, integrator="RK45")[1] == 3.0


def test_the_environment_variable_switches_the_c_loops_off(monkeypatch):
    monkeypatch.setenv("DYNABLOCKS_NO_NATIVE_RUNS", "1")
    monkeypatch.setattr(_native_runs, "_KERNELS", {})
    assert _native_runs._kernel() is None and _native_runs._kernel("dopri") is None


class _OwnEval(_Pendulum):
    """A system evaluating its derivatives itself (no list form: the C loop calls the
    array-valued derivative function)."""

    def eval_time_derivatives(self, context):
        return np.asarray(self.time_derivatives(context), dtype=float)


@pytest.mark.parametrize("integrator", ["runge_kutta3", "RK45"])
def test_a_system_evaluating_its_own_derivatives(integrator):
    def run(native):
        _native_runs.ENABLED = native
        try:
            plant = _OwnEval()
            ctx = plant.create_default_context()
            ctx.set_continuous_state([1.0, 0.0, 0.5])
            sim = Simulator(plant, ctx, integrator=integrator, accuracy=1e-8)
            sim.advance_to(2.0)
        finally:
            _native_runs.ENABLED = True
        return np.array(ctx.continuous_state).tobytes(), sim.get_statistics()
    assert run(True) == run(False)
