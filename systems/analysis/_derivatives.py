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


def _list_function(calls, scope: dict) -> Callable:
    """``f_list(t, x)`` (the small states' list form): load, then each leaf's
    ``time_derivatives`` called and checked as ``part_of`` does, written out once per tuple
    of leaf sizes (no loop, star call or list building), the values joined in leaf order and
    checked for finiteness once. A leaf's list or tuple of exactly ``n`` Python floats is
    taken as it is (its entries' types tested one by one, written out); anything else goes
    through ``normalize_vector`` (the array path: the same conversion and errors).
    ``f_list.unchecked = (g, report)``: ``g`` is ``f_list`` without the finiteness check,
    ``report(t, values)`` raises what it would have for ``values``."""
    sizes = tuple(n for _, _, n, _, _ in calls)
    code = _LIST_CODE.get(sizes)
    if code is None:
        lines = ["def f_list(t, x):", "    load(t, x)", "    nfev[0] += 1"]
        for i, n in enumerate(sizes):
            floats = " and ".join([f"type(p[{j}]) is float" for j in range(n)] or ["True"])
            take, join = ("values = [*p]", "values = ") if i == 0 else ("values += p",
                                                                       "values += ")
            lines += ["    try:", f"        p = td{i}(c{i})", "    except PASS:", "        raise",
                      "    except Exception as exc:",
                      f"        raise callback_error(s{i}, exc) from exc",
                      "    tp = type(p)",
                      f"    if (tp is tuple or tp is list) and len(p) == {n} and {floats}:",
                      f"        {take}",
                      f"    elif tp is ndarray and p.dtype is float64 and p.ndim == 1 and "
                      f"len(p) == {n}:",   # shape (n,): no tuples made
                      f"        {join}p.tolist()",
                      "    else:",
                      f"        {join}normalize_vector(p, {n}, what{i}).tolist()"]
        # f_list, then the same without the finiteness test (the runs test the entries)
        unchecked = [line.replace("def f_list", "def f_unchecked") for line in lines]
        lines += ["    if not isfinite(sum(values)):", "        check(t, array(values))",
                  "    return values", *unchecked, "    return values"]
        code = _LIST_CODE[sizes] = compile("\n".join(lines), f"<derivatives of {len(sizes)} "
                                           f"leaves>", "exec")
    for i, (td, leaf, n, leaf_system, what) in enumerate(calls):
        scope.update({f"td{i}": td, f"c{i}": leaf, f"n{i}": n,
                      f"s{i}": leaf_system, f"what{i}": what})
    scope.update(PASS=_PASS, callback_error=_callback_error)
    exec(code, scope)   # noqa: S102 - our own generated source (above)
    f_list, check, array = scope["f_list"], scope["check"], scope["array"]

    def report(t, values):   # the check of f_list, for values found not finite
        check(t, array(values))
    f_list.unchecked = (scope["f_unchecked"], report)
    return f_list


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
    a leaf returning a list or tuple of Python floats, ``ops.from_entries``, is taken as is).

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

    if not direct:
        def f(t, x):
            if type(x) is not ndarray or x.dtype is not float64 or x.flags.writeable or \
                    (x.base is not None and type(x.base) is not bytes):
                x = own(x)
            load(t, x)
            nfev[0] += 1
            xdot = system.eval_time_derivatives(root)
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
        f.as_list = f_list = _list_function(calls, dict(
            load=load, nfev=nfev, normalize_vector=normalize_vector, ndarray=ndarray,
            float64=float64, isfinite=isfinite, array=array, check=check))
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
