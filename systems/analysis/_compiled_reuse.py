"""Reuse of a diagram's CasADi conversion and compiled functions across compiled simulators
(private part of :mod:`systems.analysis.compiled`).

Building a :class:`~systems.analysis.CompiledSimulator` converts the diagram to CasADi
(:func:`~systems.symbolic.to_casadi`, about 1 ms for a three-block diagram) and builds its
integration functions (a CVODES integrator, a compiled fixed-step loop, the log probe).
A program that builds a simulator per run (Monte Carlo, sweeps, benchmark loops) would pay
that at every construction. :func:`program_for` keeps the conversion and every function
built from it in a small process-wide table (least recently used first out, ``MAX_PROGRAMS``
entries) keyed by the diagram's *structure*:

* per system, in depth-first order: its class, name, state and parameter sizes, discrete
  state groups, ports (name, size, optional flag, the output's calc callback) and, for a
  diagram, the connections (``input_sources``, ``output_sources``) and exported inputs;
* every event (kind, period, offset, callbacks);
* every attribute a leaf adds to the framework's own (``self.k``, ``self.kp``, a
  :class:`~multibody.RigidBodyTree`, ...): these are constants baked into the generated
  expressions. Values are compared by content, recursively: numbers, strings, arrays (bytes),
  containers, objects' ``__dict__``/``__slots__``; functions by their code, defaults and
  closure cells. Objects without inspectable content (C extension objects, CasADi symbols)
  compare by identity, and the table keeps them alive so an identity is never reused; so do
  :class:`~solvers.compiled.CompiledFunction` objects (a tree's numeric functions), whose
  scratch buffers hold the last call's inputs: a tree evaluated between two runs (a forward
  pass's errors) keeps its key.

Numeric parameters, initial states and fixed input values live in the Context and are
symbols of the conversion, so changing them reuses the functions; changing a baked
attribute (``plant.k = 3.0``) or the wiring gives a different key and a new conversion.
Module-level globals read by a callback are not part of the key. Entries are per thread
(the functions hold preallocated buffers). Per-run state (time, state, logs) stays in the
Context, and a simulator's counters in the simulator, so reruns are bitwise identical.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import threading
import types
import warnings
from collections import OrderedDict
from typing import Any, Dict, List, Optional, Tuple

import casadi as ca
import numpy as np

from solvers.compiled import CompiledFunction

from ..diagram import Diagram
from ..errors import CompiledFallbackWarning, SymbolicEvaluationError
from ..leaf_system import LeafSystem
from ..ports import InputPort, OutputPort
from ..symbolic import CasadiSystem, to_casadi
from ..system import System

__all__: list[str] = []  # private module

MAX_PROGRAMS = 32
_ARRAY_INLINE = 4096  # bytes; larger arrays are keyed by their blake2b digest
_FRAMEWORK_KEYS = frozenset(vars(LeafSystem("reuse_probe")))
_SCALARS = (str, int, bytes, type(None))
_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class defined in Python
_lock = threading.Lock()
_programs: "OrderedDict[tuple, Program]" = OrderedDict()
_stats = {"hits": 0, "misses": 0}


class InterpretedFallback:
    """The interpreted Simulator's methods that compiled code does not offer (a monitor, a
    realtime rate, a progress bar, pending events alone).

    Under ``Simulator(..., compiled="auto")`` a call switches the simulator, in place, to the
    interpreted :class:`~systems.analysis.Simulator` on the same context (from its current
    time and state, logs kept) with one :class:`CompiledFallbackWarning`, and then does what
    was asked; under ``compiled=True`` it raises ``TypeError`` naming the method. The
    interpreted simulator's statistics (``get_num_steps_taken``, ``get_statistics``) count
    from the switch.
    """

    _fallback: Optional[tuple] = None  # (interpreted class, its keyword arguments)

    def switch_when_asked(self, interpreted: type, kwargs: dict) -> None:
        """Switch to ``interpreted(system, context, **kwargs)`` when asked for its API (what
        ``compiled="auto"`` sets) instead of raising."""
        self._fallback = (interpreted, dict(kwargs))

    def _to_interpreted(self, what: str) -> None:
        name = getattr(getattr(self, "_system", None), "name", "?")
        if self._fallback is None:
            raise TypeError(f"{type(self).__name__} of '{name}': {what} needs the interpreted "
                            f"Simulator (compiled=False, or compiled='auto' to switch)")
        cls, kwargs = self._fallback
        warnings.warn(f"Simulator(compiled='auto'): '{name}' switches to the interpreted "
                      f"Simulator: {what} needs it", CompiledFallbackWarning, stacklevel=3)
        system, context = self._system, self._context
        self.__dict__.clear()
        self.__class__ = cls
        cls.__init__(self, system, context, **kwargs)

    def set_monitor(self, callback) -> None:
        """See :meth:`systems.analysis.Simulator.set_monitor` (class docstring)."""
        if callback is not None:
            self._to_interpreted("set_monitor")
            self.set_monitor(callback)

    def clear_monitor(self) -> None:
        """No monitor is set on compiled code: nothing to do."""

    def set_target_realtime_rate(self, rate: float) -> None:
        """See :meth:`systems.analysis.Simulator.set_target_realtime_rate`; 0 is a no-op."""
        if rate != 0:
            self._to_interpreted("set_target_realtime_rate")
            self.set_target_realtime_rate(rate)

    def get_target_realtime_rate(self) -> float:
        """0: compiled runs go as fast as they can."""
        return 0.0

    def set_progress(self, enabled) -> None:
        """See :meth:`systems.analysis.Simulator.set_progress`; False and None are no-ops."""
        if enabled:
            self._to_interpreted("set_progress")
            self.set_progress(enabled)

    def advance_pending_events(self):
        """See :meth:`systems.analysis.Simulator.advance_pending_events`."""
        self._to_interpreted("advance_pending_events")
        return self.advance_pending_events()


class Program:
    """A diagram structure's CasADi conversion and the functions built from it.

    Attributes
    ----------
    cs : CasadiSystem
        The conversion of the first diagram of this structure (bind it to another diagram
        of the same structure with :meth:`bind`).
    functions : dict
        Integration functions built so far, by the simulator's key (integrator, tolerances,
        output grid, ...).
    keep : list
        Objects compared by identity in the key, kept alive with the entry.
    error : str or None
        The conversion's :class:`~systems.errors.SymbolicEvaluationError` message when the
        structure does not convert (then ``cs`` is None).
    """

    def __init__(self, cs: Optional[CasadiSystem], keep: list, error: Optional[str] = None) -> None:
        self.cs = cs
        self.error = error
        self.functions: Dict[Any, Any] = {}
        self.keep = keep
        self.probe: Optional[ca.Function] = None
        self.probe_built = False

    def bind(self, system: System) -> CasadiSystem:
        """The conversion with ``system`` (same structure) as its system."""
        if system is self.cs.system:
            return self.cs
        bound = object.__new__(CasadiSystem)
        bound.__dict__.update(self.cs.__dict__)
        bound.system = system
        return bound


class _Fingerprint:
    """One structure key computation (module docstring)."""

    def __init__(self, root: System) -> None:
        self.memo: Dict[int, int] = {}
        self.keep: List[Any] = []
        self.systems: Dict[int, int] = {}
        leaves = root.leaf_systems() if isinstance(root, Diagram) else [root]
        for k, s in enumerate(leaves):
            self.systems[id(s)] = k

    def system(self, s: System) -> tuple:
        leaf = not isinstance(s, Diagram)
        outs = tuple((p.name, p.size, self.value(p.feedthrough), self.value(p.prerequisites),
                      self.value(p.calc) if leaf else None) for p in s.output_ports)
        ins = tuple((p.name, p.size, bool(getattr(p, "optional", False))) for p in s.input_ports)
        head = (type(s), s.name, s.num_continuous_states(), s.num_discrete_states(),
                s.num_numeric_parameters(), ins, outs)
        if isinstance(s, Diagram):
            return head + (tuple(self.system(sub) for sub in s.subsystems),
                           tuple(tuple(src) for src in s.input_sources),
                           tuple(s.output_sources),
                           tuple(tuple(self.port(p) for p in group)
                                 for group in s.exported_input_ports))
        groups = tuple((g.start, g.stop, g.step) for g in getattr(s, "discrete_state_groups", ()))
        own = tuple((k, self.value(v)) for k, v in vars(s).items() if k not in _FRAMEWORK_KEYS)
        # the conversion bakes the abstract state's model values in: they are structure
        abstract = self.value(list(s.default_abstract_state())) if s.num_abstract_states() else ()
        return head + (groups, own, abstract)

    def port(self, p) -> tuple:
        owner = self.systems.get(id(p.system))
        return ("port", type(p).__name__, owner if owner is not None else self.opaque(p.system), p.index)

    def opaque(self, v) -> tuple:
        self.keep.append(v)
        return ("id", id(v))

    def value(self, v) -> Any:  # noqa: C901 - one dispatch on the value's type
        t = type(v)
        if t in _SCALARS:
            return v
        if t is float:
            return v if v == v and v != 0.0 else repr(v)
        if t is bool:
            return ("bool", v)
        if isinstance(v, np.ndarray):   # subclasses (np.matrix) by type and content too
            if v.dtype == object:
                return ("objarray", t, v.shape, tuple(self.value(e) for e in v.ravel()))
            data = v.tobytes()
            if len(data) > _ARRAY_INLINE:
                data = hashlib.blake2b(data, digest_size=20).digest()
            return ("array", t, v.dtype.str, v.shape, data)
        if isinstance(v, np.generic):
            return ("scalar", v.dtype.str, v.tobytes())
        if isinstance(v, System) and id(v) in self.systems:  # a leaf of this diagram
            return ("system", self.systems[id(v)])
        if isinstance(v, (InputPort, OutputPort)):
            return self.port(v)
        if t is ca.DM:
            return ("DM", v.shape, np.asarray(v.full()).tobytes())
        if isinstance(v, type) or t in (types.ModuleType, types.BuiltinFunctionType):
            return ("ref", v)
        if isinstance(v, CompiledFunction):     # a fixed CasADi function; its scratch buffers
            return self.opaque(v)               # (the last call's inputs) are not structure
        ref = self.memo.get(id(v))
        if ref is not None:
            return ("seen", ref)
        self.memo[id(v)] = len(self.memo)
        self.keep.append(v)  # the memo's ids stay valid while the key is computed
        if t in (list, tuple):
            return (t.__name__, tuple(self.value(e) for e in v))
        if t is dict:
            return ("dict", tuple((self.value(k), self.value(e)) for k, e in v.items()))
        if t in (set, frozenset):
            return ("set", frozenset(self.value(e) for e in v))
        if t is slice:
            return ("slice", self.value(v.start), self.value(v.stop), self.value(v.step))
        if t is types.FunctionType:
            cells = tuple(self.value(c.cell_contents) if _cell_full(c) else ("empty",)
                          for c in (v.__closure__ or ()))
            return ("function", v.__code__, self.value(v.__defaults__),
                    self.value(v.__kwdefaults__), cells)
        if t is types.MethodType:
            return ("method", self.value(v.__func__), self.value(v.__self__))
        if t is functools.partial:
            return ("partial", self.value(v.func), self.value(v.args), self.value(v.keywords))
        if _plain_class(t) and (hasattr(v, "__dict__") or hasattr(t, "__slots__")):
            slots = tuple((name, self.value(getattr(v, name)))
                          for cls in t.__mro__ for name in getattr(cls, "__slots__", ())
                          if isinstance(name, str) and hasattr(v, name))
            return ("object", t, self.value(getattr(v, "__dict__", {})), slots)
        return self.opaque(v)


def _plain_class(t: type) -> bool:
    """True when every class of ``t``'s MRO but ``object`` is defined in Python: then an
    instance's content is its ``__dict__`` and slots (a C-level base, like
    ``functools.partial``'s or ``dict``'s, keeps content the key could not see: such objects
    are keyed by identity)."""
    return all(c is object or c.__flags__ & _HEAPTYPE for c in t.__mro__)


def _cell_full(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def structure_key(system: System) -> Tuple[tuple, list]:
    """The structure key of ``system`` (module docstring) and the objects it holds by
    identity."""
    fp = _Fingerprint(system)
    events = tuple(fp.value(vars(ev)) if hasattr(ev, "__dict__") else fp.opaque(ev)
                   for ev in system.events())
    key = (threading.get_ident(), fp.system(system), events)
    hash(key)  # every part is hashable by construction; checked here, where it is caught
    return key, fp.keep


def program_for(system: System, convert: bool = True) -> Program:
    """The :class:`Program` of ``system``'s structure: reused when a diagram of the same
    structure was converted before in this thread, else converted now (``convert=False``:
    an entry without the CasADi conversion, for the whole runs' own functions).

    Raises
    ------
    SymbolicEvaluationError
        From :func:`~systems.symbolic.to_casadi`, naming the block that cannot be converted.
    """
    try:
        key, keep = structure_key(system)
        key = key + (bool(convert),)
    except Exception:  # noqa: BLE001 - an object that cannot be compared (too deep a chain,
        # an attribute raising on access): convert, do not store
        return Program(to_casadi(system) if convert else None, [])  # pragma: no cover
    with _lock:
        prog = _programs.get(key)
        if prog is not None:
            _programs.move_to_end(key)
            _stats["hits"] += 1
    if prog is not None:
        if prog.error is not None:
            raise SymbolicEvaluationError(prog.error)
        return prog
    try:
        prog = Program(to_casadi(system) if convert else None, keep)
    except SymbolicEvaluationError as exc:  # the verdict is kept too: no retry per construction
        prog = Program(None, keep, error=str(exc))
    with _lock:
        _stats["misses"] += 1
        _store(key, prog)
    if prog.error is not None:
        raise SymbolicEvaluationError(prog.error)
    if convert:
        remember_as_built(system, prog)
    return prog


def _store(key: tuple, prog: Program) -> None:
    _programs[key] = prog
    while len(_programs) > MAX_PROGRAMS:
        _programs.popitem(last=False)


def remember_as_built(system: System, prog: Program, convert: bool = True) -> None:
    """Store ``prog`` also under ``system``'s key as it is now: building a simulator may set
    attributes the key reads (a plant creating its compiled step or CasADi functions on
    first use), and the next simulator of the same diagram then finds the entry."""
    try:
        key, keep = structure_key(system)
        key = key + (bool(convert),)
    except Exception:  # noqa: BLE001 - as in program_for: not stored
        return
    prog.keep.extend(keep)
    with _lock:
        if key not in _programs:
            _store(key, prog)


def reuse_statistics() -> Dict[str, int]:
    """``{"hits", "misses", "entries"}`` of the process-wide table (for tests and
    benchmarks)."""
    with _lock:
        return dict(_stats, entries=len(_programs))


def clear_programs() -> None:
    """Forget every stored conversion (the next simulator of any diagram converts again)."""
    with _lock:
        _programs.clear()


@contextlib.contextmanager
def empty_table():
    """Run the block with an empty table (cold starts), restoring the stored entries after."""
    with _lock:
        saved = OrderedDict(_programs)
        _programs.clear()
    try:
        yield
    finally:
        with _lock:
            _programs.clear()
            _programs.update(saved)
