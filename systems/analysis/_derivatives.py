"""The interpreted Simulator's derivative function ``f(t, x) -> xdot`` (private).

One closure per simulator, built once: it loads ``(t, x)`` through the context's
:class:`~systems._state_loader.StateLoader` (no per-leaf copy, exactly the dependent cached
outputs cleared) and calls each leaf's ``time_derivatives`` directly (what
``Diagram.eval_time_derivatives`` and ``LeafSystem.eval_time_derivatives`` do, without
their per-call bookkeeping), writing the parts into one array. The checks are those of
``LeafSystem.eval_time_derivatives`` (size; an exception becomes
:class:`~systems.errors.SystemCallbackError` naming the system) plus the finiteness of the
result (:class:`~systems.errors.NonFiniteStateError` naming the leaf, the index and the
time).

For a small state the same function comes in source-level forms for the integrators' runs
(all written out once per form of diagram, the same checks in the same order): the list form
``f.as_list`` (its loader's statements inlined), its parts without the finiteness check
(``unchecked``; for one leaf with state ``raw``: the call, then the taking of its value,
which the C loops of :mod:`systems.analysis._native_runs` skip for a tuple of floats), and
its source (``inline``), which the Python runs of :mod:`systems.analysis._unrolled` write
into their own loop.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from ..diagram import Diagram
from ..errors import InputNotConnectedError, PortValueError, SystemCallbackError
from ..leaf_system import LeafSystem
from ..ports import normalize_vector

__all__ = ["derivative_function"]

_PASS = (PortValueError, SystemCallbackError, InputNotConnectedError, NotImplementedError)


def _callback_error(system, exc: Exception) -> SystemCallbackError:
    return SystemCallbackError(f"system '{system.name}': time_derivatives raised "
                               f"{type(exc).__name__}: {exc}")


_LIST_CODE: dict = {}   # the leaves' sizes -> the code of their list form


def _leaf_calls(sizes, take) -> list:
    """The leaves' ``time_derivatives`` called and checked as ``part_of`` does, written out
    (unindented lines over the names ``d_td{i}``, ``d_ctx{i}``, ``d_sys{i}``, ``d_what{i}``
    and the helpers of :func:`_helpers`; temporaries ``d_v``, ``d_tp``, ``d_exc``): each
    leaf's call (:func:`_call`), then its value taken (:func:`_take`)."""
    return [line for i, n in enumerate(sizes) for line in (*_call(i), *_take(i, n, take))]


def _call(i: int) -> list:
    """Leaf ``i``'s call: its value in ``d_v``; an exception of the callback becomes a
    :class:`SystemCallbackError` naming the system (ours pass as they are)."""
    return ["try:", f"    d_v = d_td{i}(d_ctx{i})", "except d_PASS:", "    raise",
            "except Exception as d_exc:", f"    raise d_callback_error(d_sys{i}, d_exc) from d_exc"]


def _take(i: int, n: int, take) -> list:
    """Leaf ``i``'s value ``d_v``, a list or tuple of exactly ``n`` Python floats (entry types
    tested one by one), a float64 array of shape ``(n,)`` or anything ``normalize_vector``
    takes, stored by the statement ``take(i, seq, is_sequence)`` of the expression ``seq``
    (the value itself when ``is_sequence``, else a new list of its floats)."""
    floats = " and ".join([f"type(d_v[{j}]) is float" for j in range(n)] or ["True"])
    return ["d_tp = type(d_v)",
            f"if (d_tp is tuple or d_tp is list) and len(d_v) == {n} and {floats}:",
            f"    {take(i, 'd_v', True)}",
            f"elif d_tp is d_ndarray and d_v.dtype is d_float64 and d_v.ndim == 1 and "
            f"len(d_v) == {n}:",   # shape (n,): no tuples made
            f"    {take(i, 'd_v.tolist()', False)}",
            "else:",
            f"    {take(i, f'd_normalize_vector(d_v, {n}, d_what{i}).tolist()', False)}"]


def _helpers(calls, nfev) -> dict:
    """The names of :func:`_leaf_calls`' lines (and ``d_nfev``)."""
    scope = dict(d_nfev=nfev, d_normalize_vector=normalize_vector,
                 d_ndarray=np.ndarray, d_float64=np.dtype(np.float64), d_PASS=_PASS,
                 d_callback_error=_callback_error)
    for i, (td, leaf, _, leaf_system, what) in enumerate(calls):
        scope.update({f"d_td{i}": td, f"d_ctx{i}": leaf, f"d_sys{i}": leaf_system,
                      f"d_what{i}": what})
    return scope


def _list_function(calls, loader, nfev, check) -> Callable:
    """``f_list(t, x)`` (the small states' list form): the loader's statements
    (:meth:`StateLoader.inline <systems._state_loader.StateLoader.inline>`), then the leaves'
    calls of :func:`_leaf_calls`, written out once per form of the two (no loop, star call or
    list building), the values joined in leaf order and checked for finiteness once.
    ``f_list.unchecked = (g, report)``: ``g`` is ``f_list`` without the finiteness check,
    ``report(t, values)`` raises what it would have for ``values``. For one leaf,
    ``f_list.raw = (call, take)``: ``g(t, x)`` is ``take(call(t, x))``, ``call`` returning the
    leaf's value as it is, ``take`` what ``g`` makes of it (a caller that finds a tuple of
    exactly ``n`` Python floats may keep it: that is what ``take`` returns for it)."""
    sizes = tuple(n for _, _, n, _, _ in calls)
    load, load_key, names = loader.inline("t", "x")
    code = _LIST_CODE.get((sizes, load_key))
    if code is None:
        def take(i, seq, is_sequence):   # the first leaf's values start the list
            if i:
                return f"values += {seq}"
            if is_sequence and len(sizes) == 1:   # one leaf's tuple of floats is kept
                return f"values = {seq} if d_tp is tuple else [*{seq}]"
            return f"values = [*{seq}]" if is_sequence else f"values = {seq}"
        lines = ["def f_list(t, x):", *("    " + line for line in load), "    d_nfev[0] += 1",
                 *("    " + line for line in _leaf_calls(sizes, take))]
        # f_list, then the same without the finiteness test (the runs test the entries)
        unchecked = [line.replace("def f_list", "def f_unchecked") for line in lines]
        lines += ["    if not isfinite(sum(values)):", "        check(t, array(values))",
                  "    return values", *unchecked, "    return values"]
        if len(sizes) == 1:   # f_unchecked in two: the call, the taking of its value
            lines += ["def f_raw(t, x):", *("    " + line for line in load),
                      "    d_nfev[0] += 1", *("    " + line for line in _call(0)),
                      "    return d_v", "def f_take(d_v):",
                      *("    " + line for line in _take(0, sizes[0], take)), "    return values"]
        code = _LIST_CODE[(sizes, load_key)] = compile(
            "\n".join(lines), f"<derivatives of {len(sizes)} leaves>", "exec")
    scope = dict(_helpers(calls, nfev), **names, isfinite=math.isfinite, array=np.array,
                 check=check)
    exec(code, scope)   # noqa: S102 - our own generated source (above)
    f_list, array = scope["f_list"], np.array

    def report(t, values):   # the check of f_list, for values found not finite
        check(t, array(values))
    f_list.unchecked = (scope["f_unchecked"], report)
    if len(sizes) == 1:
        f_list.raw = (scope["f_raw"], scope["f_take"])
    return f_list


class _Inline:
    """The list form's source, for the integrators' written-out runs to inline (see
    :func:`systems.analysis._unrolled.make_run`): ``lines(k, x)`` loads the time ``ts`` and
    the read-only state named ``x``, counts the evaluation and puts the derivative's entries
    in ``k0, k1, ...`` (the checks of ``f_list``, but the finiteness of the sum, which the
    run tests); ``key`` names the form of the source, ``scope`` its objects."""

    __slots__ = ("key", "scope", "_loader", "_starts", "_sizes")

    def __init__(self, calls, loader, nfev):
        self._loader = loader
        self._sizes = tuple(n for _, _, n, _, _ in calls)
        starts, k = [], 0
        for n in self._sizes:
            starts.append(k)
            k += n
        self._starts = tuple(starts)
        _, load_key, names = loader.inline("ts", "x")
        self.key = ("leaves", self._sizes, load_key)
        self.scope = dict(_helpers(calls, nfev), **names)

    def lines(self, k: str, x: str) -> list:
        """The unindented statements (see the class docstring)."""
        starts, sizes = self._starts, self._sizes

        def take(i, seq, is_sequence):
            a = starts[i]
            return ", ".join(f"{k}{j}" for j in range(a, a + sizes[i])) + f", = {seq}"
        load, _, _ = self._loader.inline("ts", x)
        return [*load, "d_nfev[0] += 1", *_leaf_calls(sizes, take)]


def derivative_function(system, root, loader, nfev: list, locator) -> Callable:
    """``f(t, x) -> xdot`` (shapes (nx,)) of ``system`` over its root context ``root``.

    Parameters
    ----------
    system : System
    root : Context
    loader : StateLoader
        ``root.state_loader()``.
    nfev : list of one int
        Counter of evaluations, incremented in place.
    locator : StateLocator
        Names the leaf of a non-finite derivative.

    Notes
    -----
    For a state of at most 32 entries whose leaves are called directly, ``f.as_list`` is
    the same function for the integrators' float paths: it takes ``x`` as an immutable
    float64 array (over a ``bytes`` object, as they make their stages) without checking it,
    and returns the derivative as a list of Python floats (no array made and unpacked again;
    a leaf returning a list or tuple of Python floats, ``ops.from_entries``, is taken as is:
    the only leaf's tuple is returned itself, immutable).

    ``x`` is copied once (read-only) and shared by the leaves as views, unless it is
    already a read-only float64 array owning its data or over a ``bytes`` object (which
    nobody can change: the integrators hand their stages over that way).
    """
    slots = loader.slots
    load = loader.readonly_loader()
    nx = loader.size
    isfinite, array, empty, frombuffer = math.isfinite, np.array, np.empty, np.frombuffer
    ndarray, float64 = np.ndarray, np.dtype(np.float64)
    small = nx <= 32   # summing a short list in Python beats numpy's reduction
    direct = bool(slots) and type(system).eval_time_derivatives in (
        Diagram.eval_time_derivatives, LeafSystem.eval_time_derivatives) and all(
        type(leaf.system).eval_time_derivatives is LeafSystem.eval_time_derivatives
        for leaf, _, _ in slots)

    def own(x):   # a private immutable copy
        if type(x) is ndarray and x.dtype is float64 and x.ndim == 1:
            return frombuffer(x.tobytes())
        x = array(x, dtype=float)
        x.flags.writeable = False
        return x

    def check(t, xdot):
        if not isfinite(sum(xdot.tolist()) if small else xdot.sum()) and \
                not np.all(np.isfinite(xdot)):
            locator.report_derivative(root, t, xdot)

    if not direct:   # (a system's own eval_time_derivatives: its value checked as a port's)
        what = f"time derivatives of system '{system.name}'"

        def f(t, x):
            if type(x) is not ndarray or x.dtype is not float64 or x.flags.writeable or \
                    (x.base is not None and type(x.base) is not bytes):
                x = own(x)
            load(t, x)
            nfev[0] += 1
            xdot = system.eval_time_derivatives(root)
            if type(xdot) is not ndarray or xdot.dtype is not float64 or xdot.shape != (nx,):
                xdot = normalize_vector(xdot, nx, what)
            check(t, xdot)
            return xdot
        return f

    calls = tuple((leaf.system.time_derivatives, leaf, b - a, leaf.system,
                   f"time derivatives of system '{leaf.system.name}'") for leaf, a, b in slots)
    bounds = tuple((a, b) for _, a, b in slots)

    def part_of(td, c, n, leaf_system, what):   # one leaf's derivatives, checked
        try:
            part = td(c)
        except _PASS:
            raise
        except Exception as exc:
            raise _callback_error(leaf_system, exc) from exc
        if type(part) is not ndarray or part.dtype is not float64 or part.shape != (n,):
            part = normalize_vector(part, n, what)
        return part

    def owned(x):   # the integrator's state unless it could change under us
        if type(x) is not ndarray or x.dtype is not float64 or x.flags.writeable or \
                (x.base is not None and type(x.base) is not bytes):
            return own(x)
        return x

    if len(calls) == 1:
        call = calls[0]

        def f(t, x):
            load(t, owned(x))
            nfev[0] += 1
            xdot = part_of(*call)
            if not isfinite(sum(xdot.tolist()) if small else xdot.sum()):
                check(t, xdot)
            return xdot
    elif small:
        def f(t, x):
            return array(f_list(t, owned(x)))
    if small:   # the list form: the leaves' calls written out, their values joined
        f.as_list = f_list = _list_function(calls, loader, nfev, check)
        f_list.inline = _Inline(calls, loader, nfev)
    if small or len(calls) == 1:
        return f

    def f(t, x):
        load(t, owned(x))
        nfev[0] += 1
        xdot = empty(nx)
        for call, (a, b) in zip(calls, bounds):
            xdot[a:b] = part_of(*call)
        if not isfinite(xdot.sum()):
            check(t, xdot)
        return xdot
    return f
