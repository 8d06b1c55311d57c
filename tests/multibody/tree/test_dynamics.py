"""Tests of the dynamics algorithms: published reference values (RBDL chains, Spong's
acrobot), internal consistency (ABA = CRBA + solve, RNEA(ABA) = tau, symbolic = numeric,
numpy-generic = CasADi Function), Coriolis matrix properties, external wrenches, derivatives
against finite differences, energy conservation, and the compiled path."""
import casadi as ca
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import models as M
from multibody import dynamics as dyn
from multibody import kinematics as kin

rng = np.random.default_rng(5)


def test_rbdl_chains():
    for n, expected in ((1, [-4.905]), (2, [-5.886, 3.924]),
                        (3, [-6.03692307692308, 3.77307692307692, 1.50923076923077])):
        t = M.rbdl_chain(n, backend="casadi")
        z = np.zeros(n)
        np.testing.assert_allclose(t.forward_dynamics(z, z, z), expected, atol=1e-13)


def test_acrobot_mass_matrix_closed_form():
    t = M.acrobot(backend="casadi")
    np.testing.assert_allclose(t.mass_matrix([0.0, 0.0]), [[4.663, 2.33], [2.33, 1.33]],
                               atol=1e-12)
    q2 = 0.7
    m11 = 0.083 + 0.33 + 0.25 + 1 + 1 + 2 * np.cos(q2)
    np.testing.assert_allclose(t.mass_matrix([0.3, q2]),
                               [[m11, 0.33 + 1 + np.cos(q2)], [0.33 + 1 + np.cos(q2), 1.33]],
                               atol=1e-12)
    # gravity: links hang down at q = 0 (no torque); horizontal shoulder: (m1 lc1 + m2 l1
    # + m2 lc2) g about the y axis
    np.testing.assert_allclose(t.gravity_forces([0.0, 0.0]), [0, 0], atol=1e-12)
    g = t.gravity_forces([np.pi / 2, 0.0])
    np.testing.assert_allclose(np.abs(g), [(0.5 + 1 + 1) * 9.81, 9.81], atol=1e-12)


TREES = {"arm7": M.arm7, "branching": M.branching, "all_joints": M.all_joints,
         "humanoid30": lambda **k: M.humanoid(30, **k)}


@pytest.fixture(scope="module", params=list(TREES))
def tree(request):
    return TREES[request.param](backend="casadi")


def test_aba_crba_rnea_consistency(tree):
    q, v, tau = M.random_state(tree, rng)
    H = tree.mass_matrix(q)
    assert np.allclose(H, H.T) and np.all(np.linalg.eigvalsh(H) > 0)
    vdot = tree.forward_dynamics(q, v, tau)
    np.testing.assert_allclose(vdot, np.linalg.solve(H, tau - tree.bias_forces(q, v)),
                               rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(tree.inverse_dynamics(q, v, vdot), tau, atol=1e-9)
    np.testing.assert_allclose(tree.kinetic_energy(q, v), 0.5 * v @ H @ v, rtol=1e-12)


def test_generic_numpy_evaluation_equals_function(tree):
    """The algorithms run on numpy directly and give what the CasADi Function gives."""
    q, v, tau = M.random_state(tree, rng)
    np.testing.assert_allclose(dyn.forward_dynamics(tree, q, v, tau),
                               tree.forward_dynamics(q, v, tau), atol=1e-10)
    np.testing.assert_allclose(dyn.mass_matrix(tree, q), tree.mass_matrix(q), atol=1e-12)
    np.testing.assert_allclose(dyn.inverse_dynamics(tree, q, v, tau),
                               tree.inverse_dynamics(q, v, tau), atol=1e-10)
    b = tree.bodies[-1].name
    np.testing.assert_allclose(kin.point_jacobian(tree, q, b, np.zeros(3)),
                               tree.jacobian(b, q), atol=1e-12)


def test_symbolic_equals_numeric(tree):
    q, v, tau = M.random_state(tree, rng)
    qs, vs, ts = ca.SX.sym("q", tree.nq), ca.SX.sym("v", tree.nv), ca.SX.sym("t", tree.nv)
    f = ca.Function("f", [qs, vs, ts], [tree.forward_dynamics(qs, vs, ts),
                                        tree.inverse_dynamics(qs, vs, ts),
                                        tree.mass_matrix(qs), tree.qdot(qs, vs)])
    a, b, H, qd = f(q, v, tau)
    np.testing.assert_allclose(a.full().ravel(), tree.forward_dynamics(q, v, tau), atol=1e-12)
    np.testing.assert_allclose(b.full().ravel(), tree.inverse_dynamics(q, v, tau), atol=1e-12)
    np.testing.assert_allclose(H.full(), tree.mass_matrix(q), atol=1e-12)
    np.testing.assert_allclose(qd.full().ravel(), tree.qdot(q, v), atol=1e-14)


def test_coriolis_matrix_properties():
    t = M.all_joints(backend="casadi")
    q, v, _ = M.random_state(t, rng)
    C = t.coriolis_matrix(q, v)
    np.testing.assert_allclose(C @ v, t.bias_forces(q, v) - t.gravity_forces(q), atol=1e-9)
    h = 1e-6
    Hdot = (t.mass_matrix(t.integrate(q, v, h)) - t.mass_matrix(t.integrate(q, v, -h))) / (2 * h)
    S = Hdot - 2 * C
    np.testing.assert_allclose(S, -S.T, atol=1e-6)
    assert np.abs(C - C.T).max() > 1e-3  # not trivially symmetric


def test_external_wrenches_match_jacobian_transpose():
    t = M.humanoid(30, backend="casadi")
    q, v, vdot = M.random_state(t, rng)
    w = {"larm3": rng.normal(size=6), "pelvis": rng.normal(size=6)}
    tau = t.inverse_dynamics(q, v, vdot)
    JTw = sum(t.jacobian(b, q).T @ wb for b, wb in w.items())
    tau_w = t.inverse_dynamics(q, v, vdot, external_wrenches=w)
    np.testing.assert_allclose(tau_w, tau - JTw, atol=1e-9)
    np.testing.assert_allclose(t.forward_dynamics(q, v, tau_w, external_wrenches=w), vdot,
                               atol=1e-9)
    np.testing.assert_allclose(
        t.forward_dynamics(q, v, tau, external_wrenches=w),
        np.linalg.solve(t.mass_matrix(q), tau - t.bias_forces(q, v) + JTw), atol=1e-9)


def test_forward_dynamics_derivatives_match_finite_differences():
    t = M.all_joints(backend="casadi")
    qs, vs, ts = ca.SX.sym("q", t.nq), ca.SX.sym("v", t.nv), ca.SX.sym("t", t.nv)
    a = t.forward_dynamics(qs, vs, ts)
    dq, dv, dt = ca.jacobian(a, qs), ca.jacobian(a, vs), ca.jacobian(a, ts)
    f = ca.Function("d", [qs, vs, ts], [dq, dv, dt])
    q, v, tau = M.random_state(t, rng)
    Dq, Dv, Dt = (x.full() for x in f(q, v, tau))
    h = 1e-6
    for k in range(t.nv):
        e = np.zeros(t.nv)
        e[k] = h
        fd_v = (t.forward_dynamics(q, v + e, tau) - t.forward_dynamics(q, v - e, tau)) / (2 * h)
        np.testing.assert_allclose(Dv[:, k], fd_v, rtol=1e-5, atol=1e-5)
        fd_t = (t.forward_dynamics(q, v, tau + e) - t.forward_dynamics(q, v, tau - e)) / (2 * h)
        np.testing.assert_allclose(Dt[:, k], fd_t, rtol=1e-5, atol=1e-6)
        # along the manifold: d/dq . N(q) e_k equals the derivative along integrate
        fd_q = (t.forward_dynamics(t.integrate(q, e, 1.0), v, tau)
                - t.forward_dynamics(t.integrate(q, -e, 1.0), v, tau)) / (2 * h)
        N = ca.Function("N", [qs], [ca.jacobian(t.qdot(qs, vs), vs)])(q).full()
        np.testing.assert_allclose(Dq @ N[:, k] * h, fd_q * h, rtol=1e-5, atol=1e-9)


def test_passive_floating_humanoid_conserves_energy():
    """Issue target: RK45 at rtol 1e-10 drifts < 1e-7 relative over 2 s."""
    t = M.humanoid(30, backend="casadi")
    q0, v0, _ = M.random_state(t, np.random.default_rng(0))
    z = np.zeros(t.nv)
    nq = t.nq

    def rhs(_, x):
        q, v = x[:nq], x[nq:]
        return np.concatenate([t.qdot(q, v), t.forward_dynamics(q, v, z)])

    def energy(x):
        return t.kinetic_energy(x[:nq], x[nq:]) + t.potential_energy(x[:nq])
    x0 = np.concatenate([q0, v0])
    sol = solve_ivp(rhs, (0, 2.0), x0, method="RK45", rtol=1e-10, atol=1e-10)
    E0, E1 = energy(x0), energy(sol.y[:, -1])
    assert abs(E1 - E0) / abs(E0) < 1e-7
    assert abs(np.linalg.norm(sol.y[:4, -1]) - 1) < 1e-8


def test_integrate_qdot_and_passive_forces():
    t = M.all_joints(backend="casadi")
    q, v, _ = M.random_state(t, rng)
    h = 1e-7
    np.testing.assert_allclose((t.integrate(q, v, h) - t.integrate(q, v, -h)) / (2 * h),
                               t.qdot(q, v), atol=1e-6)
    np.testing.assert_allclose(t.difference(q, t.integrate(q, v, 0.2)), 0.2 * v, atol=1e-9)
    arm = M.acrobot(backend="casadi")
    j = arm.get_joint("elbow")
    j.damping[:] = 0.5
    j.stiffness[:] = 2.0
    np.testing.assert_allclose(arm.joint_passive_forces([0.1, 0.3], [1.0, -2.0]),
                               [0.0, -0.5 * -2.0 - 2.0 * 0.3])


def test_compiled_backend_agrees_with_casadi_vm():
    pytest.importorskip("solvers.compiled")
    from solvers.compiled import find_compiler
    if find_compiler() is None:
        pytest.skip("no C compiler")
    tc, tv = M.acrobot(backend="c"), M.acrobot(backend="casadi")
    for _ in range(3):
        q, v, tau = rng.normal(size=2), rng.normal(size=2), rng.normal(size=2)
        np.testing.assert_allclose(tc.forward_dynamics(q, v, tau),
                                   tv.forward_dynamics(q, v, tau), rtol=1e-13)
        np.testing.assert_allclose(tc.mass_matrix(q), tv.mass_matrix(q), rtol=1e-13)
    assert tc._functions.entries["forward_dynamics"].evaluator.impl.backend == "c"
    assert tv._functions.entries["forward_dynamics"].evaluator.impl.backend == "casadi"
    # "auto" compiles in the background after compile_after calls; compile() waits for it
    ta = M.acrobot(backend="auto", compile_after=2)
    H = [ta.mass_matrix(q) for _ in range(4)]
    ev = ta._functions.entries["mass_matrix"].evaluator
    assert ev._thread is not None
    ta.compile()
    assert ev.compiled is not None and ev.compiled.backend == "c"
    np.testing.assert_allclose(ta.mass_matrix(q), H[0], rtol=1e-13)
    assert ta._functions.entries["mass_matrix"].numeric is ev.compiled
