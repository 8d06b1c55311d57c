"""Time per step of the time-stepping rigid-body system, next to Drake's discrete
MultibodyPlant (where ``pydrake`` imports), at h = 1e-3 s.

Scenes (the same bodies, masses, shapes, friction and initial states in both engines):

* ``box``: one 1 kg box (0.2 m cube) resting on a ground halfspace (mu = 0.5);
* ``pile``: 10 spheres (r = 0.05 m, 0.1 kg, mu = 0.5) in a tetrahedral pile (6 + 3 + 1)
  released at rest (the base spreads and the pile collapses during the timed steps);
* ``quadruped``: ``multibody/models/quadruped.urdf`` with a floating base standing under
  joint PD control (Kp = 150, Kd = 4, feedforward = static equilibrium torques), feet
  touching the ground at the start (mu = 1). dynablocks: the ``StandingPdController``
  block of ``examples/quadruped_standing.py`` (explicit: torques from the state at the
  start of the step). Drake: the URDF text through ``Parser().AddModelsFromString``,
  12 ``JointActuator`` with ``PdControllerGains`` (SAP treats the PD implicitly) and the
  same feedforward torques on the actuation input.

dynablocks: ``TimeSteppingRigidBodySystem`` with a ``PointContactConstraint`` (polyhedral
friction cone with 4 directions, Anitescu-Potra velocity-level rigid contact, an LCP solved
by Lemke's method), stepped by ``systems.analysis.Simulator``. Drake:
``MultibodyPlant(time_step=1e-3)`` with point contact (compliant, default penetration
allowance) and its SAP solver (``discrete_contact_approximation="sap"``), stepped by
Drake's ``Simulator``; for a box on a halfspace Drake's point contact reports one point (the
deepest corner), dynablocks four (the face manifold).

Each time is the median over ``--repeats`` runs of ``--steps`` steps from the same initial
state, divided by the number of steps (system construction excluded; the Simulator and
context are reused, the state reset between runs; the Simulator adds well under 1 % to a
bare loop of discrete updates here). ``--cpu-time`` counts process CPU time of all threads
instead of wall-clock time (Drake may use a second thread). The real-time factor is
``h / (seconds per step)``. A final state number per scene (box and trunk height, mean pile
height) shows that both engines simulate the same thing. Columns: ms per step, steps per second
of wall time, real-time factor, that height, and the ratio of the two times.

Run: ``.venv/bin/python benchmarks/bench_time_stepping.py [--steps 200] [--repeats 5]``
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Callable, Optional

import numpy as np

from multibody import (Halfspace, PointContactConstraint, RigidBodyTree,
                       TimeSteppingRigidBodySystem)
from multibody.models import model_path
from systems import DiagramBuilder
from systems.analysis import Simulator

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "examples"))
import contact_spheres_boxes as _scene  # noqa: E402
import quadruped_standing as _quad  # noqa: E402

H = 1e-3
MU = 0.5
BOX_SIZE, BOX_MASS = 0.2, 1.0
BALL_R, BALL_MASS, NUM_BALLS = 0.05, 0.1, 10
CLOCK = time.perf_counter  # time.process_time with --cpu-time


def pile_positions(r: float = BALL_R, gap: float = 1e-4) -> np.ndarray:
    """Centres (10, 3) of a tetrahedral pile of spheres on z = 0: layers of 6, 3 and 1."""
    d = 2 * r + gap
    s3 = np.sqrt(3.0)
    layer_h = d * np.sqrt(2.0 / 3.0)
    pts = []
    for j in range(3):
        for i in range(3 - j):
            pts.append((i * d + j * d / 2, j * d * s3 / 2, r + gap))
    for j in range(2):
        for i in range(2 - j):
            pts.append((d / 2 + i * d + j * d / 2, d / (2 * s3) + j * d * s3 / 2,
                        r + gap + layer_h))
    pts.append((d, d / s3, r + gap + 2 * layer_h))
    return np.array(pts)


# ---------------------------------------------------------------- dynablocks scenes
class DynablocksRun:
    """A diagram, its Simulator, an initial root-context state and a height probe."""

    def __init__(self, diagram, plant, tree, x0: np.ndarray, probe: Callable) -> None:
        self.diagram, self.plant, self.tree = diagram, plant, tree
        self.context = diagram.create_default_context()
        self.x0 = x0
        self.probe = probe
        self.sim = Simulator(diagram, self.context)

    def run(self, steps: int) -> float:
        """Reset, advance ``steps`` steps; return wall seconds."""
        ctx = self.context
        ctx.set_time(0.0)
        self.plant.set_positions(ctx, self.x0[:self.tree.nq])
        self.plant.set_velocities(ctx, self.x0[self.tree.nq:])
        t0 = CLOCK()
        # stop half a step before the last update time: exactly `steps` discrete updates
        self.sim.advance_to((steps - 0.5) * H)
        return CLOCK() - t0

    def height(self) -> float:
        return float(self.probe(self.plant.get_positions(self.context)))


def _free_q(tree, name, pos) -> list:
    j = tree.get_joint(f"{name}_free")
    return [(j.q_start, np.concatenate([[1.0, 0, 0, 0], pos]))]


def dynablocks_box() -> DynablocksRun:
    tree = RigidBodyTree("box")
    tree.add_collision_geometry("world", Halfspace(), name="ground")
    _scene.add_box(tree, "box", BOX_MASS, (BOX_SIZE,) * 3)
    return _dynablocks_free(tree, {"box": (0, 0, BOX_SIZE / 2)},
                            lambda q: q[tree.get_joint("box_free").q_start + 6])


def dynablocks_pile() -> DynablocksRun:
    tree = RigidBodyTree("pile")
    tree.add_collision_geometry("world", Halfspace(), name="ground")
    pos = pile_positions()
    for i in range(NUM_BALLS):
        _scene.add_ball(tree, f"ball{i}", BALL_MASS, BALL_R)
    tree.finalize()
    zi = [tree.get_joint(f"ball{i}_free").q_start + 6 for i in range(NUM_BALLS)]
    return _dynablocks_free(tree, {f"ball{i}": pos[i] for i in range(NUM_BALLS)},
                            lambda q: np.mean(q[zi]))


def _dynablocks_free(tree, positions: dict, probe) -> DynablocksRun:
    contact = PointContactConstraint(tree, mu=MU, name="contact")
    plant = TimeSteppingRigidBodySystem(tree, H, constraints=[contact], name="plant")
    b = DiagramBuilder(tree.name)
    b.add_system(plant)
    diagram = b.build()
    q = tree.neutral_configuration()
    for name, p in positions.items():
        j = tree.get_joint(f"{name}_free")
        q[j.q_start:j.q_start + 7] = np.concatenate([[1.0, 0, 0, 0], p])
    return DynablocksRun(diagram, plant, tree, np.concatenate([q, np.zeros(tree.nv)]), probe)


def dynablocks_quadruped() -> DynablocksRun:
    sc = _quad.build_quadruped(H, clearance=0.0, log_period=None)
    tree = sc["tree"]
    x0 = np.concatenate([sc["q_stance"], np.zeros(tree.nv)])
    zi = tree.get_joint("floating_base").q_start + 6
    return DynablocksRun(sc["diagram"], sc["system"], tree, x0, lambda q: q[zi])


# ---------------------------------------------------------------- Drake scenes
DRAKE_INFO = ("Drake MultibodyPlant(time_step=1e-3): point contact (compliant), SAP solver, "
              "Drake Simulator")


class DrakeRun:
    """A Drake diagram, its Simulator, an initial plant state and a height probe."""

    def __init__(self, diagram, plant, x0, probe) -> None:
        from pydrake.all import Simulator as DrakeSimulator
        self.diagram, self.plant, self.x0, self.probe = diagram, plant, x0, probe
        self.context = diagram.CreateDefaultContext()
        self.plant_context = plant.GetMyMutableContextFromRoot(self.context)
        self.fix_inputs(self.plant_context)
        self.sim = DrakeSimulator(diagram, self.context)
        self.sim.Initialize()

    def fix_inputs(self, plant_context) -> None:
        pass

    def run(self, steps: int) -> float:
        self.context.SetTime(0.0)
        self.plant.SetPositionsAndVelocities(self.plant_context, self.x0)
        self.sim.Initialize()
        t0 = CLOCK()
        self.sim.AdvanceTo((steps - 0.5) * H)
        return CLOCK() - t0

    def height(self) -> float:
        return float(self.probe(self.plant.GetPositions(self.plant_context)))


def _drake_plant():
    from pydrake.all import AddMultibodyPlant, DiagramBuilder as DrakeBuilder, MultibodyPlantConfig
    try:  # quiet the registration warning about half spaces and deformable contact
        from pydrake.common import set_log_level
        set_log_level("error")
    except ImportError:
        pass
    builder = DrakeBuilder()
    plant, scene_graph = AddMultibodyPlant(
        MultibodyPlantConfig(time_step=H, contact_model="point",
                             discrete_contact_approximation="sap"), builder)
    return builder, plant


def _drake_ground(plant, mu: float) -> None:
    from pydrake.all import CoulombFriction, HalfSpace, RigidTransform
    plant.RegisterCollisionGeometry(plant.world_body(), RigidTransform(), HalfSpace(), "ground",
                                    CoulombFriction(mu, mu))


def _drake_free_bodies(bodies: list) -> DrakeRun:
    """bodies: (name, shape, mass, inertia-maker args, position)."""
    from pydrake.all import CoulombFriction, RigidTransform, SpatialInertia
    from pydrake.all import Box as DBox, Sphere as DSphere
    builder, plant = _drake_plant()
    _drake_ground(plant, MU)
    handles = []
    for name, kind, mass, size, pos in bodies:
        if kind == "box":
            M = SpatialInertia.SolidBoxWithMass(mass, size, size, size)
            shape = DBox(size, size, size)
        else:
            M = SpatialInertia.SolidSphereWithMass(mass, size)
            shape = DSphere(size)
        body = plant.AddRigidBody(name, M)
        plant.RegisterCollisionGeometry(body, RigidTransform(), shape, name,
                                        CoulombFriction(MU, MU))
        handles.append((body, pos))
    plant.Finalize()
    diagram = builder.Build()
    ctx = plant.CreateDefaultContext()
    for body, pos in handles:
        plant.SetFreeBodyPose(ctx, body, RigidTransform(np.asarray(pos, float)))
    x0 = plant.GetPositionsAndVelocities(ctx)
    zi = [body.floating_positions_start() + 6 for body, _ in handles]
    return DrakeRun(diagram, plant, x0, lambda q: np.mean(q[zi]))


def drake_box() -> DrakeRun:
    return _drake_free_bodies([("box", "box", BOX_MASS, BOX_SIZE, (0, 0, BOX_SIZE / 2))])


def drake_pile() -> DrakeRun:
    pos = pile_positions()
    return _drake_free_bodies([(f"ball{i}", "sphere", BALL_MASS, BALL_R, pos[i])
                               for i in range(NUM_BALLS)])


def drake_quadruped() -> DrakeRun:
    from pydrake.all import Parser, PdControllerGains, RigidTransform
    builder, plant = _drake_plant()
    with open(model_path("quadruped")) as fh:
        text = fh.read()
    (model,) = Parser(plant).AddModelsFromString(text, "urdf")
    _drake_ground(plant, 1.0)
    names = _quad.joint_names()
    tree = RigidBodyTree.from_urdf(str(model_path("quadruped")), floating_base=True)
    for n in names:
        joint = plant.GetJointByName(n)
        effort = float(np.atleast_1d(tree.get_joint(n).effort_limit)[0])
        act = plant.AddJointActuator(f"{n}_actuator", joint, effort)
        act.set_controller_gains(PdControllerGains(p=_quad.KP, d=_quad.KD))
    plant.Finalize()
    diagram = builder.Build()
    # same stance and feedforward as the dynablocks controller
    q_stance = _quad.stance_configuration(tree)
    tau_ff, _ = _quad.stance_feedforward(tree, q_stance, names)
    ctx = plant.CreateDefaultContext()
    trunk = plant.GetBodyByName("trunk")
    plant.SetFreeBodyPose(ctx, trunk, RigidTransform([0, 0, _quad.stance_height()]))
    qd = []
    for n in names:
        angle = q_stance[tree.get_joint(n).q_start]
        plant.GetJointByName(n).set_angle(ctx, angle)
        qd.append(angle)
    x0 = plant.GetPositionsAndVelocities(ctx)
    zi = trunk.floating_positions_start() + 6

    class _Run(DrakeRun):
        def fix_inputs(self, plant_context) -> None:
            # desired state of the actuated joints in actuator order, then feedforward
            self.plant.get_desired_state_input_port(model).FixValue(
                plant_context, np.concatenate([qd, np.zeros(len(qd))]))
            self.plant.get_actuation_input_port().FixValue(plant_context, tau_ff)
    return _Run(diagram, plant, x0, lambda q: q[zi])


# ---------------------------------------------------------------- driver
SCENES = {
    "box": ("one box on the ground", dynablocks_box, drake_box),
    "pile": ("10 spheres in a pile", dynablocks_pile, drake_pile),
    "quadruped": ("standing quadruped (PD)", dynablocks_quadruped, drake_quadruped),
}


def time_runs(run, steps: int, repeats: int) -> float:
    """Median seconds per step over ``repeats`` runs (after one warm-up run)."""
    run.run(min(steps, 10))
    return statistics.median(run.run(steps) / steps for _ in range(repeats))


def main(argv: Optional[list] = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--scenes", default=",".join(SCENES))
    parser.add_argument("--no-drake", action="store_true")
    parser.add_argument("--cpu-time", action="store_true",
                        help="process CPU time (all threads) instead of wall-clock time")
    args = parser.parse_args(argv)
    global CLOCK
    CLOCK = time.process_time if args.cpu_time else time.perf_counter

    drake_reason = None
    if args.no_drake:
        drake_reason = "--no-drake"
    else:
        try:
            import pydrake.all  # noqa: F401
        except ImportError as exc:
            drake_reason = f"pydrake not importable ({exc})"
    print(f"h = {H} s, {args.steps} steps per run, median of {args.repeats} runs, "
          + ("process CPU time" if args.cpu_time else "wall-clock time"))
    print("dynablocks: TimeSteppingRigidBodySystem + PointContactConstraint (rigid contact, "
          "4-direction friction cone, Lemke LCP), systems.analysis.Simulator")
    print(DRAKE_INFO if drake_reason is None else f"Drake: n/a ({drake_reason})")
    print(f"{'':<31}{' dynablocks '.center(35, '-')}{'':8}{' Drake '.center(35, '-')}")
    cols = f"{'ms/step':>9} {'steps/s':>9} {'RT':>6} {'height':>8}"
    head = f"{'scene':<26}      {cols}        {cols} {'ratio':>7}"
    print(head)
    print("-" * len(head))
    results = {}
    for key in args.scenes.split(","):
        label, make_ours, make_drake = SCENES[key]
        ours = make_ours()
        t_ours = time_runs(ours, args.steps, args.repeats)
        row = {"dynablocks": t_ours, "dynablocks_height": ours.height()}
        drake_txt = f"{'n/a':>9}"
        if drake_reason is None:
            try:
                theirs = make_drake()
                t_drake = time_runs(theirs, args.steps, args.repeats)
                row.update(drake=t_drake, drake_height=theirs.height())
                drake_txt = (f"{1e3 * t_drake:>9.3f} {1 / t_drake:>9.0f} {H / t_drake:>6.2f} "
                             f"{theirs.height():>8.4f} {t_ours / t_drake:>6.1f}x")
            except Exception as exc:  # noqa: BLE001 - report, keep our numbers
                drake_txt = f"n/a ({type(exc).__name__}: {exc})"[:60]
        print(f"{label:<26}      {1e3 * t_ours:>9.3f} {1 / t_ours:>9.0f} {H / t_ours:>6.2f} "
              f"{ours.height():>8.4f}        " + drake_txt)
        results[key] = row
    print("steps/s: steps per second of wall time; RT: real-time factor h / (time per step); "
          "height: box centre / mean sphere centre / trunk height (m) after the last run; "
          "ratio: dynablocks time / Drake time")
    return results


if __name__ == "__main__":
    main()
