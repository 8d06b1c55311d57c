"""Pendulum swing-up with bounded torque: minimum effort by direct collocation.

The shipped ``pendulum.urdf`` as a ``RigidBodyPlant``; the torque is bounded so that the
pendulum must pump energy (swing back and forth) before it reaches the top. Saves a plot of
the angle and the torque.

Run: ``python examples/pendulum_swing_up.py [--knots 41] [--torque-limit 3] [--out DIR]``
"""
from __future__ import annotations

import os

import numpy as np

from multibody import models
from multibody.plants import RigidBodyPlant
from systems.trajectory_optimization import DirectCollocation
from _plotting import pyplot, save_figure
from _cli import script_parser

UPRIGHT = np.array([np.pi, 0.0])


def swing_up_problem(num_knots: int = 41, torque_limit: float = 3.0):
    """``(plant, problem)``: minimum effort from hanging at rest to upright at rest, torque
    within ``+-torque_limit``, duration 0.5 to 10 s."""
    plant = RigidBodyPlant(models.pendulum(), name="pendulum")
    dc = DirectCollocation(plant, plant.create_default_context(), num_knots, 0.01, 0.5)
    dc.add_input_bounds(-torque_limit, torque_limit)
    dc.add_bounding_box_constraint([0, 0], [0, 0], dc.initial_state())
    dc.add_bounding_box_constraint(UPRIGHT, UPRIGHT, dc.final_state())
    dc.add_equal_time_intervals_constraints()
    dc.add_duration_bounds(0.5, 10.0)
    dc.add_running_cost(dc.input()[0] ** 2)
    dc.set_initial_trajectory(x_initial=[0, 0], x_final=UPRIGHT)
    return plant, dc


def main(argv=None) -> dict:
    parser = script_parser(__doc__)
    parser.add_argument("--knots", type=int, default=41, help="collocation knots")
    parser.add_argument("--torque-limit", type=float, default=3.0,
                        help="bound on the joint torque (N m)")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "output"),
                        help="folder for the plot (PNG) and other outputs")
    args = parser.parse_args(argv)
    plant, dc = swing_up_problem(args.knots, args.torque_limit)
    result = dc.solve()
    print(result)
    if not result.is_success():
        raise SystemExit(f"the swing-up did not converge: {result.status}")
    x_traj, u_traj = dc.reconstruct_state_trajectory(result), dc.reconstruct_input_trajectory(result)
    print(f"duration {u_traj.end_time():.3f} s, cost {result.cost:.3f}, peak torque "
          f"{np.abs(u_traj.vector_values(dc.sample_times(result))).max():.3f} N m")
    out = {"result": result, "x_traj": x_traj, "u_traj": u_traj, "png": None}
    plt = pyplot()
    if plt is not None:
        os.makedirs(args.out, exist_ok=True)
        ts = np.linspace(0.0, u_traj.end_time(), 400)
        fig, ax = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
        ax[0].plot(ts, x_traj.vector_values(ts)[0])
        ax[0].axhline(np.pi, color="k", lw=0.5)
        ax[0].set_ylabel("angle (rad)")
        ax[1].plot(ts, u_traj.vector_values(ts)[0])
        ax[1].axhline(args.torque_limit, color="r", lw=0.5)
        ax[1].axhline(-args.torque_limit, color="r", lw=0.5)
        ax[1].set_ylabel("torque (N m)")
        ax[1].set_xlabel("time (s)")
        fig.suptitle("pendulum swing-up, minimum effort with a torque limit")
        out["png"] = save_figure(fig, os.path.join(args.out, "pendulum_swing_up.png"))
    return out


if __name__ == "__main__":
    main()
