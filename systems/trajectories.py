"""Trajectories: vector-valued piecewise polynomials of time.

:class:`PiecewisePolynomial` is Drake's trajectory class of the same name in our naming
style: built as a zero-order hold, a first-order hold (linear interpolation), a cubic Hermite
spline (values and derivatives at the breaks) or a cubic spline (values at the breaks,
continuous second derivative, not-a-knot or clamped ends), evaluated at one time or many at
once, differentiated to any order. It is what trajectory optimization returns
(:mod:`systems.trajectory_optimization`), what :class:`~systems.primitives.TrajectorySource`
plays back and what :func:`~systems.controllers.lqr.FiniteHorizonLinearQuadraticRegulator`
linearizes along. Values outside ``[start_time(), end_time()]`` are held at the end values.

The polynomials are stored as a :class:`scipy.interpolate.PPoly` (local power basis per
segment), available as :meth:`PiecewisePolynomial.to_ppoly`.
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
from scipy.interpolate import CubicHermiteSpline, CubicSpline, PPoly

from .errors import TrajectoryError

__all__ = ["PiecewisePolynomial", "TrajectoryError"]


def _breaks(times, what: str, min_count: int = 2) -> np.ndarray:
    t = np.asarray(times, dtype=float).ravel()
    if t.shape[0] < min_count:
        raise TrajectoryError(f"{what}: needs at least {min_count} break times, got {t.shape[0]}")
    if not np.all(np.isfinite(t)):
        raise TrajectoryError(f"{what}: break times must be finite")
    if np.any(np.diff(t) <= 0):
        raise TrajectoryError(f"{what}: break times must be strictly increasing, got {t.tolist()}")
    return t


def _samples(values, n_times: int, what: str, name: str = "samples") -> np.ndarray:
    """Samples as (n, N): a (n, N) array, or (N,) for a scalar trajectory."""
    y = np.asarray(values, dtype=float)
    if y.ndim == 1:
        y = y[None, :]
    if y.ndim != 2 or y.shape[1] != n_times:
        raise TrajectoryError(f"{what}: {name} must have shape (n, {n_times}) (one column per "
                              f"break time), got {np.shape(values)}")
    if not np.all(np.isfinite(y)):
        raise TrajectoryError(f"{what}: {name} must be finite")
    return y


class PiecewisePolynomial:
    """A vector-valued piecewise polynomial y(t) (module docstring).

    Build one with the class methods :meth:`zero_order_hold`, :meth:`first_order_hold`,
    :meth:`cubic_hermite`, :meth:`cubic_spline`, or from a scipy ``PPoly`` whose values are
    vectors (``c`` of shape (k, m, n)).

    Parameters
    ----------
    ppoly : scipy.interpolate.PPoly
        Breaks ``ppoly.x`` (N,), coefficients of shape (k, N - 1) or (k, N - 1, n).
    """

    def __init__(self, ppoly: PPoly) -> None:
        if not isinstance(ppoly, PPoly):
            raise TypeError(f"PiecewisePolynomial expects a scipy PPoly, got {type(ppoly).__name__}")
        c = np.asarray(ppoly.c, float)
        if c.ndim == 2:
            c = c[:, :, None]
        elif c.ndim != 3:
            raise TrajectoryError(f"PiecewisePolynomial: coefficients of shape {c.shape}; expected "
                                  "(k, m) or (k, m, n)")
        # always the interpolation axis first (scipy keeps c as (k, m, n) whatever its axis)
        self._pp = PPoly(c, np.asarray(ppoly.x, float), extrapolate=True)

    # ------------------------------------------------------------------ construction
    @classmethod
    def zero_order_hold(cls, times: Sequence[float], samples) -> "PiecewisePolynomial":
        """Hold ``samples[:, i]`` on ``[times[i], times[i+1]]``; the last sample only marks
        the end of the time range (as in Drake). ``samples``: (n, N) or (N,)."""
        t = _breaks(times, "PiecewisePolynomial.zero_order_hold")
        y = _samples(samples, t.shape[0], "PiecewisePolynomial.zero_order_hold")
        c = y[:, :-1].T[None, :, :]
        return cls(PPoly(c, t, extrapolate=True))

    @classmethod
    def first_order_hold(cls, times: Sequence[float], samples) -> "PiecewisePolynomial":
        """Linear interpolation between the samples (n, N)."""
        t = _breaks(times, "PiecewisePolynomial.first_order_hold")
        y = _samples(samples, t.shape[0], "PiecewisePolynomial.first_order_hold")
        slope = np.diff(y, axis=1) / np.diff(t)
        c = np.stack([slope.T, y[:, :-1].T])
        return cls(PPoly(c, t, extrapolate=True))

    @classmethod
    def cubic_hermite(cls, times: Sequence[float], samples, samples_dot) -> "PiecewisePolynomial":
        """The cubic on each segment matching the values (n, N) and the derivatives (n, N) at
        both of its ends (C1)."""
        t = _breaks(times, "PiecewisePolynomial.cubic_hermite")
        y = _samples(samples, t.shape[0], "PiecewisePolynomial.cubic_hermite")
        yd = _samples(samples_dot, t.shape[0], "PiecewisePolynomial.cubic_hermite", "samples_dot")
        if yd.shape != y.shape:
            raise TrajectoryError(f"PiecewisePolynomial.cubic_hermite: samples_dot has shape "
                                  f"{yd.shape}, expected {y.shape}")
        return cls(CubicHermiteSpline(t, y, yd, axis=1))

    @classmethod
    def cubic_spline(cls, times: Sequence[float], samples, *,
                     end_derivatives: Optional[tuple] = None) -> "PiecewisePolynomial":
        """The C2 cubic spline through the samples (n, N): not-a-knot ends, or clamped ends
        when ``end_derivatives = (ydot_start, ydot_end)`` is given (vectors of size n)."""
        t = _breaks(times, "PiecewisePolynomial.cubic_spline")
        y = _samples(samples, t.shape[0], "PiecewisePolynomial.cubic_spline")
        if end_derivatives is None:
            bc = "not-a-knot" if t.shape[0] > 3 else "natural"
            return cls(CubicSpline(t, y, axis=1, bc_type=bc))
        d0, d1 = (np.asarray(d, float).ravel() for d in end_derivatives)
        if d0.shape[0] != y.shape[0] or d1.shape[0] != y.shape[0]:
            raise TrajectoryError(f"PiecewisePolynomial.cubic_spline: end derivatives must have "
                                  f"size {y.shape[0]}")
        return cls(CubicSpline(t, y, axis=1, bc_type=((1, d0), (1, d1))))

    # ------------------------------------------------------------------ queries
    def rows(self) -> int:
        """Size n of the value vector."""
        return int(self._pp.c.shape[2])

    def start_time(self) -> float:
        """First break time."""
        return float(self._pp.x[0])

    def end_time(self) -> float:
        """Last break time."""
        return float(self._pp.x[-1])

    def get_segment_times(self) -> np.ndarray:
        """The break times (N,)."""
        return np.array(self._pp.x)

    def value(self, t) -> np.ndarray:
        """y(t): shape (n,) for a scalar ``t``; (n, len(t)) for an array of times. Times outside
        the breaks are clamped to them (end values held)."""
        ts = np.clip(np.asarray(t, dtype=float), self.start_time(), self.end_time())
        out = self._pp(ts)                     # (..., n)
        if np.ndim(t) == 0:
            return np.asarray(out, float).reshape(self.rows())
        return np.moveaxis(np.asarray(out, float), -1, 0)

    __call__ = value

    def vector_values(self, times) -> np.ndarray:
        """Values at many times, shape (n, len(times))."""
        return self.value(np.atleast_1d(np.asarray(times, float)))

    def derivative(self, order: int = 1) -> "PiecewisePolynomial":
        """The ``order``-th time derivative (zero beyond the polynomial degree)."""
        if int(order) != order or order < 0:
            raise TrajectoryError(f"PiecewisePolynomial.derivative: order must be a whole number "
                                  f">= 0, got {order}")
        if order == 0:
            return PiecewisePolynomial(self._pp)
        k = self._pp.c.shape[0]
        if order >= k:
            zero = np.zeros((1,) + self._pp.c.shape[1:])
            return PiecewisePolynomial(PPoly(zero, self._pp.x, extrapolate=True))
        return PiecewisePolynomial(self._pp.derivative(int(order)))

    def to_ppoly(self) -> PPoly:
        """The underlying scipy ``PPoly`` (coefficients (k, m, n))."""
        return self._pp

    def __repr__(self) -> str:
        return (f"PiecewisePolynomial(rows={self.rows()}, segments={self._pp.x.shape[0] - 1}, "
                f"t=[{self.start_time():g}, {self.end_time():g}], degree={self._pp.c.shape[0] - 1})")
