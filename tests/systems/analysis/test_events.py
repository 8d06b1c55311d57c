"""Events in the Simulator: exact periodic times, simultaneous updates, sampled-data loops
against their closed-form discretization, ZeroOrderHold / DiscreteTimeDelay sampling,
witness isolation (bouncing ball), initialization and per-step events."""
import math

import numpy as np
import pytest
from scipy.linalg import expm
from scipy.signal import cont2discrete

from systems import DiagramBuilder, LeafSystem
from systems.analysis import Simulator
from systems.primitives import (DiscreteTimeDelay, LinearSystem, LogVectorOutput, Ramp,
                                ZeroOrderHold)


class Counter(LeafSystem):
    """Discrete-only system: xd <- xd + 1 every period; a publish records the times."""

    def __init__(self, period, offset):
        super().__init__("counter")
        self.declare_discrete_state(1)
        self.declare_periodic_discrete_update(period, offset, lambda c: c.discrete_state + 1.0)
        self.times = []
        self.declare_periodic_publish(period, offset, lambda c: self.times.append(c.time))


def test_periodic_times_exact_over_1e5_periods():
    period, offset, n = 1e-3, 5e-4, 100_000
    counter = Counter(period, offset)
    sim = Simulator(counter)
    t_end = offset + (n - 1) * period
    sim.advance_to(t_end)
    times = np.array(counter.times)
    expected = offset + np.arange(n) * period
    assert times.shape == (n,)
    assert np.array_equal(times, expected)            # bit-for-bit: no accumulation
    # Drake's order: the update due at exactly t_end stays pending (n - 1 applied) ...
    assert sim.get_context().discrete_state[0] == n - 1
    assert sim.get_context().time == t_end
    # Accumulating the period would have drifted (this is what the integer k avoids).
    acc = offset + np.cumsum(np.full(n - 1, period))
    assert np.any(acc != expected[1:])
    stats = sim.get_statistics()
    assert stats["discrete_updates"] == n - 1 and stats["publishes"] == n
    # ... and the next advance_to applies it first, at t_end, before time moves on.
    sim.advance_to(t_end + 0.5 * period)
    assert sim.get_context().discrete_state[0] == n
    assert len(counter.times) == n


class Mirror(LeafSystem):
    """xd <- (other's output) + 1 each period; output xd."""

    def __init__(self, name):
        super().__init__(name)
        self.declare_discrete_state(1)
        u = self.declare_input_port("u", 1)
        self.declare_periodic_discrete_update(0.1, 0.1, lambda c: u.eval(c) + 1.0)
        self.declare_output_port("y", 1, lambda c: c.discrete_state, feedthrough=False)


def test_simultaneous_updates_use_the_pre_update_context():
    b = DiagramBuilder()
    a1, a2 = b.add_system(Mirror("a")), b.add_system(Mirror("b"))
    b.connect(a1.get_output_port(), a2.get_input_port())
    b.connect(a2.get_output_port(), a1.get_input_port())
    sim = Simulator(b.build())
    sim.advance_to(0.5)
    # Sequential updates would give (1, 2), (3, 4), ...; simultaneous ones keep them equal.
    # The updates at 0.1 ... 0.4 are applied; the one due at exactly 0.5 stays pending
    # until the next advance_to (Drake's order).
    np.testing.assert_array_equal(sim.get_context().discrete_state, [4.0, 4.0])
    sim.advance_to(0.55)
    np.testing.assert_array_equal(sim.get_context().discrete_state, [5.0, 5.0])


def test_zero_order_hold_and_delay_sample_at_exact_times():
    T = 0.1
    b = DiagramBuilder()
    ramp = b.add_system(Ramp(slope=1.0, name="ramp"))
    zoh = b.add_system(ZeroOrderHold(T, 1, name="zoh"))
    delay = b.add_system(DiscreteTimeDelay(T, 2, 1, name="delay"))
    b.connect(ramp.get_output_port(), zoh.get_input_port())
    b.connect(ramp.get_output_port(), delay.get_input_port())
    zlog = LogVectorOutput(zoh.get_output_port(), b, publish_period=T)
    dlog = LogVectorOutput(delay.get_output_port(), b, publish_period=T)
    diagram = b.build()
    sim = Simulator(diagram)
    sim.advance_to(2.0)
    ctx = sim.get_context()
    k = np.arange(21)
    for log in (zlog.find_log(ctx), dlog.find_log(ctx)):
        assert np.array_equal(log.sample_times(), k * T)
    # Drake's order: a publish at kT sees the state before the update at kT, i.e. the
    # sample taken at (k - 1)T (the initial value 0 at t = 0).
    np.testing.assert_allclose(zlog.find_log(ctx).data()[0], np.maximum(k - 1, 0) * T,
                               rtol=0, atol=1e-15)
    # The delay is a shift register of `held` samples, newest = u(mT), output = the oldest:
    # after the update at mT the output is u((m - held + 1) T); the publish at kT sees the
    # update of m = k - 1, so it logs u((k - held) T).
    held = delay.num_discrete_states()
    expected_delay = np.where(k - 1 >= held - 1, (k - held) * T, 0.0)
    np.testing.assert_allclose(dlog.find_log(ctx).data()[0], expected_delay, rtol=0, atol=1e-15)


def test_sampled_data_loop_matches_closed_form_discretization():
    T, N = 0.1, 30
    A = np.array([[0.0, 1.0], [-2.0, -0.5]])
    B = np.array([[0.0], [1.0]])
    Ac, Bc = np.array([[1.0]]), np.array([[-T, 0.0]])      # integral of -position
    Cc, Dc = np.array([[2.0]]), np.array([[-8.0, -1.5]])    # ki, -kp, -kd
    b = DiagramBuilder()
    plant = b.add_system(LinearSystem(A, B, np.eye(2), np.zeros((2, 1)), name="plant"))
    zoh = b.add_system(ZeroOrderHold(T, 2, name="zoh"))
    ctrl = b.add_system(LinearSystem(Ac, Bc, Cc, Dc, time_period=T, name="ctrl"))
    b.connect(plant.get_output_port(), zoh.get_input_port())
    b.connect(zoh.get_output_port(), ctrl.get_input_port())
    b.connect(ctrl.get_output_port(), plant.get_input_port())
    diagram = b.build()
    ctx = diagram.create_default_context()
    x0 = np.array([1.0, 0.0])
    diagram.get_subsystem_context(plant, ctx).set_continuous_state(x0)
    sim = Simulator(diagram, ctx, integrator="DOP853", accuracy=1e-12, max_step=1.0)
    # Closed form: x_{k+1} = Ad x_k + Bd u_k over each hold interval.
    Ad, Bd, *_ = cont2discrete((A, B, np.eye(2), np.zeros((2, 1))), T, method="zoh")
    x, s, xc = x0.copy(), np.zeros(2), np.zeros(1)
    for k in range(N):  # the updates due at exactly N T stay pending (Drake's order)
        s, xc = x.copy(), Ac @ xc + Bc @ s          # both updates from pre-update values
        u = Cc @ xc + Dc @ s
        x = Ad @ x + Bd @ u
    sim.advance_to(N * T)
    pc = diagram.get_subsystem_context(plant, sim.get_context())
    cc = diagram.get_subsystem_context(ctrl, sim.get_context())
    zc = diagram.get_subsystem_context(zoh, sim.get_context())
    np.testing.assert_allclose(pc.continuous_state, x, rtol=0, atol=1e-9)
    np.testing.assert_allclose(cc.discrete_state, xc, rtol=0, atol=1e-9)
    np.testing.assert_allclose(zc.discrete_state, s, rtol=0, atol=1e-9)
    assert np.linalg.norm(x) > 1e-3  # the loop is still moving: the comparison is not trivial
    # And Bd from the matrix exponential of the augmented matrix agrees with cont2discrete.
    M = expm(np.block([[A, B], [np.zeros((1, 3))]]) * T)
    np.testing.assert_allclose(M[:2, 2:], Bd, atol=1e-14)


class BouncingBall(LeafSystem):
    """z'' = -g; at z crossing 0 downward, v <- -e v (a witness and an unrestricted update)."""

    def __init__(self, e=0.8, g=9.81, z0=1.0):
        super().__init__("ball")
        self.e, self.g = e, g
        self.declare_continuous_state(2, num_q=1, num_v=1, initial=[z0, 0.0])
        self.declare_output_port("state", 2, lambda c: c.continuous_state, feedthrough=False)
        self.impacts = []
        self.declare_witness_function("ground", "positive_then_nonpositive",
                                      lambda c: c.continuous_state[0], self._bounce)

    def time_derivatives(self, context):
        return [context.continuous_state[1], -self.g]

    def _bounce(self, context, state):
        self.impacts.append(context.time)
        z, v = state.continuous_state
        state.set_continuous_state([z, -self.e * v])


def analytic_impacts(n, e=0.8, g=9.81, z0=1.0):
    t = math.sqrt(2 * z0 / g)
    v = g * t
    out = [t]
    for k in range(1, n):
        t += 2 * (e ** k) * v / g
        out.append(t)
    return np.array(out)


@pytest.mark.parametrize("integrator,kw", [("runge_kutta3", {}), ("RK45", {}),
                                           ("runge_kutta4", {"max_step": 0.01})])
def test_bouncing_ball_impact_times(integrator, kw):
    ball = BouncingBall()
    sim = Simulator(ball, integrator=integrator, **kw)
    expected = analytic_impacts(10)
    sim.advance_to(expected[-1] + 0.05)
    assert len(ball.impacts) == 10
    np.testing.assert_allclose(ball.impacts, expected, rtol=0, atol=1e-8)
    assert sim.get_statistics()["witness_triggers"] == 10
    # The stop time is just after the crossing (within the isolation tolerance).
    assert np.all(np.array(ball.impacts) >= expected - 1e-9)


class Clock(LeafSystem):
    """x = t with three witnesses of each direction."""

    def __init__(self):
        super().__init__("clock")
        self.declare_continuous_state(1)
        self.hits = {"up": [], "down": [], "both": []}
        self.declare_witness_function("up", "negative_then_nonnegative",
                                      lambda c: c.continuous_state[0] - 0.3, self._rec("up"))
        self.declare_witness_function("down", "positive_then_nonpositive",
                                      lambda c: 0.55 - c.continuous_state[0], self._rec("down"))
        self.declare_witness_function("both", "crosses_zero",
                                      lambda c: math.sin(2 * math.pi * c.continuous_state[0] + 0.5),
                                      self._rec("both"))

    def _rec(self, key):
        return lambda c, s: self.hits[key].append(c.time)

    def time_derivatives(self, context):
        return [1.0]


def test_witness_directions_and_tolerance():
    clock = Clock()
    sim = Simulator(clock, witness_tolerance=1e-9, max_step=0.25)
    sim.advance_to(1.5)
    assert len(clock.hits["up"]) == 1 and len(clock.hits["down"]) == 1
    assert 0 <= clock.hits["up"][0] - 0.3 <= 1e-9
    assert 0 <= clock.hits["down"][0] - 0.55 <= 1e-9
    roots = (np.arange(1, 4) * math.pi - 0.5) / (2 * math.pi)
    np.testing.assert_allclose(clock.hits["both"], roots, atol=1e-9)


class InitAndStep(LeafSystem):
    def __init__(self):
        super().__init__("init_and_step")
        self.declare_discrete_state(2)
        self.declare_continuous_state(1, initial=[1.0])
        self.log = []
        self.declare_initialization_unrestricted_update(self._init)
        self.declare_initialization_publish(lambda c: self.log.append(("init", c.time, c.discrete_state[0])))
        self.declare_per_step_publish(lambda c: self.log.append(("step", c.time, c.discrete_state[1])))
        self.declare_per_step_discrete_update(lambda c: c.discrete_state + np.array([0.0, 1.0]))
        self.declare_periodic_unrestricted_update(0.5, 0.25, self._kick)

    def _init(self, context, state):
        state.set_discrete_state([42.0, 0.0])

    def _kick(self, context, state):
        state.set_continuous_state(state.continuous_state + 10.0)

    def time_derivatives(self, context):
        return [0.0]


def test_initialization_per_step_and_periodic_unrestricted_events():
    s = InitAndStep()
    sim = Simulator(s, max_step=0.1)
    sim.initialize()
    assert s.log[0] == ("init", 0.0, 42.0)
    assert s.log[1] == ("step", 0.0, 0.0)      # per-step publish at initialization
    sim.advance_to(1.0)
    steps = sim.get_num_steps_taken()
    ctx = sim.get_context()
    assert ctx.discrete_state[1] == steps       # one per-step update after every step
    assert ctx.continuous_state[0] == 1.0 + 20.0  # kicks at 0.25 and 0.75
    times = [t for kind, t, _ in s.log if kind == "step"]
    assert 0.25 in times and 0.75 in times and times[-1] == 1.0
    assert len(times) == steps + 1
