"""The MJCF reader's soft-constraint data (geom solref/solimp/solmix, joint solreflimit and
solimplimit, option o_solref/o_solimp with the override flag, impratio, cone) reaching the
constraint blocks, and a soft resting contact with margins agreeing with MuJoCo."""
import numpy as np
import pytest

from multibody.parsing import (MJCFError, mjcf_contact, mjcf_joint_limits, mjcf_softening,
                               read_mjcf_model)
from multibody.plants import TimeSteppingRigidBodySystem

XML = """<mujoco><option timestep="0.002" integrator="Euler" impratio="2" cone="elliptic"
  {option}/>
<default><geom solref="0.03 0.8"/><default class="hard"><geom solimp="0.95 0.99 0.002"/>
  <joint solreflimit="0.01 1.2" solimplimit="0.8 0.9 0.01 0.4 3"/></default></default>
<worldbody><geom name="floor" type="plane" size="5 5 .1" margin="0.004" solmix="3"/>
<body name="ball" pos="0 0 0.2"><freejoint/>
  <geom name="ball" class="hard" type="sphere" size="0.1" mass="2" margin="0.006" condim="3"/>
  <body name="arm"><joint name="j" class="hard" axis="0 1 0" range="-10 10"/>
    <joint name="k" axis="1 0 0" range="-5 5"/>
    <geom type="capsule" fromto="-0.15 0 0 0.15 0 0" size="0.02" contype="0" conaffinity="0"/>
  </body></body>
</worldbody></mujoco>"""


def test_solver_parameters_reach_the_blocks():
    model = read_mjcf_model(XML.format(option=""))
    soft = mjcf_softening(model, "contact")
    np.testing.assert_allclose(soft.element_solref["floor"], [0.03, 0.8])     # default class
    np.testing.assert_allclose(soft.element_solref["ball"], [0.03, 0.8])
    np.testing.assert_allclose(soft.element_solimp["ball"], [0.95, 0.99, 0.002, 0.5, 2])
    assert "floor" not in soft.element_solimp and soft.element_solmix["floor"] == 3.0
    assert soft.cone == "elliptic" and soft.impratio == 2.0 and soft.condim == 3
    lim = mjcf_joint_limits(model)
    np.testing.assert_allclose(lim.mujoco.element_solref["j"], [0.01, 1.2])
    np.testing.assert_allclose(lim.mujoco.element_solimp["j"], [0.8, 0.9, 0.01, 0.4, 3])
    assert "k" not in lim.mujoco.element_solref and set(lim.joints) == {"j", "k"}
    # MuJoCo's body_invweight0 of the ball (translational) for this model: 0.4148514426821282
    assert mjcf_contact(model).mujoco.invweight["ball"] == pytest.approx(0.4148514426821282,
                                                                       rel=1e-9)
    assert mjcf_contact(model, softening=None).mujoco is None


def test_override_flag_gives_every_contact_the_option_values():
    xml = XML.format(option='o_solref="0.05 1.5" o_solimp="0.7 0.8 0.003 0.5 2"><flag '
                            'override="enable"/></option><option')
    soft = mjcf_softening(read_mjcf_model(xml), "contact")
    assert soft.solref == (0.05, 1.5) and not soft.element_solref
    np.testing.assert_allclose(soft.solimp, [0.7, 0.8, 0.003, 0.5, 2])


def test_bad_solver_values_are_named_errors():
    with pytest.raises(MJCFError, match="solimp"):
        read_mjcf_model(XML.format(option="").replace('solimp="0.95 0.99 0.002"',
                                                      'solimp="0.95 0.99 -1"'))
    with pytest.raises(MJCFError, match="condim"):
        read_mjcf_model(XML.format(option="").replace('condim="3"', 'condim="2"'))


def test_soft_contact_with_margins_rests_as_in_mujoco():
    mujoco = pytest.importorskip("mujoco")
    xml = XML.format(option="")      # the arm is balanced: no friction at rest
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    for _ in range(2500):
        mujoco.mj_step(m, d)
    mujoco.mj_forward(m, d)
    assert d.ncon == 1 and d.contact[0].includemargin == pytest.approx(0.01)  # margins add
    model = read_mjcf_model(xml)
    plant = TimeSteppingRigidBodySystem(model.tree, 0.002, contact_solver="lcp", constraints=[
        mjcf_contact(model), mjcf_joint_limits(model)])
    ctx = plant.create_default_context()
    plant.set_positions(ctx, model.qpos0)
    plant.advance(ctx, 2500)
    q = plant.get_positions(ctx)
    # the ball rests at the summed margin minus a soft penetration; compare the penetration
    r_mj, r = d.qpos[2] - 0.1 - 0.01, q[6] - 0.1 - 0.01
    assert r_mj < -1e-5
    np.testing.assert_allclose(r, r_mj, rtol=1e-6)
