"""The written-out runs of steps (systems/analysis/_unrolled.py): a Simulator whose loop has
nothing to do between steps hands the steps up to its next stop to the stepper; the states,
the log, the counters and the state left after a failure are those of stepping one step at a
time (a monitor forces that), bit for bit, for runge_kutta3 and RK45 (whose single step is
the per-step Dormand-Prince code, so this also compares the two codes)."""
import math

import numpy as np
import pytest

from systems import DiagramBuilder, LeafSystem
from systems.analysis import NonFiniteStateError, Simulator
from systems.analysis._dopri import DormandPrinceStepper
from systems.errors import SystemCallbackError
from systems.primitives import LogVectorOutput


class _Pendulum(LeafSystem):
    """A damped, forced pendulum with a third state z' = -z; it may fail at ``t_fail``."""

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
            return np.array([v, math.nan, -z])
        return np.array([v, -9.81 * math.sin(q) - 0.2 * v + math.cos(2.0 * t), -z])


def _run(integrator, monitored, fail=None, t_fail=math.inf, period=0.25):
    b = DiagramBuilder("runs")
    plant = b.add_system(_Pendulum(fail, t_fail))
    log = LogVectorOutput(plant.get_output_port(), b, publish_period=period)
    d = b.build()
    ctx = d.create_default_context()
    ctx.set_continuous_state([1.0, 0.0, 0.5])
    sim = Simulator(d, ctx, integrator=integrator, accuracy=1e-7)
    if monitored:
        sim.set_monitor(lambda c: None)   # a monitor: one step per loop iteration
    error = None
    try:
        sim.advance_to(3.0)
    except (NonFiniteStateError, SystemCallbackError) as exc:
        error = (type(exc), str(exc))
    stats = sim.get_statistics()
    data = log.find_log(ctx)
    return (error, ctx.time, np.array(ctx.continuous_state).tobytes(),
            data.sample_times().tobytes(), data.data().tobytes(), stats["steps"],
            stats["derivative_evaluations"], stats["rejected_steps"])


@pytest.mark.parametrize("integrator", ["runge_kutta3", "RK45"])
def test_runs_of_steps_are_the_single_steps(integrator):
    quiet = _run(integrator, False)
    assert quiet == _run(integrator, True)
    assert quiet[0] is None and quiet[1] == 3.0 and quiet[5] > 40   # steps between the samples
    # against scipy (rtol 1e-7 on the simulator's side)
    from scipy.integrate import solve_ivp
    ref = solve_ivp(lambda t, y: [y[1], -9.81 * math.sin(y[0]) - 0.2 * y[1] + math.cos(2 * t),
                                  -y[2]], (0, 3), [1.0, 0.0, 0.5], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.frombuffer(quiet[2]), ref.y[:, -1], atol=1e-5)


@pytest.mark.parametrize("integrator", ["runge_kutta3", "RK45"])
@pytest.mark.parametrize("fail", ["nan", "raise"])
def test_a_failure_inside_a_run_leaves_what_single_steps_leave(integrator, fail):
    quiet = _run(integrator, False, fail, t_fail=1.3)
    assert quiet == _run(integrator, True, fail, t_fail=1.3)
    (error, message), t = quiet[0], quiet[1]
    assert error is (NonFiniteStateError if fail == "nan" else SystemCallbackError)
    if fail == "nan":   # the derivative's check, made by the run on a stage's entries
        assert message.startswith("time derivative of continuous state 1 of system "
                                  "'pendulum' is nan at t=")
    else:
        assert "system 'pendulum': time_derivatives raised RuntimeError" in message
    assert 1.0 < t <= 1.3 + 1e-12   # the last accepted (finite) state is kept
    assert np.all(np.isfinite(np.frombuffer(quiet[2])))


def test_dormand_prince_steps_are_its_tableau_bit_for_bit():
    """Each written-out RK45 step's state is the per-stage tableau code's (``_stages``, which
    the dense output uses) from the step's start, and runs of steps are single steps."""
    def f(t, x):
        return np.array([x[1], -2.0 * x[0] - 0.5 * x[1] + math.sin(t)])

    def stepped(use_run):
        s = DormandPrinceStepper(f, max_step=0.4, rtol=1e-6, atol=1e-9)
        s.reset(0.0, [1.0, 0.0])
        out = []
        for t_limit in (0.3, 1.7, 4.0):
            while s.t < t_limit:
                if use_run:
                    s.run(t_limit, math.inf, -math.inf, None)   # one step
                    assert s.run_steps == 1
                else:
                    s.step(t_limit)
                _, x_tab = s._stages(s.t_prev, s.x_prev.tolist(), s.t - s.t_prev, s._k0_prev)
                assert s.x.tolist() == x_tab
                out.append((s.t, s.x.tobytes(), s.t_prev, s.x_prev.tobytes(), s._h))
        return out, s.num_rejected

    single = stepped(False)
    assert stepped(True) == single and len(single[0]) > 15
