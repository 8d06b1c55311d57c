"""Drake scenes of ``bench_time_stepping.py``: a discrete ``MultibodyPlant(time_step=h)``
with point contact (compliant, default penetration allowance) and the SAP solver, stepped by
Drake's ``Simulator``.

Free bodies are built with the plant API; the quadruped from its URDF; the humanoid, the
human model and the four-bar from our tree of the same model (the MJCF text of
:mod:`_ts_common` or the skeleton) exported with :func:`multibody.parsing.write_urdf`
(inertias, joints, limits and damping) plus the tree's collision shapes registered here
(``write_urdf`` writes visual shapes only). Robot geometries collide with the floor only.
Helper of the benchmark, not part of the library.
"""
from __future__ import annotations

import numpy as np

import _ts_common as C
from multibody import RigidBodyTree
from multibody.models import model_path

INFO = ("Drake MultibodyPlant(time_step=1e-3): point contact (compliant), SAP solver, "
        "Drake Simulator")


class DrakeRun:
    """A Drake diagram, its Simulator, an initial plant state and the bodies whose mean
    height is reported."""

    method = "SAP"

    def __init__(self, diagram, plant, x0, bodies, inputs=None) -> None:
        from pydrake.all import Simulator as DrakeSimulator
        self.diagram, self.plant, self.x0 = diagram, plant, x0
        self.bodies = [plant.GetBodyByName(b) for b in bodies]
        self.context = diagram.CreateDefaultContext()
        self.plant_context = plant.GetMyMutableContextFromRoot(self.context)
        if inputs is not None:
            inputs(plant, self.plant_context)
        self.sim = DrakeSimulator(diagram, self.context)
        self.sim.Initialize()

    def run(self, steps: int) -> float:
        """Reset, advance ``steps`` steps in one ``AdvanceTo``; return seconds."""
        self.context.SetTime(0.0)
        self.plant.SetPositionsAndVelocities(self.plant_context, self.x0)
        self.sim.Initialize()
        t0 = C.CLOCK.now()
        self.sim.AdvanceTo((steps - 0.5) * C.H)
        return C.CLOCK.now() - t0

    def height(self) -> float:
        return float(np.mean([self.plant.EvalBodyPoseInWorld(self.plant_context, b)
                              .translation()[2] for b in self.bodies]))


def _plant():
    from pydrake.all import AddMultibodyPlant, DiagramBuilder, MultibodyPlantConfig
    import logging   # quiet the registration warning about half spaces and deformable contact
    logging.getLogger("drake").setLevel(logging.ERROR)
    builder = DiagramBuilder()
    plant, scene_graph = AddMultibodyPlant(
        MultibodyPlantConfig(time_step=C.H, contact_model="point",
                             discrete_contact_approximation="sap"), builder)
    return builder, plant, scene_graph


def _ground(plant, mu: float) -> None:
    from pydrake.all import CoulombFriction, HalfSpace, RigidTransform
    plant.RegisterCollisionGeometry(plant.world_body(), RigidTransform(), HalfSpace(), "ground",
                                    CoulombFriction(mu, mu))


def _shape(s):
    """Drake shape of one of our shapes."""
    from multibody import geometry as G
    from pydrake.all import Box, Capsule, Cylinder, Sphere
    if isinstance(s, G.Box):
        return Box(*np.asarray(s.size, float))
    if isinstance(s, G.Sphere):
        return Sphere(s.radius)
    if isinstance(s, G.Capsule):
        return Capsule(s.radius, s.length)
    if isinstance(s, G.Cylinder):
        return Cylinder(s.radius, s.length)
    raise TypeError(f"no Drake shape for {s!r} in this benchmark")


def _free_bodies(bodies: list, mu: float = C.MU) -> DrakeRun:
    """bodies: (name, kind, mass, size, position, quaternion [w, x, y, z] or None)."""
    from pydrake.all import (Box, Capsule, CoulombFriction, Quaternion, RigidTransform,
                             RotationMatrix, SpatialInertia, Sphere)
    builder, plant, _ = _plant()
    _ground(plant, mu)
    handles = []
    for name, kind, mass, size, pos, quat in bodies:
        if kind == "box":
            M, shape = SpatialInertia.SolidBoxWithMass(mass, size, size, size), Box(size, size, size)
        elif kind == "sphere":
            M, shape = SpatialInertia.SolidSphereWithMass(mass, size), Sphere(size)
        else:   # capsule: size = (radius, length), axis z
            M = SpatialInertia.SolidCapsuleWithMass(mass, size[0], size[1], [0, 0, 1])
            shape = Capsule(*size)
        body = plant.AddRigidBody(name, M)
        plant.RegisterCollisionGeometry(body, RigidTransform(), shape, name,
                                        CoulombFriction(mu, mu))
        R = RotationMatrix() if quat is None else RotationMatrix(Quaternion(np.asarray(quat)))
        handles.append((body, RigidTransform(R, np.asarray(pos, float))))
    plant.Finalize()
    diagram = builder.Build()
    ctx = plant.CreateDefaultContext()
    for body, X in handles:
        plant.SetFreeBodyPose(ctx, body, X)
    x0 = plant.GetPositionsAndVelocities(ctx)
    return diagram, plant, x0, [b.name() for b, _ in handles]


def box() -> DrakeRun:
    return DrakeRun(*_free_bodies([("box", "box", C.BOX_MASS, C.BOX_SIZE,
                                    (0, 0, C.BOX_SIZE / 2), None)]))


def pile() -> DrakeRun:
    pos = C.pile_positions()
    return DrakeRun(*_free_bodies([(f"ball{i}", "sphere", C.BALL_MASS, C.BALL_R, pos[i], None)
                                   for i in range(C.NUM_BALLS)]))


def stack() -> DrakeRun:
    pos = C.stack_positions()
    d, p, x0, names = _free_bodies([(f"box{i}", "box", C.STACK_MASS, C.STACK_SIZE, pos[i], None)
                                    for i in range(C.STACK_N)])
    return DrakeRun(d, p, x0, names[-1:])


def capsule() -> DrakeRun:
    pos, quat = C.capsule_pose()
    return DrakeRun(*_free_bodies([("capsule", "capsule", C.CAPSULE_MASS,
                                    (C.CAPSULE_R, C.CAPSULE_LEN), pos, quat)]))


def quadruped() -> DrakeRun:
    from pydrake.all import Parser, PdControllerGains, RigidTransform
    import quadruped_standing as quad
    builder, plant, _ = _plant()
    with open(model_path("quadruped")) as fh:
        (model,) = Parser(plant).AddModelsFromString(fh.read(), "urdf")
    _ground(plant, 1.0)
    names = quad.joint_names()
    tree = RigidBodyTree.from_urdf(str(model_path("quadruped")), floating_base=True)
    for n in names:
        effort = float(np.atleast_1d(tree.get_joint(n).effort_limit)[0])
        act = plant.AddJointActuator(f"{n}_actuator", plant.GetJointByName(n), effort)
        act.set_controller_gains(PdControllerGains(p=quad.KP, d=quad.KD))
    plant.Finalize()
    diagram = builder.Build()
    q_stance = quad.stance_configuration(tree)   # same stance and feedforward as ours
    tau_ff, _ = quad.stance_feedforward(tree, q_stance, names)
    ctx = plant.CreateDefaultContext()
    plant.SetFreeBodyPose(ctx, plant.GetBodyByName("trunk"),
                          RigidTransform([0, 0, quad.stance_height()]))
    qd = [q_stance[tree.get_joint(n).q_start] for n in names]
    for n, a in zip(names, qd):
        plant.GetJointByName(n).set_angle(ctx, a)

    def inputs(plant, pc):   # desired state in actuator order, then feedforward torques
        plant.get_desired_state_input_port(model).FixValue(pc, np.r_[qd, np.zeros(len(qd))])
        plant.get_actuation_input_port().FixValue(pc, tau_ff)
    return DrakeRun(diagram, plant, plant.GetPositionsAndVelocities(ctx), ["trunk"], inputs)


# ------------------------------------------------------------------ models from our trees
def _from_tree(tree, collision: list, mu: float):
    """The tree as URDF (``write_urdf``) in a new plant, with ``collision`` = [(body, shape,
    pose 4x4)] registered, a floor, and robot-robot collisions filtered out. Returns
    builder, plant, model instance."""
    from pydrake.all import (CollisionFilterDeclaration, CoulombFriction, GeometrySet, Parser,
                             RigidTransform)
    from multibody.parsing import write_urdf
    builder, plant, scene_graph = _plant()
    (model,) = Parser(plant).AddModelsFromString(write_urdf(tree, geometry=False), "urdf")
    _ground(plant, mu)
    ids = [plant.RegisterCollisionGeometry(plant.GetBodyByName(b, model),
                                           RigidTransform(np.asarray(X, float)), _shape(s),
                                           f"{b}_collision{k}", CoulombFriction(mu, mu))
           for k, (b, s, X) in enumerate(collision)]
    scene_graph.collision_filter_manager().Apply(
        CollisionFilterDeclaration().ExcludeWithin(GeometrySet(ids)))
    return builder, plant, model


def _set_tree_state(plant, ctx, tree, q) -> None:
    """Our configuration ``q`` (free root + one-DOF pieces) on the plant loaded from
    ``write_urdf(tree)``."""
    from pydrake.all import Quaternion, RigidTransform, RotationMatrix
    from multibody.parsing import configuration_to_urdf_order, urdf_joint_order
    qu = configuration_to_urdf_order(tree, q)      # [x, y, z, qx, qy, qz, qw, joints...]
    root = [j for j in tree.joints if j.parent == "world"][0]
    if root.type == "free":
        R = RotationMatrix(Quaternion(np.r_[qu[6], qu[3:6]] / np.linalg.norm(qu[3:7])))
        plant.SetFreeBodyPose(ctx, plant.GetBodyByName(root.child), RigidTransform(R, qu[:3]))
        qu = qu[7:]
    for name, a in zip(urdf_joint_order(tree), qu):
        plant.GetJointByName(name).set_angle(ctx, float(a))


def humanoid() -> DrakeRun:
    from multibody.parsing import read_mjcf_model
    m = read_mjcf_model(C.humanoid_mjcf())
    col = [(b.name, g.shape, g.pose) for b in m.tree.bodies if b.name != "world"
           for g in b.collision_geometries]
    builder, plant, _ = _from_tree(m.tree, col, C.ROBOT_MU)
    plant.Finalize()
    diagram = builder.Build()
    ctx = plant.CreateDefaultContext()
    _set_tree_state(plant, ctx, m.tree, m.qpos0)
    return DrakeRun(diagram, plant, plant.GetPositionsAndVelocities(ctx), ["pelvis"])


def human(skeleton=None) -> DrakeRun:
    from pydrake.all import PdControllerGains
    from multibody.parsing import configuration_to_urdf_order, urdf_joint_order
    s = C.human_setup(skeleton)
    tree = s["model"].tree
    builder, plant, model = _from_tree(tree, s["feet"], C.ROBOT_MU)
    # the exported one-DOF joint of each of our coordinates
    qidx = np.rint(configuration_to_urdf_order(tree, np.arange(tree.nq, dtype=float))[7:])
    name_of_q = {int(i): n for n, i in zip(urdf_joint_order(tree), qidx)}
    q_of_v = {v: q for q, v in _q_of_v(tree).items()}
    names = [name_of_q[q_of_v[i]] for i in s["dofs"]]
    for n, kp, kd in zip(names, s["kp"], s["kd"]):
        act = plant.AddJointActuator(f"{n}_actuator", plant.GetJointByName(n), 1e9)
        act.set_controller_gains(PdControllerGains(p=float(kp), d=float(kd)))
    plant.Finalize()
    diagram = builder.Build()
    ctx = plant.CreateDefaultContext()
    _set_tree_state(plant, ctx, tree, s["q0"])
    qd = [plant.GetJointByName(n).get_angle(ctx) for n in names]

    def inputs(plant, pc):
        plant.get_desired_state_input_port(model).FixValue(pc, np.r_[qd, np.zeros(len(qd))])
        plant.get_actuation_input_port().FixValue(pc, np.zeros(len(qd)))
    root = tree.get_joint("floating_base").child
    return DrakeRun(diagram, plant, plant.GetPositionsAndVelocities(ctx), [root], inputs)


def _q_of_v(tree) -> dict:
    """{q index: v index} of every one-DOF coordinate (joints with nq == nv)."""
    return {j.q_start + k: j.v_start + k for j in tree.joints if j.nq == j.nv
            for k in range(j.nv)}


def four_bar() -> DrakeRun:
    from multibody.parsing import parse_mjcf
    tree = parse_mjcf(C.four_bar_mjcf(closure=False))
    builder, plant, _ = _from_tree(tree, [], 1.0)
    plant.WeldFrames(plant.world_frame(), plant.GetFrameByName("base"))
    # on the welded base: a ball constraint on plant.world_body() crashes the SAP step
    # (segmentation fault in pydrake 1.51)
    plant.AddBallConstraint(plant.GetBodyByName("crank2"), [0, 0, C.FOURBAR_L],
                            plant.GetBodyByName("base"), [C.FOURBAR_D, 0, 0])
    plant.Finalize()
    diagram = builder.Build()
    ctx = plant.CreateDefaultContext()
    for n, a in zip(("j1", "j2", "j3"), C.four_bar_angles()):
        plant.GetJointByName(n).set_angle(ctx, float(a))
    return DrakeRun(diagram, plant, plant.GetPositionsAndVelocities(ctx), ["coupler"])


def four_bar_floor() -> DrakeRun:
    from multibody.geometry import Sphere
    from multibody.parsing import parse_mjcf
    tree = parse_mjcf(C.four_bar_mjcf(closure=False, floor=True))
    X = np.eye(4)
    X[0, 3] = C.FOURBAR_D / 2
    builder, plant, _ = _from_tree(tree, [("coupler", Sphere(C.KNOB_R), X)], C.KNOB_MU)
    if not plant.HasJointNamed("base_weld"):
        from pydrake.all import RigidTransform
        plant.WeldFrames(plant.world_frame(), plant.GetFrameByName("base"),
                         RigidTransform([0.0, 0.0, C.FLOOR_BASE_Z]))
    plant.AddBallConstraint(plant.GetBodyByName("crank2"), [0, 0, C.FOURBAR_L],
                            plant.GetBodyByName("base"), [C.FOURBAR_D, 0, 0])
    plant.Finalize()
    diagram = builder.Build()
    ctx = plant.CreateDefaultContext()
    for n, a in zip(("j1", "j2", "j3"), C.four_bar_angles(C.FLOOR_THETA)):
        plant.GetJointByName(n).set_angle(ctx, float(a))
    return DrakeRun(diagram, plant, plant.GetPositionsAndVelocities(ctx), ["coupler"])


SCENES = {"box": box, "pile": pile, "quadruped": quadruped, "stack": stack, "capsule": capsule,
          "humanoid": humanoid, "human": human, "four_bar": four_bar,
          "four_bar_floor": four_bar_floor}
