"""A box sliding to rest on the ground with Coulomb friction, as a continuous-time
RigidBodySystem (Baraff's acceleration-level formulation): four corner contacts slide with
friction -mu f_n s until the slip velocity crosses zero (witness ``stop``), then stick.

Prints the stopping time and distance against v0 / (mu g) and v0^2 / (2 mu g) and saves
``sliding_box.png`` (position, velocity, total friction force).

Run: ``.venv/bin/python examples/sliding_box.py [--out DIR] [--v0 V] [--mu MU]``
"""
from __future__ import annotations

import os
from typing import Optional

import numpy as np

from multibody.models import G, box_on_ground
from multibody.constraints import PointContactConstraint
from multibody.plants import RigidBodySystem
from systems.analysis import Simulator
from _plotting import pyplot, save_figure
from _cli import script_parser

DEFAULT_OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "output")


def save_plot(path, t, x, vx, fx) -> Optional[str]:
    plt = pyplot()
    if plt is None:
        return None
    fig, ax = plt.subplots(3, 1, figsize=(7, 6), sharex=True)
    ax[0].plot(t, x)
    ax[0].set_ylabel("x [m]")
    ax[1].plot(t, vx)
    ax[1].set_ylabel("v_x [m/s]")
    ax[2].plot(t, fx)
    ax[2].set_ylabel("friction force x [N]")
    ax[2].set_xlabel("time [s]")
    for a in ax:
        a.grid(True)
    ax[0].set_title("box sliding to rest (continuous time, Coulomb friction)")
    fig.tight_layout()
    save_figure(fig, path)
    return path


def main(argv=None) -> dict:
    p = script_parser(__doc__)
    p.add_argument("--out", default=DEFAULT_OUT, help="directory for the PNG")
    p.add_argument("--v0", type=float, default=1.0, help="initial speed [m/s]")
    p.add_argument("--mu", type=float, default=0.5, help="friction coefficient")
    p.add_argument("--duration", type=float, default=0.4, help="simulated time [s]")
    args = p.parse_args(argv)

    m = 2.0
    tree = box_on_ground(mass=m)
    s = RigidBodySystem(tree, constraints=[PointContactConstraint(tree, mu=args.mu, name="contact")],
                        name="box")
    ctx = s.create_default_context()
    s.set_positions(ctx, [1, 0, 0, 0, 0, 0, 0.1])
    s.set_velocities(ctx, [0, 0, 0, args.v0, 0, 0])
    sim = Simulator(s, ctx, integrator="RK45", accuracy=1e-10, max_step=0.01)
    rows, stop = [], []

    def monitor(c):
        if not stop and s.modes(ctx)[0] is not None and s.modes(ctx)[0][0] == "stick":
            # the mode switched at the start of the step leaving the stop time (Drake's order)
            stop.append(rows[-1][0] if rows else float(ctx.time))
        f = s.get_output_port("contact_results").eval(ctx).total_force("box")
        rows.append((float(ctx.time), s.get_positions(ctx)[4], s.get_velocities(ctx)[3], f[0]))
    sim.set_monitor(monitor)
    sim.initialize()
    sim.advance_to(args.duration)
    d = s.get_positions(ctx)[4]
    d_ana = args.v0 ** 2 / (2 * args.mu * G)
    t_ana = args.v0 / (args.mu * G)
    t_stop = stop[0] if stop else float("nan")
    os.makedirs(args.out, exist_ok=True)
    png = save_plot(os.path.join(args.out, "sliding_box.png"), *(np.array([r[i] for r in rows])
                                                                  for i in range(4)))
    print(f"sliding box, v0 = {args.v0:g} m/s, mu = {args.mu:g}: mode at the end {s.modes(ctx)[0]}")
    print(f"  stopping time      {t_stop:.10f} s   analytic {t_ana:.10f} s   error {abs(t_stop - t_ana):.1e}")
    print(f"  stopping distance  {d:.10f} m   analytic {d_ana:.10f} m   error {abs(d - d_ana):.1e}")
    if png:
        print(f"  plot saved to {png}")
    return {"stop_time": t_stop, "stop_distance": float(d), "analytic_distance": d_ana,
            "analytic_time": t_ana, "png": png}


if __name__ == "__main__":
    main()
