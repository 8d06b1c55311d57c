"""Compiled simulation: the whole diagram as one CasADi function, integrated without
per-step Python calls.

:class:`CompiledSimulator` is what ``Simulator(system, compiled=True, ...)`` returns. It
converts the diagram with :func:`~systems.symbolic.to_casadi` and integrates

* with SUNDIALS CVODES through ``casadi.integrator`` (``integrator="cvodes"``,
  error-controlled, one call per segment between discrete updates), or
* with a fixed-step explicit Runge-Kutta scheme (``"explicit_euler"``, ``"runge_kutta2"``,
  ``"runge_kutta3"``, ``"runge_kutta4"``, step ``max_step``) unrolled by CasADi's
  ``mapaccum`` into one function, compiled to C through :mod:`solvers.compiled` (CasADi's
  virtual machine when no compiler is found).

Periodic discrete updates run at exactly ``offset + k * period`` (the update function is
part of the same CasADi graph) in the interpreted Simulator's (Drake's) order: a log
sample at an update time sees the state before the update, the update runs at the start
of the step leaving that time, and ``advance_to(T)`` leaves an update due at exactly ``T``
for the next call. Inputs hold their fixed values, and
:class:`~systems.primitives.VectorLogSink` logs record at the output times: every
``output_period`` (default ``max_step``) for per-step sinks and at their publish times for
periodic ones. Systems with witness functions, unrestricted updates or other publish
callbacks need the interpreted :class:`~systems.analysis.Simulator`; the constructor names
the block that stands in the way.

Building one is cheap after the first of a diagram structure: the conversion and every
function built from it (CVODES integrators per tolerance and output grid, compiled loops,
the log probe) are kept per structure -- classes, wiring, events and the constants a leaf
bakes into its expressions, compared by content -- in a small per-thread table
(``systems.analysis._compiled_reuse``; :func:`reuse_statistics`, :func:`clear_programs`,
:func:`empty_table`), so ``Simulator(diagram, compiled=True)`` in a Monte Carlo loop converts
once; a changed attribute or wiring converts again. Per-run values stay in the Context. The
periodic updates' schedule and the counters are an
:class:`~systems.analysis.event_schedule.EventSchedule`, as in the interpreted Simulator.
``Simulator(system, compiled="auto")`` picks this class where the diagram allows and the
interpreted Simulator otherwise (``systems.analysis._compiled_auto``, with one
:class:`CompiledFallbackWarning` naming the block).

A diagram holding a time-stepping plant whose step runs in a C kernel (a leaf offering
``compiled_step_protocol()``, such as :class:`multibody.plants.TimeSteppingRigidBodySystem`)
is simulated instead by :class:`WholeRunSimulator` (``systems.analysis._compiled_whole_run``):
the controllers, sources, discrete updates and log sinks traced to CasADi, the plant's
dynamics function and its contact kernel in one generated C loop, the whole ``advance_to``
without Python per step, with the interpreted Simulator's event order and trajectory;
:func:`simulate_batch` runs N such worlds (initial states, parameters) in one call.

A state or time derivative that becomes NaN or infinite raises one
:class:`~systems.analysis.NonFiniteStateError` naming the leaf system, the state index and
the time (CVODES is told to stop at the first non-finite right-hand side instead of
retrying, and the segment is retraced to name the state). A logged value that is NaN or
infinite raises :class:`~systems.errors.NonFiniteOutputError` naming the output port, its
system and the sample time, as the interpreted Simulator does: the log keeps the samples
up to that one and the context holds the state at that time
(``allow_non_finite_outputs=True`` logs them instead).
"""
from __future__ import annotations

import math
from typing import Dict, List, Optional, Tuple

import casadi as ca
import numpy as np

from solvers import ops
from solvers.compiled import CompiledFunction
from ..errors import PortValueError, SymbolicEvaluationError
from ._compiled_reuse import (CompiledFallbackWarning, InterpretedFallback, clear_programs,
                              empty_table, program_for, reuse_statistics)
from ._compiled_whole_run import BatchResult, WholeRunSimulator, simulate_batch
from ._published_values import SourceMap, raise_non_finite_read
from ._simulator_events import NonFiniteStateError, SimulationError, SimulatorStatus
from .event_schedule import EventSchedule
from ..events import PeriodicEvent, PerStepEvent, WitnessFunction
from ..primitives.logging import VectorLogSink
from ..symbolic import converted_input_ports, CasadiSystem
from ..system import System
from .integrators import TABLEAUS

__all__ = ["CompiledSimulator", "COMPILED_INTEGRATORS", "WholeRunSimulator", "simulate_batch",
           "BatchResult", "CompiledFallbackWarning", "reuse_statistics", "clear_programs",
           "empty_table"]

COMPILED_INTEGRATORS = ("cvodes", "explicit_euler", "runge_kutta2", "runge_kutta3", "runge_kutta4")
_EPS = 1e-12
_CHUNK = 200  # fixed steps per compiled call


def _rk_step(cs: CasadiSystem, tableau) -> ca.Function:
    """x_next = x + h sum_i b_i k_i for one explicit RK step, as a CasADi function."""
    s = cs.symbols
    h = ca.SX.sym("h")
    t, x, xd, u, p = s["t"], s["x"], s["xd"], s["u"], s["p"]
    ks = []
    for c_i, a_i in zip(tableau.c, tableau.a):
        xi = x
        for a_ij, k_j in zip(a_i, ks):
            if a_ij:
                xi = xi + h * a_ij * k_j
        ks.append(cs.f(t + c_i * h, xi, xd, u, p))
    x_next = x
    for b_i, k_i in zip(tableau.b, ks):
        if b_i:
            x_next = x_next + h * b_i * k_i
    return ca.Function("rk_step", [x, t, h, xd, u, p], [x_next], ["x", "t", "h", "xd", "u", "p"], ["x_next"])


class CompiledSimulator(InterpretedFallback):
    """Simulate a symbolic-capable system at compiled speed (see the module docstring).

    The interpreted Simulator's monitor, realtime rate and progress bar are not offered
    (:class:`~systems.analysis._compiled_reuse.InterpretedFallback`: ``TypeError`` naming the
    method, or, under ``compiled="auto"``, a switch to the interpreted Simulator).

    Parameters
    ----------
    system : System
    context : Context, optional
        Initial values (a default context if omitted); root inputs must be fixed.
    integrator : str
        One of :data:`COMPILED_INTEGRATORS`.
    accuracy : float
        CVODES relative tolerance.
    max_step : float
        Fixed step size of the Runge-Kutta schemes; CVODES' largest step (``inf``: no
        limit, CVODES only).
    atol : float, optional
        CVODES absolute tolerance (default ``accuracy * 1e-2``).
    output_period : float, optional
        Spacing of per-step log samples (default ``max_step``).
    backend : str
        ``"auto"``, ``"c"`` or ``"casadi"`` for the fixed-step loop (see
        :class:`solvers.compiled.CompiledFunction`).
    allow_non_finite_outputs : bool
        Log NaN or infinite values instead of raising
        :class:`~systems.errors.NonFiniteOutputError` (the interpreted Simulator's option).
    """

    def __new__(cls, system: Optional[System] = None, context=None, **kwargs):
        # A diagram holding a plant whose step runs in a C kernel (a leaf offering
        # compiled_step_protocol(), duck-typed: systems does not import multibody) runs as
        # a whole run in compiled code (systems.analysis._compiled_whole_run).
        if cls is CompiledSimulator and system is not None and any(
                callable(getattr(leaf, "compiled_step_protocol", None))
                for leaf in system.leaf_systems()):
            return WholeRunSimulator(system, context, **kwargs)
        return super().__new__(cls)

    def __init__(self, system: System, context=None, *, integrator: str = "cvodes",
                 accuracy: float = 1e-6, max_step: float = 0.1, output_period: Optional[float] = None,
                 backend: str = "auto", allow_non_finite_outputs: bool = False,
                 atol: Optional[float] = None, **unused):
        if integrator not in COMPILED_INTEGRATORS:
            raise ValueError(f"compiled simulation: unknown integrator {integrator!r}; valid choices: "
                             f"{', '.join(COMPILED_INTEGRATORS)}")
        if not (max_step > 0 and (math.isfinite(max_step) or integrator == "cvodes")):
            raise ValueError(f"compiled simulation: max_step must be > 0 (and finite for "
                             f"integrator '{integrator}'), got {max_step}")
        self._system = system
        self._context = context if context is not None else system.create_default_context()
        self._integrator = integrator
        self._rtol = float(accuracy)
        self._atol = float(accuracy) * 1e-2 if atol is None else float(atol)
        self._max_step = float(max_step)
        self._output_period = float(output_period or max_step)
        self._backend = backend
        self._check_outputs = not allow_non_finite_outputs
        self._sinks: List[Tuple[VectorLogSink, PeriodicEvent | PerStepEvent]] = []
        self._check_events()
        # The conversion and every function built from it are shared by the simulators of
        # diagrams of the same structure (systems.analysis._compiled_reuse).
        program = program_for(system)
        self._cs = program.bind(system)
        if not program.probe_built:
            program.probe, program.probe_built = self._make_probe(), True
        self._probe = program.probe
        self._cache: Dict[object, object] = program.functions
        self._tol_key = (self._rtol, self._atol, self._max_step)
        self._initialized = False
        self._new_schedule()

    # ------------------------------------------------------------------ setup
    def _new_schedule(self) -> None:
        """The event schedule (systems.analysis.event_schedule), shared in kind with the
        interpreted Simulator: the periodic updates' next occurrences (all of one period and
        offset, run together by one CasADi function) and the statistics."""
        self._schedule = EventSchedule(self._system, self._context,
                                       check_outputs=self._check_outputs)
        self._updates = [te for te in self._schedule.timed if te.event.kind == "discrete"]
        self._started = False

    def _check_events(self) -> None:
        for ev in self._system.events():
            leaf = ev.system
            if isinstance(leaf, VectorLogSink):
                self._sinks.append((leaf, ev))
                continue
            if isinstance(ev, WitnessFunction):
                raise SymbolicEvaluationError(
                    f"compiled simulation: system '{leaf.name}' declares witness function '{ev.name}'; "
                    f"use the interpreted Simulator (compiled=False)")
            if ev.kind != "discrete" or not isinstance(ev, PeriodicEvent):
                raise SymbolicEvaluationError(
                    f"compiled simulation: system '{leaf.name}' declares a {ev.kind} "
                    f"{type(ev).__name__}; only periodic discrete updates and log sinks run compiled "
                    f"(use the interpreted Simulator)")

    def _make_probe(self) -> Optional[ca.Function]:
        """A function giving every log sink's input, and the sinks' input slices."""
        if not self._sinks:
            return None
        ctx = self._system.create_default_context()
        s = self._cs.symbols
        ctx.set_time(s["t"])
        if self._cs.nx:
            ctx.set_continuous_state(s["x"])
        if self._cs.nxd:
            ctx.set_discrete_state(s["xd"])
        if self._cs.np:
            ctx.set_parameters(s["p"])
        for port in converted_input_ports(self._system):
            port.fix_value(ctx, s["u"][self._cs.input_slices[port.name]])
        values = []
        for sink, _ in self._sinks:
            v = sink.get_input_port().eval(ctx)
            values.append(ca.SX(v) if isinstance(v, ca.SX) else ca.SX(ca.DM(np.asarray(v, float))))
        return ca.Function("log_probe", [s["t"], s["x"], s["xd"], s["u"], s["p"]], [ca.vertcat(*values)])

    # ------------------------------------------------------------------ public API
    def get_context(self):
        """The simulation context (time, state and logs)."""
        return self._context

    get_mutable_context = get_context

    def get_system(self):
        """The system simulated."""
        return self._system

    @property
    def integrator(self) -> str:
        """Name of the integrator."""
        return self._integrator

    def get_num_steps_taken(self) -> int:
        """Integration calls (CVODES segments) or fixed steps taken."""
        return self._schedule.stats["steps"]

    def get_statistics(self) -> dict:
        """The event schedule's counters (``steps``: CVODES segments or fixed steps,
        ``discrete_updates``; the interpreted Simulator's other counters stay 0)."""
        return dict(self._schedule.stats)

    def reset_statistics(self) -> None:
        """Zero the counters."""
        self._schedule.reset_statistics()

    def reset_context(self, context) -> None:
        """Simulate from ``context`` next (a context of the same system); compiled code is kept."""
        if context.system is not self._system:
            raise ValueError(f"reset_context: the context belongs to '{context.system.name}', not "
                             f"'{self._system.name}'")
        self._context = context
        self._initialized = False
        self._new_schedule()

    def initialize(self) -> None:
        """Build (and compile) the integration code, and record the initial log samples."""
        if self._integrator != "cvodes" and self._cs.nx:
            self._fixed_loop().build()
        t, x, xd, u, p = self._cs.from_context(self._context)
        self._record(np.array([t]), x.reshape(-1, 1), xd, u, p)
        self._initialized = True

    def advance_to(self, t_final: float) -> SimulatorStatus:
        """Integrate to ``t_final``, applying discrete updates and recording logs on the way;
        returns a ``"reached_boundary_time"`` :class:`~systems.analysis.SimulatorStatus`."""
        if isinstance(t_final, bool) or not isinstance(t_final, (int, float, np.number)) \
                or not math.isfinite(t_final):
            raise ValueError(f"CompiledSimulator.advance_to: final time must be a finite number, "
                             f"got {t_final!r}")
        if not self._initialized:
            self.initialize()
        t, x, xd, u, p = self._cs.from_context(self._context)
        if t_final < t:
            raise ValueError(f"advance_to({t_final}) is earlier than the current time {t}")
        updates, stats = self._updates, self._schedule.stats
        if not self._started:  # the updates due at or after the first time (then pending)
            self._schedule.start(t)
            self._started = True
        eps = _EPS * max(1.0, abs(t_final))
        while t < t_final - eps:
            # Start of a step (Drake's order): the update due at t, pending since the previous
            # step ended at t; the publishes at t (log samples) saw the pre-update state.
            if updates and updates[0].t_next <= t + eps:
                xd_new = np.asarray(self._cs.update(t, x, xd, u, p).full(), float).ravel()
                self._check_finite(t, t, x, xd_new, "discrete update")
                xd = xd_new
                for te in updates:
                    te.advance()
                stats["discrete_updates"] += 1
            t_next = min(t_final, updates[0].t_next) if updates else t_final
            times, xs = self._integrate(t, t_next, x, xd, u, p)
            if xs.shape[1] and not np.all(np.isfinite(xs)):
                self._report_nonfinite(t, x, times, xs, xd, u, p)
            x = xs[:, -1] if xs.shape[1] else x
            self._record(times, xs, xd, u, p)
            t = t_next
        self._write_back(t_final, x, xd)
        return SimulatorStatus("reached_boundary_time", float(t_final), float(t_final))

    def _locate(self, index: int, discrete: bool):
        """The leaf system owning entry ``index`` of the flat (discrete) state."""
        start = 0
        for leaf in self._system.leaf_systems():
            n = leaf.num_discrete_states() if discrete else leaf.num_continuous_states()
            if index < start + n:
                return leaf, index - start
            start += n
        return self._system, index  # pragma: no cover

    def _first_nonfinite(self, vec: np.ndarray, discrete: bool):
        """``(index, leaf, local index)`` of the first non-finite entry of a flat state (or
        derivative) vector."""
        bad = int(np.flatnonzero(~np.isfinite(vec))[0])
        return (bad,) + tuple(self._locate(bad, discrete))

    def _check_finite(self, t0, t1, x, xd, what) -> None:
        for vec, discrete, kind in ((x, False, "continuous state"), (xd, True, "discrete state")):
            if vec.size and not np.all(np.isfinite(vec)):
                bad, leaf, local = self._first_nonfinite(vec, discrete)
                when = f"t={t1!r}" if t0 == t1 else f"the step from t={t0!r} to t={t1!r}"
                raise NonFiniteStateError(
                    f"compiled simulation of '{self._system.name}': {kind} {local} of system "
                    f"'{leaf.name}' (index {bad}) became {vec[bad]} in {when} ({what}); the "
                    f"context keeps the last finite state")

    def _report_nonfinite(self, t0, x0, times, xs, xd, u, p) -> None:
        """Name the first non-finite state of an integrated segment, and the derivative
        that made it so when it is non-finite at the last finite sample."""
        col = int(np.flatnonzero(~np.all(np.isfinite(xs), axis=0))[0])
        t_prev = t0 if col == 0 else float(times[col - 1])
        x_prev = x0 if col == 0 else xs[:, col - 1]
        self._write_back(t_prev, x_prev, xd)
        xdot = np.asarray(self._cs.f(t_prev, x_prev, xd, u, p), float).ravel()
        if not np.all(np.isfinite(xdot)):
            bad, leaf, local = self._first_nonfinite(xdot, False)
            raise NonFiniteStateError(
                f"compiled simulation of '{self._system.name}': time derivative of continuous "
                f"state {local} of system '{leaf.name}' (index {bad}) is {xdot[bad]} at "
                f"t={t_prev!r}; the context keeps the last finite state")
        self._check_finite(t_prev, float(times[col]), xs[:, col], xd, self._integrator)

    # ------------------------------------------------------------------ integration
    def _output_times(self, t0: float, t1: float) -> np.ndarray:
        """Sample times in (t0, t1]: the output grid, periodic sink times, and t1."""
        dt = self._output_period
        k0 = math.floor(t0 / dt + 1e-9) + 1
        k1 = math.floor(t1 / dt + 1e-9)
        parts = [np.arange(k0, k1 + 1) * dt, [t1]]
        for sink, ev in self._sinks:
            if isinstance(ev, PeriodicEvent):
                ka = ev.next_index_after(t0)
                kb = math.floor((t1 - ev.offset) / ev.period + 1e-9)
                parts.append(ev.offset + np.arange(ka, kb + 1) * ev.period)
        tol = 1e-10 * max(1.0, abs(t1))
        grid = np.sort(np.concatenate(parts))
        grid = grid[(grid > t0 + tol) & (grid <= t1 + tol)]
        keep = np.concatenate([[True], np.diff(grid) > tol]) if grid.size else grid.astype(bool)
        grid = grid[keep]
        grid[-1] = t1
        return grid

    def _integrate(self, t0, t1, x, xd, u, p):
        if self._cs.nx == 0:
            times = self._output_times(t0, t1)
            return times, np.tile(x.reshape(-1, 1), (1, times.size))
        if self._integrator == "cvodes":
            return self._integrate_cvodes(t0, t1, x, xd, u, p)
        return self._integrate_fixed(t0, t1, x, xd, u, p)

    def _integrate_cvodes(self, t0, t1, x, xd, u, p):
        times = self._output_times(t0, t1)
        taus = times - t0
        key = ("cvodes", self._tol_key, np.round(taus, 12).tobytes())
        F = self._cache.get(key)
        if F is None:
            s = self._cs.symbols
            tau, t_start = ca.SX.sym("tau"), ca.SX.sym("t_start")
            params = ca.vertcat(t_start, s["xd"], s["u"], s["p"])
            ode = self._cs.f(t_start + tau, s["x"], s["xd"], s["u"], s["p"])
            # A NaN in the right-hand side stops CVODES at once (one line from CasADi instead of
            # a warning per retried step); _diagnose_failure then names the state.
            opts = {"abstol": self._atol, "reltol": self._rtol,
                    "max_step_size": self._max_step if math.isfinite(self._max_step) else 0.0,
                    "regularity_check": True, "show_eval_warnings": False,
                    "disable_internal_warnings": True}
            integ = ca.integrator("cvodes_segment", "cvodes", {"x": s["x"], "p": params, "t": tau, "ode": ode},
                                  0.0, list(taus), opts)
            names = integ.name_in()
            # CasADi's own evaluation through numpy buffers (no DM conversions).
            F = (CompiledFunction(integ, backend="casadi"), names.index("x0"), names.index("p"),
                 [np.zeros(integ.nnz_in(i)) for i in range(integ.n_in())])
            if len(self._cache) > 64:
                self._cache.clear()
            self._cache[key] = F
        fun, ix, ip, args = F
        args = list(args)
        args[ix], args[ip] = x, np.concatenate([[t0], xd, u, p])
        try:
            xf = fun(*args)[0]
        except RuntimeError as exc:
            self._diagnose_failure(t0, t1, x, xd, u, p, exc)
        self._schedule.stats["steps"] += 1
        return times, np.asarray(xf, float).reshape(self._cs.nx, -1)

    def _diagnose_failure(self, t0, t1, x0, xd, u, p, exc) -> None:
        """CVODES failed on [t0, t1]: retrace the segment with small classical RK4 steps
        (numerically, through the same CasADi right-hand side) to find the first time
        derivative that is not finite, and raise :class:`NonFiniteStateError` naming it;
        any other failure becomes :class:`SimulationError` with CVODES' message."""
        n = 2000
        h = (t1 - t0) / n
        f = self._cs.f
        t, x = t0, np.asarray(x0, float)
        for _ in range(n):
            k = []
            for c, a in ((0.0, 0.0), (0.5, 0.5), (0.5, 0.5), (1.0, 1.0)):
                tc = t + c * h
                xc = x if not k else x + a * h * k[-1]
                kc = np.asarray(f(tc, xc, xd, u, p), float).ravel()
                if not (np.all(np.isfinite(kc)) and np.all(np.isfinite(xc))):
                    self._write_back(t, x, xd)
                    vec, what = (kc, "time derivative of") if np.all(np.isfinite(xc)) else (xc, "")
                    bad, leaf, local = self._first_nonfinite(vec, False)
                    raise NonFiniteStateError(
                        f"compiled simulation of '{self._system.name}' (CVODES): "
                        f"{what + ' ' if what else ''}continuous state {local} of system "
                        f"'{leaf.name}' (index {bad}) is {vec[bad]} at t={tc!r}; the context "
                        f"keeps the last finite state (t={t!r})") from None
                k.append(kc)
            x = x + h / 6.0 * (k[0] + 2.0 * k[1] + 2.0 * k[2] + k[3])
            t = t0 + (_ + 1) * h
        raise SimulationError(f"compiled simulation of '{self._system.name}': CVODES failed "
                              f"between t = {t0} and {t1}: {exc}") from exc

    def _fixed_loop(self) -> CompiledFunction:
        """CHUNK fixed steps in one compiled call (an MX wrapper keeps mapaccum a C loop)."""
        key = ("fixed", self._integrator, self._backend)
        loop = self._cache.get(key)
        if loop is None:
            step = _rk_step(self._cs, TABLEAUS[self._integrator])
            acc = step.mapaccum("rk_loop", _CHUNK, 1)  # x accumulated; t and h per step
            cs = self._cs
            x, ts, hs = ca.MX.sym("x", cs.nx), ca.MX.sym("t", 1, _CHUNK), ca.MX.sym("h", 1, _CHUNK)
            xd, u, p = ca.MX.sym("xd", cs.nxd), ca.MX.sym("u", cs.nu), ca.MX.sym("p", cs.np)
            xs = acc(x, ts, hs, ca.repmat(xd, 1, _CHUNK), ca.repmat(u, 1, _CHUNK), ca.repmat(p, 1, _CHUNK))
            fun = ca.Function(ops.function_name(self._system.name, self._integrator, "loop"), [x, ts, hs, xd, u, p], [xs])
            loop = self._cache[key] = CompiledFunction(fun, backend=self._backend)
        return loop

    def _integrate_fixed(self, t0, t1, x, xd, u, p):
        h = self._max_step
        n_full = int(math.floor((t1 - t0) / h + 1e-9))
        ts = t0 + h * np.arange(n_full)
        hs = np.full(n_full, h)
        rest = t1 - (t0 + n_full * h)
        if rest > 1e-12 * max(1.0, abs(t1)):
            ts, hs = np.append(ts, t0 + n_full * h), np.append(hs, rest)
        n = ts.size
        if n == 0:
            return np.zeros(0), np.zeros((self._cs.nx, 0))
        loop = self._fixed_loop()
        pad = (-n) % _CHUNK  # zero-length steps leave x unchanged
        ts_p = np.concatenate([ts, np.full(pad, t1)])
        hs_p = np.concatenate([hs, np.zeros(pad)])
        out = np.empty((self._cs.nx, n + pad))
        for k in range(0, n + pad, _CHUNK):
            chunk = np.asarray(loop(x, ts_p[k:k + _CHUNK], hs_p[k:k + _CHUNK], xd, u, p), float)
            out[:, k:k + _CHUNK] = chunk.reshape(self._cs.nx, _CHUNK)
            x = out[:, k + _CHUNK - 1]
        self._schedule.stats["steps"] += n
        times = ts + hs
        times[-1] = t1  # land exactly on the segment end (an event or output time)
        return times, out[:, :n]

    # ------------------------------------------------------------------ logging and results
    def _record(self, times, xs, xd, u, p):
        if self._probe is None or times.size == 0:
            return
        masks = [self._wanted(ev, times) for _, ev in self._sinks]
        needed = np.flatnonzero(np.logical_or.reduce(masks))
        if needed.size == 0:
            return
        n = needed.size
        probe = self._cache.get(("probe", n))
        if probe is None:
            probe = self._cache[("probe", n)] = CompiledFunction(
                self._probe.map("probe_map", "serial", n, [2, 3, 4], []), backend="casadi")
        values = np.asarray(probe(times[needed], xs[:, needed], xd, u, p), float).reshape(-1, n)
        bad = self._first_bad_sample(values, masks, needed) if self._check_outputs else None
        last = n if bad is None else bad[0] + 1   # log up to the offending sample
        k = 0
        for (sink, _), mask in zip(self._sinks, masks):
            size = sink.get_input_port().size
            cols = mask[needed][:last]
            sink.find_log(self._context).extend(times[needed][:last][cols],
                                                values[k:k + size, :last][:, cols])
            k += size
        if bad is not None:
            col, (sink, ev), rows = bad
            t = float(times[needed[col]])
            self._write_back(t, xs[:, needed[col]], xd)
            src = SourceMap(self._system).source(sink, 0)
            what = "periodic publish" if isinstance(ev, PeriodicEvent) else "per-step publish"
            raise_non_finite_read((None, 0, False, src, sink.get_input_port(), None), t, what,
                                  values[rows, col])

    def _first_bad_sample(self, values, masks, needed):
        """``(column, (sink, event), rows)`` of the earliest non-finite value a sink logs."""
        best, k = None, 0
        for pair, mask in zip(self._sinks, masks):
            rows = slice(k, k + pair[0].get_input_port().size)
            k = rows.stop
            cols = np.flatnonzero(mask[needed] & ~np.all(np.isfinite(values[rows]), axis=0))
            if cols.size and (best is None or cols[0] < best[0]):
                best = (int(cols[0]), pair, rows)
        return best

    @staticmethod
    def _wanted(ev, times: np.ndarray) -> np.ndarray:
        """Which sample times a sink records: all (per step) or its publish times."""
        if isinstance(ev, PerStepEvent):
            return np.ones(times.size, bool)
        j = np.round((times - ev.offset) / ev.period)
        return (j >= 0) & (np.abs(ev.offset + j * ev.period - times) <= 1e-9 * np.maximum(1.0, np.abs(times)))

    def _write_back(self, t, x, xd) -> None:
        ctx = self._context
        ctx.set_time(t)
        try:
            if self._cs.nx:
                ctx.set_continuous_state(x)
            if self._cs.nxd:
                ctx.set_discrete_state(xd)
        except PortValueError as exc:
            raise FloatingPointError(f"compiled simulation of '{self._system.name}' diverged: {exc}") from exc
