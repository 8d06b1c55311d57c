"""A mass-spring-damper under PID control, simulated and plotted.

The plant m q'' + c q' + k q = u (m = 1, c = 0.5, k = 2) is a LeafSystem written here; a
``PidController(kp=10, ki=5, kd=2)`` tracks a unit step of the position reference at
``--step-time``. The plant state and the control are logged every step; the script prints
the overshoot, the 2 % settling time and the final position (checked against the matrix
exponential of the closed loop), and saves ``mass_spring_damper_pid.png``.

Run: ``.venv/bin/python examples/mass_spring_damper_pid.py [--out DIR] [--integrator NAME]``
"""
from __future__ import annotations

import os
from typing import Optional

import numpy as np
from scipy.linalg import expm

from solvers import ops
from systems import DiagramBuilder, LeafSystem
from systems.analysis import Simulator
from systems.controllers import PidController
from systems.primitives import LogVectorOutput, Step
from _plotting import pyplot, save_figure
from _cli import script_parser

DEFAULT_OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "output")


class MassSpringDamper(LeafSystem):
    """m q'' + c q' + k q = u.

    State x = [q; v] (num_q = num_v = 1), input ``force`` (1), output ``state`` = x (2).
    """

    def __init__(self, m: float = 1.0, c: float = 0.5, k: float = 2.0, name: str = "plant"):
        super().__init__(name)
        self.m, self.c, self.k = float(m), float(c), float(k)
        self.declare_continuous_state(2, num_q=1, num_v=1)
        self._u = self.declare_input_port("force", 1)
        self.declare_output_port("state", 2, lambda ctx: ctx.continuous_state, feedthrough=False,
                                 prerequisites=["continuous_state"])

    def time_derivatives(self, context):
        # ops.entries: Python floats when numeric (cheapest), CasADi scalars when traced;
        # ops.from_entries: their tuple back (the Simulator takes it as is), or a CasADi column
        q, v = ops.entries(context.continuous_state)
        u, = ops.entries(self._u.eval(context))
        return ops.from_entries(v, (u - self.c * v - self.k * q) / self.m)


def build(kp=10.0, ki=5.0, kd=2.0, step_time=0.5, m=1.0, c=0.5, k=2.0):
    """The closed loop; returns (diagram, state log sink, control log sink)."""
    b = DiagramBuilder("msd_pid")
    plant = b.add_system(MassSpringDamper(m, c, k))
    pid = b.add_system(PidController(kp, ki, kd, name="pid"))
    ref = b.add_system(Step(step_time, initial_value=[0.0, 0.0], final_value=[1.0, 0.0],
                            name="reference"))
    b.connect(plant.get_output_port("state"), pid.get_input_port_estimated_state())
    b.connect(ref.get_output_port(), pid.get_input_port_desired_state())
    b.connect(pid.get_output_port_control(), plant.get_input_port("force"))
    state_log = LogVectorOutput(plant.get_output_port("state"), b)
    control_log = LogVectorOutput(pid.get_output_port_control(), b)
    return b.build(), state_log, control_log


def exact_position(t: float, step_time: float, kp=10.0, ki=5.0, kd=2.0, m=1.0, c=0.5, k=2.0):
    """Position of the linear closed loop [q, v, z] at ``t`` (matrix exponential)."""
    if t <= step_time:
        return 0.0
    A = np.array([[0.0, 1.0, 0.0], [-(k + kp) / m, -(c + kd) / m, ki / m], [-1.0, 0.0, 0.0]])
    b = np.array([0.0, kp / m, 1.0])
    E = expm(np.block([[A, b[:, None]], [np.zeros((1, 4))]]) * (t - step_time))
    return float(E[0, 3])


def save_plot(path: str, t, x, tu, u, step_time: float) -> Optional[str]:
    """Plot position/velocity and control; returns the path, or None without matplotlib."""
    plt = pyplot()
    if plt is None:
        return None
    fig, (ax1, ax2) = plt.subplots(2, 1, sharex=True, figsize=(7, 5))
    ax1.plot(t, x[0], label="position q [m]")
    ax1.plot(t, x[1], label="velocity v [m/s]")
    ax1.step([t[0], step_time, t[-1]], [0, 1, 1], where="post", ls="--", c="gray",
             label="reference")
    ax1.legend(loc="lower right")
    ax1.grid(True)
    ax2.plot(tu, u[0], c="C3", label="control u [N]")
    ax2.set_xlabel("time [s]")
    ax2.legend(loc="upper right")
    ax2.grid(True)
    fig.suptitle("mass-spring-damper under PID (kp=10, ki=5, kd=2)")
    fig.tight_layout()
    save_figure(fig, path)
    return path


def main(argv=None) -> dict:
    """Simulate, print a summary, save the plot; returns the summary numbers."""
    p = script_parser(__doc__)
    p.add_argument("--out", default=DEFAULT_OUT, help="directory for the PNG")
    p.add_argument("--t-end", type=float, default=10.0, help="simulated time [s]")
    p.add_argument("--step-time", type=float, default=0.5, help="time of the reference step [s]")
    p.add_argument("--integrator", default="RK45", help="Simulator integrator name")
    p.add_argument("--accuracy", type=float, default=1e-8,
                   help="integrator accuracy (relative tolerance)")
    args = p.parse_args(argv)

    diagram, state_log, control_log = build(step_time=args.step_time)
    sim = Simulator(diagram, integrator=args.integrator, accuracy=args.accuracy, max_step=0.05)
    sim.advance_to(args.t_end)
    ctx = sim.get_context()
    t, x = state_log.find_log(ctx).sample_times(), state_log.find_log(ctx).data()
    tu, u = control_log.find_log(ctx).sample_times(), control_log.find_log(ctx).data()

    q_final = float(x[0, -1])
    overshoot = 100.0 * (np.max(x[0]) - 1.0)
    outside = np.flatnonzero(np.abs(x[0] - 1.0) > 0.02)
    settling = float(t[outside[-1] + 1] - args.step_time) if outside.size and outside[-1] + 1 < len(t) else float("nan")
    exact = exact_position(args.t_end, args.step_time)
    os.makedirs(args.out, exist_ok=True)
    png = save_plot(os.path.join(args.out, "mass_spring_damper_pid.png"), t, x, tu, u,
                    args.step_time)
    print(f"mass-spring-damper + PID, {args.integrator}, {sim.get_num_steps_taken()} steps")
    print(f"  overshoot {overshoot:.2f} %, 2 % settling time {settling:.3f} s")
    print(f"  final position {q_final:.9f} (matrix exponential {exact:.9f}, "
          f"difference {abs(q_final - exact):.1e})")
    if png:
        print(f"  plot saved to {png}")
    return {"final_position": q_final, "exact_final_position": exact, "overshoot_percent": overshoot,
            "settling_time": settling, "steps": sim.get_num_steps_taken(), "png": png}


if __name__ == "__main__":
    main()
