"""The human walking example on a synthetic capture written by the test as a C3D (the small
skeleton of tests/data): it fits, solves the contact inverse dynamics, runs the three
experiments and writes model.urdf, fit.npz and report.json as the issue specifies; the fit.npz
configuration, read with the URDF by Pinocchio, puts the markers where the capture has them."""
import importlib.util
import json

import numpy as np
import pytest

from _examples import load_example

pytest.importorskip("ezc3d", reason="the example reads a C3D through ezc3d ([mocap] extra)")


def test_human_walking_on_a_synthetic_c3d(tmp_path):
    ex = load_example("human_walking")
    from multibody.models import human_model
    from sensors import write_c3d
    skeleton = ex.os.path.join(ex.DATA, "hdm_small_skeleton.txt")
    markers = ex.os.path.join(ex.DATA, "hdm_small_markers.txt")
    model = human_model(skeleton, markers)
    data = ex.synthetic_capture(model, 48)
    path = tmp_path / "walk.c3d"
    write_c3d(path, data)
    ex.main(["--c3d", str(path), "--skeleton", skeleton, "--marker-set", markers,
             "--out", str(tmp_path), "--noise-frames", "24"])
    rep = json.loads((tmp_path / "report.json").read_text())
    assert rep["dof"] == 18 and rep["mass"] == pytest.approx(model.mass)
    assert rep["marker_rms_m"] < 1e-3
    assert rep["capture_rate_hz"] == 120.0 and rep["fit_frames_per_s"] > 0
    for key in ("mean_vertical_grf_over_weight", "pelvis_residual_rms_n", "arm_swing_cost_ratio"):
        assert np.isfinite(rep[key])
    noise = rep["noise_study"]
    assert [r["noise_mm"] for r in noise] == [0.1, 0.5, 1, 2, 4, 8, 16, 32, 64]
    assert noise[0]["joint_angle_error_deg"] < noise[-1]["joint_angle_error_deg"]
    assert (tmp_path / "model.urdf").is_file()
    if importlib.util.find_spec("matplotlib") is not None:      # plots are optional
        for name in ("walking_motion.png", "walking_stick.png", "walking_cost.png",
                     "walking_noise.png"):
            assert (tmp_path / name).is_file()
    z = np.load(tmp_path / "fit.npz")
    T = len(data.times)
    assert z["t"].shape == (T,) and z["q"].shape == (T, 7 + 12) and z["tau"].shape == (T, 18)
    assert z["q_fit"].shape == z["q"].shape and z["v"].shape == z["vdot"].shape == (T, 18)
    assert z["grf"].shape == (T, 3)
    assert list(z["marker_names"]) == [n for n, _, _ in model.markers]
    # Pinocchio reads the URDF with a free flyer and the npz q in its own order
    pin = pytest.importorskip("pinocchio", reason="Pinocchio cross-check of fit.npz")
    pm = pin.buildModelFromUrdf(str(tmp_path / "model.urdf"), pin.JointModelFreeFlyer())
    pd = pm.createData()
    X = data.positions
    err = []
    for k in (0, T // 2, T - 1):
        pin.framesForwardKinematics(pm, pd, z["q_fit"][k])
        for i, (link, o) in enumerate(zip(z["marker_links"], z["marker_offsets"])):
            M = pd.oMf[pm.getFrameId(str(link))]
            err.append(np.linalg.norm(M.rotation @ o + M.translation - X[k, i]))
    assert max(err) < 1e-3
    # Pinocchio's RNEA on the same motion, minus the contact forces through its own point
    # Jacobians, gives the torques of fit.npz (ours: residual wrench first, then the joints)
    for k in (5, T // 2, T - 6):
        q, v, a = z["q"][k], z["v"][k], z["vdot"][k]
        pin.computeJointJacobians(pm, pd, q)
        pin.framesForwardKinematics(pm, pd, q)
        gen = np.zeros(pm.nv)
        for link, p, f in zip(z["contact_links"], z["contact_points"], z["contact_forces"][k]):
            fid = pm.getFrameId(str(link))
            M = pd.oMf[fid]
            J = pin.getFrameJacobian(pm, pd, fid, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
            r = M.rotation @ p
            Jp = J[:3] - np.cross(r, J[3:].T).T            # v_p = v_o + w x r
            gen += Jp.T @ f
        tau = pin.rnea(pm, pd, q, v, a) - gen
        np.testing.assert_allclose(tau, z["tau"][k], atol=1e-6 * max(1.0, np.abs(tau).max()))
