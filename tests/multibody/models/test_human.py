"""The human model built from the small HDM-format skeleton and marker files in tests/data."""
import pathlib

import numpy as np
import pytest

from multibody.errors import InputSizeError
from multibody.models import HumanModel, human_model, skeleton_height
from multibody.parsing import SkeletonError, read_skeleton
from sensors import MarkerSensor

DATA = pathlib.Path(__file__).resolve().parents[2] / "data"
SKEL = DATA / "hdm_small_skeleton.txt"
MARK = DATA / "hdm_small_markers.txt"


@pytest.fixture(scope="module")
def model():
    return human_model(SKEL, MARK)


def test_interface(model):
    assert isinstance(model, HumanModel)
    assert (model.tree.nq, model.tree.nv, model.dof) == (19, 18, 18)
    assert model.tree.get_joint("floating_base").child == "pelvis"
    assert [m[0] for m in model.markers][:3] == ["STRN", "C7", "RSHO"]  # prefix dropped
    assert model.arm_joints == ["l-arm_joint"]
    assert list(model.foot_contact_points) == ["r-foot"]
    assert len(model.foot_contact_points["r-foot"]) == 4
    assert [s["name"] for s in model.segments][0] == "torso"
    assert model.mass == pytest.approx(model.tree.total_mass(), rel=1e-14)
    text = model.segment_table()
    assert "r-thigh" in text and "capsule" in text and f"{model.mass:8.3f}" in text


def test_reference_pose_stands_on_the_floor(model):
    """Reference configuration: the lowest shape point (the foot sole here) is at z = 0 and the
    height is top minus bottom of the shapes (hand computed: top of the torso at 1.5 m, foot
    sole at 1.3 - 0.2 - 0.16 - 2 * 0.2205 - (0.18 + 0.2) - 0.06 = 0.059 m)."""
    q = model.reference_configuration()
    assert model.height == pytest.approx(1.5 - 0.059, abs=1e-12)
    T = np.asarray(model.tree.body_pose("r-foot", q))
    z = [(T[:3, :3] @ p + T[:3, 3])[2] for p in model.foot_contact_points["r-foot"]]
    np.testing.assert_allclose(z, 0.0, atol=1e-14)
    T = np.asarray(model.tree.body_pose("torso", q))
    seg = model.skeleton.segments["torso"]
    assert (T[:3, :3] @ seg.center + T[:3, 3])[2] + seg.half_extents[2] == \
        pytest.approx(model.height, abs=1e-12)


def test_markers_through_the_marker_sensor(model):
    """The markers feed sensors.MarkerSensor; at the reference pose each reads the segment centre
    plus its fraction of the half extents (the file's definition), shifted like the body."""
    sensor = MarkerSensor(model.tree, model.markers, name="mocap")
    q = model.reference_configuration()
    ctx = sensor.create_default_context()
    sensor.get_input_port("state").fix_value(ctx, np.concatenate([q, np.zeros(model.tree.nv)]))
    y = np.asarray(sensor.get_output_port("positions").eval(ctx), float).reshape(-1, 3)
    sk = model.skeleton
    lo = min(s.position[2] - s.half_extents[2] for s in sk.segments.values())
    lines = [ln.split() for ln in MARK.read_text().splitlines() if ln and not ln.startswith("#")]
    for k, (name, seg, *frac) in enumerate(lines):
        s = sk.segments[seg]
        expect = s.position + np.array(frac, float) * s.half_extents - [0, 0, lo]
        np.testing.assert_allclose(y[k], expect, atol=1e-14, err_msg=name)


def test_scaling_to_height_and_mass():
    base = human_model(SKEL, MARK)
    m = human_model(SKEL, MARK, height=1.8, mass=75.0)
    s = 1.8 / base.height
    k = 75.0 / (base.mass * s ** 3)
    assert m.height == pytest.approx(1.8, rel=1e-14)
    assert m.tree.total_mass() == pytest.approx(75.0, rel=1e-14)
    for a, b in zip(base.segments, m.segments):
        assert b["mass"] == pytest.approx(a["mass"] * k * s ** 3, rel=1e-12)
        np.testing.assert_allclose(b["inertia_diag"], a["inertia_diag"] * k * s ** 5, rtol=1e-12)
    for (n1, b1, p1), (n2, b2, p2) in zip(base.markers, m.markers):
        assert (n1, b1) == (n2, b2)
        np.testing.assert_allclose(p2, p1 * s, atol=1e-15)
    only_h = human_model(SKEL, height=1.8)
    assert only_h.mass == pytest.approx(base.mass * s ** 3, rel=1e-12)
    only_m = human_model(SKEL, mass=60.0)
    assert only_m.height == pytest.approx(base.height) and only_m.mass == pytest.approx(60.0)
    with pytest.raises(ValueError, match="height must be a positive number"):
        human_model(SKEL, height=-1.0)


def test_urdf_order_of_the_configuration(model, tmp_path):
    q = model.reference_configuration()
    qp = model.configuration_to_urdf_order(q)
    np.testing.assert_allclose(qp[:7], np.r_[q[4:7], 0, 0, 0, 1])
    Q = np.stack([q, q])
    np.testing.assert_array_equal(model.configuration_to_urdf_order(Q)[1], qp)
    names = model.urdf_joint_order()
    assert len(names) == model.tree.nv - 6 and "r-thigh_joint_x" in names
    text = model.write_urdf(tmp_path / "h.urdf")
    assert (tmp_path / "h.urdf").read_text() == text and 'name="human"' in text
    with pytest.raises(InputSizeError, match=r"q must have shape \(19,\) or \(T, 19\) for "
                                            r"tree 'human' \(nq = 19\), got shape \(3,\)"):
        model.configuration_to_urdf_order(np.zeros(3))


def test_marker_on_unknown_segment_is_named(tmp_path):
    bad = tmp_path / "markers.txt"
    bad.write_text("S:A torso 0 0 0\n\nS:NOSE face 0 1 0\n")
    with pytest.raises(SkeletonError) as exc:
        human_model(SKEL, bad)
    msg = str(exc.value)
    assert f"{bad}, line 3: marker 'S:NOSE' is attached to unknown segment 'face'" in msg


def test_skeleton_height_matches_the_model():
    assert skeleton_height(read_skeleton(SKEL)) == pytest.approx(human_model(SKEL).height)


def test_segment_scales_then_mass():
    base = human_model(SKEL, MARK)
    m = human_model(SKEL, MARK, mass=50.0, segment_scales={"r-thigh": 1.05})
    assert m.tree.total_mass() == pytest.approx(50.0, rel=1e-14)
    b0 = dict((n, p) for n, _, p in base.markers)
    b1 = dict((n, p) for n, _, p in m.markers)
    # RKNE sits at the bottom of the thigh, 0.9 + 1 half extents below the hip anchor
    h0 = base.skeleton.segments["r-thigh"].half_extents[2]
    np.testing.assert_allclose(b1["RKNE"][2], b0["RKNE"][2] * 1.05, rtol=1e-12)
    assert b0["RKNE"][2] == pytest.approx(-1.9 * h0)
    np.testing.assert_allclose(b1["STRN"], b0["STRN"], atol=1e-15)
