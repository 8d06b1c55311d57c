"""Framework core: contexts, ports, feedthrough inference, nested diagrams, errors, caching."""
import warnings

import casadi as ca
import numpy as np
import pytest

from solvers import ops
from systems import (AlgebraicLoopError, DiagramBuildError, DiagramBuilder,
                     FeedthroughInferenceWarning, InputNotConnectedError, LeafSystem, PortSizeError,
                     PortValueError, SystemCallbackError)
from systems.primitives import Adder, ConstantVectorSource, Gain, Integrator, PassThrough
from _symbolic_check import symbolic_vs_numeric


class Pendulum(LeafSystem):
    """A user system: theta'' = -g/l sin(theta) - b theta' + tau; outputs the angle and the state."""

    def __init__(self, g=9.81, length=1.0, damping=0.1):
        super().__init__()
        self.declare_continuous_state(2, num_q=1, num_v=1, initial=[0.1, 0.0])
        self.declare_numeric_parameter("g_over_l", [g / length])
        self.declare_numeric_parameter("damping", [damping])
        self.tau = self.declare_input_port("tau", 1)
        self.declare_output_port("angle", 1, lambda c: c.continuous_state[0:1])
        self.declare_output_port("state", 2, lambda c: c.continuous_state)

    def time_derivatives(self, context):
        th, om = context.continuous_state[0], context.continuous_state[1]
        w2 = context.get_parameter("g_over_l")[0]
        b = context.get_parameter("damping")[0]
        return ops.vertcat(om, -w2 * ops.sin(th) - b * om + self.tau.eval(context)[0])


class Feedthrough(LeafSystem):
    """A user system with direct feedthrough on one input only: y = 2 u + x, z = x."""

    def __init__(self):
        super().__init__()
        self.declare_continuous_state(1)
        self.u = self.declare_input_port("u", 1)
        self.w = self.declare_input_port("w", 1)
        self.calls = 0
        self.declare_output_port("y", 1, self._y)
        self.declare_output_port("z", 1, lambda c: c.continuous_state)

    def _y(self, context):
        self.calls += 1
        return 2.0 * self.u.eval(context) + context.continuous_state

    def time_derivatives(self, context):
        return self.w.eval(context)


def test_user_leaf_system_numeric_and_symbolic():
    p = Pendulum()
    ctx = p.create_default_context()
    np.testing.assert_array_equal(ctx.continuous_state, [0.1, 0.0])
    ctx.set_continuous_state([0.5, -1.0])
    p.get_input_port("tau").fix_value(ctx, [0.2])
    xdot = p.eval_time_derivatives(ctx)
    np.testing.assert_allclose(xdot, [-1.0, -9.81 * np.sin(0.5) + 0.1 + 0.2])
    ctx.set_parameter("damping", [0.0])
    np.testing.assert_allclose(p.eval_time_derivatives(ctx)[1], -9.81 * np.sin(0.5) + 0.2)
    assert symbolic_vs_numeric(p, ctx, [[0.2]]) == 3
    q_idx, v_idx, z_idx = p.continuous_state_partition()
    assert list(q_idx) == [0] and list(v_idx) == [1] and len(z_idx) == 0


def test_feedthrough_inference_with_and_without():
    f = Feedthrough()
    assert f.has_direct_feedthrough("u", "y")
    assert not f.has_direct_feedthrough("w", "y")
    assert not f.has_direct_feedthrough(output_port="z")
    assert not Pendulum().has_direct_feedthrough()


def test_feedthrough_inference_failure_warns_and_is_conservative():
    class Opaque(LeafSystem):
        def __init__(self):
            super().__init__()
            self.u = self.declare_input_port("u", 1)
            self.declare_output_port("y", 1, lambda c: [float(self.u.eval(c)[0]) ** 2])

    o = Opaque()
    with pytest.warns(FeedthroughInferenceWarning, match="system 'opaque' output port 'y'"):
        assert o.has_direct_feedthrough("u", "y")

    class Declared(Opaque):
        def __init__(self):
            LeafSystem.__init__(self)
            self.u = self.declare_input_port("u", 1)
            self.declare_output_port("y", 1, lambda c: [float(self.u.eval(c)[0]) ** 2], feedthrough=False)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not Declared().has_direct_feedthrough()


def _nested():
    inner_b = DiagramBuilder("inner")
    g = inner_b.add_system(Gain(2.0, size=1))
    integ = inner_b.add_system(Integrator(1))
    inner_b.connect(g.get_output_port(), integ.get_input_port())
    inner_b.export_input(g.get_input_port(), "u")
    inner_b.export_output(integ.get_output_port(), "x")
    inner_b.export_output(g.get_output_port(), "gu")
    inner = inner_b.build()

    b = DiagramBuilder("outer")
    src = b.add_system(ConstantVectorSource([3.0]))
    b.add_system(inner)
    p = b.add_system(Pendulum())
    b.connect(src.get_output_port(), inner.get_input_port("u"))
    b.connect(inner.get_output_port("gu"), p.get_input_port("tau"))
    b.export_output(inner.get_output_port("x"), "x")
    b.export_output(p.get_output_port("state"), "pendulum_state")
    return b.build(), inner, g, integ, p


def test_nested_diagram_evaluation_and_state_layout():
    outer, inner, g, integ, p = _nested()
    ctx = outer.create_default_context()
    assert outer.num_continuous_states() == 3
    assert [s.name for s in outer.leaf_systems()] == ["constant_vector_source", "gain", "integrator", "pendulum"]
    ctx.set_continuous_state([1.5, 0.2, 0.0])
    np.testing.assert_array_equal(outer.get_output_port("x").eval(ctx), [1.5])
    xdot = outer.eval_time_derivatives(ctx)
    np.testing.assert_allclose(xdot, [6.0, 0.0, -9.81 * np.sin(0.2) + 6.0])
    # Subsystem contexts read and write through to the diagram context.
    pctx = outer.get_subsystem_context(p, ctx)
    np.testing.assert_array_equal(pctx.continuous_state, [0.2, 0.0])
    pctx.set_continuous_state([0.0, 1.0])
    np.testing.assert_array_equal(ctx.continuous_state, [1.5, 0.0, 1.0])
    inner_ctx = outer.get_subsystem_context(inner, ctx)
    np.testing.assert_array_equal(inner.get_output_port("gu").eval(inner_ctx), [6.0])
    # Ports evaluate from an enclosing context too.
    np.testing.assert_array_equal(g.get_output_port().eval(ctx), [6.0])
    assert outer.get_subsystem_by_name("inner/gain") is g
    q, v, z = outer.continuous_state_partition()
    assert list(q) == [1] and list(v) == [2] and list(z) == [0]
    # Feedthrough through the nested diagram.
    assert inner.has_direct_feedthrough("u", "gu") and not inner.has_direct_feedthrough("u", "x")
    np.testing.assert_allclose(outer.map_velocity_to_qdot(ctx, np.array([4.0])), [4.0])


def test_nested_diagram_symbolic_matches_numeric():
    outer, *_ = _nested()
    ctx = outer.create_default_context()
    ctx.set_continuous_state([1.5, 0.2, -0.3])
    sym = outer.create_default_context()
    x = ca.SX.sym("x", 3)
    sym.set_continuous_state(x)
    f = ca.Function("f", [x], [outer.eval_time_derivatives(sym), outer.get_output_port("pendulum_state").eval(sym)])
    xdot, y = f([1.5, 0.2, -0.3])
    np.testing.assert_allclose(np.ravel(xdot), outer.eval_time_derivatives(ctx), rtol=1e-14)
    np.testing.assert_allclose(np.ravel(y), outer.get_output_port("pendulum_state").eval(ctx), rtol=1e-14)


def test_exported_input_feeds_several_ports():
    b = DiagramBuilder()
    g1 = b.add_system(Gain(2.0, size=1))
    g2 = b.add_system(Gain(5.0, size=1))
    b.export_input(g1.get_input_port(), "u")
    b.export_input(g2.get_input_port(), "u")
    add = b.add_system(Adder(2, 1))
    b.connect(g1.get_output_port(), add.get_input_port(0))
    b.connect(g2.get_output_port(), add.get_input_port(1))
    b.export_output(add.get_output_port(), "y")
    d = b.build()
    assert d.num_input_ports() == 1
    ctx = d.create_default_context()
    d.get_input_port("u").fix_value(ctx, [1.0])
    np.testing.assert_array_equal(d.get_output_port("y").eval(ctx), [7.0])
    d.get_input_port("u").fix_value(ctx, [2.0])
    np.testing.assert_array_equal(d.get_output_port("y").eval(ctx), [14.0])
    assert d.has_direct_feedthrough("u", "y")


def test_caching_recomputes_only_after_a_change():
    b = DiagramBuilder()
    src = b.add_system(ConstantVectorSource([1.0]))
    f = b.add_system(Feedthrough())
    other = b.add_system(Integrator(1))
    b.connect(src.get_output_port(), f.get_input_port("u"))
    b.connect(src.get_output_port(), f.get_input_port("w"))
    b.connect(src.get_output_port(), other.get_input_port())
    b.export_output(f.get_output_port("y"), "y")
    d = b.build()
    ctx = d.create_default_context()
    y = d.get_output_port("y")
    f.calls = 0  # (build() evaluated the calc once on symbols to infer feedthrough)
    assert y.eval(ctx)[0] == 2.0 and f.calls == 1
    y.eval(ctx)
    y.eval(ctx)
    assert f.calls == 1                       # nothing changed: cached
    d.get_subsystem_context(other, ctx).set_continuous_state([5.0])
    y.eval(ctx)
    assert f.calls == 1                       # another system's state: still cached
    d.get_subsystem_context(f, ctx).set_continuous_state([1.0])
    assert y.eval(ctx)[0] == 3.0 and f.calls == 2  # own state changed
    src.set_source_value(ctx, [2.0])
    assert y.eval(ctx)[0] == 5.0 and f.calls == 3  # upstream parameter changed
    ctx.set_time(1.0)
    y.eval(ctx)
    assert f.calls == 4                       # default prerequisites include time
    d.get_subsystem_context(src, ctx).set_time(2.0)
    y.eval(ctx)
    assert f.calls == 5


def test_unconnected_input_error_names_system_and_port():
    g = Gain(1.0, size=2)
    with pytest.raises(InputNotConnectedError, match="input port 'u' of system 'gain' is not connected"):
        g.get_output_port().eval(g.create_default_context())
    b = DiagramBuilder("d")
    g2 = b.add_system(Gain(1.0, size=2))
    b.export_output(g2.get_output_port(), "y")
    d = b.build()
    with pytest.raises(InputNotConnectedError, match="input port 'u' of system 'gain'.*diagram 'd'"):
        d.get_output_port("y").eval(d.create_default_context())


def test_build_errors():
    b = DiagramBuilder()
    src = b.add_system(ConstantVectorSource([1.0, 2.0, 3.0]))
    g = b.add_system(Gain(1.0, size=2))
    with pytest.raises(PortSizeError, match=r"input port 'u' of 'gain' has size 2 but "
                                            r"'constant_vector_source.y' has size 3"):
        b.connect(src.get_output_port(), g.get_input_port())
    stranger = Gain(1.0, size=3)
    with pytest.raises(DiagramBuildError, match="not added to this builder"):
        b.connect(src.get_output_port(), stranger.get_input_port())
    g3 = b.add_system(Gain(1.0, size=3))
    b.connect(src.get_output_port(), g3.get_input_port())
    with pytest.raises(DiagramBuildError, match="'gain_1.u' is already connected"):
        b.connect(src.get_output_port(), g3.get_input_port())
    named = Gain(1.0, size=1, name="plant")
    b.add_system(named)
    with pytest.raises(DiagramBuildError, match="duplicate system name 'plant'"):
        b.add_system(Gain(1.0, size=1, name="plant"))
    with pytest.raises(DiagramBuildError, match="duplicate system name 'plant'"):
        g.name = "plant"
    with pytest.raises(DiagramBuildError, match="can be added to one diagram only"):
        b.add_system(g)


def test_algebraic_loop_reported_as_cycle_and_broken_by_state():
    b = DiagramBuilder()
    g = b.add_system(Gain(2.0, size=1, name="k"))
    p = b.add_system(PassThrough(1, name="p"))
    b.connect(g.get_output_port(), p.get_input_port())
    b.connect(p.get_output_port(), g.get_input_port())
    with pytest.raises(AlgebraicLoopError) as err:
        b.build()
    msg = str(err.value)
    assert "k.u -> k.y -> p.u -> p.y -> k.u" in msg or "p.u -> p.y -> k.u -> k.y -> p.u" in msg

    b = DiagramBuilder()
    g = b.add_system(Gain(-1.0, size=1))
    i = b.add_system(Integrator(1, initial_value=[1.0]))
    b.connect(g.get_output_port(), i.get_input_port())
    b.connect(i.get_output_port(), g.get_input_port())
    d = b.build()
    ctx = d.create_default_context()
    np.testing.assert_array_equal(d.eval_time_derivatives(ctx), [-1.0])


def test_callback_errors_carry_the_system_name():
    class Broken(LeafSystem):
        def __init__(self):
            super().__init__("broken")
            self.declare_continuous_state(1)
            self.declare_output_port("y", 1, lambda c: 1.0 / 0.0, feedthrough=False)

        def time_derivatives(self, context):
            raise KeyError("missing gain")

    s = Broken()
    ctx = s.create_default_context()
    with pytest.raises(SystemCallbackError, match="output port 'y' of system 'broken'.*ZeroDivisionError"):
        s.get_output_port().eval(ctx)
    with pytest.raises(SystemCallbackError, match="system 'broken': time_derivatives raised KeyError"):
        s.eval_time_derivatives(ctx)


def test_wrong_size_results_and_bad_declarations():
    class WrongSize(LeafSystem):
        def __init__(self):
            super().__init__()
            self.declare_continuous_state(2)
            self.declare_output_port("y", 3, lambda c: [1.0, 2.0], feedthrough=False)

        def time_derivatives(self, context):
            return [1.0]

    w = WrongSize()
    ctx = w.create_default_context()
    with pytest.raises(PortValueError, match="output port 'y' of system 'wrong_size': got a value of size 2, expected size 3"):
        w.get_output_port().eval(ctx)
    with pytest.raises(PortValueError, match="time derivatives of system 'wrong_size'.*size 1, expected size 2"):
        w.eval_time_derivatives(ctx)
    with pytest.raises(PortValueError, match="continuous state of system 'wrong_size'.*size 3"):
        ctx.set_continuous_state([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="already has an input port named 'u'"):
        Gain(1.0, size=1).declare_input_port("u", 1)
    with pytest.raises(ValueError, match="no output port named 'nope'.*\\['y'\\]"):
        Gain(1.0, size=1).get_output_port("nope")
    with pytest.raises(ValueError, match="unknown prerequisites"):
        LeafSystem().declare_output_port("y", 1, lambda c: [0.0], prerequisites=["velocity"])
    with pytest.raises(ValueError, match="num_q \\(2\\) differs from num_v \\(1\\)"):
        LeafSystem().declare_continuous_state(3, num_q=2, num_v=1)
    with pytest.raises(ValueError, match="period must be a finite number > 0"):
        LeafSystem().declare_periodic_publish(0.0, 0.0, lambda c: None)
    with pytest.raises(ValueError, match="unknown direction 'up'"):
        LeafSystem().declare_witness_function("w", "up", lambda c: 0.0)


def test_abstract_ports_connect_and_refuse_vectors():
    class Producer(LeafSystem):
        def __init__(self):
            super().__init__()
            self.declare_abstract_output_port("contacts", lambda c: {"n": 2, "t": c.time},
                                              feedthrough=False)

    class Consumer(LeafSystem):
        def __init__(self):
            super().__init__()
            self.inp = self.declare_abstract_input_port("contacts", {})
            self.declare_output_port("n", 1, lambda c: [self.inp.eval(c)["n"]])

    b = DiagramBuilder()
    prod, cons = b.add_system(Producer()), b.add_system(Consumer())
    b.connect(prod.get_output_port(), cons.get_input_port())
    with pytest.raises(PortSizeError, match="abstract"):
        b.connect(prod.get_output_port(), b.add_system(Gain(1.0, size=1)).get_input_port())
    b.export_output(cons.get_output_port(), "n")
    d = b.build()
    ctx = d.create_default_context()
    np.testing.assert_array_equal(d.get_output_port("n").eval(ctx), [2.0])
    assert cons.has_direct_feedthrough()


def test_context_clone_is_independent():
    outer, *_ = _nested()
    ctx = outer.create_default_context()
    ctx.set_time(0.5)
    ctx.set_continuous_state([1.0, 2.0, 3.0])
    copy = ctx.clone()
    assert copy.time == 0.5
    np.testing.assert_array_equal(copy.continuous_state, [1.0, 2.0, 3.0])
    copy.set_continuous_state([0.0, 0.0, 0.0])
    np.testing.assert_array_equal(ctx.continuous_state, [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="read-only"):
        ctx.continuous_state[0] = 5.0
