"""Source blocks: outputs that depend on time (or nothing) only.

Every source evaluates on a numeric or a symbolic (CasADi) time.
"""
from __future__ import annotations

from typing import Optional

import casadi as ca
import numpy as np
from scipy.interpolate import PPoly

from solvers import ops
from ..leaf_system import LeafSystem
from ._ppoly import ppoly_symbolic

__all__ = ["ConstantVectorSource", "ConstantValueSource", "Sine", "Step", "Ramp", "TrajectorySource"]


def _vec(value, name, owner) -> np.ndarray:
    arr = np.atleast_1d(np.asarray(value, dtype=float)).ravel()
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{owner}: {name} must be finite, got {arr}")
    return arr


class ConstantVectorSource(LeafSystem):
    """y = value, a constant held as the numeric parameter ``"value"`` (changeable per context).

    Output port ``y`` (size of ``value``).
    """

    def __init__(self, source_value, name: Optional[str] = None):
        super().__init__(name)
        value = _vec(source_value, "source_value", type(self).__name__)
        self.declare_numeric_parameter("value", value)
        self.declare_output_port("y", value.shape[0], lambda ctx: ctx.get_parameter(0),
                                 feedthrough=False, prerequisites=["parameters"])

    def get_source_value(self, context):
        """The value in ``context``."""
        return self.get_my_context_from_root(context).get_parameter(0)

    def set_source_value(self, context, value) -> None:
        """Change the value in ``context``."""
        self.get_my_context_from_root(context).set_parameter(0, value)


class ConstantValueSource(LeafSystem):
    """An abstract-valued constant: output ``y`` is always ``value`` (any Python object).

    Drake's ``ConstantValueSource``. Each evaluation returns the same object, so a
    consumer that mutates it changes it for everyone (treat it as read-only). Use
    :class:`ConstantVectorSource` for numbers (it is a parameter and symbolic-capable).

    Parameters
    ----------
    value : object
        Anything but ``None``.

    References
    ----------
    Drake, ``drake/systems/primitives/constant_value_source.h``.
    """

    def __init__(self, value, name: Optional[str] = None):
        super().__init__(name)
        if value is None:
            raise ValueError(f"ConstantValueSource '{self.name}': value must not be None")
        self._value = value
        self.declare_abstract_output_port("y", lambda c: self._value, model_value=value,
                                          feedthrough=False, prerequisites=())

    def get_source_value(self):
        """The constant object."""
        return self._value


def _broadcast(owner, size, **arrays):
    n = size if size is not None else max(np.size(a) for a in arrays.values())
    out = []
    for name, a in arrays.items():
        a = _vec(a, name, owner)
        if a.shape[0] == 1:
            a = np.full(n, a[0])
        if a.shape[0] != n:
            raise ValueError(f"{owner}: {name} has size {a.shape[0]}, expected 1 or {n}")
        out.append(a)
    return n, out


class Sine(LeafSystem):
    """y0 = a sin(w t + phi), y1 = dy0/dt, y2 = d^2 y0/dt^2 (elementwise).

    Parameters
    ----------
    amplitude, frequency, phase : float or array_like
        Amplitude a, angular frequency w (rad/s), phase phi (rad); scalars broadcast to ``size``.
    size : int, optional
        Output size (default: the longest argument).
    """

    def __init__(self, amplitude, frequency, phase=0.0, size: Optional[int] = None,
                 name: Optional[str] = None):
        super().__init__(name)
        n, (self.amplitude, self.frequency, self.phase) = _broadcast(
            type(self).__name__, size, amplitude=amplitude, frequency=frequency, phase=phase)
        a, w, p = self.amplitude, self.frequency, self.phase
        kw = dict(feedthrough=False, prerequisites=["time"])
        self.declare_output_port("y0", n, lambda c: a * ops.sin(w * c.time + p), **kw)
        self.declare_output_port("y1", n, lambda c: a * w * ops.cos(w * c.time + p), **kw)
        self.declare_output_port("y2", n, lambda c: -a * w * w * ops.sin(w * c.time + p), **kw)


class Step(LeafSystem):
    """y = initial_value for t < step_time, final_value from step_time on (Simulink's Step)."""

    def __init__(self, step_time: float = 0.0, initial_value=0.0, final_value=1.0,
                 size: Optional[int] = None, name: Optional[str] = None):
        super().__init__(name)
        n, (self.initial_value, self.final_value) = _broadcast(
            type(self).__name__, size, initial_value=initial_value, final_value=final_value)
        self.step_time = float(step_time)
        self.declare_output_port("y", n, self._calc, feedthrough=False, prerequisites=["time"])

    def _calc(self, context):
        t = context.time
        if type(t) is not float and ops.is_symbolic(t):
            return ca.if_else(t >= self.step_time, ca.DM(self.final_value), ca.DM(self.initial_value))
        return self.final_value if t >= self.step_time else self.initial_value


class Ramp(LeafSystem):
    """y = initial_output + slope * max(t - start_time, 0)."""

    def __init__(self, slope=1.0, start_time: float = 0.0, initial_output=0.0,
                 size: Optional[int] = None, name: Optional[str] = None):
        super().__init__(name)
        n, (self.slope, self.initial_output) = _broadcast(
            type(self).__name__, size, slope=slope, initial_output=initial_output)
        self.start_time = float(start_time)
        self.declare_output_port(
            "y", n, lambda c: self.initial_output + self.slope * ops.fmax(c.time - self.start_time, 0.0),
            feedthrough=False, prerequisites=["time"])


class TrajectorySource(LeafSystem):
    """y = trajectory(t), from a :class:`~systems.trajectories.PiecewisePolynomial` or a scipy
    piecewise polynomial (``PPoly``, ``CubicSpline``, ...).

    Outside the breakpoints the value is held at the end values (no extrapolation).
    Symbolic time is supported by an exact piecewise expression of the polynomial
    (cost grows with the number of pieces).

    Parameters
    ----------
    trajectory : PiecewisePolynomial or scipy.interpolate.PPoly (or subclass)
        Values of shape (n,) or scalar per time.
    output_derivative : bool
        Also output ``ydot`` (the first derivative).
    """

    def __init__(self, trajectory, output_derivative: bool = False, name: Optional[str] = None):
        super().__init__(name)
        if hasattr(trajectory, "to_ppoly"):             # systems.trajectories.PiecewisePolynomial
            trajectory = trajectory.to_ppoly()
        if not isinstance(trajectory, PPoly):
            raise TypeError(f"TrajectorySource expects a PiecewisePolynomial or a scipy PPoly (e.g. "
                            f"CubicSpline), got "
                            f"{type(trajectory).__name__}; use TrajectorySource.from_samples for samples")
        self.trajectory = trajectory
        self._t0, self._t1 = float(trajectory.x[0]), float(trajectory.x[-1])
        n = int(np.prod(trajectory.c.shape[2:])) if trajectory.c.ndim > 2 else 1
        self.declare_output_port("y", n, lambda c: self._eval(self.trajectory, c.time),
                                 feedthrough=False, prerequisites=["time"])
        if output_derivative:
            self._dtraj = trajectory.derivative()
            self.declare_output_port("ydot", n, lambda c: self._eval(self._dtraj, c.time, hold=False),
                                     feedthrough=False, prerequisites=["time"])

    @classmethod
    def from_samples(cls, times, values, kind: str = "linear", **kw) -> "TrajectorySource":
        """Build from samples: ``values`` of shape (n, N) or (N,), ``kind`` linear/cubic/zoh."""
        from scipy.interpolate import CubicSpline
        times = np.asarray(times, dtype=float)
        values = np.atleast_2d(np.asarray(values, dtype=float))
        if values.shape[1] != times.shape[0]:
            raise ValueError(f"TrajectorySource.from_samples: values have {values.shape[1]} samples "
                             f"but times have {times.shape[0]}")
        if np.any(np.diff(times) <= 0):
            raise ValueError("TrajectorySource.from_samples: times must be strictly increasing")
        if kind == "cubic":
            pp = CubicSpline(times, values, axis=1)
        elif kind in ("linear", "zoh"):
            dt = np.diff(times)
            slope = np.diff(values, axis=1) / dt if kind == "linear" else np.zeros((values.shape[0], dt.size))
            c = np.stack([slope.T, values[:, :-1].T])  # (2, pieces, n)
            pp = PPoly(c, times)
        else:
            raise ValueError(f"unknown kind {kind!r}; expected 'linear', 'cubic' or 'zoh'")
        return cls(pp, **kw)

    def _eval(self, pp: PPoly, t, hold: bool = True):
        if ops.is_symbolic(t):
            return self._eval_symbolic(pp, t, hold)
        tc = min(max(t, self._t0), self._t1)
        if not hold and (t < self._t0 or t > self._t1):
            return np.zeros(self.get_output_port(0).size)
        return np.atleast_1d(pp(tc)).ravel()

    def _eval_symbolic(self, pp: PPoly, t, hold: bool):
        return ppoly_symbolic(pp, t, self.get_output_port(0).size, hold)
