"""The continuous-time RigidBodySystem examples run quickly, save their plots, and their
numbers are right."""
import os

import numpy as np
import pytest

from _examples import load_example

try:
    import matplotlib  # noqa: F401
    HAS_MATPLOTLIB = True
except ImportError:  # the examples then skip their plots
    HAS_MATPLOTLIB = False


def _png(result, tmp_path):
    assert (result["png"] is not None) == HAS_MATPLOTLIB
    if HAS_MATPLOTLIB:
        assert os.path.dirname(result["png"]) == str(tmp_path)
        assert os.path.getsize(result["png"]) > 5000


def test_four_bar_continuous_example(tmp_path, capsys):
    r = load_example("four_bar_continuous").main(["--out", str(tmp_path), "--duration", "1.0"])
    assert "linearized frequency" in capsys.readouterr().out
    assert r["max_violation"] < 1e-8
    assert r["energy_drift"] < 1e-6
    assert r["omega_linearized"] == pytest.approx(r["omega_analytic"], rel=1e-9)
    assert r["omega_analytic"] == pytest.approx(4.7439744997, abs=1e-9)
    _png(r, tmp_path)


def test_slider_crank_example(tmp_path, capsys):
    r = load_example("slider_crank").main(["--out", str(tmp_path), "--duration", "0.5"])
    assert "closure error" in capsys.readouterr().out
    assert r["max_violation"] < 1e-8
    assert r["energy_drift"] < 1e-6
    assert r["id_error"] < 1e-9
    assert r["max_force"] > 1.0
    _png(r, tmp_path)


def test_bouncing_ball_contact_example(tmp_path, capsys):
    r = load_example("bouncing_ball_contact").main(["--out", str(tmp_path), "--duration", "1.4"])
    assert "largest error" in capsys.readouterr().out
    assert len(r["impact_times"]) >= 12
    assert r["max_error"] < 1e-8
    assert r["impact_times"][0] == pytest.approx(np.sqrt(2 / 9.81), abs=1e-9)
    assert r["resting_normal_force"] == pytest.approx(9.81, abs=1e-9)
    _png(r, tmp_path)


def test_sliding_box_example(tmp_path, capsys):
    r = load_example("sliding_box").main(["--out", str(tmp_path), "--duration", "0.25"])
    assert "stopping distance" in capsys.readouterr().out
    assert abs(r["stop_distance"] - r["analytic_distance"]) < 1e-6
    assert abs(r["stop_time"] - r["analytic_time"]) < 1e-8
    assert r["analytic_distance"] == pytest.approx(1 / (2 * 0.5 * 9.81))
    _png(r, tmp_path)


def test_ball_closure_pendulum_example(tmp_path):
    result = load_example("ball_closure_pendulum").main(["--out", str(tmp_path), "--duration", "1.5"])
    assert result["gap"] < 1e-6
    assert result["closure_error"] < 1e-8
