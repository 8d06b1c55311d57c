"""PiecewisePolynomial: holds, Hermite and spline interpolation against exact polynomials."""
import numpy as np
import pytest
from scipy.interpolate import CubicSpline

from systems import DiagramBuilder
from systems.analysis import Simulator
from systems.primitives import LogVectorOutput, TrajectorySource
from systems.trajectories import PiecewisePolynomial, TrajectoryError

T = np.array([0.0, 0.4, 1.0, 1.7, 2.5])


def _cubic(t):
    return np.array([1 - 2 * t + 0.5 * t ** 3, 3 * t ** 2 - t ** 3])


def _cubic_dot(t):
    return np.array([-2 + 1.5 * t ** 2, 6 * t - 3 * t ** 2])


def test_zero_and_first_order_holds():
    Y = np.array([[0.0, 1.0, 3.0, 2.0, 5.0]])
    zoh = PiecewisePolynomial.zero_order_hold(T, Y)
    foh = PiecewisePolynomial.first_order_hold(T, Y)
    assert zoh.value(0.2)[0] == 0.0 and zoh.value(0.99)[0] == 1.0 and zoh.value(1.0)[0] == 3.0
    np.testing.assert_allclose(foh.value(0.7), [2.0], atol=1e-14)      # halfway from 1 to 3
    np.testing.assert_allclose(foh.vector_values(T), Y, atol=1e-14)
    np.testing.assert_allclose(foh.derivative().value(1.2), [(2.0 - 3.0) / 0.7], atol=1e-12)
    assert foh.value(-1.0)[0] == 0.0 and foh.value(9.0)[0] == 5.0        # held outside
    assert (zoh.start_time(), zoh.end_time(), foh.rows()) == (0.0, 2.5, 1)


def test_cubic_hermite_reproduces_a_cubic_and_its_derivatives():
    pp = PiecewisePolynomial.cubic_hermite(T, _cubic(T), _cubic_dot(T))
    ts = np.linspace(0.0, 2.5, 37)
    np.testing.assert_allclose(pp.vector_values(ts), _cubic(ts), atol=1e-12)
    np.testing.assert_allclose(pp.derivative(1).vector_values(ts), _cubic_dot(ts), atol=1e-11)
    np.testing.assert_allclose(pp.derivative(2).value(1.3), [3 * 1.3, 6 - 6 * 1.3], atol=1e-10)
    np.testing.assert_allclose(pp.derivative(4).value(0.5), [0.0, 0.0])
    for t in ts[:5]:                                    # many at once == one at a time
        np.testing.assert_array_equal(pp.value(t), pp.vector_values([t])[:, 0])


def test_cubic_spline_matches_scipy_and_reproduces_cubics():
    pp = PiecewisePolynomial.cubic_spline(T, _cubic(T))
    ts = np.linspace(0.0, 2.5, 23)
    np.testing.assert_allclose(pp.vector_values(ts), _cubic(ts), atol=1e-12)   # not-a-knot
    Y = np.sin(3 * T)[None, :]
    clamped = PiecewisePolynomial.cubic_spline(T, Y, end_derivatives=([3.0], [3 * np.cos(7.5)]))
    ref = CubicSpline(T, Y[0], bc_type=((1, 3.0), (1, 3 * np.cos(7.5))))
    np.testing.assert_allclose(clamped.vector_values(ts)[0], ref(ts), atol=1e-13)
    np.testing.assert_allclose(clamped.derivative().value(0.0), [3.0], atol=1e-12)


def test_bad_input_names_what_was_expected():
    with pytest.raises(TrajectoryError, match="strictly increasing"):
        PiecewisePolynomial.first_order_hold([0, 1, 1], [[0, 1, 2]])
    with pytest.raises(TrajectoryError, match=r"shape \(n, 3\)"):
        PiecewisePolynomial.first_order_hold([0, 1, 2], [[0, 1]])
    with pytest.raises(TrajectoryError, match="at least 2"):
        PiecewisePolynomial.zero_order_hold([0.0], [[1.0]])
    with pytest.raises(TrajectoryError, match="samples_dot"):
        PiecewisePolynomial.cubic_hermite([0, 1], [[0, 1]], [[0, 1, 2]])
    with pytest.raises(TrajectoryError, match="order"):
        PiecewisePolynomial.first_order_hold([0, 1], [[0, 1]]).derivative(-1)


def test_trajectory_source_plays_a_piecewise_polynomial():
    pp = PiecewisePolynomial.cubic_hermite(T, _cubic(T), _cubic_dot(T))
    b = DiagramBuilder()
    src = b.add_system(TrajectorySource(pp, output_derivative=True))
    log = LogVectorOutput(src.get_output_port("ydot"), b, publish_period=0.25)
    d = b.build()
    sim = Simulator(d)
    sim.advance_to(2.5)
    data = log.find_log(sim.get_context())
    np.testing.assert_allclose(data.data(), _cubic_dot(data.sample_times()), atol=1e-11)
