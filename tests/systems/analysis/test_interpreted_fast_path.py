"""The interpreted Simulator's fast paths give the numbers of the plain ones: the float path
of the RK schemes (same sums as the numpy expressions), the inputs read from their resolved
sources (re-resolved when a value is fixed), parameters by name or index, bitwise-identical
reruns."""
import numpy as np
import pytest

import systems.analysis.integrators as integrators
from systems import DiagramBuilder, LeafSystem
from systems.analysis import Simulator
from systems.analysis.integrators import make_stepper
from systems.controllers import PidController
from systems.primitives import ConstantVectorSource, Gain, LogVectorOutput


def _pendulum(t, x):
    return np.array([x[1], -9.81 * np.sin(x[0]) - 0.1 * x[1] + np.cos(t)])


@pytest.mark.parametrize("name", ["explicit_euler", "runge_kutta2", "runge_kutta3",
                                  "runge_kutta4"])
def test_float_path_steps_give_the_numpy_paths_numbers(name, monkeypatch):
    def trajectory():
        st = make_stepper(name, _pendulum, fixed_step=True, max_step=0.01, rtol=1e-6, atol=1e-9)
        st.reset(0.0, [1.0, 0.0])
        out = []
        for _ in range(50):
            st.step(1.0)
            out.append(np.array(st.x))
        return np.array(out), st.state_at(0.5 * (st.t_prev + st.t))
    fast, dense_fast = trajectory()
    monkeypatch.setattr(integrators, "SMALL_STATE", 0)   # every state "large": numpy path
    slow, dense_slow = trajectory()
    assert np.array_equal(fast, slow)             # bitwise: the same sums in the same order
    assert np.array_equal(dense_fast, dense_slow)


def test_error_controlled_float_path_matches_numpy_path_to_rounding(monkeypatch):
    def run():
        st = make_stepper("runge_kutta3", _pendulum, fixed_step=False, max_step=np.inf,
                          rtol=1e-8, atol=1e-10)
        st.reset(0.0, [1.0, 0.0])
        n = 0
        while st.t < 2.0:
            st.step(2.0)
            n += 1
        return st.x, n
    x_fast, n_fast = run()
    monkeypatch.setattr(integrators, "SMALL_STATE", 0)
    x_slow, n_slow = run()
    # the error norm may differ in its last bits (a dot product's order), nothing more
    assert abs(n_fast - n_slow) <= 1
    np.testing.assert_allclose(x_fast, x_slow, rtol=0, atol=1e-9)


class _DoubleIntegrator(LeafSystem):
    """p' = v, v' = u; output [p, v]."""

    def __init__(self):
        super().__init__("plant")
        self.declare_continuous_state(2, num_q=1, num_v=1)
        self.u = self.declare_input_port("u", 1)
        self.declare_output_port("state", 2, lambda c: c.continuous_state, feedthrough=False)

    def time_derivatives(self, context):
        x = context.continuous_state
        return np.array([x[1], self.u.eval(context)[0]])


def _loop():
    b = DiagramBuilder("loop")
    plant = b.add_system(_DoubleIntegrator())
    pid = b.add_system(PidController(3.0, 1.0, 0.5, name="pid"))
    ref = b.add_system(ConstantVectorSource([1.0, 0.0], name="ref"))
    amp = b.add_system(Gain(2.0, size=1, name="amp"))
    b.connect(pid.get_output_port_control(), amp.get_input_port())
    b.connect(amp.get_output_port(), plant.get_input_port())
    b.connect(plant.get_output_port(), pid.get_input_port_estimated_state())
    b.connect(ref.get_output_port(), pid.get_input_port_desired_state())
    log = LogVectorOutput(plant.get_output_port(), b)
    return b.build(), plant, log


def test_reruns_are_bitwise_identical_and_match_an_independent_integration():
    d, plant, log = _loop()
    runs = []
    for _ in range(2):
        ctx = d.create_default_context()
        Simulator(d, ctx, integrator="runge_kutta3", accuracy=1e-8).advance_to(3.0)
        data = log.find_log(ctx)
        runs.append((data.sample_times(), data.data(), np.array(ctx.continuous_state)))
    for a, b in zip(*runs):
        assert np.array_equal(a, b)
    # u = 2 (3 (1 - p) + z + 0.5 (0 - v)), z' = 1 - p: integrated by scipy
    from scipy.integrate import solve_ivp
    sol = solve_ivp(lambda t, y: [y[1], 6 * (1 - y[0]) + 2 * y[2] - y[1], 1 - y[0]], (0, 3),
                    [0, 0, 0], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(runs[0][2], sol.y[:, -1], rtol=0, atol=1e-6)


def test_an_input_fixed_after_its_source_was_resolved_is_read_from_the_fixed_value():
    d, plant, _ = _loop()
    ctx = d.create_default_context()
    pc = plant.get_my_context_from_root(ctx)
    assert plant.u.eval(pc)[0] == 6.0        # resolved to amp's output: 2 * 3 * (1 - 0)
    plant.u.fix_value(ctx, [7.0])
    assert plant.u.eval(pc)[0] == 7.0
    assert np.array_equal(d.eval_time_derivatives(ctx)[:2], [0.0, 7.0])


def test_an_input_exported_from_a_fixed_diagram_input_reads_the_fixed_value():
    inner = DiagramBuilder("inner")
    g = inner.add_system(Gain(2.0, size=1, name="g"))
    inner.export_input(g.get_input_port(), "u")
    inner.export_output(g.get_output_port(), "y")
    sub = inner.build()
    outer = DiagramBuilder("outer")
    s = outer.add_system(sub)
    src = outer.add_system(ConstantVectorSource([1.5], name="src"))
    outer.connect(src.get_output_port(), s.get_input_port())
    outer.export_output(s.get_output_port(), "y")
    d = outer.build()
    ctx = d.create_default_context()
    assert d.get_output_port().eval(ctx)[0] == 3.0
    s.get_input_port().fix_value(ctx, [4.0])      # fixed on the inner diagram's input
    assert g.get_input_port().eval(g.get_my_context_from_root(ctx))[0] == 4.0
    assert d.get_output_port().eval(ctx)[0] == 8.0


class _Params(LeafSystem):
    def __init__(self):
        super().__init__("params")
        self.declare_numeric_parameter("a", [1.0])
        self.declare_numeric_parameter("b", [2.0, 3.0])


def test_parameters_by_name_index_and_numpy_integer():
    s = _Params()
    c = s.create_default_context()
    assert c.get_parameter("b").tolist() == [2.0, 3.0]
    assert c.get_parameter(0).tolist() == [1.0]
    assert c.get_parameter(np.int64(1)).tolist() == [2.0, 3.0]
    with pytest.raises(ValueError, match="no parameter named 'c'"):
        c.get_parameter("c")
    with pytest.raises(IndexError, match="has no parameter 2"):
        c.get_parameter(2)
