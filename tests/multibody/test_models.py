"""Shipped model builders: sizes, masses and the closed-form dynamics of the cart-pole."""
import numpy as np
import pytest

from multibody import models


@pytest.mark.parametrize("name, nq, nv", [("pendulum", 1, 1), ("acrobot", 2, 2),
                                           ("cart_pole", 2, 2), ("quadruped", 19, 18),
                                           ("four_bar", 3, 3), ("bouncing_ball", 7, 6)])
def test_builders_give_trees_of_the_documented_size(name, nq, nv):
    t = getattr(models, name)()
    assert (t.nq, t.nv) == (nq, nv)


def test_cart_pole_matches_the_textbook_equations():
    t = models.cart_pole()
    mc, mp, l, g = 10.0, 1.0, 0.5, 9.81
    assert t.total_mass() == pytest.approx(mc + mp)
    rng = np.random.default_rng(0)
    for _ in range(5):
        q, v, f = rng.normal(size=2), rng.normal(size=2), rng.normal()
        th, thd = q[1], v[1]
        M = np.array([[mc + mp, mp * l * np.cos(th)], [mp * l * np.cos(th), mp * l * l]])
        rhs = np.array([f + mp * l * np.sin(th) * thd ** 2, -mp * g * l * np.sin(th)])
        vdot = np.linalg.solve(M, rhs)
        np.testing.assert_allclose(t.forward_dynamics(q, v, [f, 0.0]), vdot, rtol=1e-5, atol=1e-6)
    assert float(np.ravel(t.get_joint("x").effort_limit)[0]) == pytest.approx(100.0)
