"""Spheres and boxes falling and sliding on the ground (time-stepping frictional contact).

Five free bodies on a ground halfspace, each one a small textbook problem:

* ``box_slide`` (1 kg, 0.2 x 0.2 x 0.1 m) rests on the ground and is launched at
  ``v0 = 1 m/s`` along x: Coulomb friction stops it after ``d = v0^2 / (2 mu g)``
  (``- v0 h / 2`` for the time-stepping recurrence, backward Euler in the velocity);
* ``ball_roll`` (0.5 kg, r = 0.05 m) is launched at ``v0 = 1.5 m/s`` without spin: it slides,
  friction spins it up, and it rolls on at ``5/7 v0`` (a solid sphere, ``I = 2/5 m r^2``);
* ``ball_drop`` (1 kg, r = 0.08 m) falls from 0.5 m and comes to rest with a contact force
  ``m g``;
* ``box_drop`` (2 kg, 0.3 x 0.3 x 0.1 m) falls tilted from 0.3 m, lands on an edge and
  settles flat; ``ball_on_box`` (0.3 kg, r = 0.05 m) falls onto it and stays there.

The bodies are free joints of a :class:`~multibody.RigidBodyTree`; a
:class:`~multibody.constraints.PointContactConstraint` (polyhedral friction cone,
Anitescu-Potra velocity-level contact) and a
:class:`~multibody.plants.TimeSteppingRigidBodySystem` with ``h = 1 ms`` advance
them. A small :class:`BodyContactForces` block turns the system's abstract
``contact_results`` output into a vector (net vertical contact force per body) that a
``VectorLogSink`` records. The script prints the analytic checks and saves a plot of the
trajectories and contact forces.

Run: ``python examples/contact_spheres_boxes.py [--duration 1.5] [--time-step 1e-3] [--out DIR]``
(``--viewer``: watch it in a browser, needs ``pip install 'dynablocks[viz]'``; ``--html
run.html``: save the run as one HTML file to open anywhere)
"""
from __future__ import annotations

import os
from typing import Optional, Sequence

import numpy as np

from multibody import (Box, ContactResults, Free, Halfspace, PointContactConstraint,
                       RigidBodyTree, Sphere, TimeSteppingRigidBodySystem)
from multibody.visualization import add_visualizer, show_run
from systems import DiagramBuilder, LeafSystem
from systems.analysis import Simulator
from systems.primitives import LogVectorOutput
from _plotting import pyplot, save_figure
from _viewer import add_viewer_arguments, viewer_options
from _cli import script_parser

__all__ = ["BodyContactForces", "add_ball", "add_box", "build_scene", "main"]

G = 9.81
MU = 0.4


class BodyContactForces(LeafSystem):
    """Net contact force along world z on each of the given bodies.

    Input ``contact_results`` (abstract :class:`~multibody.constraints.ContactResults`);
    output ``forces`` (one entry per body): ``results.total_force(body)[2]`` (N).
    """

    def __init__(self, bodies: Sequence[str], name: str = "contact_forces") -> None:
        super().__init__(name)
        self.bodies = list(bodies)
        self._in = self.declare_abstract_input_port("contact_results", ContactResults())
        self.declare_output_port("forces", len(self.bodies), self._calc, feedthrough=True,
                                 prerequisites=())

    def _calc(self, context) -> np.ndarray:
        results = self._in.eval(context)
        return np.array([results.total_force(b)[2] for b in self.bodies])


def add_ball(tree: RigidBodyTree, name: str, mass: float, radius: float) -> None:
    """A free solid sphere (``I = 2/5 m r^2``) with sphere collision geometry."""
    tree.add_body(name, mass, inertia=0.4 * mass * radius ** 2 * np.eye(3))
    tree.add_joint(Free(f"{name}_free", "world", name))
    tree.add_collision_geometry(name, Sphere(radius), name=f"{name}_geom")


def add_box(tree: RigidBodyTree, name: str, mass: float, size: Sequence[float]) -> None:
    """A free solid box (``I = m/12 diag(ly^2 + lz^2, ...)``) with box collision geometry."""
    lx, ly, lz = size
    inertia = mass / 12.0 * np.diag([ly ** 2 + lz ** 2, lx ** 2 + lz ** 2, lx ** 2 + ly ** 2])
    tree.add_body(name, mass, inertia=inertia)
    tree.add_joint(Free(f"{name}_free", "world", name))
    tree.add_collision_geometry(name, Box(size), name=f"{name}_geom")


# name: (kind, mass, size, initial position, initial rotation (axis-angle), initial velocity)
BODIES = {
    "box_slide": ("box", 1.0, (0.2, 0.2, 0.1), (0.0, -0.6, 0.05), None, (1.0, 0.0, 0.0)),
    "ball_roll": ("ball", 0.5, 0.05, (0.0, -0.3, 0.05), None, (1.5, 0.0, 0.0)),
    "ball_drop": ("ball", 1.0, 0.08, (0.0, 0.0, 0.5), None, (0.0, 0.0, 0.0)),
    "box_drop": ("box", 2.0, (0.3, 0.3, 0.1), (0.0, 0.45, 0.3), (0.3, 0.2, 0.0),
                 (0.0, 0.0, 0.0)),
    "ball_on_box": ("ball", 0.3, 0.05, (0.03, 0.45, 0.9), None, (0.0, 0.0, 0.0)),
}


def _quaternion(rotvec: Optional[Sequence[float]]) -> np.ndarray:
    """[w, x, y, z] of the rotation vector (axis * angle)."""
    if rotvec is None:
        return np.array([1.0, 0.0, 0.0, 0.0])
    r = np.asarray(rotvec, float)
    a = np.linalg.norm(r)
    return np.concatenate([[np.cos(a / 2)], np.sin(a / 2) * r / a])


def build_scene(time_step: float = 1e-3, mu: float = MU, bodies: Optional[dict] = None,
                log_period: float = 0.005, viewer: Optional[dict] = None):
    """The diagram (time-stepping system + contact-force block + logs) and its context.

    ``viewer``: keyword arguments of a :class:`~multibody.visualization.Visualizer` to add
    (``None``: none).

    Returns
    -------
    dict
        ``diagram``, ``context``, ``system`` (the TimeSteppingRigidBodySystem), ``tree``,
        ``state_log`` and ``force_log`` (VectorLogSink), ``names`` (body names in order),
        ``visualizer`` (or None).
    """
    bodies = BODIES if bodies is None else bodies
    tree = RigidBodyTree("spheres_boxes")
    tree.add_collision_geometry("world", Halfspace(), name="ground")
    for name, (kind, mass, size, *_rest) in bodies.items():
        (add_ball if kind == "ball" else add_box)(tree, name, mass, size)
    # the default filter tests every pair (free joints do not filter a body against the
    # world's ground)
    contact = PointContactConstraint(tree, mu=mu, name="contact")
    plant = TimeSteppingRigidBodySystem(tree, time_step, constraints=[contact], name="plant")
    builder = DiagramBuilder("spheres_boxes")
    builder.add_system(plant)
    forces = builder.add_system(BodyContactForces(list(bodies)))
    builder.connect(plant.get_output_port("contact_results"),
                    forces.get_input_port("contact_results"))
    state_log = LogVectorOutput(plant.get_output_port("state"), builder, log_period)
    force_log = LogVectorOutput(forces.get_output_port("forces"), builder, log_period)
    vis = add_visualizer(builder, plant, **viewer) if viewer is not None else None
    diagram = builder.build()
    context = diagram.create_default_context()
    q = tree.neutral_configuration()
    v = np.zeros(tree.nv)
    for name, (_kind, _m, _s, pos, rot, vel) in bodies.items():
        j = tree.get_joint(f"{name}_free")
        q[j.q_start:j.q_start + 7] = np.concatenate([_quaternion(rot), pos])
        quat = q[j.q_start:j.q_start + 4]
        # v of a free joint is [omega; v] in the body frame: rotate the world velocity in
        R = _rotation(quat)
        v[j.v_start + 3:j.v_start + 6] = R.T @ np.asarray(vel, float)
    plant.set_positions(context, q)
    plant.set_velocities(context, v)
    return {"diagram": diagram, "context": context, "system": plant, "tree": tree,
            "state_log": state_log, "force_log": force_log, "names": list(bodies),
            "visualizer": vis}


def _rotation(quat: np.ndarray) -> np.ndarray:
    w, x, y, z = quat
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def main(argv=None) -> dict:
    parser = script_parser(__doc__)
    parser.add_argument("--duration", type=float, default=1.5, help="simulated time (s)")
    parser.add_argument("--time-step", type=float, default=1e-3,
                        help="time step h of the time-stepping system (s)")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                      "output"),
                        help="folder for the plot (PNG) and other outputs")
    parser.add_argument("--no-plot", action="store_true", help="skip the plot")
    add_viewer_arguments(parser)
    args = parser.parse_args(argv)

    viewer = viewer_options(args, contact_force_scale=0.01)
    scene = build_scene(args.time_step, viewer=viewer)
    tree, context, plant = scene["tree"], scene["context"], scene["system"]
    sim = Simulator(scene["diagram"], context)
    if args.viewer:
        print(f"viewer: open {scene['visualizer'].url}")
        sim.set_target_realtime_rate(1.0)
    sim.advance_to(args.duration)

    t = scene["state_log"].find_log(context).sample_times()
    x = scene["state_log"].find_log(context).data()
    tf = scene["force_log"].find_log(context).sample_times()
    f = scene["force_log"].find_log(context).data()
    names = scene["names"]
    pos = {n: x[tree.get_joint(f"{n}_free").q_start + 4:tree.get_joint(f"{n}_free").q_start + 7]
           for n in names}
    q_end = plant.get_positions(context)
    v_end = plant.get_velocities(context)
    final = {}
    for n in names:
        j = tree.get_joint(f"{n}_free")
        R = _rotation(q_end[j.q_start:j.q_start + 4])
        final[n] = {"position": q_end[j.q_start + 4:j.q_start + 7].copy(),
                    "velocity": R @ v_end[j.v_start + 3:j.v_start + 6],
                    "omega": R @ v_end[j.v_start:j.v_start + 3]}

    # analytic checks
    # (1) the dropped ball at rest: mean contact force over the last 0.1 s = m g
    m_drop = BODIES["ball_drop"][1]
    last = tf >= tf[-1] - 0.1
    rest_force = float(np.mean(f[names.index("ball_drop"), last]))
    rest_ratio = rest_force / (m_drop * G)
    # (2) the sliding box: stopping distance v0^2 / (2 mu g)
    v0_box = BODIES["box_slide"][5][0]
    d_box = float(final["box_slide"]["position"][0] - BODIES["box_slide"][3][0])
    d_expected = v0_box ** 2 / (2 * MU * G)
    # the time-stepping recurrence v_{k+1} = v_k - mu g h, x_{k+1} = x_k + h v_{k+1}
    # (backward Euler in v) stops after v0^2 / (2 mu g) - v0 h / 2 (up to mu g h^2 / 8)
    d_discrete = d_expected - v0_box * args.time_step / 2
    # (3) the ball launched without spin rolls on at 5/7 v0
    v0_ball = BODIES["ball_roll"][5][0]
    roll_ratio = float(final["ball_roll"]["velocity"][0] / v0_ball)
    # (4) the small ball stays on the box
    on_box_z = float(final["ball_on_box"]["position"][2])
    box_top = float(final["box_drop"]["position"][2] + 0.05)
    print(f"t = {args.duration} s, h = {args.time_step} s, mu = {MU}, {tree.nv} velocities")
    print(f"ball_drop at rest: contact force {rest_force:.4f} N vs m g = {m_drop * G:.4f} N "
          f"(ratio {rest_ratio:.5f}), height {final['ball_drop']['position'][2]:.5f} m "
          f"(radius 0.08)")
    print(f"box_slide: stopped after {d_box:.5f} m vs v0^2/(2 mu g) = {d_expected:.4f} m "
          f"({100 * (d_box / d_expected - 1):+.2f} %; the discrete recurrence gives "
          f"{d_discrete:.5f} m)")
    print(f"ball_roll: final speed {roll_ratio:.4f} v0 vs 5/7 = {5 / 7:.4f}; "
          f"spin {final['ball_roll']['omega'][1]:.3f} rad/s vs v/r = "
          f"{final['ball_roll']['velocity'][0] / 0.05:.3f}")
    print(f"ball_on_box: centre at z = {on_box_z:.4f} m, box top at {box_top:.4f} m "
          f"(gap {on_box_z - 0.05 - box_top:+.5f} m)")

    result = {"rest_force_ratio": rest_ratio, "box_stop_distance": d_box,
              "box_stop_expected": d_expected,
              "box_stop_discrete": d_discrete, "roll_speed_ratio": roll_ratio,
              "ball_on_box_gap": on_box_z - 0.05 - box_top, "final": final, "plot": None}
    if viewer is not None:
        result["html"] = show_run(scene["visualizer"], context, html=args.html,
                                  replay=args.viewer)
    if args.no_plot:
        return result
    plt = pyplot()
    if plt is None:
        return result
    os.makedirs(args.out, exist_ok=True)
    fig, ax = plt.subplots(3, 1, figsize=(8, 8), sharex=True)
    for n in names:
        ax[0].plot(t, pos[n][2], label=n)
        ax[1].plot(t, pos[n][0], label=n)
        ax[2].plot(tf, f[names.index(n)], label=n)
    ax[0].set_ylabel("height z [m]")
    ax[0].legend(fontsize=8, ncol=3)
    ax[1].set_ylabel("position x [m]")
    ax[1].axhline(d_expected, color="k", ls=":", lw=0.8)
    ax[1].text(t[-1], d_expected, " box stop (analytic)", fontsize=7, va="bottom", ha="right")
    ax[2].set_ylabel("vertical contact force [N]")
    ax[2].set_xlabel("time [s]")
    ax[2].set_ylim(-2, 4 * G)
    fig.suptitle(f"Spheres and boxes on the ground (time stepping, h = {args.time_step} s, "
                 f"mu = {MU})")
    fig.tight_layout()
    path = os.path.join(args.out, "contact_spheres_boxes.png")
    save_figure(fig, path)
    result["plot"] = path
    return result


if __name__ == "__main__":
    main()
