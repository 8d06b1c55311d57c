"""Contexts: the values a system is evaluated at.

A :class:`Context` holds time, continuous state, discrete state, abstract state, numeric
parameters and fixed input values, plus a cache of output values. A system holds no
mutable simulation data; its context does (STYLE.md habit 3). A diagram's context holds
one context per subsystem; the top one is the *root*, which owns time and the cache
invalidation tables.

Values are numpy arrays (read-only views of the stored copies) in numeric use, or CasADi
columns when a context is loaded with symbols (the symbolic conversion does this).

Caching
-------
Each leaf output value is cached. Changing time, a state, a parameter or a fixed input
invalidates exactly the cached outputs whose *prerequisites* include what changed, and
everything downstream of them through direct-feedthrough ports (push invalidation over a
dependency table built once per root context).

Input values
------------
A leaf context resolves, once (again after any input is fixed), each of its inputs to the
leaf output computing it through connections, exported diagram inputs and outputs; reading
the input is then one cache lookup. Fixed values, inputs exported from the root and open
inputs take the general path.

The contexts, their invalidation tables and the integrators' fast loader (built by
:meth:`Context.state_loader`) all read and write the contexts' private storage, which is
why they share this module; the value helpers and the loader's public wrapper live in
``systems._context_values`` and ``systems._state_loader``.
"""
from __future__ import annotations

from typing import Any, Iterable, List, Sequence, Tuple, Union

import numpy as np

from solvers import ops
from ._context_values import concat as _concat
from ._context_values import copy_abstract as _copy_abstract
from ._context_values import store as _store
from ._state_loader import StateLoader
from .errors import InputNotConnectedError, PortValueError, SystemCallbackError
from .ports import normalize_vector

_FLOAT64, _NDARRAY = np.dtype(np.float64), np.ndarray


__all__ = ["Context", "LeafContext", "DiagramContext", "PREREQUISITES"]

#: Prerequisite names an output port may declare (plus its inputs, from feedthrough).
PREREQUISITES = ("time", "continuous_state", "discrete_state", "abstract_state", "parameters")

_INVALID = object()
_PASS = (InputNotConnectedError, PortValueError, SystemCallbackError)   # raised as they are


def _calc_error(leaf: "LeafContext", port, exc: Exception) -> SystemCallbackError:
    return SystemCallbackError(f"output port '{port.name}' of system '{leaf.system.name}': "
                               f"calc raised {type(exc).__name__}: {exc}")

_LOADERS: dict = {}   # a written-out load_readonly's source -> its code


class Context:
    """Base class of leaf and diagram contexts (create them with ``system.create_default_context()``).

    Attributes
    ----------
    system : System
        The system this context belongs to (set once; do not assign it).
    """

    __slots__ = ("system", "_parent", "_root", "_sub_index", "_fixed", "_time", "_tables",
                 "__weakref__")

    def __init__(self, system: "System"):
        self.system = system
        self._parent = None
        self._root = self
        self._sub_index = -1
        self._fixed: dict = {}
        self._time = 0.0
        self._tables = None

    # ------------------------------------------------------------------ identity
    @property
    def is_root(self) -> bool:
        """True for a top-level context (one not held by a diagram context)."""
        return self._parent is None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} of '{self.system.name}' at t={self.time}>"

    # ------------------------------------------------------------------ time
    @property
    def time(self):
        """Current time (shared by every context of a diagram; a float or a CasADi symbol)."""
        return self._root._time

    def get_time(self):
        """Current time (same as :attr:`time`)."""
        return self._root._time

    def set_time(self, t) -> None:
        """Set the time of the whole context tree this context belongs to."""
        root = self._root
        if not ops.is_symbolic(t):
            t = float(t)
            if not np.isfinite(t):
                raise PortValueError(f"context of '{self.system.name}': time must be finite, got {t}")
        root._time = t
        root._invalidate("time")

    # ------------------------------------------------------------------ inputs
    def fix_input(self, index: int, value) -> None:
        """Fix input port ``index`` of this context's system to ``value`` (already checked by
        :meth:`InputPort.fix_value`, the public way to fix a value)."""
        self._fixed[index] = value
        self._root._invalidate_all()

    def _upstream_input(self, index: int):
        """Value feeding input ``index`` from the enclosing diagram (not the fixed value)."""
        parent = self._parent
        port = self.system.input_ports[index]
        if parent is None:
            raise InputNotConnectedError(
                f"input port '{port.name}' of system '{self.system.name}' is not connected, "
                f"exported or fixed; connect it in a DiagramBuilder or call "
                f"get_input_port('{port.name}').fix_value(context, value)")
        kind, a, b = parent.system.input_sources[self._sub_index][index]
        if kind == "out":
            return parent._subs[a].eval_output(b)
        if kind == "in":
            return parent.eval_input(a)
        raise InputNotConnectedError(
            f"input port '{port.name}' of system '{self.system.name}' (in diagram "
            f"'{parent.system.name}') is not connected, exported or fixed")

    def eval_input(self, index: int):
        """Value of input port ``index``: its fixed value, else the value feeding it in the
        enclosing diagram (raises :class:`InputNotConnectedError` when there is none)."""
        value = self._fixed.get(index, _INVALID)
        if value is not _INVALID:
            return value
        return self._upstream_input(index)

    def is_input_fixed(self, index: int) -> bool:
        """Whether a value is fixed for input port ``index`` of this context's system."""
        return index in self._fixed

    def has_input_value(self, index: int) -> bool:
        """Whether input port ``index`` has a value: fixed here, or fed (through any number
        of exported diagram inputs) by an output or a fixed diagram input (Drake's
        ``HasValue``). An input without one raises when evaluated."""
        if index in self._fixed:
            return True
        parent = self._parent
        if parent is None:
            return False
        kind, a, _ = parent.system.input_sources[self._sub_index][index]
        if kind == "out":
            return True
        if kind == "in":
            return parent.has_input_value(a)
        return False

    # ------------------------------------------------------------------ helpers
    def clone(self) -> "Context":
        """A deep copy: a new root context of the same system holding the same values."""
        new = self.system.create_default_context()
        new.set_time(self.time) if not ops.is_symbolic(self.time) else None
        new._copy_values_from(self)
        return new

    def state_loader(self) -> "StateLoader":
        """A fast, checked-once path that loads ``(t, x)`` into this (root) context: the
        integrators' way in (see :class:`StateLoader`)."""
        if self._parent is not None:
            raise ValueError(f"state_loader: the context of '{self.system.name}' is not a root "
                             "context; ask the root (the one create_default_context returned)")
        slots, k = [], 0
        for leaf in self.leaf_contexts():
            m = leaf._xc.shape[0]
            if m:
                slots.append((leaf, k, k + m))
                k += m
        if self._tables is None:
            self._tables = _build_tables(self)
        seen, cells = set(), []
        for key in ["time"] + [(id(leaf), "continuous_state") for leaf, _, _ in slots]:
            for cache, i in self._tables.get(key, ()):
                if (id(cache), i) not in seen:
                    seen.add((id(cache), i))
                    cells.append((cache, i))
        root, invalid, time_cells = self, _INVALID, tuple(self._tables.get("time", ()))
        # load_readonly(t, x) written out (no loops; one leaf holds the whole state: x itself);
        # its body, over the objects of ``names``, is also the loader's inline source
        body = tuple(["ld_root._time = {t}"] + [
            f"ld_leaf{j}._xc = {{x}}" + (f"[{a}:{b}]" if len(slots) > 1 else "")
            for j, (_, a, b) in enumerate(slots)] + [f"ld_cell{j}[{i}] = ld_invalid"
                                                     for j, (_, i) in enumerate(cells)])
        src = "\n".join(["def load_readonly(t, x):", *("    " + line.format(t="t", x="x")
                                                       for line in body)])
        code = _LOADERS.get(src) or _LOADERS.setdefault(src, compile(src, "<loader>", "exec"))
        names = {"ld_root": root, "ld_invalid": invalid,
                 **{f"ld_leaf{j}": leaf for j, (leaf, _, _) in enumerate(slots)},
                 **{f"ld_cell{j}": cache for j, (cache, _) in enumerate(cells)}}
        exec(code, scope := dict(names))   # noqa: S102 - the source above: names, indices

        def set_time(t):
            root._time = t
            for cache, i in time_cells:
                cache[i] = invalid
        return StateLoader(slots, k, scope["load_readonly"], set_time, body, names)

    def _invalidate(self, kind: str, ctx: "Context | None" = None) -> None:
        # Only called on roots: clears what depends on ``kind`` of ``ctx`` (None: time).
        if self._tables is None:
            self._tables = _build_tables(self)
        if isinstance(ctx, DiagramContext):
            for leaf in ctx._leaves:
                self._invalidate(kind, leaf)
            return
        for cache, i in self._tables.get(kind if ctx is None else (id(ctx), kind), ()):
            cache[i] = _INVALID

    # subclasses implement: continuous_state, discrete_state, abstract_state, parameters,
    # set_* methods, eval_output, _copy_values_from, _invalidate_all


class LeafContext(Context):
    """Context of a :class:`~systems.LeafSystem`."""

    __slots__ = ("_xc", "_xd", "_xa", "_p", "_cache", "_inv", "_memory", "_src", "_pidx")

    def __init__(self, system):
        super().__init__(system)
        self._xc = _store(system.default_continuous_state(), system.num_continuous_states(),
                          self._what("continuous state"))
        self._xd = _store(system.default_discrete_state(), system.num_discrete_states(),
                          self._what("discrete state"))
        self._xa = [_copy_abstract(v) for v in system.default_abstract_state()]
        names = system.parameter_names()
        self._p = [_store(v, len(v), self._what(f"parameter '{n}'"))
                   for n, v in zip(names, system.default_parameters())]
        # name or index -> index, for get_parameter (anything else: the system's checked lookup)
        self._pidx = {**{n: i for i, n in enumerate(names)}, **{i: i for i in range(len(names))}}
        self._cache = [_INVALID] * len(system.output_ports)
        self._memory: dict = {}
        self._inv = None  # kind -> list of (cache list, index), set by the root
        self._src = None  # per input: what eval_input reads (_resolve_upstream), or None

    def eval_input(self, index: int):
        """Value of input port ``index``: its fixed value, else the value feeding it in the
        enclosing diagram (raises :class:`InputNotConnectedError` when there is none)."""
        src = self._src
        if src is None:
            src = self._src = [None if i in self._fixed else _resolve_upstream(self, i, True)
                               for i in range(len(self.system.input_ports))]
        s = src[index]
        if s is None:  # fixed, exported from the root or open: the general path
            return Context.eval_input(self, index)
        cache, j, port, leaf, shape = s
        value = cache[j]
        if value is _INVALID:   # leaf.eval_output(j), written in (one call less per read)
            try:
                value = port.calc(leaf)
            except _PASS:
                raise
            except Exception as exc:
                raise _calc_error(leaf, port, exc) from exc
            if shape is not None and (type(value) is not _NDARRAY or value.dtype is not _FLOAT64
                                      or value.shape != shape):   # (size,)
                value = normalize_vector(value, shape[0], leaf._what(f"output port '{port.name}'"))
            cache[j] = value
        return value

    def _what(self, thing: str) -> str:
        return f"{thing} of system '{self.system.name}'"

    # ------------------------------------------------------------------ state access
    @property
    def continuous_state(self):
        """Continuous state x, shape (nx,) (read-only; change it with :meth:`set_continuous_state`)."""
        return self._xc

    def get_continuous_state_vector(self):
        """Continuous state x, shape (nx,)."""
        return self._xc

    def set_continuous_state(self, x) -> None:
        """Set the continuous state (size checked, values must be finite)."""
        self._xc = _store(x, self._xc.shape[0], self._what("continuous state"))
        self._root._invalidate("continuous_state", self)

    @property
    def discrete_state(self):
        """Discrete state xd, shape (nxd,): every declared group, concatenated."""
        return self._xd

    def get_discrete_state(self, group: int | None = None):
        """The whole discrete state, or one declared group of it."""
        if group is None:
            return self._xd
        sl = self.system.discrete_state_groups[group]
        return self._xd[sl]

    def set_discrete_state(self, xd) -> None:
        """Set the discrete state (size checked, values must be finite)."""
        self._xd = _store(xd, self._xd.shape[0], self._what("discrete state"))
        self._root._invalidate("discrete_state", self)

    @property
    def abstract_state(self) -> list:
        """Abstract state values (a list, one entry per declaration)."""
        return self._xa

    def get_abstract_state(self, index: int):
        """Abstract state value ``index``."""
        return self._xa[index]

    def set_abstract_state(self, index: int, value: Any) -> None:
        """Replace abstract state value ``index``."""
        self._xa = list(self._xa)
        self._xa[index] = value
        self._root._invalidate("abstract_state", self)

    @property
    def parameters(self):
        """All numeric parameters concatenated, shape (np,)."""
        return _concat(self._p)

    def get_parameter(self, name_or_index: Union[str, int]):
        """One numeric parameter vector, by name or declaration index."""
        i = self._pidx.get(name_or_index)
        return self._p[self.system.parameter_index(name_or_index) if i is None else i]

    def set_parameter(self, name_or_index: Union[str, int], value) -> None:
        """Set one numeric parameter vector (size checked)."""
        i = self.system.parameter_index(name_or_index)
        name = self.system.parameter_names()[i]
        self._p[i] = _store(value, self._p[i].shape[0], self._what(f"parameter '{name}'"))
        self._root._invalidate("parameters", self)

    def set_parameters(self, p) -> None:
        """Set all numeric parameters from one concatenated vector."""
        sizes = [v.shape[0] for v in self._p]
        names = self.system.parameter_names()
        p = normalize_vector(p, sum(sizes), self._what("parameters"))
        k = 0
        for i, n in enumerate(sizes):
            self._p[i] = _store(p[k:k + n], n, self._what(f"parameter '{names[i]}'"))
            k += n
        self._root._invalidate("parameters", self)

    # ------------------------------------------------------------------ outputs
    def eval_output(self, index: int):
        """Value of output port ``index``, computed by its calc function and cached until a
        prerequisite changes."""
        value = self._cache[index]
        if value is _INVALID:
            port = self.system.output_ports[index]
            try:
                value = port.calc(self)
            except _PASS:
                raise
            except Exception as exc:
                raise _calc_error(self, port, exc) from exc
            size = port.size
            if size is not None and (type(value) is not _NDARRAY or value.dtype is not _FLOAT64
                                     or value.ndim != 1 or len(value) != size):   # (size,)
                value = normalize_vector(value, size, self._what(f"output port '{port.name}'"))
            self._cache[index] = value
        return value

    def load_symbols(self, t, x, xd, parameters: Sequence, inputs: dict) -> None:
        """Fill this (standalone) leaf context with CasADi symbols: time ``t``, continuous
        state ``x``, discrete state ``xd``, one symbol per numeric parameter and
        ``{input index: value}`` fixed inputs. Used to trace a system's callbacks into CasADi
        expressions (:meth:`LeafSystem.symbolic_context`); no checks, no caching."""
        if self._parent is not None:
            raise ValueError(f"load_symbols: the context of '{self.system.name}' belongs to a "
                             "diagram context; use a standalone leaf context")
        self._time = t
        self._xc, self._xd = x, xd
        self._p = list(parameters)
        self._fixed = dict(inputs)
        self._src = None

    def get_memory(self) -> dict:
        """This context's per-run memory of its system: a dict the system may keep between
        evaluations (solver warm starts, memoized solves, scratch contexts of sub-blocks).

        It belongs to the context, not to the system, so two contexts of one diagram run side
        by side without sharing it; it is not state (the Simulator neither integrates nor
        logs it) and holds only hints and caches that never change a result's meaning. A
        clone, and a context made by ``create_default_context``, start with an empty memory,
        so reruns from copies of one initial context are bitwise identical."""
        return self._memory

    def cached_output_values(self) -> List[Tuple[int, Any]]:
        """``(output index, value)`` of every output whose value is cached (for diagnostics,
        e.g. naming the output that went non-finite)."""
        return [(j, v) for j, v in enumerate(self._cache) if v is not _INVALID]

    # ------------------------------------------------------------------ invalidation
    def leaf_contexts(self) -> List["LeafContext"]:
        """``[self]``: a leaf context is its own only leaf."""
        return [self]

    def _invalidate_all(self) -> None:
        self._cache[:] = [_INVALID] * len(self._cache)
        self._src = None

    def _copy_values_from(self, other: "LeafContext") -> None:
        self._xc = other._xc
        self._xd = other._xd
        self._xa = [_copy_abstract(v) for v in other._xa]
        self._p = list(other._p)
        self._fixed = dict(other._fixed)
        self._invalidate_all()


class DiagramContext(Context):
    """Context of a :class:`~systems.Diagram`: one subcontext per subsystem."""

    __slots__ = ("_subs", "_leaves")

    def __init__(self, system, subcontexts: List[Context]):
        super().__init__(system)
        self._subs = subcontexts
        for k, sub in enumerate(subcontexts):
            sub._parent = self
            sub._sub_index = k
        self._leaves = [leaf for sub in subcontexts for leaf in sub.leaf_contexts()]
        for leaf in self._leaves:
            leaf._src = None

    def set_root(self, root: Context) -> None:
        """Make ``root`` the root of this context and of all its subcontexts (done once by
        ``create_default_context``)."""
        self._root = root
        for sub in self._subs:
            if isinstance(sub, DiagramContext):
                sub.set_root(root)
            else:
                sub._root = root

    def leaf_contexts(self) -> List[LeafContext]:
        """Contexts of every leaf system, in the order of ``system.leaf_systems()`` (the
        context's own list: do not modify it)."""
        return self._leaves

    @property
    def subcontexts(self) -> List[Context]:
        """The subsystems' contexts, in the diagram's subsystem order (do not modify)."""
        return self._subs

    def get_subsystem_context(self, system: "System") -> Context:
        """The context of ``system`` (a subsystem at any depth) inside this context."""
        return self.system.get_subsystem_context(system, self)

    # ------------------------------------------------------------------ state access
    @property
    def continuous_state(self):
        """All leaves' continuous states concatenated, shape (nx,)."""
        return _concat([leaf._xc for leaf in self._leaves])

    def get_continuous_state_vector(self):
        """All leaves' continuous states concatenated, shape (nx,)."""
        return self.continuous_state

    def set_continuous_state(self, x) -> None:
        """Set every leaf's continuous state from one concatenated vector."""
        self._scatter(x, "_xc", "continuous state", self.system.num_continuous_states())
        self._root._invalidate("continuous_state", self)

    @property
    def discrete_state(self):
        """All leaves' discrete states concatenated, shape (nxd,)."""
        return _concat([leaf._xd for leaf in self._leaves])

    def set_discrete_state(self, xd) -> None:
        """Set every leaf's discrete state from one concatenated vector."""
        self._scatter(xd, "_xd", "discrete state", self.system.num_discrete_states())
        self._root._invalidate("discrete_state", self)

    def _scatter(self, value, attr: str, what: str, n: int) -> None:
        """Split a concatenated state vector into the leaves' ``attr`` slots."""
        value = normalize_vector(value, n, f"{what} of diagram '{self.system.name}'")
        k = 0
        for leaf in self._leaves:
            m = getattr(leaf, attr).shape[0]
            if m:
                setattr(leaf, attr, _store(value[k:k + m], m, leaf._what(what)))
                k += m

    @property
    def abstract_state(self) -> list:
        """All leaves' abstract states, concatenated into one list."""
        return [v for leaf in self._leaves for v in leaf._xa]

    @property
    def parameters(self):
        """All leaves' numeric parameters concatenated, shape (np,)."""
        return _concat([leaf.parameters for leaf in self._leaves])

    def set_parameters(self, p) -> None:
        """Set every leaf's numeric parameters from one concatenated vector."""
        n = self.system.num_numeric_parameters()
        p = normalize_vector(p, n, f"parameters of diagram '{self.system.name}'")
        k = 0
        for leaf in self._leaves:
            m = sum(v.shape[0] for v in leaf._p)
            if m:
                leaf.set_parameters(p[k:k + m])
                k += m

    # ------------------------------------------------------------------ outputs
    def eval_output(self, index: int):
        """Value of exported output port ``index`` (evaluated in the subsystem feeding it)."""
        sub_index, out_index = self.system.output_sources[index]
        return self._subs[sub_index].eval_output(out_index)

    # ------------------------------------------------------------------ invalidation
    def _invalidate_all(self) -> None:
        for leaf in self._leaves:
            leaf._cache[:] = [_INVALID] * len(leaf._cache)
            leaf._src = None

    def _copy_values_from(self, other: "DiagramContext") -> None:
        for mine, theirs in zip(self._subs, other._subs):
            mine._copy_values_from(theirs)
        self._fixed = dict(other._fixed)
        self._invalidate_all()


def _build_tables(root: Context) -> dict:
    """Invalidation tables of a root context.

    Keys: ``"time"`` and ``(id(leaf_context), prerequisite)``; values: the cache cells
    (leaf cache list, output index) to clear, downstream closure included.
    """
    leaves = root.leaf_contexts()
    # Output nodes (leaf, j) and downstream edges through direct feedthrough.
    downstream: dict = {}
    for leaf in leaves:
        system = leaf.system
        pairs = system.feedthrough_pairs()
        for i, port in enumerate(system.input_ports):
            src = _resolve_upstream(leaf, i)
            if src is None:
                continue
            src = (id(src[3]), src[1])
            for (ii, k) in pairs:
                if ii == i:
                    downstream.setdefault(src, []).append((id(leaf), k))
    by_id = {id(leaf): leaf for leaf in leaves}

    def closure(start: Iterable):
        seen = set()
        stack = list(start)
        while stack:
            node = stack.pop()
            if node in seen:
                continue
            seen.add(node)
            stack.extend(downstream.get(node, ()))
        return [(by_id[lid]._cache, j) for (lid, j) in seen]

    tables: dict = {}
    time_nodes = []
    for leaf in leaves:
        system = leaf.system
        for prereq in PREREQUISITES:
            nodes = [(id(leaf), j) for j, port in enumerate(system.output_ports)
                     if prereq in system.output_prerequisites(j)]
            if prereq == "time":
                time_nodes.extend(nodes)
            else:
                tables[(id(leaf), prereq)] = closure(nodes)
    tables["time"] = closure(time_nodes)
    return tables


def _resolve_upstream(leaf: LeafContext, index: int, stop_at_fixed: bool = False):
    """The (cache list, output index, output port, leaf context, ``(size,)`` or None) of the
    leaf output feeding a leaf input, or None (root input / open; with ``stop_at_fixed``, also an
    input exported from a diagram input fixed on the way)."""
    ctx: Context = leaf
    i = index
    while True:
        parent = ctx._parent
        if parent is None:
            return None
        kind, a, b = parent.system.input_sources[ctx._sub_index][i]
        if kind == "out":
            sub = parent._subs[a]
            j = b
            while isinstance(sub, DiagramContext):
                sa, sb = sub.system.output_sources[j]
                sub, j = sub._subs[sa], sb
            port = sub.system.output_ports[j]
            return (sub._cache, j, port, sub, None if port.size is None else (port.size,))
        if kind == "in":
            ctx, i = parent, a
            if stop_at_fixed and i in ctx._fixed:
                return None
            continue
        return None
