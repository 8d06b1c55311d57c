"""Zero-order-hold discretization of linear and affine systems (Drake's
``DiscreteTimeApproximation``)."""
from __future__ import annotations

import math

import numpy as np
from scipy.linalg import expm

from ..system import System
from .linear import AffineSystem, LinearSystem

__all__ = ["discrete_time_approximation"]


def discrete_time_approximation(system: System, time_period: float):
    """The exact discretization of a continuous LinearSystem / AffineSystem under a
    zero-order hold on its input.

    With the input held over each period h,

    .. math::

        \\exp\\left(h \\begin{bmatrix} A & B & f_0 \\\\ 0 & 0 & 0 \\\\ 0 & 0 & 0
        \\end{bmatrix}\\right) = \\begin{bmatrix} A_d & B_d & f_{0d} \\\\ 0 & I & 0 \\\\
        0 & 0 & 1 \\end{bmatrix},

    so ``x[n+1] = A_d x[n] + B_d u[n] + f0_d`` equals the continuous solution at the sample
    times; ``C``, ``D`` and ``y0`` are unchanged (Franklin, Powell and Workman, *Digital
    Control of Dynamic Systems*, 3rd ed., sec. 4.3.3; scipy's ``cont2discrete`` with
    ``method="zoh"`` gives the same A_d, B_d).

    Parameters
    ----------
    system : LinearSystem or AffineSystem
        Continuous (``time_period == 0``).
    time_period : float
        h > 0.

    Returns
    -------
    LinearSystem or AffineSystem
        Of the same class, with ``time_period = h`` and name ``"<name>_discrete"``.

    Raises
    ------
    TypeError
        For other systems (the message names the system and its type).
    ValueError
        For a system that is already discrete or a bad ``time_period``.
    """
    if not isinstance(system, LinearSystem):
        name = getattr(system, "name", repr(system))
        raise TypeError(f"discrete_time_approximation: system '{name}' is a {type(system).__name__}; "
                        f"expected a LinearSystem or AffineSystem (linearize a nonlinear system "
                        f"first, e.g. with systems.analysis.linearize)")
    if system.time_period > 0:
        raise ValueError(f"discrete_time_approximation: system '{system.name}' is already discrete "
                         f"(time_period {system.time_period}); expected a continuous one")
    if isinstance(time_period, bool) or not isinstance(time_period, (int, float, np.floating)) \
            or not math.isfinite(float(time_period)) or time_period <= 0:
        raise ValueError(f"discrete_time_approximation: time_period must be a finite number > 0 "
                         f"(seconds), got {time_period!r}")
    h = float(time_period)
    A, B, f0 = system.A, system.B, system.f0
    nx, nu = B.shape
    M = np.zeros((nx + nu + 1, nx + nu + 1))
    M[:nx, :nx], M[:nx, nx:nx + nu], M[:nx, -1] = A, B, f0
    E = expm(M * h)
    Ad, Bd, f0d = E[:nx, :nx], E[:nx, nx:nx + nu], E[:nx, -1]
    name = f"{system.name}_discrete"
    if isinstance(system, AffineSystem):
        return AffineSystem(Ad, Bd, f0d, system.C, system.D, system.y0, time_period=h, name=name)
    return LinearSystem(Ad, Bd, system.C, system.D, time_period=h, name=name)
