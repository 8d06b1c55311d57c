"""The tree's topology is frozen by finalize() or the first algorithm call."""
import numpy as np
import pytest

from multibody import Revolute, RigidBodyTree, TreeError
from multibody.geometry import Sphere


def _pendulum():
    t = RigidBodyTree("p")
    t.add_body("link", 1.0, (0, 0, -0.5), np.eye(3) * 0.01)
    t.add_joint(Revolute("j", "world", "link", axis=(0, 1, 0)))
    return t


def test_building_is_open_until_the_first_algorithm_call():
    t = _pendulum()
    assert not t.is_finalized
    t.add_body("tip", 0.1, inertia=np.eye(3) * 1e-4)
    t.add_joint(Revolute("j2", "link", "tip", axis=(0, 1, 0)))
    H = t.mass_matrix(np.zeros(2))          # first algorithm call freezes the topology
    assert t.is_finalized and H.shape == (2, 2)


@pytest.mark.parametrize("freeze", ["finalize", "nq", "mass_matrix"])
def test_adding_bodies_or_joints_after_freezing_raises_a_named_error(freeze):
    t = _pendulum()
    if freeze == "finalize":
        t.finalize()
    elif freeze == "nq":
        assert t.nq == 1
    else:
        t.mass_matrix([0.3])
    with pytest.raises(TreeError, match=r"tree 'p': add_body\('extra'\) after the topology was frozen"):
        t.add_body("extra", 1.0, inertia=np.eye(3))
    with pytest.raises(TreeError, match=r"add_joint\('j3'\)"):
        t.add_joint(Revolute("j3", "link", "world"))
    # frames and geometry do not change q or v: still allowed, results unchanged
    t.add_frame("tip_frame", "link")
    t.add_collision_geometry("link", Sphere(0.05))
    assert t.nq == 1 and np.allclose(t.mass_matrix([0.3]), [[0.01 + 0.25]])
