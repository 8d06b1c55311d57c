"""The :class:`DiagramBuilder`: add systems, connect ports, export ports, build a Diagram.

Examples
--------
>>> from systems import DiagramBuilder
>>> from systems.primitives import ConstantVectorSource, Gain
>>> builder = DiagramBuilder()
>>> src = builder.add_system(ConstantVectorSource([1.0, 2.0]))
>>> gain = builder.add_system(Gain(3.0, size=2))
>>> builder.connect(src.get_output_port(), gain.get_input_port())
>>> y = builder.export_output(gain.get_output_port(), "y")
>>> diagram = builder.build()
>>> diagram.get_output_port("y").eval(diagram.create_default_context())
array([3., 6.])
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple, Union

from .diagram import Diagram
from .errors import AlgebraicLoopError, DiagramBuildError, PortSizeError
from .ports import InputPort, OutputPort
from .system import System

__all__ = ["DiagramBuilder"]


def _not_a_system(obj) -> str:
    """The message for ``add_system(obj)`` with ``obj`` not a System: what was given, what is
    expected and, where the object holds a block (``obj.tree``, ``obj.system``) or is a System
    class rather than an instance, what to pass instead."""
    kind = type(obj)
    msg = (f"DiagramBuilder.add_system expects a System (a LeafSystem block or a Diagram), got "
           f"{kind.__module__}.{kind.__qualname__} {obj!r:.60}")
    if isinstance(obj, type) and issubclass(obj, System):
        return msg + f"; that is the class: pass an instance, {obj.__name__}(...)"
    for attr in ("tree", "system", "plant"):
        inner = getattr(obj, attr, None)
        if isinstance(inner, System):
            return msg + (f"; its .{attr} ({type(inner).__name__} '{inner.name}') is a block: "
                          f"add_system(obj.{attr})")
    return msg


class DiagramBuilder:
    """Collects systems and connections, then :meth:`build` makes a :class:`~systems.Diagram`.

    ``build()`` refuses size mismatches, connections to systems not added, inputs
    connected twice, duplicate system names and algebraic loops (reported as the cycle
    of ``system.port`` names). Inputs left unconnected are allowed; evaluating one that
    is not fixed in the context raises :class:`~systems.errors.InputNotConnectedError`.
    """

    def __init__(self, name: Optional[str] = None):
        self._name = name
        self._systems: List[System] = []
        self._names: Dict[str, System] = {}
        self._connections: List[Tuple[OutputPort, InputPort]] = []
        self._input_owner: Dict[Tuple[int, int], str] = {}
        self.exported_input_ports: List[Tuple[str, List[InputPort]]] = []
        self._exported_outputs: List[Tuple[str, OutputPort]] = []
        self._built = False

    # ------------------------------------------------------------------ systems
    def add_system(self, system: System) -> System:
        """Add ``system`` (returned, for chaining). Default names are made unique (``gain_1``)."""
        self._check_open()
        if not isinstance(system, System):
            raise TypeError(_not_a_system(system))
        if system.in_builder is self:
            raise DiagramBuildError(f"system '{system.name}' is already in this builder "
                                    f"({self._label()}): a system can be added to one diagram "
                                    "only, once (a second copy needs a new System object)")
        if system.parent_diagram is not None or system.in_builder is not None:
            owner = f"diagram '{system.parent_diagram.name}'" if system.parent_diagram \
                else f"another builder ({system.in_builder._label()})"
            raise DiagramBuildError(f"system '{system.name}' is already part of {owner}; "
                                    f"a system can be added to one diagram only")
        system.in_builder = self  # first: a block that cannot be frozen is not recorded
        if system.name in self._names:
            if not system.name_is_default:
                system.in_builder = None
                raise DiagramBuildError(f"duplicate system name '{system.name}': names in a "
                                        f"diagram must be unique (set system.name)")
            k = 1
            while f"{system.name}_{k}" in self._names:
                k += 1
            system._name = f"{system.name}_{k}"
        self._systems.append(system)
        self._names[system.name] = system
        return system

    def _label(self) -> str:
        """How messages name this builder: ``DiagramBuilder 'name'`` (or unnamed)."""
        return f"DiagramBuilder '{self._name}'" if self._name else "an unnamed DiagramBuilder"

    def add_named_system(self, name: str, system: System) -> System:
        """Set ``system.name`` and add it."""
        system.name = name
        return self.add_system(system)

    def rename_system(self, system: System, new: str) -> None:
        """Rename ``system`` inside this builder (called by the ``System.name`` setter; refuses a
        name another system of the builder has)."""
        if new in self._names and self._names[new] is not system:
            raise DiagramBuildError(f"duplicate system name '{new}': names in a diagram must be unique")
        self._names.pop(system.name, None)
        self._names[new] = system

    def systems(self) -> List[System]:
        """The systems added so far."""
        return list(self._systems)

    def get_system_by_name(self, name: str) -> System:
        """An added system by name."""
        try:
            return self._names[name]
        except KeyError:
            raise ValueError(f"builder has no system named {name!r}; it has {list(self._names)}") from None

    # ------------------------------------------------------------------ wiring
    def connect(self, source: Union[OutputPort, System], dest: Union[InputPort, System]) -> None:
        """Connect an output port to an input port (a System stands for its only port)."""
        self._check_open()
        out = source.get_output_port() if isinstance(source, System) else source
        inp = dest.get_input_port() if isinstance(dest, System) else dest
        if not isinstance(out, OutputPort) or not isinstance(inp, InputPort):
            raise TypeError(f"connect(output_port, input_port) got {out!r} and {inp!r}")
        self._check_added(out.system, out)
        self._check_added(inp.system, inp)
        if out.is_abstract != inp.is_abstract:
            kinds = lambda p: "abstract" if p.is_abstract else f"vector (size {p.size})"  # noqa: E731
            raise PortSizeError(f"cannot connect output '{out.full_name()}' ({kinds(out)}) to input "
                                f"'{inp.full_name()}' ({kinds(inp)})")
        if out.size != inp.size:
            raise PortSizeError(f"input port '{inp.name}' of '{inp.system.name}' has size {inp.size} "
                                f"but '{out.full_name()}' has size {out.size}")
        self._claim_input(inp, f"connected to '{out.full_name()}'")
        self._connections.append((out, inp))

    def export_input(self, input_port: InputPort, name: Optional[str] = None) -> InputPort:
        """Make ``input_port`` an input of the diagram; reusing ``name`` feeds several ports.

        Returns the subsystem input port (the diagram port exists once built).
        """
        self._check_open()
        self._check_added(input_port.system, input_port)
        name = name or f"{input_port.system.name}_{input_port.name}"
        self._claim_input(input_port, f"exported as diagram input '{name}'")
        for ename, targets in self.exported_input_ports:
            if ename == name:
                first = targets[0]
                if first.size != input_port.size:
                    raise PortSizeError(f"exported input '{name}' feeds '{first.full_name()}' (size "
                                        f"{first.size}) and cannot also feed '{input_port.full_name()}' "
                                        f"(size {input_port.size})")
                targets.append(input_port)
                return input_port
        self.exported_input_ports.append((name, [input_port]))
        return input_port

    def export_output(self, output_port: OutputPort, name: Optional[str] = None) -> OutputPort:
        """Make ``output_port`` an output of the diagram named ``name``."""
        self._check_open()
        self._check_added(output_port.system, output_port)
        name = name or f"{output_port.system.name}_{output_port.name}"
        if any(n == name for n, _ in self._exported_outputs):
            raise DiagramBuildError(f"the diagram already has an output named '{name}'")
        self._exported_outputs.append((name, output_port))
        return output_port

    def disconnect(self, source: Union[OutputPort, System], dest: Union[InputPort, System]) -> None:
        """Remove the connection ``source -> dest`` made by :meth:`connect` (Drake's
        ``DiagramBuilder::Disconnect``); the input is free to be connected again.

        Raises
        ------
        DiagramBuildError
            When the two ports are not connected to each other (the message says what the
            input is connected to, if anything), or after :meth:`build`.
        """
        self._check_open()
        out = source.get_output_port() if isinstance(source, System) else source
        inp = dest.get_input_port() if isinstance(dest, System) else dest
        if not isinstance(out, OutputPort) or not isinstance(inp, InputPort):
            raise TypeError(f"disconnect(output_port, input_port) got {out!r} and {inp!r}")
        for k, (o, i) in enumerate(self._connections):
            if o is out and i is inp:
                del self._connections[k]
                del self._input_owner[(id(inp.system), inp.index)]
                return
        now = self._input_owner.get((id(inp.system), inp.index), "not connected")
        raise DiagramBuildError(f"cannot disconnect '{out.full_name()}' from input "
                                f"'{inp.full_name()}': they are not connected (the input is {now})")

    def remove_system(self, system: System) -> None:
        """Remove ``system`` with its connections and exported ports (Drake's
        ``DiagramBuilder::RemoveSystem``); an exported input that fed only this system is
        removed, one that also feeds others keeps them. The system may then be added to
        another builder.

        Raises
        ------
        DiagramBuildError
            When ``system`` was not added to this builder, or after :meth:`build`.
        """
        self._check_open()
        if not isinstance(system, System) or system.in_builder is not self:
            name = system.name if isinstance(system, System) else repr(system)
            raise DiagramBuildError(f"cannot remove system '{name}': it was not added to this "
                                    f"builder (it has {list(self._names)})")
        kept = [(o, i) for o, i in self._connections
                if o.system is not system and i.system is not system]
        # inputs fed by the removed system become free again, as do its own inputs
        freed = {(id(i.system), i.index) for o, i in self._connections if o.system is system}
        self._connections = kept
        self._input_owner = {k: v for k, v in self._input_owner.items()
                             if k[0] != id(system) and k not in freed}
        exported = []
        for name, targets in self.exported_input_ports:
            keep = [t for t in targets if t.system is not system]
            if keep:
                exported.append((name, keep))
        self.exported_input_ports = exported
        self._exported_outputs = [(n, o) for n, o in self._exported_outputs if o.system is not system]
        self._systems = [s for s in self._systems if s is not system]
        del self._names[system.name]
        system.in_builder = None

    def _claim_input(self, inp: InputPort, how: str) -> None:
        key = (id(inp.system), inp.index)
        if key in self._input_owner:
            raise DiagramBuildError(f"input port '{inp.full_name()}' is already "
                                    f"{self._input_owner[key]}; it cannot also be {how}")
        self._input_owner[key] = how

    def _check_added(self, system: System, port) -> None:
        if system.in_builder is not self:
            raise DiagramBuildError(f"port '{port.full_name()}' belongs to system '{system.name}', "
                                    f"which was not added to this builder (call add_system first)")

    def _check_open(self) -> None:
        if self._built:
            raise DiagramBuildError("this DiagramBuilder has already built its diagram; "
                                    "use a new builder")

    # ------------------------------------------------------------------ build
    def _find_algebraic_loop(self) -> Optional[List[str]]:
        import networkx as nx  # here, not at the top: `import systems` stays light
        g = nx.DiGraph()
        for s in self._systems:
            for (i, j) in s.feedthrough_pairs():
                g.add_edge(("in", id(s), i), ("out", id(s), j))
        for out, inp in self._connections:
            g.add_edge(("out", id(out.system), out.index), ("in", id(inp.system), inp.index))
        try:
            cycle = nx.find_cycle(g)
        except nx.NetworkXNoCycle:
            return None
        by_id = {id(s): s for s in self._systems}
        names = []
        for (kind, sid, k), _ in cycle:
            s = by_id[sid]
            port = s.input_ports[k] if kind == "in" else s.output_ports[k]
            names.append(port.full_name())
        names.append(names[0])
        return names

    def build(self, name: Optional[str] = None) -> Diagram:
        """Check the wiring and return the :class:`~systems.Diagram`.

        Raises
        ------
        AlgebraicLoopError
            When direct-feedthrough ports form a cycle (message lists it).
        """
        self._check_open()
        if not self._systems:
            raise DiagramBuildError(f"DiagramBuilder '{self._name}': cannot build an empty "
                                    "diagram; add systems first")
        loop = self._find_algebraic_loop()
        if loop is not None:
            raise AlgebraicLoopError("algebraic loop through direct-feedthrough ports: "
                                     + " -> ".join(loop)
                                     + "; break it with a system that has state (e.g. an Integrator "
                                     "or a ZeroOrderHold), or declare feedthrough=False where true")
        self._built = True
        return Diagram(name or self._name, self._systems, self._connections,
                       self.exported_input_ports, self._exported_outputs)
