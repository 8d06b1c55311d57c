"""Cross-checks against Pinocchio on models built in code (tests/models.py): mass matrix,
inverse and forward dynamics, body poses, Jacobians, COM, centroidal momentum matrix,
Jdot v, kinetic energy and integration agree to 1e-9 relative at random states."""
import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")

import models as M  # noqa: E402

RTOL = 1e-9

MODELS = {
    "arm7": lambda: M.arm7(backend="casadi"),
    "branching": lambda: M.branching(backend="casadi"),
    "humanoid30": lambda: M.humanoid(30, backend="casadi"),
    "all_joints": lambda: M.all_joints(backend="casadi"),
    "all_joints_tilted_planar": lambda: M.all_joints(seed=5, planar_axis=(1, 1, 0),
                                                     backend="casadi"),
}


@pytest.fixture(scope="module", params=list(MODELS))
def setup(request):
    tree = MODELS[request.param]()
    return tree, M.to_pinocchio(tree)


def _close(a, b, rtol=RTOL):
    scale = max(1.0, float(np.max(np.abs(b))))
    err = float(np.max(np.abs(np.asarray(a) - np.asarray(b)))) if np.size(b) else 0.0
    assert err <= rtol * scale, f"max error {err:.3e} (scale {scale:.3e})"


def _states(tree, P, n=3, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        q, v, a = M.random_state(tree, rng)
        T, Td = P.T(q, v)
        yield q, v, a, P.q(q), T @ v, T @ a + Td @ v, T


def test_model_sizes(setup):
    tree, P = setup
    assert P.model.nv == tree.nv
    assert tree.nq == sum(j.nq for j in tree.joints)
    assert np.isclose(tree.total_mass(), sum(i.mass for i in P.model.inertias))


def test_mass_matrix_inverse_and_forward_dynamics(setup):
    tree, P = setup
    for q, v, a, qp, vp, ap, T in _states(tree, P):
        Hp = pin.crba(P.model, P.data, qp)
        Hp = np.triu(Hp) + np.triu(Hp, 1).T
        _close(tree.mass_matrix(q), T.T @ Hp @ T)
        tau = tree.inverse_dynamics(q, v, a)
        _close(tau, T.T @ pin.rnea(P.model, P.data, qp, vp, ap))
        taup = np.linalg.solve(T.T, tau)
        ddq = pin.aba(P.model, P.data, qp, vp, taup)
        _, Td = P.T(q, v)
        _close(T @ tree.forward_dynamics(q, v, tau) + Td @ v, ddq)
        # our vdot = 0 is pin's vdot = Tdot v (nonzero only for the native planar joint)
        _close(tree.bias_forces(q, v), T.T @ pin.rnea(P.model, P.data, qp, vp, Td @ v))
        _close(tree.gravity_forces(q), T.T @ pin.computeGeneralizedGravity(P.model, P.data, qp))


def test_poses_jacobians_com_momentum(setup):
    tree, P = setup
    for q, v, a, qp, vp, ap, T in _states(tree, P, n=2):
        pin.forwardKinematics(P.model, P.data, qp, vp, 0 * vp)
        pin.computeJointJacobians(P.model, P.data, qp)
        pin.updateFramePlacements(P.model, P.data)
        for b in tree.bodies[1:]:
            fid = P.frame[b.name]
            _close(tree.body_pose(b.name, q), P.data.oMf[fid].homogeneous)
            Jp = pin.getFrameJacobian(P.model, P.data, fid, pin.LOCAL_WORLD_ALIGNED)
            _close(tree.jacobian(b.name, q), M.swap_rows(Jp) @ T)
            Jl = pin.getFrameJacobian(P.model, P.data, fid, pin.LOCAL)
            _close(tree.jacobian(b.name, q, expressed_in=b.name), M.swap_rows(Jl) @ T)
        _close(tree.center_of_mass(q), pin.centerOfMass(P.model, P.data, qp))
        _close(tree.center_of_mass_jacobian(q), pin.jacobianCenterOfMass(P.model, P.data, qp) @ T)
        Ag = pin.computeCentroidalMap(P.model, P.data, qp)
        _close(tree.momentum_matrix(q), M.swap_rows(Ag) @ T)


def test_point_jacobian_and_classical_acceleration(setup):
    tree, _ = setup
    P = M.to_pinocchio(tree)  # a private copy: a frame is added below
    b = tree.bodies[-1]
    point = np.array([0.1, -0.2, 0.3])
    fid = P.model.addFrame(pin.Frame("pt", P.model.frames[P.frame[b.name]].parentJoint,
                                     P.model.frames[P.frame[b.name]].placement
                                     * pin.SE3(np.eye(3), point), pin.FrameType.OP_FRAME))
    data = P.model.createData()
    if True:
        for q, v, a, qp, vp, ap, T in _states(tree, P, n=2):
            pin.forwardKinematics(P.model, data, qp, vp, 0 * vp)
            pin.computeJointJacobians(P.model, data, qp)
            pin.updateFramePlacements(P.model, data)
            Jp = pin.getFrameJacobian(P.model, data, fid, pin.LOCAL_WORLD_ALIGNED)
            _close(tree.jacobian(b.name, q, point), M.swap_rows(Jp) @ T)
            acc = pin.getFrameClassicalAcceleration(P.model, data, fid, pin.LOCAL_WORLD_ALIGNED)
            # pin's acceleration uses vdot_pin = 0, i.e. vdot = -T^-1 Tdot v
            _, Td = P.T(q, v)
            vdot = -np.linalg.solve(T, Td @ v)
            jdv = tree.jacobian_dot_times_v(b.name, q, v, point)
            J = tree.jacobian(b.name, q, point)
            _close(jdv + J @ vdot, np.r_[acc.angular, acc.linear])


def test_energy_and_integration(setup):
    tree, P = setup
    for q, v, a, qp, vp, ap, T in _states(tree, P, n=2):
        assert np.isclose(tree.kinetic_energy(q, v),
                          pin.computeKineticEnergy(P.model, P.data, qp, vp), rtol=RTOL)
        assert np.isclose(tree.potential_energy(q),
                          pin.computePotentialEnergy(P.model, P.data, qp), rtol=RTOL,
                          atol=1e-9)
        # integration on the manifold matches pin.integrate, except for the native planar
        # joint, whose q is a vector space here (v = qdot) but SE(2) in Pinocchio
        qn = tree.integrate(q, v, 0.1)
        keep = np.ones(P.model.nq, bool)
        for j in tree.joints:
            if P.kind.get(j.name) == "planar":
                jm = P.model.joints[P.jid[j.name]]
                keep[jm.idx_q:jm.idx_q + jm.nq] = False
        _close(P.q(qn)[keep], pin.integrate(P.model, qp, 0.1 * vp)[keep])


def test_coriolis_matrix_matches_pinocchio_on_fixed_base():
    tree = M.arm7(backend="casadi")
    P = M.to_pinocchio(tree)
    rng = np.random.default_rng(3)
    q, v, _ = M.random_state(tree, rng)
    C = tree.coriolis_matrix(q, v)
    Cp = pin.computeCoriolisMatrix(P.model, P.data, q, v)
    _close(C @ v, Cp @ v)
    _close(C, Cp)


def test_coriolis_matrix_matches_pinocchio_on_floating_humanoid():
    """Same factorization as Pinocchio (C = sum J^T (I Jdot + B J)) on a floating base.
    Joints whose motion subspace depends on q (universal, Euler, planar) are left out: on the
    all_joints model Pinocchio 4.1's computeCoriolisMatrix misses C v = nle - g by ~10
    (measured), while ours satisfies C v = bias - gravity and dH/dt - 2C
    skew there (tests/test_dynamics.py)."""
    tree = M.humanoid(30, backend="casadi")
    P = M.to_pinocchio(tree)
    q, v, _ = M.random_state(tree, np.random.default_rng(4))
    T, _ = P.T(q, v)
    Cp = pin.computeCoriolisMatrix(P.model, P.data, P.q(q), T @ v)
    _close(tree.coriolis_matrix(q, v), T.T @ Cp @ T)
