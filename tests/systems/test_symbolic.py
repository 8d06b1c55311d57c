"""systems.symbolic.to_casadi: functions of (t, x, xd, u, p) equal the numeric diagram."""
import casadi as ca
import numpy as np
import pytest

from systems import DiagramBuilder, LeafSystem, SymbolicEvaluationError
from systems.primitives import (Adder, ConstantVectorSource, Integrator, LinearSystem,
                                LogVectorOutput, Sine, ZeroOrderHold)
from systems.symbolic import to_casadi
from _systems_models import Pendulum


def _loop():
    b = DiagramBuilder("loop")
    plant = b.add_system(Pendulum())
    src = b.add_system(Sine(0.5, 2.0, 0.0, size=1))
    k = b.add_system(LinearSystem(D=[[-3.0, -1.0]], name="pd"))
    add = b.add_system(Adder(2, 1))
    b.connect(plant.get_output_port("state"), k.get_input_port())
    b.connect(k.get_output_port(), add.get_input_port(0))
    b.connect(src.get_output_port("y0"), add.get_input_port(1))
    b.connect(add.get_output_port(), plant.get_input_port())
    b.export_output(plant.get_output_port("energy"), "energy")
    b.export_output(add.get_output_port(), "tau")
    LogVectorOutput(plant.get_output_port("state"), b)
    return b.build()


def test_diagram_functions_match_numeric_evaluation():
    d = _loop()
    cs = to_casadi(d)
    assert (cs.nx, cs.nxd, cs.nu, cs.ny, cs.np) == (2, 0, 0, 2, 2)
    assert cs.output_slices == {"energy": slice(0, 1), "tau": slice(1, 2)}
    assert cs.state_names == ["pendulum[0]", "pendulum[1]"]
    assert cs.parameter_names == ["pendulum.g[0]", "pendulum.b[0]"]
    ctx = d.create_default_context()
    rng = np.random.default_rng(0)
    for _ in range(5):
        t, x, p = rng.uniform(0, 3), rng.normal(size=2), rng.uniform(0.1, 10, size=2)
        ctx.set_time(t)
        ctx.set_continuous_state(x)
        ctx.set_parameters(p)
        np.testing.assert_allclose(np.ravel(cs.f(t, x, [], [], p)), d.eval_time_derivatives(ctx), rtol=1e-14)
        y = np.ravel(cs.g(t, x, [], [], p))
        np.testing.assert_allclose(cs.output_value("energy", y), d.get_output_port("energy").eval(ctx), rtol=1e-14)
        np.testing.assert_allclose(cs.output_value("tau", y), d.get_output_port("tau").eval(ctx), rtol=1e-14)
    t, x, xd, u, p = cs.from_context(ctx)
    np.testing.assert_array_equal(p, ctx.parameters)


def test_inputs_and_context_round_trip():
    b = DiagramBuilder("open")
    plant = b.add_system(Pendulum())
    b.export_input(plant.get_input_port(), "tau")
    b.export_output(plant.get_output_port("state"), "state")
    d = b.build()
    cs = to_casadi(d)
    assert cs.nu == 1 and cs.input_slices == {"tau": slice(0, 1)}
    ctx = d.create_default_context()
    cs.to_context(ctx, t=1.0, x=[0.2, -0.1], u=[0.7], p=[9.0, 0.0])
    t, x, xd, u, p = cs.from_context(ctx)
    assert t == 1.0 and list(u) == [0.7] and list(p) == [9.0, 0.0]
    np.testing.assert_allclose(np.ravel(cs.f(t, x, xd, u, p)), [-0.1, -9.0 * np.sin(0.2) + 0.7])
    # Exact derivative: d xdot / d u = [0, 1].
    J = ca.Function("J", [cs.symbols["u"]], [ca.jacobian(cs.f(0, [0.2, -0.1], [], cs.symbols["u"], p), cs.symbols["u"])])
    np.testing.assert_array_equal(np.ravel(J(0.0)), [0.0, 1.0])


def test_discrete_update_function():
    b = DiagramBuilder("sampled")
    zoh = b.add_system(ZeroOrderHold(0.1, 1))
    ctrl = b.add_system(LinearSystem([[0.5]], [[1.0]], [[2.0]], [[0.0]], time_period=0.1, name="ctrl"))
    src = b.add_system(ConstantVectorSource([3.0]))
    b.connect(src.get_output_port(), zoh.get_input_port())
    b.connect(zoh.get_output_port(), ctrl.get_input_port())
    b.export_output(ctrl.get_output_port(), "y")
    d = b.build()
    cs = to_casadi(d)
    assert (cs.nxd, cs.update_period, cs.update_offset) == (2, 0.1, 0.0)
    np.testing.assert_allclose(np.ravel(cs.update(0, [], [1.0, 4.0], [], [3.0])), [3.0, 0.5 * 4.0 + 1.0])
    np.testing.assert_allclose(np.ravel(cs.g(0, [], [1.0, 4.0], [], [3.0])), [8.0])


def test_non_symbolic_block_is_named():
    class NumpyOnly(LeafSystem):
        def __init__(self):
            super().__init__("numpy_only")
            self.declare_continuous_state(1)
            self.declare_output_port("y", 1, lambda c: c.continuous_state, feedthrough=False)

        def time_derivatives(self, c):
            return [float(np.tanh(float(c.continuous_state[0])))]

    b = DiagramBuilder()
    b.add_system(NumpyOnly())
    b.add_system(Integrator(1))
    d = b.build()
    with pytest.raises(SymbolicEvaluationError, match="system 'numpy_only'"):
        to_casadi(d)

    class Branchy(LeafSystem):
        def __init__(self):
            super().__init__("branchy")
            self.declare_continuous_state(1)
            self.declare_output_port("y", 1, lambda c: c.continuous_state if c.continuous_state[0] > 0 else [0.0],
                                     feedthrough=False)

        def time_derivatives(self, c):
            return -c.continuous_state

    with pytest.raises(SymbolicEvaluationError, match="system 'branchy'"):
        to_casadi(Branchy())
