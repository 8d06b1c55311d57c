"""MJCF actuators become blocks with MuJoCo's force exactly: motors, position and velocity
servos and general affine actuators, with gear, ctrlrange and forcerange clamps. Checked in
closed form, and against MuJoCo's ``qfrc_actuator`` where mujoco is installed."""
from __future__ import annotations

import numpy as np
import pytest

from actuators import AffineJointActuator, GeneralizedForceActuator
from multibody.parsing import mjcf_actuators, read_mjcf_model

XML = """<mujoco><worldbody>
  <body name="a"><joint name="hinge" axis="0 1 0"/><geom size="0.1" mass="1"/>
    <body name="b" pos="0.3 0 0"><joint name="slide" type="slide" axis="1 0 0"/>
      <geom size="0.05" mass="0.5"/></body></body>
</worldbody><actuator>
  <motor name="m" joint="hinge" gear="3" ctrlrange="-1 1" ctrllimited="true"/>
  <position name="p" joint="hinge" kp="20" kv="2" gear="2" ctrlrange="-0.5 0.5" ctrllimited="true"/>
  <velocity name="v" joint="slide" kv="4" forcerange="-1.5 1.5" forcelimited="true"/>
  <general name="g" joint="slide" gainprm="2" biastype="affine" biasprm="0.5 -3 -1"/>
</actuator></mujoco>"""


def _forces(blocks, tree, q, v, ctrl):
    tau = np.zeros(tree.nv)
    for blk, u in zip(blocks, ctrl):
        tau += np.asarray(blk.generalized_force(None, q, v, np.atleast_1d(u)), float).ravel()
    return tau


def test_every_actuator_kind_becomes_a_block_with_mujocos_force():
    model = read_mjcf_model(XML)
    blocks = mjcf_actuators(model)
    assert [b.name for b in blocks] == ["m", "p", "v", "g"]
    assert isinstance(blocks[0], GeneralizedForceActuator)
    assert all(isinstance(b, AffineJointActuator) for b in blocks[1:])
    q, v = np.array([0.2, -0.1]), np.array([0.7, 0.4])
    ctrl = [2.0, 0.9, 1.0, 0.25]      # the motor's and the servo's controls exceed ctrlrange
    hinge = 3 * 1.0 + 2 * (20 * 0.5 - 20 * 2 * 0.2 - 2 * 2 * 0.7)
    slide = float(np.clip(4 * 1.0 - 4 * 0.4, -1.5, 1.5)) + (2 * 0.25 + 0.5 - 3 * -0.1 - 0.4)
    np.testing.assert_allclose(_forces(blocks, model.tree, q, v, ctrl), [hinge, slide],
                               rtol=1e-14)


def test_forces_equal_mujoco_at_random_states():
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo is a [bench] extra")
    model = read_mjcf_model(XML)
    blocks = mjcf_actuators(model)
    m = mujoco.MjModel.from_xml_string(XML)
    d = mujoco.MjData(m)
    rng = np.random.default_rng(4)
    for _ in range(20):
        q, v, ctrl = rng.uniform(-1, 1, 2), rng.uniform(-2, 2, 2), rng.uniform(-2, 2, 4)
        d.qpos[:], d.qvel[:], d.ctrl[:] = q, v, ctrl
        mujoco.mj_forward(m, d)
        np.testing.assert_allclose(_forces(blocks, model.tree, q, v, ctrl), d.qfrc_actuator,
                                   rtol=1e-12, atol=1e-12)


def test_bad_parameters_name_the_block():
    model = read_mjcf_model(XML)
    with pytest.raises(ValueError, match="AffineJointActuator 'x': gear must be nonzero"):
        AffineJointActuator(model.tree, ["hinge"], 1.0, [0, 0, 0], gear=0.0, name="x")
    with pytest.raises(ValueError, match="ctrlrange rows must have lo <= hi"):
        AffineJointActuator(model.tree, ["hinge"], 1.0, [0, 0, 0], ctrlrange=[1, -1], name="x")
