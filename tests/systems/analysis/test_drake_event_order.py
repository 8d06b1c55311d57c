"""Drake's Simulator semantics, each test stating the behaviour Drake documents.

Reference: ``drake/systems/analysis/simulator.h``, class ``Simulator``, section "How the
simulation is stepped": ``Step()`` runs the unrestricted updates, then the discrete updates
(from the post-unrestricted state), then integrates, then publishes at the end time (seeing
the state before the updates due then), then calls the monitor; ``Initialize()`` runs the
initialization updates, the publishes due at t0 (initialization, per-step, timed) and the
monitor.
"""
import math
import warnings

import numpy as np
import pytest

from solvers import ops
from systems import DiagramBuilder, LeafSystem
from systems.analysis import EventStatus, NonFiniteStateError, Simulator
from systems.primitives import LogVectorOutput, Ramp, ZeroOrderHold
from _systems_models import Counter, PerStep, _jump_then_sample, _sampled_data_loop


PERIOD = 0.1       # of the counter's update and publish (Counter(PERIOD) records (t, xd))


def test_publishes_at_t_see_the_state_before_the_updates_due_at_t():
    c = Counter(PERIOD)
    sim = Simulator(c)
    sim.initialize()
    # Drake: Initialize() publishes at t0 with x-(t0); the update due at t0 is pending.
    assert c.seen == [(0.0, 0.0)] and sim.get_context().discrete_state[0] == 0.0
    sim.advance_to(0.3)
    # Updates at 0, 0.1, 0.2 applied; the publish at 0.3 sees 3 and the update due at 0.3
    # is left for the next call (Drake's AdvanceTo stops before the step that would run it).
    assert [round(t, 12) for t, _ in c.seen] == [0.0, 0.1, 0.2, 0.3]
    assert [v for _, v in c.seen] == [0.0, 1.0, 2.0, 3.0]
    assert sim.get_context().discrete_state[0] == 3.0
    assert sim.get_statistics()["discrete_updates"] == 3
    assert sim.get_num_steps_taken() == 3
    # Drake's AdvanceTo always takes a step: at the current time, one of zero length that
    # runs the update pending at 0.3 (pydrake 1.51 does the same, see test_drake_reference).
    sim.advance_to(0.3)
    assert sim.get_context().discrete_state[0] == 4.0 and len(c.seen) == 4
    assert sim.get_num_steps_taken() == 4 and sim.get_context().time == 0.3
    sim.advance_to(0.35)                     # nothing pending: one step to 0.35
    assert sim.get_context().discrete_state[0] == 4.0 and len(c.seen) == 4
    assert sim.get_num_steps_taken() == 5


def test_per_step_updates_happen_at_the_start_of_each_step():
    s = PerStep()
    sim = Simulator(s, integrator="runge_kutta4", max_step=0.1)
    sim.initialize()
    assert s.seen == [(0.0, 0.0)]      # Initialize(): per-step publish, no per-step update
    sim.advance_to(1.0)
    n = sim.get_num_steps_taken()
    assert n == 10
    # The publish at the end of step k (at t = 0.1 k) sees the update made at its start.
    assert [v for _, v in s.seen] == [float(k) for k in range(n + 1)]
    assert [t for t, _ in s.seen] == pytest.approx([0.1 * k for k in range(n + 1)], abs=1e-12)
    assert sim.get_context().discrete_state[0] == n


def test_the_monitor_is_called_by_initialize_and_can_stop_the_run():
    c = Counter(PERIOD)
    sim = Simulator(c)
    calls = []
    sim.set_monitor(lambda ctx: calls.append(ctx.time))
    status = sim.initialize()
    assert calls == [0.0] and status.succeeded()
    sim.advance_to(0.25)
    assert calls == pytest.approx([0.0, 0.1, 0.2, 0.25], abs=1e-12)

    c2 = Counter(PERIOD)
    sim2 = Simulator(c2)
    sim2.set_monitor(lambda ctx: EventStatus.reached_termination("stop at once"))
    status = sim2.advance_to(1.0)              # initialize() runs the monitor first
    assert status.reason == "reached_termination" and status.message == "stop at once"
    assert sim2.get_context().time == 0.0 and sim2.get_num_steps_taken() == 0


def test_discrete_updates_see_the_unrestricted_updates_due_at_the_same_time():
    # Drake: x* <- unrestricted(t, x-); xd+ <- discrete(t, x*). Updates at 0.1, 0.2, 0.3.
    assert _jump_then_sample(0.35) == [30.0, 30.0]          # the sampler's is not 20


class TimeWitness(LeafSystem):
    """No continuous state: a discrete counter and a witness on time alone."""

    def __init__(self, t_star):
        super().__init__("time_witness")
        self.declare_discrete_state(1)
        self.declare_periodic_discrete_update(0.25, 0.0, lambda c: c.discrete_state + 1.0)
        self.hits = []
        self.declare_witness_function("alarm", "negative_then_nonnegative",
                                      lambda c: c.time - t_star, self._hit)

    def _hit(self, context, state):
        self.hits.append((context.time, context.discrete_state[0]))
        state.set_discrete_state(state.discrete_state + 100.0)


def test_witness_functions_fire_on_a_system_without_continuous_state():
    t_star = 0.6180339887
    w = TimeWitness(t_star)
    sim = Simulator(w, witness_tolerance=1e-10)
    sim.advance_to(1.1)
    assert len(w.hits) == 1
    t_hit, xd_at_hit = w.hits[0]
    assert 0.0 <= t_hit - t_star <= 1e-10       # isolated just after the crossing
    assert xd_at_hit == 3.0                      # updates at 0, 0.25, 0.5 applied by then
    # Updates at 0, 0.25, 0.5, 0.75, 1.0 plus the witness's +100.
    assert sim.get_context().discrete_state[0] == 105.0
    assert sim.get_statistics()["witness_triggers"] == 1


def test_compiled_and_interpreted_logs_follow_the_same_order():
    T = 0.1
    results = []
    for compiled in (False, True):
        b = DiagramBuilder()
        ramp = b.add_system(Ramp(slope=2.0, name="ramp"))
        zoh = b.add_system(ZeroOrderHold(T, 1, name="zoh"))
        b.connect(ramp.get_output_port(), zoh.get_input_port())
        log = LogVectorOutput(zoh.get_output_port(), b, publish_period=T)
        d = b.build()
        kw = {"integrator": "runge_kutta4"} if compiled else {}
        sim = Simulator(d, compiled=compiled, max_step=T, **kw)
        sim.advance_to(1.0)
        ctx = sim.get_context()
        data = log.find_log(ctx)
        k = np.arange(11)
        np.testing.assert_allclose(data.sample_times(), k * T, atol=1e-12)
        # The log at kT shows the sample taken at (k - 1)T: 2 (k - 1) T.
        np.testing.assert_allclose(data.data()[0], 2.0 * np.maximum(k - 1, 0) * T, atol=1e-12)
        # The update due at exactly 1.0 is pending: the held value is the sample at 0.9.
        assert d.get_subsystem_context(zoh, ctx).discrete_state[0] == pytest.approx(1.8, abs=1e-12)
        results.append(np.array(data.data()))
    np.testing.assert_array_equal(results[0], results[1])


def test_compiled_sampled_data_loop_leaves_the_update_at_the_final_time_pending():
    T = 0.1
    d, _ = _sampled_data_loop(T)
    held = []
    for compiled in (False, True):
        ctx = d.create_default_context()
        ctx.set_continuous_state([1.0])
        kw = {"integrator": "cvodes", "accuracy": 1e-12} if compiled else \
            {"integrator": "DOP853", "accuracy": 1e-12}
        sim = Simulator(d, ctx, compiled=compiled, **kw)
        sim.advance_to(0.5)
        held.append(np.array(sim.get_context().discrete_state))
        sim.advance_to(0.55)
        held.append(np.array(sim.get_context().discrete_state))
    # Plant x(t) = e^{0.5 t} before any control acts; ZOH samples at 0, 0.1, ...: at 0.5
    # the ZOH still holds the sample of 0.4; after 0.5 it holds that of 0.5.
    np.testing.assert_allclose(held[0], held[2], atol=1e-8)
    np.testing.assert_allclose(held[1], held[3], atol=1e-8)
    assert not np.allclose(held[0], held[1])


class Blowup(LeafSystem):
    """xdot = [-x0, sqrt(0.5 - t)]: the second derivative is NaN after t = 0.5."""

    def __init__(self):
        super().__init__("blowup")
        self.declare_continuous_state(2, initial=[1.0, 0.0])

    def time_derivatives(self, context):
        x = context.continuous_state
        return ops.vertcat(-x[0], ops.sqrt(0.5 - context.time))


@pytest.mark.parametrize("integrator", ["cvodes", "runge_kutta4", "explicit_euler"])
def test_a_nan_in_a_compiled_simulation_gives_one_named_error(integrator, capfd):
    sim = Simulator(Blowup(), compiled=True, integrator=integrator, max_step=0.01)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(NonFiniteStateError, match=r"continuous state 1 of system 'blowup'") as err:
            sim.advance_to(1.0)
    t_bad = float(str(err.value).split("t=")[1].split(";")[0].split(" ")[0].rstrip(")"))
    assert 0.5 <= t_bad <= 0.52
    assert len(caught) <= 1
    out, errtext = capfd.readouterr()
    # At most a line from CasADi, not a warning per retried CVODES step.
    assert len([ln for ln in (out + errtext).splitlines() if ln.strip()]) <= 2
    # The context keeps the last finite state, close to the NaN time.
    ctx = sim.get_context()
    assert np.all(np.isfinite(ctx.continuous_state)) and 0.45 <= ctx.time <= t_bad
    assert ctx.continuous_state[0] == pytest.approx(math.exp(-ctx.time), rel=1e-2)


def test_reset_context_and_realtime_rate():
    c = Counter(PERIOD)
    sim = Simulator(c)
    sim.advance_to(0.5)
    fresh = c.create_default_context()
    sim.reset_context(fresh)
    assert sim.get_context() is fresh
    c.seen.clear()
    sim.advance_to(0.2)
    assert [v for _, v in c.seen] == [0.0, 1.0, 2.0]
    assert sim.get_actual_realtime_rate() > 0.0
    with pytest.raises(ValueError, match="not a root context of system 'counter'"):
        sim.reset_context(Counter(PERIOD).create_default_context())
    with pytest.raises(TypeError, match="expected a Context"):
        sim.reset_context("context")
    sim.set_target_realtime_rate(0.0)
    assert sim.get_target_realtime_rate() == 0.0
    with pytest.raises(ValueError, match="rate must be a finite number"):
        sim.set_target_realtime_rate(-1.0)


class Init(LeafSystem):
    """An initialization unrestricted update (xd <- 42) and an initialization publish."""

    def __init__(self):
        super().__init__("init")
        self.declare_discrete_state(1)
        self.published = []
        self.declare_initialization_unrestricted_update(lambda c, s: s.set_discrete_state([42.0]))
        self.declare_initialization_publish(lambda c: self.published.append(c.discrete_state[0]))


def test_initialization_events_run_once_and_can_be_suppressed():
    s = Init()
    sim = Simulator(s)
    sim.initialize()
    assert sim.get_context().discrete_state[0] == 42.0 and s.published == [42.0]
    ctx = s.create_default_context()
    sim.reset_context(ctx)                  # reuse the simulator on an initialized state
    ctx.set_discrete_state([7.0])
    sim.initialize(suppress_initialization_events=True)   # Drake's InitializeParams
    assert ctx.discrete_state[0] == 7.0 and s.published == [42.0]
