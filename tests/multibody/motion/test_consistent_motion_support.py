"""ConsistentMotion's centre-of-pressure margin (``support_margin``) and marker-offset
refinement (``offset_scale``): the inset of a sole's points (exact corners), the offsets'
closed form (exact recovery, the documented half step), and on the 25-DOF walker standing
(examples/data) the forces acting at the inset points and offsets perturbed by 6 mm
recovered by the optimisation."""
from __future__ import annotations

import os

import numpy as np
import pytest

from multibody.models import human_model
from multibody.motion import ConsistentMotion, ContactError, MarkerFitter, MarkerSetError
from multibody.motion.consistent_motion_terms import inset_contact_points
from multibody.motion.marker_set import refine_marker_offsets
from multibody.motion.spline_motion import UniformBSpline

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples", "data")
RATE, KNOT = 120.0, 1 / 30


@pytest.fixture(scope="module")
def walker():
    return human_model(os.path.join(DATA, "walker_skeleton.txt"),
                       os.path.join(DATA, "walker_markers.txt"))


@pytest.fixture(scope="module")
def standing(walker):
    """24 frames: the trunk swaying on a spline, pelvis and legs still (feet flat)."""
    tree = walker.tree
    t = np.arange(24) / RATE
    sp = UniformBSpline(t[0], t[-1], KNOT)
    C = np.tile(walker.reference_configuration(), (sp.size, 1))
    j = tree.get_joint("torso_joint")
    C[:, j.q_start:j.q_start + j.nq] += 0.02 * np.sin(np.linspace(0, 3, sp.size))[:, None]
    q = sp.basis(t, 0) @ C
    q[:, 0:4] /= np.linalg.norm(q[:, 0:4], axis=1, keepdims=True)
    return t, q


def test_inset_points_shrink_a_rectangle_sole():
    sole = [(-0.045, -0.06, -0.07), (-0.045, 0.18, -0.07), (0.045, -0.06, -0.07),
            (0.045, 0.18, -0.07)]
    out = inset_contact_points({"foot": sole, "toe": [(0.0, 0.0, 0.0), (0.0, 0.1, 0.0)]},
                               0.01)
    np.testing.assert_allclose(out["foot"], [(-0.035, -0.05, -0.07), (-0.035, 0.17, -0.07),
                                             (0.035, -0.05, -0.07), (0.035, 0.17, -0.07)],
                               atol=1e-15)
    np.testing.assert_allclose(out["toe"], [(0, 0.01, 0), (0, 0.09, 0)], atol=1e-15)
    sides = inset_contact_points({"foot": sole}, (0.0, 0.01))["foot"]   # (along, across)
    np.testing.assert_allclose(sides, np.array(sole) * [0.035 / 0.045, 1, 1], atol=1e-15)
    wide = inset_contact_points({"foot": sole}, 0.05)["foot"]  # never past the centroid
    np.testing.assert_allclose(wide[:, 0], 0.0, atol=1e-15)
    np.testing.assert_allclose(wide[:, 1], [-0.01, 0.13, -0.01, 0.13], atol=1e-15)


def test_refined_offsets_closed_form(walker, standing):
    tree = walker.tree
    t, q = standing
    fitter = MarkerFitter(tree, walker.markers)
    X = np.array([fitter.marker_positions(qk) for qk in q])
    rng = np.random.default_rng(2)
    delta = rng.uniform(-0.006, 0.006, fitter.marker_offsets.shape)
    wrong = fitter.marker_offsets + delta
    kw = dict(marker_scale=0.01)
    exact = refine_marker_offsets(tree, fitter.marker_bodies, wrong, q, X, offset_scale=1e6,
                                  **kw)
    np.testing.assert_allclose(exact, fitter.marker_offsets, atol=1e-9)
    # every marker seen in every frame and sigma_o = sigma_m: half of the error removed;
    # a marker of weight 0 keeps its offset
    w = np.ones(len(wrong))
    w[4] = 0.0
    half = refine_marker_offsets(tree, fitter.marker_bodies, wrong, q, X, offset_scale=0.01,
                                 weights=w, **kw)
    np.testing.assert_allclose(np.delete(half - fitter.marker_offsets, 4, 0),
                               np.delete(delta / 2, 4, 0), atol=1e-9)
    np.testing.assert_array_equal(half[4], wrong[4])
    with pytest.raises(MarkerSetError, match="positions must have shape"):
        refine_marker_offsets(tree, fitter.marker_bodies, wrong, q, X[:, :3], offset_scale=1,
                              **kw)
    with pytest.raises(MarkerSetError, match="offset_scale"):
        refine_marker_offsets(tree, fitter.marker_bodies, wrong, q, X, offset_scale=0, **kw)


def _root_rows(tree, traj, forces, bodies, points):
    """[RNEA - sum_j J_j^T f_j] in the root rows, forces (T, P, 3) at ``points``."""
    out = []
    for k in range(len(traj.t)):
        g = np.asarray(tree.inverse_dynamics(traj.q[k], traj.v[k], traj.vdot[k]),
                       float).ravel()
        for f, b, p in zip(forces[k], bodies, points):
            g -= np.asarray(tree.jacobian(b, traj.q[k], p, "world"), float)[3:6].T @ f
        out.append(g[:6])
    return np.array(out)


def test_forces_act_at_the_inset_points(walker, standing):
    """With a 15 mm margin the standing motion stays consistent (its centre of pressure is
    inside the inset soles), and the root wrench of the result's forces applied at
    ``force_points`` is the reported residual -- not so at the true points."""
    tree = walker.tree
    t, q = standing
    fitter = MarkerFitter(tree, walker.markers)
    X = np.array([fitter.marker_positions(qk) for qk in q])
    cm = ConsistentMotion(tree, walker.markers, walker.foot_contact_points, knot_interval=KNOT,
                          max_iterations=40, support_margin=0.015)
    out = cm.solve(t, X, q, progress=False)
    inset = inset_contact_points(walker.foot_contact_points, 0.015)
    np.testing.assert_allclose(out.force_points, np.vstack(list(inset.values())))
    assert out.residual_force_rms < 0.05 and out.marker_rms < 1e-3
    bodies = cm.cid.point_bodies
    at_inset = _root_rows(tree, out.trajectory, out.contact_forces, bodies, out.force_points)
    at_true = _root_rows(tree, out.trajectory, out.contact_forces, bodies, cm.cid.points)
    np.testing.assert_allclose(at_inset, out.residual, atol=1e-6)
    assert np.abs(at_true - out.residual).max() > 0.05        # N m: the lever arms differ
    for bad in (-1, (0.0, 0.0), (0.01, -0.01), (0.01, 0.01, 0.01), np.nan):
        with pytest.raises(ContactError, match="support_margin"):
            ConsistentMotion(tree, walker.markers, walker.foot_contact_points,
                             support_margin=bad)
    with pytest.raises(ContactError, match="offset_rounds"):
        ConsistentMotion(tree, walker.markers, walker.foot_contact_points, offset_scale=0.01,
                         offset_rounds=0)


def test_offset_refinement_recovers_perturbed_offsets(walker, standing):
    """Three markers' offsets given 6-7 mm off (a toe, a heel, the sternum): the plain
    optimisation bends the motion toward them (markers > 1 mm RMS); two refinements
    (``offset_scale``) halve the marker error and bring every moved offset and the set as
    a whole at least 30% closer to the truth. (Not all the way: on a standing motion a
    foot marker's offset and the foot's rotation trade off, and the warm start's foot
    rotation was already moved.)"""
    tree = walker.tree
    t, q = standing
    fitter = MarkerFitter(tree, walker.markers)
    X = np.array([fitter.marker_positions(qk) for qk in q])
    wrong = fitter.marker_offsets.copy()
    moved = [fitter.marker_names.index(n) for n in ("RTOE", "LHEE", "STRN")]
    wrong[moved] += [[0.006, -0.003, 0.0], [-0.004, 0.0, 0.005], [0.0, 0.006, 0.0]]
    markers = list(zip(fitter.marker_names, fitter.marker_bodies, wrong))
    kw = dict(knot_interval=KNOT, max_iterations=30)
    plain = ConsistentMotion(tree, markers, walker.foot_contact_points, **kw).solve(
        t, X, q, progress=False)
    refined = ConsistentMotion(tree, markers, walker.foot_contact_points, offset_scale=0.05,
                               offset_rounds=2, **kw).solve(t, X, q, progress=False)
    np.testing.assert_array_equal(plain.marker_offsets, wrong)
    err0 = np.linalg.norm(wrong - fitter.marker_offsets, axis=1)
    err = np.linalg.norm(refined.marker_offsets - fitter.marker_offsets, axis=1)
    assert plain.marker_rms > 1e-3 and refined.marker_rms < 0.5 * plain.marker_rms
    assert np.all(err[moved] < 0.7 * err0[moved])
    assert np.linalg.norm(err) < 0.7 * np.linalg.norm(err0)
    assert refined.residual_force_rms < 0.1
    assert refined.marker_rms_before == pytest.approx(plain.marker_rms_before)
    assert len(refined.objective_history) > len(plain.objective_history)
