"""Event declarations of leaf systems: periodic, per-step and initialization events, and
witness functions.

A :class:`~systems.LeafSystem` declares its events in ``__init__``; the
:class:`~systems.Simulator` collects them from every leaf of a diagram and dispatches them.
Callbacks follow one contract per kind:

========================  =====================================================
kind                      callback
========================  =====================================================
``"discrete"``            ``update(context) -> xd_next`` (the leaf's whole discrete
                          state vector; returning values keeps it symbolic-capable)
``"publish"``             ``publish(context) -> None`` (must not change state)
``"unrestricted"``        ``update(context, state) -> None``: writes into ``state``
                          (a :class:`State` copy of the leaf's state), applied after
                          every event due at the same time has been evaluated
========================  =====================================================

Witness functions: ``guard(context) -> float``; a trigger is located in time when the
guard changes sign in the declared direction, and ``on_trigger(context, state)`` runs as
an unrestricted update.
"""
from __future__ import annotations

import copy
import math
import numbers
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np

__all__ = [
    "EVENT_KINDS", "WITNESS_DIRECTIONS", "PeriodicEvent", "PerStepEvent",
    "InitializationEvent", "WitnessFunction", "State",
]

EVENT_KINDS = ("discrete", "publish", "unrestricted")
WITNESS_DIRECTIONS = ("positive_then_nonpositive", "negative_then_nonnegative", "crosses_zero")


def _is_real(x: Any) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def _check_kind(kind: str, owner: str) -> str:
    if kind not in EVENT_KINDS:
        raise ValueError(f"{owner}: unknown event kind {kind!r}; expected one of {EVENT_KINDS}")
    return kind


def _check_callback(callback: Any, owner: str) -> Callable:
    if not callable(callback):
        raise TypeError(f"{owner}: event callback must be callable, got {type(callback).__name__}")
    return callback


@dataclass(frozen=True)
class PeriodicEvent:
    """An event at times ``offset + k * period``, k = 0, 1, 2, ...

    Event times are computed as ``offset + k * period`` from the integer ``k`` (never by
    accumulating ``period``), so they do not drift over long runs.
    """

    kind: str
    period: float
    offset: float
    callback: Callable
    system: Any = field(compare=False, repr=False, default=None)

    def __post_init__(self):
        owner = f"system '{getattr(self.system, 'name', '?')}'"
        _check_kind(self.kind, owner)
        _check_callback(self.callback, owner)
        if not (_is_real(self.period) and math.isfinite(self.period) and self.period > 0):
            raise ValueError(f"{owner}: periodic event period must be a finite number > 0, got {self.period!r}")
        if not (_is_real(self.offset) and math.isfinite(self.offset) and self.offset >= 0):
            raise ValueError(f"{owner}: periodic event offset must be a finite number >= 0, got {self.offset!r}")
        object.__setattr__(self, "period", float(self.period))
        object.__setattr__(self, "offset", float(self.offset))

    def time_of(self, k: int) -> float:
        """The ``k``-th event time, ``offset + k * period``."""
        return self.offset + k * self.period

    def next_index_after(self, t: float, *, inclusive: bool = False) -> int:
        """Smallest ``k >= 0`` with ``time_of(k) > t`` (``>=`` when ``inclusive``)."""
        if t < self.offset:
            return 0
        k = int(math.floor((t - self.offset) / self.period))
        while self.time_of(k) < t or (not inclusive and self.time_of(k) == t):
            k += 1
        while k > 0 and (self.time_of(k - 1) > t or (inclusive and self.time_of(k - 1) == t)):
            k -= 1
        return k


@dataclass(frozen=True)
class _CallbackEvent:
    kind: str
    callback: Callable
    system: Any = field(compare=False, repr=False, default=None)

    def __post_init__(self):
        owner = f"system '{getattr(self.system, 'name', '?')}'"
        _check_kind(self.kind, owner)
        _check_callback(self.callback, owner)


@dataclass(frozen=True)
class PerStepEvent(_CallbackEvent):
    """An event after every simulator step (and once at initialization, as in Drake)."""


@dataclass(frozen=True)
class InitializationEvent(_CallbackEvent):
    """An event run once by ``Simulator.initialize()``."""


@dataclass(frozen=True)
class WitnessFunction:
    """A scalar guard whose zero crossings the simulator isolates in time.

    Parameters
    ----------
    name : str
        Name used in messages and statistics.
    direction : str
        ``"positive_then_nonpositive"`` (guard goes from > 0 to <= 0),
        ``"negative_then_nonnegative"`` (from < 0 to >= 0) or ``"crosses_zero"`` (either).
    guard : callable
        ``guard(context) -> float``.
    on_trigger : callable or None
        ``on_trigger(context, state) -> None``, an unrestricted update applied at the
        isolated crossing time.
    """

    name: str
    direction: str
    guard: Callable
    on_trigger: Optional[Callable] = None
    system: Any = field(compare=False, repr=False, default=None)

    def __post_init__(self):
        owner = f"system '{getattr(self.system, 'name', '?')}' witness '{self.name}'"
        if self.direction not in WITNESS_DIRECTIONS:
            raise ValueError(f"{owner}: unknown direction {self.direction!r}; "
                             f"expected one of {WITNESS_DIRECTIONS}")
        _check_callback(self.guard, owner)
        if self.on_trigger is not None:
            _check_callback(self.on_trigger, owner)

    def triggers(self, g0: float, g1: float) -> bool:
        """Whether a guard going from ``g0`` to ``g1`` is a crossing in this direction."""
        if self.direction == "positive_then_nonpositive":
            return g0 > 0 and g1 <= 0
        if self.direction == "negative_then_nonnegative":
            return g0 < 0 and g1 >= 0
        return (g0 > 0 and g1 <= 0) or (g0 < 0 and g1 >= 0)


class State:
    """A writable copy of one leaf system's state, handed to unrestricted updates.

    Attributes
    ----------
    continuous_state : ndarray, shape (nx,)
    discrete_state : ndarray, shape (nxd,)
    abstract_state : list
    """

    __slots__ = ("continuous_state", "discrete_state", "abstract_state", "_system")

    def __init__(self, context):
        self._system = context.system
        self.continuous_state = np.array(context.continuous_state, dtype=float, copy=True)
        self.discrete_state = np.array(context.discrete_state, dtype=float, copy=True)
        self.abstract_state = copy.deepcopy(list(context.abstract_state))

    def _checked(self, x, n, what):
        arr = np.asarray(x, dtype=float).reshape(-1)
        if arr.shape[0] != n:
            raise ValueError(f"system '{self._system.name}': {what} has size {arr.shape[0]}, expected {n}")
        return arr

    def set_continuous_state(self, x) -> None:
        """Replace the continuous state (size checked)."""
        self.continuous_state = self._checked(x, self.continuous_state.shape[0], "continuous state")

    def set_discrete_state(self, xd) -> None:
        """Replace the discrete state (size checked)."""
        self.discrete_state = self._checked(xd, self.discrete_state.shape[0], "discrete state")

    def set_abstract_state(self, index: int, value: Any) -> None:
        """Replace abstract state ``index``."""
        self.abstract_state[index] = value
