"""MuJoCo scenes of ``bench_time_stepping.py``: soft contact, the default Newton solver and
pyramidal cone, friction ``(mu, 0.005, 1e-4)``, robot geoms colliding with the floor only.

Each scene is timed two ways: ``mj_step`` called from Python once per step (what a Python
user's loop does), and ``mujoco.rollout.rollout`` (the whole run in C, mujoco >= 3.2).
Free bodies are MJCF text written here; the humanoid and the four-bar are the MJCF text of
:mod:`_ts_common` (the four-bar closed by a ``<connect>`` equality); the quadruped and the
human model are URDF (the shipped file, :func:`multibody.parsing.write_urdf` of the human
tree) read by ``MjSpec`` with a free joint, collision geoms, PD position actuators and a
floor added. MuJoCo refuses massless moving bodies, so the massless links through which
``write_urdf`` chains multi-axis joints get 1e-9 kg and 1e-12 kg m^2.
Helper of the benchmark, not part of the library.
"""
from __future__ import annotations

import numpy as np

import _ts_common as C
from multibody import RigidBodyTree
from multibody.models import model_path

_FR = "{mu} 0.005 0.0001"


class MujocoRun:
    """A MuJoCo model and data, the initial state and the bodies whose mean height is
    reported."""

    method = "Newton (soft)"

    def __init__(self, model, data, bodies) -> None:
        import mujoco
        self._mj = mujoco
        self.model, self.data = model, data
        self.ids = [model.body(b).id for b in bodies]
        self.spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
        self.ctrl_spec = mujoco.mjtState.mjSTATE_CTRL | mujoco.mjtState.mjSTATE_QFRC_APPLIED
        self.state0 = self._get(self.spec)
        self.control = self._get(self.ctrl_spec)
        self._out = None

    def _get(self, spec) -> np.ndarray:
        mj = self._mj
        x = np.empty(mj.mj_stateSize(self.model, spec))
        mj.mj_getState(self.model, self.data, x, spec)
        return x

    def _reset(self) -> None:
        mj = self._mj
        mj.mj_resetData(self.model, self.data)
        mj.mj_setState(self.model, self.data, self.state0, self.spec)
        mj.mj_setState(self.model, self.data, self.control, self.ctrl_spec)

    def run(self, steps: int) -> float:
        """Reset, call ``mj_step`` ``steps`` times from Python; return seconds."""
        mj, m, d = self._mj, self.model, self.data
        self._reset()
        step = mj.mj_step
        t0 = C.CLOCK.now()
        for _ in range(steps):
            step(m, d)
        return C.CLOCK.now() - t0

    def run_whole(self, steps: int) -> float:
        """Reset, one ``mujoco.rollout.rollout`` of ``steps`` steps (the controls held);
        return seconds. The final state is written back to the data."""
        from mujoco import rollout
        mj = self._mj
        self._reset()
        if self._out is None or self._out.shape[1] != steps:
            self._out = np.empty((1, steps, self.state0.size))
        t0 = C.CLOCK.now()
        rollout.rollout(self.model, self.data, self.state0[None], self.control[None, None],
                        control_spec=self.ctrl_spec, nstep=steps, state=self._out)
        dt = C.CLOCK.now() - t0
        mj.mj_setState(self.model, self.data, self._out[0, -1], self.spec)
        return dt

    def height(self) -> float:
        self._mj.mj_kinematics(self.model, self.data)
        return float(np.mean(self.data.xpos[self.ids, 2]))

    def whole_height(self) -> float:
        """The height after :meth:`run_whole` (its final state is in the data)."""
        return self.height()


def _from_xml(xml: str, bodies: list) -> MujocoRun:
    import mujoco
    model = mujoco.MjModel.from_xml_string(xml)
    return MujocoRun(model, mujoco.MjData(model), bodies)


def _free(bodies: list, mu: float = C.MU) -> str:
    """MJCF of free bodies (name, kind, mass, size, position, quaternion or None) on a floor."""
    fr = _FR.format(mu=mu)
    parts = []
    for name, kind, mass, size, pos, quat in bodies:
        if kind == "box":
            geom = f'type="box" size="{size / 2} {size / 2} {size / 2}"'
        elif kind == "sphere":
            geom = f'type="sphere" size="{size}"'
        else:    # capsule: (radius, length between the cap centres)
            geom = f'type="capsule" size="{size[0]} {size[1] / 2}"'
        q = "" if quat is None else ' quat="{} {} {} {}"'.format(*quat)
        parts.append(f'<body name="{name}" pos="{pos[0]} {pos[1]} {pos[2]}"{q}><freejoint/>'
                     f'<geom {geom} mass="{mass}" friction="{fr}"/></body>')
    return (f'<mujoco><option timestep="{C.H}"/><worldbody>'
            f'<geom type="plane" size="0 0 1" friction="{fr}"/>' + "".join(parts)
            + "</worldbody></mujoco>")


def box() -> MujocoRun:
    return _from_xml(_free([("box", "box", C.BOX_MASS, C.BOX_SIZE, (0, 0, C.BOX_SIZE / 2),
                             None)]), ["box"])


def pile() -> MujocoRun:
    pos = C.pile_positions()
    names = [f"ball{i}" for i in range(C.NUM_BALLS)]
    return _from_xml(_free([(n, "sphere", C.BALL_MASS, C.BALL_R, p, None)
                            for n, p in zip(names, pos)]), names)


def stack() -> MujocoRun:
    pos = C.stack_positions()
    names = [f"box{i}" for i in range(C.STACK_N)]
    return _from_xml(_free([(n, "box", C.STACK_MASS, C.STACK_SIZE, p, None)
                            for n, p in zip(names, pos)]), names[-1:])


def capsule() -> MujocoRun:
    pos, quat = C.capsule_pose()
    return _from_xml(_free([("capsule", "capsule", C.CAPSULE_MASS, (C.CAPSULE_R, C.CAPSULE_LEN),
                             pos, quat)]), ["capsule"])


def humanoid() -> MujocoRun:
    return _from_xml(C.humanoid_mjcf(), ["pelvis"])


def four_bar() -> MujocoRun:
    import mujoco
    model = mujoco.MjModel.from_xml_string(C.four_bar_mjcf(closure=True))
    data = mujoco.MjData(model)
    data.qpos[:] = C.four_bar_angles()
    return MujocoRun(model, data, ["coupler"])


def four_bar_floor() -> MujocoRun:
    import mujoco
    model = mujoco.MjModel.from_xml_string(C.four_bar_mjcf(closure=True, floor=True))
    data = mujoco.MjData(model)
    data.qpos[:] = C.four_bar_angles(C.FLOOR_THETA)
    return MujocoRun(model, data, ["coupler"])


def _floor(spec, mu: float) -> None:
    import mujoco
    for g in spec.geoms:                 # robot geometry touches the floor only
        g.contype, g.conaffinity = 1, 0
        g.friction = [mu, 0.005, 0.0001]
    ground = spec.worldbody.add_geom()
    ground.type = mujoco.mjtGeom.mjGEOM_PLANE
    ground.size = [0, 0, 1]
    ground.contype, ground.conaffinity = 0, 1
    ground.friction = [mu, 0.005, 0.0001]


def _pd_actuators(spec, joints, kp, kd) -> None:
    import mujoco
    for n, p, d in zip(joints, np.broadcast_to(kp, len(joints)), np.broadcast_to(kd, len(joints))):
        a = spec.add_actuator()
        a.name, a.target, a.trntype = f"{n}_actuator", n, mujoco.mjtTrn.mjTRN_JOINT
        a.gainprm[0] = p
        a.biastype = mujoco.mjtBias.mjBIAS_AFFINE
        a.biasprm[1], a.biasprm[2] = -p, -d


def quadruped() -> MujocoRun:
    import mujoco
    import quadruped_standing as quad
    with open(model_path("quadruped")) as fh:
        spec = mujoco.MjSpec.from_string(fh.read())
    spec.option.timestep = C.H
    spec.body("trunk").add_freejoint()
    _floor(spec, 1.0)
    names = quad.joint_names()
    _pd_actuators(spec, names, quad.KP, quad.KD)
    model = spec.compile()
    data = mujoco.MjData(model)
    tree = RigidBodyTree.from_urdf(str(model_path("quadruped")), floating_base=True)
    q_stance = quad.stance_configuration(tree)
    tau_ff, _ = quad.stance_feedforward(tree, q_stance, names)
    data.qpos[:7] = [0, 0, quad.stance_height(), 1, 0, 0, 0]
    for i, n in enumerate(names):
        jid = model.joint(n).id
        angle = q_stance[tree.get_joint(n).q_start]
        data.qpos[model.jnt_qposadr[jid]] = angle
        data.ctrl[model.actuator(f"{n}_actuator").id] = angle
        data.qfrc_applied[model.jnt_dofadr[jid]] = tau_ff[i]
    return MujocoRun(model, data, ["trunk"])


def human(skeleton=None) -> MujocoRun:
    import mujoco
    from multibody.parsing import configuration_to_urdf_order, urdf_joint_order, write_urdf
    s = C.human_setup(skeleton)
    tree = s["model"].tree
    spec = mujoco.MjSpec.from_string(write_urdf(tree, geometry=False))
    spec.option.timestep = C.H
    root = tree.get_joint("floating_base").child
    spec.body(root).add_freejoint()
    for b in spec.bodies:                # write_urdf's massless chain links
        if b.name != "world" and b.mass == 0.0:
            b.mass, b.inertia = 1e-9, [1e-12] * 3
    for k, (body, shape, X) in enumerate(s["feet"]):
        g = spec.body(body).add_geom()
        g.name, g.type = f"{body}_collision{k}", mujoco.mjtGeom.mjGEOM_BOX
        g.size = np.asarray(shape.size, float) / 2
        g.pos = X[:3, 3]
        g.quat = _quat(X[:3, :3])
    _floor(spec, C.ROBOT_MU)
    qu = configuration_to_urdf_order(tree, s["q0"])
    order = urdf_joint_order(tree)
    qidx = np.rint(configuration_to_urdf_order(tree, np.arange(tree.nq, dtype=float))[7:])
    name_of_q = {int(i): n for n, i in zip(order, qidx)}
    q_of_v = {j.v_start + k: j.q_start + k for j in tree.joints if j.nq == j.nv
              for k in range(j.nv)}
    names = [name_of_q[q_of_v[i]] for i in s["dofs"]]
    _pd_actuators(spec, names, s["kp"], s["kd"])
    model = spec.compile()
    data = mujoco.MjData(model)
    data.qpos[:7] = np.r_[qu[:3], qu[6], qu[3:6]]
    for n, a in zip(order, qu[7:]):
        data.qpos[model.jnt_qposadr[model.joint(n).id]] = a
    for n in names:
        data.ctrl[model.actuator(f"{n}_actuator").id] = data.qpos[
            model.jnt_qposadr[model.joint(n).id]]
    return MujocoRun(model, data, [root])


def _quat(R: np.ndarray) -> np.ndarray:
    """[w, x, y, z] of a rotation matrix."""
    import mujoco
    q = np.empty(4)
    mujoco.mju_mat2Quat(q, np.ascontiguousarray(R, float).ravel())
    return q


SCENES = {"box": box, "pile": pile, "quadruped": quadruped, "stack": stack, "capsule": capsule,
          "humanoid": humanoid, "human": human, "four_bar": four_bar,
          "four_bar_floor": four_bar_floor}
