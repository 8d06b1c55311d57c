"""``advance_to`` takes steps as Drake's ``Simulator::AdvanceTo`` does (issue 20).

Drake's loop (``drake/systems/analysis/simulator.cc``, ``AdvanceTo``) runs a step and then
stops once the time has reached the boundary, so every call takes at least one step: at
the current time a step of zero length that runs the updates pending from the previous
call and the per-step updates, then the per-step publishes and the monitor.
``AdvancePendingEvents`` is ``AdvanceTo(current time)``.

The expected numbers below are what pydrake 1.51 gives for the same systems (times are
binary fractions, so no event time is off by a rounding); ``test_drake_reference.py``
runs pydrake itself where it is installed and checks it still gives them. These tests run
without pydrake.
"""
import numpy as np
import pytest

from systems import DiagramBuilder
from systems.analysis import Simulator
from systems.primitives import ConstantVectorSource, Integrator, LogVectorOutput
from _systems_models import Counter, PerStep

P = 0.25      # period of the counter's update and publish
H = 0.125     # fixed step of the per-step system


def run_calls(calls, initialize, advance_to, snapshot):
    """Run ``calls`` (``"initialize"`` or a time to advance to) and return ``snapshot()``
    after each; ``test_drake_reference.py`` runs the same calls on pydrake's Simulator."""
    out = []
    for call in calls:
        initialize() if call == "initialize" else advance_to(call)
        out.append(snapshot())
    return out


COUNTER_CALLS = ("initialize", 0.75, 0.75, 0.875)
PER_STEP_CALLS = (0.0, 0.75, 0.75)


def run_counter():
    """Initialize, advance_to(0.75) twice, advance_to(0.875); after each: (time, xd, steps,
    discrete updates, publishes recorded)."""
    c = Counter(P)
    sim = Simulator(c)
    return run_calls(COUNTER_CALLS, sim.initialize, sim.advance_to,
                     lambda: (sim.get_context().time, sim.get_context().discrete_state[0],
                              sim.get_num_steps_taken(), sim.get_statistics()["discrete_updates"],
                              list(c.seen)))


def run_per_step():
    """RK2 with fixed steps H: advance_to(0), advance_to(0.75) twice; after each: (time,
    steps, the per-step publishes recorded)."""
    s = PerStep()
    sim = Simulator(s, integrator="runge_kutta2", fixed_step=True, max_step=H)
    return run_calls(PER_STEP_CALLS, sim.initialize, sim.advance_to,
                     lambda: (sim.get_context().time, sim.get_num_steps_taken(), list(s.seen)))


def run_logged_ramp():
    """A per-step log of the ramp 2 t (RK2, fixed steps 0.25): advance_to(1) twice; after
    each: (steps, sample times, samples)."""
    b = DiagramBuilder()
    src = b.add_system(ConstantVectorSource([2.0]))
    integ = b.add_system(Integrator(1))
    b.connect(src.get_output_port(), integ.get_input_port())
    log = LogVectorOutput(integ.get_output_port(), b)
    d = b.build()
    sim = Simulator(d, integrator="runge_kutta2", fixed_step=True, max_step=0.25)
    out = []
    for _ in range(2):
        sim.advance_to(1.0)
        data = log.find_log(sim.get_context())
        out.append((sim.get_num_steps_taken(), data.sample_times().tolist(), data.data()[0].tolist()))
    return out


def run_monitor():
    """Monitor times of initialize, advance_to(0.5), advance_to(0.5), advance_pending_events."""
    c = Counter(P)
    sim = Simulator(c)
    times = []
    sim.set_monitor(lambda ctx: times.append(ctx.time))
    sim.initialize()
    sim.advance_to(0.5)
    sim.advance_to(0.5)
    sim.advance_pending_events()
    return times, sim.get_num_steps_taken(), sim.get_context().discrete_state[0]


_SEEN3 = [(0.0, 0.0), (0.25, 1.0), (0.5, 2.0), (0.75, 3.0)]
EXPECTED_COUNTER = [
    (0.0, 0.0, 0, 0, [(0.0, 0.0)]),            # Initialize: publish at 0, update pending
    (0.75, 3.0, 3, 3, _SEEN3),                 # the update at 0.75 is pending
    (0.75, 4.0, 4, 4, _SEEN3),                 # advance_to(now): one step runs it
    (0.875, 4.0, 5, 4, _SEEN3),
]
EXPECTED_PER_STEP = [
    (0.0, 1, [(0.0, 0.0), (0.0, 1.0)]),        # advance_to(0) after Initialize: one step
    (0.75, 7, [(0.0, 0.0), (0.0, 1.0)] + [(k * H, k + 1.0) for k in range(1, 7)]),
    (0.75, 8, [(0.0, 0.0), (0.0, 1.0)] + [(k * H, k + 1.0) for k in range(1, 7)] + [(0.75, 8.0)]),
]
# Drake's VectorLog appends the second sample at 1.0; ours replaces a sample at the time
# of the previous one (VectorLog's documented rule), so the times are the same set.
EXPECTED_RAMP = [
    (4, [0.0, 0.25, 0.5, 0.75, 1.0], [0.0, 0.5, 1.0, 1.5, 2.0]),
    (5, [0.0, 0.25, 0.5, 0.75, 1.0], [0.0, 0.5, 1.0, 1.5, 2.0]),
]
EXPECTED_MONITOR = ([0.0, 0.25, 0.5, 0.5, 0.5], 4, 3.0)   # updates at 0, 0.25, 0.5


def test_advance_to_the_current_time_runs_the_pending_update_and_counts_a_step():
    assert run_counter() == EXPECTED_COUNTER


def test_advance_to_the_initial_time_takes_one_step_with_its_per_step_events():
    assert run_per_step() == EXPECTED_PER_STEP


def test_per_step_log_and_step_counts():
    assert run_logged_ramp() == EXPECTED_RAMP


def test_the_monitor_runs_in_zero_length_steps_and_advance_pending_events_is_one():
    assert run_monitor() == EXPECTED_MONITOR


def test_advance_pending_events_equals_advance_to_the_current_time():
    a, b = Counter(P), Counter(P)
    sa, sb = Simulator(a), Simulator(b)
    sa.advance_to(0.5)
    sb.advance_to(0.5)
    sa.advance_pending_events()
    sb.advance_to(0.5)
    assert a.seen == b.seen and sa.get_statistics() == pytest.approx(sb.get_statistics())
    np.testing.assert_array_equal(sa.get_context().discrete_state, [3.0])
    np.testing.assert_array_equal(sb.get_context().discrete_state, [3.0])
