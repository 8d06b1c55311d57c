"""Time-varying affine systems whose matrices are functions of time (Drake's
``TrajectoryAffineSystem``)."""
from __future__ import annotations

from typing import Optional

import casadi as ca
import numpy as np
from scipy.interpolate import PPoly

from solvers import ops
from ..leaf_system import LeafSystem
from ._ppoly import ppoly_symbolic

__all__ = ["TrajectoryAffineSystem"]

_NAMES = ("A", "B", "f0", "C", "D", "y0")


class _TimeFunction:
    """One coefficient: a constant, a callable of t, or a piecewise polynomial (held at its
    ends), reshaped row-major to ``shape``."""

    def __init__(self, value, name: str, owner: str):
        self.name, self.owner = name, owner
        if hasattr(value, "to_ppoly"):              # systems.trajectories.PiecewisePolynomial
            value = value.to_ppoly()
        self.pp = value if isinstance(value, PPoly) else None
        self.fun = value if callable(value) and self.pp is None else None
        self.const = None
        if self.pp is None and self.fun is None:
            arr = np.asarray(value, dtype=float)
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"{owner}: {name} must be finite")
            self.const = arr
        self.shape = None
        self.n = None

    def numeric(self, t: float) -> np.ndarray:
        if self.const is not None:
            v = self.const
        elif self.pp is not None:
            tc = min(max(float(t), float(self.pp.x[0])), float(self.pp.x[-1]))
            v = np.asarray(self.pp(tc), float)
        else:
            try:
                v = np.asarray(self.fun(t), dtype=float)
            except Exception as exc:
                raise ValueError(f"{self.owner}: {self.name}(t={t!r}) raised {type(exc).__name__}: "
                                 f"{exc}") from exc
        return v

    def size_at(self, t: float) -> int:
        return int(self.numeric(t).size)

    def fix_shape(self, shape, t0: float) -> None:
        v = self.numeric(t0)
        if v.size != shape[0] * shape[1]:
            raise ValueError(f"{self.owner}: {self.name}(t) has {v.size} entries (shape "
                             f"{v.shape}), expected shape {shape}")
        self.shape = shape
        self.n = shape[0] * shape[1]

    def __call__(self, t):
        if ops.is_symbolic(t):
            if self.pp is not None:
                flat = ppoly_symbolic(self.pp, t, self.n, hold=True)
            elif self.fun is not None:
                flat = ca.reshape(ca.SX(self.fun(t)).T, self.n, 1)   # row-major flattening
            else:
                return self.const.reshape(self.shape)
            return ca.reshape(flat, self.shape[1], self.shape[0]).T
        v = self.numeric(t)
        if v.size != self.n:
            raise ValueError(f"{self.owner}: {self.name}(t={t!r}) has {v.size} entries, expected "
                             f"shape {self.shape}")
        if not np.all(np.isfinite(v)):
            raise ValueError(f"{self.owner}: {self.name}(t={t!r}) is not finite: {v.tolist()}")
        return v.reshape(self.shape)


class TrajectoryAffineSystem(LeafSystem):
    """An affine system whose coefficients depend on time.

    Continuous (``time_period == 0``):

    .. math:: \\dot x = A(t) x + B(t) u + f_0(t), \\qquad y = C(t) x + D(t) u + y_0(t).

    Discrete (``time_period = h > 0``): :math:`x[n+1] = A(t) x[n] + B(t) u[n] + f_0(t)` at
    ``t = n h``, with the same output. Ports ``u`` (size nu, absent when nu = 0) and ``y``.

    Each coefficient is a constant array, a callable ``t -> array`` (write it with
    :mod:`solvers.ops` to keep the block symbolic-capable; a matrix may also be returned
    flattened row by row, e.g. ``lambda t: ops.vertcat(-t, 0, 0, -1)`` for a 2 x 2), or a
    :class:`~systems.trajectories.PiecewisePolynomial` / scipy ``PPoly`` whose vector value
    is the matrix flattened row by row (held at its end values outside its breaks, exact
    symbolically). Sizes come from ``f0`` (nx) and ``y0`` (ny) evaluated at ``t = 0``.

    Parameters
    ----------
    A, B, f0, C, D, y0
        Shapes (nx, nx), (nx, nu), (nx,), (ny, nx), (ny, nu), (ny,).
    time_period : float
        0 for continuous time, else the update period h.

    References
    ----------
    Drake, ``drake/systems/primitives/trajectory_affine_system.h`` (there each coefficient
    is a ``Trajectory``; the port names there are ``u0`` and ``y0``).
    """

    def __init__(self, A, B, f0, C, D, y0, time_period: float = 0.0, name: Optional[str] = None):
        super().__init__(name)
        owner = f"TrajectoryAffineSystem '{self.name}'"
        if not (np.isfinite(time_period) and time_period >= 0):
            raise ValueError(f"{owner}: time_period must be a finite number >= 0, got {time_period!r}")
        self.time_period = float(time_period)
        coeffs = {k: _TimeFunction(v, k, owner) for k, v in zip(_NAMES, (A, B, f0, C, D, y0))}
        nx, ny = coeffs["f0"].size_at(0.0), coeffs["y0"].size_at(0.0)
        nb, nd = coeffs["B"].size_at(0.0), coeffs["D"].size_at(0.0)
        if nx and nb % nx:
            raise ValueError(f"{owner}: B has {nb} entries, not a multiple of nx = {nx} (size of f0)")
        nu = nb // nx if nx else (nd // ny if ny else 0)
        shapes = {"A": (nx, nx), "B": (nx, nu), "f0": (nx, 1), "C": (ny, nx), "D": (ny, nu), "y0": (ny, 1)}
        for k, f in coeffs.items():
            f.fix_shape(shapes[k], 0.0)
        self._c = coeffs
        self.nx, self.nu, self.ny = nx, nu, ny
        self._u = self.declare_input_port("u", nu) if nu else None
        if self.time_period > 0:
            self.declare_discrete_state(nx)
            if nx:
                self.declare_periodic_discrete_update(self.time_period, 0.0,
                                                      lambda c: self._affine(c, c.discrete_state, "A", "B", "f0"))
        elif nx:
            self.declare_continuous_state(nx)
        self.declare_output_port("y", ny, self._output,
                                 feedthrough=None if nu else False)

    def _state(self, context):
        return context.discrete_state if self.time_period > 0 else context.continuous_state

    def _affine(self, context, x, a, b, f):
        """``a(t) x + b(t) u + f(t)`` (numpy, or a CasADi column when anything is symbolic)."""
        t = context.time
        c = self._c
        u = self._u.eval(context) if self._u is not None else None
        if not ops.any_symbolic(t, x, u):
            out = c[f](t)[:, 0]
            if self.nx:
                out = out + c[a](t) @ x
            if u is not None:
                out = out + c[b](t) @ u
            return out
        out = ca.SX(c[f](t))
        if self.nx:
            out = out + ca.mtimes(ca.SX(c[a](t)), ca.SX(x))
        if u is not None:
            out = out + ca.mtimes(ca.SX(c[b](t)), ca.SX(u))
        return out

    def _output(self, context):
        return self._affine(context, self._state(context), "C", "D", "y0")

    def time_derivatives(self, context):
        return self._affine(context, context.continuous_state, "A", "B", "f0")

    def coefficients_at(self, t: float) -> dict:
        """``{"A": A(t), "B": B(t), "f0": f0(t), "C": C(t), "D": D(t), "y0": y0(t)}``
        (numeric arrays, vectors of shape (n,))."""
        out = {k: f(float(t)) for k, f in self._c.items()}
        out["f0"], out["y0"] = out["f0"][:, 0], out["y0"][:, 0]
        return out
