"""MuJoCo's two-stage contact solve (``MuJoCoSoftening(noslip=True)``): soft pyramid edges,
then the no-slip stage on the hard friction with the normal forces fixed. The stage-2
equations on one contact by hand, and MuJoCo (``noslip_iterations = 100``) step by step on a
tilted plane: rolling and sliding spheres, a sliding box; gymnasium's Ant landing on its
four capsule feet (MuJoCo's plane-capsule contact frame along the capsule axis)."""
import warnings

import numpy as np
import pytest

from multibody.constraints.mujoco_softening import noslip_impulses, pyramid_edges
from multibody.parsing import mjcf_contact, read_mjcf_model
from multibody.plants import TimeSteppingRigidBodySystem

H = 0.005


# ---------------------------------------------------------------- stage 2 by hand
def _point_mass(mu, mass, v_free, p, bias=None):
    """A point mass (3 DOF) on the floor z = 0: MuJoCo's frame t1 = y, t2 = -x; four edges."""
    n, t1, t2 = np.eye(3)[2], np.eye(3)[1], -np.eye(3)[0]
    E = pyramid_edges(n[None], np.array([[t1, t2]]), mu)
    bias = np.zeros(4) if bias is None else bias
    A = E @ E.T / mass
    b = E @ v_free + bias
    pn = noslip_impulses(A, b, p, np.array([[0, 1], [2, 3]]))
    return E, pn


def test_edges_in_mujoco_order():
    mu = 0.7
    E, _ = _point_mass(mu, 1.0, np.zeros(3), np.zeros(4))
    np.testing.assert_allclose(E, [[0, mu, 1], [0, -mu, 1], [-mu, 0, 1], [mu, 0, 1]])


def test_sticking_contact_stops_the_slip_and_keeps_the_normal():
    # inside the pyramid: y_i = -m (2 mu v_ti) / (4 mu^2), i.e. the tangential velocity
    # vanishes; each pair's sum (the normal impulse) and so the normal velocity are kept
    mu, mass = 0.8, 2.0
    v_free = np.array([0.03, -0.02, -0.5])
    p = np.array([0.9, 0.1, 0.3, 0.7])                      # stage 1 (soft) impulses
    E, pn = _point_mass(mu, mass, v_free, p)
    np.testing.assert_allclose(pn[0] + pn[1], 1.0, rtol=1e-14)
    np.testing.assert_allclose(pn[2] + pn[3], 1.0, rtol=1e-14)
    v = v_free + E.T @ pn / mass
    np.testing.assert_allclose(v[:2], 0.0, atol=1e-14)
    np.testing.assert_allclose(v[2], -0.5 + 2.0 / mass, rtol=1e-14)
    # by hand: friction impulse mu (f+ - f-) along t1 = y and t2 = -x is -m v_t
    np.testing.assert_allclose(mu * (pn[0] - pn[1]), -mass * v_free[1], rtol=1e-12)
    np.testing.assert_allclose(mu * (pn[2] - pn[3]), -mass * -v_free[0], rtol=1e-12)


def test_sliding_contact_takes_the_pyramid_bound():
    # a slip too fast to stop: each pair puts its whole sum on one edge, the friction along
    # t_i is -sign(v_ti) mu (f+ + f-) (the pyramid's per-direction bound, MuJoCo's noslip)
    mu, mass = 0.5, 1.0
    v_free = np.array([2.0, 3.0, -0.1])
    p = np.array([0.2, 0.2, 0.1, 0.3])
    E, pn = _point_mass(mu, mass, v_free, p)
    np.testing.assert_allclose(pn, [0.0, 0.4, 0.4, 0.0], atol=1e-15)
    v = v_free + E.T @ pn / mass
    np.testing.assert_allclose(v, [2.0 - mu * 0.4, 3.0 - mu * 0.4, -0.1 + 0.8], rtol=1e-14)


def test_pair_bias_difference_is_the_reference_damping():
    # the edges' bias -(J_e v) - h a_ref with a_ref = -b J_e v - k d r differ within a pair
    # by 2 mu (h b - 1) v_t: the stage drives J_t v_n to (1 - h b) v_t (MuJoCo's reference)
    mu, mass, hb = 1.0, 1.0, 0.4
    v0 = np.array([0.0, 0.01, 0.0])                        # slip along t1 = y
    E = pyramid_edges(np.array([[0, 0, 1.0]]), np.array([[[0, 1.0, 0], [-1.0, 0, 0]]]), mu)
    bias = -(E @ v0) + hb * (E @ v0)                        # the k d r term is common, dropped
    _, pn = _point_mass(mu, mass, v0, np.full(4, 0.5), bias)
    v = v0 + E.T @ pn / mass
    np.testing.assert_allclose(v[1], (1 - hb) * v0[1], rtol=1e-12)


def test_rows_outside_the_pairs_and_empty_pairs_are_kept():
    A = np.array([[2.0, 0.5, 0.1], [0.5, 2.0, 0.2], [0.1, 0.2, 1.0]])
    p = np.array([0.3, 0.1, 0.7])
    out = noslip_impulses(A, np.array([1.0, -1.0, 0.0]), p, np.array([[0, 1]]))
    assert out[2] == 0.7 and abs(out[0] + out[1] - 0.4) < 1e-15
    zero = noslip_impulses(A, np.ones(3), np.array([0.0, 0.0, 0.7]), np.array([[0, 1]]))
    np.testing.assert_array_equal(zero, [0.0, 0.0, 0.7])


# ---------------------------------------------------------------- MuJoCo step by step
def _xml(mu, shape):
    geom = {"sphere": 'type="sphere" size="0.1"', "box": 'type="box" size="0.1 0.15 0.05"'}[shape]
    fr = f'friction="{mu} 0.005 0.0001"'
    return f"""<mujoco><option timestep="{H}" integrator="Euler" noslip_iterations="100"/>
    <worldbody><geom name="floor" type="plane" size="5 5 0.1" euler="20 10 0" {fr}/>
    <body pos="0 0 0.2"><freejoint/><geom name="thing" {geom} mass="1" {fr}/></body>
    </worldbody></mujoco>"""


@pytest.mark.parametrize("mu, shape", [(1.0, "sphere"), (0.1, "sphere"), (0.1, "box")])
def test_tilted_plane_equals_mujoco_noslip(mu, shape):
    """Falling onto a plane tilted by 20/10 degrees, then rolling (sphere, mu = 1) or
    sliding (mu = 0.1): every step's velocities equal MuJoCo's (Euler, pyramidal, noslip
    100; its solvers iterated without early stop) within 1e-6 relative."""
    mujoco = pytest.importorskip("mujoco")
    xml = _xml(mu, shape)
    model = read_mjcf_model(xml)
    contact = mjcf_contact(model)                           # noslip from the file
    assert contact.mujoco.noslip
    plant = TimeSteppingRigidBodySystem(model.tree, H, constraints=[contact],
                                        contact_solver="lcp")
    ctx = plant.create_default_context()
    plant.set_positions(ctx, model.qpos0)
    m = mujoco.MjModel.from_xml_string(xml)
    m.opt.tolerance, m.opt.noslip_tolerance, m.opt.iterations = 0.0, 0.0, 100
    d = mujoco.MjData(m)
    touching = 0
    for _ in range(150):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            plant.advance(ctx, 1)
        mujoco.mj_step(m, d)
        q, v = plant.get_positions(ctx), plant.get_velocities(ctx)
        R = np.zeros(9)
        mujoco.mju_quat2Mat(R, q[0:4])
        # ours: (w, v) in the body frame; MuJoCo's free joint: (v world, w body)
        ours = np.r_[R.reshape(3, 3) @ v[3:6], v[0:3]]
        scale = max(1.0, np.abs(d.qvel).max())
        np.testing.assert_allclose(ours, d.qvel, rtol=0, atol=1e-6 * scale)
        np.testing.assert_allclose(q[4:7], d.qpos[0:3], rtol=0, atol=1e-9)
        touching += d.ncon > 0
    assert touching > 60                                    # the contact phase was compared
    speed = np.linalg.norm(d.qvel[:3])
    assert speed > 1.0                                      # it rolls or slides downhill


def test_ant_landing_equals_mujoco_noslip():
    """Gymnasium's Ant (Euler, h = 10 ms, pyramidal) dropped from ``init_qpos`` with zero
    control: soft joint limits throw the legs down, the four ankle capsules land at step 21
    and the body settles; every step's velocities equal MuJoCo's (noslip 100, solvers
    iterated without early stop) within 1e-6 relative for 0.6 s."""
    mujoco = pytest.importorskip("mujoco")
    gymnasium = pytest.importorskip("gymnasium")
    import os
    path = os.path.join(os.path.dirname(gymnasium.__file__), "envs", "mujoco", "assets",
                        "ant.xml")
    xml = open(path).read().replace('integrator="RK4" timestep="0.01"',
                                    'integrator="Euler" timestep="0.01"')
    from multibody.parsing import mjcf_joint_limits
    model = read_mjcf_model(xml)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # the reader's notes on unsupported elements
        plant = TimeSteppingRigidBodySystem(
            model.tree, 0.01, constraints=[mjcf_contact(model, noslip=True),
                                           mjcf_joint_limits(model)],
            contact_solver="lcp", damping_scheme=model.damping_scheme)
    ctx = plant.create_default_context()
    plant.set_positions(ctx, model.qpos0)
    m = mujoco.MjModel.from_xml_string(xml)
    m.opt.noslip_iterations, m.opt.iterations = 100, 100
    m.opt.tolerance, m.opt.noslip_tolerance = 0.0, 0.0
    d = mujoco.MjData(m)
    contacts = []
    for _ in range(60):
        plant.advance(ctx, 1)
        mujoco.mj_step(m, d)
        q, v = plant.get_positions(ctx), plant.get_velocities(ctx)
        R = np.zeros(9)
        mujoco.mju_quat2Mat(R, q[0:4])
        ours = np.r_[R.reshape(3, 3) @ v[3:6], v[0:3], v[6:]]
        scale = max(1.0, np.abs(d.qvel).max())
        np.testing.assert_allclose(ours, d.qvel, rtol=0, atol=1e-6 * scale)
        contacts.append(d.ncon)
    # landed on the four feet at step 21, bounced and stands on them again
    assert contacts[19] == 0 and contacts[20] == 4 and 0 in contacts[21:] and contacts[-1] == 4
