"""An elbow flexed by a Hill-type muscle: excitation, activation, muscle force and joint angle.

A forearm (1.5 kg, centre of mass 15 cm from the elbow) hangs from the elbow joint; a
biceps-like ``HillMuscle`` (F0 = 500 N, optimal fiber length 10 cm, tendon slack length 20 cm,
moment arm 3 cm) receives a burst of excitation. The plot shows how activation lags the
excitation (Thelen's time constants), how the force depends on fiber length and velocity, and
how the forearm rises (up to the elbow's stop if the burst is strong enough) and falls
back.

Run: ``python examples/muscle_elbow.py [--out DIR]``
"""
from __future__ import annotations

import os

import numpy as np

from actuators import HillMuscle
from multibody import Revolute, RigidBodyTree
from multibody.constraints import JointLimitConstraint
from multibody.plants import RigidBodySystem
from systems import DiagramBuilder
from systems.analysis import Simulator
from systems.primitives import LogVectorOutput, Step, Adder
from _plotting import pyplot, save_figure
from _cli import script_parser


def elbow():
    """The forearm on its elbow joint (+q lifts the hand) and the muscle driving it."""
    t = RigidBodyTree("elbow")
    t.add_body("forearm", 1.5, com=(0.15, 0, 0), inertia=np.diag([0.001, 0.012, 0.012]))
    t.add_joint(Revolute("elbow", "world", "forearm", axis=(0, -1, 0), lower=-0.5, upper=2.5,
                         damping=0.05))
    m = HillMuscle(t, "elbow", max_isometric_force=500.0, optimal_fiber_length=0.1,
                   tendon_slack_length=0.2, moment_arm=0.03, length_at_zero=0.3, name="biceps")
    return t, m


def main(argv=None) -> dict:
    parser = script_parser(__doc__)
    parser.add_argument("--duration", type=float, default=1.5, help="simulated time (s)")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "output"),
                        help="folder for the plot (PNG) and other outputs")
    args = parser.parse_args(argv)
    tree, muscle = elbow()
    stop = JointLimitConstraint(tree, "elbow", name="elbow_stop")       # the joint's range
    plant = RigidBodySystem(tree, actuators=[muscle], constraints=[stop], name="arm")
    b = DiagramBuilder("muscle_elbow")
    b.add_system(plant)
    on = b.add_system(Step(step_time=0.1, initial_value=[0.0], final_value=[0.2], name="on"))
    off = b.add_system(Step(step_time=0.6, initial_value=[0.0], final_value=[-0.2], name="off"))
    u = b.add_system(Adder(2, 1, name="excitation"))
    b.connect(on.get_output_port(), u.get_input_port(0))
    b.connect(off.get_output_port(), u.get_input_port(1))
    b.connect(u.get_output_port(), plant.get_input_port("biceps"))
    xlog = LogVectorOutput(plant.get_output_port("state"), b, publish_period=5e-3)
    alog = LogVectorOutput(plant.get_output_port("actuator_state"), b, publish_period=5e-3)
    ulog = LogVectorOutput(u.get_output_port(), b, publish_period=5e-3)
    d = b.build()
    sim = Simulator(d, integrator="RK45", accuracy=1e-7)
    sim.advance_to(args.duration)
    ctx = sim.get_context()
    t, x = xlog.find_log(ctx).sample_times(), xlog.find_log(ctx).data()
    a, exc = alog.find_log(ctx).data()[0], ulog.find_log(ctx).data()[0]
    F = np.array([muscle.muscle_force(np.array([ai]), xi[:1], xi[1:])[0]
                  for ai, xi in zip(a, x.T)])
    print(f"peak elbow angle {np.degrees(x[0].max()):.1f} deg at t = {t[np.argmax(x[0])]:.2f} s; "
          f"peak muscle force {F.max():.0f} N; activation reaches {a.max():.3f}")
    out = {"t": t, "q": x[0], "activation": a, "force": F, "png": None}
    plt = pyplot()
    if plt is not None:
        os.makedirs(args.out, exist_ok=True)
        fig, ax = plt.subplots(3, 1, figsize=(7, 8), sharex=True)
        ax[0].plot(t, exc, label="excitation")
        ax[0].plot(t, a, label="activation")
        ax[0].legend()
        ax[1].plot(t, F)
        ax[1].set_ylabel("muscle force (N)")
        ax[2].plot(t, np.degrees(x[0]))
        ax[2].set_ylabel("elbow angle (deg)")
        ax[2].set_xlabel("time (s)")
        fig.suptitle("elbow driven by a Hill-type muscle")
        out["png"] = save_figure(fig, os.path.join(args.out, "muscle_elbow.png"))
    return out


if __name__ == "__main__":
    main()
