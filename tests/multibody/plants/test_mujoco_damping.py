"""``damping_scheme="mujoco_euler"`` of TimeSteppingRigidBodySystem: MuJoCo's Euler integrator
with its implicit joint damping (constraint impulses from ``H``, then ``v_n = v + (H + h
D)^{-1} H (v_M - v)``): one step by hand, MuJoCo's trajectory step by step, the MJCF
reader's choice; the compiled step's split equals the pivoting step's."""
import warnings

import numpy as np
import pytest
from _compiled_step import without_compiler

from multibody.constraints import JointLimitConstraint
from multibody.parsing import mjcf_joint_limits, read_mjcf_model
from multibody.plants import TimeSteppingRigidBodySystem

M, ARM, B, G, H = 2.0, 0.5, 3.0, 9.81, 0.01


def _slide(option=""):
    # a vertical slide with its lower limit at q = 0; the mass on the axis
    return f"""<mujoco><option timestep="{H}" integrator="Euler" {option}/><worldbody>
    <body pos="0 0 1"><joint name="s" type="slide" axis="0 0 1" range="0 1" damping="{B}"
      armature="{ARM}"/><geom type="sphere" size="0.1" mass="{M}" contype="0" conaffinity="0"/>
    </body></worldbody></mujoco>"""


def _step(scheme, q0, v0, limits=True, solver="lcp"):
    model = read_mjcf_model(_slide())
    cons = [JointLimitConstraint(model.tree)] if limits else []
    plant = TimeSteppingRigidBodySystem(model.tree, H, constraints=cons, contact_solver=solver,
                                        damping_scheme=scheme)
    ctx = plant.create_default_context()
    plant.set_positions(ctx, [q0])
    plant.set_velocities(ctx, [v0])
    step = plant.get_output_port("step").eval(ctx)
    plant.advance(ctx, 1)
    return plant.get_positions(ctx)[0], plant.get_velocities(ctx)[0], step


# ---------------------------------------------------------------- one step by hand
@pytest.mark.parametrize("solver", ["lcp", "auto"])
def test_hard_limit_step_by_hand(solver):
    # at the limit (phi = 0, bias 0) moving down at v0: Hm = M + armature; the pivoting step
    # and the compiled step (the kernel's euler_damping split) alike
    v0, Hm = -0.4, M + ARM
    # implicit: the limit holds v_n = 0; (Hm + h B)(0 - v0) = h (-M g - B v0) + p
    q, v, step = _step("implicit", 0.0, v0, solver=solver)
    assert step.status.method == ("lcp" if solver == "lcp" else "compiled_pgs")
    assert abs(v) < 1e-12 and abs(q) < 1e-14
    p = (Hm + H * B) * (-v0) - H * (-M * G - B * v0)
    np.testing.assert_allclose(step.tau_constraint, [p / H], rtol=1e-12)
    # MuJoCo's Euler: the limit holds v_M = 0 with Hm (v_M - v0) = h (-M g - B v0) + p, then
    # v_n = v0 + Hm (v_M - v0) / (Hm + h B) = h B v0 / (Hm + h B): the damped joint keeps moving
    q, v, step = _step("mujoco_euler", 0.0, v0, solver=solver)
    assert step.status.method == ("lcp" if solver == "lcp" else "compiled_pgs")
    vn = H * B * v0 / (Hm + H * B)
    np.testing.assert_allclose([v, q], [vn, H * vn], rtol=1e-12)
    p = Hm * (-v0) - H * (-M * G - B * v0)
    np.testing.assert_allclose(step.tau_constraint, [p / H], rtol=1e-12)


@pytest.mark.parametrize("limits", [True, False])
def test_free_step_is_the_same_in_both_schemes(limits):
    # away from the limit (or without one): v_n = v0 + h (-M g - B v0) / (Hm + h B)
    v0, Hm = 0.7, M + ARM
    vn = v0 + H * (-M * G - B * v0) / (Hm + H * B)
    for scheme in ("implicit", "mujoco_euler"):
        q, v, _ = _step(scheme, 0.5, v0, limits)
        np.testing.assert_allclose([v, q], [vn, 0.5 + H * vn], rtol=1e-13)


# ---------------------------------------------------------------- against MuJoCo
PENDULUM = """<mujoco><option timestep="0.002" integrator="Euler"/><worldbody>
<body pos="0 0 1"><joint name="a" type="hinge" axis="0 1 0" range="-40 25" damping="0.8"
    armature="0.05"/>
  <geom type="capsule" fromto="0 0 0 0.4 0 0" size="0.04" contype="0" conaffinity="0"/>
  <body pos="0.4 0 0"><joint name="b" type="hinge" axis="0 1 0" range="-30 30" damping="0.3"
      armature="0.02"/>
  <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03" contype="0" conaffinity="0"/></body>
</body></worldbody></mujoco>"""


def _pendulum(scheme, steps):
    model = read_mjcf_model(PENDULUM)
    plant = TimeSteppingRigidBodySystem(model.tree, model.options.timestep, contact_solver="lcp",
                                        constraints=[mjcf_joint_limits(model)],
                                        damping_scheme=scheme)
    ctx = plant.create_default_context()
    plant.set_positions(ctx, model.qpos0)
    out = []
    for _ in range(steps):
        plant.advance(ctx, 1)
        out.append(np.r_[plant.get_positions(ctx), plant.get_velocities(ctx)])
    return np.array(out)


def test_damped_double_pendulum_on_soft_limits_equals_mujoco_step_by_step():
    mujoco = pytest.importorskip("mujoco")
    m = mujoco.MjModel.from_xml_string(PENDULUM)
    d = mujoco.MjData(m)
    steps = 400                        # both links reach their upper limits and come to rest
    ref = []
    for _ in range(steps):
        mujoco.mj_step(m, d)
        ref.append(np.r_[d.qpos, d.qvel])
    ref = np.array(ref)
    assert np.all(ref[-1, :2] > np.radians([25.0, 30.0]))        # resting past both limits
    assert read_mjcf_model(PENDULUM).damping_scheme == "mujoco_euler"
    np.testing.assert_allclose(_pendulum("mujoco_euler", steps), ref, rtol=0, atol=1e-9)
    # the implicit scheme (damping inside the constraint solve) is a different trajectory
    assert np.abs(_pendulum("implicit", steps) - ref).max() > 1e-3


# ---------------------------------------------------------------- choice and refusals
def test_mjcf_model_selects_the_scheme_of_its_integrator():
    assert read_mjcf_model(_slide()).damping_scheme == "mujoco_euler"
    rk4 = _slide().replace('integrator="Euler"', 'integrator="RK4"')
    assert read_mjcf_model(rk4).damping_scheme == "implicit"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        explicit = read_mjcf_model(_slide().replace(
            f'{H}" integrator="Euler" />', f'{H}" integrator="Euler"><flag eulerdamp="disable"/>'
            '</option><option/>'))
    assert explicit.options.disabled == ("eulerdamp",)
    assert explicit.damping_scheme == "implicit"


def test_bad_scheme_is_named():
    model = read_mjcf_model(_slide())
    with pytest.raises(ValueError, match="damping_scheme must be 'implicit' or 'mujoco_euler'"):
        TimeSteppingRigidBodySystem(model.tree, H, damping_scheme="explicit")


def test_compiled_step_takes_the_euler_split_as_the_pivoting_step():
    # the double pendulum on hard limits (the plant's ERP/CFM, no MuJoCo softening): the
    # compiled step (the kernel's euler_damping) equals the pivoting step within 1e-7 at
    # every step of 400, both schemes; the two schemes differ
    model = read_mjcf_model(PENDULUM)
    runs = {}
    for scheme in ("mujoco_euler", "implicit"):
        for solver in ("auto", "lcp"):
            plant = TimeSteppingRigidBodySystem(
                model.tree, model.options.timestep, contact_solver=solver,
                constraints=[mjcf_joint_limits(model, softening=None)], damping_scheme=scheme)
            assert plant.step_method == ("lcp" if solver == "lcp" else "compiled_pgs"), \
                plant.step_method_reason
            ctx = plant.create_default_context()
            plant.set_positions(ctx, model.qpos0)
            out, methods = [], set()
            for _ in range(400):
                plant.advance(ctx, 1)
                out.append(np.r_[plant.get_positions(ctx), plant.get_velocities(ctx)])
                methods.add(plant.get_output_port("step").eval(ctx).status.method)
            assert methods == {plant.step_method}
            runs[scheme, solver] = np.array(out)
        np.testing.assert_allclose(runs[scheme, "auto"], runs[scheme, "lcp"], rtol=0, atol=1e-7)
    assert np.all(runs["mujoco_euler", "auto"][-1, :2] > np.radians([24.0, 29.0]))   # on the stops
    assert np.abs(runs["mujoco_euler", "auto"] - runs["implicit", "auto"]).max() > 1e-3


def test_numpy_twin_takes_the_euler_split_as_the_c_kernel(monkeypatch):
    model = read_mjcf_model(PENDULUM)

    def run():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            plant = TimeSteppingRigidBodySystem(
                model.tree, model.options.timestep, damping_scheme="mujoco_euler",
                constraints=[mjcf_joint_limits(model, softening=None)])
        ctx = plant.create_default_context()
        plant.set_positions(ctx, model.qpos0)
        out = []
        for _ in range(150):
            plant.advance(ctx, 1)
            out.append(np.r_[plant.get_positions(ctx), plant.get_velocities(ctx)])
        return plant.step_method, np.array(out)
    m1, c = run()
    without_compiler(monkeypatch)
    m2, twin = run()
    assert (m1, m2) == ("compiled_pgs", "numpy_pgs")
    np.testing.assert_allclose(twin, c, rtol=0, atol=1e-9)
