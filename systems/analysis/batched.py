"""A diagram's time derivatives on N states at once.

:class:`BatchedDynamics` converts a system once with :func:`systems.symbolic.to_casadi`
(``xdot = f(t, x, xd, u, p)``) and evaluates ``f`` on a batch of continuous states
``X`` of shape ``(N, nx)`` (and optionally inputs ``U`` of shape ``(N, nu)``) through CasADi's
``Function.map``, with time, discrete state, parameters and (by default) inputs taken from
one context. The arrays go to CasADi's ``FunctionBuffer`` without copies (a C-ordered
``(N, nx)`` array is the column-major ``(nx, N)`` argument of the map); large batches can be
split over threads. Evaluation runs on CasADi's SX virtual machine (the tree's own batched
methods, ``RigidBodyTree.forward_dynamics(Q, V, TAU)``, run on compiled C).

Uses: vector fields on a grid (phase portraits, region-of-attraction checks), sampling-based
planners, population-based optimizers.

References
----------
CasADi ``Function.map`` (Andersson et al., "CasADi: a software framework for nonlinear
optimization and optimal control", Math. Prog. Comp. 11, 2019, section 4.6).
"""
from __future__ import annotations

import threading
from typing import Any, Optional

import numpy as np

from ..errors import BatchShapeError
from ..symbolic import to_casadi
from ..system import System

__all__ = ["BatchedDynamics", "BatchShapeError", "batched_time_derivatives"]


class BatchedDynamics:
    """``xdot = f(t, x_i, xd, u_i, p)`` for i = 1..N in one call.

    Parameters
    ----------
    system : System
        A diagram (or leaf system) whose blocks are symbolic-capable
        (:func:`systems.symbolic.to_casadi`; a block that is not raises
        ``SymbolicEvaluationError`` naming it).
    threads : int
        Threads for batches of at least ``thread_min`` states (CasADi ``map(N, "thread",
        threads)``); 1 evaluates serially.
    thread_min : int
        Smallest batch split over threads.

    Attributes
    ----------
    casadi_system : CasadiSystem
        The conversion (sizes ``nx``, ``nu``, ``nxd``, ``np``; functions ``f``, ``g``).
    """

    def __init__(self, system: System, *, threads: int = 1, thread_min: int = 512) -> None:
        if not isinstance(system, System):
            raise TypeError(f"BatchedDynamics expects a System, got {type(system).__name__}")
        self.system = system
        self.casadi_system = to_casadi(system)
        self.threads = max(1, int(threads))
        self.thread_min = max(1, int(thread_min))
        self._maps: dict = {}
        self._lock = threading.Lock()

    def _batch(self, name: str, arr: Any, size: int, n: Optional[int]) -> np.ndarray:
        try:
            a = np.asarray(arr, dtype=float)
        except (TypeError, ValueError):
            raise TypeError(f"system '{self.system.name}': {name} must be numeric, got "
                            f"{type(arr).__name__}") from None
        if a.ndim == 1 and size == 1 and n is None:
            a = a.reshape(-1, 1)
        if a.ndim != 2 or a.shape[1] != size or (n is not None and a.shape[0] != n) \
                or a.shape[0] == 0:
            want = f"({n if n is not None else 'N'}, {size})"
            raise BatchShapeError(f"system '{self.system.name}': {name} has shape {a.shape}, "
                                  f"expected {want} with N >= 1 ({name[0]} has {size} entries)")
        if not np.isfinite(a).all():
            row = int(np.nonzero(~np.isfinite(a).all(axis=1))[0][0])
            raise ValueError(f"system '{self.system.name}': {name} contains NaN or inf "
                             f"(batch row {row})")
        return np.ascontiguousarray(a)

    def _buffer(self, n: int, batched_u: bool):
        threads = self.threads if n >= self.thread_min else 1
        key = (n, batched_u, threads)
        m = self._maps.get(key)
        if m is None:
            f = self.casadi_system.f  # f(t, x, xd, u, p); shared inputs are not repeated
            shared = [0, 2, 4] if batched_u else [0, 2, 3, 4]
            mode, opts = ("thread", {"max_num_threads": threads}) if threads > 1 else \
                ("serial", {})
            fm = f.map(f"{f.name()}_batch{n}", mode, n, shared, [], opts)
            m = self._maps[key] = fm.buffer()
            if len(self._maps) > 16:
                del self._maps[next(iter(self._maps))]
        return m

    def time_derivatives(self, context: Any, X: Any, U: Any = None) -> np.ndarray:
        """Time derivatives at N states.

        Parameters
        ----------
        context : Context
            A context of the system: time, discrete state, parameters and (when ``U`` is
            None) the fixed input values are read from it; it is not modified.
        X : (N, nx) array_like
            Continuous states, one per row.
        U : (N, nu) array_like, optional
            Inputs, one row per state (the converted input ports in port order).

        Returns
        -------
        (N, nx) ndarray
            Row i is ``f(t, X[i], xd, U[i], p)``, equal to the system's
            ``time_derivatives`` evaluated at that state.
        """
        cs = self.casadi_system
        t, _, xd, u, p = cs.from_context(context)
        Xb = self._batch("X", X, cs.nx, None)
        n = Xb.shape[0]
        Ub = None if U is None else self._batch("U", U, cs.nu, n)
        args = [np.array([t]), Xb, np.ascontiguousarray(xd, dtype=float),
                Ub if Ub is not None else np.ascontiguousarray(u, dtype=float),
                np.ascontiguousarray(p, dtype=float)]
        out = np.empty((n, cs.nx))
        with self._lock:  # a buffer holds raw pointers: concurrent calls take turns
            fbuf, feval = self._buffer(n, Ub is not None)
            for i, a in enumerate(args):
                if a.size:
                    fbuf.set_arg(i, memoryview(a))
            if out.size:
                fbuf.set_res(0, memoryview(out))
            feval()
            ret = fbuf.ret()
        if ret != 0:
            raise RuntimeError(f"batched time derivatives of '{self.system.name}' failed "
                               f"(return code {ret})")
        return out


def batched_time_derivatives(system: System, context: Any, X: Any, U: Any = None
                             ) -> np.ndarray:
    """Time derivatives of ``system`` at the N states in the rows of ``X``.

    One-shot form of :class:`BatchedDynamics` (which converts the system once; keep one
    for repeated calls).

    Parameters
    ----------
    system : System
    context : Context
        Time, discrete state, parameters and fixed inputs.
    X : (N, nx) array_like
    U : (N, nu) array_like, optional

    Returns
    -------
    (N, nx) ndarray
    """
    return BatchedDynamics(system).time_derivatives(context, X, U)
