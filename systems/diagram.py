"""The :class:`Diagram`: a System made of subsystems wired together.

Diagrams are made by :class:`~systems.DiagramBuilder`. A diagram's state is the
concatenation of its leaves' states in depth-first order (``leaf_systems()``), its input
ports are the exported inputs and its output ports the exported outputs.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import numpy as np

from solvers import ops
from .context import DiagramContext
from .ports import InputPort, OutputPort
from .system import System

__all__ = ["Diagram"]


class Diagram(System):
    """A system of subsystems and connections (build one with :class:`~systems.DiagramBuilder`).

    Attributes
    ----------
    subsystems : list of System
        Direct subsystems in the order they were added.
    connections : list of (OutputPort, InputPort)
        Internal connections.
    """

    def __init__(self, name: Optional[str], systems: List[System],
                 connections: List[Tuple[OutputPort, InputPort]],
                 exported_inputs: List[Tuple[str, List[InputPort]]],
                 exported_outputs: List[Tuple[str, OutputPort]]):
        super().__init__(name)
        self.subsystems: List[System] = list(systems)
        self.connections = list(connections)
        index = {id(s): k for k, s in enumerate(self.subsystems)}
        for k, s in enumerate(self.subsystems):
            s.parent_diagram = self
            s.index_in_parent = k
            s.in_builder = None
        # Input sources of every subsystem input: ("out", k, j) / ("in", e, None) / ("none", ...)
        self.input_sources = [[("none", None, None)] * len(s.input_ports) for s in self.subsystems]
        for out, inp in self.connections:
            self.input_sources[index[id(inp.system)]][inp.index] = ("out", index[id(out.system)], out.index)
        self.exported_input_ports = []
        for e, (name_e, targets) in enumerate(exported_inputs):
            first = targets[0]
            port = InputPort(self, e, name_e, first.size, first.model_value)
            self.input_ports.append(port)
            self.exported_input_ports.append(list(targets))
            for t in targets:
                self.input_sources[index[id(t.system)]][t.index] = ("in", e, None)
        self.output_sources: List[Tuple[int, int]] = []
        for j, (name_j, src) in enumerate(exported_outputs):
            self.output_ports.append(OutputPort(self, j, name_j, src.size, source=src,
                                                model_value=src.model_value))
            self.output_sources.append((index[id(src.system)], src.index))
        self._leaves = [leaf for s in self.subsystems for leaf in s.leaf_systems()]
        self._ft_cache: Optional[Set[Tuple[int, int]]] = None
        self._leaf_offsets = self._offsets()

    def _offsets(self) -> Dict[str, np.ndarray]:
        sizes = {
            "x": [s.num_continuous_states() for s in self._leaves],
            "xd": [s.num_discrete_states() for s in self._leaves],
        }
        return {k: np.concatenate([[0], np.cumsum(v)]).astype(int) for k, v in sizes.items()}

    # ------------------------------------------------------------------ structure
    def leaf_systems(self) -> List[System]:
        return list(self._leaves)

    def get_subsystem_by_name(self, name: str) -> System:
        """A direct subsystem by name; nested ones with a path ``"inner/plant"``."""
        head, _, rest = name.partition("/")
        for s in self.subsystems:
            if s.name == head:
                if rest:
                    if not isinstance(s, Diagram):
                        raise ValueError(f"'{head}' in diagram '{self.name}' is not a diagram; "
                                         f"cannot look up '{rest}' inside it")
                    return s.get_subsystem_by_name(rest)
                return s
        raise ValueError(f"diagram '{self.name}' has no subsystem named {head!r}; it has "
                         f"{[s.name for s in self.subsystems]}")

    def get_subsystem_context(self, system: System, context: DiagramContext):
        """The context of ``system`` (a subsystem at any depth) inside this diagram's ``context``."""
        if context.system is not self:
            context = self.get_my_context_from_root(context)
        return system.get_my_context_from_root(context)

    def events(self) -> list:
        return [e for leaf in self._leaves for e in leaf.events()]

    # ------------------------------------------------------------------ sizes
    def num_continuous_states(self) -> int:
        return int(self._leaf_offsets["x"][-1])

    def num_discrete_states(self) -> int:
        return int(self._leaf_offsets["xd"][-1])

    def num_abstract_states(self) -> int:
        return sum(s.num_abstract_states() for s in self._leaves)

    def num_numeric_parameters(self) -> int:
        return sum(s.num_numeric_parameters() for s in self._leaves)

    def continuous_state_partition(self):
        parts = ([], [], [])
        for leaf, off in zip(self._leaves, self._leaf_offsets["x"][:-1]):
            for acc, idx in zip(parts, leaf.continuous_state_partition()):
                acc.append(idx + off)
        return tuple(np.concatenate(p).astype(int) if p else np.zeros(0, int) for p in parts)

    # ------------------------------------------------------------------ evaluation
    def is_diagram(self) -> bool:
        """True: a diagram holds subsystems."""
        return True

    def allocate_context(self) -> DiagramContext:
        """A new diagram context holding one new context per subsystem (not yet a root; use
        :meth:`create_default_context`)."""
        return DiagramContext(self, [s.allocate_context() for s in self.subsystems])

    def time_derivatives(self, context: DiagramContext):
        """Every leaf's time derivatives, concatenated (shape (nx,))."""
        return self.eval_time_derivatives(context)

    def eval_time_derivatives(self, context: DiagramContext):
        if context.system is not self:
            context = self.get_my_context_from_root(context)
        parts = [leaf.system.eval_time_derivatives(leaf) for leaf in context.leaf_contexts()
                 if leaf.continuous_state.shape[0]]
        if not parts:
            return np.zeros(0)
        if len(parts) == 1:
            return parts[0]
        if any(ops.is_symbolic(p) for p in parts):
            return ops.vertcat(*parts)
        return np.concatenate(parts)

    def map_velocity_to_qdot(self, context: DiagramContext, v):
        """qdot = N(q) v for every leaf, with v and qdot stacked in leaf order."""
        if context.system is not self:
            context = self.get_my_context_from_root(context)
        out, k = [], 0
        for leaf in context.leaf_contexts():
            q_idx, v_idx, _ = leaf.system.continuous_state_partition()
            nv = len(v_idx)
            if leaf.continuous_state.shape[0] and (nv or len(q_idx)):
                out.append(ops.vector(leaf.system.map_velocity_to_qdot(leaf, v[k:k + nv])))
                k += nv
        return ops.vertcat(*out) if out else np.zeros(0)

    # ------------------------------------------------------------------ feedthrough
    def feedthrough_pairs(self) -> Set[Tuple[int, int]]:
        """``(input index, output index)`` pairs of the diagram's exported ports with a direct
        feedthrough path between them."""
        if self._ft_cache is None:
            self._ft_cache = self._compute_feedthrough()
        return self._ft_cache

    def _compute_feedthrough(self) -> Set[Tuple[int, int]]:
        # Propagate from each exported input through subsystem feedthrough and connections.
        consumers: Dict[Tuple[int, int], List[Tuple[int, int]]] = {}
        index = {id(s): k for k, s in enumerate(self.subsystems)}
        for out, inp in self.connections:
            consumers.setdefault((index[id(out.system)], out.index), []).append(
                (index[id(inp.system)], inp.index))
        ft = [s.feedthrough_pairs() for s in self.subsystems]
        out_lookup: Dict[Tuple[int, int], List[int]] = {}
        for j, src in enumerate(self.output_sources):
            out_lookup.setdefault(src, []).append(j)
        pairs = set()
        for e, targets in enumerate(self.exported_input_ports):
            stack = [(index[id(t.system)], t.index) for t in targets]
            seen = set()
            while stack:
                k, i = stack.pop()
                if (k, i) in seen:
                    continue
                seen.add((k, i))
                for (a, b) in ft[k]:
                    if a != i:
                        continue
                    pairs.update((e, j) for j in out_lookup.get((k, b), ()))
                    stack.extend(consumers.get((k, b), ()))
        return pairs
