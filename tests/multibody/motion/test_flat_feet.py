"""fit_flat_feet: the 25-DOF walker standing with its feet flat on the floor, captured by
markers; fitted with biased foot-marker offsets its feet stand tilted, fit_flat_feet gives
them back flat, with the foot markers' offsets near their true values and the markers fitted
as closely; bad arguments are refused."""
from __future__ import annotations

import os

import numpy as np
import pytest

from multibody.models import human_model
from multibody.motion import (Floor, MarkerFitError, MarkerFitter, MarkerSetError,
                              TrajectoryError)
from multibody.motion.flat_feet import fit_flat_feet, resting_frames, sole_geometry, sole_targets

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples", "data")


@pytest.fixture(scope="module")
def walker():
    return human_model(os.path.join(DATA, "walker_skeleton.txt"),
                       os.path.join(DATA, "walker_markers.txt"))


def _standing(walker, T=16):
    """``T`` frames at 120 Hz of the walker at its standing reference (soles flat on z = 0),
    the arms swinging a little (the fit must not lean on a frozen pose), and its markers."""
    tree = walker.tree
    t = np.arange(T) / 120.0
    q0 = walker.reference_configuration()
    Q = np.tile(q0, (T, 1))
    for name in ("r-arm_joint", "l-arm_joint"):
        j = tree.get_joint(name)
        Q[:, j.q_start] += 0.2 * np.sin(2 * np.pi * t)
    X = np.array([MarkerFitter(tree, walker.markers).marker_positions(q) for q in Q])
    return t, Q, X


def test_biased_feet_come_back_flat(walker):
    tree = walker.tree
    t, Q, X = _standing(walker)
    floor = Floor(np.array([0.0, 0.0, 1.0]), np.zeros(3))
    geo = sole_geometry(tree, walker.foot_contact_points, Q, floor)
    assert max(np.abs(g["height"]).max() for g in geo.values()) < 1e-9   # the truth: flat
    truth = np.array([o for _, _, o in walker.markers], float)
    feet = np.array([b in ("r-foot", "l-foot") for _, b, _ in walker.markers])
    # biased offsets: heel markers 2 cm low, toe markers 1 cm high (a pitched fit)
    wrong = truth.copy()
    for i, (n, b, _) in enumerate(walker.markers):
        if n.endswith("HEE"):
            wrong[i, 2] -= 0.02
        elif n.endswith("TOE"):
            wrong[i, 2] += 0.01
    fitter = MarkerFitter(tree, list(zip([n for n, _, _ in walker.markers],
                                         [b for _, b, _ in walker.markers], wrong)),
                          preferred_q=walker.reference_configuration())
    fit = fitter.fit(X, q0=Q[0], progress=False)
    spread0 = max(np.median(g["spread"]) for g in sole_geometry(
        tree, walker.foot_contact_points, fit.q, floor).values())
    assert spread0 > 0.01                 # the biased fit stands tilted (centimetres)
    rest = resting_frames(tree, walker.foot_contact_points, t, fit.q, floor)
    assert all(r.all() for r in rest.values())
    out = fit_flat_feet(fitter, walker.foot_contact_points, t, X, floor, fit.q,
                        sole_weight=3.0, iterations=30, tolerance=1e-5)
    spread = max(out.spread.values())
    # flat to a fraction of a millimetre (28 mm before); the markers fitted closer (4.3 ->
    # 0.6 mm) with the offsets 3 mm from the truth (20 mm before; the offsets converge
    # linearly along the floor, where the sole term does not hold the foot)
    assert spread < 1e-3
    assert out.fit.rms < 0.25 * fit.rms
    err = np.abs(out.fitter.marker_offsets - truth)[feet].max()
    assert err < 0.25 * np.abs(wrong - truth)[feet].max()
    assert out.offset_change[-1] < out.offset_change[0] / 100
    # the other markers keep their offsets
    np.testing.assert_array_equal(out.fitter.marker_offsets[~feet], wrong[~feet])


def test_bad_arguments(walker):
    tree = walker.tree
    t, Q, X = _standing(walker, 4)
    floor = Floor(np.array([0.0, 0.0, 1.0]), np.zeros(3))
    fitter = MarkerFitter(tree, walker.markers)
    with pytest.raises(MarkerSetError, match="positions"):
        fit_flat_feet(fitter, walker.foot_contact_points, t, X[:, :3], floor, Q)
    with pytest.raises(MarkerSetError, match="sole_weight"):
        fit_flat_feet(fitter, walker.foot_contact_points, t, X, floor, Q, sole_weight=0.0)
    with pytest.raises(MarkerSetError, match="'r-hoof'"):
        fit_flat_feet(fitter, {"r-hoof": [[0.0, 0.0, 0.0]]}, t, X, floor, Q)
    feet = walker.foot_contact_points
    with pytest.raises(MarkerFitError, match="fitter must be a MarkerFitter"):
        fit_flat_feet(object(), feet, t, X, floor, Q)
    repeated = t.copy()
    repeated[2] = repeated[1]             # np.gradient would divide by zero here
    with pytest.raises(TrajectoryError, match="t must increase strictly \\(frame 2\\)"):
        fit_flat_feet(fitter, feet, repeated, X, floor, Q)
    with pytest.raises(TrajectoryError, match="t must increase strictly \\(frame 2\\)"):
        resting_frames(tree, feet, repeated, Q, floor)
    with pytest.raises(TrajectoryError, match="t must be 4 finite times"):
        resting_frames(tree, feet, t[:3], Q, floor)
    Qn = Q.copy()
    Qn[3, 7] = np.nan
    with pytest.raises(TrajectoryError, match="q is not finite at frame 3"):
        fit_flat_feet(fitter, feet, t, X, floor, Qn)
    with pytest.raises(TrajectoryError, match=f"q must have shape \\(T, nq\\) = \\(T, {tree.nq}\\)"):
        resting_frames(tree, feet, t, Q[:, :-1], floor)
    with pytest.raises(TrajectoryError, match="T >= 2"):
        resting_frames(tree, feet, t[:1], Q[:1], floor)
    with pytest.raises(MarkerSetError, match="contact points of 'r-foot' must be finite points"):
        resting_frames(tree, {"r-foot": [[0.0, 0.0]]}, t, Q, floor)
    with pytest.raises(MarkerSetError, match="'r-hoof' is not a body"):
        sole_geometry(tree, {"r-hoof": [[0.0, 0.0, 0.0]]}, Q, floor)
    with pytest.raises(MarkerSetError, match="bodies: 'r-hoof'"):
        fit_flat_feet(fitter, feet, t, X, floor, Q, bodies=["r-hoof"])
    rest = {b: np.zeros(4, bool) for b in feet}
    missing = dict(rest)
    missing.pop("l-foot")
    with pytest.raises(MarkerSetError, match="rest\\['l-foot'\\] must be \\(4,\\) bools.*got nothing"):
        sole_targets(tree, feet, Q, floor, missing)
    with pytest.raises(MarkerSetError, match="rest\\['r-foot'\\] must be \\(4,\\) bools.*got \\(3,\\)"):
        sole_targets(tree, feet, Q, floor, {**rest, "r-foot": np.zeros(3, bool)})


def test_sole_targets_follow_or_hold(walker):
    tree = walker.tree
    t, Q, _ = _standing(walker, 12)
    Q[:, 4] += 0.1 * t                    # the whole body moving along x at 0.1 m/s, 5 cm up
    Q[:, 6] += 0.05
    floor = Floor(np.array([0.0, 0.0, 1.0]), np.zeros(3))
    rest = {b: np.zeros(12, bool) for b in walker.foot_contact_points}
    rest["r-foot"][1:5] = True
    rest["r-foot"][8:11] = True
    follow = sole_targets(tree, walker.foot_contact_points, Q, floor, rest)
    held = sole_targets(tree, walker.foot_contact_points, Q, floor, rest, hold=True)
    world = sole_geometry(tree, walker.foot_contact_points, Q, floor)["r-foot"]["world"]
    P = world.shape[1]                    # r-foot's points come first
    assert np.isnan(follow[~rest["r-foot"]]).all() and np.isnan(follow[:, P:]).all()
    on = world.copy()
    on[..., 2] = 0.0                      # projected onto z = 0
    np.testing.assert_allclose(follow[rest["r-foot"], :P], on[rest["r-foot"]], atol=1e-12)
    for a, b in ((1, 5), (8, 11)):        # held: the mean over each stretch of rest
        np.testing.assert_allclose(held[a:b, :P], np.broadcast_to(on[a:b].mean(axis=0),
                                                                   (b - a, P, 3)), atol=1e-12)
    assert np.ptp(held[1:5, 0, 0]) == 0.0 and np.ptp(follow[1:5, 0, 0]) > 0.002


def test_sole_targets_lift_points_below_the_floor(walker):
    tree = walker.tree
    t, Q, _ = _standing(walker, 6)
    Q[:, 6] -= 0.01                       # the whole body 1 cm into the floor
    floor = Floor(np.array([0.0, 0.0, 1.0]), np.zeros(3))
    rest = {b: np.zeros(6, bool) for b in walker.foot_contact_points}
    assert np.isnan(sole_targets(tree, walker.foot_contact_points, Q, floor, rest)).all()
    lifted = sole_targets(tree, walker.foot_contact_points, Q, floor, rest, lift=True)
    world = np.concatenate([g["world"] for g in sole_geometry(
        tree, walker.foot_contact_points, Q, floor).values()], axis=1)
    np.testing.assert_allclose(lifted[..., 2], 0.0, atol=1e-12)
    np.testing.assert_allclose(lifted[..., :2], world[..., :2], atol=1e-12)
    np.testing.assert_allclose(world[..., 2], -0.01, atol=1e-9)
