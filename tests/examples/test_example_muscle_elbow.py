"""The muscle-driven elbow example: activation lags excitation, the forearm rises and falls
back to its stop, and the plot is saved."""
import numpy as np

from _examples import load_example


def test_muscle_elbow_rises_and_falls_back(tmp_path):
    out = load_example("muscle_elbow").main(["--out", str(tmp_path)])
    q, a = out["q"], out["activation"]
    assert np.degrees(q.max()) > 20.0                       # the burst lifts the hand
    assert abs(q[-1] - (-0.5)) < 1e-3                       # back on the lower stop
    assert a.max() <= 0.2 + 1e-9 and a[-1] < 1e-3           # activation follows excitation
    assert (tmp_path / "muscle_elbow.png").is_file()
