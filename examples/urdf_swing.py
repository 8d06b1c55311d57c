"""Load a URDF written by the project and let it swing passively.

``RigidBodyTree.from_urdf`` parses ``multibody/models/<model>.urdf`` (default: the acrobot, a
double pendulum), ``RigidBodyPlant`` makes the tree a System, and the Simulator integrates
the passive motion from a displaced start. The script prints the energy drift (a passive
mechanism conserves energy) and saves a plot of the joint angles and the energy.

Run: ``python examples/urdf_swing.py [--model acrobot] [--duration 3] [--out DIR]``
"""
from __future__ import annotations

import os

import numpy as np

from multibody import RigidBodyTree
from multibody.plants import RigidBodyPlant
from multibody.models import model_path
from systems import DiagramBuilder
from systems.analysis import Simulator
from systems.primitives import ConstantVectorSource, LogVectorOutput
from _plotting import pyplot, save_figure
from _cli import script_parser


def main(argv=None) -> dict:
    parser = script_parser(__doc__)
    parser.add_argument("--model", default="acrobot",
                        help="name of a URDF in multibody/models (acrobot, pendulum, cart_pole, "
                             "arm7, ...)")
    parser.add_argument("--duration", type=float, default=3.0, help="simulated time (s)")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "output"),
                        help="folder for the plot (PNG) and other outputs")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)

    tree = RigidBodyTree.from_urdf(str(model_path(args.model)))
    plant = RigidBodyPlant(tree, include_passive_forces=False)
    builder = DiagramBuilder(f"{args.model}_swing")
    builder.add_system(plant)
    zero = builder.add_system(ConstantVectorSource(np.zeros(tree.nv)))
    builder.connect(zero.get_output_port(), plant.get_input_port())
    log = LogVectorOutput(plant.get_output_port("state"), builder, publish_period=0.01)
    diagram = builder.build()

    context = diagram.create_default_context()
    q0 = tree.neutral_configuration()
    q0[: min(2, tree.nq)] += [1.0, -0.5][: min(2, tree.nq)]
    plant.set_positions(context, q0)
    e0 = plant.total_energy(context)
    Simulator(diagram, context, integrator="RK45", accuracy=1e-10).advance_to(args.duration)
    e1 = plant.total_energy(context)
    drift = abs(e1 - e0) / max(abs(e0), 1e-12)
    print(f"{args.model}: {tree.nq} positions, {tree.nv} velocities, mass {tree.total_mass():.3f} kg; "
          f"energy {e0:.6f} J -> {e1:.6f} J (relative drift {drift:.1e}) over {args.duration} s")

    result = {"drift": drift, "plot": None}
    plt = pyplot()
    if plt is None:
        return result
    data = log.find_log(context)
    t, x = data.sample_times(), data.data()
    energies = []
    pctx = diagram.get_subsystem_context(plant, context).clone()
    for k in range(t.size):
        pctx.set_continuous_state(x[:, k])
        energies.append(plant.total_energy(pctx))
    fig, ax = plt.subplots(2, 1, figsize=(7, 5), sharex=True)
    for i, joint in enumerate(j for j in tree.joints if j.nq == 1):
        ax[0].plot(t, x[joint.q_start], label=joint.name)
    ax[0].set_ylabel("joint angle [rad]")
    ax[0].legend()
    ax[1].plot(t, np.asarray(energies) - e0)
    ax[1].set_ylabel("energy - E(0) [J]")
    ax[1].set_xlabel("time [s]")
    fig.suptitle(f"Passive swing of '{args.model}' (URDF)")
    path = os.path.join(args.out, f"{args.model}_swing.png")
    save_figure(fig, path)
    result["plot"] = path
    return result


if __name__ == "__main__":
    main()
