"""What a trajectory optimization returns, and its errors."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import casadi as ca
import numpy as np

from ..errors import TrajectoryOptimizationError

__all__ = ["TrajectoryOptimizationError", "TrajectoryOptimizationResult"]


@dataclass
class TrajectoryOptimizationResult:
    """The outcome of :meth:`MultipleShooting.solve`.

    Attributes
    ----------
    success : bool
        Whether the solver reported a (locally) optimal solution.
    status : str
        The solver's return status (IPOPT's, e.g. ``"Solve_Succeeded"``,
        ``"Infeasible_Problem_Detected"``, ``"Maximum_Iterations_Exceeded"``).
    cost : float
        Objective value at the returned point.
    iterations : int
        Solver iterations.
    solve_time : float
        Wall time of the solve (s), setup excluded.
    x : ndarray
        All decision variables at the returned point (the solver's last iterate when it failed).
    lam_g : ndarray
        Constraint multipliers at that point (for warm starts).
    """

    success: bool
    status: str
    cost: float
    iterations: int
    solve_time: float
    x: np.ndarray
    lam_g: np.ndarray
    _decision: Any = field(default=None, repr=False)

    def is_success(self) -> bool:
        """Whether the solve succeeded (Drake's ``MathematicalProgramResult.is_success``)."""
        return bool(self.success)

    def get_solution(self, var) -> np.ndarray:
        """Value of ``var`` (a decision variable or any CasADi expression of decision
        variables, e.g. ``prog.state(3)`` or ``prog.final_state()``) at the returned point,
        as an array of the expression's shape (vectors 1-D)."""
        fn = ca.Function("value", [self._decision], [var])
        out = np.asarray(fn(self.x), float)
        return out.ravel() if (out.ndim == 2 and 1 in out.shape) else out

    def __repr__(self) -> str:
        return (f"TrajectoryOptimizationResult(success={self.success}, status={self.status!r}, "
                f"cost={self.cost:.6g}, iterations={self.iterations}, "
                f"solve_time={self.solve_time:.3g} s)")
