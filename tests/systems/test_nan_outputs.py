"""Non-finite outputs are never published, logged or returned silently (issue 20).

A NaN output that only feeds a log sink, or any publish that reads it, raises
NonFiniteOutputError naming the leaf system, the port, the entry and the time (interpreted
and compiled simulators alike); ``allow_non_finite_outputs=True`` logs it instead.
``OutputPort.eval`` of a NaN output raises the same error unless ``allow_non_finite=True``.
"""
import math

import numpy as np
import pytest

from solvers import ops
from systems import DiagramBuilder, LeafSystem, PortValueError
from systems.analysis import NonFiniteOutputError, NonFiniteStateError, Simulator
from systems.errors import NonFiniteOutputError as ErrorsNonFiniteOutputError
from systems.primitives import ConstantVectorSource, Integrator, LogVectorOutput, VectorLogSink

H = 0.125          # a binary fraction: step times are exact


class SqrtClock(LeafSystem):
    """y = [t, sqrt(0.3 - t)]: finite up to t = 0.3, NaN after (symbolic-capable)."""

    def __init__(self, name="clock"):
        super().__init__(name)
        self.declare_output_port("y", 2, lambda c: ops.vertcat(c.time, ops.sqrt(0.3 - c.time)),
                                 feedthrough=False)


def _diagram(publish_period=0.0):
    """An integrator (so the simulator takes steps of H) and SqrtClock logged by a sink."""
    b = DiagramBuilder()
    src = b.add_system(ConstantVectorSource([1.0], name="one"))
    integ = b.add_system(Integrator(1, name="integ"))
    b.connect(src.get_output_port(), integ.get_input_port())
    clock = b.add_system(SqrtClock())
    sink = LogVectorOutput(clock.get_output_port(), b, publish_period=publish_period)
    return b.build(), sink


def test_the_error_is_a_port_value_error_of_systems_errors():
    assert NonFiniteOutputError is ErrorsNonFiniteOutputError
    assert issubclass(NonFiniteOutputError, PortValueError) and issubclass(NonFiniteOutputError, ValueError)


@pytest.mark.parametrize("compiled", [False, True])
def test_a_nan_output_only_logged_per_step_raises_naming_system_port_and_time(compiled):
    d, sink = _diagram()
    kw = {"integrator": "runge_kutta4"} if compiled else {"integrator": "explicit_euler"}
    sim = Simulator(d, compiled=compiled, max_step=H, **kw)
    with np.errstate(invalid="ignore"):
        with pytest.raises(NonFiniteOutputError) as info:
            sim.advance_to(1.0)
    msg = str(info.value)
    # Steps end at 0.125, 0.25, 0.375: the first sample after t = 0.3 is at 0.375.
    assert "output port 'y' of system 'clock'" in msg and "entry 1 of 2" in msg
    assert "t=0.375" in msg and "per-step publish" in msg and "clock_y_log" in msg
    assert "allow_non_finite_outputs=True" in msg
    # The log holds the samples up to the offending one; the context is at its time.
    log = sink.find_log(sim.get_context())
    np.testing.assert_array_equal(log.sample_times(), [0.0, 0.125, 0.25, 0.375])
    np.testing.assert_allclose(log.data()[1, :3], np.sqrt(0.3 - np.array([0.0, 0.125, 0.25])))
    assert math.isnan(log.data()[1, 3])
    assert sim.get_context().time == 0.375
    assert sim.get_context().continuous_state[0] == pytest.approx(0.375, abs=1e-12)


@pytest.mark.parametrize("compiled", [False, True])
def test_a_periodic_log_of_a_nan_output_raises_at_its_sample_time(compiled):
    d, sink = _diagram(publish_period=0.25)
    kw = {"integrator": "runge_kutta4"} if compiled else {}
    sim = Simulator(d, compiled=compiled, max_step=H, **kw)
    with np.errstate(invalid="ignore"):
        with pytest.raises(NonFiniteOutputError, match=r"output port 'y' of system 'clock'.*t=0\.5.*periodic publish"):
            sim.advance_to(1.0)
    np.testing.assert_array_equal(sink.find_log(sim.get_context()).sample_times(), [0.0, 0.25, 0.5])


@pytest.mark.parametrize("compiled", [False, True])
def test_allow_non_finite_outputs_logs_them(compiled):
    d, sink = _diagram()
    kw = {"integrator": "runge_kutta4"} if compiled else {"integrator": "explicit_euler"}
    sim = Simulator(d, compiled=compiled, max_step=H, allow_non_finite_outputs=True, **kw)
    with np.errstate(invalid="ignore"):
        sim.advance_to(1.0)
    log = sink.find_log(sim.get_context())
    t = np.arange(9) * H
    np.testing.assert_allclose(log.sample_times(), t, atol=0)
    np.testing.assert_allclose(log.data()[0], t, atol=1e-15)
    assert np.array_equal(np.isnan(log.data()[1]), t > 0.3)


def test_the_option_can_be_changed_after_the_error_and_the_run_goes_on():
    d, sink = _diagram()
    sim = Simulator(d, integrator="explicit_euler", max_step=H)
    assert sim.get_allow_non_finite_outputs() is False
    with np.errstate(invalid="ignore"):
        with pytest.raises(NonFiniteOutputError):
            sim.advance_to(1.0)
        sim.set_allow_non_finite_outputs(True)
        assert sim.get_allow_non_finite_outputs() is True
        sim.advance_to(1.0)
    assert sim.get_context().time == 1.0
    assert sink.find_log(sim.get_context()).num_samples() == 9


class NanAtStart(LeafSystem):
    def __init__(self):
        super().__init__("nan_source")
        self.declare_output_port("out", 3, lambda c: np.array([1.0, 2.0, np.inf]), feedthrough=False)


def test_a_non_finite_output_at_the_initial_time_raises_in_initialize():
    b = DiagramBuilder()
    src = b.add_system(NanAtStart())
    LogVectorOutput(src.get_output_port(), b)
    sim = Simulator(b.build())
    with pytest.raises(NonFiniteOutputError, match=r"output port 'out' of system 'nan_source' is inf "
                                                   r"\(entry 2 of 3\) at t=0\.0"):
        sim.initialize()


class Reader(LeafSystem):
    """Publishes every 0.25 s what it reads on input 'a' (it never reads input 'b')."""

    def __init__(self):
        super().__init__("reader")
        self.a = self.declare_input_port("a", 2)
        self.b = self.declare_input_port("b", 2)
        self.seen = []
        self.declare_periodic_publish(0.25, 0.0, lambda c: self.seen.append(self.a.eval(c)[1]))


def _reader_diagram(nan_on):
    b = DiagramBuilder()
    clock = b.add_system(SqrtClock())
    fine = b.add_system(ConstantVectorSource([1.0, 2.0], name="fine"))
    r = b.add_system(Reader())
    b.connect(clock.get_output_port(), r.get_input_port(nan_on))
    b.connect(fine.get_output_port(), r.get_input_port("b" if nan_on == "a" else "a"))
    return b.build(), r


def test_a_publish_that_reads_a_nan_input_raises():
    d, r = _reader_diagram("a")
    sim = Simulator(d)
    with np.errstate(invalid="ignore"):
        with pytest.raises(NonFiniteOutputError, match=r"output port 'y' of system 'clock' is nan "
                                                       r"\(entry 1 of 2\) at t=0\.5, read by the periodic "
                                                       r"publish of system 'reader' \(input port 'a'\)"):
            sim.advance_to(1.0)
    assert r.seen[:2] == [pytest.approx(math.sqrt(0.3)), pytest.approx(math.sqrt(0.05))]


def test_a_nan_output_the_publish_does_not_read_is_not_computed_nor_reported():
    d, r = _reader_diagram("b")          # the NaN feeds 'b', which the publish never reads
    sim = Simulator(d)
    sim.advance_to(1.0)
    assert r.seen == [2.0] * 5


def test_a_source_inside_a_nested_diagram_is_named():
    inner = DiagramBuilder()
    clock = inner.add_system(SqrtClock("deep_clock"))
    inner.export_output(clock.get_output_port(), "y_out")
    source = inner.build("source")
    # The sink sits in another nested diagram, fed through its exported input.
    lb = DiagramBuilder()
    sink = lb.add_system(VectorLogSink(2, name="sink"))
    lb.export_input(sink.get_input_port(), "u")
    logger = lb.build("logger")
    b = DiagramBuilder()
    b.add_system(source)
    b.add_system(logger)
    b.connect(source.get_output_port(), logger.get_input_port())
    sim = Simulator(b.build())
    # Without state or timed events the first step goes straight to the final time.
    with np.errstate(invalid="ignore"):
        with pytest.raises(NonFiniteOutputError, match=r"output port 'y' of system 'deep_clock' is nan .*"
                                                       r"at t=1\.0, .*system 'sink' \(input port 'data'\)"):
            sim.advance_to(1.0)


def test_states_are_still_checked_when_outputs_are_allowed():
    class Blowup(LeafSystem):
        def __init__(self):
            super().__init__("blowup")
            self.declare_continuous_state(1)

        def time_derivatives(self, context):
            return [math.nan if context.time > 0.2 else 1.0]

    sim = Simulator(Blowup(), integrator="explicit_euler", max_step=H, allow_non_finite_outputs=True)
    with pytest.raises(NonFiniteStateError, match="system 'blowup'"):
        sim.advance_to(1.0)


# ---------------------------------------------------------------------- OutputPort.eval
def test_port_eval_of_a_nan_output_raises_naming_system_port_and_time():
    clock = SqrtClock()
    ctx = clock.create_default_context()
    ctx.set_time(0.5)
    with np.errstate(invalid="ignore"):
        with pytest.raises(NonFiniteOutputError, match=r"output port 'y' of system 'clock' is nan "
                                                       r"\(entry 1 of 2\) at t=0\.5"):
            clock.get_output_port().eval(ctx)
        y = clock.get_output_port().eval(ctx, allow_non_finite=True)
    assert y[0] == 0.5 and math.isnan(y[1])
    ctx.set_time(0.21)
    np.testing.assert_allclose(clock.get_output_port().eval(ctx), [0.21, 0.3], rtol=1e-14)


def test_port_eval_of_a_diagram_output_names_the_leaf_that_computed_it():
    b = DiagramBuilder()
    src = b.add_system(NanAtStart())
    b.export_output(src.get_output_port(), "exported")
    d = b.build()
    ctx = d.create_default_context()
    with pytest.raises(NonFiniteOutputError, match=r"output port 'exported' of system '.*' \(computed by "
                                                   r"output port 'out' of system 'nan_source'\) is inf"):
        d.get_output_port().eval(ctx)
    # The subsystem's own port, evaluated in the diagram context, names itself.
    with pytest.raises(NonFiniteOutputError, match=r"output port 'out' of system 'nan_source' is inf"):
        src.get_output_port().eval(ctx)


def test_port_eval_accepts_large_finite_values_whose_sum_overflows():
    big = ConstantVectorSource([1e308, 1e308, -1e308])
    ctx = big.create_default_context()
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(big.get_output_port().eval(ctx), [1e308, 1e308, -1e308])
    wide = ConstantVectorSource(np.full(40, 1e308))      # the numpy-sum branch (> 32 entries)
    with np.errstate(over="ignore"):
        assert wide.get_output_port().eval(wide.create_default_context()).shape == (40,)
