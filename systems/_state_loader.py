"""The integrators' fast way into a root context (private; made by
:meth:`systems.context.Context.state_loader`)."""
from __future__ import annotations

from typing import Callable, Dict, List, Optional, Tuple

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
    body : tuple of str
        The statements of ``load_readonly`` with ``{t}`` and ``{x}`` for its arguments,
        over the names of ``names`` (see :meth:`inline`).
    names : dict, optional
        The objects the statements name (all starting ``ld_``); none by default.

    Attributes
    ----------
    size : int
        Length of ``x`` (the diagram's continuous state).
    slots : list of (LeafContext, int, int)
        Each leaf with continuous state and its ``[start, stop)`` in ``x``.
    """

    __slots__ = ("slots", "size", "_load_readonly", "set_time", "_body", "_names")

    def __init__(self, slots: List[Tuple], size: int,
                 load_readonly: Callable[[float, np.ndarray], None],
                 set_time: Callable[[float], None], body: Tuple[str, ...] = (),
                 names: Optional[Dict[str, object]] = None):
        self.slots, self.size = slots, size
        self._load_readonly = load_readonly
        self.set_time = set_time
        self._body, self._names = tuple(body), dict(names or {})

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

    def inline(self, t: str, x: str) -> Tuple[Tuple[str, ...], Tuple[str, ...], Dict[str, object]]:
        """The source of what :meth:`readonly_loader`'s function does, for code that writes
        the load out in its own loop (the integrators' written-out runs of steps).

        Parameters
        ----------
        t, x : str
            Expressions (names) of the time and of the read-only state to load.

        Returns
        -------
        (statements, key, names)
            The statements (str, unindented) loading ``(t, x)``; a hashable key of their
            form (the same for loaders of the same shape of diagram, whatever its objects);
            and the objects they name (``ld_*``), for the globals of the code they go into.
        """
        return (tuple(line.format(t=t, x=x) for line in self._body), self._body,
                dict(self._names))
