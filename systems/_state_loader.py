"""The integrators' fast way into a root context (private; made by
:meth:`systems.context.Context.state_loader`)."""
from __future__ import annotations

from typing import Callable, List, Tuple

import numpy as np

__all__ = ["StateLoader"]


class StateLoader:
    """Loads time and continuous state into a root context without per-leaf copies.

    The Simulator evaluates time derivatives many thousand times per simulated second; this
    is the Context's own fast path for that: ``load(t, x)`` copies ``x`` once (read-only),
    sets the root time, points every leaf's continuous state at its slice, and clears exactly
    the cached outputs that depend on time or continuous state (from the context's
    invalidation tables). ``set_time(t)`` changes only the time. Neither checks finiteness
    (the Simulator checks states itself); use :meth:`Context.set_time` and
    :meth:`Context.set_continuous_state` everywhere else.

    Parameters
    ----------
    slots : list of (LeafContext, int, int)
    size : int
    load_readonly : callable
        ``load_readonly(t, x)`` for an ``x`` the caller owns and made read-only.
    set_time : callable
        ``set_time(t)``.

    Attributes
    ----------
    size : int
        Length of ``x`` (the diagram's continuous state).
    slots : list of (LeafContext, int, int)
        Each leaf with continuous state and its ``[start, stop)`` in ``x``.
    """

    __slots__ = ("slots", "size", "_load_readonly", "set_time")

    def __init__(self, slots: List[Tuple], size: int,
                 load_readonly: Callable[[float, np.ndarray], None],
                 set_time: Callable[[float], None]):
        self.slots, self.size = slots, size
        self._load_readonly = load_readonly
        self.set_time = set_time

    def load(self, t: float, x: np.ndarray) -> None:
        """Set time ``t`` and continuous state ``x`` (shape (size,), copied once, read-only;
        a read-only float64 array owning its data or over a ``bytes`` object, which nobody can
        change, is shared)."""
        if type(x) is not np.ndarray or x.dtype != np.float64 or x.flags.writeable or \
                (x.base is not None and type(x.base) is not bytes):
            if type(x) is np.ndarray and x.dtype == np.float64 and x.ndim == 1:
                x = np.frombuffer(x.tobytes())   # an immutable copy
            else:
                x = np.array(x, dtype=float)
                x.setflags(write=False)
        self._load_readonly(t, x)

    def readonly_loader(self) -> Callable[[float, np.ndarray], None]:
        """A function ``load(t, x)`` doing what :meth:`load` does for an ``x`` the caller
        already owns and made read-only (no copy; everything it touches bound as locals, for
        the integrators' inner loop)."""
        return self._load_readonly
