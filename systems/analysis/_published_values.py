"""Private helpers of the simulators: the check that the values publishes read are finite.

A publish (a log sink's sample, a visualizer, any publish callback) reads the outputs that
feed its system's input ports. :func:`publish_watches` resolves, once per simulator, each
vector input of each publishing system to the leaf output port that computes its value
(through connections, exported diagram inputs and exported diagram outputs);
:func:`check_published` then looks, after the publishes at a time, at the cached values of
those outputs: one cache lookup and one sum per watched input, so the check costs well
under a microsecond per sink and step. A log sink always reads its input, so its source is
read directly (a cache hit); for other publishes only values that were evaluated (cached)
are looked at, so nothing is computed that they did not ask for. A non-finite value is
confirmed on the input port itself (a fixed input overrides the connection) and raises
:class:`~systems.errors.NonFiniteOutputError` naming the output, the entry, the time and
the reader.
"""
from __future__ import annotations

import math
from typing import Dict, List, Tuple

import numpy as np

from ..errors import NonFiniteOutputError
from ..primitives.logging import VectorLogSink

__all__ = ["SourceMap", "publish_watches", "check_published", "raise_non_finite_read"]


class SourceMap:
    """Where the value of any input port inside ``root`` comes from.

    Parameters
    ----------
    root : System
        The simulated system (a Diagram, or a leaf whose inputs can only be fixed).
    """

    def __init__(self, root):
        self._parent: Dict[int, Tuple[object, int]] = {}
        stack = [root]
        while stack:
            d = stack.pop()
            for i, sub in enumerate(getattr(d, "subsystems", ()) or ()):
                self._parent[id(sub)] = (d, i)
                stack.append(sub)

    def source(self, system, index: int):
        """The leaf ``OutputPort`` feeding input port ``index`` of ``system``, or None when
        the value can only be a fixed one (fixed values are checked finite when fixed)."""
        entry = self._parent.get(id(system))
        while entry is not None:
            diagram, i = entry
            kind, a, b = diagram.input_sources[i][index]
            if kind == "out":
                port = diagram.subsystems[a].output_ports[b]
                while port.source is not None:   # an exported output of a nested diagram
                    port = port.source
                return port
            if kind != "in":
                return None
            entry, index = self._parent.get(id(diagram)), a
        return None


# One watch: (source leaf context, output index, whether the reader always reads it (a log
# sink), source port, reader input port, reader context)
Watch = Tuple[object, int, bool, object, object, object]


def publish_watches(root, events, leaf_context) -> Dict[int, Tuple[Watch, ...]]:
    """``{id(event): watches}`` for the publish events in ``events``.

    ``events`` holds ``(event, leaf context)`` pairs; ``leaf_context`` maps ``id(leaf
    system)`` to its leaf context in the simulated root context.
    """
    sources = SourceMap(root)
    out: Dict[int, Tuple[Watch, ...]] = {}
    for e, c in events:
        if getattr(e, "kind", None) != "publish":   # witness functions have no kind
            continue
        watches: List[Watch] = []
        for port in e.system.input_ports:
            if port.size is None or port.size == 0:
                continue
            src = sources.source(e.system, port.index)
            if src is None or id(src.system) not in leaf_context:
                continue
            always = isinstance(e.system, VectorLogSink) and not port.is_fixed(c)
            watches.append((leaf_context[id(src.system)], src.index, always, src, port, c))
        out[id(e)] = tuple(watches)
    return out


def check_published(watches, t: float, what: str) -> None:
    """Raise :class:`NonFiniteOutputError` if a value read through ``watches`` (cached by
    the publishes just made) is not finite. ``what`` names the publish kind."""
    isfinite, ndarray = math.isfinite, np.ndarray
    for w in watches:
        if w[2]:
            v = w[0].eval_output(w[1])
        else:
            j, v = w[1], None
            for k, value in w[0].cached_output_values():
                if k == j:
                    v = value
                    break
        if type(v) is ndarray and not isfinite(sum(v.tolist()) if v.shape[0] <= 32 else float(v.sum())):
            raise_non_finite_read(w, t, what)


def raise_non_finite_read(w: Watch, t: float, what: str, value=None) -> None:
    """Confirm on the reader's input port (or on ``value``, the samples a compiled run
    logged) that the value read is not finite, and raise naming the source and reader."""
    src, port, c = w[3:]
    if value is None:
        value = np.asarray(port.eval(c), dtype=float)
    bad = np.flatnonzero(~np.isfinite(value))
    if bad.size == 0:
        return  # a fixed input overrides the connection, or a sum overflowed
    i = int(bad[0])
    origin = "the value" if src is None else f"output port '{src.name}' of system '{src.system.name}'"
    raise NonFiniteOutputError(
        f"{origin} is {value[i]} (entry {i} of "
        f"{value.shape[0]}) at t={t!r}, read by the {what} of system '{port.system.name}' "
        f"(input port '{port.name}'); expected finite values. The context holds the state "
        f"at t={t!r}. Simulator(..., allow_non_finite_outputs=True) publishes and logs "
        f"non-finite outputs instead")

