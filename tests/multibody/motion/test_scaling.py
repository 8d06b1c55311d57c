"""Segment scaling (multibody.motion.fit_segment_scales) on synthetic captures of the small
HDM-format body in tests/data: a body of known segment scales (the nominal model rebuilt by
HumanModel.scaled) moves through random poses; its markers are recorded exactly and the fit,
started from the nominal model, must find the known bone lengths."""
import json
import pathlib

import casadi as ca
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from multibody.models import human_model
from multibody.motion import (MarkerFitter, ScalingError, bone_lengths, fit_segment_scales)
from multibody.motion.scaling import scaled_marker_kinematics

DATA = pathlib.Path(__file__).resolve().parents[2] / "data"
SKEL = DATA / "hdm_small_skeleton.txt"
MARK = DATA / "hdm_small_markers.txt"
TRUE_SCALE = {"torso": 1.06, "pelvis": 1.10, "r-thigh": 0.91, "r-shank": 1.11,
              "r-foot": 0.95, "l-thigh": 0.97, "l-arm": 1.08}


def random_poses(model, n, seed):
    """``n`` poses: joint angles N(0, 0.4 rad) clipped to the limits, base turned and moved."""
    rng = np.random.default_rng(seed)
    tree = model.tree
    lo, hi = tree.position_limits()
    out = []
    for _ in range(n):
        q = model.reference_configuration()
        q[7:] = np.clip(rng.normal(scale=0.4, size=tree.nq - 7), lo[7:], hi[7:])
        x, y, z, w = Rotation.from_rotvec(rng.normal(scale=0.3, size=3)).as_quat()
        q[0:4] = [w, x, y, z]
        q[4:7] += rng.normal(scale=0.1, size=3)
        out.append(q)
    return np.array(out)


def capture(model, Q):
    f = MarkerFitter(model.tree, model.markers)
    return np.array([f.marker_positions(q) for q in Q])


@pytest.fixture(scope="module")
def nominal():
    return human_model(SKEL, MARK)


@pytest.fixture(scope="module")
def subject(nominal):
    return nominal.scaled(TRUE_SCALE)


@pytest.fixture(scope="module")
def trial_fit(nominal, subject):
    X = capture(subject, random_poses(subject, 30, seed=1))
    return X, fit_segment_scales(nominal, X, scale_prior=1e-3)


def assert_bones_within(result_tree, true_tree, tol):
    got, want = bone_lengths(result_tree), bone_lengths(true_tree)
    assert set(got) == set(want) and len(got) == 6
    for k in want:
        assert abs(got[k] - want[k]) < tol, (k, got[k], want[k])


def test_known_lengths_recovered_within_1mm(trial_fit, subject, nominal):
    """Markers at their nominal place on the subject's segments, offsets free in the fit:
    every bone length (joint centre to joint centre) within 1 mm, every scale (the leaf
    segments too, seen only through their markers) within 0.5 %, markers within 0.1 mm."""
    X, res = trial_fit
    assert res.converged and res.iterations < 30
    assert_bones_within(res.model.tree, subject.tree, 1e-3)
    for n, s in TRUE_SCALE.items():
        assert res.segment_scale[n] == pytest.approx(s, rel=5e-3), n
    assert res.marker_rms < 1e-4 < 1e-2 < res.marker_rms_initial
    assert sorted(res.fitted_segments) == sorted(TRUE_SCALE)
    # the bones really changed: the nominal model is off by more than 1 cm somewhere
    nom, true = bone_lengths(nominal.tree), bone_lengths(subject.tree)
    assert max(abs(nom[k] - true[k]) for k in true) > 0.01


def test_the_scaled_model_reproduces_the_fitted_markers(trial_fit):
    """The rebuilt skeleton (HumanModel.scaled: new shapes, anchors and marker offsets) puts the
    markers where the fit's symbolic scaling put them: the per-frame marker error of the
    scaled model at the fitted poses equals the result's marker_errors."""
    X, res = trial_fit
    f = MarkerFitter(res.model.tree, res.model.markers)
    P = np.array([f.marker_positions(q) for q in res.q])
    np.testing.assert_allclose(np.linalg.norm(P - X[res.frames], axis=2), res.marker_errors,
                               atol=1e-12)
    np.testing.assert_allclose(f.marker_offsets, res.marker_offsets, atol=1e-15)


def test_misplaced_markers_over_a_trial(nominal, subject):
    """Markers 1 cm (per axis, random) away from their nominal places, 10 % of the samples
    occluded, every offset free (``fixed_offsets=()``, the feet's too): over 30 frames of
    motion the joint centres fix the bone lengths, still within 1 mm."""
    rng = np.random.default_rng(7)
    o = np.array([m[2] for m in subject.markers]) + rng.normal(scale=0.01, size=(16, 3))
    moved = subject.scaled({}, marker_offsets=o)
    X = capture(moved, random_poses(moved, 30, seed=2))
    X[rng.random(X.shape[:2]) < 0.1] = np.nan                 # 10 % of the samples occluded
    res = fit_segment_scales(nominal, X, scale_prior=1e-3, fixed_offsets=())
    assert_bones_within(res.model.tree, subject.tree, 1e-3)
    assert res.marker_rms < 2e-4
    assert np.isnan(res.marker_errors).sum() == np.isnan(X[..., 0]).sum()
    assert np.max(np.abs(res.offset_corrections)) > 0.01       # the offsets moved


def test_foot_offsets_held_by_default(trial_fit, nominal, subject):
    """By default the markers on the contact segments (the feet) keep their nominal placement
    on the scaled segment (correction exactly 0) while the others move; ``fixed_offsets``
    names the held segments explicitly (here the pelvis instead), and an unknown segment is
    refused."""
    X, res = trial_fit
    bodies = [m[1] for m in nominal.markers]
    feet = set(nominal.foot_contact_points)
    on_feet = np.array([b in feet for b in bodies])
    assert on_feet.any() and (~on_feet).any()
    assert np.all(res.offset_corrections[on_feet] == 0.0)
    held = fit_segment_scales(nominal, X[:8], fixed_offsets=["pelvis"], max_iterations=5)
    on_pelvis = np.array([b == "pelvis" for b in bodies])
    assert np.all(held.offset_corrections[on_pelvis] == 0.0)
    assert np.any(held.offset_corrections[on_feet] != 0.0)
    with pytest.raises(ScalingError, match=r"fixed_offsets names unknown segments \['femur'\]"):
        fit_segment_scales(nominal, X, fixed_offsets=["femur"])


def test_static_pose_with_nominal_offsets(nominal, subject):
    """One static frame, offsets held at their nominal place on the scaled segments: the
    scales follow the marker distances; lengths within 1 mm."""
    X = capture(subject, random_poses(subject, 1, seed=3))
    res = fit_segment_scales(nominal, X, fit_offsets=False, scale_prior=1e-3)
    assert_bones_within(res.model.tree, subject.tree, 1e-3)
    assert np.all(res.offset_corrections == 0.0)
    assert res.frames.tolist() == [0]


def test_masses_and_inertias_follow_the_shapes(trial_fit, nominal):
    """Each segment's mass is its density times the volume of the scaled shape and its inertia
    that of the scaled shape (box: m (b^2 + c^2) / 12; capsule: cylinder plus hemispheres),
    computed here from the dimensions; ``mass=`` rescales the densities to a total."""
    _, res = trial_fit
    for name, g in res.model.skeleton.segments.items():
        g0, s = nominal.skeleton.segments[name], res.segment_scale[name]
        np.testing.assert_allclose(g.dims, np.array(g0.dims) * s, rtol=1e-14)
        if g0.density == 0:                       # given by mass in the file (l-arm)
            assert g.mass == pytest.approx(g0.mass * s ** 3, rel=1e-12)
            continue
        if g.shape == "box":
            a, b, c = g.dims
            m = g0.density * a * b * c
            I = m / 12 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])
        else:
            L, r = g.dims
            m1, m2 = g0.density * np.pi * r * r * L, g0.density * 4 / 3 * np.pi * r ** 3
            m = m1 + m2
            ixx = m1 * (r * r / 4 + L * L / 12) + m2 * (2 * r * r / 5 + 3 * r * L / 8 + L * L / 4)
            I = np.array([ixx, ixx, (m1 / 2 + 2 * m2 / 5) * r * r])
        assert g.mass == pytest.approx(m, rel=1e-12), name
        np.testing.assert_allclose(np.diag(g.inertia), I, rtol=1e-12, err_msg=name)
    assert res.model.mass == pytest.approx(res.model.tree.total_mass(), rel=1e-14)
    heavy = nominal.scaled(res.segment_scale, mass=80.0)
    assert heavy.tree.total_mass() == pytest.approx(80.0, rel=1e-14)


def test_scaled_urdf_through_pinocchio(trial_fit, subject):
    """The exported URDF, read by Pinocchio: total mass and joint placements (bone vectors)
    of the scaled model."""
    pin = pytest.importorskip("pinocchio")
    _, res = trial_fit
    m = pin.buildModelFromXML(res.write_urdf(), pin.JointModelFreeFlyer())
    assert sum(i.mass for i in m.inertias) == pytest.approx(res.model.mass, rel=1e-9)
    knee = m.jointPlacements[m.getJointId("r-shank_joint")].translation
    want = np.asarray(subject.tree.get_joint("r-shank_joint").origin)[:3, 3]
    assert np.linalg.norm(knee) == pytest.approx(np.linalg.norm(want), abs=1e-3)


def test_report_is_json_with_every_segment(trial_fit, nominal):
    _, res = trial_fit
    rep = json.loads(json.dumps(res.report()))
    assert list(rep["segment_scale"]) == list(nominal.skeleton.segments)
    assert rep["scaling"]["marker_rms_after_m"] == pytest.approx(res.marker_rms)
    assert rep["scaling"]["marker_rms_before_m"] == pytest.approx(res.marker_rms_initial)


def test_offsets_only_and_inherited_scales(nominal, subject):
    """``fit_scales=False`` leaves every scale at 1 (the offsets-only calibration); a segment
    left out of ``segments`` takes its parent's scale."""
    X = capture(subject, random_poses(subject, 8, seed=4))
    only = fit_segment_scales(nominal, X, fit_scales=False)
    assert set(only.segment_scale.values()) == {1.0}
    assert only.marker_rms < only.marker_rms_initial
    part = fit_segment_scales(nominal, X, segments=["pelvis", "r-thigh"], max_iterations=3)
    assert part.fitted_segments == ["pelvis", "r-thigh"]
    assert part.segment_scale["r-shank"] == part.segment_scale["r-thigh"]
    assert part.segment_scale["l-thigh"] == part.segment_scale["pelvis"]
    assert part.segment_scale["torso"] == part.segment_scale["pelvis"]


def test_symmetric_pairs_share_a_scale(nominal):
    """``symmetric=True``: r-thigh and l-thigh get one scale; a subject with equal thighs is
    recovered within 1 mm."""
    subject = nominal.scaled({**TRUE_SCALE, "l-thigh": TRUE_SCALE["r-thigh"]})
    X = capture(subject, random_poses(subject, 30, seed=6))
    res = fit_segment_scales(nominal, X, symmetric=True, scale_prior=1e-3)
    assert res.segment_scale["r-thigh"] == res.segment_scale["l-thigh"]
    assert_bones_within(res.model.tree, subject.tree, 1e-3)


def test_exact_derivatives_against_finite_differences(nominal):
    """J_v (through the tree's integrate), J_s and J_d against central differences."""
    tree = nominal.tree
    fun = scaled_marker_kinematics(tree, nominal.markers, ["pelvis", "r-thigh", "torso"])
    q = random_poses(nominal, 1, seed=5)[0]
    s, d = np.array([1.1, 0.9, 1.05]), np.random.default_rng(0).normal(scale=0.01, size=48)
    p, Jv, Js, Jd = (np.array(ca.DM(x)) for x in fun(q, s, d))
    h = 1e-6
    num = np.column_stack([
        (np.array(fun(tree.integrate(q, h * e, 1.0), s, d)[0]) -
         np.array(fun(tree.integrate(q, -h * e, 1.0), s, d)[0])).ravel() / (2 * h)
        for e in np.eye(tree.nv)])
    np.testing.assert_allclose(Jv, num, atol=1e-8)
    num = np.column_stack([(np.array(fun(q, s + h * e, d)[0]) - np.array(fun(q, s - h * e, d)[0])
                            ).ravel() / (2 * h) for e in np.eye(3)])
    np.testing.assert_allclose(Js, num, atol=1e-8)
    num = np.column_stack([(np.array(fun(q, s, d + h * e)[0]) - np.array(fun(q, s, d - h * e)[0])
                            ).ravel() / (2 * h) for e in np.eye(48)])
    np.testing.assert_allclose(Jd, num, atol=1e-8)


def test_errors_name_the_culprit(nominal):
    X = np.zeros((2, 16, 3))
    with pytest.raises(ScalingError, match=r"positions must have shape \(T, 16, 3\)"):
        fit_segment_scales(nominal, np.zeros((2, 15, 3)))
    with pytest.raises(ScalingError, match=r"unknown segments \['femur'\]"):
        fit_segment_scales(nominal, X, segments=["femur"])
    with pytest.raises(ScalingError, match=r"frames must be indices in \[0, 2\)"):
        fit_segment_scales(nominal, X, frames=[5])
    with pytest.raises(ScalingError, match="scale_bounds must satisfy 0 < lo < 1 < hi"):
        fit_segment_scales(nominal, X, scale_bounds=(1.2, 2.0))
    with pytest.raises(ScalingError, match="scale_prior must be finite and >= 0"):
        fit_segment_scales(nominal, X, scale_prior=-1.0)
    Xo = X.copy()
    Xo[1, :12] = np.nan
    with pytest.raises(ScalingError, match="frame 1 has 4 visible markers, at least 6 needed"):
        fit_segment_scales(nominal, Xo, frames=[0, 1])
    with pytest.raises(ValueError, match=r"marker_offsets must be finite with shape \(16, 3\)"):
        nominal.scaled({}, marker_offsets=np.zeros((3, 3)))
