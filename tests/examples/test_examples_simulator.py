"""examples/mass_spring_damper_pid.py and examples/bouncing_ball.py run, save their plots,
and their numbers are right."""
import os

import numpy as np
import pytest

from _examples import load_example

try:
    import matplotlib  # noqa: F401
    HAS_MATPLOTLIB = True
except ImportError:  # the examples then skip their plots
    HAS_MATPLOTLIB = False


def test_mass_spring_damper_pid_example(tmp_path, capsys):
    result = load_example("mass_spring_damper_pid").main(["--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert "final position" in out
    # The closed loop is linear: the final position is the matrix-exponential one.
    assert result["final_position"] == pytest.approx(result["exact_final_position"], abs=1e-6)
    assert result["exact_final_position"] == pytest.approx(0.998580468, abs=1e-9)
    # Closed-loop poles of s^3 + 2.5 s^2 + 12 s + 5: an underdamped pair, ~26 % overshoot.
    assert 20.0 < result["overshoot_percent"] < 30.0
    assert (result["png"] is not None) == HAS_MATPLOTLIB
    if HAS_MATPLOTLIB:
        assert os.path.getsize(result["png"]) > 5000
        assert os.path.dirname(result["png"]) == str(tmp_path)


def test_bouncing_ball_example(tmp_path, capsys):
    ex = load_example("bouncing_ball")
    result = ex.main(["--out", str(tmp_path), "--bounces", "10"])
    assert "largest error" in capsys.readouterr().out
    impacts = result["impact_times"]
    assert len(impacts) == 10
    np.testing.assert_allclose(impacts, ex.analytic_impacts(10, 0.8, 1.0), rtol=0, atol=1e-8)
    assert impacts[0] == pytest.approx(np.sqrt(2.0 / 9.81), abs=1e-9)
    assert (result["png"] is not None) == HAS_MATPLOTLIB
    if HAS_MATPLOTLIB:
        assert os.path.getsize(result["png"]) > 5000
        assert os.path.dirname(result["png"]) == str(tmp_path)
