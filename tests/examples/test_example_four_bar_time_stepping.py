"""examples/four_bar_time_stepping.py: the loop stays closed while the linkage moves."""
import os

from _examples import load_example


def test_four_bar_example(tmp_path):
    result = load_example("four_bar_time_stepping").main(["--out", str(tmp_path),
                                                          "--duration", "2"])
    assert result["max_error"] < 1e-6
    assert result["crank_range"] > 0.5
    assert result["plot"] is None or os.path.getsize(result["plot"]) > 1000
