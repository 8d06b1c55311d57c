"""Simulator API and faults: monitor, realtime rate, statistics, progress, NaN detection,
callback errors, bad arguments."""
import math
import time

import numpy as np
import pytest

from systems import DiagramBuilder, LeafSystem, SystemCallbackError
from systems.analysis import (EventStatus, NonFiniteStateError, SimulationError, Simulator,
                              INTEGRATOR_NAMES)
from systems.primitives import (ConstantVectorSource, FunctionSystem, Integrator,
                                LogVectorOutput)


def ramp_diagram(rate=2.0, log_period=0.0):
    b = DiagramBuilder()
    src = b.add_system(ConstantVectorSource([rate], name="src"))
    integ = b.add_system(Integrator(1, name="integ"))
    b.connect(src.get_output_port(), integ.get_input_port())
    log = LogVectorOutput(integ.get_output_port(), b, publish_period=log_period)
    return b.build(), integ, log


def test_ramp_and_per_step_log():
    diagram, integ, log = ramp_diagram()
    sim = Simulator(diagram, max_step=0.1)
    status = sim.advance_to(1.0)
    assert status.succeeded() and status.return_time == 1.0
    ctx = sim.get_context()
    assert ctx.continuous_state[0] == pytest.approx(2.0, abs=1e-12)
    data = log.find_log(ctx)
    t, y = data.sample_times(), data.data()[0]
    assert t[0] == 0.0 and t[-1] == 1.0
    assert len(t) == sim.get_num_steps_taken() + 1     # per-step log + the one at initialization
    np.testing.assert_allclose(y, 2.0 * t, atol=1e-12)
    stats = sim.get_statistics()
    assert stats["steps"] == sim.get_num_steps_taken()
    assert stats["publishes"] == len(t)
    assert stats["derivative_evaluations"] > 0 and stats["rejected_steps"] == 0


def test_advance_in_pieces_and_context_changes_are_picked_up():
    diagram, integ, _ = ramp_diagram()
    sim = Simulator(diagram)
    sim.advance_to(0.5)
    ic = diagram.get_subsystem_context(integ, sim.get_mutable_context())
    ic.set_continuous_state([10.0])
    sim.advance_to(1.0)
    assert ic.continuous_state[0] == pytest.approx(11.0, abs=1e-10)
    sim.advance_to(1.0)  # same time: nothing to do
    assert sim.get_context().time == 1.0


def test_monitor_stops_the_run():
    diagram, integ, _ = ramp_diagram()
    sim = Simulator(diagram, max_step=0.01)

    def monitor(ctx):
        x = diagram.get_subsystem_context(integ, ctx).continuous_state[0]
        return EventStatus.reached_termination("x reached 1") if x >= 1.0 else None

    sim.set_monitor(monitor)
    status = sim.advance_to(5.0)
    assert status.reason == "reached_termination" and status.message == "x reached 1"
    assert not status.succeeded()
    assert 0.5 <= sim.get_context().time <= 0.52
    # A string works too, and "fail" raises.
    sim.set_monitor(lambda ctx: "terminate")
    t_before = sim.get_context().time
    status = sim.advance_to(5.0)
    assert status.reason == "reached_termination" and sim.get_context().time > t_before
    sim.set_monitor(lambda ctx: EventStatus.failed("constraint violated"))
    with pytest.raises(SimulationError, match="constraint violated"):
        sim.advance_to(5.0)
    sim.set_monitor(lambda ctx: 42)
    with pytest.raises(TypeError, match="monitor returned 42"):
        sim.advance_to(5.0)


def test_target_realtime_rate_slows_the_run():
    diagram, _, _ = ramp_diagram()
    sim = Simulator(diagram, max_step=0.05)
    sim.set_target_realtime_rate(2.0)
    sim.initialize()
    t0 = time.perf_counter()
    sim.advance_to(0.6)                      # 0.6 s simulated at 2x: about 0.3 s of wall time
    assert time.perf_counter() - t0 >= 0.8 * 0.3
    with pytest.raises(ValueError, match="rate"):
        sim.set_target_realtime_rate(-1.0)


class Blowup(LeafSystem):
    """xdot = 1 until t = 0.55, then NaN."""

    def __init__(self):
        super().__init__("blowup")
        self.declare_continuous_state(2, initial=[1.0, 2.0])

    def time_derivatives(self, context):
        return [1.0, math.nan if context.time > 0.55 else 1.0]


def test_nan_derivative_names_system_index_and_time():
    sim = Simulator(Blowup(), integrator="runge_kutta4", max_step=0.1)
    with pytest.raises(NonFiniteStateError) as info:
        sim.advance_to(1.0)
    msg = str(info.value)
    assert "system 'blowup'" in msg and "continuous state 1" in msg and "t=0.6" in msg
    ctx = sim.get_context()
    assert ctx.time == pytest.approx(0.5) and np.all(np.isfinite(ctx.continuous_state))
    np.testing.assert_allclose(ctx.continuous_state, [1.5, 2.5])


class Overflow(LeafSystem):
    def __init__(self):
        super().__init__("overflow")
        self.declare_continuous_state(1, initial=[1e308])

    def time_derivatives(self, context):
        return [context.continuous_state[0]]


def test_state_overflow_to_inf_is_caught_and_context_keeps_last_finite_state():
    sim = Simulator(Overflow(), integrator="explicit_euler", max_step=1.0)
    with np.errstate(over="ignore"):
        with pytest.raises(NonFiniteStateError, match=r"continuous state 0 of system 'overflow'.*t=0\.0 to t=1\.0"):
            sim.advance_to(3.0)
    assert sim.get_context().time == 0.0
    assert sim.get_context().continuous_state[0] == 1e308


def test_nonfinite_output_is_named():
    b = DiagramBuilder()
    bad = b.add_system(FunctionSystem(lambda t, u: np.log(u - 1.0), 1, 1, feedthrough=True, name="logf"))
    src = b.add_system(ConstantVectorSource([0.5], name="src"))
    integ = b.add_system(Integrator(1, name="integ"))
    b.connect(src.get_output_port(), bad.get_input_port())
    b.connect(bad.get_output_port(), integ.get_input_port())
    sim = Simulator(b.build())
    with np.errstate(invalid="ignore"):
        with pytest.raises(NonFiniteStateError, match="system 'integ'.*output port 'y' of system 'logf'"):
            sim.advance_to(1.0)


class FaultyPublisher(LeafSystem):
    def __init__(self):
        super().__init__("faulty")
        self.declare_periodic_publish(0.1, 0.0, self._pub)

    def _pub(self, context):
        if context.time > 0.25:
            raise KeyError("sensor missing")


def test_callback_exception_names_the_system_and_logs_stay_readable():
    b = DiagramBuilder()
    src = b.add_system(ConstantVectorSource([1.0], name="src"))
    integ = b.add_system(Integrator(1, name="integ"))
    b.connect(src.get_output_port(), integ.get_input_port())
    b.add_system(FaultyPublisher())
    log = LogVectorOutput(integ.get_output_port(), b, publish_period=0.1)
    diagram = b.build()
    sim = Simulator(diagram)
    with pytest.raises(SystemCallbackError, match=r"system 'faulty'.*periodic publish at t=0\.3.*KeyError") as info:
        sim.advance_to(1.0)
    assert isinstance(info.value.__cause__, KeyError)
    data = log.find_log(sim.get_context())
    # 'faulty' comes before the log sink in leaf order, so the sink did not record t=0.3.
    np.testing.assert_allclose(data.sample_times(), [0.0, 0.1, 0.2], atol=1e-15)
    np.testing.assert_allclose(data.data()[0], [0.0, 0.1, 0.2], atol=1e-12)


class BadGuard(LeafSystem):
    def __init__(self, where):
        super().__init__("bad_guard")
        self.declare_continuous_state(1)
        if where == "guard":
            self.declare_witness_function("w", "crosses_zero", lambda c: 1 / 0)
        else:
            self.declare_periodic_discrete_update(0.1, 0.0, lambda c: [1, 2])
            self.declare_discrete_state(1)

    def time_derivatives(self, context):
        return [1.0]


def test_guard_and_update_errors():
    with pytest.raises(SystemCallbackError, match="system 'bad_guard'.*witness 'w'.*ZeroDivisionError"):
        Simulator(BadGuard("guard")).advance_to(1.0)
    with pytest.raises(ValueError, match="system 'bad_guard'.*returned 2 values, expected 1"):
        Simulator(BadGuard("update")).advance_to(1.0)


def test_bad_arguments():
    diagram, integ, _ = ramp_diagram()
    with pytest.raises(ValueError) as info:
        Simulator(diagram, integrator="rk4")
    for name in INTEGRATOR_NAMES:
        assert name in str(info.value)
    sim = Simulator(diagram)
    sim.advance_to(1.0)
    with pytest.raises(ValueError, match=r"advance_to\(0\.5\).*earlier than the current time 1\.0"):
        sim.advance_to(0.5)
    with pytest.raises(ValueError, match="finite"):
        sim.advance_to(math.inf)
    with pytest.raises(ValueError, match="always error-controlled"):
        Simulator(diagram, integrator="RK45", fixed_step=True)
    with pytest.raises(ValueError, match="max_step"):
        Simulator(diagram, integrator="runge_kutta4", max_step=math.inf)
    with pytest.raises(ValueError, match="accuracy"):
        Simulator(diagram, accuracy=0.0)
    with pytest.raises(ValueError, match="root context"):
        Simulator(integ, diagram.create_default_context())
    with pytest.raises(TypeError, match="System"):
        Simulator("plant")
    with pytest.raises(ValueError, match="period"):
        Integrator(1).declare_periodic_publish(0.0, 0.0, lambda c: None)


def test_progress_enabled_prints_the_final_line(capsys):
    diagram, _, _ = ramp_diagram()
    sim = Simulator(diagram)
    sim.set_progress(True)
    sim.advance_to(1.0)
    err = capsys.readouterr().err
    assert err.startswith("\rsimulating [") and "100.0%  t=1 s  wall" in err
    assert err.endswith("\n")


def test_progress_disabled_prints_nothing(capsys):
    diagram, _, _ = ramp_diagram()
    sim = Simulator(diagram)
    sim.set_progress(False)
    sim.advance_to(1.0)
    assert capsys.readouterr().err == ""


def test_statistics_of_discrete_and_publish_events():
    diagram, _, log = ramp_diagram(log_period=0.25)
    sim = Simulator(diagram, integrator="runge_kutta4", max_step=0.1)
    sim.advance_to(1.0)
    stats = sim.get_statistics()
    # Steps: 0.1, 0.2, 0.25 (event), 0.35, 0.45, 0.5, ... -> 3 per quarter.
    assert stats["steps"] == 12
    assert stats["publishes"] == 5
    assert stats["derivative_evaluations"] == 4 * 12
    sim.reset_statistics()
    assert sim.get_statistics()["steps"] == 0


class Ticker(LeafSystem):
    def __init__(self):
        super().__init__("ticker")
        self.times = []
        self.declare_periodic_publish(0.1, 0.0, lambda c: self.times.append(c.time))


def test_time_changed_between_calls_reschedules_periodic_events():
    ticker = Ticker()
    sim = Simulator(ticker)
    sim.advance_to(0.25)
    assert ticker.times == [0.0, 0.1, 0.2]
    sim.get_mutable_context().set_time(1.0)
    sim.advance_to(1.25)
    np.testing.assert_array_equal(ticker.times[3:], [1.0, 1.1, 1.2000000000000002])
    assert ticker.times[3:] == [10 * 0.1, 11 * 0.1, 12 * 0.1]


def test_compiled_true_dispatches_to_the_compiled_simulator():
    from systems.analysis.compiled import CompiledSimulator
    from systems.errors import SymbolicEvaluationError
    diagram, integ, _ = ramp_diagram(rate=3.0)
    sim = Simulator(diagram, compiled=True, integrator="runge_kutta4", max_step=0.01)
    assert isinstance(sim, CompiledSimulator)
    sim.advance_to(1.0)
    ic = diagram.get_subsystem_context(integ, sim.get_context())
    assert ic.continuous_state[0] == pytest.approx(3.0, abs=1e-12)
    with pytest.raises(SymbolicEvaluationError, match="faulty"):
        Simulator(FaultyPublisher(), compiled=True)


class _DampedPendulum(LeafSystem):
    def __init__(self):
        super().__init__("pendulum")
        self.declare_continuous_state(2, num_q=1, num_v=1)

    def time_derivatives(self, context):
        q, v = context.continuous_state.tolist()
        return np.array([v, -9.81 * math.sin(q) - 0.1 * v])


@pytest.mark.parametrize("integrator", ["runge_kutta3", "RK45", "runge_kutta2", "DOP853"])
def test_rerun_after_initialize_is_bitwise_a_fresh_run(integrator):
    """Reset the context, initialize() and advance again on the same Simulator: the same
    bits as the first run and as a new Simulator (no step size carried over from the first
    run; Drake's Initialize resets its integrator too)."""
    plant = _DampedPendulum()
    ctx = plant.create_default_context()
    ctx.set_continuous_state([1.0, 0.0])
    sim = Simulator(plant, ctx, integrator=integrator, accuracy=1e-6)
    sim.advance_to(2.0)
    first = np.array(ctx.continuous_state)
    ctx.set_time(0.0)
    ctx.set_continuous_state([1.0, 0.0])
    sim.initialize()
    sim.advance_to(2.0)
    again = np.array(ctx.continuous_state)
    other = plant.create_default_context()
    other.set_continuous_state([1.0, 0.0])
    Simulator(plant, other, integrator=integrator, accuracy=1e-6).advance_to(2.0)
    assert first.tobytes() == again.tobytes() == np.array(other.continuous_state).tobytes()
