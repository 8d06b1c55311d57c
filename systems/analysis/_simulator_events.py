"""Private parts of the Simulator: status types, errors, periodic-event bookkeeping, and
the event dispatch and fault reporting methods (a mixin of :class:`Simulator`).

See :mod:`systems.analysis.simulator` for the semantics.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, List, Optional, Tuple

import numpy as np

from ..errors import (InputNotConnectedError, NonFiniteOutputError, PortValueError,
                      SystemCallbackError)
from ..events import InitializationEvent, PeriodicEvent, PerStepEvent, State, WitnessFunction
from ._published_values import check_published, publish_watches
from ..errors import NonFiniteStateError, SimulationError

__all__ = ["SimulationError", "NonFiniteStateError", "EventStatus", "SimulatorStatus"]




@dataclass(frozen=True)
class EventStatus:
    """What a monitor returns: ``severity`` one of ``"did_nothing"``, ``"succeeded"``,
    ``"reached_termination"``, ``"failed"``, with an optional message."""

    severity: str
    message: str = ""

    @classmethod
    def did_nothing(cls) -> "EventStatus":
        """Continue."""
        return cls("did_nothing")

    @classmethod
    def succeeded(cls) -> "EventStatus":
        """Continue."""
        return cls("succeeded")

    @classmethod
    def reached_termination(cls, message: str = "") -> "EventStatus":
        """Stop the run; ``advance_to`` returns normally."""
        return cls("reached_termination", message)

    @classmethod
    def failed(cls, message: str = "") -> "EventStatus":
        """Stop the run with a :class:`SimulationError`."""
        return cls("failed", message)


@dataclass(frozen=True)
class SimulatorStatus:
    """Returned by :meth:`Simulator.advance_to`.

    Attributes
    ----------
    reason : str
        ``"reached_boundary_time"`` or ``"reached_termination"`` (the monitor stopped it).
    boundary_time : float
        The requested final time.
    return_time : float
        The time reached.
    message : str
    """

    reason: str
    boundary_time: float
    return_time: float
    message: str = ""

    def succeeded(self) -> bool:
        """True when the requested time was reached."""
        return self.reason == "reached_boundary_time"


class _Timed:
    """Bookkeeping of one periodic event: the next index k and its time."""

    __slots__ = ("event", "ctx", "k", "t_next")

    def __init__(self, event: PeriodicEvent, ctx):
        self.event, self.ctx, self.k, self.t_next = event, ctx, 0, event.time_of(0)

    def start(self, t0: float) -> None:
        self.k = self.event.next_index_after(t0, inclusive=True)
        self.t_next = self.event.time_of(self.k)

    def advance(self) -> None:
        self.k += 1
        self.t_next = self.event.time_of(self.k)


def _merge_tol(t: float) -> float:
    return 1e-12 * max(1.0, abs(t))



class _EventDispatch:
    """Event dispatch and fault reporting of :class:`~systems.analysis.Simulator`."""

    # ================================================================== events
    def _collect_events(self) -> None:
        """Sort the diagram's events by kind, each with its leaf context."""
        ctx = self._context
        leaf_ctx = {}
        for system, c in zip(self._system.leaf_systems(), ctx.leaf_contexts()):
            leaf_ctx[id(system)] = c
        self._timed: List[_Timed] = []
        self._per_step = {"publish": [], "discrete": [], "unrestricted": []}
        self._init_events = []
        self._witnesses: List[Tuple[WitnessFunction, Any]] = []
        with_ctx = [(e, leaf_ctx[id(e.system)]) for e in self._system.events()]
        # The vector inputs each publish reads, resolved to the leaf outputs computing them.
        self._watches = publish_watches(self._system, with_ctx, leaf_ctx)
        for e, c in with_ctx:
            if isinstance(e, PeriodicEvent):
                self._timed.append(_Timed(e, c))
            elif isinstance(e, PerStepEvent):
                self._per_step[e.kind].append((e, c))
            elif isinstance(e, InitializationEvent):
                self._init_events.append((e, c))
            elif isinstance(e, WitnessFunction):
                self._witnesses.append((e, c))
            else:  # pragma: no cover - the framework defines no other kinds
                raise TypeError(f"Simulator: unknown event {e!r} of system '{e.system.name}'")
        self._g_prev: List[float] = []
        self._per_step_pub = self._per_step["publish"]
        self._per_step_disc = self._per_step["discrete"]
        self._per_step_unres = self._per_step["unrestricted"]
        self._any_per_step_update = bool(self._per_step_disc or self._per_step_unres)
        self._per_step_watches = tuple(w for e, _ in self._per_step_pub for w in self._watches[id(e)])
        self._pending: List[Tuple[Any, Any]] = []

    def _due(self, t: float) -> List[_Timed]:
        limit = t + 1e-12 * (t if t > 1.0 else (-t if t < -1.0 else 1.0))
        return [te for te in self._timed if te.t_next <= limit]

    def _end_of_step(self, t: float, due, hits) -> None:
        """End of a step at ``t``: the per-step publishes, then the periodic publishes due
        at ``t`` (they see the pre-update state); the updates due at ``t`` (periodic ones
        and the on_trigger of each witness in ``hits``) become pending for the start of
        the next step (Drake's order)."""
        pending = self._pending
        pubs = []
        for te in due:
            if te.event.kind == "publish":
                pubs.append((te.event, te.ctx))
            else:
                pending.append((te.event, te.ctx))
        for w, c in hits:
            if w.on_trigger is not None:
                pending.append((w, c))
        for e, c in self._per_step_pub:
            self._call(e, c, t, "per-step publish")
        for e, c in pubs:
            self._call(e, c, t, "periodic publish")
        self._stats["publishes"] += len(pubs) + len(self._per_step_pub)
        if self._check_outputs:  # every publish at t ran (Drake's rule); then the check
            if self._per_step_watches:
                check_published(self._per_step_watches, t, "per-step publish")
            for e, _ in pubs:
                check_published(self._watches[id(e)], t, "periodic publish")
        if due:
            for te in due:
                te.advance()
            self._t_event = min(te.t_next for te in self._timed)

    def _initial_publishes(self, t0: float, init_pubs) -> None:
        """Initialize's publishes at ``t0``: the initialization publishes, then those of a
        step ending at ``t0`` (the updates due at ``t0`` become pending); then the check
        of the values the initialization publishes read."""
        for e, c in init_pubs:
            self._call(e, c, t0, "initialization publish")
        self._stats["publishes"] += len(init_pubs)
        self._end_of_step(t0, self._due(t0), ())
        if self._check_outputs:
            for e, _ in init_pubs:
                check_published(self._watches[id(e)], t0, "initialization publish")

    def _start_of_step(self, t: float) -> None:
        """Start of a step at ``t``: the pending and per-step updates (Drake's merge order:
        per-step, then timed, then witnessed), unrestricted before discrete; restart the
        integrator and re-evaluate the witness guards when anything changed."""
        pending, self._pending = self._pending, []
        unres = list(self._per_step_unres)
        disc = list(self._per_step_disc)
        for e, c in pending:
            if isinstance(e, WitnessFunction) or e.kind == "unrestricted":
                unres.append((e, c))
            else:
                disc.append((e, c))
        if not (unres or disc):
            return
        self._apply_updates(t, unres, disc, "update")
        if self._nx:
            self._restart_stepper()
        if self._witnesses:
            self._g_prev = self._guards()

    def _apply_updates(self, t, unres, disc, what) -> None:
        """Evaluate the unrestricted updates from the current context and apply them
        together, then evaluate the discrete updates from the resulting context and apply
        them together (Drake's ``DoAnyUnrestrictedUpdates`` then ``DoAnyDiscreteUpdates``).
        An update that fails or returns a non-finite value leaves its stage unapplied."""
        states = []
        for e, c in unres:
            state = State(c)
            if isinstance(e, WitnessFunction):
                self._call(e, c, t, "witness on_trigger", e.on_trigger, state)
            else:
                self._call(e, c, t, what + " (unrestricted)", None, state)
            self._check_finite_vector(state.continuous_state, e.system, "continuous state", t)
            self._check_finite_vector(state.discrete_state, e.system, "discrete state", t)
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
            xd = self._call(e, c, t, what + " (discrete)")
            if type(xd) is not np.ndarray or xd.dtype != np.float64 or xd.ndim != 1:
                xd = np.asarray(xd.full() if hasattr(xd, "full") else xd, dtype=float).reshape(-1)
            n = c.discrete_state.shape[0]
            if xd.shape[0] != n:
                raise PortValueError(f"system '{e.system.name}': discrete update at t={t!r} "
                                     f"returned {xd.shape[0]} values, expected {n}")
            self._check_finite_vector(xd, e.system, "discrete state", t)
            xds.append((c, xd))
        for c, xd in xds:
            c.set_discrete_state(xd)
        stats = self._stats
        stats["unrestricted_updates"] += len(states)
        stats["discrete_updates"] += len(xds)

    def _call(self, event, ctx, t, what, callback=None, *extra):
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

    def _check_monitor(self, t) -> Optional[str]:
        result = self._monitor(self._context)
        if result is None:
            return None
        if isinstance(result, str):
            key = result.lower()
            if key in ("terminate", "reached_termination", "stop"):
                return f"monitor requested termination at t={t!r}"
            if key in ("fail", "failed"):
                raise SimulationError(f"monitor reported failure at t={t!r} while simulating "
                                      f"'{self._system.name}'")
            raise ValueError(f"Simulator monitor returned the string {result!r}; expected None, "
                             f"an EventStatus, 'terminate' or 'fail'")
        if isinstance(result, EventStatus):
            if result.severity in ("did_nothing", "succeeded"):
                return None
            if result.severity == "reached_termination":
                return result.message or f"monitor requested termination at t={t!r}"
            if result.severity == "failed":
                raise SimulationError(f"monitor reported failure at t={t!r} while simulating "
                                      f"'{self._system.name}': {result.message}")
        raise TypeError(f"Simulator monitor returned {result!r}; expected None, an EventStatus, "
                        f"'terminate' or 'fail'")

    # ================================================================== witnesses
    def _guards(self) -> List[float]:
        out = []
        for w, c in self._witnesses:
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

    def _witness_time_only(self, t0: float, t1: float):
        """Witnesses of a system without continuous state: the guards can only change with
        time (and the held discrete and abstract state), so a crossing in [t0, t1] is
        isolated by bisection on time alone; returns the stop time and the triggers."""
        ws = self._witnesses
        g0 = self._g_prev
        g1 = self._guards()
        if not any(w.triggers(p, q) for (w, _), p, q in zip(ws, g0, g1)):
            self._g_prev = g1
            return t1, ()
        a, b, gb = t0, t1, g1
        while b - a > self._witness_tol:
            m = 0.5 * (a + b)
            if m <= a or m >= b:
                break
            self._set_time(m)
            gm = self._guards()
            if any(w.triggers(p, q) for (w, _), p, q in zip(ws, g0, gm)):
                b, gb = m, gm
            else:
                a = m
        self._set_time(b)
        self._g_prev = gb
        hits = tuple((w, c) for (w, c), p, q in zip(ws, g0, gb) if w.triggers(p, q))
        self._stats["witness_triggers"] += len(hits)
        return b, hits

    def _isolate(self, t0, t1, g0, g1):
        """Bisect [t0, t1] down to ``witness_tolerance``; return the stop time just after
        the first crossing and the witnesses that triggered."""
        st = self._stepper
        ws = self._witnesses
        a, b, gb = t0, t1, g1
        while b - a > self._witness_tol:
            m = 0.5 * (a + b)
            if m <= a or m >= b:
                break
            self._load(m, st.state_at(m))
            gm = self._guards()
            if any(w.triggers(p, q) for (w, _), p, q in zip(ws, g0, gm)):
                b, gb = m, gm
            else:
                a = m
        xb = st.state_at(b)
        self._check_finite_state(b, xb, t0)
        self._load(b, xb)
        self._restart_stepper()  # the step ends at b, not where the integrator went
        self._g_prev = gb
        hits = tuple((w, c) for (w, c), p, q in zip(ws, g0, gb) if w.triggers(p, q))
        self._stats["witness_triggers"] += len(hits)
        return b, hits

    # ================================================================== faults
    def _locate(self, index: int):
        for leaf, a, b in self._slots:
            if a <= index < b:
                return leaf.system, index - a
        return self._system, index  # pragma: no cover

    def _check_finite_state(self, t1, x, t0) -> None:
        if x.shape[0] and not math.isfinite(sum(x.tolist()) if x.shape[0] <= 32 else float(x.sum())):
            nonfinite = np.flatnonzero(~np.isfinite(x))
            if nonfinite.size == 0:
                return  # finite values whose sum overflowed
            bad = int(nonfinite[0])
            system, local = self._locate(bad)
            when = f"t={t1!r}" if t0 is None else f"the step from t={t0!r} to t={t1!r}"
            raise NonFiniteStateError(
                f"continuous state {local} of system '{system.name}' (index {bad} of the "
                f"state of '{self._system.name}') became {x[bad]} in {when}; the context "
                f"keeps the last finite state")

    def _check_finite_vector(self, v, system, what, t) -> None:
        if v.shape[0] and not math.isfinite(float(v.sum())):
            nonfinite = np.flatnonzero(~np.isfinite(v))
            if nonfinite.size == 0:
                return  # finite values whose sum overflowed
            bad = int(nonfinite[0])
            raise NonFiniteStateError(f"{what} {bad} of system '{system.name}' would become "
                                      f"{v[bad]} at t={t!r} (update refused; the context keeps "
                                      f"the last finite state)")

    def _report_nonfinite_derivative(self, t, x, xdot) -> None:
        bad = int(np.flatnonzero(~np.isfinite(xdot))[0])
        system, local = self._locate(bad)
        culprit = ""
        leaves = self._context.leaf_contexts()
        for leaf in leaves:
            for j, value in leaf.cached_output_values():
                if isinstance(value, np.ndarray) and value.dtype.kind == "f" and \
                        not np.all(np.isfinite(value)):
                    port = leaf.system.output_ports[j]
                    culprit = (f"; output port '{port.name}' of system '{leaf.system.name}' "
                               f"is not finite")
                    break
            if culprit:
                break
        raise NonFiniteStateError(
            f"time derivative of continuous state {local} of system '{system.name}' is "
            f"{xdot[bad]} at t={t!r}{culprit}; the context keeps the last finite state")
