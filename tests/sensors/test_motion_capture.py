"""C3D reading through ezc3d: units to metres, occlusions as NaN, marker names matched
regardless of a subject prefix, and named errors."""
import builtins
import sys

import numpy as np
import pytest

from sensors import MarkerData, MotionCaptureError, read_c3d, write_c3d


def _data():
    t = np.arange(6) / 100.0
    labels = ["Subj:RBHD", "Subj:LBHD", "Subj:C7"]
    rng = np.random.default_rng(0)
    pos = np.round(rng.uniform(-1, 1, size=(6, 3, 3)), 3)  # whole millimetres
    pos[2, 1] = np.nan  # LBHD occluded in frame 2
    return MarkerData(t, labels, pos, 100.0, "synthetic")


def test_write_then_read_a_c3d(tmp_path):
    pytest.importorskip("ezc3d", reason="ezc3d (the [mocap] extra) is not installed")
    d = _data()
    path = tmp_path / "trial.c3d"
    write_c3d(path, d)
    r = read_c3d(path)
    assert r.labels == d.labels and r.names == ["RBHD", "LBHD", "C7"]
    assert r.rate_hz == 100.0
    np.testing.assert_allclose(r.times, d.times, atol=1e-15)
    assert r.positions.shape == (6, 3, 3)
    assert np.isnan(r.positions[2, 1]).all() and np.isfinite(np.delete(r.positions, 1, 1)).all()
    assert r.visible()[2].tolist() == [True, False, True]
    # stored in millimetres as float32: metres to within float32 rounding of 1 mm units
    np.testing.assert_allclose(r.positions, d.positions, atol=1e-7, equal_nan=True)


def test_units_and_zero_coordinates(tmp_path):
    """POINT:UNITS 'cm' scales by 1e-2; all-zero coordinates are read as occluded."""
    ezc3d = pytest.importorskip("ezc3d", reason="ezc3d (the [mocap] extra) is not installed")
    c = ezc3d.c3d()
    c["parameters"]["POINT"]["RATE"]["value"] = [50.0]
    c["parameters"]["POINT"]["LABELS"]["value"] = ["A", "B"]
    c["parameters"]["POINT"]["UNITS"]["value"] = ["cm"]
    pts = np.ones((4, 2, 3))
    pts[:3, 0, :] = [[100.0], [200.0], [50.0]]
    pts[:3, 1, :] = 0.0
    c["data"]["points"] = pts
    path = tmp_path / "cm.c3d"
    c.write(str(path))
    r = read_c3d(path)
    np.testing.assert_allclose(r.positions[:, 0], [[1.0, 2.0, 0.5]] * 3)
    assert np.isnan(r.positions[:, 1]).all()
    np.testing.assert_allclose(r.times, [0, 0.02, 0.04])


def test_select_matches_with_or_without_prefix():
    d = _data()
    s = d.select(["C7", "Subj:RBHD", "Other:LBHD"])
    assert s.labels == ["Subj:C7", "Subj:RBHD", "Subj:LBHD"]
    np.testing.assert_array_equal(s.positions[:, 0], d.positions[:, 2])
    with pytest.raises(MotionCaptureError) as exc:
        d.select(["RBHD", "RFHD", "LFIN"])
    msg = str(exc.value)
    assert "synthetic: 2 needed marker(s) missing: RFHD, LFIN" in msg and "Subj:C7" in msg
    dup = MarkerData(d.times, ["A:X", "B:X", "C7"], d.positions, 100.0, "two")
    with pytest.raises(MotionCaptureError, match="marker 'X' matches several labels: A:X, B:X"):
        dup.select(["X"])
    assert dup.select(["A:X"]).labels == ["A:X"]  # an exact label is not ambiguous
    f = d.frames(0, 6, 2)
    assert f.positions.shape == (3, 3, 3) and f.rate_hz == 50.0


def test_bad_input_is_named(tmp_path, monkeypatch):
    with pytest.raises(MotionCaptureError, match=r"positions must have shape \(T, M, 3\) = "
                                                  r"\(2, 1, 3\)"):
        MarkerData(np.zeros(2), ["a"], np.zeros((2, 2, 3)), 10.0, "x")
    with pytest.raises(MotionCaptureError, match=r"x: rate_hz must be a finite number > 0 "
                                                  r"\(Hz\), got 0.0"):
        MarkerData(np.zeros(2), ["a"], np.zeros((2, 1, 3)), 0.0, "x")
    with pytest.raises(MotionCaptureError, match="rate_hz .* got nan"):
        MarkerData(np.zeros(2), ["a"], np.zeros((2, 1, 3)), float("nan"), "x")
    with pytest.raises(MotionCaptureError, match=r"x: times must have shape \(T,\)"):
        MarkerData(np.zeros((2, 1)), ["a"], np.zeros((2, 1, 3)), 10.0, "x")
    ok = MarkerData(np.arange(4) / 10.0, ["a"], np.zeros((4, 1, 3)), 10, "x")
    assert ok.rate_hz == 10.0 and ok.frames(step=2).rate_hz == 5.0
    with pytest.raises(MotionCaptureError, match="x: frames\\(\\) step must be an integer >= 1"):
        ok.frames(step=0)
    with pytest.raises(FileNotFoundError, match="C3D file .*nothing.c3d' does not exist"):
        read_c3d(tmp_path / "nothing.c3d")
    junk = tmp_path / "junk.c3d"
    junk.write_bytes(b"not a c3d file at all")
    if "ezc3d" in sys.modules or _has_ezc3d():
        with pytest.raises(MotionCaptureError, match="junk.c3d: not a readable C3D file"):
            read_c3d(junk)
    real_import = builtins.__import__

    def no_ezc3d(name, *args, **kwargs):
        if name == "ezc3d":
            raise ImportError("No module named 'ezc3d'")
        return real_import(name, *args, **kwargs)

    monkeypatch.delitem(sys.modules, "ezc3d", raising=False)
    monkeypatch.setattr(builtins, "__import__", no_ezc3d)
    with pytest.raises(ImportError, match=r"pip install 'dynablocks\[mocap\]'"):
        read_c3d(junk)


def _has_ezc3d():
    try:
        import ezc3d  # noqa: F401
    except ImportError:
        return False
    return True
