"""The :class:`LeafSystem`: the base class users subclass to write a block.

Declare ports, state, parameters and events in ``__init__``; implement the callbacks.
Callbacks *return* values (never fill buffers), so one implementation serves numpy
arrays and CasADi symbols alike.

Examples
--------
>>> import numpy as np
>>> from systems import LeafSystem
>>> class Decay(LeafSystem):
...     def __init__(self, rate):
...         super().__init__()
...         self.rate = rate
...         self.declare_continuous_state(1)
...         self.declare_output_port("y", 1, lambda ctx: ctx.continuous_state)
...     def time_derivatives(self, context):
...         return -self.rate * context.continuous_state
>>> sys = Decay(2.0)
>>> ctx = sys.create_default_context()
>>> ctx.set_continuous_state([1.0])
>>> sys.eval_time_derivatives(ctx)
array([-2.])
"""
from __future__ import annotations

import warnings
from typing import Any, Callable, Iterable, List, Optional, Set, Tuple, Union

import casadi as ca
import numpy as np

from solvers import ops
from .context import PREREQUISITES, LeafContext
from .errors import (FeedthroughInferenceWarning, InputNotConnectedError, PortValueError,
                     SystemCallbackError)
from .events import InitializationEvent, PeriodicEvent, PerStepEvent, WitnessFunction
from .ports import InputPort, OutputPort, check_port_name, check_port_size, normalize_vector
from .system import System

__all__ = ["LeafSystem", "FeedthroughInferenceWarning"]


class LeafSystem(System):
    """A block that computes: declares ports, state, parameters and events; implements callbacks.

    Override :meth:`time_derivatives` for continuous state and give each output port a
    ``calc(context)`` callback. Read values from the context: ``context.time``,
    ``context.continuous_state``, ``context.discrete_state``,
    ``context.get_parameter(name)`` and inputs with ``self.get_input_port(name).eval(context)``.
    """

    def __init__(self, name: Optional[str] = None):
        super().__init__(name)
        self._xc0 = np.zeros(0)
        self._num_q = 0
        self._num_v = 0
        self._xd0 = np.zeros(0)
        self.discrete_state_groups: List[slice] = []
        self._xa0: list = []
        self._param_names: List[str] = []
        self._param_lookup: dict = {}
        self._p0: List[np.ndarray] = []
        self._events: list = []
        self._ft_cache: Optional[Set[Tuple[int, int]]] = None
        self._continuous_declared = False

    # ================================================================== ports
    def declare_input_port(self, name: str, size: int, optional: bool = False) -> InputPort:
        """Declare a vector input port of ``size`` elements; an ``optional`` one reads as zeros
        while nothing feeds it and is left out of the CasADi conversion's inputs."""
        owner = f"system '{self.name}'"
        port = InputPort(self, len(self.input_ports), check_port_name(name, owner),
                         check_port_size(size, owner), optional=optional)
        self._add_port(self.input_ports, port, "input")
        return port

    def declare_vector_input_port(self, name: str, size: int) -> InputPort:
        """Alias of :meth:`declare_input_port` (Drake's name)."""
        return self.declare_input_port(name, size)

    def declare_abstract_input_port(self, name: str, model_value: Any) -> InputPort:
        """Declare an input port carrying any Python object (``model_value`` shows the type)."""
        port = InputPort(self, len(self.input_ports), check_port_name(name, f"system '{self.name}'"),
                         None, model_value)
        self._add_port(self.input_ports, port, "input")
        return port

    def declare_output_port(self, name: str, size: int, calc: Callable,
                            feedthrough: Union[None, bool, Iterable] = None,
                            prerequisites: Optional[Iterable[str]] = None) -> OutputPort:
        """Declare a vector output port.

        Parameters
        ----------
        name : str
        size : int
        calc : callable
            ``calc(context)`` returning the value (a sequence, numpy vector or CasADi column).
        feedthrough : None, bool or iterable of input port names/indices
            Which inputs the output depends on directly. ``None`` infers it by evaluating
            ``calc`` on CasADi symbols (with a warning and the conservative answer, every
            input, if that fails).
        prerequisites : iterable of str, optional
            What besides inputs the value depends on, among ``"time"``,
            ``"continuous_state"``, ``"discrete_state"``, ``"abstract_state"``,
            ``"parameters"`` (default: all). Fewer prerequisites mean fewer recomputations.
        """
        owner = f"system '{self.name}'"
        port = OutputPort(self, len(self.output_ports), check_port_name(name, owner),
                          check_port_size(size, owner), calc=self._check_calc(calc, name),
                          feedthrough=feedthrough,
                          prerequisites=self._check_prerequisites(prerequisites, name))
        self._add_port(self.output_ports, port, "output")
        return port

    def declare_vector_output_port(self, name: str, size: int, calc: Callable, **kw) -> OutputPort:
        """Alias of :meth:`declare_output_port` (Drake's name)."""
        return self.declare_output_port(name, size, calc, **kw)

    def declare_abstract_output_port(self, name: str, calc: Callable, model_value: Any = None,
                                     feedthrough: Union[None, bool, Iterable] = None,
                                     prerequisites: Optional[Iterable[str]] = None) -> OutputPort:
        """Declare an output port carrying any Python object computed by ``calc(context)``.

        Feedthrough of abstract outputs cannot be inferred symbolically; ``None`` means
        "every input" (declare it to be precise).
        """
        owner = f"system '{self.name}'"
        port = OutputPort(self, len(self.output_ports), check_port_name(name, owner), None,
                          calc=self._check_calc(calc, name),
                          feedthrough=True if feedthrough is None else feedthrough,
                          prerequisites=self._check_prerequisites(prerequisites, name),
                          model_value=model_value)
        self._add_port(self.output_ports, port, "output")
        return port

    def _check_calc(self, calc, port_name):
        if not callable(calc):
            raise TypeError(f"system '{self.name}' output port '{port_name}': calc must be callable, "
                            f"got {type(calc).__name__}")
        return calc

    def _check_prerequisites(self, prerequisites, port_name):
        if prerequisites is None:
            return frozenset(PREREQUISITES)
        if isinstance(prerequisites, str):
            prerequisites = [prerequisites]
        prerequisites = frozenset(prerequisites)
        bad = prerequisites - set(PREREQUISITES)
        if bad:
            raise ValueError(f"system '{self.name}' output port '{port_name}': unknown prerequisites "
                             f"{sorted(bad)}; expected a subset of {PREREQUISITES}")
        return prerequisites

    def _add_port(self, ports, port, kind):
        if self.parent_diagram is not None:
            raise RuntimeError(f"system '{self.name}' is already part of a diagram; declare ports in __init__")
        if any(p.name == port.name for p in ports):
            raise ValueError(f"system '{self.name}' already has an {kind} port named '{port.name}'")
        ports.append(port)
        self._ft_cache = None

    # ================================================================== state and parameters
    def declare_continuous_state(self, size: int, num_q: int = 0, num_v: int = 0,
                                 initial=None) -> None:
        """Declare the continuous state x = [q; v; z].

        Parameters
        ----------
        size : int
            Total size of x.
        num_q, num_v : int
            The leading ``num_q`` entries are positions q and the next ``num_v`` velocities v
            (used by second-order integrators such as semi-explicit Euler).
        initial : array_like, optional
            Default value (zeros if omitted).
        """
        owner = f"system '{self.name}'"
        if self._continuous_declared:
            raise RuntimeError(f"{owner}: continuous state is declared once")
        size = check_port_size(size, owner)
        if num_q < 0 or num_v < 0 or num_q + num_v > size:
            raise ValueError(f"{owner}: need 0 <= num_q + num_v <= size, got num_q={num_q}, "
                             f"num_v={num_v}, size={size}")
        if num_q != num_v and type(self).map_velocity_to_qdot is LeafSystem.map_velocity_to_qdot:
            raise ValueError(f"{owner}: num_q ({num_q}) differs from num_v ({num_v}); override "
                             f"map_velocity_to_qdot(context, v)")
        x0 = np.zeros(size) if initial is None else self._initial(initial, size, "continuous state")
        self._xc0, self._num_q, self._num_v = x0, int(num_q), int(num_v)
        self._continuous_declared = True

    def declare_discrete_state(self, size_or_initial) -> int:
        """Declare a group of discrete state (an int size, zeros, or an initial vector).

        Groups are concatenated into ``context.discrete_state``; returns the group index
        (``context.get_discrete_state(group)`` reads one group).
        """
        if isinstance(size_or_initial, (int, np.integer)) and not isinstance(size_or_initial, bool):
            init = np.zeros(check_port_size(size_or_initial, f"system '{self.name}'"))
        else:
            init = self._initial(size_or_initial, None, "discrete state")
        start = self._xd0.shape[0]
        self._xd0 = np.concatenate([self._xd0, init])
        self.discrete_state_groups.append(slice(start, start + init.shape[0]))
        return len(self.discrete_state_groups) - 1

    def declare_abstract_state(self, model_value: Any) -> int:
        """Declare one abstract state value (any Python object, deep-copied per context)."""
        self._xa0.append(model_value)
        return len(self._xa0) - 1

    def declare_numeric_parameter(self, name: str, value) -> int:
        """Declare a numeric parameter vector with a default value; returns its index."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"system '{self.name}': parameter name must be a non-empty string")
        if name in self._param_names:
            raise ValueError(f"system '{self.name}' already has a parameter named '{name}'")
        self._param_names.append(name)
        self._param_lookup[name] = len(self._p0)
        self._p0.append(self._initial(value, None, f"parameter '{name}'"))
        return len(self._p0) - 1

    def _initial(self, value, size, what):
        arr = np.atleast_1d(np.asarray(value, dtype=float)).ravel()
        if size is not None and arr.shape[0] != size:
            raise PortValueError(f"system '{self.name}': {what} has size {arr.shape[0]}, expected {size}")
        if not np.all(np.isfinite(arr)):
            raise PortValueError(f"system '{self.name}': {what} must be finite, got {arr}")
        return arr

    def _parameter_index(self, key) -> int:
        if type(key) is str:
            try:
                return self._param_lookup[key]
            except KeyError:
                raise ValueError(f"system '{self.name}' has no parameter named {key!r}; it has "
                                 f"{self._param_names}") from None
        if not 0 <= key < len(self._param_names):
            raise IndexError(f"system '{self.name}' has no parameter {key}; it has {len(self._param_names)}")
        return int(key)

    def default_continuous_state(self) -> np.ndarray:
        """Copy of the declared initial continuous state, shape (n,)."""
        return np.array(self._xc0, dtype=float)

    def default_discrete_state(self) -> np.ndarray:
        """Copy of the declared initial discrete state (all groups concatenated), shape (n,)."""
        return np.array(self._xd0, dtype=float)

    def default_abstract_state(self) -> list:
        """The declared model values of the abstract state (not copies: the context deep-copies
        them)."""
        return list(self._xa0)

    def parameter_names(self) -> List[str]:
        """Names of the numeric parameters, in declaration order."""
        return list(self._param_names)

    def default_parameters(self) -> List[np.ndarray]:
        """Copies of the declared default numeric parameters, one array per parameter."""
        return [np.array(p, dtype=float) for p in self._p0]

    def parameter_index(self, name_or_index) -> int:
        """Index of a numeric parameter given its name (or checked index).

        Raises
        ------
        KeyError, IndexError
            Naming this system, the parameter asked for and the ones it has.
        """
        return self._parameter_index(name_or_index)

    def num_continuous_states(self) -> int:
        return int(self._xc0.shape[0])

    def num_discrete_states(self) -> int:
        return int(self._xd0.shape[0])

    def num_abstract_states(self) -> int:
        return len(self._xa0)

    def num_numeric_parameters(self) -> int:
        return int(sum(p.shape[0] for p in self._p0))

    def continuous_state_partition(self):
        n = self.num_continuous_states()
        q, v = self._num_q, self._num_v
        return np.arange(0, q), np.arange(q, q + v), np.arange(q + v, n)

    # ================================================================== callbacks
    def time_derivatives(self, context: LeafContext):
        """Override: the time derivatives ``xdot`` of the continuous state, size ``nx``.

        Return a float numpy vector of shape ``(nx,)``, or a CasADi column on a symbolic
        context, or -- on a numeric context -- a list or tuple of ``nx`` Python floats, as
        ``ops.from_entries(v1, v2, vdot1, vdot2)`` gives for code written on ``ops.entries``
        (the same code returns a CasADi column when traced). The interpreted Simulator takes
        such floats as they are; :meth:`eval_time_derivatives` and every other caller
        (linearization, batched and scipy integrators) convert any other sequence through
        the port's vector check. A wrong size raises :class:`~systems.errors.PortValueError`
        naming the system, a non-finite entry during a simulation
        :class:`~systems.errors.NonFiniteStateError`, whichever form is returned.
        """
        if self.num_continuous_states():
            raise NotImplementedError(f"system '{self.name}' declares {self.num_continuous_states()} "
                                      f"continuous states but does not override time_derivatives")
        return np.zeros(0)

    def eval_time_derivatives(self, context: LeafContext):
        """Time derivatives of the continuous state, shape (nx,), checked for size."""
        n = self._xc0.shape[0]
        if n == 0:
            return np.zeros(0)
        try:
            xdot = self.time_derivatives(context)
        except (PortValueError, SystemCallbackError, InputNotConnectedError, NotImplementedError):
            raise
        except Exception as exc:
            raise SystemCallbackError(f"system '{self.name}': time_derivatives raised "
                                      f"{type(exc).__name__}: {exc}") from exc
        return normalize_vector(xdot, n, f"time derivatives of system '{self.name}'")

    def map_velocity_to_qdot(self, context: LeafContext, v):
        """qdot = N(q) v; identity by default (override when num_q != num_v)."""
        return v

    # ================================================================== events
    def declare_periodic_discrete_update(self, period: float, offset: float = 0.0,
                                         update: Callable = None) -> PeriodicEvent:
        """Every ``period`` from ``offset``: ``update(context) -> xd_next`` (whole discrete state)."""
        return self._add_event(PeriodicEvent("discrete", period, offset, update, self))

    def declare_periodic_publish(self, period: float, offset: float = 0.0,
                                 publish: Callable = None) -> PeriodicEvent:
        """Every ``period`` from ``offset``: ``publish(context)`` (may not change state)."""
        return self._add_event(PeriodicEvent("publish", period, offset, publish, self))

    def declare_periodic_unrestricted_update(self, period: float, offset: float = 0.0,
                                             update: Callable = None) -> PeriodicEvent:
        """Every ``period`` from ``offset``: ``update(context, state)`` writes any state."""
        return self._add_event(PeriodicEvent("unrestricted", period, offset, update, self))

    def declare_per_step_publish(self, publish: Callable) -> PerStepEvent:
        """After every simulator step (and at initialization): ``publish(context)``."""
        return self._add_event(PerStepEvent("publish", publish, self))

    def declare_per_step_discrete_update(self, update: Callable) -> PerStepEvent:
        """After every simulator step: ``update(context) -> xd_next``."""
        return self._add_event(PerStepEvent("discrete", update, self))

    def declare_per_step_unrestricted_update(self, update: Callable) -> PerStepEvent:
        """After every simulator step: ``update(context, state)``."""
        return self._add_event(PerStepEvent("unrestricted", update, self))

    def declare_initialization_event(self, callback: Callable, kind: str = "unrestricted") -> InitializationEvent:
        """Once, at ``Simulator.initialize()``: a publish, discrete or unrestricted callback."""
        return self._add_event(InitializationEvent(kind, callback, self))

    def declare_initialization_publish(self, publish: Callable) -> InitializationEvent:
        """Once, at initialization: ``publish(context)``."""
        return self.declare_initialization_event(publish, "publish")

    def declare_initialization_discrete_update(self, update: Callable) -> InitializationEvent:
        """Once, at initialization: ``update(context) -> xd_next``."""
        return self.declare_initialization_event(update, "discrete")

    def declare_initialization_unrestricted_update(self, update: Callable) -> InitializationEvent:
        """Once, at initialization: ``update(context, state)``."""
        return self.declare_initialization_event(update, "unrestricted")

    def declare_witness_function(self, name: str, direction: str, guard: Callable,
                                 on_trigger: Optional[Callable] = None) -> WitnessFunction:
        """A zero-crossing guard ``guard(context) -> float`` isolated in time by the simulator.

        ``direction`` is ``"positive_then_nonpositive"``, ``"negative_then_nonnegative"``
        or ``"crosses_zero"``; ``on_trigger(context, state)`` runs at the crossing as an
        unrestricted update.
        """
        return self._add_event(WitnessFunction(name, direction, guard, on_trigger, self))

    def _add_event(self, event):
        self._events.append(event)
        return event

    def events(self) -> list:
        return list(self._events)

    # ================================================================== contexts and feedthrough
    def allocate_context(self) -> LeafContext:
        """A new leaf context holding the declared defaults (use :meth:`create_default_context`)."""
        return LeafContext(self)

    def output_prerequisites(self, index: int):
        """What output port ``index`` depends on: a set of ``"time"``, ``"continuous_state"``,
        ``"discrete_state"``, ``"abstract_state"``, ``"parameters"`` and ``("input", i)``."""
        return self.output_ports[index].prerequisites

    def symbolic_context(self) -> Tuple[LeafContext, dict]:
        """A context whose time, states, parameters and vector inputs are CasADi ``SX`` symbols.

        Returns
        -------
        context : LeafContext
        symbols : dict
            ``"t"`` (scalar), ``"x"``, ``"xd"``, ``"p"`` (columns) and ``"u"`` (a list, one
            column per input port, ``None`` for abstract ports).
        """
        ctx = LeafContext(self)
        t = ca.SX.sym("t")
        x = ca.SX.sym("x", self.num_continuous_states())
        xd = ca.SX.sym("xd", self.num_discrete_states())
        p_parts = [ca.SX.sym(f"p_{n}", v.shape[0])
                   for n, v in zip(self._param_names, self._p0)]
        u, fixed = [], {}
        for port in self.input_ports:
            if port.size is None:
                fixed[port.index] = port.model_value
                u.append(None)
            else:
                s = ca.SX.sym(f"u_{port.name}", port.size)
                fixed[port.index] = s
                u.append(s)
        ctx.load_symbols(t, x, xd, p_parts, fixed)
        p = ca.vertcat(*p_parts) if p_parts else ca.SX(0, 1)
        return ctx, {"t": t, "x": x, "xd": xd, "p": p, "u": u}

    def feedthrough_pairs(self) -> Set[Tuple[int, int]]:
        """``(input index, output index)`` pairs with direct feedthrough (declared or inferred)."""
        if self._ft_cache is None:
            self._ft_cache = self._compute_feedthrough()
        return self._ft_cache

    def _compute_feedthrough(self) -> Set[Tuple[int, int]]:
        pairs: Set[Tuple[int, int]] = set()
        n_in = len(self.input_ports)
        abstract_inputs = [p.index for p in self.input_ports if p.size is None]
        sym = None
        for port in self.output_ports:
            ft = port.feedthrough
            if ft is True:
                pairs.update((i, port.index) for i in range(n_in))
            elif ft is False:
                continue
            elif ft is not None:
                for key in ft:
                    pairs.add((self.get_input_port(key).index, port.index))
            elif len(abstract_inputs) < n_in:
                if sym is None:
                    sym = self.symbolic_context()
                pairs.update(self._infer_feedthrough(port, *sym))
                pairs.update((i, port.index) for i in abstract_inputs)
            else:
                pairs.update((i, port.index) for i in abstract_inputs)
        return pairs

    def _infer_feedthrough(self, port: OutputPort, ctx: LeafContext, symbols: dict):
        try:
            y = ops.vector(port.calc(ctx))
            if not isinstance(y, ca.SX) and not np.all(np.isfinite(ops.to_numpy(y))):
                # e.g. float(SX) silently gives nan: the calc does not work on symbols.
                raise TypeError("the output evaluated on symbols is not finite")
            deps = []
            if isinstance(y, ca.SX):
                for i, s in enumerate(symbols["u"]):
                    if s is not None and s.numel() and ca.depends_on(y, s):
                        deps.append((i, port.index))
            return deps
        except Exception as exc:  # noqa: BLE001 - any failure means "cannot infer"
            warnings.warn(
                f"system '{self.name}' output port '{port.name}': direct feedthrough could not be "
                f"inferred symbolically ({type(exc).__name__}: {exc}); assuming the output depends "
                f"on every input. Pass feedthrough=True/False (or input names) to declare_output_port.",
                FeedthroughInferenceWarning, stacklevel=2)
            return [(i, port.index) for i in range(len(self.input_ports))]
