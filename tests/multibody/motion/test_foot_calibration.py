"""flat_stance_offsets: on the 25-DOF walker standing still with its feet flat, a fit whose
right foot is rolled (as wrong foot-marker offsets make it) gives back the foot markers'
true offsets; segments that never rest keep theirs; bad shapes are refused."""
from __future__ import annotations

import os

import numpy as np
import pytest

from multibody.models import human_model
from multibody.motion import Floor, MarkerFitter, MarkerSetError
from multibody.motion.foot_calibration import flat_stance_offsets

DATA = os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples", "data")


@pytest.fixture(scope="module")
def walker():
    return human_model(os.path.join(DATA, "walker_skeleton.txt"),
                       os.path.join(DATA, "walker_markers.txt"))


def test_rolled_foot_fit_gives_back_the_true_offsets(walker):
    tree = walker.tree
    T = 12
    t = np.arange(T) / 120.0
    q0 = walker.reference_configuration()
    Q = np.tile(q0, (T, 1))
    fitter = MarkerFitter(tree, walker.markers)
    X = np.array([fitter.marker_positions(q) for q in Q])
    truth = np.array([o for _, _, o in walker.markers], float)
    # the "fit": the right foot rolled 12 deg about its joint (a rotation about a horizontal
    # axis: no twist about the normal), the markers given wrong offsets on it
    foot = tree.get_joint("r-foot_joint")
    Qr = Q.copy()
    Qr[:, foot.q_start + 1] += np.radians(12.0)
    wrong = [(n, b, np.asarray(o, float) + (0.02 if b == "r-foot" else 0.0))
             for n, b, o in walker.markers]
    floor = Floor(np.array([0.0, 0.0, 1.0]), np.zeros(3))
    offs, used = flat_stance_offsets(tree, wrong, walker.foot_contact_points, t, Qr, X, floor,
                                     q0)
    assert used == {"r-foot": T, "l-foot": T}
    on_foot = np.array([b in ("r-foot", "l-foot") for _, b, _ in walker.markers])
    assert np.abs(np.array([o for _, _, o in wrong])[on_foot] - truth[on_foot]).max() > 0.019
    np.testing.assert_allclose(offs[on_foot], truth[on_foot], atol=1e-9)
    # the other markers keep the offsets given
    np.testing.assert_array_equal(offs[~on_foot], np.array([o for _, _, o in wrong])[~on_foot])
    # rolled and pitched: the swing-twist heading of a compound tilt is off to second order
    # (12 x 5 deg: 0.5 deg of heading, under 2 mm at the toe marker)
    Qp = Qr.copy()
    Qp[:, foot.q_start] += np.radians(5.0)
    offs3, _ = flat_stance_offsets(tree, wrong, walker.foot_contact_points, t, Qp, X, floor,
                                   q0)
    np.testing.assert_allclose(offs3[on_foot], truth[on_foot], atol=2e-3)
    # a foot that never rests (here: too few frames) keeps its offsets
    offs2, _ = flat_stance_offsets(tree, wrong, walker.foot_contact_points, t, Qr, X, floor,
                                   q0, min_frames=T + 1)
    np.testing.assert_array_equal(offs2, np.array([o for _, _, o in wrong]))
    with pytest.raises(MarkerSetError, match="positions"):
        flat_stance_offsets(tree, wrong, walker.foot_contact_points, t, Qr, X[:, :3], floor,
                            q0)
