"""Batched evaluation of the tree's algorithms: arrays with a leading batch axis ``(N, nq)``,
``(N, nv)`` give ``(N, nv)`` / ``(N, nv, nv)`` that equal a loop of single calls to 1e-12 on
the compiled path and on CasADi's VM, for a fixed-base arm and a floating humanoid, agree with
Pinocchio's ``aba``/``rnea``/``crba`` row by row, handle N = 1, a one-DOF tree and shared
(1-D) arguments, and refuse wrong shapes with ``InputSizeError`` naming the argument."""
import numpy as np
import pytest

import models as M
from multibody import RigidBodyTree, Revolute
from multibody.errors import InputSizeError
from _concurrency import mismatches_under_threads

TOL = 1e-12


def _batch(tree, n, seed=0):
    rng = np.random.default_rng(seed)
    states = [M.random_state(tree, rng) for _ in range(n)]
    return tuple(np.array([s[k] for s in states]) for k in range(3))


def _close(a, b, tol=TOL):
    scale = max(1.0, float(np.max(np.abs(b))))
    assert a.shape == b.shape
    assert float(np.max(np.abs(a - b))) <= tol * scale


@pytest.fixture(scope="module", params=["arm7-c", "humanoid30-c", "arm7-casadi"])
def tree(request):
    name, backend = request.param.split("-")
    return M.arm7(backend=backend) if name == "arm7" else M.humanoid(30, backend=backend)


def test_batched_equals_single_calls(tree):
    Q, V, A = _batch(tree, 9)
    n, nv = len(Q), tree.nv
    tau = tree.inverse_dynamics(Q, V, A)
    assert tau.shape == (n, nv)
    _close(tau, np.array([tree.inverse_dynamics(*x) for x in zip(Q, V, A)]))
    vdot = tree.forward_dynamics(Q, V, tau)
    assert vdot.shape == (n, nv)
    _close(vdot, np.array([tree.forward_dynamics(*x) for x in zip(Q, V, tau)]))
    H = tree.mass_matrix(Q)
    assert H.shape == (n, nv, nv)
    _close(H, np.array([tree.mass_matrix(q) for q in Q]))
    # ABA inverts RNEA and H vdot + C = tau across the whole batch (independent algorithms)
    _close(vdot, A, 1e-9)
    C = tree.bias_forces(Q, V)
    _close(np.einsum("nij,nj->ni", H, A) + C, tau, 1e-9)
    g = tree.gravity_forces(Q)
    _close(g, np.array([tree.gravity_forces(q) for q in Q]))
    T = tree.kinetic_energy(Q, V)
    assert T.shape == (n,)
    _close(T, 0.5 * np.einsum("ni,nij,nj->n", V, H, V), 1e-9)
    J = tree.jacobian(tree.bodies[-1].name, Q)
    assert J.shape == (n, 6, nv)
    _close(J, np.array([tree.jacobian(tree.bodies[-1].name, q) for q in Q]))


def test_batched_matches_pinocchio_rows():
    pin = pytest.importorskip("pinocchio", reason="Pinocchio (pin) is not installed")
    tree = M.humanoid(30, backend="c")
    P = M.to_pinocchio(tree)
    Q, V, A = _batch(tree, 6, seed=4)
    tau, H = tree.inverse_dynamics(Q, V, A), tree.mass_matrix(Q)
    for k in range(len(Q)):
        T, Td = P.T(Q[k], V[k])
        vp, ap = T @ V[k], T @ A[k] + Td @ V[k]
        taup = pin.rnea(P.model, P.data, P.q(Q[k]), vp, ap)
        _close(T.T @ taup, tau[k], 1e-9)
        Hp = pin.crba(P.model, P.data, P.q(Q[k]))
        Hp = np.triu(Hp) + np.triu(Hp, 1).T
        _close(T.T @ Hp @ T, H[k], 1e-9)


def test_single_row_batch_and_shared_arguments():
    tree = M.arm7(backend="c")
    Q, V, A = _batch(tree, 3, seed=1)
    one = tree.forward_dynamics(Q[:1], V[:1], A[:1])
    assert one.shape == (1, 7)
    _close(one[0], tree.forward_dynamics(Q[0], V[0], A[0]))
    assert tree.mass_matrix(Q[:1]).shape == (1, 7, 7)
    # a 1-D argument is shared by every row of the batch
    shared = tree.forward_dynamics(Q, V[0], A[0])
    _close(shared, np.array([tree.forward_dynamics(q, V[0], A[0]) for q in Q]))


def _one_dof():
    tree = RigidBodyTree("hinge1", backend="c")
    tree.add_body("link", mass=2.0, com=(0, 0, -0.4), inertia=np.eye(3) * 0.02)
    tree.add_joint(Revolute("hinge", "world", "link", axis=(0, 1, 0)))
    return tree


def test_one_dof_tree_batch_axis():
    tree = _one_dof()
    q = np.linspace(-1.0, 1.0, 5).reshape(5, 1)
    v = np.full((5, 1), 0.3)
    tau = np.zeros((5, 1))
    vdot = tree.forward_dynamics(q, v, tau)
    assert vdot.shape == (5, 1)
    assert tree.forward_dynamics(q[0], v[0], tau[0]).shape == (1,)
    # pendulum about y with COM at (0, 0, -l): I vdot = -m g l sin(q)
    m, l, g = 2.0, 0.4, 9.81
    inertia = 0.02 + m * l ** 2
    _close(vdot[:, 0], -m * g * l * np.sin(q[:, 0]) / inertia)
    H = tree.mass_matrix(q)
    assert H.shape == (5, 1, 1)
    _close(H[:, 0, 0], np.full(5, inertia))
    assert tree.mass_matrix(np.array([[0.3]])).shape == (1, 1, 1)
    assert tree.mass_matrix(np.array([0.3])).shape == (1, 1)


def test_wrong_shapes_are_named_errors():
    tree = M.arm7(backend="casadi")
    Q, V, A = _batch(tree, 4, seed=2)
    with pytest.raises(InputSizeError, match=r"v has shape \(4, 6\).*\(N, 7\).*nv = 7"):
        tree.forward_dynamics(Q, V[:, :6], A)
    with pytest.raises(InputSizeError, match="tau has 3 rows but q has 4"):
        tree.forward_dynamics(Q, V, A[:3])
    with pytest.raises(InputSizeError, match=r"q has shape \(4, 7, 1\)"):
        tree.mass_matrix(Q[:, :, None])
    with pytest.raises(InputSizeError, match="N must be at least 1"):
        tree.mass_matrix(Q[:0])
    with pytest.raises(InputSizeError, match=r"tau has shape \(5,\).*\(4, 7\) or \(7,\)"):
        tree.forward_dynamics(Q, V, np.zeros(5))
    bad = V.copy()
    bad[2, 3] = np.nan
    with pytest.raises(ValueError, match="v passed to tree 'arm7' contains NaN.*batch row 2"):
        tree.inverse_dynamics(Q, bad, A)


def test_threaded_batch_equals_serial_batch():
    tree = M.arm7(backend="c")
    Q, V, A = _batch(tree, 40, seed=3)
    serial = tree.forward_dynamics(Q, V, A)
    tree.batch_threads, tree.batch_thread_min = 2, 8
    try:
        threaded = tree.forward_dynamics(Q, V, A)
        H = tree.mass_matrix(Q)
    finally:
        del tree.batch_threads, tree.batch_thread_min
    assert np.array_equal(threaded, serial)
    assert np.array_equal(H, tree.mass_matrix(Q))


def test_concurrent_batched_calls_from_threads_are_exact():
    """Batched calls share one CasADi buffer per batch size; threads calling the same tree
    take turns (before, interleaved calls corrupted memory or returned another thread's
    rows). Each thread's results equal its own single-threaded ones bitwise."""
    tree = M.arm7(backend="c")
    calls, expected = [], []
    for k in range(4):
        Q, V, A = _batch(tree, 200, seed=10 + k)
        calls.append(lambda Q=Q, V=V, A=A: tree.inverse_dynamics(Q, V, A))
        expected.append(calls[-1]().copy())
    assert mismatches_under_threads(calls, expected) == []
