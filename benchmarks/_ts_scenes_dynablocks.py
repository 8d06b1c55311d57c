"""dynablocks scenes of ``bench_time_stepping.py``: a ``TimeSteppingRigidBodySystem`` with a
``PointContactConstraint`` (and joint limits, closures, PD controllers where the scene has
them) in a diagram stepped by ``systems.analysis.Simulator``.

``contact_solver`` is the plant's: ``"auto"`` (the default: the compiled step where it applies,
else the pivoting step, ``plant.step_method`` says which and ``plant.step_method_reason`` why)
or ``"lcp"`` (always the pivoting step). The humanoid and the four-bar are the MJCF text of
:mod:`_ts_common` read by :func:`multibody.parsing.read_mjcf_model` (the humanoid's contact
and joint limits by ``mjcf_contact`` / ``mjcf_joint_limits`` with the plant's own ERP/CFM,
``softening=None``); the human model is :func:`multibody.models.human_model` with its foot and
toe boxes colliding with the floor, its joint stops as limits and a joint PD holding the
reference pose. Helper of the benchmark, not part of the library.
"""
from __future__ import annotations

import warnings
from collections import Counter
from typing import Optional

import numpy as np

import _ts_common as C
import contact_spheres_boxes as _scene
import quadruped_standing as _quad
from actuators import GeneralizedForceActuator
from multibody import (BallConstraint, Capsule, Halfspace, JointLimitConstraint,
                       PointContactConstraint, RigidBodyTree, TimeSteppingRigidBodySystem)
from multibody.models import model_path
from multibody.tree import Free
from systems import DiagramBuilder, LeafSystem
from systems.analysis import Simulator


class DynablocksRun:
    """A diagram with its plant, a Simulator, the initial state ``x0`` (nq + nv) and the
    bodies whose mean height is reported; ``compiled_reason`` says why the whole run cannot
    be compiled (None when ``Simulator(diagram, compiled=True)`` accepted the diagram)."""

    def __init__(self, diagram, plant, tree, x0: np.ndarray, bodies: list) -> None:
        self.diagram, self.plant, self.tree, self.x0 = diagram, plant, tree, x0
        self.bodies = list(bodies)
        self.context = diagram.create_default_context()
        self.plant_context = plant.get_my_context_from_root(self.context)
        self.sim = Simulator(diagram, self.context)
        self.method = plant.step_method
        self.reason = plant.step_method_reason
        self.compiled_sim, self.compiled_reason = None, None
        try:
            ctx = diagram.create_default_context()
            self.compiled_sim = (Simulator(diagram, ctx, compiled=True), ctx)
        except Exception as exc:  # noqa: BLE001 - reported as the reason for n/a
            self.compiled_reason = f"{type(exc).__name__}: {exc}"

    def _reset(self, context) -> None:
        context.set_time(0.0)
        pc = self.plant.get_my_context_from_root(context)
        self.plant.set_positions(pc, self.x0[:self.tree.nq])
        self.plant.set_velocities(pc, self.x0[self.tree.nq:])

    def run(self, steps: int) -> float:
        """Reset, ``Simulator.advance_to`` over ``steps`` steps; return seconds."""
        self._reset(self.context)
        t0 = C.CLOCK.now()
        # stop half a step before the last update time: exactly `steps` discrete updates
        self.sim.advance_to((steps - 0.5) * C.H)
        return C.CLOCK.now() - t0

    def run_whole(self, steps: int) -> Optional[float]:
        """The same run by ``Simulator(diagram, compiled=True)``, or None (n/a)."""
        if self.compiled_sim is None:
            return None
        sim, ctx = self.compiled_sim
        self._reset(ctx)
        t0 = C.CLOCK.now()
        sim.advance_to((steps - 0.5) * C.H)
        return C.CLOCK.now() - t0

    def census(self, steps: int) -> Counter:
        """Which method took each of ``steps`` steps (untimed run): counts of
        ``"<method>"`` and ``"<method> (fallback from <other>)"``."""
        self._reset(self.context)
        port = self.plant.get_output_port("step")
        out: Counter = Counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for k in range(steps):
                sol = port.eval(self.plant_context)
                status = getattr(sol, "status", None)
                method = getattr(status, "method", None) or getattr(sol.report, "method", "?")
                src = getattr(status, "fallback_from", None)
                out[f"{method} (fallback from {src})" if src else method] += 1
                self.sim.advance_to((k + 0.5) * C.H)
        return out

    def height(self, context=None) -> float:
        pc = self.plant_context if context is None else \
            self.plant.get_my_context_from_root(context)
        q = np.asarray(self.plant.get_positions(pc), float)
        return float(np.mean([np.asarray(self.tree.body_pose(b, q), float)[2, 3]
                              for b in self.bodies]))

    def whole_height(self) -> float:
        return self.height(self.compiled_sim[1])


class JointPd(LeafSystem):
    """``command = Kp (q_d - q[qi]) - Kd v[vi]`` per controlled coordinate; input ``state``
    (nq + nv), output ``command`` (len(qi))."""

    def __init__(self, tree, qi, vi, q_desired, kp, kd, name: str = "pd") -> None:
        super().__init__(name)
        self.qi, self.vi = np.asarray(qi, int), tree.nq + np.asarray(vi, int)
        self.q_desired = np.asarray(q_desired, float)
        self.kp, self.kd = np.asarray(kp, float), np.asarray(kd, float)
        self._state = self.declare_input_port("state", tree.nq + tree.nv)
        self.declare_output_port("command", len(self.qi), self._calc, feedthrough=True,
                                 prerequisites=())

    def _calc(self, context) -> np.ndarray:
        x = np.asarray(self._state.eval(context))
        return self.kp * (self.q_desired - x[self.qi]) - self.kd * x[self.vi]


def _build(tree, constraints, solver, x0, bodies, actuators=(), controller=None):
    """Plant (+ a controller wired state -> command of the first actuator) in a diagram.
    Construction warnings (a scene the compiled step does not cover) are silenced: the
    table prints ``plant.step_method`` and the census."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plant = TimeSteppingRigidBodySystem(tree, C.H, actuators=list(actuators),
                                            constraints=[c for c in constraints if c],
                                            contact_solver=solver, name="plant")
    b = DiagramBuilder(tree.name.replace(".", "_"))
    b.add_system(plant)
    if controller is not None:
        b.add_system(controller)
        b.connect(plant.get_output_port("state"), controller.get_input_port("state"))
        b.connect(controller.get_output_port("command"),
                  plant.get_input_port(actuators[0].name))
    return DynablocksRun(b.build(), plant, tree, x0, bodies)


def _free_scene(tree, poses: dict, bodies: list, solver: str, mu: float = C.MU):
    """Free bodies ``{name: (position, quaternion or None)}`` on a ground halfspace."""
    tree.finalize()
    q = tree.neutral_configuration()
    for name, (p, quat) in poses.items():
        j = tree.get_joint(f"{name}_free")
        q[j.q_start:j.q_start + 7] = np.r_[[1.0, 0, 0, 0] if quat is None else quat, p]
    contact = PointContactConstraint(tree, mu=mu, name="contact")
    return _build(tree, [contact], solver, np.r_[q, np.zeros(tree.nv)], bodies)


def _ground_tree(name: str) -> RigidBodyTree:
    tree = RigidBodyTree(name)
    tree.add_collision_geometry("world", Halfspace(), name="ground")
    return tree


def box(solver: str = "auto") -> DynablocksRun:
    tree = _ground_tree("box")
    _scene.add_box(tree, "box", C.BOX_MASS, (C.BOX_SIZE,) * 3)
    return _free_scene(tree, {"box": ((0, 0, C.BOX_SIZE / 2), None)}, ["box"], solver)


def pile(solver: str = "auto") -> DynablocksRun:
    tree = _ground_tree("pile")
    names = [f"ball{i}" for i in range(C.NUM_BALLS)]
    for n in names:
        _scene.add_ball(tree, n, C.BALL_MASS, C.BALL_R)
    pos = C.pile_positions()
    return _free_scene(tree, {n: (p, None) for n, p in zip(names, pos)}, names, solver)


def stack(solver: str = "auto") -> DynablocksRun:
    tree = _ground_tree("stack")
    names = [f"box{i}" for i in range(C.STACK_N)]
    for n in names:
        _scene.add_box(tree, n, C.STACK_MASS, (C.STACK_SIZE,) * 3)
    pos = C.stack_positions()
    return _free_scene(tree, {n: (p, None) for n, p in zip(names, pos)}, names[-1:], solver)


def capsule_inertia(mass: float, r: float, length: float) -> np.ndarray:
    """Rotational inertia (3, 3) about the centre of a solid capsule along z (cylinder of
    ``length`` plus two hemispheres of radius ``r``, uniform density)."""
    vc, vh = np.pi * r ** 2 * length, 4.0 / 3.0 * np.pi * r ** 3
    mc, mh = mass * vc / (vc + vh), mass * vh / (vc + vh)
    izz = mc * r ** 2 / 2 + mh * 2 * r ** 2 / 5
    # hemisphere pair: 83/320 m r^2 about their own centroids, 3 r / 8 beyond the cylinder end
    ixx = mc * (r ** 2 / 4 + length ** 2 / 12) + mh * (83 / 320 * r ** 2
                                                      + (length / 2 + 3 * r / 8) ** 2)
    return np.diag([ixx, ixx, izz])


def capsule(solver: str = "auto") -> DynablocksRun:
    tree = _ground_tree("capsule")
    tree.add_body("capsule", C.CAPSULE_MASS,
                  inertia=capsule_inertia(C.CAPSULE_MASS, C.CAPSULE_R, C.CAPSULE_LEN))
    tree.add_joint(Free("capsule_free", "world", "capsule"))
    tree.add_collision_geometry("capsule", Capsule(C.CAPSULE_R, C.CAPSULE_LEN),
                                name="capsule_geom")
    return _free_scene(tree, {"capsule": C.capsule_pose()}, ["capsule"], solver)


def quadruped_parts():
    """The parts of ``examples/quadruped_standing.build_quadruped``: the floating quadruped
    with a ground halfspace, its actuated joints, their ``legs`` actuator, the contact of the
    feet and trunk with the ground (mu = 1), the stance configuration and the feedforward
    torques that hold it: ``(tree, joints, legs, contact, q_stance, tau_ff)``."""
    tree = RigidBodyTree.from_urdf(str(model_path("quadruped")), floating_base=True)
    tree.add_collision_geometry("world", Halfspace(), name="ground")
    tree.finalize()
    joints = _quad.joint_names()
    legs = GeneralizedForceActuator(tree, joints, name="legs")
    pairs = [("ground", f"{leg}_foot_collision") for leg in _quad.LEGS] + \
        [("ground", "trunk_collision")]
    contact = PointContactConstraint(tree, mu=1.0, pairs=pairs, name="contact")
    q_stance = _quad.stance_configuration(tree)
    tau_ff, _ = _quad.stance_feedforward(tree, q_stance, joints)
    return tree, joints, legs, contact, q_stance, tau_ff


def quadruped(solver: str = "auto") -> DynablocksRun:
    """The diagram of ``examples/quadruped_standing.build_quadruped`` (feet touching)."""
    tree, joints, legs, contact, q_stance, tau_ff = quadruped_parts()
    q_d = q_stance[[tree.get_joint(j).q_start for j in joints]]
    pd = _quad.StandingPdController(tree, joints, q_d, tau_ff, _quad.KP, _quad.KD)
    return _build(tree, [contact], solver, np.r_[q_stance, np.zeros(tree.nv)], ["trunk"],
                  [legs], pd)


def humanoid(solver: str = "auto") -> DynablocksRun:
    from multibody.parsing import mjcf_contact, mjcf_joint_limits, read_mjcf_model
    m = read_mjcf_model(C.humanoid_mjcf())
    contact = mjcf_contact(m, softening=None, name="contact")
    limits = mjcf_joint_limits(m, softening=None, name="joint_limits")
    x0 = np.r_[m.qpos0, np.zeros(m.tree.nv)]
    return _build(m.tree, [contact, limits], solver, x0, ["pelvis"])


def human(solver: str = "auto", skeleton: Optional[str] = None) -> DynablocksRun:
    s = C.human_setup(skeleton)
    tree = s["model"].tree
    tree.add_collision_geometry("world", Halfspace(), name="ground")
    pairs = []
    for k, (body, shape, X) in enumerate(s["feet"]):
        tree.add_collision_geometry(body, shape, pose=X, name=f"{body}_collision{k}")
        pairs.append(("ground", f"{body}_collision{k}"))
    contact = PointContactConstraint(tree, mu=C.ROBOT_MU, pairs=pairs, name="contact")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        limits = JointLimitConstraint(tree, name="joint_limits")
    root = tree.get_joint("floating_base")
    joints = [j.name for j in tree.joints if j is not root and j.nv > 0]
    body = GeneralizedForceActuator(tree, joints, effort_limit=np.inf, name="body")
    q_of_v = {j.v_start + k: j.q_start + k for j in tree.joints if j.nq == j.nv
              for k in range(j.nv)}
    qi = [q_of_v[i] for i in s["dofs"]]
    pd = JointPd(tree, qi, s["dofs"], s["q0"][qi], s["kp"], s["kd"])
    return _build(tree, [contact, limits], solver, np.r_[s["q0"], np.zeros(tree.nv)],
                  [root.child], [body], pd)


def four_bar(solver: str = "auto") -> DynablocksRun:
    from multibody.parsing import parse_mjcf
    tree = parse_mjcf(C.four_bar_mjcf(closure=False))
    closure = BallConstraint(tree, "pivot_b", "tip", name="closure")
    q = tree.neutral_configuration()
    for n, a in zip(("j1", "j2", "j3"), C.four_bar_angles()):
        q[tree.get_joint(n).q_start] = a
    return _build(tree, [closure], solver, np.r_[q, np.zeros(tree.nv)], ["coupler"])


def four_bar_floor(solver: str = "auto") -> DynablocksRun:
    """The four-bar released at ``FLOOR_THETA``, its coupler's knob falling onto the floor
    (the closure eliminated before the contact problem)."""
    from multibody.parsing import parse_mjcf
    tree = parse_mjcf(C.four_bar_mjcf(closure=False, floor=True))   # (knob and floor with it)
    closure = BallConstraint(tree, "pivot_b", "tip", name="closure")
    contact = PointContactConstraint(tree, mu=C.KNOB_MU, name="contact")
    q = tree.neutral_configuration()
    for n, a in zip(("j1", "j2", "j3"), C.four_bar_angles(C.FLOOR_THETA)):
        q[tree.get_joint(n).q_start] = a
    return _build(tree, [closure, contact], solver, np.r_[q, np.zeros(tree.nv)], ["coupler"])


SCENES = {"box": box, "pile": pile, "quadruped": quadruped, "stack": stack, "capsule": capsule,
          "humanoid": humanoid, "human": human, "four_bar": four_bar,
          "four_bar_floor": four_bar_floor}
