"""The human walking example on a synthetic capture written by the test as a C3D (the
two-legged walker of examples/data): it fits, solves the contact inverse dynamics, runs the
three experiments and writes model.urdf, fit.npz and report.json as the issue specifies; the
fit.npz configuration, read with the URDF by Pinocchio, puts the markers where the capture has
them. The default run (synthetic walk, no file) reports what a walk looks like: a level floor,
ground forces that carry the body's weight over whole strides, a small pelvis residual."""
import importlib.util
import json

import numpy as np
import pytest

from _examples import load_example


def test_human_walking_on_a_synthetic_c3d(tmp_path):
    pytest.importorskip("ezc3d", reason="the example reads a C3D through ezc3d ([mocap] extra)")
    ex = load_example("human_walking")
    from multibody.models import human_model
    from sensors import write_c3d
    skeleton = ex.os.path.join(ex.WALKER, "walker_skeleton.txt")
    markers = ex.os.path.join(ex.WALKER, "walker_markers.txt")
    model = human_model(skeleton, markers)
    data = ex.synthetic_capture(model, 168)           # 1.4 s: one whole stride
    path = tmp_path / "walk.c3d"
    write_c3d(path, data)
    ex.main(["--c3d", str(path), "--skeleton", skeleton, "--marker-set", markers,
             "--out", str(tmp_path), "--noise-frames", "24", "--noise-repetitions", "2",
             "--noise-levels", "0.1,4,64", "--no-consistent", "--no-flat-feet"])
    # (--no-flat-feet: the synthetic markers sit at their true offsets, which the flat-feet
    # recalibration would move by ~2 mm, the generator's resting feet not lying exactly as in
    # the reference pose; the Pinocchio check below holds the fit to 1 mm)
    rep = json.loads((tmp_path / "report.json").read_text())
    assert rep["dof"] == 25 and rep["mass"] == pytest.approx(model.mass)
    assert rep["strides"] >= 1 and rep["floor_tilt_deg"] < 2.0
    assert 0.9 < rep["mean_vertical_grf_over_weight"] < 1.1
    assert rep["pelvis_residual_over_weight"] < 0.15
    assert rep["marker_rms_m"] < 1e-3
    assert rep["capture_rate_hz"] == 120.0 and rep["fit_frames_per_s"] > 0
    for key in ("mean_vertical_grf_over_weight", "pelvis_residual_rms_n", "arm_swing_cost_ratio"):
        assert np.isfinite(rep[key])
    noise = rep["noise_study"]
    assert [r["noise_mm"] for r in noise] == [0.1, 0.5, 1, 2, 4, 8, 16, 32, 64]
    assert noise[0]["joint_angle_error_deg"] < noise[-1]["joint_angle_error_deg"]
    # the paper's protocol on the forward pass (here 3 levels x 2 draws): its rows and keys
    rows = rep["noise_study_protocol"]
    assert [r["sigma_mm"] for r in rows] == [0.1, 4.0, 64.0]
    assert all(r["repetitions"] == 2 and r["angle_err_deg_se"] >= 0 for r in rows)
    assert rows[0]["angle_err_deg_mean"] < rows[1]["angle_err_deg_mean"] \
        < rows[2]["angle_err_deg_mean"]
    assert rows[0]["torque_err_nm_mean"] < rows[2]["torque_err_nm_mean"]
    # the scaling (on by default): a factor per segment, near 1 for the walker's own
    # markers, the subject's mass kept
    scale = rep["segment_scale"]
    assert set(scale) == {b.name for b in model.tree.bodies[1:]}
    assert all(abs(s - 1.0) < 0.01 for s in scale.values())
    assert rep["scaling"]["marker_rms_after_m"] < 1e-3
    assert "residual_force_rms_after_n" not in rep                 # --no-consistent
    assert rep["residual_force_rms_before_n"] == rep["pelvis_residual_rms_n"]
    assert (tmp_path / "model.urdf").is_file()
    if importlib.util.find_spec("matplotlib") is not None:      # plots are optional
        for name in ("walking_motion.png", "walking_stick.png", "walking_cost.png",
                     "walking_noise.png"):
            assert (tmp_path / name).is_file()
    z = np.load(tmp_path / "fit.npz")
    T = len(data.times)
    assert z["t"].shape == (T,) and z["q"].shape == (T, 7 + 19) and z["tau"].shape == (T, 25)
    assert z["q_fit"].shape == z["q"].shape and z["v"].shape == z["vdot"].shape == (T, 25)
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


def test_default_run_is_a_plausible_walk(tmp_path, capsys):
    """Without a capture the example analyses its synthetic walk (two strides): the floor it
    fits is level, the mean vertical ground force over whole strides is the body weight (the
    motion is periodic, so the centre of mass has no mean vertical acceleration), and the
    ground forces explain the motion up to a small pelvis residual."""
    out = load_example("human_walking").main(["--out", str(tmp_path), "--no-experiments",
                                              "--no-plot"])
    rep = out["report"]
    assert rep["dof"] == 25 and rep["frames"] == 288 and rep["strides"] == 2
    assert rep["floor_tilt_deg"] < 2.0
    assert 0.9 < rep["mean_vertical_grf_over_weight"] < 1.1
    assert rep["pelvis_residual_over_weight"] < 0.15
    assert rep["marker_rms_m"] < 1e-3
    printed = capsys.readouterr().out
    assert "floor tilt" in printed and "2 whole stride(s)" in printed
    # the forward pass: the walk simulated from its torques, pelvis not actuated
    fp = rep["forward_pass"]
    assert fp["pelvis_actuated"] is False and min(fp["actuated_velocity_indices"]) == 6
    assert fp["joint_angle_rms_deg"] < 3.0
    assert np.isfinite(fp["marker_rms_m"]) and fp["realtime_factor"] > 0
    assert out["forward_pass"].q.shape == out["trajectory"].q.shape
    fit, fwd = np.load(tmp_path / "fit.npz"), np.load(tmp_path / "forward.npz")
    np.testing.assert_array_equal(fwd["t"], fit["t"])
    assert fwd["q"].shape == fit["q"].shape
    # same order as fit.npz: the first frame is the reference's, the joint angles follow it
    np.testing.assert_allclose(fwd["q"][0], fit["q"][0], atol=1e-9)
    d = np.degrees(fwd["q"][:, 7:] - fit["q"][:, 7:])
    assert np.sqrt(np.mean(d ** 2)) == pytest.approx(fp["joint_angle_rms_deg"], rel=0.05)


def test_synthetic_walk_kinematics():
    """The generator's walk: 1.2 m/s, pelvis at a standing-like height, a stance foot at rest
    on the floor (its lowest corners at z = 0 and not moving), knee and hip angles in the
    ranges of normal gait, arms swinging."""
    ex = load_example("human_walking")
    from multibody.models import human_model
    model = human_model(ex.os.path.join(ex.WALKER, "walker_skeleton.txt"),
                        ex.os.path.join(ex.WALKER, "walker_markers.txt"))
    tree = model.tree
    rate = 120.0
    t = np.arange(int(1.1 * rate) + 1) / rate               # one stride and a frame
    Q = ex.walk_configurations(model, t)
    root = tree.joints[0]
    y, z = Q[:, root.q_start + 5], Q[:, root.q_start + 6]
    assert (y[-1] - y[0]) / (t[-1] - t[0]) == pytest.approx(1.2, rel=0.02)
    stand = model.reference_configuration()[root.q_start + 6]
    assert np.all(z < stand) and np.all(z > stand - 0.08)
    corners = {b: np.asarray(p) for b, p in model.foot_contact_points.items()}

    def lowest(body, q):
        T = np.asarray(tree.body_pose(body, q), float)
        return np.min((T[:3, :3] @ corners[body].T).T + T[:3, 3], axis=0)

    # mid stance of the right foot (right heel strike at 0.1 s): flat on the floor, at rest
    k0, k1 = int(0.25 * rate), int(0.35 * rate)
    P = np.array([lowest("r-foot", Q[k]) for k in range(k0, k1)])
    assert np.abs(P[:, 2]).max() < 1e-3 and np.ptp(P[:, :2], axis=0).max() < 1e-3
    knee = np.degrees(Q[:, tree.get_joint("r-shank_joint").q_start])
    hip = np.degrees(Q[:, tree.get_joint("r-thigh_joint").q_start])
    arm = np.degrees(Q[:, tree.get_joint("r-arm_joint").q_start])
    assert 45 < -knee.min() < 75 and -knee.max() < 25          # swing peak, stance
    assert 25 < np.ptp(hip) < 70 and 20 < np.ptp(arm) < 45


def test_consistent_motion_option(tmp_path):
    """``--consistent --no-rigid-feet`` on a short synthetic clip (a few IPOPT iterations,
    the band solution alone; the rigid stages: ``test_rigid_feet_option``): the report's
    after-keys are the stride-window (here whole-clip) pelvis residual of the independent
    inverse dynamics on the optimised motion and its marker RMS, and fit.npz and the forward
    pass carry the optimised motion (its spline derivatives, not a re-smoothed q)."""
    ex = load_example("human_walking")
    out = ex.main(["--out", str(tmp_path), "--synthetic-frames", "60", "--consistent",
                   "--no-rigid-feet", "--consistent-iterations", "3", "--no-experiments",
                   "--no-plot", "--time-step", "0.004"])
    rep, model = out["report"], out["model"]
    res, traj = out["inverse_dynamics"], out["trajectory"]
    a, b = rep["stride_frames"]
    assert rep["residual_force_rms_after_n"] == pytest.approx(
        float(np.sqrt(np.mean(np.sum(res.residual[a:b, 3:] ** 2, axis=1)))), rel=1e-12)
    assert np.isfinite(rep["residual_force_rms_before_n"])
    assert rep["marker_rms_after_m"] < 0.01
    cm = rep["consistent_motion"]
    assert cm["iterations"] <= 3 and cm["marker_rms_warm_start_m"] < 0.01
    z = np.load(tmp_path / "fit.npz")
    np.testing.assert_array_equal(z["q"], model.configuration_to_urdf_order(traj.q))
    np.testing.assert_array_equal(z["vdot"], model.velocity_to_urdf_order(traj.vdot))
    np.testing.assert_array_equal(z["tau"], model.velocity_to_urdf_order(res.tau))
    # the optimised motion differs from the per-frame fit (it was moved by the optimiser)
    assert np.abs(z["q"] - z["q_fit"]).max() > 0
    fwd = np.load(tmp_path / "forward.npz")
    np.testing.assert_allclose(fwd["q"][0], z["q"][0], atol=1e-9)


def test_choose_forward_pass_scores_and_blow_ups():
    """``choose_forward_pass`` on stand-in forward passes whose runs put one marker at a
    known distance from the capture (the offset of each start, set per candidate): the
    score is the median over the start and the nudged starts, a run that blows up counts as
    infinitely far, a candidate that blows up from the exact start is never chosen, and
    when every candidate does, the choice raises ``SimulationError``."""
    from types import SimpleNamespace
    from systems.errors import SimulationError
    ex = load_example("human_walking")
    hx = importlib.import_module(ex.consistent_motion.__module__)
    K = 5
    traj = SimpleNamespace(q=np.zeros((K, 1)), v=np.zeros((K, 7)), tau=None)
    res = SimpleNamespace(tau=np.zeros((K, 7)))
    fitter = SimpleNamespace(marker_positions=lambda q: np.array([[q[0], 0.0, 0.0]]))
    X = np.zeros((K, 1, 3))

    class Fake:
        def __init__(self, errors):
            self.errors, self.calls = errors, 0

        def run(self, q, v, tau):
            e = self.errors[self.calls]
            self.calls += 1
            if e is None:
                raise SimulationError("blew up")
            return SimpleNamespace(q=np.full((K, 1), e), joint_angle_rms_deg=10 * e)

        def run_batch(self, refs, skip_failed=False):     # ForwardPass.run_batch's contract
            outs = []
            for r in refs:
                try:
                    outs.append(self.run(*r))
                except SimulationError:
                    if not skip_failed:
                        raise
                    outs.append(None)
            return outs

    def build(errors):
        return Fake(errors)
    cands = [("steady", {"errors": [0.02, 0.03, 0.03, 0.03]}),
             ("lucky", {"errors": [0.01, None, None, 0.05]}),      # median inf
             ("fragile", {"errors": [None, 0.001, 0.001, 0.001]})]  # blows up from the start
    fp, name, table = hx.choose_forward_pass(build, traj, res, fitter, X, cands, nudges=3)
    assert name == "steady" and fp.calls == 4
    assert table[0]["marker_rms_m"] == pytest.approx(0.02)
    assert table[0]["marker_rms_m_median"] == pytest.approx(0.03)
    assert table[0]["joint_angle_rms_deg"] == pytest.approx(0.2)
    assert table[1]["failed_runs"] == 2 and table[1]["marker_rms_m_median"] is None
    assert table[1]["marker_rms_m_max"] is None
    assert table[2]["failed_runs"] == 1 and table[2]["marker_rms_m"] is None
    assert table[2]["marker_rms_m_median"] is None and table[2]["joint_angle_rms_deg"] is None
    json.dumps(table, allow_nan=False)                   # the report's rows are strict JSON
    # the nudged starts: copies, the first the reference's own, the pelvis velocity moved
    starts = hx.nudged_starts(traj.v, 3)
    assert starts[0] is traj.v and all(np.abs(s[0, 3:6]).max() > 0 for s in starts[1:])
    assert all(np.array_equal(s[1:], traj.v[1:]) and not np.shares_memory(s, traj.v)
               for s in starts[1:])
    with pytest.raises(SimulationError, match="every controller blew up.*fragile"):
        hx.choose_forward_pass(build, traj, res, fitter, X, cands[2:], nudges=3)


def test_halfway_stage():
    """The stage between two rigid-feet stages: geometric means of the contact scales and
    band ends, a term new in the stage at four times its scale, the residual scales never
    tighter than the stage's, everything else the stage's."""
    ex = load_example("human_walking")
    hx = importlib.import_module(ex.consistent_motion.__module__)
    s1, s2 = hx.RIGID_STAGES
    h = hx.halfway_stage({}, s1)                  # from the band solution
    assert h["contact_band"] == pytest.approx((np.sqrt(0.04 * s1["contact_band"][0]),
                                               np.sqrt(0.07 * s1["contact_band"][1])))
    assert h["contact_height_scale"] == pytest.approx(4 * s1["contact_height_scale"])
    assert h["penetration_scale"] == pytest.approx(4 * s1["penetration_scale"])
    assert h["slip_speed_scale"] == pytest.approx(np.sqrt(0.1 * s1["slip_speed_scale"]))
    assert h["residual_force_scale"] == s1["residual_force_scale"]   # 0.5 N is tighter
    for key in ("support_margin", "offset_scale", "max_iterations", "ipopt_options"):
        assert h[key] == s1[key]
    h = hx.halfway_stage(s1, s2)                  # the residual tightened halfway
    assert h["residual_force_scale"] == pytest.approx(np.sqrt(
        s1["residual_force_scale"] * s2["residual_force_scale"]))
    assert h["contact_height_scale"] == pytest.approx(np.sqrt(
        s1["contact_height_scale"] * s2["contact_height_scale"]))
    assert h["contact_band"] == pytest.approx(s2["contact_band"])


def test_rigid_feet_option(tmp_path, monkeypatch):
    """``--rigid-feet`` on the short synthetic clip: the band solution, then the rigid-feet
    stages from it. The report lists every stage; when the stages hold, the saved motion goes
    with the refined marker offsets (its markers with them give the report's marker RMS) and
    the forward pass tries every controller of ``RIGID_CONTROLLERS`` and keeps the best
    median; when one diverges, the band solution and
    its offsets are kept. Here the first stage is made to diverge once: it is run again from
    the band solution through a halfway stage, and the stages go on."""
    ex = load_example("human_walking")
    hx = importlib.import_module(ex.consistent_motion.__module__)
    calls, holds = [], hx._stage_holds

    def diverge_once(new, old, sl):
        calls.append(new)
        return len(calls) > 1 and holds(new, old, sl)
    monkeypatch.setattr(hx, "_stage_holds", diverge_once)
    out = ex.main(["--out", str(tmp_path), "--synthetic-frames", "60", "--consistent",
                   "--rigid-feet", "--consistent-iterations", "3", "--no-experiments",
                   "--no-plot", "--time-step", "0.004"])
    rep, model, traj = out["report"], out["model"], out["trajectory"]
    cm = rep["consistent_motion"]
    assert len(cm["rigid_stages"]) == len(ex.RIGID_STAGES)
    assert cm["rigid_feet"] and cm["rigid_stage_diverged"] is None   # this clip holds
    assert [s["stage"] for s in cm["stages"]] == ["band", "1", "1 halfway", "1 again", "2"]
    assert len(calls) == 4
    # the stage again starts from the halfway stage's motion, which started from the band's
    # (a run's marker_rms_before is that of the spline refitted to its warm start)
    assert calls[1].marker_rms_before == pytest.approx(cm["stages"][0]["marker_rms_m"],
                                                       rel=1e-3)
    assert calls[2].marker_rms_before == pytest.approx(calls[1].marker_rms, rel=1e-3)
    assert abs(calls[1].marker_rms / cm["stages"][0]["marker_rms_m"] - 1) > 0.1
    fm = out["fitter_motion"]
    z = np.load(tmp_path / "fit.npz")
    np.testing.assert_array_equal(z["marker_offsets"], fm.marker_offsets)
    P = np.array([fm.marker_positions(q) for q in traj.q])
    rms = float(np.sqrt(np.nanmean(np.sum((P - out["markers"]) ** 2, axis=2))))
    assert rms == pytest.approx(rep["marker_rms_after_m"], rel=1e-6)
    change = np.linalg.norm(fm.marker_offsets - out["fitter"].marker_offsets, axis=1)
    assert cm["marker_offset_change_max_m"] == pytest.approx(change.max(), abs=1e-15)
    assert 1e-5 < change.max() < 0.03                     # refined, within a few offset scales
    # every controller on rigid feet tried from 1 + NUDGES starts; the best median kept
    tried = rep["forward_pass"]["controllers_tried"]
    assert [r["name"] for r in tried] == [name for name, _ in hx.RIGID_CONTROLLERS]
    best = min(tried, key=lambda r: r["marker_rms_m_median"])
    assert rep["forward_pass"]["controller"] == best["name"]
    assert rep["forward_pass"]["marker_rms_m"] == pytest.approx(best["marker_rms_m"], rel=1e-9)
    assert all(r["failed_runs"] == 0 and r["marker_rms_m"] is not None for r in tried)
    # the saved contact points are where the forces act: inset from the feet's corners
    inset = np.linalg.norm(z["contact_points"] - out["contact_inverse_dynamics"].points, axis=1)
    assert np.all(inset > 0.005)
    assert rep["forward_pass"]["joint_angle_rms_deg"] < 3
