"""examples/contact_spheres_boxes.py and examples/quadruped_standing.py (time-stepping contact):
short runs checked against analytic numbers."""
import os

import numpy as np
import pytest

from _examples import load_example

pytest.importorskip("multibody.plants",
                    reason="multibody.plants (TimeSteppingRigidBodySystem) not available")


def test_contact_spheres_boxes(tmp_path):
    r = load_example("contact_spheres_boxes").main(["--out", str(tmp_path), "--duration", "0.6"])
    # a dropped ball at rest carries its weight: contact force = m g (1 %)
    assert r["rest_force_ratio"] == pytest.approx(1.0, abs=0.01)
    assert r["final"]["ball_drop"]["position"][2] == pytest.approx(0.08, abs=1e-3)
    # Coulomb friction stops a box launched at v0 after v0^2 / (2 mu g) (2 %)
    assert r["box_stop_distance"] == pytest.approx(r["box_stop_expected"], rel=0.02)
    # ... and exactly where the implicit recurrence v_{k+1} = v_k - mu g h says (0.1 %)
    assert r["box_stop_distance"] == pytest.approx(r["box_stop_discrete"], rel=1e-3)
    assert np.linalg.norm(r["final"]["box_slide"]["velocity"]) < 1e-6
    # a ball launched without spin rolls on at 5/7 v0 (solid sphere), rolling without slip
    assert r["roll_speed_ratio"] == pytest.approx(5 / 7, rel=0.01)
    ball = r["final"]["ball_roll"]
    assert ball["omega"][1] * 0.05 == pytest.approx(ball["velocity"][0], rel=1e-3)
    # the small ball rests on the tilted-then-settled box (no penetration beyond 1 mm)
    assert abs(r["ball_on_box_gap"]) < 1e-3
    assert r["plot"] is not None and os.path.getsize(r["plot"]) > 1000


def test_quadruped_standing(tmp_path):
    r = load_example("quadruped_standing").main(["--out", str(tmp_path), "--duration", "0.6"])
    assert r["standing"]
    # the trunk stays within 1 cm of the stance height after the 1 cm drop, barely tilting
    assert r["z_nominal"] - 0.01 < r["z_min"] <= r["z_max"] < r["z_nominal"] + 0.01
    assert r["max_tilt"] < np.radians(2.0)
    # the four feet carry the whole weight (3 %), split front/rear as statics says (10 %)
    assert r["force_ratio"] == pytest.approx(1.0, abs=0.03)
    f = r["foot_forces"]
    assert f[0] == pytest.approx(f[1], rel=0.05) and f[2] == pytest.approx(f[3], rel=0.05)
    np.testing.assert_allclose(f, r["foot_forces_static"], rtol=0.1)
    assert f[2] > 1.1 * f[0]  # the centre of mass is behind the trunk origin
    assert r["plot"] is not None and os.path.getsize(r["plot"]) > 1000


def test_bench_time_stepping_scenes_run():
    """benchmarks/bench_time_stepping.py --quick builds and steps its eight scenes in every
    installed engine (no timing checked): each scene reports the step method that took each
    step, and the final heights match closed forms and agree between engines."""
    import importlib.util
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    path = os.path.join(root, "benchmarks", "bench_time_stepping.py")
    spec = importlib.util.spec_from_file_location("bench_time_stepping", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    # the pile's spheres just touch: neighbours 2 r + gap apart, the top one 2 layers up
    p = bench.pile_positions()
    d = np.linalg.norm(p[:, None] - p[None], axis=2)
    assert np.isclose(np.sort(d[np.triu_indices(10, 1)])[0], 2 * bench.BALL_R + 1e-4)
    n = 5
    skeleton = os.path.join(root, "tests", "data", "hdm_small_skeleton.txt")
    res = bench.main(["--quick", "--steps", str(n), "--skeleton", skeleton])
    assert set(res) == set(bench.SCENES)
    engines = {e for e in bench.ENGINES if e not in ("drake", "mujoco")}
    engines |= {e for e, mod in (("drake", "pydrake"), ("mujoco", "mujoco.rollout"))
                if importlib.util.find_spec(mod.split(".")[0]) is not None}
    for scene, rows in res.items():
        assert set(rows) == engines, scene
        for engine, r in rows.items():
            assert "error" not in r, (scene, engine, r.get("error"))
            assert r["step"] > 0
        for engine in ("dynablocks", "dynablocks_lcp"):
            r = rows[engine]
            # every step is counted under the method that took it
            assert sum(r["census"].values()) == n
            assert r["method"] in ("compiled_pgs", "numpy_pgs", "lcp")
            assert (r["reason"] is None) == (r["method"] != "lcp"), (scene, engine)
            # a compiled whole run, where there is one, ends where the stepped run ends
            if r["whole"] is None:
                assert r["whole_reason"]
            else:
                assert r["whole_height"] == pytest.approx(r["height"], abs=1e-9)
        assert rows["dynablocks_lcp"]["census"] == {"lcp": n}
        if "mujoco" in rows:    # mujoco.rollout reproduces the mj_step loop
            assert rows["mujoco"]["whole_height"] == pytest.approx(rows["mujoco"]["height"],
                                                                   abs=1e-12)
    ours = {k: rows["dynablocks"]["height"] for k, rows in res.items()}
    assert ours["box"] == pytest.approx(bench.BOX_SIZE / 2, abs=1e-4)
    assert ours["stack"] == pytest.approx(2.5 * bench.BOX_SIZE, abs=1e-3)
    assert ours["capsule"] == pytest.approx(bench.C.CAPSULE_R, abs=1e-4)
    assert ours["quadruped"] == pytest.approx(
        load_example("quadruped_standing").stance_height(), abs=2e-3)
    # the humanoid is still in free fall: z_n = z_0 - g h^2 n (n + 1) / 2 in every engine
    # (velocity first, then position); the joints' damping has nothing to damp
    z_n = bench.C.HUMANOID_Z - 9.81 * bench.H ** 2 * n * (n + 1) / 2
    for engine, r in res["humanoid"].items():
        assert r["height"] == pytest.approx(z_n, abs=1e-9), engine
    # the four-bar and the human model agree between engines (closure softness, compliance)
    for scene, tol in (("four_bar", 1e-5), ("human", 2e-3), ("box", 1e-3), ("capsule", 1e-3)):
        for engine, r in res[scene].items():
            assert r["height"] == pytest.approx(res[scene]["dynablocks"]["height"], abs=tol), \
                (scene, engine)
