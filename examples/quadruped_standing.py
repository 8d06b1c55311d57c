"""A quadruped standing on the ground under joint-space PD control (time stepping).

The quadruped of ``multibody/models/quadruped.urdf`` (17.84 kg, 12 revolute joints, 0.02 m
sphere feet) is loaded with a floating base (nq = 19, nv = 18). One
:class:`~actuators.GeneralizedForceActuator` drives its 12 joints (URDF effort limits), a
:class:`~multibody.constraints.PointContactConstraint` gives the feet (and the trunk, should
it fall) frictional contact with a ground halfspace, and a
:class:`~multibody.plants.TimeSteppingRigidBodySystem` (h = 1 ms) advances it. The
controller, :class:`StandingPdController`, is a LeafSystem written here:

.. math::

    \\tau = \\tau_{ff} + K_p (q_d - q) - K_d \\dot q ,

on the 12 joints, with ``tau_ff`` the joint torques that hold the nominal stance in static
equilibrium on its four feet, ``tau_ff = g(q_d)[6:] - sum_i J_i(q_d)[:, 6:]^T f_i``
(gravity compensation with the contact forces accounted for; ``J_i`` the translational
Jacobian of foot ``i``; ``f_i`` vertical, the least-norm forces that balance the weight
about the centre of mass, :func:`stance_feedforward`). The robot starts 1 cm above the
ground in the stance posture (hips 0, thighs 0.8 rad, knees -1.6 rad: each foot under its
hip), drops, and should stand still. Where the feet land splayed, static friction holds
them and the hip PD keeps a small steady error (about 9 mrad). The script prints whether
it stays standing (base height within a band, small tilt), the mean total foot normal
force against ``m g``, and saves a plot of the base height, the joint angles (as
deviations from the stance) and the foot contact forces.

Run: ``python examples/quadruped_standing.py [--duration 2] [--time-step 1e-3] [--out DIR]``
(``--viewer``: watch it in a browser, needs ``pip install 'dynablocks[viz]'``; ``--html
run.html``: save the run as one HTML file to open anywhere)
"""
from __future__ import annotations

import os
from typing import Optional, Sequence

import numpy as np

from actuators import GeneralizedForceActuator
from multibody import (ContactResults, Halfspace, PointContactConstraint, RigidBodyTree,
                       TimeSteppingRigidBodySystem)
from multibody.models import model_path
from multibody.visualization import add_visualizer, show_run
from systems import DiagramBuilder, LeafSystem
from systems.analysis import Simulator
from systems.primitives import Adder, LogVectorOutput, Step
from _plotting import pyplot, save_figure
from _viewer import add_viewer_arguments, viewer_options
from _cli import script_parser

__all__ = ["LEGS", "STANCE", "FOOT_RADIUS", "StandingPdController", "FootForces",
           "stance_configuration", "stance_feedforward", "build_quadruped", "main"]

LEGS = ("FL", "FR", "RL", "RR")
STANCE = {"hip": 0.0, "thigh": 0.8, "calf": -1.6}
"""Joint angles of the stance (rad): thigh and calf make each foot sit under its hip."""
FOOT_RADIUS = 0.02
THIGH, CALF = 0.25, 0.25  # link lengths (m), from the URDF
KP, KD = 150.0, 4.0


def joint_names() -> list[str]:
    """The 12 actuated joints, leg by leg (hip, thigh, calf)."""
    return [f"{leg}_{part}_joint" for leg in LEGS for part in ("hip", "thigh", "calf")]


def stance_height() -> float:
    """Trunk height (m) with the stance joint angles and the feet touching the ground."""
    return THIGH * np.cos(STANCE["thigh"]) + CALF * np.cos(STANCE["thigh"] + STANCE["calf"]) \
        + FOOT_RADIUS


def stance_configuration(tree: RigidBodyTree, clearance: float = 0.0) -> np.ndarray:
    """q (nq) of the stance: level trunk at :func:`stance_height` + ``clearance``."""
    q = tree.neutral_configuration()
    base = tree.get_joint("floating_base")
    q[base.q_start:base.q_start + 7] = [1, 0, 0, 0, 0, 0, stance_height() + clearance]
    for leg in LEGS:
        for part, angle in STANCE.items():
            q[tree.get_joint(f"{leg}_{part}_joint").q_start] = angle
    return q


def stance_feedforward(tree: RigidBodyTree, q: np.ndarray, joints: Sequence[str]) -> np.ndarray:
    """Joint torques (len(joints),) holding ``q`` in static equilibrium on the four feet.

    ``tau = g(q) - sum_i J_i(q)^T f_i`` restricted to the joints' velocity indices, with
    vertical foot forces ``f_i = (0, 0, F_i)`` on the foot centres (the contact point is
    straight below a centre, so the force has no moment about it) and ``J_i`` the foot's
    world-aligned translational Jacobian (rows 3:6 of :meth:`RigidBodyTree.jacobian`).
    The ``F_i`` are the least-norm solution of the base's equilibrium: ``sum F_i = m g``
    and ``sum F_i (x_i, y_i) = m g (x_com, y_com)`` (the legs' mass puts the centre of
    mass behind the trunk origin, so the rear feet carry more).

    Returns
    -------
    tau : ndarray, shape (len(joints),)
    F : ndarray, shape (4,)
        Foot normal forces (N) in ``LEGS`` order.
    """
    weight = tree.total_mass() * float(-tree.gravity[2])
    tau = np.array(tree.gravity_forces(q), float).ravel()
    feet = [np.array(tree.body_pose(f"{leg}_foot", q), float)[:3, 3] for leg in LEGS]
    com = np.array(tree.center_of_mass(q), float).ravel()
    A = np.array([[1.0] * 4, [p[0] for p in feet], [p[1] for p in feet]])
    F = np.linalg.lstsq(A, weight * np.array([1.0, com[0], com[1]]), rcond=None)[0]
    for leg, Fi in zip(LEGS, F):
        J = np.array(tree.jacobian(f"{leg}_foot", q), float)[3:6]
        tau -= J.T @ np.array([0.0, 0.0, Fi])
    idx = [tree.get_joint(j).v_start for j in joints]
    return tau[idx], F


class StandingPdController(LeafSystem):
    """Joint-space PD with a constant feedforward: ``command = tau_ff + Kp (q_d - q) - Kd v``.

    Input ``state`` (nq + nv), output ``command`` (one per joint, in ``joints`` order).

    Parameters
    ----------
    tree : RigidBodyTree
    joints : sequence of str
        One-DOF joints to control.
    q_desired, tau_ff : array_like, shape (len(joints),)
    kp, kd : float
        Gains (N m / rad, N m s / rad).
    """

    def __init__(self, tree: RigidBodyTree, joints: Sequence[str], q_desired, tau_ff,
                 kp: float = KP, kd: float = KD, name: str = "pd") -> None:
        super().__init__(name)
        self.qi = np.array([tree.get_joint(j).q_start for j in joints])
        self.vi = tree.nq + np.array([tree.get_joint(j).v_start for j in joints])
        self.q_desired = np.asarray(q_desired, float)
        self.tau_ff = np.asarray(tau_ff, float)
        self.kp, self.kd = float(kp), float(kd)
        self._state = self.declare_input_port("state", tree.nq + tree.nv)
        self.declare_output_port("command", len(joints), self._calc, feedthrough=True,
                                 prerequisites=())

    def _calc(self, context) -> np.ndarray:
        x = np.asarray(self._state.eval(context))
        return self.tau_ff + self.kp * (self.q_desired - x[self.qi]) - self.kd * x[self.vi]


class FootForces(LeafSystem):
    """Vertical contact force (N) on each foot body, from ``contact_results`` (abstract)."""

    def __init__(self, feet: Sequence[str], name: str = "foot_forces") -> None:
        super().__init__(name)
        self.feet = list(feet)
        self._in = self.declare_abstract_input_port("contact_results", ContactResults())
        self.declare_output_port("forces", len(self.feet), self._calc, feedthrough=True,
                                 prerequisites=())

    def _calc(self, context) -> np.ndarray:
        results = self._in.eval(context)
        return np.array([results.total_force(f)[2] for f in self.feet])


def build_quadruped(time_step: float = 1e-3, mu: float = 1.0, kp: float = KP, kd: float = KD,
                    clearance: float = 0.01, log_period: Optional[float] = 0.005,
                    push: Optional[tuple] = None, viewer: Optional[dict] = None) -> dict:
    """The standing-quadruped diagram and its context (robot ``clearance`` m above ground).

    ``push = (force (3,), start, duration)``: a horizontal shove on the trunk (world axes, at
    its origin) through the plant's ``applied_spatial_force`` input. ``viewer``: keyword
    arguments of a :class:`~multibody.visualization.Visualizer` to add (``None``: none).

    Returns
    -------
    dict
        ``diagram``, ``context``, ``system``, ``tree``, ``controller``, ``q_stance``, and
        (when ``log_period`` is not None) ``state_log``, ``force_log``; ``visualizer`` (or
        None).
    """
    tree = RigidBodyTree.from_urdf(str(model_path("quadruped")), floating_base=True)
    tree.add_collision_geometry("world", Halfspace(), name="ground")
    tree.finalize()
    joints = joint_names()
    legs = GeneralizedForceActuator(tree, joints, name="legs")
    pairs = [("ground", f"{leg}_foot_collision") for leg in LEGS] + [("ground", "trunk_collision")]
    contact = PointContactConstraint(tree, mu=mu, pairs=pairs, name="contact")
    plant = TimeSteppingRigidBodySystem(tree, time_step, actuators=[legs],
                                        constraints=[contact], name="quadruped")
    q_stance = stance_configuration(tree)
    q_d = q_stance[[tree.get_joint(j).q_start for j in joints]]
    tau_ff, f_feet = stance_feedforward(tree, q_stance, joints)
    pd = StandingPdController(tree, joints, q_d, tau_ff, kp, kd)
    builder = DiagramBuilder("quadruped_standing")
    builder.add_system(plant)
    builder.add_system(pd)
    builder.connect(plant.get_output_port("state"), pd.get_input_port("state"))
    builder.connect(pd.get_output_port("command"), plant.get_input_port("legs"))
    if push is not None:
        force, start, duration = push
        w = np.zeros(6 * (len(tree.bodies) - 1))
        w[3:6] = force                                       # the trunk is the first body
        on = builder.add_system(Step(start, np.zeros_like(w), w, name="push_on"))
        off = builder.add_system(Step(start + duration, np.zeros_like(w), -w, name="push_off"))
        pulse = builder.add_system(Adder(2, w.size, name="push"))
        builder.connect(on.get_output_port(), pulse.get_input_port(0))
        builder.connect(off.get_output_port(), pulse.get_input_port(1))
        builder.connect(pulse.get_output_port(), plant.get_input_port("applied_spatial_force"))
    out = {"system": plant, "tree": tree, "controller": pd, "q_stance": q_stance,
           "foot_forces_static": f_feet}
    if log_period is not None:
        feet = builder.add_system(FootForces([f"{leg}_foot" for leg in LEGS]))
        builder.connect(plant.get_output_port("contact_results"),
                        feet.get_input_port("contact_results"))
        out["state_log"] = LogVectorOutput(plant.get_output_port("state"), builder, log_period)
        out["force_log"] = LogVectorOutput(feet.get_output_port("forces"), builder, log_period)
    out["visualizer"] = add_visualizer(builder, plant, **viewer) if viewer is not None else None
    diagram = builder.build()
    context = diagram.create_default_context()
    plant.set_positions(context, stance_configuration(tree, clearance))
    out.update(diagram=diagram, context=context)
    return out


def main(argv=None) -> dict:
    parser = script_parser(__doc__)
    parser.add_argument("--duration", type=float, default=2.0, help="simulated time (s)")
    parser.add_argument("--time-step", type=float, default=1e-3,
                        help="time step h of the time-stepping system (s)")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                      "output"),
                        help="folder for the plot (PNG) and other outputs")
    parser.add_argument("--no-plot", action="store_true", help="skip the plot")
    add_viewer_arguments(parser)
    args = parser.parse_args(argv)

    viewer = viewer_options(args, contact_force_scale=0.005)
    sc = build_quadruped(args.time_step, viewer=viewer)
    tree, context, plant = sc["tree"], sc["context"], sc["system"]
    sim = Simulator(sc["diagram"], context)
    if args.viewer:
        print(f"viewer: open {sc['visualizer'].url}")
        sim.set_target_realtime_rate(1.0)
    sim.advance_to(args.duration)

    slog, flog = sc["state_log"].find_log(context), sc["force_log"].find_log(context)
    t, x = slog.sample_times(), slog.data()
    tf, f = flog.sample_times(), flog.data()
    base = tree.get_joint("floating_base")
    z = x[base.q_start + 6]
    quat = x[base.q_start:base.q_start + 4]
    # tilt: angle between the trunk z axis and the world z axis
    tilt = np.arccos(np.clip(1 - 2 * (quat[1] ** 2 + quat[2] ** 2), -1, 1))
    weight = tree.total_mass() * 9.81
    z_nominal = stance_height()
    settle = t >= min(0.5 * args.duration, 0.3)
    late = tf >= min(0.5 * args.duration, 0.3)
    total = f.sum(axis=0)
    force_ratio = float(np.mean(total[late]) / weight)
    z_min, z_max = float(z[settle].min()), float(z[settle].max())
    standing = bool(abs(z_min - z_nominal) < 0.03 and abs(z_max - z_nominal) < 0.03
                    and tilt.max() < 0.1)
    joint_err = float(np.max(np.abs(plant.get_positions(context) - sc["q_stance"])[7:]))
    print(f"quadruped: {tree.total_mass():.2f} kg, nq = {tree.nq}, nv = {tree.nv}, "
          f"h = {args.time_step} s, {args.duration} s simulated")
    print(f"base height after settling: {z_min:.4f} .. {z_max:.4f} m (stance {z_nominal:.4f} m); "
          f"max tilt {np.degrees(tilt.max()):.3f} deg; final joint error {joint_err:.2e} rad")
    print(f"total foot normal force {np.mean(total[late]):.3f} N vs m g = {weight:.3f} N "
          f"(ratio {force_ratio:.5f}); per foot "
          + ", ".join(f"{leg} {np.mean(f[i, late]):.2f}" for i, leg in enumerate(LEGS))
          + " (static: " + ", ".join(f"{v:.2f}" for v in sc["foot_forces_static"]) + ")")
    print("stays standing: " + ("yes" if standing else "NO"))

    result = {"standing": standing, "z_min": z_min, "z_max": z_max, "z_nominal": z_nominal,
              "max_tilt": float(tilt.max()), "force_ratio": force_ratio,
              "foot_forces": f[:, late].mean(axis=1),
              "foot_forces_static": sc["foot_forces_static"], "joint_error": joint_err,
              "plot": None}
    if viewer is not None:
        result["html"] = show_run(sc["visualizer"], context, html=args.html, replay=args.viewer)
    if args.no_plot:
        return result
    plt = pyplot()
    if plt is None:
        return result
    os.makedirs(args.out, exist_ok=True)
    fig, ax = plt.subplots(3, 1, figsize=(8, 9), sharex=True)
    ax[0].plot(t, z, label="base height")
    ax[0].axhline(z_nominal, color="k", ls=":", lw=0.8, label="stance height")
    ax[0].set_ylabel("trunk z [m]")
    ax[0].legend(fontsize=8)
    for name in joint_names():
        qi = tree.get_joint(name).q_start
        ax[1].plot(t, 1e3 * (x[qi] - sc["q_stance"][qi]), label=name.replace("_joint", ""), lw=1)
    ax[1].set_ylabel("joint angle - stance [mrad]")
    ax[1].legend(fontsize=6, ncol=4)
    for i, leg in enumerate(LEGS):
        ax[2].plot(tf, f[i], label=f"{leg} foot", lw=1)
    ax[2].plot(tf, total, "k", label="total", lw=1.2)
    ax[2].axhline(weight, color="k", ls=":", lw=0.8, label="m g")
    ax[2].set_ylim(-5, 2.5 * weight)
    ax[2].set_ylabel("foot normal force [N]")
    ax[2].set_xlabel("time [s]")
    ax[2].legend(fontsize=8, ncol=3)
    fig.suptitle(f"Quadruped standing under PD control (time stepping, h = {args.time_step} s)")
    fig.tight_layout()
    path = os.path.join(args.out, "quadruped_standing.png")
    save_figure(fig, path)
    result["plot"] = path
    return result


if __name__ == "__main__":
    main()
