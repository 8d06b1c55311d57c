"""The viewer without viser (these run without the [viz] extra): which geometry is drawn,
body poses (compiled against numpy forward kinematics), quaternions, the capsule mesh, a
recording-only Visualizer that changes no dynamics and records per context, bitwise on a
rerun, a per-step log bitwise the same with and without it, and the named errors."""
import math
import sys

import numpy as np
import pytest

from multibody import Capsule, spatial
from multibody.visualization import (INSTALL_HINT, Recording, ViewerUnavailableError,
                                     VisualizationError, Visualizer, add_visualizer,
                                     body_poses, capsule_mesh, pose_quaternions, visual_items)

from systems import DiagramBuilder
from systems.analysis import Simulator
from systems.primitives import LogVectorOutput

import _viz_scenes as S


def _rotation(wxyz):
    return np.asarray(spatial.quaternion_to_rotation(np.asarray(wxyz, float)), float)


def test_visual_items_fall_back_to_collision_geometry_only_when_asked():
    tree = S.shapes_tree()
    with_fallback = {(i.body, i.source) for i in visual_items(tree)}
    assert ("link", "collision") in with_fallback and ("crate", "visual") in with_fallback
    assert "link" not in {i.body for i in visual_items(tree, collision_fallback=False)}


def test_pose_quaternions_round_trip():
    """Random rotations and the half turns about x, y, z and a diagonal (w = 0, where a
    trace-only formula divides by zero): quaternion -> rotation gives the pose back."""
    rng = np.random.default_rng(3)
    rots = [spatial.exp_so3(rng.normal(size=3) * 2) for _ in range(20)]
    rots += [spatial.exp_so3(np.pi * np.asarray(a, float) / np.linalg.norm(a))
             for a in ((1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 1), (1, -2, 0))]
    rots += [np.eye(3)]
    T = np.array([spatial.pose(R, rng.normal(size=3)) for R in rots])
    pos, quat = pose_quaternions(T)
    assert np.all(quat[:, 0] >= 0)
    np.testing.assert_allclose(np.linalg.norm(quat, axis=1), 1, atol=1e-14)
    for i in range(len(T)):
        np.testing.assert_allclose(_rotation(quat[i]), T[i, :3, :3], atol=1e-13)
        np.testing.assert_array_equal(pos[i], T[i, :3, 3])
    np.testing.assert_allclose(quat[-1], [1, 0, 0, 0], atol=1e-15)


@pytest.mark.parametrize("backend", ["auto", "casadi"])
def test_compiled_body_poses_equal_the_numpy_forward_kinematics(backend):
    from multibody import model_path, parse_urdf
    from multibody.visualization import BodyPoseFunction
    for tree in (S.shapes_tree(), parse_urdf(str(model_path("quadruped")), True)):
        f = BodyPoseFunction(tree, backend=backend)
        rng = np.random.default_rng(11)
        for _ in range(3):
            q = tree.random_configuration(rng)
            np.testing.assert_allclose(f(q), body_poses(tree, q), atol=1e-13)
        with pytest.raises(VisualizationError, match=f"tree '{tree.name}': q is not finite"):
            f(np.full(tree.nq, np.nan))


def test_capsule_mesh_is_closed_and_outward():
    """Signed volume by the divergence theorem, sum (v0 . (v1 x v2)) / 6 over the faces,
    is positive (outward faces) and tends to the capsule's pi r^2 (L + 4 r / 3)."""
    r, L = 0.1, 0.3
    exact = math.pi * r ** 2 * (L + 4 * r / 3)
    vols = []
    for n in (16, 64):
        v, f = capsule_mesh(r, L, n)
        vol = np.einsum("ij,ij->i", v[f[:, 0]], np.cross(v[f[:, 1]], v[f[:, 2]])).sum() / 6
        vols.append(vol)
    assert 0 < vols[0] < vols[1] < exact
    assert vols[1] == pytest.approx(exact, rel=5e-3)


# ---------------------------------------------------------------- errors
def test_named_errors():
    tree = S.shapes_tree()
    for bad in (0.0, -1.0, math.nan, "fast"):
        with pytest.raises(VisualizationError, match="publish_period must be a positive"):
            Visualizer(tree, bad, live=False)
    vis = Visualizer(tree, live=False, name="viewer")
    other = Recording(["world", "elsewhere"])
    with pytest.raises(VisualizationError, match="Visualizer 'viewer'.*'elsewhere'"):
        vis.export_html(other, "unused.html")
    with pytest.raises(VisualizationError, match="no frames"):
        vis.replay(Recording(vis.body_names))
    with pytest.raises(VisualizationError, match="q has size 3, expected nq = 29"):
        vis.frame([0.0, 0.0, 0.0])
    with pytest.raises(VisualizationError, match="expected positions"):
        Recording(vis.body_names).append(0.0, np.zeros((2, 3)), np.zeros((2, 4)))
    with pytest.raises(VisualizationError, match="not found"):
        Recording.load("/nonexistent/run.npz")


def test_missing_viser_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "viser", None)  # import viser -> ImportError
    with pytest.raises(ViewerUnavailableError, match=r"pip install 'dynablocks\[viz\]'"):
        Visualizer(S.shapes_tree())
    assert issubclass(ViewerUnavailableError, ImportError)
    assert "dynablocks[viz]" in INSTALL_HINT
    # recording needs no viser
    Visualizer(S.shapes_tree(), live=False)


def test_add_visualizer_checks_the_extra_at_construction(monkeypatch):
    """add_visualizer fails when it is called (before any simulation), also with
    live=False: its recording is for export_html/replay, which need viser."""
    monkeypatch.setitem(sys.modules, "viser", None)  # import viser -> ImportError
    _, plant, _ = S.resting_balls()
    b = DiagramBuilder("balls")
    b.add_system(plant)
    with pytest.raises(ViewerUnavailableError, match=r"pip install 'dynablocks\[viz\]'"):
        add_visualizer(b, plant, 0.01, live=False)
    assert [s.name for s in b.systems()] == [plant.name]       # nothing was added
    vis = add_visualizer(b, plant, 0.01, live=False, check_viewer=False)  # recording only
    assert vis in b.systems()


def _balls_run(with_visualizer: bool, final_time: float = 0.15):
    tree, plant, _ = S.resting_balls()
    b = DiagramBuilder("balls")
    b.add_system(plant)
    log = LogVectorOutput(plant.get_output_port("state"), b, 0.004)
    vis = add_visualizer(b, plant, 0.01, live=False, check_viewer=False) \
        if with_visualizer else None
    diagram = b.build()
    ctx = diagram.create_default_context()
    S.place_balls(tree, plant, ctx, drop=0.05, vx=0.3)
    init = ctx.clone()
    Simulator(diagram, ctx).advance_to(final_time)
    return diagram, init, ctx, log, vis


def test_publishing_does_not_change_the_dynamics_and_reruns_are_bitwise():
    _, _, ctx0, log0, _ = _balls_run(False)
    diagram, init, ctx1, log1, vis = _balls_run(True)
    np.testing.assert_array_equal(log0.find_log(ctx0).data(), log1.find_log(ctx1).data())
    np.testing.assert_array_equal(log0.find_log(ctx0).sample_times(),
                                  log1.find_log(ctx1).sample_times())
    rec = vis.get_recording(ctx1)
    # one frame per publish period, t = 0, 0.01, ..., 0.15
    np.testing.assert_allclose(rec.times, np.arange(16) * 0.01, atol=1e-12)
    # the recorded poses are the logged states' forward kinematics
    x = log1.find_log(ctx1).data()
    t = log1.find_log(ctx1).sample_times()
    k = int(np.argmin(np.abs(t - 0.08)))
    j = int(np.argmin(np.abs(rec.times - 0.08)))
    pos, quat = pose_quaternions(body_poses(vis.tree, x[:vis.tree.nq, k]))
    np.testing.assert_array_equal(rec.positions[j], pos)
    np.testing.assert_array_equal(rec.quaternions[j], quat)
    # a rerun from a copy of the initial context records the same frames, bitwise; the
    # first run's recording is untouched (it lives in the other context)
    ctx2 = init.clone()
    Simulator(diagram, ctx2).advance_to(0.15)
    rec2 = vis.get_recording(ctx2)
    assert rec2 is not rec and rec2.num_frames == rec.num_frames == 16
    np.testing.assert_array_equal(rec2.positions, rec.positions)
    np.testing.assert_array_equal(rec2.quaternions, rec.quaternions)
    assert vis.get_recording(init).num_frames == 0


def _per_step_run(visualizer, final_time: float = 0.2):
    """Balls dropped and sliding, h = 2 ms, a per-step log of the state; optionally a
    Visualizer at 1/30 s (not a multiple of h)."""
    tree, plant, _ = S.resting_balls()
    b = DiagramBuilder("balls")
    b.add_system(plant)
    log = LogVectorOutput(plant.get_output_port("state"), b)         # per step
    vis = None
    if visualizer is not None:
        vis = add_visualizer(b, plant, 1 / 30, live=False, check_viewer=False,
                             exact_times=visualizer == "exact")
    diagram = b.build()
    ctx = diagram.create_default_context()
    S.place_balls(tree, plant, ctx, drop=0.05, vx=0.3)
    Simulator(diagram, ctx).advance_to(final_time)
    return log.find_log(ctx), (vis.get_recording(ctx) if vis else None), vis


def test_per_step_log_is_bitwise_the_same_with_the_visualizer():
    """The default Visualizer adds no step boundaries: a per-step log has the same sample
    times and values, bitwise, with and without it. Its frames are at the first step that
    reaches each k/30 s (at most one step, 2 ms, late) and show the state logged there."""
    plain, _, _ = _per_step_run(None)
    logged, rec, vis = _per_step_run("per_step")
    np.testing.assert_array_equal(logged.sample_times(), plain.sample_times())
    np.testing.assert_array_equal(logged.data(), plain.data())
    t = plain.sample_times()
    assert t.size == 101                                   # t = 0, 0.002, ..., 0.2
    k = np.arange(7)                                       # k / 30 <= 0.2
    assert rec.num_frames == 7
    expected = [t[np.searchsorted(t, kk / 30 - 1e-12)] for kk in k]
    np.testing.assert_allclose(rec.times, expected, rtol=0, atol=1e-15)
    assert np.all(rec.times >= k / 30 - 1e-12) and np.all(rec.times - k / 30 < 2e-3)
    for j, tj in enumerate(rec.times):
        i = int(np.flatnonzero(t == tj)[0])
        pos, quat = pose_quaternions(body_poses(vis.tree, plain.data()[:vis.tree.nq, i]))
        np.testing.assert_array_equal(rec.positions[j], pos)
        np.testing.assert_array_equal(rec.quaternions[j], quat)


def test_exact_times_publish_at_k_periods_and_cut_steps_as_in_drake():
    """exact_times=True: a periodic publish at exactly k/30 s, which the Simulator makes
    step boundaries (a per-step log gets those samples too); the time-stepping plant's
    dynamics are unchanged: at the common times the logs agree bitwise."""
    plain, _, _ = _per_step_run(None)
    logged, rec, _ = _per_step_run("exact")
    np.testing.assert_allclose(rec.times, np.arange(7) / 30, atol=1e-12)
    t0, t1 = plain.sample_times(), logged.sample_times()
    assert t1.size > t0.size
    common = np.isin(t1, t0)
    assert common.sum() == t0.size
    np.testing.assert_array_equal(logged.data()[:, common], plain.data())


def test_record_trajectory_poses_contacts_and_errors():
    """A recording of a motion computed elsewhere: body poses are the forward kinematics of
    each q, contact points are carried to the world by their bodies' poses, points without
    force are left out of a frame."""
    tree = S.shapes_tree()
    vis = Visualizer(tree, live=False, name="viewer")
    rng = np.random.default_rng(5)
    Q = np.array([tree.random_configuration(rng) for _ in range(4)])
    t = np.array([0.0, 0.1, 0.2, 0.3])
    pts = np.array([[0.0, 0.0, -0.05], [0.1, 0.0, 0.0]])
    F = rng.normal(size=(4, 2, 3))
    F[2, 1] = 0.0
    rec = vis.record_trajectory(t, Q, ["ball", "link"], pts, F)
    assert rec.num_frames == 4
    np.testing.assert_array_equal(rec.times, t)
    for k in range(4):
        T = body_poses(tree, Q[k])
        pos, quat = pose_quaternions(T)
        np.testing.assert_allclose(rec.positions[k], pos, atol=1e-13)
        np.testing.assert_allclose(np.abs(rec.quaternions[k] @ quat.T).diagonal(), 1, atol=1e-12)
        cp, cf = rec.contacts(k)
        b, l = tree.body_pose("ball", Q[k]), tree.body_pose("link", Q[k])
        world = [b[:3, :3] @ pts[0] + b[:3, 3], l[:3, :3] @ pts[1] + l[:3, 3]]
        keep = [0] if k == 2 else [0, 1]
        np.testing.assert_allclose(cp, np.array(world)[keep], atol=1e-12)
        np.testing.assert_array_equal(cf, F[k][keep])
    with pytest.raises(VisualizationError, match=r"q has shape \(4, 3\), expected \(4, nq = 29\)"):
        vis.record_trajectory(t, Q[:, :3])
    with pytest.raises(VisualizationError, match=r"contact bodies \['nowhere'\] are not bodies"):
        vis.record_trajectory(t, Q, ["nowhere"], pts[:1], F[:, :1])
    with pytest.raises(VisualizationError, match="2 contact bodies"):
        vis.record_trajectory(t, Q, ["ball", "link"], pts, F[:3])
