"""The :class:`Simulator`: hybrid simulation of any System or Diagram.

Semantics (one simulator step, as Drake's ``Simulator::Step``)
---------------------------------------------------------------
One step goes from ``{t_s, x-(t_s)}`` to ``{t_e, x-(t_e)}``:

1. The updates pending at ``t_s`` run first: the unrestricted updates (the on_trigger of
   each witness that triggered at the end of the previous step, the periodic
   unrestricted updates due at ``t_s``, every per-step unrestricted update) are evaluated
   from the same context and applied together; then the discrete updates (periodic ones
   due at ``t_s`` and every per-step discrete update) are evaluated from that
   post-unrestricted context and applied together. Any update restarts the integrator.
2. The continuous state is integrated from ``t_s`` toward
   ``min(next timed event, t_final)`` with one integrator step; the step lands exactly on
   the boundary when it reaches it. Without continuous state, time jumps to the boundary.
3. If a witness function changed sign in its direction during the step, the crossing is
   isolated by bisection (on the integrator's dense output, or on time alone for a system
   without continuous state) to within ``witness_tolerance`` (default 1e-10 s) and the
   step ends just after it (the guard has crossed at the stop time).
4. Publishes at ``t_e``: every per-step publish, then the periodic publishes due at
   ``t_e``. They see ``x-(t_e)``, the state *before* the updates due at ``t_e``; those
   updates are pending and run at the start of the next step (step 1). So a
   ZeroOrderHold logged at ``kT`` shows the sample taken at ``(k-1)T``, and
   ``advance_to(T)`` returns with the updates due at exactly ``T`` not yet applied (the
   next ``advance_to`` applies them first); the publishes at ``T`` do happen.
5. The monitor, if set, is called with the root context; it may stop the run.

``advance_to(t_final)`` takes steps until the time reaches ``t_final``, and always at
least one (Drake's ``AdvanceTo`` loop tests the time after the step): called at the
current time it takes one step of zero length, which runs the pending updates and the
per-step updates, then the per-step publishes and the monitor (Drake's
``AdvancePendingEvents``, which is ``AdvanceTo(current time)``). Every such call counts
one step, as in Drake.

:meth:`Simulator.initialize` is the "0th step": initialization updates (unrestricted,
then discrete), then the initialization publishes, every per-step publish and the
periodic publishes due at the initial time, then the monitor. Periodic updates due at
the initial time are pending for the first step.

This is Drake's documented order (``drake/systems/analysis/simulator.h``, section "How
the simulation is stepped": ``Step()`` does unrestricted updates, discrete updates,
integration, publishes, monitor; ``Initialize()`` initialization updates, publishes,
monitor).

Periodic events fire at ``offset + k * period`` from the integer ``k`` (no drift); events
due within ``1e-12 * max(1, |t|)`` of each other fire together at the earlier time.

The monitor
-----------
``set_monitor(callback)``: ``callback(context)`` returns ``None`` (continue) or an
:class:`EventStatus` -- ``EventStatus.did_nothing()``, ``.succeeded()`` (continue),
``.reached_termination(message)`` (``advance_to`` returns early with a
:class:`SimulatorStatus` whose ``reason`` is ``"reached_termination"``) or
``.failed(message)`` (raises :class:`SimulationError`). The strings ``"terminate"`` and
``"fail"`` are accepted as shorthands. The monitor runs after every step and once at the
end of :meth:`Simulator.initialize` (as in Drake).

Faults
------
A non-finite time derivative or state raises :class:`NonFiniteStateError` naming the leaf
system, the state index and the time (and the first non-finite cached output, the usual
culprit); updates returning non-finite values are refused the same way. A non-finite value
read by a publish (a log sink's sample, or any publish reading an input port) raises
:class:`~systems.errors.NonFiniteOutputError` naming the leaf output port that computed
it, the entry, the time and the reader, once every publish at that time has run (so the
log holds the offending sample); ``allow_non_finite_outputs=True`` (or
:meth:`Simulator.set_allow_non_finite_outputs`) publishes and logs them instead. Exceptions raised
by event callbacks (updates, publishes, guards, on_trigger) become
:class:`~systems.SystemCallbackError` naming the system, the callback and the time, with
the original exception chained. In every case the context keeps the last accepted state
and logs recorded so far stay readable.

Notes
-----
The events, what is pending, the witness guards and the counters are one
:class:`~systems.analysis.event_schedule.EventSchedule` the simulator owns. The derivative
function loads (t, x) into the context through a fast path (x shared read-only by the
leaves as views, exactly the dependent cached outputs cleared) and calls the leaves'
``time_derivatives`` directly; accepted states are checked for finiteness once per step.
When nothing runs between steps, a small state's ``runge_kutta3`` or ``RK45`` stepper takes
the steps up to the loop's next stop in one call (``Stepper.run``, a C loop; same numbers).
"""
from __future__ import annotations

import math
import numbers
import time as _time
from typing import Any, Callable, Optional, Tuple

import numpy as np

from solvers.progress import ProgressLine
from ..system import System
from ..errors import NonFiniteOutputError
from ._simulator_events import (EventStatus, NonFiniteStateError, SimulationError,
                                SimulatorStatus, StateLocator, check_options, monitor_verdict)
from ._derivatives import derivative_function
from .event_schedule import EventSchedule
from .integrators import (INTEGRATOR_NAMES, TABLEAUS, Stepper, StepSizeError,
                          check_integrator_name, make_stepper)

__all__ = ["Simulator", "SimulatorStatus", "EventStatus", "SimulationError", "NonFiniteStateError",
           "NonFiniteOutputError"]


class Simulator:
    """Advance a System (leaf or diagram) and its context through time.

    Parameters
    ----------
    system : System
    context : Context, optional
        A root context of ``system`` (default: ``system.create_default_context()``). The
        simulator advances it in place.
    integrator : str
        One of :data:`~systems.analysis.integrators.INTEGRATOR_NAMES`.
    accuracy : float
        Relative tolerance ``rtol`` of error-controlled integrators; the absolute
        tolerance is ``atol = 1e-3 * accuracy`` unless given (scipy's default ratio).
    max_step : float
        Largest step of error-controlled integrators; the step size of fixed-step ones.
    fixed_step : bool
        Use ``runge_kutta2`` / ``runge_kutta3`` with fixed steps (``explicit_euler``,
        ``semi_explicit_euler`` and ``runge_kutta4`` always are).
    compiled : bool or "auto"
        ``False`` (default) evaluates the systems' Python callbacks. ``True`` returns a
        :class:`~systems.analysis.compiled.CompiledSimulator` instead (the whole diagram as
        CasADi functions; its own integrators, see that class), given the other arguments.
        ``"auto"`` returns the compiled simulator when the whole diagram runs compiled (an
        error-controlled integrator becomes CVODES with the same tolerances, a fixed-step
        scheme its compiled twin; a time-stepping plant a whole run in C) and this class
        otherwise, after one ``CompiledFallbackWarning`` naming the block. Not the default
        (``benchmarks/bench_compiled_simulator.py``; docs/architecture.md, "Compiled by
        choice"): a fixed-step scheme is compiled to C on its first run (about 1 s with an
        empty disk cache; CVODES a few ms), trajectories agree with the interpreted ones
        within the tolerance, not bitwise, per-step logs follow the output grid, and a
        monitor, realtime rate or progress bar switches back to this class.
    atol : float, optional
    witness_tolerance : float
        Width of the time interval a witness crossing is isolated to (s).
    allow_non_finite_outputs : bool
        ``False`` (default): a publish that reads a NaN or infinite value (a log sink's
        sample, ...) raises :class:`~systems.errors.NonFiniteOutputError` naming the port,
        its system and the time. ``True``: such values are published (states and
        derivatives are checked either way).
    flags : sequence of str, optional
        Compiled whole runs only (:class:`~systems.analysis.WholeRunSimulator`): ignored here.

    Examples
    --------
    >>> from systems.primitives import Integrator, ConstantVectorSource
    >>> from systems import DiagramBuilder
    >>> b = DiagramBuilder()
    >>> src = b.add_system(ConstantVectorSource([2.0]))
    >>> integ = b.add_system(Integrator(1))
    >>> b.connect(src.get_output_port(), integ.get_input_port())
    >>> sim = Simulator(b.build())
    >>> _ = sim.advance_to(1.5)
    >>> float(sim.get_context().continuous_state[0])
    3.0
    """

    def __new__(cls, system=None, context=None, *, compiled: bool | str = False, **kwargs):
        # The plug for the compiled mode: Simulator(..., compiled=True) hands the system to
        # CompiledSimulator (systems.analysis.compiled), which refuses, naming the block,
        # systems it cannot run (witness functions, publishes other than log sinks, ...).
        # compiled="auto" maps the options and falls back to this class with one
        # CompiledFallbackWarning naming the block (systems.analysis._compiled_auto).
        if isinstance(compiled, str):
            if compiled != "auto":
                raise ValueError(f"Simulator: compiled must be True, False or 'auto', got "
                                 f"{compiled!r}")
            if cls is Simulator and isinstance(system, System):
                from ._compiled_auto import auto_compiled
                sim = auto_compiled(system, context, kwargs, cls)
                if sim is not None:
                    return sim
        elif compiled:
            from .compiled import CompiledSimulator
            return CompiledSimulator(system, context, **kwargs)
        return super().__new__(cls)

    def __init__(self, system: System, context=None, *, integrator: str = "runge_kutta3",
                 accuracy: float = 1e-4, max_step: float = 0.1, fixed_step: bool = False,
                 compiled: bool = False, atol: Optional[float] = None,
                 witness_tolerance: float = 1e-10, allow_non_finite_outputs: bool = False,
                 flags=None):
        if not isinstance(system, System):
            raise TypeError(f"Simulator: expected a System, got {type(system).__name__}")
        self._system = system
        if context is None:
            context = system.create_default_context()
        if context.system is not system or not context.is_root:
            raise ValueError(f"Simulator: the context given is not a root context of system "
                             f"'{system.name}' (it belongs to '{context.system.name}')")
        self._context = context
        self._integrator_name = check_integrator_name(integrator)
        self._compiled = False  # compiled=True is dispatched by __new__
        self._fixed_step = bool(fixed_step)
        self._accuracy, self._atol, self._max_step, self._witness_tol = check_options(
            integrator, accuracy, atol, max_step, fixed_step, witness_tolerance)
        self._monitor: Optional[Callable] = None
        self._rate = 0.0
        self._progress: Optional[bool] = None
        self._initialized = False
        self._stepper: Optional[Stepper] = None
        self._events = EventSchedule(system, context, check_outputs=not allow_non_finite_outputs)
        self._setup_fast_path()
        self._reset_statistics()

    # ================================================================== public API
    def get_context(self):
        """The root context being simulated (read it; change it through the setters)."""
        return self._context

    def get_mutable_context(self):
        """The root context being simulated.

        Changes made between ``advance_to`` calls (state, parameters, fixed inputs, time)
        are picked up by the next call, which restarts the integrator from the context.
        """
        return self._context

    def get_system(self) -> System:
        """The system simulated."""
        return self._system

    @property
    def integrator(self) -> str:
        """Name of the integrator."""
        return self._integrator_name

    def set_monitor(self, callback: Optional[Callable[[Any], Any]]) -> None:
        """Call ``callback(root_context)`` after every step; see the module docstring for
        the statuses it may return (None to continue)."""
        if callback is not None and not callable(callback):
            raise TypeError(f"Simulator.set_monitor: expected a callable or None, got "
                            f"{type(callback).__name__}")
        self._monitor = callback

    def clear_monitor(self) -> None:
        """Remove the monitor."""
        self._monitor = None

    def set_target_realtime_rate(self, rate: float) -> None:
        """Slow the run down to ``rate`` x wall-clock time (0: as fast as possible)."""
        if not (isinstance(rate, numbers.Real) and math.isfinite(rate) and rate >= 0):
            raise ValueError(f"Simulator.set_target_realtime_rate: rate must be a finite "
                             f"number >= 0, got {rate!r}")
        self._rate = float(rate)

    def get_target_realtime_rate(self) -> float:
        """The target realtime rate (0: none)."""
        return self._rate

    def set_allow_non_finite_outputs(self, allow: bool) -> None:
        """Whether publishes may read (and logs record) NaN or infinite outputs; when not
        (the default) such a read raises :class:`~systems.errors.NonFiniteOutputError`."""
        self._events.check_outputs = not bool(allow)

    def get_allow_non_finite_outputs(self) -> bool:
        """See :meth:`set_allow_non_finite_outputs`."""
        return not self._events.check_outputs

    def set_progress(self, enabled: Optional[bool]) -> None:
        """Progress bar on stderr: True, False, or None (default: only on a terminal)."""
        self._progress = enabled

    def get_num_steps_taken(self) -> int:
        """Simulator steps taken since construction or the last :meth:`reset_statistics`."""
        return self._events.stats["steps"]

    def get_statistics(self) -> dict:
        """Counters since construction or :meth:`reset_statistics`.

        ``steps``, ``derivative_evaluations``, ``discrete_updates``,
        ``unrestricted_updates``, ``publishes``, ``witness_triggers`` (crossings isolated),
        ``rejected_steps`` (error-control rejections of the built-in RK schemes; scipy's
        solvers do not report theirs, so 0 for them) and ``integrator_restarts``.
        """
        out = dict(self._events.stats)
        out["derivative_evaluations"] = self._nfev[0]
        out["rejected_steps"] = self._rejected_before + (
            self._stepper.num_rejected if self._stepper is not None else 0)
        return out

    def reset_statistics(self) -> None:
        """Zero the counters."""
        self._reset_statistics()

    def initialize(self, suppress_initialization_events: bool = False) -> SimulatorStatus:
        """Drake's "0th step": initialization updates, publishes at the initial time, monitor.

        In order: the initialization unrestricted updates (evaluated together, applied),
        the initialization discrete updates (evaluated from that state, applied); then the
        initialization publishes, every per-step publish and the periodic publishes due
        at the current time; then the monitor. Periodic updates due at the current time
        are left pending for the first step of :meth:`advance_to` (Drake's
        ``Simulator::Initialize``, see the module docstring).

        Parameters
        ----------
        suppress_initialization_events : bool
            Skip the initialization updates and publishes (Drake's ``InitializeParams``),
            e.g. when reusing a simulator on a context already initialized.

        Returns
        -------
        SimulatorStatus
            ``"reached_termination"`` when the monitor stops the run at the initial time
            (``advance_to`` then returns at once), else ``"reached_boundary_time"``.
        """
        ctx = self._context
        t0 = ctx.time
        if not isinstance(t0, float) or not math.isfinite(t0):
            raise ValueError(f"Simulator.initialize: context time must be a finite float, got {t0!r}")
        events = self._events
        events.run_initialization_updates(t0, suppress_initialization_events)
        events.start(t0)
        self._stepper = None    # a new stepper, no step size kept from an earlier run (Drake)
        self._restart_stepper()
        events.refresh_guards()
        events.run_initial_publishes(t0, suppress_initialization_events)
        self._initialized = True
        self._t_known = t0
        self._wall_start, self._sim_start = _time.perf_counter(), t0
        self._init_status = SimulatorStatus("reached_boundary_time", t0, t0)
        if self._monitor is not None:
            verdict = monitor_verdict(self._monitor, ctx, t0, self._system.name)
            if verdict is not None:
                self._init_status = SimulatorStatus("reached_termination", t0, t0, verdict)
        return self._init_status

    def advance_to(self, t_final: float) -> SimulatorStatus:
        """Simulate until ``t_final`` (or until the monitor stops the run).

        Calls :meth:`initialize` first if it has not run. Each step follows Drake's order
        (module docstring): the updates pending at the step's start time, integration,
        then the publishes at its end time. Updates due at exactly ``t_final`` stay
        pending (the context holds the pre-update state ``x-(t_final)``) and run at the
        start of the next call; the publishes due at ``t_final`` do run. At least one step
        is taken, as in Drake: ``advance_to`` of the current time takes one step of zero
        length that runs the pending updates, the per-step updates and publishes and the
        monitor (see :meth:`advance_pending_events`).

        Returns
        -------
        SimulatorStatus
        """
        ctx = self._context
        if isinstance(t_final, (str, bytes)) or isinstance(t_final, bool):
            raise TypeError(f"Simulator.advance_to: expected a number (seconds), got {t_final!r}")
        try:
            t_final = float(t_final)
        except (TypeError, ValueError):
            raise TypeError(f"Simulator.advance_to: expected a number, got {t_final!r}") from None
        if not math.isfinite(t_final):
            raise ValueError(f"Simulator.advance_to: final time must be finite, got {t_final}")
        if t_final < ctx.time:
            raise ValueError(f"Simulator.advance_to({t_final!r}): the final time is earlier than "
                             f"the current time {ctx.time!r} of system '{self._system.name}'")
        if not self._initialized:
            status = self.initialize()
            if status.reason == "reached_termination":
                return SimulatorStatus(status.reason, t_final, ctx.time, status.message)
        else:
            self._sync_stepper()
        t_start = ctx.time
        wall0 = _time.perf_counter()
        bar = ProgressLine(t_final, "simulating", start=t_start, enabled=self._progress,
                           delay=1.0, interval=0.1, note_format="t={:.4g} s")
        status_reason, message = "reached_boundary_time", ""
        ulp = math.ulp
        events = self._events
        stats = events.stats
        witnesses = bool(events.witnesses)
        per_step_pub = bool(events.per_step_publish)
        try:
            while True:  # Drake's AdvanceTo: step, then stop once the time reached t_final
                t = ctx.time
                if events.pending or events.any_per_step_update:
                    self._start_of_step(t)
                t_event = events.next_time
                boundary = t_event if t_event < t_final else t_final
                hits: Tuple = ()
                if self._stepper is None or boundary - t <= 4.0 * ulp(t if t > 1.0 else (
                        -t if t < -1.0 else 1.0)):
                    t1 = boundary
                    self._loader.set_time(t1)
                    if self._stepper is not None:  # a step below time resolution: no integration
                        self._stepper.reset(t1, self._stepper.x)
                    elif witnesses:
                        t1, hits = events.isolate_on_time(t, t1, self._witness_tol,
                                                          self._loader.set_time)
                else:   # when nothing runs between steps, the steps up to the next stop
                    t1, hits = self._integrate_step(boundary, None if (
                        witnesses or per_step_pub or events.any_per_step_update or bar.enabled
                        or self._monitor is not None or self._rate > 0.0) else (
                        t_event, t_final, stats))
                stats["steps"] += 1
                # one comparison when no periodic event is due (merge tolerance inlined)
                due = events.due(t1) if t_event <= t1 + 1e-12 * max(1.0, abs(t1)) else ()
                if due or hits or per_step_pub:
                    events.run_end_of_step(t1, due, hits)
                if self._rate > 0.0:
                    ahead = wall0 + (t1 - t_start) / self._rate - _time.perf_counter()
                    if ahead > 0:
                        _time.sleep(ahead)
                if bar.enabled:
                    bar.update(t1)
                if self._monitor is not None:
                    verdict = monitor_verdict(self._monitor, ctx, t1, self._system.name)
                    if verdict is not None:
                        status_reason, message = "reached_termination", verdict
                        break
                if t1 >= t_final:
                    break
        finally:
            bar.close(ctx.time)
            self._t_known = ctx.time
        return SimulatorStatus(status_reason, t_final, ctx.time, message)

    def advance_pending_events(self) -> SimulatorStatus:
        """Apply the updates pending at the current time without advancing time.

        Drake's ``Simulator::AdvancePendingEvents``, which is ``AdvanceTo(current time)``:
        one step of zero length whose start-of-step updates (the periodic updates due now,
        the on_trigger of witnesses that triggered at the end of the last step, every
        per-step update) take the context from ``x-(t)`` to ``x+(t)``; then the per-step
        publishes and the monitor run. Use it to look at the state just after the events
        at ``t``.

        Returns
        -------
        SimulatorStatus
        """
        return self.advance_to(self._context.time)

    def reset_context(self, context) -> None:
        """Simulate ``context`` from now on (Drake's ``Simulator::reset_context``).

        ``context`` must be a root context of the simulated system; the simulator keeps
        its integrator settings and monitor, forgets pending events, and the next
        :meth:`advance_to` (or an explicit :meth:`initialize`) initializes from it.
        """
        from ..context import Context
        if not isinstance(context, Context):
            raise TypeError(f"Simulator.reset_context: expected a Context of system "
                            f"'{self._system.name}', got {type(context).__name__}")
        if context.system is not self._system or not context.is_root:
            raise ValueError(f"Simulator.reset_context: the context given is not a root context "
                             f"of system '{self._system.name}' (it belongs to "
                             f"'{context.system.name}')")
        self._context = context
        self._stepper = None
        self._initialized = False
        old = self._events
        self._events = EventSchedule(self._system, context, check_outputs=old.check_outputs)
        self._events.stats = old.stats  # the counters run on (reset_statistics zeroes them)
        self._setup_fast_path()

    def get_actual_realtime_rate(self) -> float:
        """Simulated seconds per wall-clock second since :meth:`initialize` or
        :meth:`reset_statistics` (Drake's ``get_actual_realtime_rate``; 0 before any
        simulated time has passed)."""
        if self._wall_start is None:
            return 0.0
        wall = _time.perf_counter() - self._wall_start
        sim = self._context.time - self._sim_start
        return sim / wall if wall > 0 and sim > 0 else 0.0

    # ================================================================== setup
    def _setup_fast_path(self) -> None:
        """The context's fast path for loading (t, x): :class:`~systems.context.StateLoader`
        (one read-only copy of ``x`` shared by the leaves, exactly the dependent cached
        outputs cleared)."""
        self._loader = self._context.state_loader()
        self._slots = self._loader.slots
        self._nx = self._loader.size
        self._faults = StateLocator(self._system, self._slots)
        self._first_slot = self._slots[0][0] if self._slots else None

    def _reset_statistics(self) -> None:
        self._events.reset_statistics()
        self._nfev = [0]
        self._wall_start = _time.perf_counter() if getattr(self, "_initialized", False) else None
        self._sim_start = self._context.time
        self._rejected_before = -(self._stepper.num_rejected if self._stepper is not None else 0)

    def _restart_stepper(self) -> None:
        if self._nx == 0:
            self._stepper = None
            return
        if self._stepper is None:
            # f(t, x) -> xdot: loads (t, x) (x shared read-only by the leaves), calls the
            # leaves' time_derivatives; a non-finite derivative raises NonFiniteStateError
            f = derivative_function(self._system, self._context, self._loader, self._nfev,
                                    self._faults)
            map_v = partition = None
            if self._integrator_name == "semi_explicit_euler":
                system, root = self._system, self._context
                partition = system.continuous_state_partition()

                def map_v(v):
                    return system.map_velocity_to_qdot(root, v)
            self._stepper = make_stepper(
                self._integrator_name, f, fixed_step=self._fixed_step, max_step=self._max_step,
                rtol=self._accuracy, atol=self._atol, map_v=map_v, partition=partition,
                size=int(np.size(self._context.continuous_state)))
        else:
            self._events.stats["integrator_restarts"] += 1
        x = self._context.continuous_state
        self._stepper.reset(self._context.time, np.array(x, dtype=float))
        self._faults.check_state(self._context.time, self._stepper.x, None)

    def _sync_stepper(self) -> None:
        """Pick up changes the caller made to the context between ``advance_to`` calls.

        The integrator is restarted from the context (its cached derivatives may be stale
        after any change of state, parameters or fixed inputs), witness guards are
        re-evaluated, and if the time was changed the periodic events are rescheduled
        from the new time.
        """
        ctx = self._context
        st = self._stepper
        if ctx.time != self._t_known:
            self._events.start(ctx.time)  # the pending updates were due at the old time
        if st is not None:
            self._restart_stepper()
        self._events.refresh_guards()

    # ================================================================== integration
    def _integrate_step(self, boundary: float, stop=None):
        """One integrator step toward ``boundary``; with ``stop = (t_event, t_final, stats)``
        (nothing runs between steps: no witness, per-step event, monitor, realtime rate or
        progress line) and a stepper that runs steps (``Stepper.run``), the steps up to the
        next stop of :meth:`advance_to` (each counted but the last, each state checked; the
        context loaded with the last one only: nobody reads it in between)."""
        st = self._stepper
        t0, x0 = st.t, st.x
        try:
            if stop is not None and st.runs_steps:
                try:
                    st.run(boundary, stop[0], stop[1], self._faults.check_state)
                finally:
                    t0, x0 = t1, x1 = st.t, st.x   # the last accepted step, whatever happens
                    stop[2]["steps"] += st.run_steps
                stop[2]["steps"] -= 1   # (advance_to counts the last)
            else:
                st.step(boundary)
                t1, x1 = st.t, st.x
                self._faults.check_state(t1, x1, t0)
            xs = self._first_slot.continuous_state   # x1 itself, or a slice of it
            if self._context.time != t1 or (xs is not x1 and xs.base is not x1):
                self._loader.load(t1, x1)  # (else the last stage was evaluated at (t1, x1) itself)
            hits: Tuple = ()
            events = self._events
            if events.witnesses:
                g1 = events.guards()
                if events.any_triggered(events.guard_values, g1):
                    t1, hits = self._isolate(t0, t1, g1)
                else:
                    events.guard_values = g1
        except StepSizeError as exc:
            self._loader.load(t0, x0)
            raise SimulationError(f"simulating '{self._system.name}': {exc}") from exc
        except BaseException:
            self._loader.load(t0, x0)  # the context keeps the last accepted state
            raise
        return t1, hits

    # ================================================================== events
    def _start_of_step(self, t: float) -> None:
        """The pending and per-step updates at ``t``; restart the integrator and
        re-evaluate the witness guards when any ran."""
        events = self._events
        if events.run_start_of_step(t):
            if self._nx:
                self._restart_stepper()
            if events.witnesses:
                events.guard_values = events.guards()

    def _isolate(self, t0, t1, g1):
        """Bisect [t0, t1] down to ``witness_tolerance`` on the integrator's dense output;
        return the stop time just after the first crossing and the witnesses that
        triggered."""
        st, events = self._stepper, self._events
        g0 = events.guard_values
        b, gb = events.isolate(t0, t1, g1, self._witness_tol,
                               lambda m: self._loader.load(m, st.state_at(m)))
        xb = st.state_at(b)
        self._faults.check_state(b, xb, t0)
        self._loader.load(b, xb)
        self._restart_stepper()  # the step ends at b, not where the integrator went
        events.guard_values = gb
        return b, events.triggered(g0, gb)


# Kept for introspection and documentation.
Simulator.INTEGRATORS, Simulator.TABLEAUS = INTEGRATOR_NAMES, TABLEAUS
