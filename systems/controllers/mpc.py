"""``LinearModelPredictiveController``: a QP over a horizon at every sample (linear MPC).

For the discrete-time model ``x_{k+1} = A x_k + B u_k`` the controller solves, at each sample
time from the measured state ``x_0``,

.. math::

    \\min_{u_0..u_{N-1}} \\sum_{k=0}^{N-1} \\left(x_k^T Q x_k + u_k^T R u_k\\right)
        + x_N^T P x_N
    \\quad\\text{s.t.}\\quad u_{min} \\le u_k \\le u_{max},\\; x_{min} \\le x_k \\le x_{max}
    \\;(k = 1..N),

condensed to a QP in the inputs (``x = Phi x_0 + Gamma U``), and applies ``u_0`` until the next
sample (receding horizon; J. B. Rawlings, D. Q. Mayne and M. M. Diehl, *Model Predictive
Control: Theory, Computation, and Design*, 2nd ed., 2017, ch. 1-2). With ``P`` the discrete
Riccati solution (the default) and no active bounds the first input is exactly the LQR's
``-K x_0``. The QP is solved by CasADi's ``conic`` interface (qpOASES by default, an exact
active-set method; HiGHS, OSQP or qrqp on request), warm-started from the previous solution shifted by one sample
(kept in the context's memory). An infeasible or failed QP holds the previous input and sets
the output ``feasible`` to 0.
"""
from __future__ import annotations

from typing import Optional

import casadi as ca
import numpy as np
from scipy.linalg import solve_discrete_are

from ..leaf_system import LeafSystem

__all__ = ["LinearModelPredictiveController"]


def _bound(value, n: int, default: float, name: str, who: str) -> np.ndarray:
    if value is None:
        return np.full(n, default)
    b = np.atleast_1d(np.asarray(value, dtype=float)).ravel()
    b = np.full(n, b[0]) if b.shape[0] == 1 else b
    if b.shape[0] != n or np.any(np.isnan(b)):
        raise ValueError(f"{who}: {name} must have 1 or {n} entries, got {value!r}")
    return b


class LinearModelPredictiveController(LeafSystem):
    """Linear MPC on a discrete-time model (module docstring).

    Parameters
    ----------
    A, B : array_like
        Discrete model (n x n, n x m) at the controller's ``sampling_period``.
    Q, R : array_like
        Stage weights (n x n positive semidefinite, m x m positive definite).
    horizon : int
        ``N >= 1`` steps.
    sampling_period : float
        Controller period (s), > 0.
    u_min, u_max, x_min, x_max : float or array_like, optional
        Bounds (default none).
    P : array_like, optional
        Terminal weight (default the discrete Riccati solution, which makes the unconstrained
        controller the LQR).
    predict_one_step : bool
        Plan from the predicted next state ``A x + B u_now`` instead of the measured one.
        Use it with a discrete-time plant updating at the same instants: such a plant reads
        the controller's previous output at each sample, so the input computed at sample
        ``k`` acts from sample ``k + 1`` (with a continuous plant the new input acts at once:
        leave it off).
    solver : str
        A CasADi ``conic`` plugin: ``"qpoases"`` (default), ``"highs"``, ``"osqp"``,
        ``"qrqp"``.
    name : str, optional

    Ports
    -----
    input ``state`` (n); outputs ``control`` (m, held between samples) and ``feasible`` (1:
    1 when the last QP was solved, else 0).

    Raises
    ------
    ValueError
        Inconsistent sizes, a non-positive horizon or period, R not positive definite.
    """

    def __init__(self, A, B, Q, R, horizon: int, sampling_period: float, *, u_min=None,
                 u_max=None, x_min=None, x_max=None, P=None, solver: str = "qpoases",
                 predict_one_step: bool = False, name: Optional[str] = None):
        super().__init__(name)
        who = f"LinearModelPredictiveController '{self.name}'"
        A, B = np.atleast_2d(np.asarray(A, float)), np.atleast_2d(np.asarray(B, float))
        n, m = B.shape
        Q, R = np.atleast_2d(np.asarray(Q, float)), np.atleast_2d(np.asarray(R, float))
        if A.shape != (n, n) or Q.shape != (n, n) or R.shape != (m, m):
            raise ValueError(f"{who}: sizes do not fit: A {A.shape}, B {B.shape}, Q {Q.shape}, "
                             f"R {R.shape} (expected ({n}, {n}), ({n}, {m}), ({n}, {n}), ({m}, {m}))")
        if np.min(np.linalg.eigvalsh(0.5 * (R + R.T))) <= 0:
            raise ValueError(f"{who}: R must be positive definite")
        N = int(horizon)
        if N != horizon or N < 1:
            raise ValueError(f"{who}: horizon must be a whole number >= 1, got {horizon!r}")
        h = float(sampling_period)
        if not (np.isfinite(h) and h > 0):
            raise ValueError(f"{who}: sampling_period must be finite and > 0, got "
                             f"{sampling_period!r}")
        P = solve_discrete_are(A, B, Q, R) if P is None else np.atleast_2d(np.asarray(P, float))
        self.A, self.B, self.Q, self.R, self.P, self.N, self.h = A, B, Q, R, P, N, h
        self.predict_one_step = bool(predict_one_step)
        self.n, self.m = n, m
        umin, umax = _bound(u_min, m, -np.inf, "u_min", who), _bound(u_max, m, np.inf, "u_max", who)
        xmin, xmax = _bound(x_min, n, -np.inf, "x_min", who), _bound(x_max, n, np.inf, "x_max", who)
        # condensed prediction: X = [x_1..x_N] = Phi x0 + Gamma U
        Phi = np.vstack([np.linalg.matrix_power(A, k + 1) for k in range(N)])
        Gamma = np.zeros((N * n, N * m))
        for k in range(N):
            for j in range(k + 1):
                Gamma[k * n:(k + 1) * n, j * m:(j + 1) * m] = np.linalg.matrix_power(A, k - j) @ B
        Qbar = np.kron(np.eye(N), Q)
        Qbar[-n:, -n:] = P
        self._H = 2.0 * (Gamma.T @ Qbar @ Gamma + np.kron(np.eye(N), R))
        self._F = 2.0 * Gamma.T @ Qbar @ Phi
        self._Phi, self._Gamma = Phi, Gamma
        self._lbx, self._ubx = np.tile(umin, N), np.tile(umax, N)
        lba, uba = np.tile(xmin, N), np.tile(xmax, N)
        rows = np.flatnonzero(np.isfinite(lba) | np.isfinite(uba))   # bounded predictions only
        self._has_x = rows.size > 0
        self._rows, self._lba, self._uba = rows, lba[rows], uba[rows]
        self._Gx, self._Phix = Gamma[rows], Phi[rows]
        a_sp = ca.DM(self._Gx).sparsity() if self._has_x else ca.Sparsity(0, N * m)
        opts = {"print_time": False}
        if solver == "highs":
            opts.update({"highs": {"output_flag": False}, "error_on_fail": False})
        elif solver == "qrqp":
            opts.update({"print_iter": False, "print_header": False, "print_info": False,
                         "error_on_fail": False})
        elif solver == "osqp":
            opts.update({"osqp": {"verbose": False, "eps_abs": 1e-9, "eps_rel": 1e-9,
                                  "polish": True}, "error_on_fail": False})
        elif solver == "qpoases":
            opts.update({"printLevel": "none", "error_on_fail": False})
        try:
            self._qp = ca.conic(f"{self.name}_qp", solver,
                                {"h": ca.DM(self._H).sparsity(), "a": a_sp}, opts)
        except RuntimeError as exc:
            raise ValueError(f"{who}: CasADi QP solver {solver!r} is not available ({exc})") from None
        self.state = self.declare_input_port("state", n)
        self.declare_discrete_state(np.zeros(m + 1))
        self.declare_periodic_discrete_update(h, 0.0, self._update)
        self.declare_output_port("control", m, lambda c: c.discrete_state[:m], feedthrough=False,
                                 prerequisites=["discrete_state"])
        self.declare_output_port("feasible", 1, lambda c: c.discrete_state[m:], feedthrough=False,
                                 prerequisites=["discrete_state"])

    def solve(self, x0, warm=None) -> tuple[np.ndarray, bool]:
        """The optimal input sequence ``U`` (N x m) from ``x0`` and whether the QP succeeded."""
        x0 = np.asarray(x0, float).ravel()
        args = dict(h=self._H, g=self._F @ x0, lbx=self._lbx, ubx=self._ubx)
        if self._has_x:
            free = self._Phix @ x0
            args.update(a=self._Gx, lba=self._lba - free, uba=self._uba - free)
        if warm is not None:
            args["x0"] = warm
        sol = self._qp(**args)
        ok = bool(self._qp.stats().get("success", False))
        U = np.asarray(sol["x"], float).reshape(self.N, self.m)
        return U, ok and bool(np.all(np.isfinite(U)))

    def _update(self, context):
        x0 = np.asarray(self.state.eval(context), float)
        if self.predict_one_step:
            x0 = self.A @ x0 + self.B @ context.discrete_state[:self.m]
        mem = context.get_memory()
        U, ok = self.solve(x0, mem.get("warm"))
        if not ok:
            return np.concatenate([context.discrete_state[:self.m], [0.0]])
        mem["warm"] = np.concatenate([U[1:].ravel(), U[-1]])      # shifted by one sample
        return np.concatenate([U[0], [1.0]])
