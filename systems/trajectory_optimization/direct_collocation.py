"""Direct collocation: Hermite-Simpson on the continuous state, free time steps.

On each interval ``[t_k, t_k + h_k]`` with ``f_k = f(t_k, x_k, u_k)`` the state is a cubic
Hermite polynomial through ``(x_k, f_k)`` and ``(x_{k+1}, f_{k+1})``; the input is a first-order
hold. The dynamics must hold at the interval's midpoint (the defect constraint)

.. math::

    x_c = \\frac{x_k + x_{k+1}}{2} + \\frac{h_k}{8} (f_k - f_{k+1}), \\quad
    u_c = \\frac{u_k + u_{k+1}}{2}, \\quad
    f(t_k + h_k/2, x_c, u_c) - \\left(\\frac{3 (x_{k+1} - x_k)}{2 h_k}
    - \\frac{f_k + f_{k+1}}{4}\\right) = 0,

the cubic's slope at the midpoint equals the dynamics there; ``-2 h_k / 3`` times the defect is
``x_{k+1} - x_k - h_k (f_k + 4 f_c + f_{k+1}) / 6``, Simpson's rule on the cubic (C. R.
Hargraves and S. W. Paris, "Direct trajectory optimization using nonlinear programming and
collocation", J. Guidance 10(4), 1987). This is the constraint of Drake's ``DirectCollocation``
in its scaling (derivative units). The running cost is
integrated by the trapezoidal rule, ``sum_k h_k (g_k + g_{k+1}) / 2`` (as Drake does).
"""
from __future__ import annotations



import casadi as ca
import numpy as np

from ..trajectories import PiecewisePolynomial
from .multiple_shooting import MultipleShooting
from .result import TrajectoryOptimizationError, TrajectoryOptimizationResult

__all__ = ["DirectCollocation"]


class DirectCollocation(MultipleShooting):
    """Hermite-Simpson direct collocation (module docstring) on any System or Diagram with
    continuous state that :func:`~systems.symbolic.to_casadi` converts.

    Parameters
    ----------
    system : System
    context : Context
        Its time is ``t_0``; its parameters and the fixed values of the other inputs are used.
    num_time_samples : int
        Number of knots ``N >= 2``.
    minimum_time_step, maximum_time_step : float
        Bounds of every time step ``h_k`` (decision variables): ``0 < min <= max``.
    input_port_index : int or str, optional
        The optimized input port (default the first one, if any).

    Raises
    ------
    TrajectoryOptimizationError
        A system without continuous state (use :class:`DirectTranscription` for a
        discrete-time system), or any error of :class:`MultipleShooting`.

    Examples
    --------
    >>> import numpy as np
    >>> from systems.primitives import LinearSystem
    >>> from systems.trajectory_optimization import DirectCollocation
    >>> plant = LinearSystem(A=[[0, 1], [0, 0]], B=[[0], [1]], C=np.eye(2))   # double integrator
    >>> dc = DirectCollocation(plant, plant.create_default_context(), 41, 0.01, 0.1)
    >>> dc.add_running_cost(dc.input()[0] ** 2)
    >>> dc.add_bounding_box_constraint([0, 0], [0, 0], dc.initial_state())
    >>> dc.add_bounding_box_constraint([1, 0], [1, 0], dc.final_state())
    >>> dc.add_duration_bounds(1.0, 1.0)
    >>> dc.add_equal_time_intervals_constraints()
    >>> result = dc.solve()
    >>> result.is_success(), abs(result.cost - 12.0) < 0.02   # min effort rest to rest: 12 / T^3
    (True, True)
    """

    name = "DirectCollocation"

    def __init__(self, system, context, num_time_samples: int, minimum_time_step: float,
                 maximum_time_step: float, input_port_index=None) -> None:
        if system.num_continuous_states() == 0:
            raise TrajectoryOptimizationError(
                f"DirectCollocation of system '{system.name}': the system has no continuous "
                "state to collocate; use DirectTranscription for a discrete-time system")
        super().__init__(system, context, num_time_samples, input_port_index=input_port_index,
                         minimum_time_step=minimum_time_step, maximum_time_step=maximum_time_step)

    def add_dynamic_constraints(self) -> None:
        """The Hermite-Simpson defects of every interval (module docstring)."""
        N, nx = self.N, self.nx
        F = self._dynamics.map(N)(self._T, self._X, self._U)          # nx x N
        H = ca.repmat(ca.transpose(self._h), nx, 1)                    # nx x (N - 1)
        xk, xk1 = self._X[:, :-1], self._X[:, 1:]
        fk, fk1 = F[:, :-1], F[:, 1:]
        xc = 0.5 * (xk + xk1) + H / 8.0 * (fk - fk1)
        uc = 0.5 * (self._U[:, :-1] + self._U[:, 1:])
        tc = self._T[:, :-1] + 0.5 * ca.transpose(self._h)
        fc = self._dynamics.map(N - 1)(tc, xc, uc)
        # slope of the cubic at the midpoint minus the dynamics there (derivative units)
        self._defects = fc - (1.5 * (xk1 - xk) / H - 0.25 * (fk + fk1))
        self.opti.subject_to(ca.vec(self._defects) == 0)
        self._F = F

    def _running_cost_weights(self):
        h = self._h
        zero = ca.MX(0)
        left = ca.vertcat(h, zero)
        right = ca.vertcat(zero, h)
        return 0.5 * (left + right)

    def defects(self, result: TrajectoryOptimizationResult) -> np.ndarray:
        """The Hermite-Simpson defects (nx, N - 1), in derivative units, at a result (zero at
        a solution, to the solver's constraint tolerance)."""
        return np.asarray(result.get_solution(self._defects), float).reshape(self.nx, self.N - 1)

    def reconstruct_state_trajectory(self, result: TrajectoryOptimizationResult
                                     ) -> PiecewisePolynomial:
        """The cubic Hermite spline through the knot states with the dynamics' derivatives
        ``f(t_k, x_k, u_k)`` (exactly the polynomial the collocation constrains)."""
        X = np.asarray(result.get_solution(self._X), float).reshape(self.nx, self.N)
        F = np.asarray(result.get_solution(self._F), float).reshape(self.nx, self.N)
        return PiecewisePolynomial.cubic_hermite(self.sample_times(result), X, F)
