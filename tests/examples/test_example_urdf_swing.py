"""examples/urdf_swing.py: a URDF model swings passively and conserves energy."""
import os

from _examples import load_example


def test_urdf_swing_example(tmp_path):
    result = load_example("urdf_swing").main(["--out", str(tmp_path), "--duration", "1.5"])
    assert result["drift"] < 1e-8
    assert result["plot"] is None or os.path.getsize(result["plot"]) > 1000
