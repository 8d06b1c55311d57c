"""The C loops of the small states' runge_kutta3 and RK45 runs (systems/analysis/_native_runs.py)
give the Python loops' results bit for bit: states, logs, counters, and what a failure leaves
(the error, its message and cause, the last accepted state), in runs of steps and in single
steps -- each comparison counts the C loop's calls, so a run that silently fell back to the
Python loop fails it. Without a compiler, with DYNABLOCKS_NO_NATIVE_RUNS set or when the build
fails (one CompilationWarning) the Python loop runs and gives the same bits."""
import math
import warnings

import numpy as np
import pytest

from solvers import compiled
from solvers.errors import CompilationWarning, CompileError
from systems import DiagramBuilder, LeafSystem
from systems.analysis import NonFiniteStateError, SimulationError, Simulator
from systems.analysis import _bogacki_shampine, _native_runs
from systems.errors import PortValueError, SystemCallbackError
from systems.primitives import LogVectorOutput

_KERNEL_OF = {"runge_kutta3": "bs3", "RK45": "dopri"}


@pytest.fixture
def c_calls(monkeypatch):
    """The C loops' calls, counted per kernel (``{"bs3": n, "dopri": n}``); skips the test
    where the C loop cannot be built (checked when the test runs, not at collection)."""
    if _native_runs._kernel() is None:
        pytest.skip("no C compiler or Python headers: the C loop is not built")
    calls = {"bs3": 0, "dopri": 0}

    def counting(name, kernel):
        def run(*args):
            calls[name] += 1
            return kernel(*args)
        return run
    monkeypatch.setattr(_native_runs, "_KERNELS", {
        name: counting(name, _native_runs._kernel(name)) for name in ("bs3", "dopri")})
    return calls


@pytest.fixture
def fresh_kernels(monkeypatch):
    """A process that has not looked for the C loop yet (restored afterwards)."""
    monkeypatch.setattr(_native_runs, "_KERNELS", {})


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


def _compared(calls, integrator, **kw):
    """The run in C (asserting the C loop was called) and the Python loop's (asserting it
    was not): both results."""
    kernel = _KERNEL_OF[integrator]
    before = dict(calls)
    c_loop = _run(True, integrator=integrator, **kw)
    assert calls[kernel] > before[kernel], "the C loop did not run"
    middle = dict(calls)
    python_loop = _run(False, integrator=integrator, **kw)
    assert calls == middle, "the C loop ran with ENABLED = False"
    return c_loop, python_loop


@pytest.mark.parametrize("integrator", ["runge_kutta3", "RK45"])
@pytest.mark.parametrize("lag", [True, False])
@pytest.mark.parametrize("monitored", [False, True])
@pytest.mark.parametrize("fail", [None, "nan", "raise", "jump"])
def test_the_c_loop_gives_the_python_loops_bits(c_calls, monitored, fail, lag, integrator):
    t_fail = math.inf if fail is None else 1.3
    c_loop, python_loop = _compared(c_calls, integrator, monitored=monitored, fail=fail,
                                    t_fail=t_fail, lag=lag)
    assert c_loop == python_loop
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
def test_loose_and_tight_tolerances(c_calls, integrator):
    for accuracy in (1e-3, 1e-10):
        c_loop, python_loop = _compared(c_calls, integrator, monitored=False,
                                        accuracy=accuracy)
        assert c_loop == python_loop


def _python_loops():
    """The Python loops' results (the reference of the fallbacks)."""
    return [_run(False, False, integrator=i) for i in ("runge_kutta3", "RK45")]


def _fallbacks():
    """Runs with the C loop switched on, as a fallback gives them: no kernel is asked."""
    return [_run(True, False, integrator=i) for i in ("runge_kutta3", "RK45")]


def test_without_a_compiler_the_python_loop_runs(monkeypatch, fresh_kernels):
    reference = _python_loops()
    monkeypatch.setattr(compiled, "find_compiler", lambda *a, **k: None)
    with warnings.catch_warnings(record=True) as caught:   # leaving the fast path: said once
        warnings.simplefilter("always")
        assert _native_runs._kernel() is None and _native_runs._kernel("dopri") is None
    ours = [str(w.message) for w in caught if issubclass(w.category, CompilationWarning)]
    assert len(ours) == 1 and "no C compiler was found" in ours[0], ours
    assert _native_runs.native_run(3, None, None, None, None, error_weights=(0, 0, 0, 0),
                                  exponent=-1 / 3, max_step=0.1, atol=1e-9, rtol=1e-6,
                                  stretch=0.01, name="runge_kutta3") is None
    fallback = _fallbacks()
    assert fallback == reference and fallback[0][1] == fallback[1][1] == 3.0


def test_without_python_headers_the_python_loop_runs_and_says_why(monkeypatch, tmp_path,
                                                                 fresh_kernels):
    reference = _python_loops()
    monkeypatch.setattr(_native_runs.sysconfig, "get_paths", lambda: {"include": str(tmp_path)})
    monkeypatch.setattr(compiled, "find_compiler", lambda *a, **k: ["cc"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fallback = _fallbacks() + _fallbacks()[:1]
        assert _native_runs._kernel() is None and _native_runs._kernel("dopri") is None
    ours = [str(w.message) for w in caught if issubclass(w.category, CompilationWarning)]
    assert len(ours) == 1, ours
    assert "C headers are missing" in ours[0] and str(tmp_path / "Python.h") in ours[0]
    assert fallback == reference + reference[:1]


@pytest.mark.parametrize("value, off", [("1", True), ("yes", True), ("0", False), ("", False)])
def test_the_environment_variable_switches_the_c_loops_off(monkeypatch, fresh_kernels,
                                                           value, off):
    monkeypatch.setenv("DYNABLOCKS_NO_NATIVE_RUNS", value)
    assert _native_runs.switched_off() is off
    if not off:   # "0" and "" mean not set: the C loop as without the variable
        if compiled.find_compiler() is None:
            pytest.skip("no C compiler: the C loop is not built anyway")
        assert _native_runs._kernel() is not None and _native_runs._kernel("dopri") is not None
        return
    reference = _python_loops()
    assert _native_runs._kernel() is None and _native_runs._kernel("dopri") is None
    assert _fallbacks() == reference


def test_a_failed_build_warns_once_and_the_python_loop_runs(monkeypatch, tmp_path,
                                                            fresh_kernels):
    reference = _python_loops()
    (tmp_path / "Python.h").write_text("")   # headers and a compiler found, the build fails
    monkeypatch.setattr(_native_runs.sysconfig, "get_paths", lambda: {"include": str(tmp_path)})
    monkeypatch.setattr(compiled, "find_compiler", lambda *a, **k: ["cc"])

    def broken(*args, **kwargs):
        raise CompileError("cc: internal error (a test's)")
    monkeypatch.setattr(compiled, "load_c_library", broken)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fallback = _fallbacks() + _fallbacks()[:1]
        assert _native_runs._kernel() is None and _native_runs._kernel("dopri") is None
    ours = [w for w in caught if issubclass(w.category, CompilationWarning)]
    assert len(ours) == 1, [str(w.message) for w in caught]
    message = str(ours[0].message)
    assert "runge_kutta3 and RK45" in message and "Python loops run instead" in message
    assert "CompileError: cc: internal error (a test's)" in message
    assert fallback == reference + reference[:1]


class _OwnEval(_Pendulum):
    """A system evaluating its derivatives itself (no list form: the C loop calls the
    array-valued derivative function); ``form`` its value's form."""

    def __init__(self, form="array"):
        super().__init__()
        self.form = form

    def eval_time_derivatives(self, context):
        value = self.time_derivatives(context)
        if self.form == "array":
            return np.asarray(value, dtype=float)
        if self.form == "tuple":
            return tuple(value)
        if self.form == "list":
            return [float(v) for v in value]
        return list(value)[:2]   # "short": one entry missing


def _own_eval_run(native, form, integrator):
    _native_runs.ENABLED = native
    try:
        plant = _OwnEval(form)
        ctx = plant.create_default_context()
        ctx.set_continuous_state([1.0, 0.0, 0.5])
        sim = Simulator(plant, ctx, integrator=integrator, accuracy=1e-8)
        sim.advance_to(2.0)
    finally:
        _native_runs.ENABLED = True
    return np.array(ctx.continuous_state).tobytes(), sim.get_statistics()


@pytest.mark.parametrize("integrator", ["runge_kutta3", "RK45"])
def test_a_system_evaluating_its_own_derivatives(c_calls, integrator):
    kernel = _KERNEL_OF[integrator]
    c_loop = _own_eval_run(True, "array", integrator)
    assert c_calls[kernel] > 0
    n = c_calls[kernel]
    assert c_loop == _own_eval_run(False, "array", integrator)
    assert c_calls[kernel] == n


@pytest.mark.parametrize("native", [True, False])
@pytest.mark.parametrize("integrator", ["runge_kutta3", "RK45"])
def test_own_derivatives_as_a_tuple_or_list_are_converted_and_checked(native, integrator):
    """A system's own eval_time_derivatives may return a tuple or list: converted as a port
    value (the same bits as the array); a wrong size is a PortValueError naming the system."""
    reference = _own_eval_run(False, "array", integrator)
    assert _own_eval_run(native, "tuple", integrator) == reference
    assert _own_eval_run(native, "list", integrator) == reference
    with pytest.raises(PortValueError, match=r"time derivatives of system 'pendulum': got a "
                                             r"value of size 2, expected size 3"):
        _own_eval_run(native, "short", integrator)


def _bs3_run(native, x, steps_to=1.0):
    """``runge_kutta3``'s run of x' = (-x0, x0 - 2 x1, 0.5) from ``x`` to ``steps_to``: what
    it saves (floats and the states' native float64 bits)."""
    saved = []

    def f(t, y):
        y0, y1, y2 = y
        return [-y0, y0 - 2.0 * y1, 0.5]
    _native_runs.ENABLED = native
    try:
        run = _bogacki_shampine.unrolled_run(
            3, f, lambda h: None, lambda *a: saved.append(a),
            error_weights=(-5 / 72, 1 / 12, 1 / 9, -1 / 8), exponent=-1 / 3, max_step=0.5,
            atol=1e-10, rtol=1e-8, stretch=0.01, name="runge_kutta3")
    finally:
        _native_runs.ENABLED = True
    k0 = f(0.0, [float(v) for v in x])
    run(0.0, x, k0, steps_to, 0.01, math.inf, steps_to, lambda *a: None)
    (t, xe, ke, tp, xp, kp, h, steps), = saved
    bits = [np.array(v, dtype=float).tobytes() for v in (xe, ke, xp, kp)]
    return t, tp, h, steps, bits


def test_any_form_of_state_array_gives_the_same_bits(c_calls):
    """A big-endian and a strided state array are read by value (not as raw native
    doubles): the same bits as the native array, in C and in Python."""
    native_x = np.array([1.0, 0.25, -2.0])
    reference = _bs3_run(False, native_x)
    assert reference[0] == 1.0 and reference[3] > 5
    for x in (native_x, native_x.astype(">f8"), np.repeat(native_x, 2)[::2]):
        assert _bs3_run(True, x) == reference
        assert _bs3_run(False, x) == reference
    assert c_calls["bs3"] == 3
    # x0(1) = exp(-1): the run is the ODE's
    assert abs(np.frombuffer(reference[4][0])[0] - math.exp(-1.0)) < 1e-7


def test_a_run_given_a_non_float_stops_at_the_first(c_calls):
    """The C loop reads its float arguments one at a time and raises the first failure
    (a TypeError naming the type), never reading on with an exception pending."""
    run = _native_runs.native_run(3, lambda t, x: (0.0, 0.0, 0.0), None, None, None,
                                  error_weights=(-5 / 72, 1 / 12, 1 / 9, -1 / 8),
                                  exponent=-1 / 3, max_step=0.1, atol=1e-9, rtol=1e-6,
                                  stretch=0.01, name="runge_kutta3")
    x = np.zeros(3)
    with pytest.raises(TypeError, match="not str"):
        run(0.0, x, [0.0] * 3, "one", 0.1, object(), math.inf, None)
    with pytest.raises(TypeError, match="not list"):
        run([0.0], x, [0.0] * 3, 1.0, "h", math.inf, math.inf, None)
    with pytest.raises(ValueError, match="the derivative has 2 values, expected 3"):
        run(0.0, x, [0.0] * 2, 1.0, 0.1, math.inf, math.inf, None)
    assert c_calls["bs3"] == 3
