"""Swing a cart-pole up by direct collocation, then follow the trajectory with time-varying LQR.

The plant is the shipped ``cart_pole.urdf`` (Drake's standard cart-pole: cart 10 kg, a 1 kg
mass on a 0.5 m pole, rail force limit 100 N) as a ``RigidBodyPlant``, with a ``MatrixGain``
mapping the one actuated force to the generalized forces: a Diagram, optimized as it is by
``DirectCollocation`` (Hermite-Simpson, minimum effort, equal free time steps). The optimal
input is then played open loop through the plant (it drifts: collocation is an
approximation), and closed loop through ``FiniteHorizonLinearQuadraticRegulator`` around the
trajectory (it lands on the goal). Plots of the trajectory and the final errors are saved.

Run: ``python examples/cart_pole_swing_up.py [--knots 31] [--out DIR]``
"""
from __future__ import annotations

import os

import numpy as np

from multibody import models
from multibody.plants import RigidBodyPlant
from systems import DiagramBuilder
from systems.analysis import Simulator
from systems.controllers.lqr import FiniteHorizonLinearQuadraticRegulator
from systems.primitives import LogVectorOutput, MatrixGain, TrajectorySource
from systems.trajectory_optimization import DirectCollocation
from _plotting import pyplot, save_figure
from _cli import script_parser

GOAL = np.array([0.0, np.pi, 0.0, 0.0])
FORCE_LIMIT = 100.0
DURATION = (1.0, 3.0)        # s: bounds of the swing-up's duration
TIME_STEP = (0.01, 0.2)      # s: bounds of each knot interval


def add_cart_pole(builder: DiagramBuilder):
    """Add the cart-pole plant and its actuation (force on the cart) to ``builder``; returns
    ``(plant, actuation)`` (the actuation's input is the cart force)."""
    plant = builder.add_system(RigidBodyPlant(models.cart_pole(), name="cart_pole"))
    act = builder.add_system(MatrixGain([[1.0], [0.0]], name="actuation"))
    builder.connect(act.get_output_port(), plant.get_input_port("generalized_force"))
    return plant, act


def cart_pole_diagram():
    """The cart-pole with its force input exported as ``force`` and state as ``state``."""
    b = DiagramBuilder("cart_pole_diagram")
    plant, act = add_cart_pole(b)
    b.export_input(act.get_input_port(), "force")
    b.export_output(plant.get_output_port("state"), "state")
    return b.build()


def swing_up_problem(num_knots: int = 31):
    """The minimum-effort swing-up (from hanging at rest at x = 0 to upright at rest at x = 0,
    force within the rail limit, duration 1 to 3 s) as a ``DirectCollocation``."""
    d = cart_pole_diagram()
    dc = DirectCollocation(d, d.create_default_context(), num_knots, *TIME_STEP)
    dc.add_input_bounds(-FORCE_LIMIT, FORCE_LIMIT)
    dc.add_bounding_box_constraint(np.zeros(4), np.zeros(4), dc.initial_state())
    dc.add_bounding_box_constraint(GOAL, GOAL, dc.final_state())
    dc.add_equal_time_intervals_constraints()
    dc.add_duration_bounds(*DURATION)
    dc.add_running_cost(dc.input()[0] ** 2)
    dc.set_initial_trajectory(x_initial=np.zeros(4), x_final=GOAL)
    return d, dc


def simulate(u_traj, x_traj=None, *, tvlqr: bool = False):
    """Play ``u_traj`` through the plant from rest (open loop), or with a finite-horizon LQR
    around ``(x_traj, u_traj)``; returns ``(times, states)`` (states (4, n))."""
    t_final = u_traj.end_time()
    b = DiagramBuilder("cart_pole_run")
    plant, act = add_cart_pole(b)
    if tvlqr:
        d = cart_pole_diagram()
        Q, R = np.diag([10.0, 10.0, 1.0, 1.0]), np.array([[0.01]])
        lqr = FiniteHorizonLinearQuadraticRegulator(
            d, d.create_default_context(), u_traj.start_time(), t_final, Q, R, Qf=100.0 * Q,
            x0=x_traj, u0=u_traj)
        ctrl = b.add_system(lqr.controller(name="tvlqr"))
        b.connect(plant.get_output_port("state"), ctrl.get_input_port())
        b.connect(ctrl.get_output_port(), act.get_input_port())
    else:
        src = b.add_system(TrajectorySource(u_traj, name="u_open_loop"))
        b.connect(src.get_output_port("y"), act.get_input_port())
    log = LogVectorOutput(plant.get_output_port("state"), b)
    diagram = b.build()
    sim = Simulator(diagram, integrator="RK45", accuracy=1e-9)
    sim.advance_to(t_final)
    data = log.find_log(sim.get_context())
    return data.sample_times(), data.data()


def main(argv=None) -> dict:
    parser = script_parser(__doc__)
    parser.add_argument("--knots", type=int, default=31, help="collocation knots (21..41)")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "output"),
                        help="folder for the plot (PNG) and other outputs")
    args = parser.parse_args(argv)
    _, dc = swing_up_problem(args.knots)
    result = dc.solve()
    print(result)
    if not result.is_success():
        raise SystemExit(f"the swing-up did not converge: {result.status}")
    x_traj, u_traj = dc.reconstruct_state_trajectory(result), dc.reconstruct_input_trajectory(result)
    t_open, x_open = simulate(u_traj)
    t_fb, x_fb = simulate(u_traj, x_traj, tvlqr=True)
    open_err, fb_err = x_open[:, -1] - GOAL, x_fb[:, -1] - GOAL
    print(f"duration {u_traj.end_time():.3f} s, cost {result.cost:.2f}, {result.iterations} "
          f"iterations in {result.solve_time:.3f} s; max defect "
          f"{np.abs(dc.defects(result)).max():.2e}")
    print(f"open loop final error: cart {open_err[0]:+.4f} m, pole {np.degrees(open_err[1]):+.3f} deg")
    print(f"with TVLQR final error: cart {fb_err[0]:+.2e} m, pole {np.degrees(fb_err[1]):+.2e} deg")
    out = {"result": result, "open_loop_error": open_err, "tvlqr_error": fb_err, "png": None}
    plt = pyplot()
    if plt is not None:
        os.makedirs(args.out, exist_ok=True)
        ts = np.linspace(0.0, u_traj.end_time(), 400)
        fig, ax = plt.subplots(3, 1, figsize=(7, 8), sharex=True)
        ax[0].plot(ts, x_traj.vector_values(ts)[0], label="planned")
        ax[0].plot(t_open, x_open[0], "--", label="open loop")
        ax[0].plot(t_fb, x_fb[0], ":", label="TVLQR")
        ax[0].set_ylabel("cart x (m)")
        ax[0].legend()
        ax[1].plot(ts, x_traj.vector_values(ts)[1], label="planned")
        ax[1].plot(t_open, x_open[1], "--", label="open loop")
        ax[1].plot(t_fb, x_fb[1], ":", label="TVLQR")
        ax[1].axhline(np.pi, color="k", lw=0.5)
        ax[1].set_ylabel("pole angle (rad)")
        ax[2].plot(ts, u_traj.vector_values(ts)[0])
        ax[2].plot(dc.sample_times(result), u_traj.vector_values(dc.sample_times(result))[0], "o", ms=3)
        ax[2].set_ylabel("cart force (N)")
        ax[2].set_xlabel("time (s)")
        fig.suptitle("cart-pole swing-up: direct collocation, then TVLQR")
        out["png"] = save_figure(fig, os.path.join(args.out, "cart_pole_swing_up.png"))
    return out


if __name__ == "__main__":
    main()
