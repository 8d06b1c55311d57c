"""Whole runs in compiled code of a diagram holding a time-stepping plant (private part of
:mod:`systems.analysis.compiled`).

A leaf system that offers ``compiled_step_protocol()`` (duck-typed: the time-stepping
rigid-body plant of :mod:`multibody.plants` does; this package does not import it) takes
its discrete step in a C kernel. :class:`WholeRunSimulator` traces the rest of the diagram
on CasADi symbols -- controllers, sources, the other blocks' periodic discrete updates and
the log sinks' inputs, as functions of ``(t, xd, u, p)`` (time, the diagram's discrete
state, its fixed inputs, its parameters) -- and compiles them with the plant's dynamics
function and a loop calling the plant's kernel into one library
(:mod:`._compiled_driver`). ``advance_to`` then builds the schedule of steps in numpy and
runs it in one C call: no Python per step.

Event order: the interpreted :class:`~systems.analysis.Simulator`'s (Drake's), step for
step. Every periodic discrete update shares the plant's period and offset; a step starts
at an update time with the updates due there (evaluated from the same state, applied
together), ends at the next timed event (update or periodic publish) or at the final time,
and ends with the log samples: every per-step sink, and the periodic sinks due then (the
state before the updates due at that time, which stay pending for the next step).
``initialize`` records the samples at the initial time; ``advance_to(T)`` leaves the
updates due at ``T`` pending.

Fallback, never silent: a step the kernel rejects (no convergence, a singular velocity
block), or whose loop closures' elimination or projection flags dependent rows (the
plant's step then takes its numpy path), is taken in Python by the diagram's own update
callbacks -- the plant's step then falls back to its pivoting step (or its numpy path) and
warns once per plant, as in the interpreted run -- and the compiled loop resumes after it; ``fallback_steps`` lists ``(time, reason)`` of such
steps. The run gives the interpreted run's trajectory (the same generated dynamics code,
the same kernel; controllers evaluated by CasADi's generated code instead of numpy, so
equal to rounding).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

import casadi as ca
import numpy as np

from solvers import ops
from ..errors import NonFiniteOutputError, SymbolicEvaluationError
from ..events import PeriodicEvent, PerStepEvent
from ..primitives.logging import VectorLogSink
from ..symbolic import converted_input_ports
from ._compiled_driver import STATUS_TEXT, Driver
from ._compiled_reuse import InterpretedFallback, program_for, remember_as_built
from ._simulator_events import NonFiniteStateError, SimulationError

__all__ = ["WholeRunSimulator", "compiled_step_leaf", "BatchResult", "simulate_batch"]


def compiled_step_leaf(system):
    """``(leaf, protocol)`` of the leaf of ``system`` whose step runs in compiled code
    (``compiled_step_protocol()``), or None."""
    found = [leaf for leaf in system.leaf_systems()
             if callable(getattr(leaf, "compiled_step_protocol", None))]
    if not found:
        return None
    if len(found) > 1:
        raise SymbolicEvaluationError(
            f"compiled simulation of '{system.name}': several time-stepping plants "
            f"({', '.join(repr(p.name) for p in found)}); the compiled whole run takes one")
    return found[0], found[0].compiled_step_protocol()


def _as_sx(value) -> ca.SX:
    return ca.SX(ops.vector(value)) if ops.is_symbolic(value) else \
        ca.SX(ca.DM(np.asarray(value, float).reshape(-1, 1)))


def _merge_tol(t: float) -> float:
    return 1e-12 * max(1.0, abs(t))


class WholeRunSimulator(InterpretedFallback):
    """Simulate a diagram with a time-stepping plant entirely in compiled code (module
    docstring); what ``Simulator(diagram, compiled=True)`` returns for such a diagram.

    Parameters
    ----------
    system : System
        A diagram holding one leaf with ``compiled_step_protocol()`` and otherwise
        symbolic-capable blocks without continuous state.
    context : Context, optional
        Initial values (a default context if omitted); root inputs must be fixed.
    allow_non_finite_outputs : bool
        Log NaN or infinite values instead of raising
        :class:`~systems.errors.NonFiniteOutputError`.
    flags : sequence of str, optional
        Compiler flags of the run's library. Default: the library already built for this
        diagram's structure in this process, else :func:`solvers.compiled.auto_flags`,
        which compiles long code (a many-body diagram: hundreds of thousands of lines) at
        ``-O0`` in seconds. ``("-O1",)`` takes longer once (the library is cached on disk)
        for faster runs: the 48-velocity walk of ``examples/human_walking.py`` with its
        whole-body controller, 49 s of compilation for 2.5x faster runs (8.4x to 22x real
        time), bitwise the same results (no floating-point contraction at any level).
        Flags other than those of the library already built build a new one (the traced
        functions are kept). Only the compiled simulators take ``flags``.

    Raises
    ------
    SymbolicEvaluationError
        Naming the block or event that keeps the run out of compiled code (continuous
        state, witness functions, publishes other than log sinks, updates of another
        period, a block that cannot be traced on symbols, a plant whose steps do not all
        run in the kernel: its reason).
    solvers.errors.CompilerNotFound
        Without a C compiler.
    """

    def __init__(self, system, context=None, *, allow_non_finite_outputs: bool = False,
                 flags=None, **unused) -> None:
        self._system = system
        self._context = context if context is not None else system.create_default_context()
        self._check_outputs = not allow_non_finite_outputs
        self._plant, self._proto = compiled_step_leaf(system)
        nm = f"compiled simulation of '{system.name}'"
        if self._proto.refusal is not None:
            raise SymbolicEvaluationError(f"{nm}: {self._proto.refusal}; use the interpreted "
                                          "Simulator (compiled=False)")
        if system.num_continuous_states():
            leaf = next(s for s in system.leaf_systems() if s.num_continuous_states())
            raise SymbolicEvaluationError(
                f"{nm}: system '{leaf.name}' has continuous state; a compiled whole run with "
                f"the time-stepping plant '{self._plant.name}' takes discrete systems only")
        self._sinks: List[tuple] = []
        self._updates: List[tuple] = []
        self._check_events(nm)
        # The traced functions and the loaded driver are kept per diagram structure
        # (systems.analysis._compiled_reuse): a new simulator of it reuses them, with this
        # plant's kernel tables (the driver's proto) swapped in.
        program = program_for(system, convert=False)
        functions = program.functions
        cached = functions.get("whole_run")
        flags = None if flags is None else tuple(flags)
        if cached is not None and cached[-1].layout == Driver.layout_of(self._proto):
            (self._stage, self._log, self._plant_offset, self._nxd, self._nu, self._np,
             self._nlog, self._sink_rows, slices, driver) = cached
            self._input_slices = list(zip(converted_input_ports(system), slices))
            if flags is None or driver.flags == flags:
                self._driver = driver.with_proto(self._proto)
            else:                    # the same traced functions, a library with these flags
                self._driver = Driver(self._stage, self._log, self._proto, self._plant_offset,
                                      dict(nxd=self._nxd, nu=self._nu, np=self._np,
                                           nlog=self._nlog), system.name, flags=flags)
                functions["whole_run"] = cached[:-1] + (self._driver,)
        else:
            self._trace(nm)
            self._driver = Driver(self._stage, self._log, self._proto, self._plant_offset,
                                  dict(nxd=self._nxd, nu=self._nu, np=self._np, nlog=self._nlog),
                                  system.name, flags=flags)
            functions["whole_run"] = (self._stage, self._log, self._plant_offset, self._nxd,
                                      self._nu, self._np, self._nlog, self._sink_rows,
                                      [sl for _, sl in self._input_slices], self._driver)
            remember_as_built(system, program, convert=False)
        self._steps = 0
        self._fallbacks: List[tuple] = []
        self._reset_schedule()

    # ------------------------------------------------------------------ setup
    def _check_events(self, nm: str) -> None:
        h = self._proto.period
        for ev in self._system.events():
            leaf = ev.system
            if isinstance(leaf, VectorLogSink) and ev.kind == "publish" and \
                    isinstance(ev, (PeriodicEvent, PerStepEvent)):
                self._sinks.append((leaf, ev))
                continue
            if isinstance(ev, PeriodicEvent) and ev.kind == "discrete":
                if abs(ev.period - h) <= 1e-12 * h and ev.offset == 0.0:
                    self._updates.append((leaf, ev))
                    continue
                raise SymbolicEvaluationError(
                    f"{nm}: system '{leaf.name}' has a periodic discrete update of period "
                    f"{ev.period} and offset {ev.offset}; the compiled whole run takes updates "
                    f"at the plant's period {h} and offset 0 only")
            raise SymbolicEvaluationError(
                f"{nm}: system '{leaf.name}' declares a {getattr(ev, 'kind', 'witness')} "
                f"{type(ev).__name__}; only periodic discrete updates and log sinks run in a "
                "compiled whole run (use the interpreted Simulator)")

    def _trace(self, nm: str) -> None:
        """The stage and log functions of ``(t, xd, u, p)`` (module docstring)."""
        system, plant = self._system, self._plant
        ctx = system.create_default_context()
        nxd, npar = system.num_discrete_states(), system.num_numeric_parameters()
        inputs = converted_input_ports(system)
        nu = sum(port.size for port in inputs)
        t, xd = ca.SX.sym("t"), ca.SX.sym("xd", nxd)
        u, p = ca.SX.sym("u", nu), ca.SX.sym("p", npar)
        ctx.set_time(t)
        ctx.set_discrete_state(xd)
        if npar:
            ctx.set_parameters(p)
        self._input_slices, k = [], 0
        for port in inputs:
            port.fix_value(ctx, u[k:k + port.size])
            self._input_slices.append((port, slice(k, k + port.size)))
            k += port.size
        offset, parts, plant_ctx = 0, [], None
        events = {id(leaf): ev for leaf, ev in self._updates}
        self._leaf_ctxs = {}
        for leaf_ctx in ctx.leaf_contexts():
            leaf = leaf_ctx.system
            n = leaf.num_discrete_states()
            if leaf is plant:
                self._plant_offset, plant_ctx = offset, leaf_ctx
                parts.append(xd[offset:offset + n])
            elif n:
                ev = events.get(id(leaf))
                parts.append(xd[offset:offset + n] if ev is None else
                             self._traced(nm, leaf, "discrete update", lambda: ev.callback(leaf_ctx)))
            offset += n
        tau = self._traced(nm, plant, f"actuation (the inputs of plant '{plant.name}')",
                           lambda: self._proto.generalized_force(plant_ctx))
        logs = [self._traced(nm, sink, "logged input", lambda s=sink: s.get_input_port().eval(ctx))
                for sink, _ in self._sinks]
        args = [t, xd, u, p]
        self._stage = ca.Function("stage", args, [ca.densify(tau), ca.densify(ca.vertcat(*parts))])
        y = ca.vertcat(*logs) if logs else ca.SX(0, 1)
        self._log = ca.Function("log", args, [ca.densify(y)])
        self._nxd, self._nu, self._np, self._nlog = nxd, nu, npar, y.shape[0]
        self._sink_rows = []
        k = 0
        for sink, _ in self._sinks:
            n = sink.get_input_port().size
            self._sink_rows.append(slice(k, k + n))
            k += n

    @staticmethod
    def _traced(nm, leaf, what, evaluate) -> ca.SX:
        try:
            value = _as_sx(evaluate())
        except SymbolicEvaluationError as exc:
            raise SymbolicEvaluationError(f"{nm}: {exc}") from exc
        except Exception as exc:  # noqa: BLE001 - any failure on symbols names the block
            raise SymbolicEvaluationError(
                f"{nm}: system '{leaf.name}' ({type(leaf).__name__}) cannot be evaluated on "
                f"CasADi symbols: its {what} raised {type(exc).__name__}: {exc}") from exc
        for i in range(value.numel()):
            e = value[i]
            if e.is_constant() and math.isnan(float(e)):
                raise SymbolicEvaluationError(
                    f"{nm}: the {what} of system '{leaf.name}' evaluates to nan on symbols (a "
                    "block converts a symbol to float); write it with solvers.ops")
        return value

    # ------------------------------------------------------------------ public API
    def get_context(self):
        """The simulation context (time, state, logs)."""
        return self._context

    get_mutable_context = get_context

    def get_system(self):
        """The system simulated."""
        return self._system

    @property
    def fallback_steps(self) -> List[tuple]:
        """``(time, reason)`` of every step the kernel rejected and the diagram's own update
        took in Python (the plant's step then falls back to its pivoting step, warned once
        per plant)."""
        return [(t, r) for _, t, r in self._fallbacks]

    def run_worlds(self, contexts: Sequence, final_time: float) -> List[tuple]:
        """Initialize each of ``contexts`` (root contexts of the system, all at the same
        time) and advance them to ``final_time`` in one compiled call; returns ``(world,
        time, reason)`` of the steps taken in Python (see :attr:`fallback_steps`)."""
        t0 = float(contexts[0].time)
        self._start(t0)
        n0 = len(self._fallbacks)
        self._run(contexts, t0, count=False)
        self._run(contexts, float(final_time))
        self._initialized = False
        return self._fallbacks[n0:]

    @property
    def compiler_flags(self) -> tuple:
        """The compiler flags of the library that runs this simulation (``flags``)."""
        return self._driver.flags

    def get_num_steps_taken(self) -> int:
        """Steps taken (Drake's count: one per step between events, zero-length ones too)."""
        return self._steps

    def reset_context(self, context) -> None:
        """Simulate from ``context`` next (a context of the same system); the compiled code
        is kept."""
        if context.system is not self._system:
            raise ValueError(f"reset_context: the context belongs to '{context.system.name}', "
                             f"not '{self._system.name}'")
        self._context = context
        self._reset_schedule()

    def _reset_schedule(self) -> None:
        self._initialized = False
        self._steps = 0
        self._pending = False
        self._t_known: Optional[float] = None
        self._k: Dict[int, int] = {}

    def initialize(self) -> None:
        """Drake's "0th step": the log samples at the initial time (the updates due then
        stay pending for the first step)."""
        t0 = float(self._context.time)
        self._start(t0)
        self._run([self._context], t0, count=False)
        self._initialized = True

    def advance_to(self, t_final: float) -> None:
        """Advance to ``t_final`` in one compiled call (module docstring)."""
        if isinstance(t_final, bool) or not isinstance(t_final, (int, float, np.number)) \
                or not math.isfinite(t_final):
            raise ValueError(f"WholeRunSimulator.advance_to: final time must be a finite "
                             f"number, got {t_final!r}")
        if not self._initialized:
            self.initialize()
        t = float(self._context.time)
        if t != self._t_known:      # the caller moved the time: events rescheduled from it
            self._start(t)
        if t_final < t:
            raise ValueError(f"advance_to({t_final}) is earlier than the current time {t} of "
                             f"system '{self._system.name}'")
        self._run([self._context], float(t_final))

    # ------------------------------------------------------------------ the schedule
    def _timed(self):
        """The timed events ``(key, event)``: key -1 the updates (the plant's event stands
        for all: same period and offset), ``j`` the periodic sink ``j``."""
        out = [(-1, next(ev for leaf, ev in self._updates if leaf is self._plant))]
        out += [(j, ev) for j, (_, ev) in enumerate(self._sinks) if isinstance(ev, PeriodicEvent)]
        return out

    def _start(self, t0: float) -> None:
        """The events' next indices at the initial time (due ones included), nothing pending."""
        self._k = {key: ev.next_index_after(t0, inclusive=True) for key, ev in self._timed()}
        self._pending = False

    def _schedule(self, t: float, T: float):
        """Segments of ``[t, T]``: start and end times, flags (bit 0 update at the start,
        bit 1 a sample at the end), the sinks sampled per segment, and the bookkeeping
        after them (next indices, pending update)."""
        times, keys = [], []
        lim_T = T + _merge_tol(T)
        for key, ev in self._timed():
            k0, period, offset = self._k[key], ev.period, ev.offset
            k1 = max(k0, int(math.floor((lim_T - offset) / period)) + 2)
            tt = offset + np.arange(k0, k1, dtype=np.int64).astype(float) * period
            tt = tt[tt <= lim_T]
            times.append(tt)
            keys.append(np.full(tt.size, key))
        allt = np.concatenate(times)
        allk = np.concatenate(keys)
        u = np.unique(allt[allt < T])
        if u.size:
            new = np.concatenate([[True], u[1:] > u[:-1] + 1e-12 * np.maximum(1.0, np.abs(u[:-1]))])
            u = u[new]
        bounds = np.concatenate([u, [T]])
        lim_b = bounds + 1e-12 * np.maximum(1.0, np.abs(bounds))
        which = np.searchsorted(lim_b, allt, side="left")
        n = bounds.size
        upd_due = np.zeros(n, bool)
        upd_due[which[allk == -1]] = True
        pubs = np.zeros((len(self._sinks), n), bool)
        for j, (_, ev) in enumerate(self._sinks):
            if isinstance(ev, PerStepEvent):
                pubs[j] = True
            else:
                pubs[j, which[allk == j]] = True
        starts = np.concatenate([[t], bounds[:-1]])
        flags = np.zeros(n, np.int32)
        flags[0] = 1 if self._pending else 0
        flags[1:] |= upd_due[:-1].astype(np.int32)
        flags |= np.where(pubs.any(axis=0), 2, 0).astype(np.int32)
        counts = {key: int(np.count_nonzero(allk == key)) for key, _ in self._timed()}
        return starts, bounds, flags, pubs, counts, bool(upd_due[-1])

    # ------------------------------------------------------------------ running
    def _world_data(self, ctx):
        """``(xd, u, p, kin)`` of a root context."""
        xd = np.array(ctx.discrete_state, float)
        u = np.concatenate([np.asarray(port.eval(ctx), float).ravel()
                            for port, _ in self._input_slices]) if self._input_slices else np.zeros(0)
        p = np.array(ctx.parameters, float) if self._np else np.zeros(0)
        proto = self._proto
        plant_ctx = self._plant.get_my_context_from_root(ctx)
        closures = getattr(proto, "closures", None)
        kin = np.zeros(proto.n_in + (0 if closures is None else closures.n_data))
        if closures is not None:              # the closures' data after the kernel's input
            kin[proto.n_in:] = closures.data(plant_ctx)
        a, b = proto.input_sections["scal"]
        kin[a:b] = proto.scalars(plant_ctx)
        a, b = proto.input_sections["warm"]
        kin[a:b] = proto.warm_start(plant_ctx)
        return xd, u, p, kin

    def _run(self, contexts: Sequence, T: float, count: bool = True) -> None:
        """Run ``contexts`` (one world each, all at the same time and schedule) to ``T``."""
        t = float(contexts[0].time)
        starts, ends, flags, pubs, counts, pending = self._schedule(t, T)
        data = [self._world_data(c) for c in contexts]
        xd, u, p, kin = (np.ascontiguousarray(np.array([d[i] for d in data], float))
                         for i in range(4))
        sample = (flags & 2) != 0
        n_cols = int(np.count_nonzero(sample))
        logs = np.zeros((len(contexts), n_cols, self._nlog))
        status = self._driver.run(starts, ends, flags, xd, u, p, kin, logs)
        col_before = np.concatenate([[0], np.cumsum(sample)])
        for w, ctx in enumerate(contexts):
            while status[w, 0]:
                s = int(status[w, 0]), int(status[w, 1])
                self._python_step(ctx, w, s, starts, xd, kin)
                st = self._driver.run(starts, ends, flags, xd[w:w + 1], u[w:w + 1], p[w:w + 1],
                                      kin[w:w + 1], logs[w:w + 1], s_start=s[1], skip_first=True,
                                      col_start=int(col_before[s[1]]))
                status[w] = st[0]
        for key, n in counts.items():
            self._k[key] += n
        self._pending = pending
        self._t_known = T
        if count:
            self._steps += ends.size
        for w, ctx in enumerate(contexts):
            self._commit(ctx, T, xd[w], kin[w])
            self._record(ctx, ends[sample], logs[w], pubs[:, sample])

    def _python_step(self, ctx, w: int, code_seg: tuple, starts, xd, kin) -> None:
        """Take the step of segment ``s`` in Python (the diagram's own update callbacks),
        after the kernel rejected it (code 1 or 2) or the closures' rows were dependent (code 5);
        raise for other codes."""
        code, s = code_seg
        t0 = float(starts[s])
        self._commit(ctx, t0, xd[w], kin[w])
        if code == 3:
            bad = int(np.flatnonzero(~np.isfinite(xd[w]))[0]) if not np.all(np.isfinite(xd[w])) else 0
            raise NonFiniteStateError(
                f"compiled simulation of '{self._system.name}': discrete state {bad} became "
                f"non-finite in the step from t={t0!r}; the context holds the state at the "
                "start of that step")
        if code not in (1, 2, 5):
            raise SimulationError(f"compiled simulation of '{self._system.name}' at t={t0!r}: "
                                  f"{STATUS_TEXT.get(code, f'status {code}')}")
        self._fallbacks.append((w, t0, STATUS_TEXT[code]))
        leaf_ctxs = {id(lc.system): lc for lc in ctx.leaf_contexts()}
        new = [(leaf_ctxs[id(leaf)], np.asarray(ev.callback(leaf_ctxs[id(leaf)]), float).ravel())
               for leaf, ev in self._updates]
        for lc, value in new:
            lc.set_discrete_state(value)
        xd[w] = np.asarray(ctx.discrete_state, float)
        a, b = self._proto.input_sections["warm"]
        kin[w, a:b] = self._proto.warm_start(self._plant.get_my_context_from_root(ctx))

    def _commit(self, ctx, t: float, xd: np.ndarray, kin: np.ndarray) -> None:
        ctx.set_time(t)
        ctx.set_discrete_state(xd)
        a, b = self._proto.input_sections["warm"]
        self._proto.commit_warm_start(self._plant.get_my_context_from_root(ctx), kin[a:b])

    def _record(self, ctx, times: np.ndarray, logs: np.ndarray, pubs: np.ndarray) -> None:
        for j, (sink, ev) in enumerate(self._sinks):
            rows = self._sink_rows[j]
            cols = np.flatnonzero(pubs[j])
            values = logs[cols, rows].T
            if self._check_outputs and not np.all(np.isfinite(values)):
                first = int(np.flatnonzero(~np.all(np.isfinite(values), axis=0))[0])
                sink.find_log(ctx).extend(times[cols[:first + 1]], values[:, :first + 1])
                i = int(np.flatnonzero(~np.isfinite(values[:, first]))[0])
                raise NonFiniteOutputError(
                    f"compiled simulation of '{self._system.name}': the input of log sink "
                    f"'{sink.name}' is {values[i, first]} (entry {i}) at "
                    f"t={float(times[cols[first]])!r}; the log keeps the samples up to it "
                    "(allow_non_finite_outputs=True logs such values)")
            sink.find_log(ctx).extend(times[cols], values)


@dataclass
class BatchResult:
    """What :func:`simulate_batch` returns.

    Attributes
    ----------
    contexts : list of Context
        One root context per world, advanced to ``final_time`` (logs in their sinks).
    final_states : ndarray, shape (N, nxd)
        The diagram's discrete state of each world at ``final_time``.
    times : dict
        Sink name -> sample times (n_samples,) (the same for every world).
    logs : dict
        Sink name -> samples, shape (N, size, n_samples).
    fallback_steps : list
        ``(world, time, reason)`` of the steps the kernel rejected (taken in Python).
    """

    contexts: list
    final_states: np.ndarray
    times: dict
    logs: dict
    fallback_steps: list


def simulate_batch(system, contexts=None, final_time: float = 0.0, *,
                   initial_states=None, parameters=None,
                   allow_non_finite_outputs: bool = False, flags=None) -> BatchResult:
    """Simulate N independent worlds of ``system`` to ``final_time`` in one compiled call
    (MuJoCo's ``rollout`` for a diagram): each world gives what
    ``Simulator(system, context, compiled=True).advance_to(final_time)`` gives.

    Parameters
    ----------
    system : System
        A diagram the compiled whole run accepts (:class:`WholeRunSimulator`).
    contexts : sequence of Context, optional
        One root context per world, all at the same time (advanced in place). Without
        them, worlds are clones of ``system``'s default context with ``initial_states``
        and ``parameters``.
    final_time : float
    initial_states : array_like, shape (N, nxd), optional
        The diagram's discrete state of each world (plant ``[q; v]`` in its slice).
    parameters : array_like, shape (N, np), optional
        The diagram's numeric parameters of each world (default: the default ones).
    flags : sequence of str, optional
        Compiler flags of the run's library (:class:`WholeRunSimulator`).

    Returns
    -------
    BatchResult

    Raises
    ------
    ValueError
        Contexts of another system or at different times, or arrays of the wrong shape.
    """
    if contexts is None:
        if initial_states is None and parameters is None:
            raise ValueError("simulate_batch: give contexts, or initial_states and/or parameters")
        base = system.create_default_context()
        n = len(initial_states) if initial_states is not None else len(parameters)
        contexts = []
        for i in range(n):
            c = base.clone()
            if initial_states is not None:
                row = np.asarray(initial_states[i], float)
                if row.shape != (system.num_discrete_states(),):
                    raise ValueError(f"simulate_batch: initial_states[{i}] has shape {row.shape}, "
                                     f"expected ({system.num_discrete_states()},)")
                c.set_discrete_state(row)
            if parameters is not None:
                c.set_parameters(np.asarray(parameters[i], float))
            contexts.append(c)
    contexts = list(contexts)
    if not contexts:
        raise ValueError("simulate_batch: no worlds")
    for i, c in enumerate(contexts):
        if c.system is not system:
            raise ValueError(f"simulate_batch: contexts[{i}] belongs to '{c.system.name}', not "
                             f"'{system.name}'")
        if float(c.time) != float(contexts[0].time):
            raise ValueError(f"simulate_batch: contexts[{i}] is at t={c.time}, contexts[0] at "
                             f"t={contexts[0].time}; worlds must start together")
    sim = WholeRunSimulator(system, contexts[0],
                            allow_non_finite_outputs=allow_non_finite_outputs, flags=flags)
    fallbacks = sim.run_worlds(contexts, final_time)
    times, logs = {}, {}
    for sink in system.leaf_systems():
        if isinstance(sink, VectorLogSink):
            ls = [sink.find_log(c) for c in contexts]
            times[sink.name] = ls[0].sample_times()
            logs[sink.name] = np.stack([lg.data() for lg in ls])
    return BatchResult(contexts, np.array([np.asarray(c.discrete_state, float) for c in contexts]),
                       times, logs, fallbacks)
