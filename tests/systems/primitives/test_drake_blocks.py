"""Blocks a Drake user expects, with Drake's semantics: DiscreteDerivative,
DiscreteTimeIntegrator, PortSwitch, Selector, WrapToSystem, ConstantValueSource, abstract
ZeroOrderHold and PassThrough, and DiagramBuilder.disconnect / remove_system."""
import math

import numpy as np
import pytest

from systems import DiagramBuilder, LeafSystem
from systems.analysis import Simulator
from systems.errors import DiagramBuildError, PortValueError
from systems.primitives import (ConstantValueSource, ConstantVectorSource, DiscreteDerivative,
                                DiscreteTimeIntegrator, Gain, LogVectorOutput, PassThrough,
                                PortSwitch, Ramp, Selector, WrapToSystem, ZeroOrderHold)
from _symbolic_check import symbolic_vs_numeric


def _derivative_log(suppress, h=0.1, slope=3.0, offset=1.0, t_end=1.0):
    b = DiagramBuilder()
    ramp = b.add_system(Ramp(slope=slope, initial_output=offset, size=2))
    dd = b.add_system(DiscreteDerivative(2, h, suppress_initial_transient=suppress))
    b.connect(ramp.get_output_port(), dd.get_input_port())
    log = LogVectorOutput(dd.get_output_port("dudt"), b, publish_period=h)
    sim = Simulator(b.build())
    sim.advance_to(t_end)
    return log.find_log(sim.get_context())


def test_discrete_derivative_of_a_ramp_is_its_slope_after_two_samples():
    h, slope, offset = 0.1, 3.0, 1.0
    # The log at kh sees the updates at 0 ... (k-1)h (Drake's order): u[n] = offset + slope n h.
    log = _derivative_log(True, h, slope, offset)
    y = log.data()[0]
    np.testing.assert_allclose(log.sample_times(), h * np.arange(11), atol=1e-12)
    np.testing.assert_array_equal(y[:2], [0.0, 0.0])        # suppressed: fewer than 2 samples
    np.testing.assert_allclose(y[2:], slope, rtol=1e-12)
    # Without suppression the first sample shows (u[0] - 0) / h: Drake's transient.
    y2 = _derivative_log(False, h, slope, offset).data()[0]
    assert y2[0] == 0.0
    assert y2[1] == pytest.approx(offset / h, rel=1e-12)
    np.testing.assert_allclose(y2[2:], slope, rtol=1e-12)


def test_discrete_derivative_history_and_symbolic_form():
    dd = DiscreteDerivative(2, 0.05)
    ctx = dd.create_default_context()
    dd.set_input_history(ctx, [1.0, 2.0], [0.5, 1.0])
    np.testing.assert_allclose(dd.get_output_port().eval(ctx), [10.0, 20.0])
    assert dd.time_step() == 0.05 and dd.suppress_initial_transient()
    assert symbolic_vs_numeric(dd, ctx, [np.array([3.0, -1.0])]) == 2
    ctx2 = dd.create_default_context()           # count 0: the symbolic if_else branch
    ctx2.set_discrete_state([1.0, 2.0, 0.0, 0.0, 1.0])
    assert symbolic_vs_numeric(dd, ctx2, [np.array([3.0, -1.0])]) == 2
    assert not dd.has_direct_feedthrough()
    with pytest.raises(ValueError, match="time_step must be a finite number > 0"):
        DiscreteDerivative(1, 0.0)
    with pytest.raises(ValueError, match="u_n has size 1, expected 2"):
        dd.set_input_history(ctx, [1.0])


def test_discrete_time_integrator_equals_the_closed_form_sum():
    h, N = 0.01, 37
    b = DiagramBuilder()
    ramp = b.add_system(Ramp(slope=2.0))
    integ = b.add_system(DiscreteTimeIntegrator(1, h, initial_value=[0.5]))
    b.connect(ramp.get_output_port(), integ.get_input_port())
    d = b.build()
    sim = Simulator(d)
    sim.advance_to(N * h)
    # x[N] = x[0] + h sum_{n<N} u(n h) = 0.5 + h * 2 h * N (N - 1) / 2 (the update at N h pending)
    expected = 0.5 + h * h * N * (N - 1)
    x = d.get_subsystem_context(integ, sim.get_context()).discrete_state[0]
    assert x == pytest.approx(expected, rel=1e-12)
    ctx = integ.create_default_context()
    integ.set_integral_value(ctx, [2.0])
    assert symbolic_vs_numeric(integ, ctx, [np.array([4.0])]) == 2
    with pytest.raises(ValueError, match="got 2 values, expected 1"):
        integ.set_integral_value(ctx, [1.0, 2.0])
    # an initial value of the wrong size is named at construction, not at the first output
    with pytest.raises(ValueError, match=r"DiscreteTimeIntegrator 'i': initial_value must "
                                         r"have shape \(2,\), got shape \(3,\)"):
        DiscreteTimeIntegrator(2, h, initial_value=[1.0, 2.0, 3.0], name="i")
    with pytest.raises(ValueError, match=r"ZeroOrderHold 'z': initial_value must have shape"):
        ZeroOrderHold(0.1, 2, initial_value=[1.0], name="z")


def test_port_switch_routes_by_its_selector():
    b = DiagramBuilder()
    a = b.add_system(ConstantVectorSource([1.0, 2.0], name="a"))
    c = b.add_system(ConstantVectorSource([-3.0, 4.0], name="c"))
    sw = b.add_system(PortSwitch(2, name="switch"))
    pa, pc = sw.declare_input_port("a"), sw.declare_input_port("c")
    assert (pa.index, pc.index) == (1, 2)          # Drake: port 0 is the selector
    b.connect(a.get_output_port(), pa)
    b.connect(c.get_output_port(), pc)
    b.export_input(sw.get_port_selector_input_port(), "select")
    b.export_output(sw.get_output_port("value"), "value")
    d = b.build()
    ctx = d.create_default_context()
    d.get_input_port("select").fix_value(ctx, [1.0])
    np.testing.assert_array_equal(d.get_output_port("value").eval(ctx), [1.0, 2.0])
    d.get_input_port("select").fix_value(ctx, [2.0])
    np.testing.assert_array_equal(d.get_output_port("value").eval(ctx), [-3.0, 4.0])
    d.get_input_port("select").fix_value(ctx, [0.0])
    with pytest.raises(PortValueError, match=r"PortSwitch 'switch': port_selector is 0.0.*1 \('a'\), 2 \('c'\)"):
        d.get_output_port("value").eval(ctx)
    # Symbolic form (selector as a CasADi symbol) equals the numeric one for both choices.
    sw2 = PortSwitch(2, input_names=["x", "y"])
    for sel in (1.0, 2.0):
        n = symbolic_vs_numeric(sw2, sw2.create_default_context(),
                                [np.array([sel]), np.array([5.0, 6.0]), np.array([7.0, 8.0])])
        assert n == 1
    with pytest.raises(ValueError, match="must have size 2"):
        sw2.declare_input_port("z", 3)
    # Abstract form: any Python objects.
    sw3 = PortSwitch(abstract_model_value="", input_names=["left", "right"], name="words")
    c3 = sw3.create_default_context()
    sw3.get_input_port("left").fix_value(c3, "gripper open")
    sw3.get_input_port("right").fix_value(c3, "gripper closed")
    sw3.get_port_selector_input_port().fix_value(c3, [2])
    assert sw3.get_output_port("value").eval(c3) == "gripper closed"
    with pytest.raises(ValueError, match="give exactly one of vector_size"):
        PortSwitch()


def test_selector_picks_the_elements_given():
    sel = Selector([3, 2], [[(1, 0), (0, 2)], [(0, 0), (0, 0), (1, 1)]], name="sel")
    ctx = sel.create_default_context()
    u0, u1 = np.array([10.0, 11.0, 12.0]), np.array([20.0, 21.0])
    sel.get_input_port("u0").fix_value(ctx, u0)
    sel.get_input_port("u1").fix_value(ctx, u1)
    np.testing.assert_array_equal(sel.get_output_port("y0").eval(ctx), [20.0, 12.0])
    np.testing.assert_array_equal(sel.get_output_port("y1").eval(ctx), [10.0, 10.0, 21.0])
    assert symbolic_vs_numeric(sel, sel.create_default_context(), [u0, u1]) == 2
    only_u0 = Selector([2, 2], [[(0, 1)]])
    assert only_u0.feedthrough_pairs() == {(0, 0)}
    with pytest.raises(ValueError, match="selects element 3 of input 'u1', which has size 2"):
        Selector([3, 2], [[(1, 3)]])
    with pytest.raises(ValueError, match="selects input 2; there are 2 inputs"):
        Selector([3, 2], [[(2, 0)]])


def test_wrap_to_system_wraps_an_angle_into_low_high():
    w = WrapToSystem(3, name="wrap")
    w.set_interval(0, -math.pi, math.pi)
    w.set_interval(2, 0.0, 1.0)
    ctx = w.create_default_context()
    for u in ([3.5 * math.pi, 7.0, 2.25], [-math.pi, -1.0, -0.25], [math.pi, 0.0, 1.0],
              [-10.0, 5.0, 3.999]):
        w.get_input_port().fix_value(ctx, u)
        y = w.get_output_port().eval(ctx)
        assert -math.pi <= y[0] < math.pi and 0.0 <= y[2] < 1.0
        assert y[1] == u[1]                                         # not wrapped
        # Same angle and same fractional part: differ by whole periods.
        k0 = (u[0] - y[0]) / (2 * math.pi)
        assert abs(k0 - round(k0)) < 1e-12 and abs((u[2] - y[2]) - round(u[2] - y[2])) < 1e-12
    w.get_input_port().fix_value(ctx, [math.pi, 0.0, 1.0])          # high maps to low
    np.testing.assert_allclose(w.get_output_port().eval(ctx), [-math.pi, 0.0, 0.0], atol=1e-15)
    assert symbolic_vs_numeric(w, w.create_default_context(), [np.array([9.0, 2.0, -0.3])]) == 1
    with pytest.raises(ValueError, match="must have finite low < high"):
        w.set_interval(1, 1.0, 1.0)
    with pytest.raises(ValueError, match=r"index must be an integer in \[0, 3\)"):
        w.set_interval(3, 0.0, 1.0)


class _Stamp(LeafSystem):
    """An abstract output: a dict with the current time."""

    def __init__(self):
        super().__init__("stamp")
        self.declare_abstract_output_port("stamp", lambda c: {"t": c.time}, model_value={"t": 0.0},
                                          feedthrough=False, prerequisites=["time"])


def test_abstract_zero_order_hold_pass_through_and_constant_value_source():
    b = DiagramBuilder()
    stamp = b.add_system(_Stamp())
    zoh = b.add_system(ZeroOrderHold(0.1, abstract_model_value={"t": -1.0}, name="zoh"))
    pt = b.add_system(PassThrough(abstract_model_value={"t": -1.0}, name="pt"))
    const = b.add_system(ConstantValueSource(("gripper", 3), name="const"))
    pt2 = b.add_system(PassThrough(abstract_model_value=("", 0), name="pt2"))
    b.connect(stamp.get_output_port(), zoh.get_input_port())
    b.connect(zoh.get_output_port(), pt.get_input_port())
    b.connect(const.get_output_port(), pt2.get_input_port())
    b.export_output(pt.get_output_port(), "held")
    b.export_output(pt2.get_output_port(), "label")
    d = b.build()
    sim = Simulator(d)
    ctx = sim.get_context()
    assert d.get_output_port("held").eval(ctx) == {"t": -1.0}      # the model value at first
    sim.advance_to(0.35)
    assert d.get_output_port("held").eval(ctx) == {"t": pytest.approx(0.3)}
    sim.advance_to(0.4)                                             # update at 0.4 pending
    assert d.get_output_port("held").eval(ctx) == {"t": pytest.approx(0.3)}
    assert d.get_output_port("label").eval(ctx) == ("gripper", 3)
    assert not zoh.has_direct_feedthrough()
    with pytest.raises(ValueError, match="give exactly one of vector_size"):
        ZeroOrderHold(0.1)
    with pytest.raises(ValueError, match="give exactly one of size"):
        PassThrough(2, abstract_model_value=1.0)
    with pytest.raises(ValueError, match="value must not be None"):
        ConstantValueSource(None)


def test_builder_disconnect_and_remove_system():
    b = DiagramBuilder()
    src = b.add_system(ConstantVectorSource([2.0], name="src"))
    g1 = b.add_system(Gain(3.0, name="g1"))
    g2 = b.add_system(Gain(5.0, name="g2"))
    b.connect(src.get_output_port(), g1.get_input_port())
    b.export_output(g1.get_output_port(), "y1")
    b.disconnect(src.get_output_port(), g1.get_input_port())
    with pytest.raises(DiagramBuildError, match="they are not connected"):
        b.disconnect(src.get_output_port(), g1.get_input_port())
    b.connect(src.get_output_port(), g2.get_input_port())
    b.connect(g2.get_output_port(), g1.get_input_port())           # the freed input reconnected
    extra = b.add_system(Gain(7.0, name="extra"))
    b.connect(src.get_output_port(), extra.get_input_port())
    b.export_output(extra.get_output_port(), "y_extra")
    spare = b.add_system(Gain(1.0, name="spare"))
    b.export_input(spare.get_input_port(), "spare_in")     # fed only 'spare': removed with it
    b.remove_system(extra)
    b.remove_system(spare)
    with pytest.raises(DiagramBuildError, match="cannot remove system 'extra'"):
        b.remove_system(extra)
    d = b.build()
    assert [s.name for s in d.subsystems] == ["src", "g1", "g2"]
    assert d.num_output_ports() == 1 and d.num_input_ports() == 0
    np.testing.assert_allclose(d.get_output_port("y1").eval(d.create_default_context()), [30.0])
    b2 = DiagramBuilder()
    b2.add_system(extra)                                            # free to be added again


def test_removing_a_source_frees_the_inputs_it_fed():
    """Drake's RemoveSystem drops the connections from the removed system: the input it fed
    can be connected to another source (it stayed claimed by the removed one before)."""
    b = DiagramBuilder()
    a = b.add_system(ConstantVectorSource([1.0], name="a"))
    g = b.add_system(Gain(2.0, name="g"))
    b.connect(a.get_output_port(), g.get_input_port())
    b.export_output(g.get_output_port(), "y")
    b.remove_system(a)
    c = b.add_system(ConstantVectorSource([3.0], name="c"))
    b.connect(c.get_output_port(), g.get_input_port())
    d = b.build()
    np.testing.assert_allclose(d.get_output_port("y").eval(d.create_default_context()), [6.0])
