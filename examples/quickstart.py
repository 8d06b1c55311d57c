"""The README's quick start: a mass-spring-damper under PID control, simulated and plotted.

Writes ``quickstart.png`` (position against time) and ``quickstart.dot`` (the diagram's
Graphviz source) into ``--out``.

Run: ``python examples/quickstart.py [--out DIR] [--compiled]``
"""
from __future__ import annotations

import os
import pathlib

import numpy as np

from systems import DiagramBuilder, Simulator
from systems.controllers import PidController
from systems.primitives import LinearSystem, LogVectorOutput, Step
from _plotting import pyplot
from _cli import script_parser


def main(argv=None) -> dict:
    parser = script_parser(__doc__)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "output"),
                        help="folder for quickstart.png and quickstart.dot")
    parser.add_argument("--compiled", action="store_true", help="simulate in compiled mode")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)

    builder = DiagramBuilder("msd_pid")
    plant = builder.add_system(LinearSystem(A=[[0, 1], [-2, -0.5]], B=[[0], [1]], C=np.eye(2)))
    pid = builder.add_system(PidController(kp=10, ki=5, kd=2))
    ref = builder.add_system(Step(step_time=0.5, final_value=[1.0, 0.0]))
    builder.connect(plant.get_output_port("y"), pid.get_input_port("estimated_state"))
    builder.connect(ref.get_output_port("y"), pid.get_input_port("desired_state"))
    builder.connect(pid.get_output_port("control"), plant.get_input_port("u"))
    log = LogVectorOutput(plant.get_output_port("y"), builder)
    diagram = builder.build()

    kw = dict(compiled=True, integrator="cvodes") if args.compiled else dict(integrator="RK45")
    simulator = Simulator(diagram, accuracy=1e-8, **kw)
    simulator.advance_to(10.0)
    data = log.find_log(simulator.get_context())
    final = float(data.data()[0, -1])
    print(f"position at t = 10 s: {final:.6f} (reference 1.0)")
    dot = pathlib.Path(args.out, "quickstart.dot")
    dot.write_text(diagram.to_dot())          # opens, writes and closes the file
    result = {"final_position": final, "plot": None, "dot": str(dot)}
    plt = pyplot()
    if plt is None:
        return result
    plt.figure(figsize=(6, 3.5))
    plt.plot(data.sample_times(), data.data()[0], label="position")
    plt.plot(data.sample_times(), data.data()[1], label="velocity")
    plt.xlabel("time [s]")
    plt.legend()
    result["plot"] = os.path.join(args.out, "quickstart.png")
    plt.savefig(result["plot"], dpi=100)
    plt.close()
    print(f"wrote {result['plot']}")
    return result


if __name__ == "__main__":
    main()
