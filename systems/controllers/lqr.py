"""Linear quadratic regulators: continuous, discrete, and finite-horizon (time-varying).

Continuous infinite horizon: minimize the integral of x'Qx + u'Ru + 2x'Nu subject to
xdot = Ax + Bu. With S the stabilizing solution of the algebraic Riccati equation

    A'S + SA - (SB + N) R^-1 (B'S + N') + Q = 0,

the optimal feedback is u = -Kx, K = R^-1 (B'S + N') (Anderson & Moore, *Optimal Control:
Linear Quadratic Methods*, 1990, ch. 2-3). Discrete: K = (R + B'SB)^-1 (B'SA + N') with S
from the discrete Riccati equation. Riccati equations are solved by scipy.

With a constraint matrix F (Drake's ``F``), the optimization is performed on the subspace
F x = 0: with the rows of P an orthonormal basis of the null space of F (P P' = I, P F' = 0)
and y = P x, the reduced problem ydot = P A P' y + P B u with weights P Q P', R, P N is
solved, S = P' S_y P and K = R^-1 (B'S + N'P'P).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Tuple

import casadi as ca
import numpy as np
from scipy.integrate import solve_ivp
from scipy.linalg import null_space, solve_continuous_are, solve_discrete_are

from ..errors import NonFiniteMatrixError
from ..leaf_system import LeafSystem
from ..primitives.linear import AffineSystem, LinearSystem
from ..system import System

__all__ = ["LinearQuadraticRegulator", "DiscreteTimeLinearQuadraticRegulator",
           "FiniteHorizonLinearQuadraticRegulator", "FiniteHorizonLQRResult",
           "TimeVaryingLQRController"]


def _finite(name: str, M: np.ndarray, who: str) -> np.ndarray:
    """``M`` unchanged, or a NonFiniteMatrixError naming the matrix and its first bad entry."""
    bad = ~np.isfinite(M)
    if np.any(bad):
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        raise NonFiniteMatrixError(
            f"{who}: {name} has {int(bad.sum())} non-finite entr{'y' if bad.sum() == 1 else 'ies'}, "
            f"the first {name}[{', '.join(map(str, idx))}] = {float(M[idx])}; every entry of {name} "
            f"must be finite")
    return M


def _check_weights(A, B, Q, R, N, who):
    A, B = np.atleast_2d(np.asarray(A, float)), np.atleast_2d(np.asarray(B, float))
    n, m = B.shape
    if A.shape != (n, n):
        raise ValueError(f"{who}: A has shape {A.shape} but B has {n} rows; expected A of shape ({n}, {n})")
    Q = np.atleast_2d(np.asarray(Q, float))
    R = np.atleast_2d(np.asarray(R, float))
    if Q.shape != (n, n):
        raise ValueError(f"{who}: Q has shape {Q.shape}, expected ({n}, {n})")
    if R.shape != (m, m):
        raise ValueError(f"{who}: R has shape {R.shape}, expected ({m}, {m})")
    N = np.zeros((n, m)) if N is None else np.atleast_2d(np.asarray(N, float))
    if N.size == 0:                       # Drake: a zero-sized N is a zero matrix
        N = np.zeros((n, m))
    if N.shape != (n, m):
        raise ValueError(f"{who}: N has shape {N.shape}, expected ({n}, {m})")
    for name, M in (("A", A), ("B", B), ("Q", Q), ("R", R), ("N", N)):
        _finite(name, M, who)
    if not np.allclose(Q, Q.T) or np.min(np.linalg.eigvalsh((Q + Q.T) / 2)) < -1e-10 * max(1.0, np.abs(Q).max()):
        raise ValueError(f"{who}: Q must be symmetric positive semidefinite")
    if not np.allclose(R, R.T) or np.min(np.linalg.eigvalsh((R + R.T) / 2)) <= 0:
        raise ValueError(f"{who}: R must be symmetric positive definite")
    return A, B, Q, R, N


def _constraint_basis(F, n: int, who: str) -> Optional[np.ndarray]:
    """Rows: an orthonormal basis P of {x : F x = 0} (P P' = I, P F' = 0); None without F."""
    if F is None:
        return None
    F = np.atleast_2d(np.asarray(F, float))
    if F.size == 0:                       # Drake: a zero-sized F is no constraint
        return None
    if F.ndim != 2 or F.shape[1] != n:
        raise ValueError(f"{who}: F has shape {F.shape}, expected (num_constraints, {n})")
    _finite("F", F, who)
    P = null_space(F).T
    if P.shape[0] == 0:
        raise ValueError(f"{who}: F has rank {n} = num_states, so F x = 0 leaves only x = 0; "
                         f"rank(F) must be < {n}")
    return P


def _care(A, B, Q, R, N, who, P: Optional[np.ndarray] = None):
    """Continuous Riccati solution (K, S); on the subspace F x = 0 when the basis P is given."""
    if P is None:
        Ay, By, Qy, Ny = A, B, Q, N
    else:
        Ay, By, Qy, Ny = P @ A @ P.T, P @ B, P @ Q @ P.T, P @ N
        Qy = (Qy + Qy.T) / 2
    try:
        Sy = solve_continuous_are(Ay, By, Qy, R, s=Ny)
    except (np.linalg.LinAlgError, ValueError) as exc:
        raise RuntimeError(f"{who}: the Riccati equation has no stabilizing solution ({exc}); "
                           f"check that (A, B) is stabilizable and (A, Q) detectable") from exc
    if P is None:
        return np.linalg.solve(R, B.T @ Sy + N.T), Sy
    S = P.T @ Sy @ P
    K = np.linalg.solve(R, B.T @ S + N.T @ P.T @ P)
    return K, S


def _dare(A, B, Q, R, N, who):
    try:
        S = solve_discrete_are(A, B, Q, R, s=N)
    except (np.linalg.LinAlgError, ValueError) as exc:
        raise RuntimeError(f"{who}: the discrete Riccati equation has no stabilizing solution ({exc})") from exc
    K = np.linalg.solve(R + B.T @ S @ B, B.T @ S @ A + N.T)
    return K, S


def LinearQuadraticRegulator(*args, **kwargs):
    """Continuous-time LQR, in Drake's three forms.

    ``LinearQuadraticRegulator(A, B, Q, R, N=None, F=None) -> (K, S)``: the gain K (m x n)
    and Riccati solution S (n x n) of

    .. math:: \\min_u \\int_0^\\infty x'Qx + u'Ru + 2x'Nu \\, dt, \\quad
              \\dot x = Ax + Bu, \\quad F x = 0,

    the optimal feedback being u = -K x and the cost-to-go x'Sx. ``N`` (n x m) is the cross
    weight; ``F`` (k x n, rank < n) is a constraint: the problem is solved in the
    coordinates y = P x of the null space of F (P P' = I, P F' = 0), S = P' S_y P and
    K = R^-1 (B'S + N'P'P), as Drake does. Zero-sized N or F count as absent.

    ``LinearQuadraticRegulator(linear_system, Q, R, N=None)``: for a
    :class:`~systems.primitives.LinearSystem` or ``AffineSystem`` without a context, the
    controller ``u = -K x`` from its own (A, B) (the discrete Riccati equation for a
    discrete system).

    ``LinearQuadraticRegulator(system, context, Q, R, N=None, input_port_index=0) ->
    AffineSystem``: linearizes ``system`` at the equilibrium in ``context`` with respect to
    the input port ``input_port_index`` (index or name; the other inputs are held at their
    values in ``context``; ``"all"`` stacks every vector input) and returns the controller
    u = u0 - K (x - x0) as a block with input ``u`` (the plant state) and output ``y`` (the
    command). For a discrete plant the discrete Riccati equation is used. The gains are also
    stored on the controller as ``K`` and ``S``.

    Raises
    ------
    NonFiniteMatrixError
        When A, B, Q, R, N or F (or the linearization of ``system``) has NaN or infinite
        entries; the message names the matrix and the entry.
    ValueError
        For shapes that disagree, Q not positive semidefinite, R not positive definite, or
        rank(F) = n.
    RuntimeError
        When the Riccati equation has no stabilizing solution.

    References
    ----------
    B. D. O. Anderson and J. B. Moore, *Optimal Control: Linear Quadratic Methods*,
    Prentice Hall, 1990, ch. 2-3.
    """
    who = "LinearQuadraticRegulator"
    if args and isinstance(args[0], System):
        allowed = ({"N"} if isinstance(args[0], LinearSystem) and (len(args) < 2 or not _is_context(args[1]))
                   else {"N", "input_port_index", "equilibrium_tolerance"})
        unknown = set(kwargs) - allowed
        if unknown:
            extra = (" (the constraint F is accepted only with matrices: "
                     "LinearQuadraticRegulator(A, B, Q, R, N, F), as in Drake)" if "F" in unknown else "")
            raise TypeError(f"{who}: unknown keyword arguments {sorted(unknown)}; expected "
                            f"{sorted(allowed)}{extra}")
        if allowed == {"N"}:
            return _lqr_for_linear_system(*args, **kwargs)
        return _lqr_for_system(*args, **kwargs)
    names = ["A", "B", "Q", "R", "N", "F"]
    unknown = set(kwargs) - set(names)
    if unknown:
        raise TypeError(f"{who}: unknown keyword arguments {sorted(unknown)}; expected A, B, Q, R, "
                        f"N (the cross weight) and F (the constraint F x = 0)")
    if len(args) > len(names):
        raise TypeError(f"{who}: expected (A, B, Q, R[, N[, F]]), got {len(args)} positional arguments")
    given = dict(zip(names, args))
    for name in kwargs:
        if name in given:
            raise TypeError(f"{who}: {name} given both by position and by keyword")
    given.update(kwargs)
    missing = [name for name in names[:4] if name not in given]
    if missing:
        raise TypeError(f"{who}: missing {', '.join(missing)}; expected (A, B, Q, R[, N[, F]])")
    A, B, Q, R, N = _check_weights(given["A"], given["B"], given["Q"], given["R"], given.get("N"), who)
    return _care(A, B, Q, R, N, who, _constraint_basis(given.get("F"), A.shape[0], who))


def _is_context(obj) -> bool:
    from ..context import Context
    return isinstance(obj, Context)


def _lqr_for_linear_system(system, Q, R, N=None):
    """Drake's ``LinearQuadraticRegulator(linear_system, Q, R, N)``: the controller
    ``u = -K x`` of a LinearSystem/AffineSystem from its own A, B (continuous or discrete),
    without a context."""
    who = f"LinearQuadraticRegulator('{system.name}')"
    weights = _check_weights(system.A, system.B, Q, R, N, who)
    K, S = _dare(*weights, who) if system.time_period > 0 else _care(*weights, who)
    ctrl = AffineSystem(D=-K, y0=np.zeros(K.shape[0]), name=f"{system.name}_lqr")
    ctrl.K, ctrl.S = K, S
    ctrl.x0, ctrl.u0 = np.zeros(K.shape[1]), np.zeros(K.shape[0])
    return ctrl


def DiscreteTimeLinearQuadraticRegulator(A, B, Q, R, N=None) -> Tuple[np.ndarray, np.ndarray]:
    """Discrete-time LQR: (K, S) for x[n+1] = A x[n] + B u[n], u = -K x."""
    who = "DiscreteTimeLinearQuadraticRegulator"
    return _dare(*_check_weights(A, B, Q, R, N, who), who)


def _lqr_for_system(system: System, context, Q, R, N=None, *, input_port_index=0,
                    equilibrium_tolerance: float = 1e-6):
    from ..analysis.linearize import linearize
    lin = linearize(system, context, input_port_index=input_port_index, output_port_index="none",
                    equilibrium_tolerance=equilibrium_tolerance)
    who = f"LinearQuadraticRegulator('{system.name}')"
    weights = _check_weights(lin.A, lin.B, Q, R, N, who)
    K, S = _dare(*weights, who) if lin.time_period > 0 else _care(*weights, who)
    n, m = lin.A.shape[0], lin.B.shape[1]
    ctrl = AffineSystem(D=-K, y0=lin.u0 + K @ lin.x0, name=f"{system.name}_lqr")
    ctrl.K, ctrl.S, ctrl.x0, ctrl.u0 = K, S, lin.x0, lin.u0
    assert ctrl.get_input_port().size == n and ctrl.get_output_port().size == m
    return ctrl


@dataclass
class FiniteHorizonLQRResult:
    """Solution of a finite-horizon LQR problem on [t0, tf].

    ``S(t)`` (n x n) and ``K(t)`` (m x n) are callables (dense output of the backward
    Riccati integration); ``x0(t)``, ``u0(t)`` the nominal trajectory; ``controller()``
    makes the time-varying feedback block u = u0(t) - K(t) (x - x0(t)).
    """

    t0: float
    tf: float
    S: Callable[[float], np.ndarray]
    K: Callable[[float], np.ndarray]
    x0: Callable[[float], np.ndarray]
    u0: Callable[[float], np.ndarray]

    def controller(self, name: Optional[str] = None) -> "TimeVaryingLQRController":
        """The feedback u = u0(t) - K(t) (x - x0(t)) as a block (input ``x``, output ``u``)."""
        return TimeVaryingLQRController(self, name=name)


class TimeVaryingLQRController(LeafSystem):
    """u = u0(t) - K(t) (x - x0(t)) from a :class:`FiniteHorizonLQRResult` (numeric only)."""

    def __init__(self, result: FiniteHorizonLQRResult, name: Optional[str] = None):
        super().__init__(name)
        self.result = result
        n = result.S(result.t0).shape[0]
        m = result.K(result.t0).shape[0]
        x = self.declare_input_port("x", n)
        self.declare_output_port(
            "u", m, lambda c: self._control(c, x), feedthrough=True)

    def _control(self, context, port):
        r = self.result
        t = min(max(float(context.time), r.t0), r.tf)
        return r.u0(t) - r.K(t) @ (np.asarray(port.eval(context)) - r.x0(t))


def _as_traj(traj, default, size, name):
    if traj is None:
        value = np.asarray(default, float).ravel()
        return lambda t: value
    if callable(traj):
        return lambda t: np.atleast_1d(np.asarray(traj(t), float)).ravel()
    value = np.asarray(traj, float).ravel()
    if value.shape[0] != size:
        raise ValueError(f"FiniteHorizonLinearQuadraticRegulator: {name} has size {value.shape[0]}, expected {size}")
    return lambda t: value


def FiniteHorizonLinearQuadraticRegulator(system: System, context, t0: float, tf: float, Q, R, *,
                                          Qf=None, x0=None, u0=None, rtol: float = 1e-8,
                                          atol: float = 1e-10) -> FiniteHorizonLQRResult:
    """Finite-horizon (time-varying) LQR about a nominal trajectory of a continuous system.

    Minimizes (x-x0)(tf)' Qf (x-x0)(tf) + integral over [t0, tf] of dx'Q dx + du'R du for the
    linearization along (x0(t), u0(t)). The Riccati differential equation

        -Sdot = Q - S B R^-1 B' S + S A + A' S,  S(tf) = Qf,

    is integrated backward with scipy's ``solve_ivp`` (dense output); K(t) = R^-1 B(t)' S(t).

    Parameters
    ----------
    system, context : the plant and a context holding its parameters (and default x0, u0).
    t0, tf : float
    Q, R, Qf : weights (Qf defaults to zero).
    x0, u0 : callables t -> vector (e.g. scipy splines), constant vectors, or None (take the
        state and fixed inputs of ``context``).
    """
    from ..symbolic import converted_input_ports, to_casadi
    if not (np.isfinite(t0) and np.isfinite(tf) and tf > t0):
        raise ValueError(f"FiniteHorizonLinearQuadraticRegulator: need finite t0 < tf, got "
                         f"t0={t0!r}, tf={tf!r} (the Riccati equation runs backward from tf)")
    cs = to_casadi(system)
    if cs.nxd:
        raise ValueError(f"FiniteHorizonLinearQuadraticRegulator: system '{system.name}' has discrete state")
    ctx = context if context.system is system else system.get_my_context_from_root(context)
    x_ctx = np.asarray(ctx.continuous_state, float)
    u_ctx = np.concatenate([np.asarray(port.eval(ctx), float) if port.is_fixed(ctx) else np.zeros(port.size)
                            for port in converted_input_ports(system)]) \
        if converted_input_ports(system) else np.zeros(0)
    p = np.asarray(ctx.parameters, float)
    n, m = cs.nx, cs.nu
    X0, U0 = _as_traj(x0, x_ctx, n, "x0"), _as_traj(u0, u_ctx, m, "u0")
    s = cs.symbols
    fx = cs.f(s["t"], s["x"], s["xd"], s["u"], s["p"])
    jac = ca.Function("AB", [s["t"], s["x"], s["u"], s["p"]],
                      [ca.jacobian(fx, s["x"]), ca.jacobian(fx, s["u"])])
    Q = np.atleast_2d(np.asarray(Q, float))
    R = np.atleast_2d(np.asarray(R, float))
    Qf = np.zeros((n, n)) if Qf is None else np.atleast_2d(np.asarray(Qf, float))
    _check_weights(np.eye(n), np.zeros((n, m)), Q, R, None, "FiniteHorizonLinearQuadraticRegulator")
    if Qf.shape != (n, n):
        raise ValueError(f"FiniteHorizonLinearQuadraticRegulator: Qf has shape {Qf.shape}, expected ({n}, {n})")
    Rinv = np.linalg.inv(R)

    def AB(t):
        A, B = jac(t, X0(t), U0(t), p)
        return np.asarray(A.full()), np.asarray(B.full())

    def rhs(t, s_flat):
        S = s_flat.reshape(n, n)
        A, B = AB(t)
        dS = -(Q - S @ B @ Rinv @ B.T @ S + S @ A + A.T @ S)
        return ((dS + dS.T) / 2).ravel()

    sol = solve_ivp(rhs, (tf, t0), Qf.ravel(), rtol=rtol, atol=atol, dense_output=True)
    if not sol.success:
        raise RuntimeError(f"FiniteHorizonLinearQuadraticRegulator: Riccati integration failed: {sol.message}")

    def S_of(t):
        return sol.sol(t).reshape(n, n)

    def K_of(t):
        return Rinv @ AB(t)[1].T @ S_of(t)

    return FiniteHorizonLQRResult(float(t0), float(tf), S_of, K_of, X0, U0)
