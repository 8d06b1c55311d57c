"""The :class:`System` base class: ports, sizes, context creation and feedthrough queries.

A system holds its *declarations* (ports, state sizes, parameters, events); every value
it is evaluated at lives in a :class:`~systems.Context`. Leaf systems
(:class:`~systems.LeafSystem`) compute; diagrams (:class:`~systems.Diagram`) wire
subsystems together. Both are Systems, so diagrams nest.
"""
from __future__ import annotations

import re
from typing import Iterable, List, Optional, Set, Tuple, Union

import numpy as np

from .ports import InputPort, OutputPort


__all__ = ["System"]


def _default_name(obj) -> str:
    s = re.sub(r"(?<!^)(?=[A-Z][a-z])", "_", type(obj).__name__).lower()
    return s


class System:
    """Base of every block: named, with input and output ports and state declarations.

    Subclass :class:`~systems.LeafSystem` to write a block; use
    :class:`~systems.DiagramBuilder` to make a :class:`~systems.Diagram`.

    Attributes
    ----------
    name : str
        Unique among the systems of one diagram; settable until the system is added to a
        built diagram.
    input_ports, output_ports : list of InputPort / OutputPort
        In declaration order; ``get_input_port(name_or_index)`` looks one up.
    """

    def __init__(self, name: Optional[str] = None):
        self._name = _default_name(self) if name is None else self._check_name(name)
        self.name_is_default = name is None
        self.input_ports: List[InputPort] = []
        self.output_ports: List[OutputPort] = []
        self.parent_diagram: Optional["Diagram"] = None
        self.index_in_parent = -1
        self.in_builder = None

    # ------------------------------------------------------------------ names
    @staticmethod
    def _check_name(name) -> str:
        if not isinstance(name, str) or not name or "." in name:
            raise ValueError(f"system name must be a non-empty string without '.', got {name!r}")
        return name

    @property
    def name(self) -> str:
        """The system's name (used in messages, Graphviz and symbol names)."""
        return self._name

    @name.setter
    def name(self, value: str) -> None:
        if self.parent_diagram is not None:
            raise ValueError(f"system '{self._name}' is part of diagram "
                             f"'{self.parent_diagram.name}'; it cannot be renamed")
        if self.in_builder is not None:
            self.in_builder.rename_system(self, self._check_name(value))
        self._name = self._check_name(value)
        self.name_is_default = False

    def is_diagram(self) -> bool:
        """Whether this system is a :class:`~systems.Diagram` (holds subsystems)."""
        return False

    def set_default_name(self, name: str) -> None:
        """Replace the automatic name before the system is added to a builder (the name still
        counts as a default one: the builder makes it unique instead of refusing a clash)."""
        if self.in_builder is not None or self.parent_diagram is not None:
            raise ValueError(f"system '{self._name}' is already in a builder or diagram; "
                             "set_default_name must come before add_system")
        self._name = self._check_name(name)
        self.name_is_default = True

    def __repr__(self) -> str:
        return f"<{type(self).__name__} '{self._name}'>"

    # ------------------------------------------------------------------ ports
    def num_input_ports(self) -> int:
        """Number of input ports."""
        return len(self.input_ports)

    def num_output_ports(self) -> int:
        """Number of output ports."""
        return len(self.output_ports)

    def get_input_port(self, name_or_index: Union[str, int] = None) -> InputPort:
        """An input port by name or index (no argument: the only input port)."""
        return self._get_port(self.input_ports, name_or_index, "input")

    def get_output_port(self, name_or_index: Union[str, int] = None) -> OutputPort:
        """An output port by name or index (no argument: the only output port)."""
        return self._get_port(self.output_ports, name_or_index, "output")

    def has_input_port(self, name: str) -> bool:
        """Whether an input port of this name exists."""
        return any(p.name == name for p in self.input_ports)

    def has_output_port(self, name: str) -> bool:
        """Whether an output port of this name exists."""
        return any(p.name == name for p in self.output_ports)

    def _get_port(self, ports, key, kind):
        names = [p.name for p in ports]
        if key is None:
            if len(ports) != 1:
                raise ValueError(f"system '{self.name}' has {len(ports)} {kind} ports {names}; "
                                 f"name the one you want")
            return ports[0]
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            if not 0 <= key < len(ports):
                raise IndexError(f"system '{self.name}' has no {kind} port {key}; it has "
                                 f"{len(ports)}: {names}")
            return ports[key]
        for p in ports:
            if p.name == key:
                return p
        raise ValueError(f"system '{self.name}' has no {kind} port named {key!r}; "
                         f"its {kind} ports are {names}")

    # ------------------------------------------------------------------ sizes
    def num_continuous_states(self) -> int:
        """Size of the continuous state x."""
        raise NotImplementedError

    def num_discrete_states(self) -> int:
        """Size of the discrete state xd (all groups)."""
        raise NotImplementedError

    def num_abstract_states(self) -> int:
        """Number of abstract state values."""
        raise NotImplementedError

    def num_numeric_parameters(self) -> int:
        """Size of all numeric parameters concatenated."""
        raise NotImplementedError

    def continuous_state_partition(self) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Indices of the position (q), velocity (v) and other (z) continuous states.

        Returns
        -------
        q_idx, v_idx, z_idx : ndarray of int
            Index arrays into the continuous state vector.
        """
        raise NotImplementedError

    # ------------------------------------------------------------------ contexts
    def create_default_context(self) -> "Context":
        """A new root context holding the declared default values (time 0)."""
        ctx = self.allocate_context()
        if hasattr(ctx, "set_root"):
            ctx.set_root(ctx)
        return ctx

    def allocate_context(self) -> "Context":
        """Override: a new, non-root context of this system (``create_default_context`` makes
        it a root)."""
        raise NotImplementedError

    def get_my_context_from_root(self, context: "Context") -> "Context":
        """This system's context inside ``context`` (its own or an enclosing diagram's)."""
        path = []
        s: System = self
        while s is not context.system:
            if s.parent_diagram is None:
                raise ValueError(f"the context given belongs to system '{context.system.name}', "
                                 f"which does not contain system '{self.name}'")
            path.append(s.index_in_parent)
            s = s.parent_diagram
        ctx = context
        for k in reversed(path):
            ctx = ctx.subcontexts[k]
        return ctx

    # ------------------------------------------------------------------ evaluation
    def eval_time_derivatives(self, context: "Context"):
        """Time derivatives of the continuous state, shape (nx,), checked for size."""
        raise NotImplementedError

    def map_velocity_to_qdot(self, context: "Context", v):
        """qdot = N(q) v for the position states (identity unless a leaf overrides it)."""
        raise NotImplementedError

    def leaf_systems(self) -> List["System"]:
        """Every leaf system inside this system, depth first (a leaf returns ``[self]``)."""
        return [self]

    def events(self) -> list:
        """Every declared event of this system and its subsystems (each knows its ``system``)."""
        return []

    def eval_unique_periodic_discrete_update(self, context: "Context") -> np.ndarray:
        """The discrete state one step ahead, without changing ``context`` (Drake's
        ``EvalUniquePeriodicDiscreteUpdate``).

        Every periodic discrete update of this system must share one (period, offset);
        each leaf that has one returns ``xd[n+1]`` from ``context``, the others keep their
        discrete state. This is the map ``x[n+1] = f(x[n], u[n])`` of a discrete system,
        e.g. to step a controller by hand or to check a discretization.

        Parameters
        ----------
        context : Context
            A root context of this system.

        Returns
        -------
        ndarray, shape (num_discrete_states,)
            Leaf order, as ``context.discrete_state``.

        Raises
        ------
        ValueError
            When there is no periodic discrete update, or several timings (the message
            lists them), or ``context`` belongs to another system.
        """
        from .events import PeriodicEvent
        if getattr(context, "system", None) is not self:
            raise ValueError(f"eval_unique_periodic_discrete_update: the context belongs to "
                             f"'{getattr(getattr(context, 'system', None), 'name', context)}', not "
                             f"to system '{self.name}'")
        events = [e for e in self.events() if isinstance(e, PeriodicEvent) and e.kind == "discrete"]
        if not events:
            raise ValueError(f"eval_unique_periodic_discrete_update: system '{self.name}' has no "
                             f"periodic discrete update")
        timings = sorted({(e.period, e.offset) for e in events})
        if len(timings) > 1:
            owners = sorted({f"'{e.system.name}' (period {e.period}, offset {e.offset})" for e in events})
            raise ValueError(f"eval_unique_periodic_discrete_update: system '{self.name}' has periodic "
                             f"discrete updates of different timings: {', '.join(owners)}; expected one")
        by_leaf = {}
        for e in events:
            by_leaf.setdefault(id(e.system), []).append(e)
        parts = []
        for leaf, c in zip(self.leaf_systems(), context.leaf_contexts()):
            xd = np.array(c.discrete_state, dtype=float)
            for e in by_leaf.get(id(leaf), ()):
                xd = np.asarray(e.callback(c), dtype=float).reshape(-1)
            parts.append(xd)
        return np.concatenate(parts) if parts else np.zeros(0)

    # ------------------------------------------------------------------ feedthrough
    def feedthrough_pairs(self) -> Set[Tuple[int, int]]:
        """Override: ``(input index, output index)`` pairs with direct feedthrough."""
        raise NotImplementedError

    def has_direct_feedthrough(self, input_port: Union[str, int, None] = None,
                               output_port: Union[str, int, None] = None) -> bool:
        """Whether an output depends directly (algebraically) on an input.

        With no arguments: whether any output depends on any input. Ports are given by
        name or index.
        """
        pairs = self.feedthrough_pairs()
        i = None if input_port is None else self.get_input_port(input_port).index
        j = None if output_port is None else self.get_output_port(output_port).index
        return any((i is None or a == i) and (j is None or b == j) for a, b in pairs)

    # ------------------------------------------------------------------ drawing
    def to_dot(self, *, rankdir: str = "LR") -> str:
        """Graphviz source of this system (see :mod:`systems.drawing`)."""
        from .drawing import to_dot
        return to_dot(self, rankdir=rankdir)

    def render(self, path, *, format: Optional[str] = None) -> str:
        """Render the Graphviz picture to ``path`` (SVG or PNG by extension); returns the path."""
        from .drawing import render
        return render(self, path, format=format)

    def _check_names(self, names: Iterable[str], what: str) -> None:
        seen = set()
        for n in names:
            if n in seen:
                raise ValueError(f"system '{self.name}': duplicate {what} name {n!r}")
            seen.add(n)
