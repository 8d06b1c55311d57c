"""Joint powers and work: analytic integrals, and the work-energy theorem on a pendulum."""
import numpy as np
import pytest

from multibody import Free, Revolute, RigidBodyTree
from multibody.motion import TrajectoryError, joint_powers, joint_work


def _pendulum():
    t = RigidBodyTree("pend")
    t.add_body("link", 2.0, (0, 0, -0.5), np.diag([0.05, 0.05, 0.01]))
    t.add_joint(Revolute("hinge", "world", "link", axis=(0, 1, 0)))
    return t.finalize()


def test_power_integrals_are_analytic():
    tree = _pendulum()
    t = np.linspace(0.0, np.pi, 20001)
    tau = np.sin(t)[:, None]
    v = np.cos(t)[:, None]                     # P = sin cos = sin(2t)/2
    w = joint_work(tree, t, tau, v)
    assert w.joints == ["hinge"]
    assert w.positive[0] == pytest.approx(0.5, abs=1e-8)   # int_0^pi/2 sin(2t)/2
    assert w.negative[0] == pytest.approx(-0.5, abs=1e-8)
    assert w.total_absolute == pytest.approx(1.0, abs=1e-8)


def test_work_of_the_joint_torque_equals_the_change_of_energy():
    """Pendulum driven by tau(t): int tau qdot dt = Delta(kinetic + potential energy)."""
    tree = _pendulum()
    t = np.linspace(0.0, 2.0, 4001)
    q = 0.3 * np.sin(3 * t) + 0.5 * t ** 2
    v = 0.9 * np.cos(3 * t) + t
    a = -2.7 * np.sin(3 * t) + 1.0
    tau = np.array([tree.inverse_dynamics([qi], [vi], [ai]) for qi, vi, ai in zip(q, v, a)])
    names, P = joint_powers(tree, tau, v[:, None])
    W = np.trapezoid(P[:, 0], t)
    E = [tree.kinetic_energy([qi], [vi]) + tree.potential_energy([qi]) for qi, vi in
         zip(q[[0, -1]], v[[0, -1]])]
    assert W == pytest.approx(E[1] - E[0], rel=1e-6)
    w = joint_work(tree, t, tau, v[:, None])
    assert w.positive[0] + w.negative[0] == pytest.approx(W, rel=1e-6)


def test_the_free_root_is_left_out_and_bad_input_is_named():
    t = RigidBodyTree("float")
    t.add_body("a", 1.0, inertia=np.eye(3) * 0.1)
    t.add_body("b", 1.0, inertia=np.eye(3) * 0.1)
    t.add_joint(Free("root", "world", "a"))
    t.add_joint(Revolute("j", "a", "b"))
    t.finalize()
    names, P = joint_powers(t, np.ones((3, 7)), np.ones((3, 7)))
    assert names == ["j"] and P.shape == (3, 1)
    with pytest.raises(TrajectoryError, match=r"must both be \(T, nv = 7\)"):
        joint_powers(t, np.ones((3, 6)), np.ones((3, 6)))
    with pytest.raises(TrajectoryError, match="no joint named 'knee'"):
        joint_powers(t, np.ones((3, 7)), np.ones((3, 7)), joints=["knee"])
    with pytest.raises(TrajectoryError, match="increasing times"):
        joint_work(t, [0, 2, 1], np.ones((3, 7)), np.ones((3, 7)))


def test_non_finite_samples_are_named():
    tree = _pendulum()
    tau = np.ones((5, 1))
    tau[3] = np.nan
    with pytest.raises(TrajectoryError, match="not finite at sample 3"):
        joint_work(tree, np.arange(5.0), tau, np.ones((5, 1)))
