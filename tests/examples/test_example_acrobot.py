"""examples/acrobot_lqr.py: the model is Spong's, LQR balances it, interpreted == compiled."""
import os

import numpy as np

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
