"""A singular mass matrix is a named error naming the joint, never ``[inf]`` or NaN."""
from __future__ import annotations

import warnings

import casadi as ca
import numpy as np
import pytest

from multibody import Prismatic, Revolute, RigidBodyTree
from multibody.errors import MultibodyError, SingularMassMatrixError


def _slider(mass: float) -> RigidBodyTree:
    tree = RigidBodyTree("slide")
    tree.add_body("pendulum", 1.0, com=(0, 0, -1), inertia=0.01 * np.eye(3))
    tree.add_joint(Revolute("hinge", "world", "pendulum", axis=(0, 1, 0)))
    tree.add_body("block", mass)
    tree.add_joint(Prismatic("rail", "pendulum", "block", axis=(1, 0, 0)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # finalize's "moves no mass" warning
        tree.finalize()
    return tree


@pytest.mark.parametrize("mass", [0.0, 1e-320, 1e-300])
def test_forward_dynamics_of_a_massless_slider_names_the_joint(mass):
    tree = _slider(mass)
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # no overflow warning on the way either
        with pytest.raises(SingularMassMatrixError, match=r"tree 'slide'.*\['rail'\]") as info:
            tree.forward_dynamics(np.zeros(2), np.zeros(2), np.ones(2))
    assert isinstance(info.value, MultibodyError) and "hinge" not in str(info.value)
    with pytest.raises(SingularMassMatrixError):
        tree.forward_dynamics(np.zeros((3, 2)), np.zeros((3, 2)), np.ones((3, 2)))


def test_finalize_warns_and_symbolic_forward_dynamics_still_builds():
    tree = RigidBodyTree("slide")
    tree.add_body("block", 0.0)
    tree.add_joint(Prismatic("rail", "world", "block", axis=(1, 0, 0)))
    with pytest.warns(RuntimeWarning, match=r"\['rail'\] move no mass"):
        tree.finalize()
    q = ca.SX.sym("q", 1)
    with np.errstate(divide="ignore"):     # the traced 1/D of the massless slider is inf
        assert isinstance(tree.forward_dynamics(q, q, q), (ca.SX, ca.MX))


def test_a_regular_tree_is_not_refused():
    """The same tree with a 1 kg block: forward dynamics inverts inverse dynamics."""
    tree = _slider(1.0)
    rng = np.random.default_rng(3)
    q, v, a = (rng.normal(size=2) for _ in range(3))
    tau = tree.inverse_dynamics(q, v, a)
    np.testing.assert_allclose(tree.forward_dynamics(q, v, tau), a, rtol=1e-10, atol=1e-10)
