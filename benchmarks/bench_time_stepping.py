"""Time per step of the time-stepping rigid-body system, next to Drake's discrete
MultibodyPlant and MuJoCo (where ``pydrake`` / ``mujoco`` import), at h = 1e-3 s.

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

dynablocks: ``TimeSteppingRigidBodySystem`` with a ``PointContactConstraint``
(Anitescu-Potra velocity-level rigid contact), stepped by ``systems.analysis.Simulator``,
twice: with the default compiled step (``contact_solver="auto"``: one compiled dynamics call
and one C kernel per step, block projected Gauss-Seidel with the friction disc and an
active-set polish, :mod:`solvers.contact_step`) and with the interpreted step
(``contact_solver="lcp"``: 4-direction friction cone aligned with the slip, an LCP solved
by Lemke's method). Drake:
``MultibodyPlant(time_step=1e-3)`` with point contact (compliant, default penetration
allowance) and its SAP solver (``discrete_contact_approximation="sap"``), stepped by
Drake's ``Simulator``; for a box on a halfspace Drake's point contact reports one point (the
deepest corner), dynablocks four (the face manifold). MuJoCo (soft contact, its default
Newton solver and pyramidal cone, friction ``(mu, 0.005, 1e-4)``): the same bodies in MJCF
(the quadruped: the URDF through ``MjSpec`` with a free joint on the trunk, robot geometry
colliding with the ground only, position actuators ``kp = 150``, ``kv = 4`` and the
feedforward torques in ``qfrc_applied``), stepped by ``mj_step(..., nstep=steps)``.

Each time is the median over ``--repeats`` rounds of ``--steps`` steps from the same
initial state, divided by the number of steps; within a round the engines run one after the
other (interleaved, so that load from other processes on a shared machine hits them alike);
system construction is excluded (the Simulator and context are reused, the state reset
between runs); BLAS is limited to one thread (``threadpoolctl``). ``--cpu-time`` counts process CPU time of all threads
instead of wall-clock time (Drake may use a second thread). The real-time factor is
``h / (seconds per step)``. A final state number per scene (box and trunk height, mean pile
height) shows that both engines simulate the same thing. Columns: ms per step, steps per second
of wall time, real-time factor, that height, and the ratio of the two times.

``--first-step`` also reports the time from building the dynablocks system to the end of
its first step, in a fresh process: *cold* (an empty compile cache: the dynamics function
and the contact kernel are compiled) and *warm* (the disk cache filled).

Run: ``.venv/bin/python benchmarks/bench_time_stepping.py [--steps 200] [--repeats 5]
[--cpu-time] [--first-step]``
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Callable, Optional

import numpy as np

from actuators import GeneralizedForceActuator
from multibody import (Halfspace, PointContactConstraint, RigidBodyTree,
                       TimeSteppingRigidBodySystem)
from multibody.models import model_path
from systems import DiagramBuilder
from systems.analysis import Simulator

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "examples"))
import contact_spheres_boxes as _scene  # noqa: E402
import quadruped_standing as _quad  # noqa: E402
from _cli import script_parser  # noqa: E402

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


def dynablocks_box(solver: str = "auto") -> DynablocksRun:
    tree = RigidBodyTree("box")
    tree.add_collision_geometry("world", Halfspace(), name="ground")
    _scene.add_box(tree, "box", BOX_MASS, (BOX_SIZE,) * 3)
    return _dynablocks_free(tree, {"box": (0, 0, BOX_SIZE / 2)},
                            lambda q: q[tree.get_joint("box_free").q_start + 6], solver)


def dynablocks_pile(solver: str = "auto") -> DynablocksRun:
    tree = RigidBodyTree("pile")
    tree.add_collision_geometry("world", Halfspace(), name="ground")
    pos = pile_positions()
    for i in range(NUM_BALLS):
        _scene.add_ball(tree, f"ball{i}", BALL_MASS, BALL_R)
    tree.finalize()
    zi = [tree.get_joint(f"ball{i}_free").q_start + 6 for i in range(NUM_BALLS)]
    return _dynablocks_free(tree, {f"ball{i}": pos[i] for i in range(NUM_BALLS)},
                            lambda q: np.mean(q[zi]), solver)


def _dynablocks_free(tree, positions: dict, probe, solver: str = "auto") -> DynablocksRun:
    contact = PointContactConstraint(tree, mu=MU, name="contact")
    plant = TimeSteppingRigidBodySystem(tree, H, constraints=[contact], contact_solver=solver,
                                        name="plant")
    b = DiagramBuilder(tree.name)
    b.add_system(plant)
    diagram = b.build()
    q = tree.neutral_configuration()
    for name, p in positions.items():
        j = tree.get_joint(f"{name}_free")
        q[j.q_start:j.q_start + 7] = np.concatenate([[1.0, 0, 0, 0], p])
    return DynablocksRun(diagram, plant, tree, np.concatenate([q, np.zeros(tree.nv)]), probe)


def dynablocks_quadruped(solver: str = "auto") -> DynablocksRun:
    """The diagram of ``examples/quadruped_standing.build_quadruped`` (feet touching), with
    the plant's ``contact_solver`` chosen here."""
    tree = RigidBodyTree.from_urdf(str(model_path("quadruped")), floating_base=True)
    tree.add_collision_geometry("world", Halfspace(), name="ground")
    tree.finalize()
    joints = _quad.joint_names()
    legs = GeneralizedForceActuator(tree, joints, name="legs")
    pairs = [("ground", f"{leg}_foot_collision") for leg in _quad.LEGS] + \
        [("ground", "trunk_collision")]
    contact = PointContactConstraint(tree, mu=1.0, pairs=pairs, name="contact")
    plant = TimeSteppingRigidBodySystem(tree, H, actuators=[legs], constraints=[contact],
                                        contact_solver=solver, name="quadruped")
    q_stance = _quad.stance_configuration(tree)
    q_d = q_stance[[tree.get_joint(j).q_start for j in joints]]
    tau_ff, _ = _quad.stance_feedforward(tree, q_stance, joints)
    pd = _quad.StandingPdController(tree, joints, q_d, tau_ff, _quad.KP, _quad.KD)
    builder = DiagramBuilder("quadruped_standing")
    builder.add_system(plant)
    builder.add_system(pd)
    builder.connect(plant.get_output_port("state"), pd.get_input_port("state"))
    builder.connect(pd.get_output_port("command"), plant.get_input_port("legs"))
    x0 = np.concatenate([q_stance, np.zeros(tree.nv)])
    zi = tree.get_joint("floating_base").q_start + 6
    return DynablocksRun(builder.build(), plant, tree, x0, lambda q: q[zi])


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


# ---------------------------------------------------------------- MuJoCo scenes
class MujocoRun:
    """A MuJoCo model and data, an initial state and a height probe."""

    def __init__(self, model, data, probe) -> None:
        import mujoco
        self._mj = mujoco
        self.model, self.data, self.probe = model, data, probe
        self.qpos0, self.qvel0 = data.qpos.copy(), data.qvel.copy()

    def run(self, steps: int) -> float:
        mj, d = self._mj, self.data
        d.qpos[:], d.qvel[:] = self.qpos0, self.qvel0
        d.time = 0.0
        mj.mj_forward(self.model, d)
        t0 = CLOCK()
        mj.mj_step(self.model, d, nstep=steps)
        return CLOCK() - t0

    def height(self) -> float:
        return float(self.probe(self.data.qpos))


_MJ_FRICTION = "{mu} 0.005 0.0001"


def _mujoco_free(bodies: list) -> MujocoRun:
    """bodies: (kind, mass, size, position) of free bodies on a ground plane."""
    import mujoco
    parts = []
    for i, (kind, mass, size, pos) in enumerate(bodies):
        geom = (f'type="box" size="{size / 2} {size / 2} {size / 2}"' if kind == "box"
                else f'type="sphere" size="{size}"')
        parts.append(f'<body name="b{i}" pos="{pos[0]} {pos[1]} {pos[2]}"><freejoint/>'
                     f'<geom {geom} mass="{mass}" friction="{_MJ_FRICTION.format(mu=MU)}"/>'
                     "</body>")
    xml = (f'<mujoco><option timestep="{H}"/><worldbody>'
           f'<geom type="plane" size="0 0 1" friction="{_MJ_FRICTION.format(mu=MU)}"/>'
           + "".join(parts) + "</worldbody></mujoco>")
    model = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(model)
    zi = [7 * i + 2 for i in range(len(bodies))]
    return MujocoRun(model, data, lambda q: np.mean(q[zi]))


def mujoco_box() -> MujocoRun:
    return _mujoco_free([("box", BOX_MASS, BOX_SIZE, (0, 0, BOX_SIZE / 2))])


def mujoco_pile() -> MujocoRun:
    pos = pile_positions()
    return _mujoco_free([("sphere", BALL_MASS, BALL_R, pos[i]) for i in range(NUM_BALLS)])


def mujoco_quadruped() -> MujocoRun:
    import mujoco
    with open(model_path("quadruped")) as fh:
        spec = mujoco.MjSpec.from_string(fh.read())
    spec.option.timestep = H
    spec.body("trunk").add_freejoint()
    for g in spec.geoms:                 # robot geometry touches the ground only
        g.contype, g.conaffinity = 1, 0
        g.friction = [1.0, 0.005, 0.0001]
    ground = spec.worldbody.add_geom()
    ground.type = mujoco.mjtGeom.mjGEOM_PLANE
    ground.size = [0, 0, 1]
    ground.contype, ground.conaffinity = 0, 1
    ground.friction = [1.0, 0.005, 0.0001]
    names = _quad.joint_names()
    for n in names:
        a = spec.add_actuator()
        a.name, a.target, a.trntype = f"{n}_actuator", n, mujoco.mjtTrn.mjTRN_JOINT
        a.gainprm[0] = _quad.KP
        a.biastype = mujoco.mjtBias.mjBIAS_AFFINE
        a.biasprm[1], a.biasprm[2] = -_quad.KP, -_quad.KD
    model = spec.compile()
    data = mujoco.MjData(model)
    tree = RigidBodyTree.from_urdf(str(model_path("quadruped")), floating_base=True)
    q_stance = _quad.stance_configuration(tree)
    tau_ff, _ = _quad.stance_feedforward(tree, q_stance, names)
    data.qpos[:7] = [0, 0, _quad.stance_height(), 1, 0, 0, 0]
    for i, n in enumerate(names):
        jid = model.joint(n).id
        angle = q_stance[tree.get_joint(n).q_start]
        data.qpos[model.jnt_qposadr[jid]] = angle
        data.ctrl[model.actuator(f"{n}_actuator").id] = angle
        data.qfrc_applied[model.jnt_dofadr[jid]] = tau_ff[i]
    return MujocoRun(model, data, lambda q: q[2])


# ---------------------------------------------------------------- driver
SCENES = {
    "box": "one box on the ground",
    "pile": "10 spheres in a pile",
    "quadruped": "standing quadruped (PD)",
}
ENGINES = {
    # name: (label, maker per scene, requirement)
    "dynablocks": ("dynablocks (compiled PGS)",
                   {"box": dynablocks_box, "pile": dynablocks_pile,
                    "quadruped": dynablocks_quadruped}, None),
    "dynablocks_lcp": ("dynablocks (interpreted, Lemke)",
                       {"box": lambda: dynablocks_box("lcp"),
                        "pile": lambda: dynablocks_pile("lcp"),
                        "quadruped": lambda: dynablocks_quadruped("lcp")}, None),
    "drake": ("Drake (SAP)", {"box": drake_box, "pile": drake_pile,
                              "quadruped": drake_quadruped}, "pydrake.all"),
    "mujoco": ("MuJoCo", {"box": mujoco_box, "pile": mujoco_pile,
                          "quadruped": mujoco_quadruped}, "mujoco"),
}


def interleaved_medians(runs: dict, steps: int, repeats: int) -> dict:
    """Median seconds per step of each run over ``repeats`` rounds; every round runs each
    engine once, one after the other (after one warm-up run each)."""
    for r in runs.values():
        r.run(min(steps, 10))
    times: dict = {k: [] for k in runs}
    for _ in range(repeats):
        for k, r in runs.items():
            times[k].append(r.run(steps) / steps)
    return {k: statistics.median(v) for k, v in times.items()}


def first_step_times(scene: str) -> tuple[float, float]:
    """Seconds from building the dynablocks system of ``scene`` to the end of its first
    step, in fresh processes: with an empty compile cache (cold), then with it filled."""
    import subprocess
    import tempfile
    out = []
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, DYNABLOCKS_CACHE_DIR=cache)
        for _ in range(2):
            proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--first-step-child",
                                   scene], env=env, capture_output=True, text=True, check=True)
            out.append(float(proc.stdout.strip().splitlines()[-1]))
    return out[0], out[1]


def _first_step_child(scene: str) -> None:
    t0 = time.perf_counter()
    run = ENGINES["dynablocks"][1][scene]()
    run.run(1)
    print(time.perf_counter() - t0)


def main(argv: Optional[list] = None) -> dict:
    """Run the benchmark; returns ``{scene: {engine: seconds per step, engine + "_height":
    height, ...}}`` (engines: ``dynablocks``, ``dynablocks_lcp``, ``drake``, ``mujoco``)."""
    parser = script_parser(__doc__)
    parser.add_argument("--steps", type=int, default=200, help="time steps per timed run")
    parser.add_argument("--repeats", type=int, default=5,
                        help="interleaved timing rounds (the median is reported)")
    parser.add_argument("--scenes", default=",".join(SCENES),
                        help="comma-separated subset of the scenes")
    parser.add_argument("--engines", default=",".join(ENGINES),
                        help="comma-separated subset of " + ", ".join(ENGINES))
    parser.add_argument("--no-drake", action="store_true",
                        help="skip Drake even where pydrake is installed")
    parser.add_argument("--cpu-time", action="store_true",
                        help="process CPU time (all threads) instead of wall-clock time")
    parser.add_argument("--first-step", action="store_true",
                        help="also time building + first step, cold and warm compile cache")
    parser.add_argument("--first-step-child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.first_step_child:
        _first_step_child(args.first_step_child)
        return {}
    global CLOCK
    CLOCK = time.process_time if args.cpu_time else time.perf_counter
    from threadpoolctl import threadpool_limits

    engines, notes = [], []
    for name in args.engines.split(","):
        if name == "drake" and args.no_drake:
            notes.append("Drake: skipped (--no-drake)")
            continue
        req = ENGINES[name][2]
        if req is not None:
            try:
                __import__(req)
            except ImportError as exc:
                notes.append(f"{ENGINES[name][0]}: n/a ({req} not importable: {exc})")
                continue
        engines.append(name)
    print(f"h = {H} s, {args.steps} steps per run, median of {args.repeats} interleaved rounds, "
          + ("process CPU time" if args.cpu_time else "wall-clock time")
          + ", BLAS limited to 1 thread")
    if "drake" in engines:
        print(DRAKE_INFO)
    for n in notes:
        print(n)
    head = (f"{'scene':<26} {'engine':<32} {'ms/step':>9} {'steps/s':>9} {'RT':>7} "
            f"{'height (m)':>11} {'vs Drake':>9}")
    print(head)
    print("-" * len(head))
    results = {}
    with threadpool_limits(1):
        for key in args.scenes.split(","):
            runs = {}
            for name in engines:
                try:
                    runs[name] = ENGINES[name][1][key]()
                except Exception as exc:  # noqa: BLE001 - report, keep the others
                    print(f"{SCENES[key]:<26} {ENGINES[name][0]:<32} n/a "
                          f"({type(exc).__name__}: {exc})"[:120])
            med = interleaved_medians(runs, args.steps, args.repeats)
            row = {}
            for name, r in runs.items():
                t = med[name]
                row[name], row[f"{name}_height"] = t, r.height()
                ratio = f"{t / med['drake']:>8.2f}x" if "drake" in med else f"{'':>9}"
                print(f"{SCENES[key]:<26} {ENGINES[name][0]:<32} {1e3 * t:>9.3f} {1 / t:>9.0f} "
                      f"{H / t:>7.2f} {r.height():>11.5f} {ratio}")
            if args.first_step and "dynablocks" in engines:
                cold, warm = first_step_times(key)
                row["first_step_cold"], row["first_step_warm"] = cold, warm
                print(f"{'':<26} {'first step: build + 1 step':<32} cold {cold:.2f} s, "
                      f"warm {warm:.2f} s")
            results[key] = row
    print("steps/s: steps per second; RT: real-time factor h / (time per step); height: box "
          "centre / mean sphere centre / trunk height after the last run; vs Drake: time / "
          "Drake's time")
    return results


if __name__ == "__main__":
    main()
