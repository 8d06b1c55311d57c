"""A bouncing ball: a witness function finds each impact, an unrestricted update reverses
the velocity.

The ball falls from ``--height`` under gravity; when its height crosses zero downward
(witness ``ground``, isolated in time to 1e-10 s) its velocity becomes ``-e v`` with
restitution ``--restitution``. A monitor stops the run after ``--bounces`` impacts. The
script prints the impact times next to the analytic sequence
t_1 = sqrt(2 h / g), t_{n+1} = t_n + 2 e^n v_1 / g, and saves ``bouncing_ball.png``.

Run: ``.venv/bin/python examples/bouncing_ball.py [--out DIR] [--bounces N]``
"""
from __future__ import annotations

import math
import os
from typing import List, Optional

import numpy as np

from systems import DiagramBuilder, LeafSystem
from systems.analysis import EventStatus, Simulator
from systems.primitives import LogVectorOutput
from _plotting import pyplot, save_figure
from _cli import script_parser

DEFAULT_OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "output")
GRAVITY = 9.81


class BouncingBall(LeafSystem):
    """z'' = -g with impacts v <- -e v at z = 0.

    State x = [z; v] (num_q = num_v = 1); output ``state`` = x. The impact times are kept
    in the abstract state (a list), so each context has its own.
    """

    def __init__(self, restitution: float = 0.8, height: float = 1.0, name: str = "ball"):
        super().__init__(name)
        if not 0.0 <= restitution <= 1.0:
            raise ValueError(f"BouncingBall '{name}': restitution must be in [0, 1], got {restitution}")
        self.e = float(restitution)
        self.declare_continuous_state(2, num_q=1, num_v=1, initial=[height, 0.0])
        self._impacts = self.declare_abstract_state([])
        self.declare_output_port("state", 2, lambda ctx: ctx.continuous_state, feedthrough=False,
                                 prerequisites=["continuous_state"])
        self.declare_witness_function("ground", "positive_then_nonpositive",
                                      lambda ctx: ctx.continuous_state[0], self._bounce)

    def time_derivatives(self, context):
        return np.array([context.continuous_state[1], -GRAVITY])

    def _bounce(self, context, state) -> None:
        z, v = state.continuous_state
        state.set_continuous_state([z, -self.e * v])
        state.set_abstract_state(self._impacts, state.abstract_state[self._impacts] + [context.time])

    def impact_times(self, context) -> List[float]:
        """Impact times recorded in ``context`` (this system's or an enclosing one)."""
        return list(self.get_my_context_from_root(context).abstract_state[self._impacts])


def analytic_impacts(n: int, restitution: float, height: float) -> np.ndarray:
    """The first ``n`` impact times of a ball dropped from rest at ``height``."""
    t = math.sqrt(2.0 * height / GRAVITY)
    v1 = GRAVITY * t
    out = [t]
    for k in range(1, n):
        t += 2.0 * restitution ** k * v1 / GRAVITY
        out.append(t)
    return np.array(out[:n])


def save_plot(path: str, t, z, impacts, restitution: float) -> Optional[str]:
    """Plot the height and mark the impacts; returns the path, or None without matplotlib."""
    plt = pyplot()
    if plt is None:
        return None
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.plot(t, z, label="height z [m]")
    ax.plot(impacts, np.zeros(len(impacts)), "o", c="C3", ms=4, label="impacts (witness)")
    ax.set_xlabel("time [s]")
    ax.grid(True)
    ax.legend(loc="upper right")
    ax.set_title(f"bouncing ball, restitution {restitution:g}")
    fig.tight_layout()
    save_figure(fig, path)
    return path


def main(argv=None) -> dict:
    """Simulate, print impact times against the analytic ones, save the plot."""
    p = script_parser(__doc__)
    p.add_argument("--out", default=DEFAULT_OUT, help="directory for the PNG")
    p.add_argument("--bounces", type=int, default=10, help="stop after this many impacts")
    p.add_argument("--restitution", type=float, default=0.8,
                   help="coefficient of restitution e (rebound speed / impact speed)")
    p.add_argument("--height", type=float, default=1.0, help="drop height [m]")
    p.add_argument("--integrator", default="runge_kutta3", help="Simulator integrator name")
    args = p.parse_args(argv)

    b = DiagramBuilder("bouncing_ball")
    ball = b.add_system(BouncingBall(args.restitution, args.height))
    log = LogVectorOutput(ball.get_output_port("state"), b)
    diagram = b.build()
    sim = Simulator(diagram, integrator=args.integrator, max_step=0.01)
    sim.set_monitor(lambda ctx: EventStatus.reached_termination(f"{args.bounces} bounces")
                    if len(ball.impact_times(ctx)) >= args.bounces else None)
    expected = analytic_impacts(args.bounces, args.restitution, args.height)
    sim.advance_to(expected[-1] + 1.0)
    ctx = sim.get_context()
    impacts = np.array(ball.impact_times(ctx))
    errors = np.abs(impacts - expected[:len(impacts)])
    data = log.find_log(ctx)
    os.makedirs(args.out, exist_ok=True)
    png = save_plot(os.path.join(args.out, "bouncing_ball.png"), data.sample_times(),
                    data.data()[0], impacts, args.restitution)
    print(f"bouncing ball, e = {args.restitution}, {args.integrator}: {len(impacts)} impacts, "
          f"{sim.get_num_steps_taken()} steps")
    for i, (ti, te) in enumerate(zip(impacts, expected)):
        print(f"  impact {i + 1:2d}: t = {ti:.10f} s   analytic {te:.10f} s   error {abs(ti - te):.1e}")
    print(f"  largest error {errors.max():.2e} s")
    if png:
        print(f"  plot saved to {png}")
    return {"impact_times": impacts, "analytic_impact_times": expected,
            "max_error": float(errors.max()), "png": png}


if __name__ == "__main__":
    main()
