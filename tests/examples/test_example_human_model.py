"""examples/human_model.py: the small HDM skeleton builds, lists, exports to URDF and loads back
exactly (our reader, and Pinocchio when installed); a synthetic C3D is checked for markers."""
import json
import os

import numpy as np
import pytest

from _examples import load_example


def test_human_model_example(tmp_path):
    r = load_example("human_model").main(["--out", str(tmp_path)])
    assert (r["segments"], r["joint_dof"], r["nv"], r["nq"]) == (7, 12, 18, 19)
    assert r["reload_nq_nv"] == [19, 18] and r["reload_mass_error"] < 1e-12
    assert r["reload_fk_error"] < 1e-12
    if "pinocchio_rnea_error" in r:
        assert r["pinocchio_nq_nv"] == [19, 18]
        assert r["pinocchio_mass_matrix_error"] < 1e-12 and r["pinocchio_rnea_error"] < 1e-10
    assert sum(s["mass"] for s in r["segment_table"]) == pytest.approx(r["mass"], rel=1e-14)
    assert os.path.getsize(tmp_path / "model.urdf") > 1000
    assert json.loads((tmp_path / "human_model.json").read_text())["joint_dof"] == 12
    assert r["plot"] is None or os.path.getsize(r["plot"]) > 1000


def test_human_model_example_scaled_with_a_capture(tmp_path):
    pytest.importorskip("ezc3d", reason="ezc3d (the [mocap] extra) is not installed")
    from sensors import MarkerData, write_c3d
    ex = load_example("human_model")
    labels = ["Sub:STRN", "Sub:C7", "Sub:RSHO", "Sub:RASI"]
    pos = np.zeros((3, 4, 3)) + 0.5
    write_c3d(tmp_path / "t.c3d", MarkerData(np.arange(3) / 120, labels, pos, 120.0))
    r = ex.main(["--out", str(tmp_path), "--height", "1.7", "--mass", "60",
                 "--c3d", str(tmp_path / "t.c3d")])
    assert r["height"] == pytest.approx(1.7) and r["mass"] == pytest.approx(60.0)
    assert r["c3d"]["frames"] == 3 and r["c3d"]["rate_hz"] == 120.0
    assert r["c3d"]["missing_model_markers"][:2] == ["LASI", "SACR"]
    assert len(r["c3d"]["missing_model_markers"]) == 16 - 4
