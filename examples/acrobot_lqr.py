"""Balance an acrobot upright with an LQR controller designed from its own linearization.

The acrobot (Spong 1995 parameters: m1 = m2 = 1, l1 = 1, lc1 = 0.5, lc2 = 1, I1 = 0.083,
I2 = 0.33 about the centres of mass, joint damping b = 0.1) is a user LeafSystem written
once with ``solvers.ops``. ``LinearQuadraticRegulator(plant, context, Q, R)`` linearizes it
exactly at the upright equilibrium (CasADi differentiation) and returns the controller block;
the closed loop is simulated from a perturbed start, interpreted and compiled, and the
trajectories are plotted.

Run: ``python examples/acrobot_lqr.py [--out DIR] [--duration 5] [--perturbation 0.05]``
"""
from __future__ import annotations

import os

import numpy as np

from solvers import ops
from systems import DiagramBuilder, LeafSystem
from systems.analysis import Simulator
from systems.analysis.compiled import CompiledSimulator
from systems.controllers.lqr import LinearQuadraticRegulator
from systems.primitives import LogVectorOutput
from _plotting import pyplot, save_figure
from _cli import script_parser

SPONG = dict(m1=1.0, m2=1.0, l1=1.0, lc1=0.5, lc2=1.0, I1=0.083, I2=0.33, b1=0.1, b2=0.1, g=9.81)


class Acrobot(LeafSystem):
    """The acrobot: state [theta1, theta2, theta1_dot, theta2_dot], input elbow torque ``tau``.

    M(q) vdot + C(q, v) v + tau_g(q) + b v = [0, tau] with (Spong 1995; theta1 = 0 hanging
    down, theta2 relative to link 1)

        M = [[I1 + I2 + m2 l1^2 + 2 m2 l1 lc2 c2,  I2 + m2 l1 lc2 c2],
             [I2 + m2 l1 lc2 c2,                    I2]]

    where I1, I2 here are inertias about the joints (I + m lc^2).
    """

    #: The entries of the one parameter vector ``spong``, in order.
    PARAMETERS = tuple(SPONG)

    def __init__(self, **params):
        super().__init__("acrobot")
        unknown = set(params) - set(SPONG)
        if unknown:
            raise TypeError(f"Acrobot: unknown parameters {sorted(unknown)}; "
                            f"expected some of {list(SPONG)}")
        p = dict(SPONG, **params)
        # One parameter vector (read once per evaluation), entries named by PARAMETERS.
        self.declare_numeric_parameter("spong", [p[name] for name in SPONG])
        self.declare_continuous_state(4, num_q=2, num_v=2)
        self.tau = self.declare_input_port("tau", 1)
        self._tau_index = self.tau.index   # read by index from the own context
        self.declare_output_port("state", 4, lambda c: c.continuous_state, feedthrough=False)

    def mass_matrix_and_bias(self, context):
        """(M, bias) with M vdot + bias = [0, tau].

        Numeric contexts compute on Python floats (``ops.entries`` unpacks the state once);
        a symbolic context gives CasADi expressions, same code.
        """
        m11, m12, m22, bias1, bias2, _, _ = self._terms(context)
        return (m11, m12, m22), (bias1, bias2)

    @staticmethod
    def coefficients(spong):
        """The parameter combinations the dynamics use, from the parameter vector ``spong``
        (entries in :attr:`PARAMETERS` order; numeric or CasADi):

        (I1 + I2 + m2 l1^2, 2 m2 l1 lc2, I2, m2 l1 lc2, m1 lc1, m2, l1, lc2, g, b1, b2,
        g m2 lc2), with I1, I2 the inertias about the joints (I + m lc^2).
        """
        m1, m2, l1, lc1, lc2, I1c, I2c, b1, b2, g = ops.entries(spong)
        I1 = I1c + m1 * lc1 ** 2
        I2 = I2c + m2 * lc2 ** 2
        a = m2 * l1 * lc2
        return (I1 + I2 + m2 * l1 ** 2, 2 * a, I2, a, m1 * lc1, m2, l1, lc2, g, b1, b2,
                g * m2 * lc2)

    def _terms(self, context):
        """M11, M12, M22, bias1, bias2, v1, v2: the state unpacked once for both uses.

        The parameter combinations (:meth:`coefficients`) are kept in the context's memory
        with the parameter vector they came from, and used again while the context holds that
        very vector (a parameter change stores a new one: ``set_parameter`` never writes into
        the stored vector, the context's own copy, which numpy will not make writeable
        again)."""
        spong = context.get_parameter("spong")
        memory = context.get_memory()
        memo = memory.get("acrobot.coefficients")
        if memo is None or memo[0] is not spong:
            memo = memory["acrobot.coefficients"] = (spong, *self.coefficients(spong))
        _, k11, k12, I2, a, m1lc1, m2, l1, lc2, g, b1, b2, gm2lc2 = memo
        q1, q2, v1, v2 = ops.entries(context.continuous_state)
        c2, s1, s2, s12 = ops.cos(q2), ops.sin(q1), ops.sin(q2), ops.sin(q1 + q2)
        # a s2 v2, shared: (-2 a) s2 v2 is -2 (a s2 v2) exactly (a power-of-two factor)
        h = a * s2
        hv2 = h * v2
        bias1 = (-2 * hv2 * v1 - hv2 * v2
                 + g * (m1lc1 * s1 + m2 * (l1 * s1 + lc2 * s12)) + b1 * v1)
        bias2 = h * v1 * v1 + gm2lc2 * s12 + b2 * v2
        return k11 + k12 * c2, I2 + a * c2, I2, bias1, bias2, v1, v2

    def time_derivatives(self, context):
        m11, m12, m22, b1, b2, v1, v2 = self._terms(context)
        tau, = ops.entries(context.eval_input(self._tau_index))
        det = m11 * m22 - m12 * m12
        r1, r2 = -b1, tau - b2
        vdot1 = (m22 * r1 - m12 * r2) / det
        vdot2 = (m11 * r2 - m12 * r1) / det
        return ops.from_entries(v1, v2, vdot1, vdot2)


def build(q_weights=(10.0, 10.0, 1.0, 1.0), r_weight=1.0, log_period=0.01):
    """Acrobot + LQR balancing controller; returns (diagram, plant, controller, state log).

    ``log_period=None`` leaves the log sink out (the log is then None)."""
    plant = Acrobot()
    ctx = plant.create_default_context()
    ctx.set_continuous_state([np.pi, 0.0, 0.0, 0.0])
    plant.get_input_port().fix_value(ctx, [0.0])
    ctrl = LinearQuadraticRegulator(plant, ctx, np.diag(q_weights), np.array([[r_weight]]))
    b = DiagramBuilder("acrobot_lqr")
    b.add_system(plant)
    b.add_system(ctrl)
    b.connect(plant.get_output_port(), ctrl.get_input_port())
    b.connect(ctrl.get_output_port(), plant.get_input_port())
    log = None if log_period is None else LogVectorOutput(plant.get_output_port(), b, publish_period=log_period)
    return b.build(), plant, ctrl, log


def simulate(duration: float, perturbation: float, compiled: bool):
    """Run the closed loop; returns (times, states (4 x N))."""
    diagram, _, _, log = build()
    context = diagram.create_default_context()
    context.set_continuous_state([np.pi + perturbation, -perturbation, 0.0, 0.0])
    if compiled:
        sim = CompiledSimulator(diagram, context, integrator="cvodes", accuracy=1e-8)
    else:
        sim = Simulator(diagram, context, integrator="runge_kutta3", accuracy=1e-6)
    sim.advance_to(duration)
    data = log.find_log(context)
    return data.sample_times(), data.data()


def main(argv=None) -> dict:
    parser = script_parser(__doc__)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "output"),
                        help="folder for the plot (PNG) and other outputs")
    parser.add_argument("--duration", type=float, default=5.0, help="simulated time (s)")
    parser.add_argument("--perturbation", type=float, default=0.05,
                        help="initial offset of both joint angles from upright (rad)")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)

    t_i, x_i = simulate(args.duration, args.perturbation, compiled=False)
    t_c, x_c = simulate(args.duration, args.perturbation, compiled=True)
    gap = float(np.max(np.abs(x_i - x_c)))
    final_error = float(np.max(np.abs(x_c[:, -1] - [np.pi, 0.0, 0.0, 0.0])))
    print(f"acrobot under LQR, {args.duration} s from a {args.perturbation} rad perturbation: "
          f"final distance to upright {final_error:.2e}; interpreted vs compiled max gap {gap:.2e}")
    result = {"final_error": final_error, "gap": gap, "plot": None}
    plt = pyplot()
    if plt is None:
        return result
    fig, ax = plt.subplots(2, 1, figsize=(7, 5), sharex=True)
    for i, name in enumerate(["theta1 - pi", "theta2"]):
        ax[0].plot(t_c, x_c[i] - (np.pi if i == 0 else 0.0), label=name)
    ax[0].set_ylabel("angle [rad]")
    ax[0].legend()
    for i, name in enumerate(["theta1_dot", "theta2_dot"]):
        ax[1].plot(t_c, x_c[2 + i], label=name)
    ax[1].set_ylabel("rate [rad/s]")
    ax[1].set_xlabel("time [s]")
    ax[1].legend()
    fig.suptitle("Acrobot balanced by LQR")
    path = os.path.join(args.out, "acrobot_lqr.png")
    save_figure(fig, path)
    result["plot"] = path
    return result


if __name__ == "__main__":
    main()
