"""Every primitive: numeric outputs against hand-computed values, and symbolic == numeric."""
import casadi as ca
import numpy as np
import pytest
from scipy.interpolate import CubicSpline

from systems import DiagramBuilder, PortValueError
from systems.primitives import (Adder, AffineSystem, ConstantVectorSource, Demultiplexer,
                                DiscreteTimeDelay, FirstOrderLowPassFilter, FunctionSystem, Gain,
                                Integrator, LinearSystem, LogVectorOutput, MatrixGain, Multiplexer,
                                PassThrough, Ramp, Saturation, Sine, Step, SymbolicVectorSystem,
                                TrajectorySource, VectorLogSink, ZeroOrderHold)
from solvers import ops
from _symbolic_check import symbolic_vs_numeric


def _ctx(system, t=0.0, x=None, xd=None):
    ctx = system.create_default_context()
    ctx.set_time(t)
    if x is not None:
        ctx.set_continuous_state(x)
    if xd is not None:
        ctx.set_discrete_state(xd)
    return ctx


def test_constant_vector_source_value_and_parameter():
    src = ConstantVectorSource([1.0, -2.0, 3.5])
    ctx = _ctx(src)
    np.testing.assert_array_equal(src.get_output_port().eval(ctx), [1.0, -2.0, 3.5])
    src.set_source_value(ctx, [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(src.get_output_port().eval(ctx), [0.0, 1.0, 2.0])
    assert not src.has_direct_feedthrough()
    assert symbolic_vs_numeric(src, ctx) == 1


def test_sine_value_and_derivatives():
    s = Sine(amplitude=[2.0, 1.0], frequency=[3.0, 0.5], phase=[0.1, 0.0])
    t = 0.7
    ctx = _ctx(s, t)
    a, w, p = np.array([2.0, 1.0]), np.array([3.0, 0.5]), np.array([0.1, 0.0])
    np.testing.assert_allclose(s.get_output_port("y0").eval(ctx), a * np.sin(w * t + p))
    np.testing.assert_allclose(s.get_output_port("y1").eval(ctx), a * w * np.cos(w * t + p))
    np.testing.assert_allclose(s.get_output_port("y2").eval(ctx), -a * w**2 * np.sin(w * t + p))
    assert symbolic_vs_numeric(s, ctx) == 3


@pytest.mark.parametrize("t, expected", [(0.99, [0.0, 5.0]), (1.0, [1.0, -5.0]), (2.0, [1.0, -5.0])])
def test_step(t, expected):
    s = Step(step_time=1.0, initial_value=[0.0, 5.0], final_value=[1.0, -5.0])
    ctx = _ctx(s, t)
    np.testing.assert_array_equal(s.get_output_port().eval(ctx), expected)
    assert symbolic_vs_numeric(s, ctx) == 1


@pytest.mark.parametrize("t, expected", [(0.5, 1.0), (3.0, 1.0 + 2.0 * 2.0)])
def test_ramp(t, expected):
    r = Ramp(slope=2.0, start_time=1.0, initial_output=1.0)
    ctx = _ctx(r, t)
    np.testing.assert_allclose(r.get_output_port().eval(ctx), [expected])
    assert symbolic_vs_numeric(r, ctx) == 1


def test_trajectory_source_cubic_and_samples():
    times = np.array([0.0, 1.0, 2.0, 4.0])
    values = np.array([[0.0, 1.0, 4.0, 16.0], [1.0, 0.0, -1.0, 0.0]])
    spline = CubicSpline(times, values, axis=1)
    src = TrajectorySource(spline, output_derivative=True)
    for t in (0.0, 0.3, 1.7, 3.99, 5.0):
        ctx = _ctx(src, t)
        tc = min(t, 4.0)
        np.testing.assert_allclose(src.get_output_port("y").eval(ctx), spline(tc), atol=1e-12)
        assert symbolic_vs_numeric(src, ctx) == 2
    lin = TrajectorySource.from_samples(times, values, kind="linear")
    ctx = _ctx(lin, 3.0)
    np.testing.assert_allclose(lin.get_output_port().eval(ctx), [10.0, -0.5])
    zoh = TrajectorySource.from_samples(times, values, kind="zoh")
    ctx = _ctx(zoh, 3.0)
    np.testing.assert_allclose(zoh.get_output_port().eval(ctx), [4.0, -1.0])
    assert symbolic_vs_numeric(zoh, ctx) == 1
    with pytest.raises(ValueError, match="strictly increasing"):
        TrajectorySource.from_samples([0.0, 0.0], [[1.0, 2.0]])
    with pytest.raises(TypeError, match="PPoly"):
        TrajectorySource(lambda t: t)


def test_gain_and_matrix_gain():
    g = Gain(3.0, size=2)
    ctx = _ctx(g)
    g.get_input_port().fix_value(ctx, [1.0, -2.0])
    np.testing.assert_array_equal(g.get_output_port().eval(ctx), [3.0, -6.0])
    assert g.has_direct_feedthrough("u", "y")
    assert symbolic_vs_numeric(g, ctx, [[1.0, -2.0]]) == 1
    D = np.array([[1.0, 2.0, 3.0], [0.0, -1.0, 0.5]])
    m = MatrixGain(D)
    ctx = _ctx(m)
    u = np.array([0.5, 1.0, -2.0])
    m.get_input_port().fix_value(ctx, u)
    np.testing.assert_allclose(m.get_output_port().eval(ctx), D @ u)
    assert symbolic_vs_numeric(m, ctx, [u]) == 1


def test_adder_mux_demux_passthrough():
    add = Adder(3, 2)
    ctx = _ctx(add)
    ins = [[1.0, 2.0], [10.0, 20.0], [100.0, 200.0]]
    for p, v in zip(add.input_ports, ins):
        p.fix_value(ctx, v)
    np.testing.assert_array_equal(add.get_output_port().eval(ctx), [111.0, 222.0])
    assert symbolic_vs_numeric(add, ctx, ins) == 1

    mux = Multiplexer([2, 1])
    ctx = _ctx(mux)
    assert symbolic_vs_numeric(mux, ctx, [[1.0, 2.0], [3.0]]) == 1
    np.testing.assert_array_equal(mux.get_output_port().eval(ctx), [1.0, 2.0, 3.0])
    assert Multiplexer(3).get_output_port().size == 3

    demux = Demultiplexer([1, 2])
    ctx = _ctx(demux)
    assert symbolic_vs_numeric(demux, ctx, [[4.0, 5.0, 6.0]]) == 2
    np.testing.assert_array_equal(demux.get_output_port("y1").eval(ctx), [5.0, 6.0])
    assert len(Demultiplexer(6, 2).output_ports) == 3
    with pytest.raises(ValueError, match="multiple"):
        Demultiplexer(5, 2)

    pt = PassThrough(2)
    ctx = _ctx(pt)
    assert symbolic_vs_numeric(pt, ctx, [[7.0, 8.0]]) == 1
    np.testing.assert_array_equal(pt.get_output_port().eval(ctx), [7.0, 8.0])


def test_saturation():
    sat = Saturation([-1.0, 0.0], [1.0, 2.0])
    ctx = _ctx(sat)
    assert symbolic_vs_numeric(sat, ctx, [[-3.0, 1.5]]) == 1
    np.testing.assert_array_equal(sat.get_output_port().eval(ctx), [-1.0, 1.5])
    with pytest.raises(ValueError, match=r"min_value\[1\] = 3.0 exceeds max_value\[1\] = 2.0"):
        Saturation([0.0, 3.0], [1.0, 2.0])


def test_integrator_and_low_pass_filter():
    integ = Integrator(2, initial_value=[1.0, 2.0])
    ctx = _ctx(integ)
    np.testing.assert_array_equal(integ.get_output_port().eval(ctx), [1.0, 2.0])
    integ.get_input_port().fix_value(ctx, [0.5, -0.5])
    np.testing.assert_array_equal(integ.eval_time_derivatives(ctx), [0.5, -0.5])
    assert not integ.has_direct_feedthrough()
    assert symbolic_vs_numeric(integ, ctx, [[0.5, -0.5]]) == 2

    lp = FirstOrderLowPassFilter(0.5, size=2)
    ctx = _ctx(lp, x=[1.0, 0.0])
    lp.get_input_port().fix_value(ctx, [0.0, 1.0])
    np.testing.assert_allclose(lp.eval_time_derivatives(ctx), [-2.0, 2.0])
    assert symbolic_vs_numeric(lp, ctx, [[0.0, 1.0]]) == 2
    with pytest.raises(ValueError, match="time_constant"):
        FirstOrderLowPassFilter(-1.0)


def test_linear_and_affine_systems():
    A = np.array([[0.0, 1.0], [-2.0, -0.5]])
    B = np.array([[0.0], [1.0]])
    C = np.array([[1.0, 0.0]])
    D = np.array([[0.25]])
    sys = LinearSystem(A, B, C, D)
    assert sys.A is not None and np.array_equal(sys.D, D)
    x, u = np.array([0.3, -0.2]), np.array([1.5])
    ctx = _ctx(sys, x=x)
    sys.get_input_port().fix_value(ctx, u)
    np.testing.assert_allclose(sys.eval_time_derivatives(ctx), A @ x + B @ u)
    np.testing.assert_allclose(sys.get_output_port().eval(ctx), C @ x + D @ u)
    assert sys.has_direct_feedthrough()
    assert not LinearSystem(A, B, C).has_direct_feedthrough()
    assert symbolic_vs_numeric(sys, ctx, [u]) == 2

    f0, y0 = np.array([0.1, 0.2]), np.array([-1.0])
    aff = AffineSystem(A, B, f0, C, D, y0)
    ctx = _ctx(aff, x=x)
    aff.get_input_port().fix_value(ctx, u)
    np.testing.assert_allclose(aff.eval_time_derivatives(ctx), A @ x + B @ u + f0)
    np.testing.assert_allclose(aff.get_output_port().eval(ctx), C @ x + D @ u + y0)
    assert symbolic_vs_numeric(aff, ctx, [u]) == 2

    disc = LinearSystem(A, B, C, D, time_period=0.1)
    assert disc.num_discrete_states() == 2 and disc.num_continuous_states() == 0
    ctx = _ctx(disc, xd=x)
    disc.get_input_port().fix_value(ctx, u)
    (event,) = disc.events()
    np.testing.assert_allclose(event.callback(ctx), A @ x + B @ u)
    assert event.period == 0.1
    assert symbolic_vs_numeric(disc, ctx, [u]) == 2

    pure_gain = LinearSystem(D=np.array([[2.0, 0.0], [0.0, 3.0]]))
    ctx = _ctx(pure_gain)
    pure_gain.get_input_port().fix_value(ctx, [1.0, 1.0])
    np.testing.assert_array_equal(pure_gain.get_output_port().eval(ctx), [2.0, 3.0])
    with pytest.raises(ValueError, match="B has shape"):
        LinearSystem(A, np.ones((3, 1)), C, D)


# Drake's sizes and ports of LinearSystem / AffineSystem from the matrices given (empty ones
# count as absent): (keywords, num states, input port size or None, output port size or None),
# as pydrake 1.51 declares them.
_LTI_PORT_CASES = [
    ("Linear", dict(B=np.eye(2)), 2, 2, None),
    ("Linear", dict(A=np.eye(2)), 2, None, None),
    ("Linear", dict(C=np.eye(2)), 2, None, 2),
    ("Linear", dict(D=np.ones((1, 2))), 0, 2, 1),
    ("Linear", dict(A=np.eye(2), C=np.zeros((0, 2))), 2, None, None),
    ("Linear", dict(B=np.eye(2), C=np.zeros((3, 0))), 2, 2, None),
    ("Linear", dict(D=np.zeros((2, 0))), 0, None, None),
    ("Linear", dict(A=np.eye(2), B=np.zeros((0, 3))), 2, None, None),
    ("Linear", dict(A=np.eye(2), C=np.zeros((3, 0)), D=np.zeros((3, 1))), 2, 1, 3),
    ("Linear", dict(A=np.eye(2), B=np.eye(2), C=np.zeros((2, 2)), D=np.zeros((2, 2))), 2, 2, 2),
    ("Affine", dict(y0=[1.0, 2.0]), 0, None, 2),
    ("Affine", dict(B=np.eye(2)), 2, 2, None),
    ("Affine", dict(f0=[1.0, 2.0]), 2, None, None),
]


@pytest.mark.parametrize("kind, kw, nx, nu, ny", _LTI_PORT_CASES)
def test_linear_system_ports_follow_drake(kind, kw, nx, nu, ny):
    s = (LinearSystem if kind == "Linear" else AffineSystem)(**kw)
    assert s.num_continuous_states() == nx
    assert s.num_input_ports() == (nu is not None) and s.num_output_ports() == (ny is not None)
    if nu is not None:
        assert s.get_input_port().size == nu
    if ny is not None:
        assert s.get_output_port().size == ny


def test_linear_system_ports_equal_drakes():
    pp = pytest.importorskip("pydrake.systems.primitives")
    for kind, kw, nx, nu, ny in _LTI_PORT_CASES:
        d = (pp.LinearSystem if kind == "Linear" else pp.AffineSystem)(**kw)
        got = (d.num_continuous_states(), d.get_input_port().size() if d.num_input_ports() else None,
               d.get_output_port().size() if d.num_output_ports() else None)
        assert got == (nx, nu, ny), (kind, kw)


def test_linear_system_without_outputs_in_a_diagram():
    """xdot = B u with no C, D: no output port to connect; the state still integrates."""
    b = DiagramBuilder()
    src = b.add_system(ConstantVectorSource([1.0, -2.0]))
    lin = b.add_system(LinearSystem(B=np.eye(2), name="integrator_only"))
    b.connect(src.get_output_port(), lin.get_input_port())
    d = b.build()
    ctx = d.create_default_context()
    np.testing.assert_allclose(d.eval_time_derivatives(ctx), [1.0, -2.0])
    with pytest.raises(ValueError, match="'integrator_only' has 0 output ports"):
        lin.get_output_port()


def test_zero_order_hold_and_delay_declarations():
    zoh = ZeroOrderHold(0.25, 2, offset_sec=0.1)
    (ev,) = zoh.events()
    assert (ev.kind, ev.period, ev.offset) == ("discrete", 0.25, 0.1)
    ctx = _ctx(zoh, xd=[1.0, 2.0])
    zoh.get_input_port().fix_value(ctx, [5.0, 6.0])
    np.testing.assert_array_equal(zoh.get_output_port().eval(ctx), [1.0, 2.0])
    np.testing.assert_array_equal(ev.callback(ctx), [5.0, 6.0])
    assert not zoh.has_direct_feedthrough()
    assert symbolic_vs_numeric(zoh, ctx, [[5.0, 6.0]]) == 2

    delay = DiscreteTimeDelay(0.1, 3, 1)
    assert delay.num_discrete_states() == 4  # delay_steps + 1 samples
    ctx = _ctx(delay, xd=[1.0, 2.0, 3.0, 3.5])
    delay.get_input_port().fix_value(ctx, [4.0])
    np.testing.assert_array_equal(delay.get_output_port().eval(ctx), [1.0])
    (ev,) = delay.events()
    np.testing.assert_array_equal(ev.callback(ctx), [2.0, 3.0, 3.5, 4.0])
    assert symbolic_vs_numeric(delay, ctx, [[4.0]]) == 2


def test_function_system():
    f = FunctionSystem(lambda t, u: ops.vertcat(u[0] * t, ops.sin(u[1])), 2, 2)
    ctx = _ctx(f, 2.0)
    assert symbolic_vs_numeric(f, ctx, [[3.0, 0.5]]) == 1
    np.testing.assert_allclose(f.get_output_port().eval(ctx), [6.0, np.sin(0.5)])
    assert f.has_direct_feedthrough()
    clock = FunctionSystem(lambda t, u: [t, 2 * t], 0, 2)
    ctx = _ctx(clock, 1.5)
    np.testing.assert_array_equal(clock.get_output_port().eval(ctx), [1.5, 3.0])


def test_symbolic_vector_system_pendulum():
    x = ca.SX.sym("x", 2)
    u = ca.SX.sym("u")
    svs = SymbolicVectorSystem(state=x, input=u, dynamics=ca.vertcat(x[1], -9.81 * ca.sin(x[0]) + u),
                               output=ca.vertcat(x[0], u))
    ctx = _ctx(svs, x=[0.3, 0.1])
    svs.get_input_port().fix_value(ctx, [0.5])
    np.testing.assert_allclose(svs.eval_time_derivatives(ctx), [0.1, -9.81 * np.sin(0.3) + 0.5])
    np.testing.assert_allclose(svs.get_output_port().eval(ctx), [0.3, 0.5])
    assert svs.has_direct_feedthrough()
    assert symbolic_vs_numeric(svs, ctx, [[0.5]]) == 2
    with pytest.raises(ValueError, match="dynamics has 1 entries but the state has 2"):
        SymbolicVectorSystem(state=x, dynamics=x[0])


def test_vector_log_sink_declarations_and_log():
    builder = DiagramBuilder()
    src = builder.add_system(ConstantVectorSource([1.0, 2.0]))
    sink = LogVectorOutput(src.get_output_port(), builder)
    periodic = LogVectorOutput(src.get_output_port(), builder, publish_period=0.5)
    diagram = builder.build()
    ctx = diagram.create_default_context()
    assert isinstance(sink, VectorLogSink)
    assert [e.kind for e in sink.events()] == ["publish"]
    assert periodic.events()[0].period == 0.5
    log = sink.find_log(ctx)
    assert log.data().shape == (2, 0)
    sink_ctx = diagram.get_subsystem_context(sink, ctx)
    sink.events()[0].callback(sink_ctx)
    ctx.set_time(0.5)
    sink.events()[0].callback(sink_ctx)
    np.testing.assert_array_equal(log.sample_times(), [0.0, 0.5])
    np.testing.assert_array_equal(log.data(), [[1.0, 1.0], [2.0, 2.0]])
    # Each context has its own log.
    assert diagram.create_default_context() is not ctx
    assert sink.find_log(diagram.create_default_context()).num_samples() == 0
    assert sink.find_log(ctx.clone()).num_samples() == 2


def test_bad_values_refused_with_port_name():
    g = Gain(1.0, size=2)
    ctx = g.create_default_context()
    with pytest.raises(PortValueError, match=r"input port 'gain.u'.*size 3, expected size 2"):
        g.get_input_port().fix_value(ctx, [1.0, 2.0, 3.0])
    with pytest.raises(PortValueError, match=r"input port 'gain.u'.*finite"):
        g.get_input_port().fix_value(ctx, [1.0, np.nan])
    with pytest.raises(PortValueError, match="continuous state of system 'integrator'.*finite"):
        Integrator(1).create_default_context().set_continuous_state([np.inf])
