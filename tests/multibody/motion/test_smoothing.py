"""smooth_trajectory: v and vdot of a known motion (free root, ball, Euler, hinge, universal
joints) from its samples, against the exact time derivatives; the filter; bad input."""
import numpy as np
import pytest

import _motion_models as W
from multibody.motion import TrajectoryError, smooth_trajectory


@pytest.fixture(scope="module")
def motion():
    tree = W.walker()
    t = np.arange(0.0, 1.5, 1.0 / 120.0)
    return (tree, t) + W.known_motion(tree, t)


def test_quintic_spline_derivatives_equal_the_exact_ones(motion):
    tree, t, Q, V, A = motion
    tr = smooth_trajectory(tree, t, Q)
    np.testing.assert_allclose(tr.q, Q, atol=1e-14)      # interpolating: samples kept
    inner = slice(6, -6)                                  # away from the spline's ends
    assert np.abs(tr.v - V)[inner].max() < 1e-7
    assert np.abs(tr.vdot - A)[inner].max() < 1e-4
    # so inverse dynamics agrees with the exact motion to well under 1e-2 N m
    tau = np.array([tree.inverse_dynamics(*x) for x in zip(tr.q, tr.v, tr.vdot)])
    tau0 = np.array([tree.inverse_dynamics(*x) for x in zip(Q, V, A)])
    assert np.abs(tau - tau0)[inner].max() < 1e-3


def test_velocity_is_consistent_with_the_tree_difference(motion):
    tree, t, Q, V, A = motion
    tr = smooth_trajectory(tree, t, Q, cutoff_hz=8.0)
    h = t[1] - t[0]
    fd = np.array([tree.difference(tr.q[k - 1], tr.q[k + 1]) / (2 * h)
                   for k in range(1, len(t) - 1)])
    assert np.abs(fd - tr.v[1:-1])[5:-5].max() < 2e-3
    # quaternions stay unit and the slow motion (0.5 Hz) passes the 8 Hz filter
    for j in tree.joints[:2]:
        np.testing.assert_allclose(np.linalg.norm(tr.q[:, j.q_start:j.q_start + 4], axis=1), 1.0,
                                   atol=1e-12)
    assert np.abs(tr.v - V)[10:-10].max() < 0.05


def test_bad_input_is_named(motion):
    tree, t, Q, V, A = motion
    with pytest.raises(TrajectoryError, match=r"shape \(T, nq\)"):
        smooth_trajectory(tree, t, Q[:, :5])
    with pytest.raises(TrajectoryError, match="increase strictly"):
        smooth_trajectory(tree, t[::-1], Q)
    with pytest.raises(TrajectoryError, match="Nyquist"):
        smooth_trajectory(tree, t, Q, cutoff_hz=100.0)
    Qn = Q.copy()
    Qn[7, 3] = np.nan
    with pytest.raises(TrajectoryError, match="non-finite q or t .first at sample 7"):
        smooth_trajectory(tree, t, Qn)
    with pytest.raises(TrajectoryError, match="at least 6 needed"):
        smooth_trajectory(tree, t[:4], Q[:4])
