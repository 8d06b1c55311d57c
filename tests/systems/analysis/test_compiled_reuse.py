"""Compiled simulators reuse a structure's CasADi conversion and functions (never a stale
one), and ``Simulator(..., compiled="auto")`` picks the compiled simulator or falls back
with one note naming the block."""
import functools
import threading
import warnings

import casadi as ca
import numpy as np
import pytest
from scipy.linalg import expm

from solvers.compiled import CompiledFunction
from systems import DiagramBuilder, LeafSystem
from systems.analysis import CompiledFallbackWarning, Simulator
from systems.analysis.compiled import CompiledSimulator, empty_table, reuse_statistics
from systems.controllers import PidController
from systems.primitives import ConstantVectorSource, LogVectorOutput

KP, KI, KD = 10.0, 5.0, 2.0


class Msd(LeafSystem):
    """m q'' + c q' + k q = u with m, c, k baked into the expressions (attributes), and an
    output gain captured by a closure."""

    def __init__(self, c=0.5, k=2.0, out_gain=1.0):
        super().__init__("plant")
        self.c, self.k = c, k
        self.declare_continuous_state(2, num_q=1, num_v=1)
        self._u = self.declare_input_port("u", 1)
        self.declare_output_port("x", 2, lambda ctx: out_gain * ctx.continuous_state,
                                 feedthrough=False, prerequisites=["continuous_state"])

    def time_derivatives(self, context):
        x = context.continuous_state
        return np.array([x[1], self._u.eval(context)[0] - self.c * x[1] - self.k * x[0]])


def msd_pid(c=0.5, k=2.0, out_gain=1.0, log=True):
    b = DiagramBuilder("msd_pid")
    plant = b.add_system(Msd(c, k, out_gain))
    pid = b.add_system(PidController(KP, KI, KD, name="pid"))
    ref = b.add_system(ConstantVectorSource([1.0, 0.0], name="ref"))
    b.connect(plant.get_output_port(), pid.get_input_port_estimated_state())
    b.connect(ref.get_output_port(), pid.get_input_port_desired_state())
    b.connect(pid.get_output_port_control(), plant.get_input_port())
    if log:
        LogVectorOutput(plant.get_output_port(), b, publish_period=0.5)
    return b.build(), plant


def exact(t, c=0.5, k=2.0, g=1.0):
    """[q, v, z] of the closed loop at t (z: the PID's error integral), from rest."""
    A = np.array([[0.0, 1.0, 0.0], [-(k + KP * g), -(c + KD * g), KI], [-g, 0.0, 0.0]])
    b = np.array([0.0, KP, 1.0])
    return expm(np.block([[A, b[:, None]], [np.zeros((1, 4))]]) * t)[:3, 3]


def run(diagram, t=4.0, **kw):
    ctx = diagram.create_default_context()
    sim = Simulator(diagram, ctx, compiled=True, integrator="cvodes", accuracy=1e-10, **kw)
    sim.advance_to(t)
    log = [s for s in diagram.leaf_systems() if s.name.endswith("log")]
    data = log[0].find_log(ctx).data().copy() if log else None
    return np.array(ctx.continuous_state), data


def counts(fn):
    """(hits, misses) made by ``fn()``."""
    before = reuse_statistics()
    fn()
    after = reuse_statistics()
    return after["hits"] - before["hits"], after["misses"] - before["misses"]


def test_same_structure_reuses_the_conversion_and_reruns_are_bitwise():
    with empty_table():
        d, _ = msd_pid()
        first = {}
        assert counts(lambda: first.setdefault("r", run(d))) == (0, 1)
        again = {}
        assert counts(lambda: again.setdefault("r", run(d))) == (1, 0)
        twin, _ = msd_pid()  # another diagram object, built the same way
        other = {}
        assert counts(lambda: other.setdefault("r", run(twin))) == (1, 0)
    for r in (again["r"], other["r"]):
        assert np.array_equal(r[0], first["r"][0]) and np.array_equal(r[1], first["r"][1])
    np.testing.assert_allclose(first["r"][0], exact(4.0), atol=1e-7)  # [q, v, z]
    assert first["r"][1].shape == (2, 9)  # publish_period 0.5 on [0, 4]


@pytest.mark.parametrize("change", ["attribute", "closure", "structure"])
def test_a_changed_baked_constant_or_structure_is_not_reused(change):
    with empty_table():
        d, plant = msd_pid()
        run(d)
        if change == "attribute":   # the same diagram object, an attribute changed
            plant.k = 3.0
            expected, target = exact(4.0, k=3.0), d
        elif change == "closure":   # a constant captured by an output callback
            target, _ = msd_pid(out_gain=2.0)
            expected = exact(4.0, g=2.0)
        else:                       # no log sink: another structure
            target, _ = msd_pid(log=False)
            expected = exact(4.0)
        result = {}
        assert counts(lambda: result.setdefault("r", run(target))) == (0, 1)
    np.testing.assert_allclose(result["r"][0], expected, atol=1e-7)


class Decay(LeafSystem):
    """x' = -a x with ``a`` a numeric parameter (a symbol of the conversion)."""

    def __init__(self):
        super().__init__("decay")
        self.declare_continuous_state(1)
        self.declare_numeric_parameter("a", [1.0])

    def time_derivatives(self, context):
        return -context.get_parameter("a") * context.continuous_state


def test_a_numeric_parameter_lives_in_the_context_and_reuses_the_functions():
    with empty_table():
        d = Decay()
        finals = []
        for a in (1.0, 2.5):
            ctx = d.create_default_context()
            ctx.set_continuous_state([1.0])
            ctx.set_parameter("a", [a])
            sim = Simulator(d, ctx, compiled=True, integrator="runge_kutta4", max_step=1e-3)
            sim.advance_to(1.0)
            finals.append(float(ctx.continuous_state[0]))
        assert reuse_statistics()["entries"] == 1
    np.testing.assert_allclose(finals, np.exp([-1.0, -2.5]), rtol=1e-10)


def test_each_thread_has_its_own_entry():
    with empty_table():
        d, _ = msd_pid(log=False)
        run(d)
        out = {}
        th = threading.Thread(target=lambda: out.setdefault("r", run(d)))
        th.start()
        th.join()
        assert reuse_statistics()["entries"] == 2
    assert np.array_equal(out["r"][0], run(d)[0])


# ---------------------------------------------------------------------- compiled="auto"
def test_auto_compiles_a_symbolic_diagram_and_matches_the_interpreted_run():
    d, _ = msd_pid()
    finals = {}
    for mode in (False, "auto"):
        ctx = d.create_default_context()
        with warnings.catch_warnings():
            warnings.simplefilter("error", CompiledFallbackWarning)
            sim = Simulator(d, ctx, compiled=mode, accuracy=1e-9)
        assert isinstance(sim, CompiledSimulator) == (mode == "auto")
        sim.advance_to(4.0)
        finals[mode] = np.array(ctx.continuous_state)
    assert sim.integrator == "cvodes" and sim.get_system() is d
    np.testing.assert_allclose(finals["auto"], finals[False], atol=1e-7)
    np.testing.assert_allclose(finals["auto"], exact(4.0), atol=1e-7)


def test_auto_keeps_a_fixed_step_scheme_and_its_step():
    d, _ = msd_pid(log=False)
    finals = []
    for mode in (False, "auto"):
        ctx = d.create_default_context()
        sim = Simulator(d, ctx, compiled=mode, integrator="runge_kutta4", max_step=1e-2)
        sim.advance_to(2.0)
        finals.append(np.array(ctx.continuous_state))
    assert isinstance(sim, CompiledSimulator) and sim.integrator == "runge_kutta4"
    np.testing.assert_allclose(finals[1], finals[0], rtol=0, atol=1e-12)  # the same scheme


class NotSymbolic(LeafSystem):
    def __init__(self):
        super().__init__("numpy_only")
        self.declare_continuous_state(1)

    def time_derivatives(self, context):
        return np.array([-float(context.continuous_state[0])])


class Ball(LeafSystem):
    """A falling point with a witness at the ground."""

    def __init__(self):
        super().__init__("ball")
        self.declare_continuous_state(2, num_q=1, num_v=1)
        self.declare_witness_function("ground", "positive_then_nonpositive",
                                      lambda ctx: ctx.continuous_state[0])

    def time_derivatives(self, context):
        return np.array([context.continuous_state[1], -9.81])


@pytest.mark.parametrize("system, kw, culprit", [
    (NotSymbolic, {}, "'numpy_only' (NotSymbolic)"),
    (Ball, {}, "witness function 'ground'"),
    (Decay, {"integrator": "semi_explicit_euler"}, "semi_explicit_euler"),
])
def test_auto_falls_back_with_one_note_naming_the_culprit(system, kw, culprit):
    sys_ = system()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sim = Simulator(sys_, compiled="auto", max_step=0.01, **kw)
    notes = [w for w in caught if issubclass(w.category, CompiledFallbackWarning)]
    assert type(sim) is Simulator and len(notes) == 1
    text = str(notes[0].message)
    assert "\n" not in text and culprit in text and "runs interpreted" in text


def test_a_structure_that_does_not_convert_is_tried_once():
    with empty_table():
        d = NotSymbolic()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CompiledFallbackWarning)
            assert counts(lambda: Simulator(d, compiled="auto")) == (0, 1)
            assert counts(lambda: Simulator(d, compiled="auto")) == (1, 0)


def test_unknown_compiled_value_is_refused():
    with pytest.raises(ValueError, match="'auto'.*'fast'"):
        Simulator(Decay(), compiled="fast")


def test_auto_switches_to_the_interpreted_simulator_for_a_monitor():
    d, _ = msd_pid(log=False)
    ctx = d.create_default_context()
    sim = Simulator(d, ctx, compiled="auto", accuracy=1e-9)
    assert isinstance(sim, CompiledSimulator)
    sim.advance_to(1.0)  # compiled up to t = 1
    seen = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sim.set_monitor(lambda c: seen.append(c.time))
    assert type(sim) is Simulator and "set_monitor needs it" in str(caught[0].message)
    sim.advance_to(4.0)  # interpreted from t = 1, monitor called every step
    assert seen[0] == 1.0 and len(seen) > 10 and seen[-1] == 4.0  # initialize at t = 1, then steps
    np.testing.assert_allclose(ctx.continuous_state, exact(4.0), atol=1e-7)
    plain = Simulator(d, compiled=True)
    with pytest.raises(TypeError, match="set_monitor needs the interpreted Simulator"):
        plain.set_monitor(lambda c: None)


def test_a_whole_run_reuses_its_traced_functions_and_driver():
    pytest.importorskip("multibody.plants")
    from solvers.compiled import find_compiler
    if find_compiler() is None:
        pytest.skip("needs a C compiler")
    from test_compiled_time_stepping import box_scene
    with empty_table():
        d, _, ctx = box_scene()
        c1, c2, c3 = ctx.clone(), ctx.clone(), ctx.clone()
        assert counts(lambda: Simulator(d, c1, compiled=True).advance_to(0.1)) == (0, 1)
        assert counts(lambda: Simulator(d, c2, compiled=True).advance_to(0.1)) == (1, 0)
    assert np.array_equal(np.asarray(c2.discrete_state), np.asarray(c1.discrete_state))
    Simulator(d, c3).advance_to(0.1)  # interpreted
    np.testing.assert_allclose(np.asarray(c2.discrete_state), np.asarray(c3.discrete_state),
                               rtol=0, atol=1e-9)


def _decay(k, x):
    return -k * x


class _Gain(np.ndarray):
    """An ndarray subclass (its content is in the array's buffer, not in a __dict__)."""


class _Decay(LeafSystem):
    """xdot = -k x with k given three ways the conversion bakes in: an abstract state's
    model value, a functools.partial, or an ndarray subclass."""

    def __init__(self, k, how):
        super().__init__("decay")
        self.how = how
        self.declare_continuous_state(1, initial=[1.0])
        if how == "abstract":
            self.declare_abstract_state(k)
        elif how == "partial":
            self.f = functools.partial(_decay, k)
        else:
            self.gain = np.array([[k]]).view(_Gain)
        self.declare_output_port("x", 1, lambda c: c.continuous_state, feedthrough=False,
                                 prerequisites=["continuous_state"])

    def time_derivatives(self, c):
        x = c.continuous_state
        if self.how == "abstract":
            return -c.get_abstract_state(0) * x
        if self.how == "partial":
            return self.f(x)
        return -self.gain[0, 0] * x


@pytest.mark.parametrize("how", ["abstract", "partial", "subclass"])
def test_constants_held_where_the_key_must_look_inside_are_not_reused_stale(how):
    with empty_table():
        for k in (1.0, 5.0):
            sim = Simulator(_Decay(k, how), compiled=True, integrator="cvodes", accuracy=1e-10)
            sim.advance_to(1.0)
            assert sim.get_context().continuous_state[0] == pytest.approx(np.exp(-k), rel=1e-6)
        assert reuse_statistics()["entries"] == 2


@pytest.mark.parametrize("kw", [dict(accuracy=-1.0), dict(atol=-1.0), dict(max_step=float("nan"))])
def test_auto_refuses_the_options_the_interpreted_simulator_refuses(kw):
    name = next(iter(kw))
    with pytest.raises(ValueError, match=name):
        Simulator(_Decay(1.0, "partial"), compiled="auto", **kw)
    with pytest.raises(ValueError, match=name):
        Simulator(_Decay(1.0, "partial"), **kw)


class _Tabled(LeafSystem):
    """x' = 1 - x, holding a numeric CompiledFunction it does not trace (as a tree's functions
    sit in a plant): a call between two runs writes the function's scratch buffers."""

    def __init__(self):
        super().__init__("tabled")
        self.declare_continuous_state(1)
        x = ca.SX.sym("x", 2)
        self.table = CompiledFunction(ca.Function("double", [x], [2 * x]), backend="casadi")

    def time_derivatives(self, c):
        return 1.0 - c.continuous_state


def test_a_compiled_function_called_between_runs_keeps_the_key():
    with empty_table():
        s = _Tabled()
        finals = []
        for arg in ([1.0, 2.0], [3.0, -4.0]):
            np.testing.assert_array_equal(np.ravel(s.table(np.array(arg))), 2 * np.array(arg))
            got = counts(lambda: finals.append(run(s, t=1.0)[0][0]))
            assert got == ((0, 1) if len(finals) == 1 else (1, 0))
        assert reuse_statistics()["entries"] == 1
    assert finals[0] == finals[1]                          # bitwise: the same functions
    assert finals[0] == pytest.approx(1.0 - np.exp(-1.0), rel=1e-8)
