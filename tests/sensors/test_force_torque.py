"""JointForceTorqueSensor: the RNEA joint wrench; its projection is inverse dynamics' joint
torque; at rest it carries the subtree's weight."""
import numpy as np
import pytest

from multibody import models
from multibody.parsing import parse_urdf
from multibody.plants import RigidBodySystem
from sensors import JointForceTorqueSensor


def _arm():
    return parse_urdf(models.model_path("arm7"))


def _subtree(tree, joint):
    child = tree.get_joint(joint).child
    names, frontier = {child}, [child]
    while frontier:
        b = frontier.pop()
        for j in tree.joints:
            if j.parent == b:
                names.add(j.child)
                frontier.append(j.child)
    return [b for b in tree.bodies if b.name in names]


@pytest.mark.parametrize("k", [1, 3, 5])
def test_at_rest_the_sensor_carries_the_subtree_weight(k):
    tree = _arm()
    joint = [j for j in tree.joints if j.nv][k]
    q = tree.random_configuration(np.random.default_rng(k))
    w = tree.joint_wrench(joint.name, q, np.zeros(7), np.zeros(7))
    subtree = _subtree(tree, joint.name)
    m = sum(b.mass for b in subtree)
    R = tree.body_pose(joint.child, q)[:3, :3]
    np.testing.assert_allclose(w[3:], R.T @ (-m * tree.gravity), atol=1e-9)
    # the torque about the joint origin balances the weights' moment
    p0 = tree.body_pose(joint.child, q)[:3, 3]
    moment = np.zeros(3)
    for b in subtree:
        T = tree.body_pose(b.name, q)
        c = T[:3, 3] + T[:3, :3] @ b.com
        moment += np.cross(c - p0, -b.mass * tree.gravity)
    np.testing.assert_allclose(w[:3], R.T @ moment, atol=1e-9)


def test_projection_on_the_joint_axis_is_inverse_dynamics_torque():
    tree = _arm()
    rng = np.random.default_rng(0)
    q, v, a = tree.random_configuration(rng), rng.normal(size=7), rng.normal(size=7)
    tau = tree.inverse_dynamics(q, v, a)
    for j in [j for j in tree.joints if j.nv]:
        S = np.asarray(j.motion_subspace(q[j.q_start:j.q_start + j.nq]), float)
        w = tree.joint_wrench(j.name, q, v, a)
        np.testing.assert_allclose(S.T @ w, tau[j.v_start:j.v_start + j.nv], atol=1e-9)


def test_the_sensor_block_inside_a_plant():
    tree = _arm()
    joint = [j for j in tree.joints if j.nv][2].name
    ft = JointForceTorqueSensor(tree, joint, name="ft")
    plant = RigidBodySystem(tree, sensors=[ft])
    ctx = plant.create_default_context()
    q = np.full(7, 0.3)
    plant.set_positions(ctx, q)
    vdot = plant.get_output_port("generalized_acceleration").eval(ctx)
    np.testing.assert_allclose(plant.get_output_port("ft").eval(ctx),
                               tree.joint_wrench(joint, q, np.zeros(7), vdot), atol=1e-12)
    with pytest.raises(ValueError, match="no joint named 'wrist'"):
        JointForceTorqueSensor(tree, "wrist")
