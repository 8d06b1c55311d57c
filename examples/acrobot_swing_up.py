"""Acrobot swing-up: direct collocation, time-varying LQR along it, then LQR at the top, in one
Diagram.

The plant is the shipped ``acrobot.urdf`` (Spong's parameters) as a ``RigidBodyPlant`` with only
the elbow actuated (a ``MatrixGain``). ``DirectCollocation`` finds a minimum-effort swing-up
from hanging at rest to upright at rest with the elbow torque bounded;
``FiniteHorizonLinearQuadraticRegulator`` stabilizes the trajectory and its cost-to-go at the
end is the upright LQR's (``Qf`` = the LQR's ``S``), and a time switch hands over to the
``LinearQuadraticRegulator`` designed at the top. The closed loop is simulated from a slightly
perturbed start and must stay balanced long after the plan ends. The plot shows the plan, the
closed loop and the torque.

Run: ``python examples/acrobot_swing_up.py [--knots 41] [--hold 3] [--out DIR]``
"""
from __future__ import annotations

import os
from typing import Optional

import numpy as np

from multibody import models
from multibody.plants import RigidBodyPlant
from systems import DiagramBuilder, LeafSystem
from systems.analysis import Simulator
from systems.controllers.lqr import (FiniteHorizonLinearQuadraticRegulator,
                                     LinearQuadraticRegulator)
from systems.primitives import LogVectorOutput, MatrixGain
from systems.trajectory_optimization import DirectCollocation
from _plotting import pyplot, save_figure
from _cli import script_parser

UPRIGHT = np.array([np.pi, 0.0, 0.0, 0.0])
TORQUE_LIMIT = 20.0
DURATION = (2.0, 8.0)        # s: bounds of the swing-up's duration
TIME_STEP = (0.02, 0.3)      # s: bounds of each knot interval
Q = np.diag([10.0, 10.0, 1.0, 1.0])
R = np.array([[1.0]])


class TimeSwitch(LeafSystem):
    """``u = u_before`` for ``t < switch_time``, else ``u_after`` (a hand-over between two
    controllers at a known time)."""

    def __init__(self, size: int, switch_time: float, name: Optional[str] = None):
        super().__init__(name)
        self.switch_time = float(switch_time)
        a = self.declare_input_port("u_before", size)
        b = self.declare_input_port("u_after", size)
        self.declare_output_port("u", size, lambda c: a.eval(c) if c.time < self.switch_time
                                 else b.eval(c), feedthrough=True)


def add_acrobot(builder: DiagramBuilder):
    """The acrobot plant and its elbow actuation; returns ``(plant, actuation)``."""
    plant = builder.add_system(RigidBodyPlant(models.acrobot(), name="acrobot"))
    act = builder.add_system(MatrixGain([[0.0], [1.0]], name="elbow"))
    builder.connect(act.get_output_port(), plant.get_input_port("generalized_force"))
    return plant, act


def acrobot_diagram():
    """The acrobot with the elbow torque exported as ``tau``."""
    b = DiagramBuilder("acrobot_diagram")
    plant, act = add_acrobot(b)
    b.export_input(act.get_input_port(), "tau")
    b.export_output(plant.get_output_port("state"), "state")
    return b.build()


def upright_lqr():
    """``(controller, S)``: the LQR at the upright equilibrium of :func:`acrobot_diagram`."""
    d = acrobot_diagram()
    ctx = d.create_default_context()
    ctx.set_continuous_state(UPRIGHT)
    d.get_input_port("tau").fix_value(ctx, [0.0])
    ctrl = LinearQuadraticRegulator(d, ctx, Q, R)
    return ctrl, ctrl.S


def swing_up_problem(num_knots: int = 41):
    """Minimum-effort swing-up as a ``DirectCollocation`` (torque within the limit, 2 to 8 s)."""
    d = acrobot_diagram()
    dc = DirectCollocation(d, d.create_default_context(), num_knots, *TIME_STEP)
    dc.add_input_bounds(-TORQUE_LIMIT, TORQUE_LIMIT)
    dc.add_bounding_box_constraint(np.zeros(4), np.zeros(4), dc.initial_state())
    dc.add_bounding_box_constraint(UPRIGHT, UPRIGHT, dc.final_state())
    dc.add_equal_time_intervals_constraints()
    dc.add_duration_bounds(*DURATION)
    dc.add_running_cost(dc.input()[0] ** 2)
    dc.set_initial_trajectory(x_initial=np.zeros(4), x_final=UPRIGHT)
    return d, dc


def closed_loop(x_traj, u_traj, hold: float, x_start):
    """Simulate plan-following TVLQR then the upright LQR from ``x_start``; returns
    ``(times, states, torques)``."""
    lqr, S = upright_lqr()
    d = acrobot_diagram()
    tf = u_traj.end_time()
    tv = FiniteHorizonLinearQuadraticRegulator(d, d.create_default_context(), 0.0, tf, Q, R,
                                               Qf=S, x0=x_traj, u0=u_traj)
    b = DiagramBuilder("acrobot_swing_up")
    plant, act = add_acrobot(b)
    tvlqr = b.add_system(tv.controller(name="tvlqr"))
    top = b.add_system(lqr)
    switch = b.add_system(TimeSwitch(1, tf, name="hand_over"))
    for ctrl in (tvlqr, top):
        b.connect(plant.get_output_port("state"), ctrl.get_input_port())
    b.connect(tvlqr.get_output_port(), switch.get_input_port("u_before"))
    b.connect(top.get_output_port(), switch.get_input_port("u_after"))
    b.connect(switch.get_output_port("u"), act.get_input_port())
    log = LogVectorOutput(plant.get_output_port("state"), b)
    ulog = LogVectorOutput(switch.get_output_port("u"), b)
    diagram = b.build()
    sim = Simulator(diagram, integrator="RK45", accuracy=1e-8)
    plant.set_positions(sim.get_context(), x_start[:2])
    plant.set_velocities(sim.get_context(), x_start[2:])
    sim.advance_to(tf + hold)
    data = log.find_log(sim.get_context())
    udata = ulog.find_log(sim.get_context())
    return data.sample_times(), data.data(), (udata.sample_times(), udata.data())


def main(argv=None) -> dict:
    parser = script_parser(__doc__)
    parser.add_argument("--knots", type=int, default=41,
                        help="collocation knots of the swing-up plan")
    parser.add_argument("--hold", type=float, default=3.0, help="seconds balanced after the plan")
    parser.add_argument("--perturbation", type=float, default=0.02, help="start error (rad)")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "output"),
                        help="folder for the plot (PNG) and other outputs")
    args = parser.parse_args(argv)
    _, dc = swing_up_problem(args.knots)
    result = dc.solve()
    print(result)
    if not result.is_success():
        raise SystemExit(f"the swing-up did not converge: {result.status}")
    x_traj, u_traj = dc.reconstruct_state_trajectory(result), dc.reconstruct_input_trajectory(result)
    x_start = np.array([args.perturbation, -args.perturbation, 0.0, 0.0])
    t, x, (tu, u) = closed_loop(x_traj, u_traj, args.hold, x_start)
    err = x[:, -1] - UPRIGHT
    print(f"plan: {u_traj.end_time():.3f} s, cost {result.cost:.2f}, {result.iterations} "
          f"iterations in {result.solve_time:.3f} s")
    print(f"closed loop from a {args.perturbation} rad start error, {args.hold} s after the plan: "
          f"|x - upright| = {np.linalg.norm(err):.2e}")
    out = {"result": result, "final_error": err, "times": t, "states": x, "png": None}
    plt = pyplot()
    if plt is not None:
        os.makedirs(args.out, exist_ok=True)
        ts = np.linspace(0.0, u_traj.end_time(), 400)
        fig, ax = plt.subplots(3, 1, figsize=(7, 8), sharex=True)
        for i, name in enumerate(("shoulder", "elbow")):
            ax[i].plot(ts, x_traj.vector_values(ts)[i], label="plan")
            ax[i].plot(t, x[i], "--", label="TVLQR, then LQR")
            ax[i].axvline(u_traj.end_time(), color="k", lw=0.5)
            ax[i].set_ylabel(f"{name} (rad)")
        ax[0].legend()
        ax[2].plot(tu, u[0])
        ax[2].set_ylabel("elbow torque (N m)")
        ax[2].set_xlabel("time (s)")
        fig.suptitle("acrobot swing-up and balance (vertical line: hand-over to LQR)")
        out["png"] = save_figure(fig, os.path.join(args.out, "acrobot_swing_up.png"))
    return out


if __name__ == "__main__":
    main()
