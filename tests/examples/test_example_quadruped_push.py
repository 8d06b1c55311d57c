"""The pushed quadruped: it gives way along the push and stands again."""
import numpy as np

from _examples import load_example


def test_quadruped_recovers_from_a_push(tmp_path):
    out = load_example("quadruped_push_impedance").main(
        ["--force", "40", "--heading", "30", "--duration", "1.2", "--out", str(tmp_path)])
    assert out["recovered"]
    assert out["max_shift"] > 0.005                              # the push moved the trunk
    heading = np.radians(30.0)
    assert out["push_direction"] @ [np.cos(heading), np.sin(heading)] > 0.8
    assert out["max_tilt"] < 0.1
    assert (tmp_path / "quadruped_push_impedance.png").is_file()
