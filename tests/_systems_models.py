"""Test helper: small systems shared by the symbolic, linearization, LQR and compiled
simulation tests (a damped pendulum LeafSystem, its LQR loop, a sampled-data loop)."""
import numpy as np

from solvers import ops
from systems import DiagramBuilder, LeafSystem
from systems.controllers.lqr import LinearQuadraticRegulator
from systems.primitives import LinearSystem, LogVectorOutput, ZeroOrderHold

G, B_DAMP = 9.81, 0.1
X0 = [np.pi - 0.3, 0.5]


class Pendulum(LeafSystem):
    def __init__(self, damping=0.1):
        super().__init__("pendulum")
        self.declare_continuous_state(2, num_q=1, num_v=1)
        self.declare_numeric_parameter("g", [9.81])
        self.declare_numeric_parameter("b", [damping])
        self.u = self.declare_input_port("tau", 1)
        self.declare_output_port("state", 2, lambda c: c.continuous_state)
        self.declare_output_port("energy", 1, self._energy)

    def _energy(self, c):
        th, om = c.continuous_state[0], c.continuous_state[1]
        return 0.5 * om**2 + c.get_parameter("g")[0] * (1 - ops.cos(th))

    def time_derivatives(self, c):
        th, om = c.continuous_state[0], c.continuous_state[1]
        return ops.vertcat(om, -c.get_parameter("g")[0] * ops.sin(th) - c.get_parameter("b")[0] * om
                           + self.u.eval(c)[0])


def _plant_context(theta, omega=0.0, tau=0.0):
    p = Pendulum(damping=B_DAMP)
    ctx = p.create_default_context()
    ctx.set_continuous_state([theta, omega])
    p.get_input_port().fix_value(ctx, [tau])
    return p, ctx


def _closed_loop_lqr():
    plant, ctx = _plant_context(np.pi)
    ctrl = LinearQuadraticRegulator(plant, ctx, np.diag([10.0, 1.0]), np.array([[1.0]]))
    b = DiagramBuilder("inverted")
    b.add_system(plant)
    b.add_system(ctrl)
    b.connect(plant.get_output_port("state"), ctrl.get_input_port())
    b.connect(ctrl.get_output_port(), plant.get_input_port())
    b.export_output(plant.get_output_port("state"), "state")
    return b.build(), ctrl


def _sampled_data_loop(T=0.1):
    b = DiagramBuilder("sampled_data")
    plant = b.add_system(LinearSystem([[0.5]], [[1.0]], [[1.0]], [[0.0]], name="plant"))
    zoh = b.add_system(ZeroOrderHold(T, 1))
    ctrl = b.add_system(LinearSystem([[0.5]], [[1.0]], [[-0.8]], [[-0.3]], time_period=T, name="ctrl"))
    b.connect(plant.get_output_port(), zoh.get_input_port())
    b.connect(zoh.get_output_port(), ctrl.get_input_port())
    b.connect(ctrl.get_output_port(), plant.get_input_port())
    b.export_output(plant.get_output_port(), "y")
    sink = LogVectorOutput(plant.get_output_port(), b, publish_period=T)
    return b.build(), sink


class _JumpSource(LeafSystem):
    """A periodic unrestricted update adds 10 to xd at t = 0.1 k (k >= 1); output xd."""

    def __init__(self):
        super().__init__("source")
        self.declare_discrete_state(1)
        self.declare_periodic_unrestricted_update(
            0.1, 0.1, lambda c, s: s.set_discrete_state(s.discrete_state + 10.0))
        self.declare_output_port("y", 1, lambda c: c.discrete_state, feedthrough=False)


class _Sampler(LeafSystem):
    """A periodic discrete update samples its input at the same times (0.1 k)."""

    def __init__(self):
        super().__init__("sampler")
        self.declare_discrete_state(1)
        u = self.declare_input_port("u", 1)
        self.declare_periodic_discrete_update(0.1, 0.1, lambda c: u.eval(c))


def _jump_then_sample(t_final=0.35):
    """Source -> Sampler, both updated every 0.1 s, simulated to ``t_final``; returns the final
    discrete states [source, sampler] (Drake: the sampler sees the source's update due at the
    same time, so both read 30 at t = 0.35)."""
    from systems.analysis import Simulator
    b = DiagramBuilder()
    src, smp = b.add_system(_JumpSource()), b.add_system(_Sampler())
    b.connect(src.get_output_port(), smp.get_input_port())
    d = b.build()
    sim = Simulator(d)
    sim.advance_to(t_final)
    ctx = sim.get_context()
    return [d.get_subsystem_context(src, ctx).discrete_state[0],
            d.get_subsystem_context(smp, ctx).discrete_state[0]]



class Counter(LeafSystem):
    """xd <- xd + 1 every ``period`` from 0; a periodic publish every ``period`` records
    (t, xd) in ``seen``."""

    def __init__(self, period):
        super().__init__("counter")
        self.declare_discrete_state(1)
        self.declare_periodic_discrete_update(period, 0.0, lambda c: c.discrete_state + 1.0)
        self.seen = []
        self.declare_periodic_publish(period, 0.0,
                                      lambda c: self.seen.append((c.time, c.discrete_state[0])))


class PerStep(LeafSystem):
    """xdot = 1; a per-step discrete update xd <- xd + 1 and a per-step publish recording
    (t, xd) in ``seen``."""

    def __init__(self):
        super().__init__("per_step")
        self.declare_continuous_state(1)
        self.declare_discrete_state(1)
        self.declare_per_step_discrete_update(lambda c: c.discrete_state + 1.0)
        self.seen = []
        self.declare_per_step_publish(lambda c: self.seen.append((c.time, c.discrete_state[0])))

    def time_derivatives(self, context):
        return [1.0]
