"""The common part of the transcriptions: decision variables, placeholders, costs, bounds,
initial guesses, the solve and its result.

A problem has ``N`` knots (``num_time_samples``) at times ``t_0 = context time``, ``t_{k+1} =
t_k + h_k``, with the state ``x_k`` and the input ``u_k`` (the selected input port of the
system) as decision variables at each knot and the time steps ``h_k`` either decision
variables (direct collocation) or fixed (transcription, shooting). The dynamics come from
:func:`systems.symbolic.to_casadi` of the very system being simulated, so any diagram of
symbolic-capable blocks works as it is. Costs and constraints are CasADi expressions of the
placeholders :meth:`MultipleShooting.time`, :meth:`MultipleShooting.state` and
:meth:`MultipleShooting.input` (one value per knot), or of the decision variables
themselves (:meth:`MultipleShooting.state` with a knot index, :meth:`initial_state`, ...).
The problem is a :class:`casadi.Opti` (``.opti``): sparse exact derivatives, IPOPT with exact
Hessians by default.

The interface follows Drake's ``MultipleShooting`` (snake_case), see
:mod:`systems.trajectory_optimization`.
"""
from __future__ import annotations

import time as _time
from typing import Optional

import casadi as ca
import numpy as np

from ..symbolic import converted_input_ports, to_casadi
from ..trajectories import PiecewisePolynomial
from .result import TrajectoryOptimizationError, TrajectoryOptimizationResult

__all__ = ["MultipleShooting"]


def _count(value, name: str, who: str, minimum: int = 2) -> int:
    try:
        n = int(value)
    except (TypeError, ValueError):
        raise TrajectoryOptimizationError(f"{who}: {name} must be a whole number >= {minimum}, "
                                          f"got {value!r}") from None
    if n != value or n < minimum:
        raise TrajectoryOptimizationError(f"{who}: {name} must be a whole number >= {minimum}, "
                                          f"got {value!r}")
    return n


def _vector(value, n: int, name: str, who: str) -> np.ndarray:
    v = np.asarray(value, dtype=float)
    if v.ndim == 0:
        v = np.full(n, float(v))
    v = v.ravel()
    if v.shape[0] != n:
        raise TrajectoryOptimizationError(f"{who}: {name} has {v.shape[0]} entries, expected {n}")
    if np.any(np.isnan(v)):
        raise TrajectoryOptimizationError(f"{who}: {name} contains NaN")
    return v


class MultipleShooting:
    """Base of :class:`DirectCollocation`, :class:`DirectTranscription` and
    :class:`DirectShooting` (module docstring).

    Parameters
    ----------
    system : System
        A leaf system or diagram that :func:`~systems.symbolic.to_casadi` converts.
    context : Context
        A context of ``system``: its time is ``t_0``, its parameters are used, and the inputs
        other than the optimized one must be fixed in it (their values are held).
    num_time_samples : int
        Number of knots ``N >= 2``.
    input_port_index : int or str, optional
        The input port whose value is optimized (default the first input port, if any).
    fixed_time_step : float, optional
        Fixed ``h`` (transcription, shooting); else the time steps are decision variables in
        ``[minimum_time_step, maximum_time_step]``.
    minimum_time_step, maximum_time_step : float, optional
    discrete : bool
        The state is the discrete state (a discrete-time system).

    Raises
    ------
    TrajectoryOptimizationError
        A count below 2, an unknown input port, an input port neither optimized nor fixed in
        ``context``, time-step bounds that are not ``0 < min <= max``.
    """

    name = "MultipleShooting"

    def __init__(self, system, context, num_time_samples: int, *, input_port_index=None,
                 fixed_time_step: Optional[float] = None,
                 minimum_time_step: Optional[float] = None,
                 maximum_time_step: Optional[float] = None, discrete: bool = False) -> None:
        who = f"{self.name} of system '{system.name}'"
        self._who = who
        self.N = N = _count(num_time_samples, "num_time_samples", who)
        self.system = system
        self.cs = cs = to_casadi(system)
        ctx = context if context.system is system else system.get_my_context_from_root(context)
        self.t0 = float(ctx.time)
        p = np.asarray(ctx.parameters, float)
        self.discrete = bool(discrete)
        self.nx = cs.nxd if discrete else cs.nx
        # the optimized input port; the others are held at their fixed values
        ports = converted_input_ports(system)
        if input_port_index is None:
            sel = ports[0] if ports else None
        else:
            try:
                sel = system.get_input_port(input_port_index)
            except (ValueError, IndexError, TypeError):
                raise TrajectoryOptimizationError(
                    f"{who}: input_port_index {input_port_index!r} is not an input port; the "
                    f"system has {len(ports)}: {[q.name for q in ports]}") from None
        self.input_port = sel
        self.nu = sel.size if sel is not None else 0
        held = {}
        for port in ports:
            if port is sel:
                continue
            if not port.is_fixed(ctx):
                raise TrajectoryOptimizationError(
                    f"{who}: input port '{port.name}' is not the optimized input "
                    f"('{sel.name if sel else None}') and is not fixed in the context; fix it "
                    f"with get_input_port('{port.name}').fix_value(context, value)")
            held[port.name] = np.asarray(port.eval(ctx), float)
        t = ca.SX.sym("t")
        x = ca.SX.sym("x", self.nx)
        u = ca.SX.sym("u", self.nu)
        parts = [u if port is sel else ca.SX(held[port.name]) for port in ports]
        u_full = ca.vertcat(*parts) if parts else ca.SX(0, 1)
        xc0 = np.asarray(ctx.continuous_state, float)
        xd0 = np.asarray(ctx.discrete_state, float)
        if discrete:
            rhs = cs.update(t, xc0, x, u_full, p)
        else:
            rhs = cs.f(t, x, xd0, u_full, p)
        self._dynamics = ca.Function("dynamics", [t, x, u], [rhs], ["t", "x", "u"], ["rhs"])
        self.x_context = xd0.copy() if discrete else xc0.copy()
        # decision variables
        self.opti = opti = ca.Opti()
        self._X = opti.variable(self.nx, N)
        self._U = opti.variable(self.nu, N)
        if fixed_time_step is None:
            lo, hi = minimum_time_step, maximum_time_step
            if lo is None or hi is None or not (0 < float(lo) <= float(hi) < np.inf):
                raise TrajectoryOptimizationError(
                    f"{who}: need 0 < minimum_time_step <= maximum_time_step < inf, got "
                    f"{minimum_time_step!r}, {maximum_time_step!r}")
            self._h = opti.variable(N - 1)
            opti.subject_to(opti.bounded(float(lo), self._h, float(hi)))
            self._h_guess = 0.5 * (float(lo) + float(hi))
            opti.set_initial(self._h, np.full(N - 1, self._h_guess))    # never 0: h divides
            self.fixed_time_step = None
        else:
            h = float(fixed_time_step)
            if not (np.isfinite(h) and h > 0):
                raise TrajectoryOptimizationError(f"{who}: time_step must be finite and > 0, "
                                                  f"got {fixed_time_step!r}")
            self._h = ca.MX(ca.DM.ones(N - 1) * h)
            self._h_guess = h
            self.fixed_time_step = h
        times = [ca.MX(self.t0)]
        for k in range(N - 1):
            times.append(times[-1] + self._h[k])
        self._T = ca.horzcat(*times)                       # 1 x N
        # placeholders
        self._t_ph = ca.MX.sym("t")
        self._x_ph = ca.MX.sym("x", self.nx)
        self._u_ph = ca.MX.sym("u", self.nu)
        self._cost = ca.MX(0)
        self._expand = True
        self._built = None          # (cost, solver key) of the solver Opti holds
        self.add_dynamic_constraints()

    # ------------------------------------------------------------------ subclass hooks
    def add_dynamic_constraints(self) -> None:
        """Override: the transcription's defect constraints."""
        raise NotImplementedError

    def _running_cost_weights(self):
        """Override: ``(W, use_knots)`` so that the running cost is ``sum_k W_k g_k``."""
        raise NotImplementedError

    # ------------------------------------------------------------------ placeholders
    def time(self):
        """Placeholder for the time at a knot (use it inside costs and constraints)."""
        return self._t_ph

    def state(self, index: Optional[int] = None):
        """The state placeholder (no argument), or the state decision variables at knot
        ``index`` (nx,)."""
        if index is None:
            return self._x_ph
        return self._X[:, self._knot(index)]

    def input(self, index: Optional[int] = None):
        """The input placeholder (no argument), or the input decision variables at knot
        ``index`` (nu,)."""
        if index is None:
            return self._u_ph
        return self._U[:, self._knot(index)]

    def initial_state(self):
        """State decision variables at the first knot."""
        return self._X[:, 0]

    def final_state(self):
        """State decision variables at the last knot."""
        return self._X[:, -1]

    def time_step(self, index: int):
        """Time step ``h_index`` between knots ``index`` and ``index + 1`` (a decision
        variable in direct collocation, a constant otherwise)."""
        k = int(index)
        if not 0 <= k < self.N - 1:
            raise TrajectoryOptimizationError(f"{self._who}: time step index {index} outside "
                                              f"0..{self.N - 2}")
        return self._h[k]

    def _knot(self, index) -> int:
        k = int(index)
        if k < 0:
            k += self.N
        if not 0 <= k < self.N:
            raise TrajectoryOptimizationError(f"{self._who}: knot index {index} outside "
                                              f"0..{self.N - 1}")
        return k

    def _at_knot(self, expr, k: int):
        return ca.substitute([ca.MX(expr)] if not isinstance(expr, ca.MX) else [expr],
                             [self._t_ph, self._x_ph, self._u_ph],
                             [self._T[k], self._X[:, k], self._U[:, k]])[0]

    def _knot_function(self, expr, what: str) -> ca.Function:
        """``expr`` as a function of the placeholders (t, x, u)."""
        expr = ca.MX(expr) if not isinstance(expr, ca.MX) else expr
        try:
            return ca.Function(what.replace(" ", "_"), [self._t_ph, self._x_ph, self._u_ph], [expr])
        except RuntimeError:
            raise TrajectoryOptimizationError(
                f"{self._who}: the {what} must be an expression of time(), state() and input() "
                "only (use add_cost or add_bounding_box_constraint for expressions of the "
                "decision variables themselves)") from None

    # ------------------------------------------------------------------ costs
    def add_running_cost(self, expr) -> None:
        """Add the integral of ``expr(t, x, u)`` (placeholders) over the trajectory, by the
        transcription's quadrature (collocation: trapezoid over each interval; transcription
        and shooting: ``h g(t_k, x_k, u_k)`` for ``k < N - 1``)."""
        g = self._knot_function(expr, "running cost")
        if g.size1_out(0) * g.size2_out(0) != 1:
            raise TrajectoryOptimizationError(f"{self._who}: the running cost must be a scalar "
                                              f"expression, got shape {g.size_out(0)}")
        G = g.map(self.N)(self._T, self._X, self._U)        # 1 x N
        self._cost = self._cost + ca.dot(self._running_cost_weights(), G.T)

    def add_final_cost(self, expr) -> None:
        """Add ``expr`` at the final knot (placeholders of time, state and input), or any
        scalar expression of decision variables."""
        e = self._at_knot(expr, self.N - 1)
        if e.numel() != 1:
            raise TrajectoryOptimizationError(f"{self._who}: the final cost must be a scalar")
        self._cost = self._cost + e

    def objective(self):
        """The objective so far (a CasADi expression of the decision variables)."""
        return self._cost

    def add_cost(self, expr) -> None:
        """Add any scalar expression of decision variables (e.g. of ``time_step(k)``)."""
        self._cost = self._cost + expr

    # ------------------------------------------------------------------ constraints
    def add_constraint_to_all_knot_points(self, expr, lb=None, ub=None) -> None:
        """Impose a constraint at every knot: a CasADi relation of the placeholders (``x[0] <=
        2``, ``u == 0``) or, with ``lb``/``ub``, ``lb <= expr <= ub``."""
        if lb is None and ub is None:
            for k in range(self.N):
                self.opti.subject_to(self._at_knot(expr, k))
            return
        g = self._knot_function(expr, "knot constraint")
        n = g.size1_out(0) * g.size2_out(0)
        G = g.map(self.N)(self._T, self._X, self._U)
        lo = np.full(n, -np.inf) if lb is None else _vector(lb, n, "lb", self._who)
        hi = np.full(n, np.inf) if ub is None else _vector(ub, n, "ub", self._who)
        for k in range(self.N):
            self.opti.subject_to(self.opti.bounded(lo, G[:, k], hi))

    def add_bounding_box_constraint(self, lb, ub, var) -> None:
        """``lb <= var <= ub`` for a vector of decision variables ``var`` (scalars broadcast;
        sizes must match)."""
        n = var.numel()
        self.opti.subject_to(self.opti.bounded(_vector(lb, n, "lb", self._who),
                                               ca.vec(var),
                                               _vector(ub, n, "ub", self._who)))

    def add_input_bounds(self, lb, ub) -> None:
        """``lb <= u_k <= ub`` at every knot (size nu, scalars broadcast)."""
        lo, hi = _vector(lb, self.nu, "lb", self._who), _vector(ub, self.nu, "ub", self._who)
        for k in range(self.N):
            self.opti.subject_to(self.opti.bounded(lo, self._U[:, k], hi))

    def add_state_bounds(self, lb, ub) -> None:
        """``lb <= x_k <= ub`` at every knot (size nx, scalars broadcast)."""
        lo, hi = _vector(lb, self.nx, "lb", self._who), _vector(ub, self.nx, "ub", self._who)
        for k in range(self.N):
            self.opti.subject_to(self.opti.bounded(lo, self._X[:, k], hi))

    def add_equal_time_intervals_constraints(self) -> None:
        """All time steps equal (direct collocation; a no-op for fixed steps)."""
        if self.fixed_time_step is None:
            for k in range(1, self.N - 1):
                self.opti.subject_to(self._h[k] == self._h[0])

    def add_duration_bounds(self, lower: float, upper: float) -> None:
        """``lower <= t_N - t_0 <= upper`` (direct collocation)."""
        if not (float(lower) <= float(upper)):
            raise TrajectoryOptimizationError(f"{self._who}: duration bounds need lower <= "
                                              f"upper, got {lower}, {upper}")
        self.opti.subject_to(self.opti.bounded(float(lower), ca.sum1(self._h), float(upper)))

    # ------------------------------------------------------------------ guesses
    def set_initial_trajectory(self, u_traj=None, x_traj=None, *, x_initial=None,
                               x_final=None) -> None:
        """Initial guess: states from ``x_traj`` and inputs from ``u_traj``
        (:class:`~systems.trajectories.PiecewisePolynomial`s, sampled at equally spaced knots
        over their time span, which also sets the time steps of a free-time problem), else a
        straight line from ``x_initial`` (default: the context's state) to ``x_final`` (default
        equal to the start) and zero inputs."""
        span = None
        for traj in (x_traj, u_traj):
            if traj is not None:
                span = (traj.start_time(), traj.end_time())
        if span is None:
            h = self._h_guess
            span = (self.t0, self.t0 + h * (self.N - 1))
        ts = np.linspace(span[0], span[1], self.N)
        if self.fixed_time_step is None and span[1] > span[0]:
            self.opti.set_initial(self._h, np.full(self.N - 1, (span[1] - span[0]) / (self.N - 1)))
        if x_traj is not None:
            X = np.asarray(x_traj.vector_values(ts), float)
            if X.shape[0] != self.nx:
                raise TrajectoryOptimizationError(f"{self._who}: x_traj has {X.shape[0]} rows, "
                                                  f"expected the state size {self.nx}")
        else:
            a = self.x_context if x_initial is None else _vector(x_initial, self.nx, "x_initial",
                                                                 self._who)
            b = a if x_final is None else _vector(x_final, self.nx, "x_final", self._who)
            X = np.linspace(0.0, 1.0, self.N)[None, :] * (b - a)[:, None] + a[:, None]
        self.opti.set_initial(self._X, X)
        if u_traj is not None:
            U = np.asarray(u_traj.vector_values(ts), float)
            if U.shape[0] != self.nu:
                raise TrajectoryOptimizationError(f"{self._who}: u_traj has {U.shape[0]} rows, "
                                                  f"expected the input size {self.nu}")
            self.opti.set_initial(self._U, U)

    # ------------------------------------------------------------------ solve
    def solve(self, solver: str = "ipopt", options: Optional[dict] = None, verbose: bool = False,
              warm_start: Optional[TrajectoryOptimizationResult] = None
              ) -> TrajectoryOptimizationResult:
        """Solve the NLP; returns a :class:`TrajectoryOptimizationResult` (never raises for a
        failed solve: ``is_success()`` is False and ``status`` says why).

        Parameters
        ----------
        solver : str
            A CasADi NLP solver plugin (``"ipopt"``, ``"sqpmethod"``, ...).
        options : dict, optional
            Solver options (IPOPT's under their own names, e.g. ``{"tol": 1e-10,
            "max_iter": 500}``); exact Hessians unless you ask otherwise. IPOPT starts with
            ``mu_init = 1`` (IPOPT's own default is 0.1): a straight-line guess is far from
            feasible, and a larger first barrier parameter keeps the first iterates inside the
            bounds; measured on the swing-ups of ``benchmarks/bench_trajopt.py``, it halves the
            iterations and reaches cheaper local optima. Pass ``{"mu_init": 0.1}`` for IPOPT's.
        verbose : bool
            Print the solver's iterations.
        warm_start : TrajectoryOptimizationResult, optional
            Start from a previous result of this problem (primal and dual values).

        Notes
        -----
        The first solve builds the NLP's derivative functions (CasADi expands the graph and
        forms the exact Hessian of the Lagrangian); later solves of an unchanged problem with
        the same solver and options reuse them, so only the solver's iterations are paid.
        """
        opti = self.opti
        plugin_opts = {"expand": self._expand, "print_time": bool(verbose), "record_time": True}
        solver_opts = {} if solver != "ipopt" else {"print_level": 5 if verbose else 0,
                                                    "sb": "yes", "mu_init": 1.0}
        if warm_start is not None:
            opti.set_initial(opti.x, warm_start.x)
            opti.set_initial(opti.lam_g, warm_start.lam_g)
            if solver == "ipopt":
                solver_opts.update({"warm_start_init_point": "yes",
                                    "mu_init": 1e-6, "warm_start_bound_push": 1e-9,
                                    "warm_start_mult_bound_push": 1e-9})
        solver_opts.update(options or {})
        key = (solver, repr(sorted(plugin_opts.items())), repr(sorted(solver_opts.items())))
        if self._built is None or self._built[0] is not self._cost or self._built[1] != key:
            # (re)build only when the cost, the solver or its options changed; constraints
            # added since the last solve make Opti rebuild by itself
            opti.minimize(self._cost)
            try:
                opti.solver(solver, plugin_opts, solver_opts)
            except RuntimeError as exc:
                raise TrajectoryOptimizationError(f"{self._who}: solver {solver!r} rejected "
                                                  f"the options {solver_opts}: {exc}") from None
            self._built = (self._cost, key)
        t_start = _time.perf_counter()
        try:
            sol = opti.solve()
            source = sol
            ok = True
        except RuntimeError:
            source = opti.debug
            ok = False
        elapsed = _time.perf_counter() - t_start
        stats = opti.stats()
        status = str(stats.get("return_status", "unknown"))
        ok = ok and bool(stats.get("success", ok))
        xv = np.asarray(source.value(opti.x), float).ravel()
        try:
            lam = np.asarray(source.value(opti.lam_g), float).ravel()
        except RuntimeError:
            lam = np.zeros(opti.ng)
        try:
            cost = float(source.value(self._cost))
        except RuntimeError:
            cost = float("nan")
        iters = int(stats.get("iter_count", -1))
        return TrajectoryOptimizationResult(ok, status, cost, iters, elapsed, xv, lam, opti.x)

    # ------------------------------------------------------------------ reconstruction
    def sample_times(self, result: TrajectoryOptimizationResult) -> np.ndarray:
        """Knot times (N,) of a result."""
        return np.asarray(result.get_solution(self._T), float).ravel()

    def reconstruct_input_trajectory(self, result: TrajectoryOptimizationResult
                                     ) -> PiecewisePolynomial:
        """The inputs as a first-order hold through the knots."""
        U = np.asarray(result.get_solution(self._U), float).reshape(self.nu, self.N)
        return PiecewisePolynomial.first_order_hold(self.sample_times(result), U)

    def reconstruct_state_trajectory(self, result: TrajectoryOptimizationResult
                                     ) -> PiecewisePolynomial:
        """The states as a first-order hold through the knots (direct collocation overrides:
        cubic Hermite with the dynamics' derivatives)."""
        X = np.asarray(result.get_solution(self._X), float).reshape(self.nx, self.N)
        return PiecewisePolynomial.first_order_hold(self.sample_times(result), X)
