"""examples/acrobot_lqr.py: the model is Spong's, LQR balances it, interpreted == compiled."""
import os

import numpy as np
import pytest

from _examples import load_example


def test_acrobot_model_matches_spong_closed_form():
    ex = load_example("acrobot_lqr")
    plant = ex.Acrobot()
    ctx = plant.create_default_context()
    ctx.set_continuous_state([0.3, 0.0, 0.0, 0.0])
    (m11, m12, m22), _ = plant.mass_matrix_and_bias(ctx)
    ctx.set_continuous_state([0.0, 0.0, 0.0, 0.0])
    (a11, a12, a22), _ = plant.mass_matrix_and_bias(ctx)
    np.testing.assert_allclose([[a11, a12], [a12, a22]], [[4.663, 2.33], [2.33, 1.33]], rtol=1e-12)
    np.testing.assert_allclose([m11, m12, m22], [4.663, 2.33, 1.33], rtol=1e-12)  # M does not depend on q1


def test_acrobot_lqr_example_balances(tmp_path):
    result = load_example("acrobot_lqr").main(["--out", str(tmp_path), "--duration", "4"])
    assert result["final_error"] < 1e-3
    assert result["gap"] < 1e-4
    assert result["plot"] is None or os.path.getsize(result["plot"]) > 1000


def _spong_derivatives(x, tau, m1, m2, l1, lc1, lc2, I1, I2, b1, b2, g):
    """xdot of Spong's acrobot from the matrices, solved by numpy (an independent formula)."""
    q1, q2, v1, v2 = x
    J1, J2 = I1 + m1 * lc1 ** 2, I2 + m2 * lc2 ** 2
    c2, s2 = np.cos(q2), np.sin(q2)
    M = np.array([[J1 + J2 + m2 * l1 ** 2 + 2 * m2 * l1 * lc2 * c2, J2 + m2 * l1 * lc2 * c2],
                  [J2 + m2 * l1 * lc2 * c2, J2]])
    C = np.array([[-2 * m2 * l1 * lc2 * s2 * v2, -m2 * l1 * lc2 * s2 * v2],
                  [m2 * l1 * lc2 * s2 * v1, 0.0]])
    tau_g = g * np.array([(m1 * lc1 + m2 * l1) * np.sin(q1) + m2 * lc2 * np.sin(q1 + q2),
                          m2 * lc2 * np.sin(q1 + q2)])
    vdot = np.linalg.solve(M, np.array([0.0, tau]) - C @ [v1, v2] - tau_g - [b1 * v1, b2 * v2])
    return np.array([v1, v2, *vdot])


def test_acrobot_parameter_change_is_seen_by_the_memoized_coefficients():
    """The parameter combinations are kept per parameter vector: set_parameter and
    set_parameters with new values change the derivatives (to those of a plant built with
    the new values, bit for bit), and setting the old values back restores them."""
    ex = load_example("acrobot_lqr")
    plant = ex.Acrobot()
    ctx = plant.create_default_context()
    x, tau = [2.9, -0.4, 0.7, -1.3], 0.6
    ctx.set_continuous_state(x)
    plant.get_input_port().fix_value(ctx, [tau])
    before = list(plant.time_derivatives(ctx))
    np.testing.assert_allclose(before, _spong_derivatives(x, tau, **ex.SPONG), rtol=1e-12)
    heavy = dict(ex.SPONG, m2=2.5, lc2=0.8)
    ctx.set_parameter("spong", [heavy[name] for name in ex.Acrobot.PARAMETERS])
    after = list(plant.time_derivatives(ctx))
    ref_plant = ex.Acrobot(m2=2.5, lc2=0.8)
    ref_ctx = ref_plant.create_default_context()
    ref_ctx.set_continuous_state(x)
    ref_plant.get_input_port().fix_value(ref_ctx, [tau])
    assert after == list(ref_plant.time_derivatives(ref_ctx))
    np.testing.assert_allclose(after, _spong_derivatives(x, tau, **heavy), rtol=1e-12)
    assert after != before
    ctx.set_parameters([ex.SPONG[name] for name in ex.Acrobot.PARAMETERS])
    assert list(plant.time_derivatives(ctx)) == before
    (_, _, m22), _ = plant.mass_matrix_and_bias(ctx)
    np.testing.assert_allclose(m22, 1.33, rtol=1e-15)


def test_acrobot_numeric_derivatives_equal_its_symbolic_evaluation():
    """The same source traced into CasADi (what the LQR linearizes) gives the numeric
    derivatives to rounding, on random states and parameters."""
    from systems.symbolic import to_casadi
    ex = load_example("acrobot_lqr")
    plant = ex.Acrobot(m1=1.3, l1=0.9, b2=0.3)
    cs = to_casadi(plant)
    rng = np.random.default_rng(3)
    ctx = plant.create_default_context()
    for _ in range(20):
        x, tau = rng.uniform(-4, 4, 4), rng.uniform(-2, 2)
        ctx.set_continuous_state(x)
        plant.get_input_port().fix_value(ctx, [tau])
        xdot = np.array(plant.time_derivatives(ctx))
        sym = np.asarray(cs.f(*cs.from_context(ctx)), float).ravel()
        np.testing.assert_allclose(xdot, sym, rtol=1e-12, atol=1e-12)


def test_a_parameter_array_changed_in_place_by_its_owner_does_not_reach_the_memo():
    """The context keeps its own immutable copy of a parameter vector: an owner that hands
    over a read-only array, then flips it writeable and changes it, changes neither the
    parameter nor the derivatives (before the copy, get_parameter showed the new value while
    the memoized coefficients stayed those of the old one); the stored vector itself cannot
    be made writeable."""
    ex = load_example("acrobot_lqr")
    plant = ex.Acrobot()
    ctx = plant.create_default_context()
    x, tau = [2.9, -0.4, 0.7, -1.3], 0.6
    ctx.set_continuous_state(x)
    plant.get_input_port().fix_value(ctx, [tau])
    names = ex.Acrobot.PARAMETERS
    mine = np.array([ex.SPONG[name] for name in names])
    mine.flags.writeable = False
    ctx.set_parameter("spong", mine)
    before = list(plant.time_derivatives(ctx))   # (the memo is filled)
    mine.flags.writeable = True
    mine[names.index("m2")] = 2.5
    stored = ctx.get_parameter("spong")
    assert stored.tolist() == [ex.SPONG[name] for name in names]
    assert list(plant.time_derivatives(ctx)) == before
    np.testing.assert_allclose(before, _spong_derivatives(x, tau, **ex.SPONG), rtol=1e-12)
    with pytest.raises(ValueError):
        stored.flags.writeable = True
    # the new values, set, are seen
    ctx.set_parameter("spong", mine)
    np.testing.assert_allclose(list(plant.time_derivatives(ctx)),
                               _spong_derivatives(x, tau, **dict(ex.SPONG, m2=2.5)), rtol=1e-12)
