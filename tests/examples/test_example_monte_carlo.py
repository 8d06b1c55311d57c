"""The Monte Carlo examples: the pushed quadruped (light pushes stood, a heavy one fell, a
sample re-run from its seed is bitwise identical) and the acrobot LQR's region of attraction
(upright is balanced, the estimate is odd-symmetric like the closed loop, far corners fail;
a Dask LocalCluster gives bitwise the same grid, skipped without dask.distributed)."""
import os

import numpy as np
import pytest

from _examples import load_example


def test_quadruped_push_monte_carlo(tmp_path):
    out = load_example("quadruped_push_monte_carlo").main(
        ["--samples", "2", "--seed", "10", "--force-range", "40", "460", "--duration", "0.7",
         "--out", str(tmp_path)])
    forces = out["pushes"][:, 0]
    assert len(out["results"]) == 2 and all(r.ok for r in out["results"])
    # seed 10 draws about 52 N and 364 N; the robot falls from about 300 N in this scene
    assert forces.min() < 60 and forces.max() > 350
    assert np.all(out["success"][forces < 100])
    assert not np.any(out["success"][forces > 350])
    assert out["success_rate"] == pytest.approx(out["success"].mean())
    assert out["rerun_identical"] is True
    assert (tmp_path / "quadruped_push_monte_carlo.png").is_file()


def test_acrobot_region_of_attraction(tmp_path):
    mod = load_example("acrobot_region_of_attraction")
    out = mod.main(["--grid", "5", "--duration", "3", "--out", str(tmp_path)])
    s, d = out["success"], out["distance"]
    assert s.shape == (5, 5)
    assert d[2, 2] < 1e-9                      # starting upright it stays upright
    assert np.array_equal(s, s[::-1, ::-1])    # the closed loop is odd: x -> -x
    assert not s[0, 0] and not s[-1, -1]       # both joints displaced the same way: lost
    assert 1 < s.sum() < s.size
    assert (tmp_path / "acrobot_region_of_attraction.png").is_file()


def test_cluster_note_on_few_cores():
    """--cluster warns where it cannot pay off: 2 cores or fewer, or fewer cores than workers."""
    from _cluster import few_cores_note
    assert "2 worker processes on 2 core(s)" in few_cores_note(2, cores=2)
    assert "process" in few_cores_note(1, cores=1)
    note = few_cores_note(4, cores=3)            # fewer cores than workers
    assert note.startswith("note: 4 worker processes on 3 core(s): expect little or no "
                           "speed-up over a serial run")
    assert few_cores_note(2, cores=8) is None and few_cores_note(4, cores=4) is None


def test_acrobot_region_of_attraction_on_dask_cluster(tmp_path, capsys):
    pytest.importorskip("distributed", reason="dask.distributed is not installed (extra "
                        "[cluster])")
    mod = load_example("acrobot_region_of_attraction")
    args = ["--grid", "3", "--duration", "2", "--out", str(tmp_path)]
    serial = mod.main(args)
    capsys.readouterr()
    cluster = mod.main(args + ["--cluster"])
    assert np.array_equal(serial["distance"], cluster["distance"])
    printed = capsys.readouterr().out
    assert ("note: 2 worker processes" in printed) == (os.cpu_count() <= 2)
