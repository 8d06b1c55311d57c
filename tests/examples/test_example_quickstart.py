"""examples/quickstart.py (the README's quick start) runs, interpreted and compiled."""
import os

import pytest

from _examples import load_example


@pytest.mark.parametrize("compiled", [False, True])
def test_quickstart(tmp_path, compiled):
    ex = load_example("mass_spring_damper_pid")
    result = load_example("quickstart").main(["--out", str(tmp_path)] + (["--compiled"] if compiled else []))
    assert abs(result["final_position"] - ex.exact_position(10.0, 0.5)) < 1e-6
    assert result["plot"] is None or os.path.getsize(result["plot"]) > 1000
