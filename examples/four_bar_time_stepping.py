"""A four-bar linkage simulated by time stepping: a spanning tree plus a loop closure.

The planar four-bar (ground, crank, coupler, rocker; revolute axes along y) is modelled as
a kinematic tree -- the crank and the rocker hinged to the ground, the coupler hinged to
the crank -- and the loop is closed by a :class:`~multibody.constraints.BallConstraint`
between the coupler's free end and the rocker's tip. A
:class:`~multibody.plants.TimeSteppingRigidBodySystem` solves the velocity step
with the closure rows (Baumgarte/ERP stabilization plus position post-stabilization), and
the Simulator runs it under gravity from a non-equilibrium start. The script prints the
largest loop-closure error and saves a plot of the joint angles and of the error.

Run: ``python examples/four_bar_time_stepping.py [--duration 10] [--dt 1e-3] [--out DIR]``
"""
from __future__ import annotations

import os

import numpy as np

from multibody import Revolute, RigidBodyTree
from multibody.constraints import BallConstraint
from multibody.plants import TimeSteppingRigidBodySystem
from systems import DiagramBuilder
from systems.analysis import Simulator
from systems.primitives import LogVectorOutput
from _plotting import pyplot, save_figure
from _cli import script_parser


def _rod(tree, name, mass, length):
    tree.add_body(name, mass, com=(length / 2, 0, 0),
                  inertia=np.diag([1e-4, mass * length ** 2 / 12, mass * length ** 2 / 12]))


def _at(x):
    X = np.eye(4)
    X[0, 3] = x
    return X


def four_bar(d=1.0, a=0.3, b=1.0, c=0.6, theta1=1.0):
    """Tree, closure frames and an assembled configuration (crank angle ``theta1``)."""
    tree = RigidBodyTree("four_bar")
    _rod(tree, "crank", 0.5, a)
    _rod(tree, "coupler", 1.0, b)
    _rod(tree, "rocker", 0.8, c)
    tree.add_joint(Revolute("j_crank", "world", "crank", axis=(0, 1, 0)))
    tree.add_joint(Revolute("j_coupler", "crank", "coupler", origin=_at(a), axis=(0, 1, 0)))
    tree.add_joint(Revolute("j_rocker", "world", "rocker", origin=_at(d), axis=(0, 1, 0)))
    tree.add_frame("coupler_end", "coupler", _at(b))
    tree.add_frame("rocker_end", "rocker", _at(c))
    # assemble in the x-z plane: a link's x axis at angle th (about y) is (cos th, -sin th)
    P = np.array([a * np.cos(theta1), -a * np.sin(theta1)])
    O2 = np.array([d, 0.0])
    L = np.linalg.norm(O2 - P)
    e = (O2 - P) / L
    along = (b * b - c * c + L * L) / (2 * L)
    Q = P + along * e + np.sqrt(b * b - along * along) * np.array([-e[1], e[0]])
    ang = lambda v: np.arctan2(-v[1], v[0])  # noqa: E731
    q0 = np.zeros(tree.nq)
    for name, value in (("j_crank", theta1), ("j_coupler", ang(Q - P) - theta1),
                        ("j_rocker", ang(Q - O2))):
        q0[tree.get_joint(name).q_start] = value
    return tree, q0


def main(argv=None) -> dict:
    parser = script_parser(__doc__)
    parser.add_argument("--duration", type=float, default=10.0, help="simulated time (s)")
    parser.add_argument("--dt", type=float, default=1e-3,
                        help="time step h of the time-stepping system (s)")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "output"),
                        help="folder for the plot (PNG) and other outputs")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)

    tree, q0 = four_bar()
    closure = BallConstraint(tree, "coupler_end", "rocker_end", name="closure")
    builder = DiagramBuilder("four_bar")
    plant = builder.add_system(TimeSteppingRigidBodySystem(tree, args.dt, constraints=[closure],
                                                           name="four_bar_plant"))
    log = LogVectorOutput(plant.get_output_port("state"), builder, publish_period=0.01)
    diagram = builder.build()
    context = diagram.create_default_context()
    plant.set_positions(context, q0)
    Simulator(diagram, context).advance_to(args.duration)

    data = log.find_log(context)
    t, x = data.sample_times(), data.data()
    err = np.array([np.linalg.norm(tree.relative_transform("coupler_end", "rocker_end",
                                                           x[:tree.nq, k])[:3, 3])
                    for k in range(t.size)])
    print(f"four-bar, {args.duration} s at h = {args.dt}: largest loop-closure error "
          f"{err.max():.2e} m; crank angle range {np.ptp(x[0]):.3f} rad")
    result = {"max_error": float(err.max()), "crank_range": float(np.ptp(x[0])), "plot": None}
    plt = pyplot()
    if plt is None:
        return result
    fig, ax = plt.subplots(2, 1, figsize=(7, 5), sharex=True)
    for j in tree.joints:
        ax[0].plot(t, x[j.q_start], label=j.name)
    ax[0].set_ylabel("joint angle [rad]")
    ax[0].legend(loc="upper right")
    ax[1].semilogy(t, np.maximum(err, 1e-17))
    ax[1].set_ylabel("loop-closure error [m]")
    ax[1].set_xlabel("time [s]")
    fig.suptitle("Four-bar linkage: tree + ball loop closure, time stepping")
    path = os.path.join(args.out, "four_bar_time_stepping.png")
    save_figure(fig, path)
    result["plot"] = path
    return result


if __name__ == "__main__":
    main()
