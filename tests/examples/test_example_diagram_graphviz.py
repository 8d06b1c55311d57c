"""examples/diagram_graphviz.py runs and its numbers are right."""
import os

import numpy as np

from _examples import load_example


def test_diagram_graphviz_example(tmp_path):
    result = load_example("diagram_graphviz").main(["--out", str(tmp_path)])
    # u = kp (theta_d - theta) - kd theta_dot = 20 (1 - 0.5) - 0 = 10
    np.testing.assert_allclose(result["control"], [10.0])
    np.testing.assert_allclose(result["xdot"], [0.0, -9.81 * np.sin(0.5) + 10.0])
    assert os.path.getsize(result["picture"]) > 500
