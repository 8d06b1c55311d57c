"""EventSchedule: the one object holding a simulation's events, pending updates, witness
state and statistics (systems.analysis.event_schedule), alone and as the Simulator's."""
import numpy as np
import pytest

from systems import DiagramBuilder, LeafSystem, SystemCallbackError
from systems.analysis import Simulator
from systems.analysis.event_schedule import EventSchedule, merge_tolerance
from systems.primitives import ConstantVectorSource, ZeroOrderHold


class Counter(LeafSystem):
    """xd <- xd + 1 every ``period``; publishes record the (time, xd) they see."""

    def __init__(self, period=0.25, publish_period=0.1, name="counter"):
        super().__init__(name)
        self.declare_discrete_state([0.0])
        self.seen = []
        self.declare_periodic_discrete_update(period, 0.0, lambda c: c.discrete_state + 1.0)
        self.declare_periodic_publish(publish_period, 0.0,
                                      lambda c: self.seen.append((c.time, c.discrete_state[0])))


def test_schedule_of_periodic_events_and_their_pending_updates():
    s = Counter()
    ctx = s.create_default_context()
    sched = EventSchedule(s, ctx)
    assert [te.event.kind for te in sched.timed] == ["discrete", "publish"]
    sched.start(0.0)
    assert sched.next_time == 0.0
    assert len(sched.due(0.0)) == 2
    # end of a step at 0: the publish runs (sees x-(0)), the update becomes pending
    sched.run_end_of_step(0.0, sched.due(0.0), ())
    assert s.seen == [(0.0, 0.0)]
    assert [e.kind for e, _ in sched.pending] == ["discrete"]
    assert sched.next_time == pytest.approx(0.1)     # publish k=1; the update's next is 0.25
    assert sched.run_start_of_step(0.0) is True       # applies it
    assert ctx.discrete_state[0] == 1.0 and sched.pending == []
    assert sched.run_start_of_step(0.0) is False      # nothing left
    assert sched.stats["discrete_updates"] == 1 and sched.stats["publishes"] == 1
    # restart from a later time: scheduled from there (first occurrence at or after it)
    sched.pending.append(("stale", ctx))
    sched.start(0.3)
    assert sched.pending == [] and sched.next_time == pytest.approx(0.3)
    assert [te.t_next for te in sched.timed] == pytest.approx([0.5, 0.3])
    sched.reset_statistics()
    assert set(sched.stats.values()) == {0}


def test_events_within_the_merge_tolerance_are_due_together():
    b = DiagramBuilder()
    src = b.add_system(ConstantVectorSource([1.0]))
    z1 = b.add_system(ZeroOrderHold(0.1, 1, name="z1"))
    z2 = b.add_system(ZeroOrderHold(0.3, 1, name="z2"))
    b.connect(src.get_output_port(), z1.get_input_port())
    b.connect(src.get_output_port(), z2.get_input_port())
    d = b.build()
    sched = EventSchedule(d, d.create_default_context())
    sched.start(0.05)
    for _ in range(2):   # 0.1, 0.2 (z1 only)
        due = sched.due(sched.next_time)
        assert len(due) == 1
        sched.run_end_of_step(sched.next_time, due, ())
    t = sched.next_time   # 3 * 0.1 and 1 * 0.3 differ by rounding only
    assert abs(t - 0.3) <= merge_tolerance(0.3)
    assert {te.context.system.name for te in sched.due(t)} == {"z1", "z2"}


class Falling(LeafSystem):
    """No continuous state; a witness on time alone: g = 0.3 - t."""

    def __init__(self):
        super().__init__("clock")
        self.declare_discrete_state([0.0])
        self.declare_witness_function("t=0.3", "positive_then_nonpositive",
                                      lambda c: 0.3 - c.time, self._hit)

    @staticmethod
    def _hit(context, state):
        state.discrete_state = np.array([context.time])


def test_witness_state_and_isolation_on_time_alone():
    s = Falling()
    ctx = s.create_default_context()
    sched = EventSchedule(s, ctx)
    sched.refresh_guards()
    assert sched.guard_values == [0.3]
    ctx.set_time(1.0)
    g1 = sched.guards()
    assert sched.any_triggered(sched.guard_values, g1)
    b, gb = sched.isolate(0.0, 1.0, g1, 1e-9, ctx.set_time)
    assert 0.3 <= b <= 0.3 + 1e-9 and gb[0] <= 0.0
    hits = sched.triggered(sched.guard_values, gb)
    assert [w.name for w, _ in hits] == ["t=0.3"] and sched.stats["witness_triggers"] == 1
    # the Simulator owns the same object and runs the on_trigger at the next step's start
    sim = Simulator(s)
    sim.advance_to(1.0)
    assert sim.get_context().discrete_state[0] == pytest.approx(0.3, abs=1e-9)
    assert sim.get_statistics()["witness_triggers"] == 1
    assert sim.get_statistics()["unrestricted_updates"] == 1


def test_simulator_statistics_live_in_its_schedule_across_reset_context():
    s = Counter()
    sim = Simulator(s)
    sim.advance_to(1.0)
    stats = sim.get_statistics()
    assert stats["discrete_updates"] == 4      # at 0, 0.25, 0.5, 0.75 (1.0 stays pending)
    assert stats["publishes"] == 11            # 0, 0.1, ..., 1.0
    sim.reset_context(s.create_default_context())
    sim.advance_to(0.5)
    assert sim.get_statistics()["discrete_updates"] == 4 + 2
    sim.reset_statistics()
    assert sim.get_num_steps_taken() == 0 and sim.get_statistics()["publishes"] == 0


def test_a_raising_callback_is_named_with_its_system_and_time():
    s = Counter()
    ctx = s.create_default_context()
    sched = EventSchedule(s, ctx)
    ev = sched.timed[0].event
    with pytest.raises(SystemCallbackError, match=r"system 'counter': tick at t=0.5 raised "
                                                  r"ZeroDivisionError"):
        sched.call(ev, ctx, 0.5, "tick", lambda c: 1 / 0)
