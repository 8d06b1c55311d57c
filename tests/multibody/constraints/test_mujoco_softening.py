"""MuJoCo softening (solref/solimp) of joint limits and contacts: the impedance, the resting
violation in closed form, and agreement with MuJoCo (Euler integrator) where it is installed."""
import numpy as np
import pytest
from scipy.optimize import brentq

from multibody.constraints import (DistanceConstraint, JointLimitConstraint, MuJoCoSoftening,
                                   PointContactConstraint, mujoco_invweights)
from multibody.constraints.mujoco_softening import (DEFAULT_SOLIMP, DEFAULT_SOLREF, impedance,
                                                    mix_solimp, mix_solref, reference_gains,
                                                    soft_rows)
from multibody.parsing import read_mjcf_model
from multibody.plants import TimeSteppingRigidBodySystem

H = 0.002
G = 9.81


def _slide(damping=0.0, armature=0.2, mass=2.0):
    # the sphere is off the joint axis so that MuJoCo's body is not "simple" (its
    # dof_invweight0 is then (M^-1)_jj with the armature, as ours)
    return f"""<mujoco><option timestep="{H}" integrator="Euler"/><worldbody>
    <body pos="0 0 1"><joint name="s" type="slide" axis="0 0 1" range="-0.5 0.5"
      damping="{damping}" armature="{armature}"/>
    <geom type="sphere" size="0.1" pos="0.3 0 0" mass="{mass}" contype="0" conaffinity="0"/>
    </body></worldbody></mujoco>"""


def _hinge():
    return f"""<mujoco><option timestep="{H}" integrator="Euler"/><worldbody>
    <body pos="0 0 1"><joint name="h" type="hinge" axis="0 1 0" range="-20 10" armature="0.05"/>
    <geom type="capsule" fromto="0 0 0 0.5 0 0.1" size="0.05" contype="0" conaffinity="0"/>
    <body pos="0.5 0 0.1"><joint name="h2" type="hinge" axis="0 1 0" range="-5 5"/>
    <geom type="sphere" size="0.05" pos="0.2 0 0" contype="0" conaffinity="0"/></body>
    </body></worldbody></mujoco>"""


def _sphere(cone="pyramidal", mu=0.5, impratio=1.0):
    return f"""<mujoco><option timestep="{H}" integrator="Euler" cone="{cone}" impratio="{impratio}"/>
    <worldbody><geom name="floor" type="plane" size="5 5 .1" friction="{mu}"/>
    <body name="ball" pos="0 0 0.1"><freejoint/>
    <geom name="ball" type="sphere" size="0.1" mass="2" friction="{mu}"/></body>
    </worldbody></mujoco>"""


def _ours(xml, block, steps):
    model = read_mjcf_model(xml)
    tree = model.tree
    plant = TimeSteppingRigidBodySystem(tree, H, constraints=[block(tree, model)],
                                        contact_solver="lcp")
    ctx = plant.create_default_context()
    plant.set_positions(ctx, model.qpos0)
    plant.advance(ctx, steps)
    return plant, ctx, model


def _mujoco(xml, steps):
    mujoco = pytest.importorskip("mujoco")
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    for _ in range(steps):
        mujoco.mj_step(m, d)
    mujoco.mj_forward(m, d)
    return m, d


# ---------------------------------------------------------------- formulas
def test_impedance_sigmoid_values():
    s = (0.8, 0.95, 0.01, 0.3, 3.0)
    r = np.array([0.0, -0.003, 0.003, -0.005, -0.01, -1.0])
    d = impedance(r, s)
    x = np.abs(r) / 0.01
    y = np.where(x <= 0.3, x ** 3 / 0.3 ** 2, 1 - (1 - np.minimum(x, 1)) ** 3 / 0.7 ** 2)
    np.testing.assert_allclose(d, 0.8 + y * 0.15, rtol=1e-14)
    assert d[0] == 0.8 and d[-1] == 0.95 and d[1] == d[2]          # symmetric in r
    assert impedance(-0.3, (0.9, 0.9, 0.01, 0.5, 2))[0] == 0.9     # flat
    np.testing.assert_allclose(impedance(-0.004, (0.5, 0.9, 0.01, 0.5, 1)), 0.66)   # linear


def test_reference_gains_both_forms_and_refsafe():
    k, b = reference_gains((0.02, 1.0), DEFAULT_SOLIMP, 1e-3)
    np.testing.assert_allclose([k[0], b[0]], [1 / (0.95 ** 2 * 0.02 ** 2), 2 / (0.95 * 0.02)])
    k, b = reference_gains((0.02, 0.5), DEFAULT_SOLIMP, 0.02)       # timeconst raised to 2 h
    np.testing.assert_allclose([k[0], b[0]], [1 / (0.95 ** 2 * 0.04 ** 2 * 0.25), 2 / (0.95 * 0.04)])
    k, b = reference_gains((-1000.0, -30.0), DEFAULT_SOLIMP, 0.02)
    np.testing.assert_allclose([k[0], b[0]], [1000 / 0.95 ** 2, 30 / 0.95])


def test_soft_rows_are_mujocos_row_in_velocity_form():
    # w = J v' + bias + cfm/h p with p = h f equals h (J a + R f - a_ref), v' = v + h a
    r, vel, A, h = np.array([-2e-3]), np.array([-0.3]), np.array([0.7]), 1e-3
    cfm, bias = soft_rows(r, vel, A, DEFAULT_SOLREF, DEFAULT_SOLIMP, h)
    d = impedance(r, DEFAULT_SOLIMP)
    k, b = reference_gains(DEFAULT_SOLREF, DEFAULT_SOLIMP, h)
    R, aref = (1 - d) / d * A, -b * vel - k * d * r
    a, f = 1.7, 4.0
    w = (vel + h * a) + bias + cfm / h * (h * f)
    np.testing.assert_allclose(w, h * (a + R * f - aref), rtol=1e-12)


def test_mixing_of_geometry_values():
    np.testing.assert_allclose(mix_solref(np.array([0.02, 1]), np.array([0.04, 0.5]), 1, 3),
                               [0.035, 0.625])
    np.testing.assert_allclose(mix_solref(np.array([-100, -3]), np.array([0.04, 0.5])), [-100, -3])
    np.testing.assert_allclose(mix_solimp(np.zeros(5), np.ones(5), 0, 0), 0.5 * np.ones(5))


# ---------------------------------------------------------------- closed form
@pytest.mark.parametrize("solref", [(0.02, 1.0), (0.05, 0.7), (-2000.0, -60.0)])
def test_slide_limit_rests_at_closed_form_violation(solref):
    d = 0.93                                     # dmin = dmax: a constant impedance
    soft = MuJoCoSoftening(solref=solref, solimp=(d, d, 0.001, 0.5, 2))
    plant, ctx, _ = _ours(_slide(), lambda t, m: JointLimitConstraint(t, mujoco=soft), 3000)
    r = plant.get_positions(ctx)[0] + 0.5
    A, f = 1 / 2.2, 2.0 * G                      # Delassus diagonal (no damping), force m g
    k = (1 / (d * d * solref[0] ** 2 * solref[1] ** 2) if solref[0] > 0
         else -solref[0] / (d * d))
    # at rest R f = -k d r, R = (1 - d)/d A
    np.testing.assert_allclose(r, -(1 - d) / d * A * f / (k * d), rtol=1e-9)
    assert abs(plant.get_velocities(ctx)[0]) < 1e-10


def test_slide_limit_default_solimp_rests_at_static_root():
    soft = MuJoCoSoftening()
    plant, ctx, _ = _ours(_slide(), lambda t, m: JointLimitConstraint(t, mujoco=soft), 3000)
    r = plant.get_positions(ctx)[0] + 0.5
    k = reference_gains(DEFAULT_SOLREF, DEFAULT_SOLIMP, H)[0][0]

    def static(x):
        d = impedance(x, DEFAULT_SOLIMP)[0]
        return (1 - d) / d / 2.2 * 2.0 * G + k * d * x
    np.testing.assert_allclose(r, brentq(static, -0.01, -1e-12, xtol=1e-16), rtol=1e-9)


# ---------------------------------------------------------------- against MuJoCo
def test_slide_limit_agrees_with_mujoco():
    m, d = _mujoco(_slide(), 3000)
    plant, ctx, _ = _ours(_slide(), lambda t, mdl: JointLimitConstraint(t, mujoco=MuJoCoSoftening()),
                          3000)
    r_mj, r = d.qpos[0] + 0.5, plant.get_positions(ctx)[0] + 0.5
    assert r_mj < -1e-4
    np.testing.assert_allclose(r, r_mj, rtol=1e-6)


def test_two_hinge_limits_agree_with_mujoco_with_its_invweights():
    m, d = _mujoco(_hinge(), 4000)
    model = read_mjcf_model(_hinge())
    jw, _ = mujoco_invweights(model.tree, model.qpos0)
    np.testing.assert_allclose([jw["h"], jw["h2"]], m.dof_invweight0, rtol=1e-10)
    soft = MuJoCoSoftening(invweight=jw)
    plant, ctx, _ = _ours(_hinge(), lambda t, mdl: JointLimitConstraint(t, mujoco=soft), 4000)
    q = plant.get_positions(ctx)
    upper = np.radians([10.0, 5.0])
    assert np.all(d.qpos - upper > 1e-5)                # both rest past their upper limits
    np.testing.assert_allclose(q - upper, d.qpos - upper, rtol=1e-6)


@pytest.mark.parametrize("cone,mu,impratio", [("pyramidal", 0.5, 1.0), ("pyramidal", 1.0, 2.0),
                                              ("elliptic", 0.7, 1.0)])
def test_sphere_on_plane_penetration_agrees_with_mujoco(cone, mu, impratio):
    xml = _sphere(cone, mu, impratio)
    m, d = _mujoco(xml, 3000)
    model = read_mjcf_model(xml)
    _, bw = mujoco_invweights(model.tree, model.qpos0)
    np.testing.assert_allclose(bw["ball"], m.body_invweight0[1, 0], rtol=1e-10)
    for invweight in (None, bw):               # the row's Delassus diagonal is 1/m here too
        soft = MuJoCoSoftening(cone=cone, impratio=impratio, invweight=invweight)
        plant, ctx, _ = _ours(xml, lambda t, mdl: PointContactConstraint(t, mu, mujoco=soft),
                              3000)
        z_mj, z = d.qpos[2] - 0.1, plant.get_positions(ctx)[6] - 0.1
        assert z_mj < -1e-5
        np.testing.assert_allclose(z, z_mj, rtol=1e-6)


# ---------------------------------------------------------------- refusals
def test_refusals_name_the_culprit():
    model = read_mjcf_model(_hinge())
    tree = model.tree
    with pytest.raises(ValueError, match="solref"):
        MuJoCoSoftening(solref=(0.02,))
    with pytest.raises(ValueError, match="cone"):
        MuJoCoSoftening(cone="round")
    with pytest.raises(ValueError, match="no MuJoCo softening"):
        DistanceConstraint(tree, "world", tree.bodies[1].name, 1.0, mujoco=MuJoCoSoftening())
    with pytest.raises(ValueError, match="joint 'h2'"):
        JointLimitConstraint(tree, mujoco=MuJoCoSoftening(invweight={"h": 1.0}), name="lim")
    with pytest.raises(ValueError, match="not both"):
        JointLimitConstraint(tree, mujoco=MuJoCoSoftening(), kp=1.0, kd=1.0)
    # a sphere on a plane is the compiled step's scene, but not with MuJoCo softening
    ball = read_mjcf_model(_sphere()).tree
    contact = PointContactConstraint(ball, 0.5, mujoco=MuJoCoSoftening(), name="soft")
    with pytest.warns(Warning, match="MuJoCo softening"):
        plant = TimeSteppingRigidBodySystem(ball, H, constraints=[contact])
    assert plant.step_method == "lcp" and "'soft'" in plant.step_method_reason


# ---------------------------------------------------------------- MuJoCo's two-stage solve
def test_noslip_option_checks_and_edge_factor():
    for bad in (dict(cone="elliptic"), dict(condim=4), dict(condim=6)):
        with pytest.raises(ValueError, match="noslip needs the pyramidal cone"):
            MuJoCoSoftening(noslip=True, **bad)
    assert not MuJoCoSoftening().noslip                    # default: one solve, as before
    mj = MuJoCoSoftening(noslip=True, impratio=2.0)
    # MuJoCo: edge diagonal (1 + mu^2) Ahat_n, R_py = 2 (mu^2 / impratio) R_edge
    assert mj.edge_factor(0.5) == pytest.approx(2 * 0.25 * 1.25 / 2.0, rel=1e-15)


def test_mujoco_frame_rule():
    from multibody.constraints.mujoco_softening import mujoco_frame
    n = np.array([[0, 0, 1.0], [0, 1.0, 0], [0.6, 0.0, 0.8], [0.0, 0.6, 0.8]])
    t1, t2 = mujoco_frame(n)
    # the y axis projected on the tangent plane while |n_y| < 0.5, else the z axis
    np.testing.assert_allclose(t1, [[0, 1, 0], [0, 0, 1], [0, 1, 0], [0, -0.8, 0.6]],
                               atol=1e-15)
    np.testing.assert_allclose(t2, np.cross(n, t1), atol=1e-15)
    np.testing.assert_allclose(t2[0], [-1, 0, 0], atol=1e-15)
    # a collider's tangent (MuJoCo's plane-capsule: the capsule axis) is projected instead;
    # a hint shorter than 0.5 is ignored, one along the normal gives (1, 0, 0)
    hint = np.array([[1.0, 1.0, 1.0], [0.3, 0.0, 0.0], [0.6, 0.0, 0.8], [0, 0, 0]])
    t1, t2 = mujoco_frame(n, hint)
    np.testing.assert_allclose(t1[0], [1 / np.sqrt(2), 1 / np.sqrt(2), 0], atol=1e-15)
    np.testing.assert_allclose(t1[1], [0, 0, 1], atol=1e-15)
    np.testing.assert_allclose(t1[2], [1, 0, 0], atol=1e-15)
    np.testing.assert_allclose(t1[3], [0, -0.8, 0.6], atol=1e-15)


def _ball_xml(option):
    return f"""<mujoco><option timestep="{H}" {option}/><worldbody>
    <geom name="floor" type="plane" size="1 1 0.1"/>
    <body pos="0 0 0.2"><freejoint/><geom name="b" type="sphere" size="0.1"/></body>
    </worldbody></mujoco>"""


def test_mjcf_noslip_from_the_file():
    from multibody.parsing import MJCFWarning, mjcf_contact
    assert not mjcf_contact(read_mjcf_model(_ball_xml(""))).mujoco.noslip
    on = read_mjcf_model(_ball_xml('noslip_iterations="20"'))
    assert mjcf_contact(on).mujoco.noslip
    assert not mjcf_contact(on, noslip=False).mujoco.noslip
    assert mjcf_contact(read_mjcf_model(_ball_xml("")), noslip=True).mujoco.noslip
    elliptic = read_mjcf_model(_ball_xml('noslip_iterations="20" cone="elliptic"'))
    with pytest.warns(MJCFWarning, match="noslip_iterations with cone='elliptic'"):
        assert not mjcf_contact(elliptic).mujoco.noslip
    with pytest.raises(ValueError, match="noslip needs the pyramidal cone"):
        mjcf_contact(elliptic, noslip=True)


def test_noslip_edge_rows_equal_mujoco():
    """One step of a sphere resting 1 mm deep on the floor: our four edge rows (cfm / h, the
    reference acceleration) equal MuJoCo's ``efc_R`` and ``efc_aref``."""
    mujoco = pytest.importorskip("mujoco")
    xml = _ball_xml('noslip_iterations="20" impratio="3"').replace('pos="0 0 0.2"',
                                                                   'pos="0 0 0.099"')
    from multibody.parsing import mjcf_contact
    model = read_mjcf_model(xml)
    contact = mjcf_contact(model)
    plant = TimeSteppingRigidBodySystem(model.tree, H, constraints=[contact],
                                        contact_solver="lcp")
    ctx = plant.create_default_context()
    plant.set_positions(ctx, model.qpos0)
    plant.set_velocities(ctx, [0.3, -0.2, 0.1, 0.05, 0.02, -0.04])
    rows = plant.get_output_port("step").eval(ctx).rows[0]
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    d.qvel[:] = [0.05, 0.02, -0.04, 0.3, -0.2, 0.1]        # (v world, w body) at q = qpos0
    mujoco.mj_forward(m, d)
    assert d.nefc == rows.m == 4
    np.testing.assert_allclose(rows.cfm / H, d.efc_R, rtol=1e-9)
    np.testing.assert_allclose(-(rows.bias + rows.J @ plant.get_velocities(ctx)) / H,
                               d.efc_aref, rtol=1e-9)
