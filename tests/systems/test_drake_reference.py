"""The same diagrams in Drake (pydrake) and here give the same logs and states: event order
(updates at t after the publishes at t, updates due at the final time left pending, the
monitor in Initialize), advance_to at the current time and step counts, sampled-data loops, DiscreteDerivative, DiscreteTimeIntegrator,
DiscreteTimeDelay, WrapToSystem and the zero-order-hold discretization.

Skipped when pydrake is not installed."""
import math

import numpy as np
import pytest

pd = pytest.importorskip("pydrake.systems.primitives", reason="pydrake (Drake) is not installed")
from pydrake.systems.analysis import DiscreteTimeApproximation as DrakeDiscreteTimeApproximation  # noqa: E402
from pydrake.systems.analysis import Simulator as DrakeSimulator  # noqa: E402
from pydrake.systems.framework import DiagramBuilder as DrakeBuilder  # noqa: E402
from pydrake.systems.framework import EventStatus as DrakeEventStatus  # noqa: E402

from systems import DiagramBuilder  # noqa: E402
from systems.analysis import Simulator  # noqa: E402
from systems import primitives as ours  # noqa: E402
from systems.primitives import discrete_time_approximation  # noqa: E402
from _systems_models import _jump_then_sample  # noqa: E402
import test_simulator_advance_to as adv  # noqa: E402  (the same runs, pydrake-free)

T = 0.1


def _ramp_diagram(lib, builder_cls, make_blocks):
    """ramp = integral of 2 (exact for any Runge-Kutta scheme) into the blocks."""
    b = builder_cls()
    src = b.AddSystem(lib.ConstantVectorSource([2.0])) if lib is pd else b.add_system(lib.ConstantVectorSource([2.0]))
    integ = b.AddSystem(lib.Integrator(1)) if lib is pd else b.add_system(lib.Integrator(1))
    connect = b.Connect if lib is pd else b.connect
    add = b.AddSystem if lib is pd else b.add_system
    connect(src.get_output_port(), integ.get_input_port())
    logs, blocks = [], make_blocks()
    for block in blocks:
        add(block)
        connect(integ.get_output_port(), block.get_input_port())
        logs.append(lib.LogVectorOutput(block.get_output_port(), b, T))
    return (b.Build() if lib is pd else b.build()), logs, blocks


def _drake_discrete_state(ctx):
    return np.concatenate([ctx.get_discrete_state(i).CopyToVector()
                           for i in range(ctx.num_discrete_state_groups())])


def _blocks(lib):
    return lambda: [lib.ZeroOrderHold(T, 1), lib.DiscreteTimeDelay(T, 2, 1),
                    lib.DiscreteDerivative(1, T, True), lib.DiscreteDerivative(1, T, False),
                    lib.DiscreteTimeIntegrator(1, T)]


def test_sampled_blocks_log_what_drake_logs():
    d_drake, logs_drake, blocks_drake = _ramp_diagram(pd, DrakeBuilder, _blocks(pd))
    sim_d = DrakeSimulator(d_drake)
    sim_d.AdvanceTo(1.0)
    ctx_d = sim_d.get_context()
    d_ours, logs_ours, blocks_ours = _ramp_diagram(ours, DiagramBuilder, _blocks(ours))
    sim_o = Simulator(d_ours)
    sim_o.advance_to(1.0)
    ctx_o = sim_o.get_context()
    names = ["ZeroOrderHold", "DiscreteTimeDelay", "DiscreteDerivative (suppressed)",
             "DiscreteDerivative", "DiscreteTimeIntegrator"]
    for name, ld, lo in zip(names, logs_drake, logs_ours):
        a, b = ld.FindLog(ctx_d), lo.find_log(ctx_o)
        np.testing.assert_allclose(b.sample_times(), a.sample_times(), atol=1e-12, err_msg=name)
        np.testing.assert_allclose(b.data(), a.data(), rtol=1e-12, atol=1e-12, err_msg=name)
    # The updates due at exactly 1.0 are pending in both: the blocks hold the same values.
    for name, bd, bo in zip(names, blocks_drake, blocks_ours):
        yd = bd.get_output_port().Eval(bd.GetMyContextFromRoot(ctx_d))
        yo = bo.get_output_port().eval(d_ours.get_subsystem_context(bo, ctx_o))
        np.testing.assert_allclose(yo, yd, rtol=1e-12, atol=1e-12, err_msg=name)
    # The ramp itself is the integral of 2 (the comparison is not of zeros).
    assert logs_ours[0].find_log(ctx_o).data()[0, -1] == pytest.approx(1.8, abs=1e-12)


def test_monitor_times_equal_drakes():
    def run(lib, builder_cls, sim_cls):
        b = builder_cls()
        add = b.AddSystem if lib is pd else b.add_system
        src = add(lib.ConstantVectorSource([1.0]))
        zoh = add(lib.ZeroOrderHold(T, 1))
        (b.Connect if lib is pd else b.connect)(src.get_output_port(), zoh.get_input_port())
        d = b.Build() if lib is pd else b.build()
        sim = sim_cls(d)
        times = []
        if lib is pd:
            sim.set_monitor(lambda c: (times.append(c.get_time()), DrakeEventStatus.Succeeded())[1])
            sim.Initialize()
            sim.AdvanceTo(0.35)
            sim.AdvanceTo(0.5)
        else:
            sim.set_monitor(lambda c: times.append(c.time))
            sim.initialize()
            sim.advance_to(0.35)
            sim.advance_to(0.5)
        return np.array(times)

    drake_times = run(pd, DrakeBuilder, DrakeSimulator)
    ours_times = run(ours, DiagramBuilder, Simulator)
    assert drake_times[0] == 0.0                     # Drake calls the monitor in Initialize()
    np.testing.assert_allclose(ours_times, drake_times, atol=1e-12)


def test_sampled_data_loop_state_equals_drakes():
    A = np.array([[0.0, 1.0], [-2.0, -0.5]])
    B = np.array([[0.0], [1.0]])
    Ac, Bc = np.array([[1.0]]), np.array([[-T, 0.0]])
    Cc, Dc = np.array([[2.0]]), np.array([[-8.0, -1.5]])

    def build(lib, builder_cls):
        b = builder_cls()
        add = b.AddSystem if lib is pd else b.add_system
        connect = b.Connect if lib is pd else b.connect
        plant = add(lib.LinearSystem(A, B, np.eye(2), np.zeros((2, 1))))
        zoh = add(lib.ZeroOrderHold(T, 2))
        ctrl = add(lib.LinearSystem(Ac, Bc, Cc, Dc, T))
        connect(plant.get_output_port(), zoh.get_input_port())
        connect(zoh.get_output_port(), ctrl.get_input_port())
        connect(ctrl.get_output_port(), plant.get_input_port())
        return b.Build() if lib is pd else b.build()

    d = build(pd, DrakeBuilder)
    sim_d = DrakeSimulator(d)
    ctx_d = sim_d.get_mutable_context()
    ctx_d.SetContinuousState([1.0, 0.0])
    sim_d.get_mutable_integrator().set_target_accuracy(1e-12)
    sim_d.AdvanceTo(3.0)
    o = build(ours, DiagramBuilder)
    ctx_o = o.create_default_context()
    ctx_o.set_continuous_state([1.0, 0.0])
    sim_o = Simulator(o, ctx_o, integrator="DOP853", accuracy=1e-12, max_step=1.0)
    sim_o.advance_to(3.0)
    x_d = ctx_d.get_continuous_state_vector().CopyToVector()
    xd_d = _drake_discrete_state(ctx_d)
    np.testing.assert_allclose(ctx_o.continuous_state, x_d, atol=1e-8)
    np.testing.assert_allclose(ctx_o.discrete_state, xd_d, atol=1e-8)
    assert np.linalg.norm(x_d) > 1e-3


def test_wrap_to_system_and_discretization_equal_drakes():
    w_d, w_o = pd.WrapToSystem(2), ours.WrapToSystem(2)
    for w in (w_d, w_o):
        w.set_interval(0, -math.pi, math.pi)
    c_d, c_o = w_d.CreateDefaultContext(), w_o.create_default_context()
    for u in ([3.5 * math.pi, 7.0], [-math.pi, -1.0], [math.pi, 0.5], [-20.0, 3.0]):
        w_d.get_input_port().FixValue(c_d, u)
        w_o.get_input_port().fix_value(c_o, u)
        np.testing.assert_allclose(w_o.get_output_port().eval(c_o),
                                   w_d.get_output_port().Eval(c_d), atol=1e-12)
    A = np.array([[0.0, 1.0], [-4.0, -0.6]])
    B = np.array([[0.0], [2.0]])
    C, D = np.array([[1.0, 0.5]]), np.array([[0.3]])
    dd = DrakeDiscreteTimeApproximation(pd.LinearSystem(A, B, C, D), 0.05)
    do = discrete_time_approximation(ours.LinearSystem(A, B, C, D), 0.05)
    np.testing.assert_allclose(do.A, dd.A(), atol=1e-13)
    np.testing.assert_allclose(do.B, dd.B(), atol=1e-13)
    np.testing.assert_allclose(do.C, dd.C(), atol=0)
    np.testing.assert_allclose(do.D, dd.D(), atol=0)
    assert dd.time_period() == do.time_period == 0.05


def test_unrestricted_then_discrete_updates_as_drake():
    """At a time where both are due, Drake's discrete updates see the unrestricted ones."""
    from pydrake.systems.framework import LeafSystem as DrakeLeafSystem

    class DrakeSource(DrakeLeafSystem):
        def __init__(self):
            super().__init__()
            index = self.DeclareDiscreteState(1)
            self.DeclarePeriodicUnrestrictedUpdateEvent(0.1, 0.1, self._jump)
            self.DeclareStateOutputPort("y", index)

        def _jump(self, context, state):
            x = context.get_discrete_state(0).get_value()
            state.get_mutable_discrete_state().get_mutable_vector(0).SetFromVector(x + 10.0)
            return DrakeEventStatus.Succeeded()

    class DrakeSampler(DrakeLeafSystem):
        def __init__(self):
            super().__init__()
            self.DeclareDiscreteState(1)
            self.u = self.DeclareVectorInputPort("u", 1)
            self.DeclarePeriodicDiscreteUpdateEvent(0.1, 0.1, self._sample)

        def _sample(self, context, xd):
            xd.get_mutable_vector(0).SetFromVector(self.u.Eval(context))
            return DrakeEventStatus.Succeeded()

    b = DrakeBuilder()
    src, smp = b.AddSystem(DrakeSource()), b.AddSystem(DrakeSampler())
    b.Connect(src.get_output_port(), smp.get_input_port())
    d = b.Build()
    sim = DrakeSimulator(d)
    sim.AdvanceTo(0.35)
    ctx = sim.get_context()
    drake_values = [src.GetMyContextFromRoot(ctx).get_discrete_state(0).get_value()[0],
                    smp.GetMyContextFromRoot(ctx).get_discrete_state(0).get_value()[0]]
    assert _jump_then_sample(0.35) == drake_values == [30.0, 30.0]


@pytest.mark.parametrize("time_period", [0.0, 0.1])
def test_trajectory_affine_system_equals_drakes(time_period):
    from pydrake.trajectories import PiecewisePolynomial as DrakePP
    Tf = 2.0
    mats = {"A": (np.array([[0.0, 1.0], [-1.0, -0.2]]), np.array([[0.0, 1.0], [-3.0, 0.1]])),
            "B": (np.array([[0.0], [1.0]]), np.array([[0.5], [2.0]])),
            "f0": (np.array([[0.1], [0.0]]), np.array([[-0.2], [0.3]])),
            "C": (np.array([[1.0, 0.0]]), np.array([[0.5, 1.0]])),
            "D": (np.array([[0.2]]), np.array([[-0.1]])),
            "y0": (np.array([[0.05]]), np.array([[0.15]]))}
    drake_args = [DrakePP.FirstOrderHold([0.0, Tf], [m0, m1]) for m0, m1 in mats.values()]
    # Ours: the same linear interpolation as a callable of t (exact symbolically too).
    ours_args = [(lambda m0, m1: lambda t: m0 + (m1 - m0) * (t / Tf))(m0, m1) for m0, m1 in mats.values()]
    dsys = pd.TrajectoryAffineSystem(*drake_args, time_period=time_period)
    osys = ours.TrajectoryAffineSystem(*ours_args, time_period=time_period)
    x0, u = np.array([1.0, -0.5]), np.array([0.7])
    sim_d = DrakeSimulator(dsys)
    cd = sim_d.get_mutable_context()
    if time_period:
        cd.SetDiscreteState(x0)
    else:
        cd.SetContinuousState(x0)
        sim_d.get_mutable_integrator().set_target_accuracy(1e-12)
    dsys.get_input_port().FixValue(cd, u)
    sim_d.AdvanceTo(1.5)
    co = osys.create_default_context()
    (co.set_discrete_state if time_period else co.set_continuous_state)(x0)
    osys.get_input_port().fix_value(co, u)
    Simulator(osys, co, integrator="DOP853", accuracy=1e-12, max_step=1.0).advance_to(1.5)
    xd = (cd.get_discrete_state_vector() if time_period else cd.get_continuous_state_vector()).CopyToVector()
    xo = co.discrete_state if time_period else co.continuous_state
    np.testing.assert_allclose(xo, xd, atol=1e-8 if not time_period else 1e-12)
    np.testing.assert_allclose(osys.get_output_port().eval(co), dsys.get_output_port().Eval(cd), atol=1e-8)
    assert np.linalg.norm(xd - x0) > 0.1


def test_selector_and_port_switch_equal_drakes():
    from pydrake.common.value import Value
    from pydrake.systems.framework import InputPortIndex
    S = pd.SelectorParams
    picks = [[(1, 0), (0, 2)], [(0, 0), (0, 0), (1, 1)]]
    params = S()
    params.inputs = [S.InputPortParams(name="a", size=3), S.InputPortParams(name="b", size=2)]
    params.outputs = [S.OutputPortParams(name=f"y{j}", selections=[
        S.OutputSelection(input_port_index=i, input_offset=e) for i, e in sel]) for j, sel in enumerate(picks)]
    sd = pd.Selector(params)
    so = ours.Selector([3, 2], picks, input_names=["a", "b"])
    cd, co = sd.CreateDefaultContext(), so.create_default_context()
    for name, v in (("a", [10.0, 11.0, 12.0]), ("b", [20.0, 21.0])):
        sd.GetInputPort(name).FixValue(cd, v)
        so.get_input_port(name).fix_value(co, v)
    for j in range(2):
        np.testing.assert_array_equal(so.get_output_port(f"y{j}").eval(co),
                                      sd.get_output_port(j).Eval(cd))
    # PortSwitch: Drake's selector is an InputPortIndex; ours the same index as a number.
    wd, wo = pd.PortSwitch(2), ours.PortSwitch(2)
    for name in ("p", "q"):
        wd.DeclareInputPort(name)
        wo.declare_input_port(name)
    cds, cos = wd.CreateDefaultContext(), wo.create_default_context()
    for name, v in (("p", [1.0, 2.0]), ("q", [3.0, 4.0])):
        wd.GetInputPort(name).FixValue(cds, v)
        wo.get_input_port(name).fix_value(cos, v)
    for k in (1, 2):
        wd.get_port_selector_input_port().FixValue(cds, Value(InputPortIndex(k)))
        wo.get_port_selector_input_port().fix_value(cos, [k])
        np.testing.assert_array_equal(wo.get_output_port("value").eval(cos),
                                      wd.get_output_port().Eval(cds))


# ---------------------------------------------------------------------- advance_to steps
# The same runs as tests/systems/test_simulator_advance_to.py (which holds the numbers for
# machines without pydrake), in pydrake: Drake gives those numbers and so do we.
def _drake_counter_and_per_step():
    from pydrake.systems.framework import LeafSystem as DrakeLeafSystem

    class Counter(DrakeLeafSystem):
        def __init__(self):
            super().__init__()
            self.DeclareDiscreteState(1)
            self.DeclarePeriodicDiscreteUpdateEvent(adv.P, 0.0, self._update)
            self.seen = []
            self.DeclarePeriodicPublishEvent(adv.P, 0.0, self._publish)

        def _update(self, context, xd):
            xd.get_mutable_vector(0).SetFromVector(context.get_discrete_state(0).get_value() + 1.0)

        def _publish(self, context):
            self.seen.append((context.get_time(), context.get_discrete_state(0).get_value()[0]))

    class PerStep(DrakeLeafSystem):
        def __init__(self):
            super().__init__()
            self.DeclareContinuousState(1)
            self.DeclareDiscreteState(1)
            self.DeclarePerStepDiscreteUpdateEvent(self._update)
            self.seen = []
            self.DeclarePerStepPublishEvent(self._publish)

        def _update(self, context, xd):
            xd.get_mutable_vector(0).SetFromVector(context.get_discrete_state(0).get_value() + 1.0)

        def _publish(self, context):
            self.seen.append((context.get_time(), context.get_discrete_state(0).get_value()[0]))

        def DoCalcTimeDerivatives(self, context, derivatives):
            derivatives.get_mutable_vector().SetFromVector([1.0])

    return Counter, PerStep


def _drake_fixed_step(sim, h):
    from pydrake.systems.analysis import ResetIntegratorFromFlags
    ResetIntegratorFromFlags(sim, "runge_kutta2", h)
    sim.get_mutable_integrator().set_fixed_step_mode(True)


def _dedup_last(times, values):
    """Drake's VectorLog keeps both samples of a time published twice; ours keeps the last."""
    keep = [i for i in range(len(times)) if i + 1 == len(times) or times[i + 1] != times[i]]
    return [times[i] for i in keep], [values[i] for i in keep]


def test_advance_to_the_current_time_steps_as_drakes():
    Counter, PerStep = _drake_counter_and_per_step()
    c = Counter()
    sim = DrakeSimulator(c)
    drake_counter = adv.run_calls(
        adv.COUNTER_CALLS, sim.Initialize, sim.AdvanceTo,
        lambda: (sim.get_context().get_time(),
                 sim.get_context().get_discrete_state(0).get_value()[0],
                 sim.get_num_steps_taken(), sim.get_num_discrete_updates(), list(c.seen)))
    assert drake_counter == adv.EXPECTED_COUNTER == adv.run_counter()

    s = PerStep()
    sim = DrakeSimulator(s)
    _drake_fixed_step(sim, adv.H)
    drake_per_step = adv.run_calls(
        adv.PER_STEP_CALLS, sim.Initialize, sim.AdvanceTo,
        lambda: (sim.get_context().get_time(), sim.get_num_steps_taken(), list(s.seen)))
    assert drake_per_step == adv.EXPECTED_PER_STEP == adv.run_per_step()


def test_per_step_log_and_monitor_as_drakes():
    b = DrakeBuilder()
    src = b.AddSystem(pd.ConstantVectorSource([2.0]))
    integ = b.AddSystem(pd.Integrator(1))
    b.Connect(src.get_output_port(), integ.get_input_port())
    log = pd.LogVectorOutput(integ.get_output_port(), b)
    sim = DrakeSimulator(b.Build())
    _drake_fixed_step(sim, 0.25)
    drake_ramp = []
    for _ in range(2):
        sim.AdvanceTo(1.0)
        data = log.FindLog(sim.get_context())
        times, values = _dedup_last(data.sample_times().tolist(), data.data()[0].tolist())
        drake_ramp.append((sim.get_num_steps_taken(), times, values))
    assert drake_ramp == adv.EXPECTED_RAMP == adv.run_logged_ramp()
    assert log.FindLog(sim.get_context()).sample_times().tolist()[-2:] == [1.0, 1.0]

    Counter, _ = _drake_counter_and_per_step()
    c = Counter()
    sim = DrakeSimulator(c)
    times = []
    sim.set_monitor(lambda ctx: (times.append(ctx.get_time()), DrakeEventStatus.Succeeded())[1])
    sim.Initialize()
    sim.AdvanceTo(0.5)
    sim.AdvanceTo(0.5)
    sim.AdvancePendingEvents()
    drake_monitor = (times, sim.get_num_steps_taken(), sim.get_context().get_discrete_state(0).get_value()[0])
    assert drake_monitor == adv.EXPECTED_MONITOR == adv.run_monitor()
