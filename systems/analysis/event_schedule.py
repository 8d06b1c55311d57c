"""The event schedule of a simulation: one object a simulator owns.

:class:`EventSchedule` holds everything about a system's events over one root context that a
simulator keeps between steps:

* the events sorted by kind (periodic, per-step, initialization, witness), each with the
  leaf context it runs in;
* the periodic events' next occurrences (``offset + k * period`` from the integer ``k``,
  no accumulated drift) and :attr:`EventSchedule.next_time`, the earliest of them;
* the updates pending for the start of the next step (periodic updates due at the end of
  the last step, the ``on_trigger`` of witnesses that triggered in it);
* the witness state (:attr:`EventSchedule.guard_values`, the guards at the start of the
  current step);
* the statistics (:attr:`EventSchedule.stats`).

and the dispatch that needs nothing but the events and the contexts: the updates at the
start of a step (:meth:`EventSchedule.run_start_of_step`), the publishes at its end
(:meth:`EventSchedule.run_end_of_step`), the initialization events and the witness guards.
The order is Drake's (``Simulator::Step``, see :mod:`systems.analysis.simulator`). What
needs an integrator (isolating a witness crossing on its dense output, restarting it after
an update) stays with the simulator: the schedule says whether anything changed.

Events of different periods due within ``1e-12 * max(1, |t|)`` of each other fire together
at the earlier time (:func:`merge_tolerance`).

A simulator's use of it (the interpreted :class:`~systems.analysis.Simulator` does exactly
this; a compiled one replaces only the integration and may batch the publishes it can
compute itself, counting them in :attr:`EventSchedule.stats`)::

    schedule = EventSchedule(system, context)           # once per context
    schedule.run_initialization_updates(t0)             # initialize()
    schedule.start(t0); schedule.refresh_guards()
    schedule.run_initial_publishes(t0)
    while t < t_final:                                  # one step
        if schedule.has_pending_updates() and schedule.run_start_of_step(t):
            ...restart the integrator; schedule.refresh_guards()
        t1 = ...integrate toward min(schedule.next_time, t_final)
        due = schedule.due(t1)
        schedule.stats["steps"] += 1
        schedule.run_end_of_step(t1, due, hits)         # hits: witnesses that triggered

Examples
--------
>>> from systems import DiagramBuilder
>>> from systems.primitives import ConstantVectorSource, ZeroOrderHold
>>> b = DiagramBuilder()
>>> src = b.add_system(ConstantVectorSource([1.0]))
>>> zoh = b.add_system(ZeroOrderHold(0.25, 1))
>>> b.connect(src.get_output_port(), zoh.get_input_port())
>>> d = b.build()
>>> schedule = EventSchedule(d, d.create_default_context())
>>> schedule.start(0.0)
>>> schedule.next_time
0.0
>>> [te.t_next for te in schedule.due(0.0)]
[0.0]
"""
from __future__ import annotations

import math
from typing import Any, Callable, List, Tuple

import numpy as np

from ..errors import (InputNotConnectedError, NonFiniteOutputError, NonFiniteStateError,
                      PortValueError, SimulationError, SystemCallbackError)
from ..events import InitializationEvent, PeriodicEvent, PerStepEvent, State, WitnessFunction
from ._published_values import check_published, publish_watches

__all__ = ["EventSchedule", "TimedEvent", "merge_tolerance", "STATISTICS"]

#: The counters of :attr:`EventSchedule.stats`.
STATISTICS = ("steps", "discrete_updates", "unrestricted_updates", "publishes",
              "witness_triggers", "integrator_restarts")


def merge_tolerance(t: float) -> float:
    """Events due within ``1e-12 * max(1, |t|)`` (s) of time ``t`` fire together at ``t``."""
    return 1e-12 * max(1.0, abs(t))


class TimedEvent:
    """One periodic event and its next occurrence: index ``k`` and time ``t_next``.

    Attributes
    ----------
    event : PeriodicEvent
    context : LeafContext
        The context of the event's system.
    k : int
    t_next : float
        ``event.time_of(k)``.
    """

    __slots__ = ("event", "context", "k", "t_next")

    def __init__(self, event: PeriodicEvent, context):
        self.event, self.context, self.k, self.t_next = event, context, 0, event.time_of(0)

    def start(self, t0: float) -> None:
        """Schedule the first occurrence at or after ``t0``."""
        self.k = self.event.next_index_after(t0, inclusive=True)
        self.t_next = self.event.time_of(self.k)

    def advance(self) -> None:
        """Move to the next occurrence."""
        self.k += 1
        self.t_next = self.event.time_of(self.k)


class EventSchedule:
    """The events of ``system`` over the root ``context``, their pending updates, the
    witness state and the statistics (see the module docstring).

    Parameters
    ----------
    system : System
    context : Context
        A root context of ``system``; every event is bound to its leaf's context in it.
    check_outputs : bool
        Check, after the publishes at a time, that the values they read are finite
        (raising :class:`~systems.errors.NonFiniteOutputError` naming the output).

    Attributes
    ----------
    timed : list of TimedEvent
    per_step_publish, per_step_discrete, per_step_unrestricted : list of (event, context)
    initialization : list of (event, context)
    witnesses : list of (WitnessFunction, context)
    pending : list of (event, context)
        Updates to run at the start of the next step (witnesses: their ``on_trigger``).
    next_time : float
        Earliest ``t_next`` of the periodic events (``inf`` without any).
    guard_values : list of float
        The witness guards at the start of the current step.
    any_per_step_update : bool
    stats : dict
        Counters named in :data:`STATISTICS`.
    """

    def __init__(self, system, context, *, check_outputs: bool = True):
        self.system, self.context = system, context
        self.check_outputs = bool(check_outputs)
        leaf_ctx = {id(s): c for s, c in zip(system.leaf_systems(), context.leaf_contexts())}
        with_ctx = [(e, leaf_ctx[id(e.system)]) for e in system.events()]
        # The vector inputs each publish reads, resolved to the leaf outputs computing them.
        self.watches = publish_watches(system, with_ctx, leaf_ctx)
        self.timed: List[TimedEvent] = []
        per_step = {"publish": [], "discrete": [], "unrestricted": []}
        self.initialization: List[Tuple[Any, Any]] = []
        self.witnesses: List[Tuple[WitnessFunction, Any]] = []
        for e, c in with_ctx:
            if isinstance(e, PeriodicEvent):
                self.timed.append(TimedEvent(e, c))
            elif isinstance(e, PerStepEvent):
                per_step[e.kind].append((e, c))
            elif isinstance(e, InitializationEvent):
                self.initialization.append((e, c))
            elif isinstance(e, WitnessFunction):
                self.witnesses.append((e, c))
            else:  # pragma: no cover - the framework defines no other kinds
                raise TypeError(f"Simulator: unknown event {e!r} of system '{e.system.name}'")
        self.per_step_publish = per_step["publish"]
        self.per_step_discrete = per_step["discrete"]
        self.per_step_unrestricted = per_step["unrestricted"]
        self.any_per_step_update = bool(self.per_step_discrete or self.per_step_unrestricted)
        self._per_step_watches = tuple(w for e, _ in self.per_step_publish
                                       for w in self.watches[id(e)])
        self.pending: List[Tuple[Any, Any]] = []
        self.next_time = min((te.t_next for te in self.timed), default=math.inf)
        self.guard_values: List[float] = []
        self.stats = dict.fromkeys(STATISTICS, 0)

    # ------------------------------------------------------------------ bookkeeping
    def reset_statistics(self) -> None:
        """Zero the counters."""
        self.stats = dict.fromkeys(STATISTICS, 0)

    def start(self, t0: float) -> None:
        """Schedule every periodic event from ``t0`` (its first occurrence at or after it)
        and forget the pending updates (they were due at another time)."""
        for te in self.timed:
            te.start(t0)
        self.next_time = min((te.t_next for te in self.timed), default=math.inf)
        self.pending = []

    def due(self, t: float) -> List[TimedEvent]:
        """The periodic events due at ``t`` (within :func:`merge_tolerance`)."""
        limit = t + 1e-12 * (t if t > 1.0 else (-t if t < -1.0 else 1.0))
        return [te for te in self.timed if te.t_next <= limit]

    def has_pending_updates(self) -> bool:
        """Whether the start of the next step has updates to run (pending or per-step)."""
        return bool(self.pending) or self.any_per_step_update

    # ------------------------------------------------------------------ dispatch
    def run_start_of_step(self, t: float) -> bool:
        """The updates at the start of a step at ``t``: per-step, then the pending timed and
        witnessed ones (Drake's merge order), unrestricted before discrete. Returns whether
        any ran (the caller then restarts its integrator and re-evaluates the guards)."""
        pending, self.pending = self.pending, []
        unres = list(self.per_step_unrestricted)
        disc = list(self.per_step_discrete)
        for e, c in pending:
            if isinstance(e, WitnessFunction) or e.kind == "unrestricted":
                unres.append((e, c))
            else:
                disc.append((e, c))
        if not (unres or disc):
            return False
        self.apply_updates(t, unres, disc, "update")
        return True

    def run_end_of_step(self, t: float, due, hits) -> None:
        """End of a step at ``t``: the per-step publishes, then the periodic publishes due
        at ``t`` (they see the pre-update state); the updates due at ``t`` (periodic ones
        in ``due`` and the on_trigger of each witness in ``hits``) become pending for the
        start of the next step (Drake's order). Advances the events in ``due``."""
        pending = self.pending
        pubs = []
        for te in due:
            if te.event.kind == "publish":
                pubs.append((te.event, te.context))
            else:
                pending.append((te.event, te.context))
        for w, c in hits:
            if w.on_trigger is not None:
                pending.append((w, c))
        for e, c in self.per_step_publish:
            self.call(e, c, t, "per-step publish")
        for e, c in pubs:
            self.call(e, c, t, "periodic publish")
        self.stats["publishes"] += len(pubs) + len(self.per_step_publish)
        if self.check_outputs:  # every publish at t ran (Drake's rule); then the check
            if self._per_step_watches:
                check_published(self._per_step_watches, t, "per-step publish")
            for e, _ in pubs:
                check_published(self.watches[id(e)], t, "periodic publish")
        if due:
            for te in due:
                te.advance()
            timed = self.timed   # (one periodic event, a logger's: no min over a generator)
            self.next_time = timed[0].t_next if len(timed) == 1 else min([te.t_next
                                                                            for te in timed])

    def run_initialization_updates(self, t0: float, suppress: bool = False) -> None:
        """The initialization unrestricted updates (applied together), then the
        initialization discrete updates (evaluated from that state)."""
        events = () if suppress else self.initialization
        self.apply_updates(t0, [(e, c) for e, c in events if e.kind == "unrestricted"],
                           [(e, c) for e, c in events if e.kind == "discrete"], "initialization")

    def run_initial_publishes(self, t0: float, suppress: bool = False) -> None:
        """Initialize's publishes at ``t0``: the initialization publishes, then those of a
        step ending at ``t0`` (the updates due at ``t0`` become pending); then the check of
        the values the initialization publishes read."""
        pubs = [] if suppress else [(e, c) for e, c in self.initialization if e.kind == "publish"]
        for e, c in pubs:
            self.call(e, c, t0, "initialization publish")
        self.stats["publishes"] += len(pubs)
        self.run_end_of_step(t0, self.due(t0), ())
        if self.check_outputs:
            for e, _ in pubs:
                check_published(self.watches[id(e)], t0, "initialization publish")

    def apply_updates(self, t: float, unres, disc, what: str) -> None:
        """Evaluate the unrestricted updates from the current context and apply them
        together, then evaluate the discrete updates from the resulting context and apply
        them together (Drake's ``DoAnyUnrestrictedUpdates`` then ``DoAnyDiscreteUpdates``).
        An update that fails or returns a non-finite value leaves its stage unapplied."""
        states = []
        for e, c in unres:
            state = State(c)
            if isinstance(e, WitnessFunction):
                self.call(e, c, t, "witness on_trigger", e.on_trigger, state)
            else:
                self.call(e, c, t, what + " (unrestricted)", None, state)
            check_finite_update(state.continuous_state, e.system, "continuous state", t)
            check_finite_update(state.discrete_state, e.system, "discrete state", t)
            states.append((c, state))
        for c, state in states:
            if c.continuous_state.shape[0]:
                c.set_continuous_state(state.continuous_state)
            if c.discrete_state.shape[0]:
                c.set_discrete_state(state.discrete_state)
            for i, v in enumerate(state.abstract_state):
                if v is not c.abstract_state[i]:
                    c.set_abstract_state(i, v)
        xds = []
        for e, c in disc:
            xd = self.call(e, c, t, what + " (discrete)")
            if type(xd) is not np.ndarray or xd.dtype != np.float64 or xd.ndim != 1:
                xd = np.asarray(xd.full() if hasattr(xd, "full") else xd, dtype=float).reshape(-1)
            n = c.discrete_state.shape[0]
            if xd.shape[0] != n:
                raise PortValueError(f"system '{e.system.name}': discrete update at t={t!r} "
                                     f"returned {xd.shape[0]} values, expected {n}")
            check_finite_update(xd, e.system, "discrete state", t)
            xds.append((c, xd))
        for c, xd in xds:
            c.set_discrete_state(xd)
        stats = self.stats
        stats["unrestricted_updates"] += len(states)
        stats["discrete_updates"] += len(xds)

    @staticmethod
    def call(event, ctx, t: float, what: str, callback: Callable = None, *extra):
        """Run ``callback`` (default: the event's own) on ``ctx``; an exception it raises
        becomes :class:`~systems.errors.SystemCallbackError` naming the system, ``what``
        and the time (the framework's own errors pass through)."""
        cb = event.callback if callback is None else callback
        try:
            return cb(ctx, *extra)
        except (SystemCallbackError, InputNotConnectedError, SimulationError, NonFiniteOutputError):
            raise
        except Exception as exc:
            if isinstance(event, WitnessFunction):
                what = f"witness '{event.name}' {what.replace('witness ', '')}"
            raise SystemCallbackError(
                f"system '{event.system.name}': {what} at t={t!r} raised "
                f"{type(exc).__name__}: {exc}") from exc

    # ------------------------------------------------------------------ witnesses
    def guards(self) -> List[float]:
        """Every witness guard at the current context, in the order of :attr:`witnesses`
        (a guard that raises or is not finite is reported naming the witness)."""
        out = []
        for w, c in self.witnesses:
            try:
                g = float(w.guard(c))
            except (SystemCallbackError, InputNotConnectedError, NonFiniteStateError,
                    NonFiniteOutputError):
                raise
            except Exception as exc:
                raise SystemCallbackError(
                    f"system '{w.system.name}': guard of witness '{w.name}' at "
                    f"t={c.time!r} raised {type(exc).__name__}: {exc}") from exc
            if not math.isfinite(g):
                raise NonFiniteStateError(f"system '{w.system.name}': guard of witness "
                                          f"'{w.name}' is {g} at t={c.time!r}")
            out.append(g)
        return out

    def refresh_guards(self) -> None:
        """Set :attr:`guard_values` from the current context (no witnesses: empty)."""
        self.guard_values = self.guards() if self.witnesses else []

    def any_triggered(self, g0, g1) -> bool:
        """Whether any witness triggers from guard values ``g0`` to ``g1``."""
        return any(w.triggers(a, b) for (w, _), a, b in zip(self.witnesses, g0, g1))

    def triggered(self, g0, g1) -> tuple:
        """The ``(witness, context)`` pairs that trigger from ``g0`` to ``g1``; counts them
        in ``stats["witness_triggers"]``."""
        hits = tuple((w, c) for (w, c), a, b in zip(self.witnesses, g0, g1) if w.triggers(a, b))
        self.stats["witness_triggers"] += len(hits)
        return hits

    def isolate(self, t0: float, t1: float, g1, tolerance: float,
                move_to: Callable[[float], None]) -> Tuple[float, list]:
        """Bisect ``[t0, t1]`` down to ``tolerance`` for the first crossing from the guards
        :attr:`guard_values` (at ``t0``) to ``g1`` (at ``t1``); ``move_to(tau)`` puts the
        context at time ``tau`` (the state there from the integrator's dense output, or the
        time alone for a system without continuous state). Returns the stop time ``b`` just
        after the crossing and the guards there; the context is left at the last time
        probed (the caller moves it to ``b``)."""
        g0 = self.guard_values
        a, b, gb = t0, t1, g1
        while b - a > tolerance:
            m = 0.5 * (a + b)
            if m <= a or m >= b:
                break
            move_to(m)
            gm = self.guards()
            if self.any_triggered(g0, gm):
                b, gb = m, gm
            else:
                a = m
        return b, gb


    def isolate_on_time(self, t0: float, t1: float, tolerance: float,
                        set_time: Callable[[float], None]) -> Tuple[float, tuple]:
        """The witnesses of a system without continuous state, over a step from ``t0`` to
        ``t1`` (the context at ``t1``): the guards change with time only (and the held
        discrete and abstract state), so a crossing is isolated by bisection on time alone
        (``set_time(tau)`` moves the context). Returns the stop time (``t1`` without a
        crossing) and the ``(witness, context)`` pairs that triggered; updates
        :attr:`guard_values` and leaves the context at the stop time."""
        g0, g1 = self.guard_values, self.guards()
        if not self.any_triggered(g0, g1):
            self.guard_values = g1
            return t1, ()
        b, gb = self.isolate(t0, t1, g1, tolerance, set_time)
        set_time(b)
        self.guard_values = gb
        return b, self.triggered(g0, gb)


def check_finite_update(v: np.ndarray, system, what: str, t: float) -> None:
    """Refuse a non-finite updated state (:class:`~systems.errors.NonFiniteStateError`
    naming ``what``, the entry, the system and the time)."""
    if v.shape[0] and not math.isfinite(float(v.sum())):
        nonfinite = np.flatnonzero(~np.isfinite(v))
        if nonfinite.size == 0:
            return  # finite values whose sum overflowed
        bad = int(nonfinite[0])
        raise NonFiniteStateError(f"{what} {bad} of system '{system.name}' would become "
                                  f"{v[bad]} at t={t!r} (update refused; the context keeps "
                                  f"the last finite state)")
