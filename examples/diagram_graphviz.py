"""Build a nested controller/plant diagram, evaluate it, and draw it with Graphviz.

A PD controller (itself a diagram of primitives) drives a damped pendulum written as a
user LeafSystem. The script prints the diagram's outputs at one state, its state layout and
feedthrough, and writes ``diagram.svg`` (or ``diagram.dot`` when Graphviz's ``dot`` program
is not installed).

Run: ``python examples/diagram_graphviz.py [--out DIR]``
"""
from __future__ import annotations

import os
import shutil

import numpy as np

from solvers import ops
from systems import DiagramBuilder, LeafSystem
from systems.primitives import Adder, ConstantVectorSource, Demultiplexer, Gain
from _cli import script_parser


class Pendulum(LeafSystem):
    """theta'' = -(g/l) sin(theta) - b theta' + tau; state [theta, theta_dot]."""

    def __init__(self, g_over_l: float = 9.81, damping: float = 0.2):
        super().__init__("pendulum")
        self.declare_continuous_state(2, num_q=1, num_v=1, initial=[0.5, 0.0])
        self.declare_numeric_parameter("g_over_l", [g_over_l])
        self.declare_numeric_parameter("damping", [damping])
        self.tau = self.declare_input_port("tau", 1)
        self.declare_output_port("state", 2, lambda c: c.continuous_state)

    def time_derivatives(self, context):
        theta, omega = context.continuous_state[0], context.continuous_state[1]
        w2 = context.get_parameter("g_over_l")[0]
        b = context.get_parameter("damping")[0]
        return ops.vertcat(omega, -w2 * ops.sin(theta) - b * omega + self.tau.eval(context)[0])


def make_pd_controller(kp: float, kd: float):
    """u = kp (theta_d - theta) - kd theta_dot, as a diagram with inputs 'state', 'desired'."""
    b = DiagramBuilder("pd_controller")
    split = b.add_system(Demultiplexer(2, name="split"))
    neg_kp = b.add_system(Gain(-kp, size=1, name="neg_kp"))
    neg_kd = b.add_system(Gain(-kd, size=1, name="neg_kd"))
    kp_ref = b.add_system(Gain(kp, size=1, name="kp"))
    total = b.add_system(Adder(3, 1, name="sum"))
    b.export_input(split.get_input_port(), "state")
    b.export_input(kp_ref.get_input_port(), "desired")
    b.connect(split.get_output_port("y0"), neg_kp.get_input_port())
    b.connect(split.get_output_port("y1"), neg_kd.get_input_port())
    b.connect(neg_kp.get_output_port(), total.get_input_port(0))
    b.connect(neg_kd.get_output_port(), total.get_input_port(1))
    b.connect(kp_ref.get_output_port(), total.get_input_port(2))
    b.export_output(total.get_output_port(), "control")
    return b.build()


def build_diagram():
    """The closed loop: reference -> PD controller -> pendulum -> (state) -> controller."""
    b = DiagramBuilder("pendulum_pd")
    ref = b.add_system(ConstantVectorSource([1.0], name="reference"))
    ctrl = b.add_system(make_pd_controller(kp=20.0, kd=5.0))
    plant = b.add_system(Pendulum())
    b.connect(ref.get_output_port(), ctrl.get_input_port("desired"))
    b.connect(plant.get_output_port("state"), ctrl.get_input_port("state"))
    b.connect(ctrl.get_output_port("control"), plant.get_input_port("tau"))
    b.export_output(plant.get_output_port("state"), "state")
    b.export_output(ctrl.get_output_port("control"), "control")
    return b.build()


def main(argv=None) -> dict:
    parser = script_parser(__doc__)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "output"),
                        help="folder for diagram.svg (or diagram.dot)")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)

    diagram = build_diagram()
    context = diagram.create_default_context()
    control = diagram.get_output_port("control").eval(context)
    xdot = diagram.eval_time_derivatives(context)
    print(f"diagram '{diagram.name}': {len(diagram.leaf_systems())} leaf systems, "
          f"{diagram.num_continuous_states()} continuous states")
    print(f"state = {context.continuous_state}, control = {control}, xdot = {xdot}")
    print("controller feedthrough state->control:",
          diagram.get_subsystem_by_name("pd_controller").has_direct_feedthrough("state", "control"))

    picture = os.path.join(args.out, "diagram.svg" if shutil.which("dot") else "diagram.dot")
    diagram.render(picture)
    print(f"wrote {picture}")
    return {"control": np.asarray(control), "xdot": np.asarray(xdot), "picture": picture}


if __name__ == "__main__":
    main()
