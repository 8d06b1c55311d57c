"""The float steppers: Dormand-Prince (RK45 on small states) against scipy's RK45 step for step,
the analytic solution of a damped forced oscillator, limits, resets, rejections, state_at; the
written-out Bogacki-Shampine step bitwise equal to the generic tableau loop."""
import math

import numpy as np
import pytest
import scipy.integrate

from systems.analysis.integrators import ScipyStepper, make_stepper
from systems.analysis._dopri import DormandPrinceStepper
from systems.errors import StepSizeError


def _osc(t, x):
    return np.array([x[1], -2.0 * x[0] - 0.5 * x[1] + math.sin(t)])


def _exact(t):
    """x'' + 0.5 x' + 2 x = sin t, x(0) = 1, x'(0) = 0 (undetermined coefficients)."""
    A, B = 0.8, -0.4                              # particular solution A sin t + B cos t
    wd = math.sqrt(2.0 - 0.0625)
    c1 = 1.0 - B                                  # x(0) = 1
    c2 = (0.25 * c1 - A) / wd                     # x'(0) = 0
    e = math.exp(-0.25 * t)
    return e * (c1 * math.cos(wd * t) + c2 * math.sin(wd * t)) + A * math.sin(t) + B * math.cos(t)


def test_same_steps_as_scipy_rk45():
    s = DormandPrinceStepper(_osc, max_step=np.inf, rtol=1e-6, atol=1e-9)
    s.reset(0.0, [1.0, 0.0])
    r = scipy.integrate.RK45(_osc, 0.0, np.array([1.0, 0.0]), 10.0, rtol=1e-6, atol=1e-9)
    steps = 0
    while s.t < 10.0:
        s.step(10.0)
        r.step()
        steps += 1
        assert s.t == pytest.approx(r.t, rel=1e-8, abs=1e-12)   # rounding only
        np.testing.assert_allclose(s.x, r.y, rtol=1e-8, atol=1e-9)
    assert r.status == "finished" and steps > 20


def test_analytic_solution_and_limits():
    s = DormandPrinceStepper(_osc, max_step=0.5, rtol=1e-9, atol=1e-12)
    s.reset(0.0, [1.0, 0.0])
    for t_limit in (0.3, 1.7, 4.0, 10.0):   # moving limits are landed on exactly
        while s.t < t_limit:
            s.step(t_limit)
            assert s.t - s.t_prev <= 0.5
        assert s.t == t_limit
        assert s.x[0] == pytest.approx(_exact(t_limit), abs=1e-8)
    mid = 0.5 * (s.t_prev + s.t)
    assert s.state_at(mid)[0] == pytest.approx(_exact(mid), abs=1e-8)
    assert s.state_at(s.t) is s.x and s.state_at(s.t_prev) is s.x_prev


def test_reset_keeps_the_last_step_size_and_rejections_are_counted():
    s = DormandPrinceStepper(_osc, max_step=np.inf, rtol=1e-6, atol=1e-9)
    s.reset(0.0, [1.0, 0.0])
    for _ in range(5):
        s.step(10.0)
    h_next = s._h
    s.reset(s.t, [0.0, 50.0])        # a jump: the next step starts from the last proposal
    t0 = s.t
    s.step(10.0)
    assert s.num_rejected >= 1       # 50x the velocity: the first try is rejected
    assert s.t - t0 < h_next
    x_ref = scipy.integrate.solve_ivp(_osc, (t0, s.t), [0.0, 50.0], rtol=1e-11, atol=1e-12).y[:, -1]
    np.testing.assert_allclose(s.x, x_ref, atol=1e-5)


def test_make_stepper_picks_it_for_small_states_only():
    kw = dict(fixed_step=False, max_step=np.inf, rtol=1e-6, atol=1e-9)
    assert isinstance(make_stepper("RK45", _osc, size=2, **kw), DormandPrinceStepper)
    assert isinstance(make_stepper("RK45", _osc, size=40, **kw), ScipyStepper)
    assert isinstance(make_stepper("RK45", _osc, **kw), ScipyStepper)
    assert isinstance(make_stepper("DOP853", _osc, size=2, **kw), ScipyStepper)


def test_step_size_error_names_the_time():
    s = DormandPrinceStepper(lambda t, x: np.array([math.nan]), max_step=np.inf, rtol=1e-6,
                             atol=1e-9)
    s.reset(1.0, [1.0])
    with pytest.raises(StepSizeError, match="t=1.0"):
        s.step(2.0)


def _pendulum(t, x):
    return np.array([x[2], x[3], -9.81 * math.sin(x[0]) - 0.1 * x[2], -x[1] + math.cos(t)])


def test_written_out_bogacki_shampine_is_bitwise_the_generic_path(monkeypatch):
    from systems.analysis import integrators

    def run():
        s = make_stepper("runge_kutta3", _pendulum, fixed_step=False, max_step=0.3, rtol=1e-6,
                         atol=1e-9, size=4)
        s.reset(0.0, [1.0, 0.5, 0.0, 0.0])
        out = []
        for t_limit in (0.25, 3.0, 7.5):   # moving limits, landed on exactly
            while s.t < t_limit:
                s.step(t_limit)
                out.append((s.t, s.x.tobytes()))
        return out, s.num_rejected

    fast = run()
    monkeypatch.setattr(integrators, "RUNGE_KUTTA3", None)   # the generic tableau loop
    generic = run()
    assert fast == generic and len(fast[0]) > 50
    x_ref = scipy.integrate.solve_ivp(_pendulum, (0.0, 7.5), [1.0, 0.5, 0.0, 0.0], rtol=1e-11,
                                      atol=1e-12).y[:, -1]
    np.testing.assert_allclose(np.frombuffer(fast[0][-1][1]), x_ref, atol=1e-4)
