"""Monte Carlo simulation and parameter sweeps, serially, on local processes or on a Dask
cluster, through one interface.

:func:`monte_carlo` follows Drake's ``MonteCarloSimulation`` (``systems/analysis/
monte_carlo.h``): a user function ``make_simulator(generator)`` builds a ready-to-run
:class:`~systems.analysis.Simulator` from a seeded random generator (random initial state,
parameters, disturbances), the simulator is advanced to ``final_time`` and
``output(simulator)`` reads a value from the final context. Each sample gets its own integer
seed, drawn from ``numpy.random.SeedSequence(seed)``, so that

    ``sim = make_simulator(numpy.random.default_rng(r.seed)); sim.advance_to(final_time);
    output(sim)``

reproduces ``r.output`` bitwise, whichever executor ran the batch. :func:`sweep` runs a
deterministic grid of parameters instead (Drake has no direct analogue; it is the
``itertools.product`` of the grid's values, or an explicit list of parameter sets).

Executors
---------
``executor=None`` runs every sample in this process, in order. A
``concurrent.futures.Executor`` (``ProcessPoolExecutor(2)``, ``ThreadPoolExecutor``) runs
one task per sample; a ``dask.distributed.Client`` (recognised by its ``submit``/``gather``
methods, so dask is imported only by the caller; the ``[cluster]`` extra) does the same on
the cluster's workers. For a process pool or a cluster, ``make_simulator`` and ``output``
travel to the workers by pickling: they must be module-level functions (or
``functools.partial`` of them, or picklable callable objects), not lambdas or closures;
:class:`NotPicklableError` says which one is not. (Dask pickles with ``cloudpickle`` and
accepts closures.)

Failures and progress
---------------------
A sample that raises is reported in its result (``error`` holds the exception's type,
message and traceback, ``output`` is None) and the other samples still run. A progress line
(samples done / total, on a terminal, after one second) shows on long runs.

Compiled models in workers
--------------------------
A model whose tree or diagram is compiled to C in ``make_simulator`` compiles once: the
libraries live in the shared disk cache (``solvers.compiled``, ``$DYNABLOCKS_CACHE_DIR``),
which every worker process loads from. For bitwise reproducibility across executors, build
trees with ``backend="c"`` or ``"casadi"``: ``"auto"`` switches from CasADi's virtual
machine to compiled code at a moment that depends on a background compilation.

References
----------
Drake, ``drake::systems::analysis::MonteCarloSimulation`` and
``RandomSimulationResult``, https://drake.mit.edu/doxygen_cxx/namespacedrake_1_1systems_1_1analysis.html
"""
from __future__ import annotations

import concurrent.futures as cf
import itertools
import pickle
import traceback
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

import numpy as np

from solvers.progress import ProgressLine
from ..errors import NotPicklableError

__all__ = ["MonteCarloResult", "SweepResult", "NotPicklableError", "monte_carlo", "sweep",
           "sample_seeds"]


class _Outcome:
    """``ok`` of a result with an ``error`` field (shared by the two result types)."""

    error: Optional[str]

    @property
    def ok(self) -> bool:
        """True when the run reached ``final_time`` without raising."""
        return self.error is None


@dataclass(frozen=True)
class MonteCarloResult(_Outcome):
    """One Monte Carlo sample.

    Attributes
    ----------
    seed : int
        The sample's seed: ``make_simulator(numpy.random.default_rng(seed))`` rebuilds it.
    output : Any
        ``output(simulator)`` at ``final_time``; None when the sample failed.
    error : str or None
        The exception (type, message and traceback) when the sample failed.
    """

    seed: int
    output: Any
    error: Optional[str] = None


@dataclass(frozen=True)
class SweepResult(_Outcome):
    """One point of a :func:`sweep`: ``params`` (the dict given to ``make_simulator``),
    ``output`` (None on failure) and ``error`` (the exception text, or None)."""

    params: dict
    output: Any
    error: Optional[str] = None


def sample_seeds(seed: Optional[int], num_samples: int) -> list[int]:
    """The per-sample seeds of :func:`monte_carlo`.

    ``numpy.random.SeedSequence(seed).generate_state(num_samples, numpy.uint64)``: 64-bit
    seeds; the first k seeds do not depend on ``num_samples``, so a larger run extends a
    smaller one.

    Parameters
    ----------
    seed : int or None
        Seed of the whole run (None draws fresh entropy from the operating system).
    num_samples : int

    Returns
    -------
    list of int
        ``num_samples`` seeds, each usable as ``numpy.random.default_rng(s)``.
    """
    if isinstance(num_samples, bool) or not isinstance(num_samples, (int, np.integer)) \
            or num_samples < 0:
        raise ValueError(f"monte_carlo: num_samples must be a non-negative integer, got "
                         f"{num_samples!r}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))
                             or seed < 0):
        raise ValueError(f"monte_carlo: seed must be a non-negative integer or None, got "
                         f"{seed!r}")
    if num_samples == 0:
        return []
    state = np.random.SeedSequence(seed).generate_state(int(num_samples), np.uint64)
    return [int(s) for s in state]


# ---------------------------------------------------------------------- one task
def _error_text(exc: BaseException) -> str:
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).strip()


def _simulate(sim: Any, final_time: float, output: Callable, who: str) -> Any:
    if not hasattr(sim, "advance_to"):
        raise TypeError(f"{who} must return a Simulator (with advance_to), got "
                        f"{type(sim).__name__}")
    sim.advance_to(final_time)
    return output(sim)


def _run_sample(make_simulator: Callable, output: Callable, final_time: float,
                seed: int) -> MonteCarloResult:
    """Build, run and read one sample; any exception becomes the result's ``error``."""
    try:
        sim = make_simulator(np.random.default_rng(seed))
        return MonteCarloResult(seed, _simulate(sim, final_time, output, "make_simulator"))
    except Exception as exc:  # a failed sample must not lose the others
        return MonteCarloResult(seed, None, _error_text(exc))


def _run_point(make_simulator: Callable, output: Callable, final_time: float,
               params: dict) -> SweepResult:
    try:
        sim = make_simulator(params)
        return SweepResult(params, _simulate(sim, final_time, output, "make_simulator"))
    except Exception as exc:
        return SweepResult(params, None, _error_text(exc))


def _run_chunk(runner: Callable, make_simulator: Callable, output: Callable,
               final_time: float, keys: Sequence) -> list:
    return [runner(make_simulator, output, final_time, k) for k in keys]


# ---------------------------------------------------------------------- executors
def _is_dask_client(executor: Any) -> bool:
    return (not isinstance(executor, cf.Executor) and callable(getattr(executor, "submit", None))
            and callable(getattr(executor, "gather", None)))


def _check_picklable(executor: Any, **funcs: Callable) -> None:
    if not isinstance(executor, cf.ProcessPoolExecutor):
        return
    for name, fn in funcs.items():
        try:
            pickle.dumps(fn)
        except Exception as exc:
            raise NotPicklableError(
                f"{name} ({getattr(fn, '__qualname__', type(fn).__name__)}) cannot be sent to "
                f"the worker processes of {type(executor).__name__}: {exc}. Define it at module "
                f"level (a lambda, closure or local function cannot be pickled), or use "
                f"functools.partial of a module-level function") from None


def _chunks(keys: list, chunk_size: int) -> list[list]:
    return [keys[i:i + chunk_size] for i in range(0, len(keys), chunk_size)]


def _failed(runner: Callable, keys: Sequence, exc: BaseException) -> list:
    text = _error_text(exc)
    if runner is _run_sample:
        return [MonteCarloResult(k, None, text) for k in keys]
    return [SweepResult(k, None, text) for k in keys]


def _execute(runner: Callable, make_simulator: Callable, output: Callable,
             final_time: float, keys: list, executor: Any, chunk_size: int,
             progress: Optional[bool], label: str) -> list:
    bar = ProgressLine(len(keys), label, enabled=progress, delay=1.0, interval=0.2)
    results: list = []
    failed = 0

    def record(r) -> None:
        nonlocal failed
        results.append(r)
        failed += not r.ok
        bar.update(len(results), f"{len(results)}/{len(keys)} done, {failed} failed")

    try:
        if executor is None:
            for k in keys:
                record(runner(make_simulator, output, final_time, k))
            return results
        chunks = _chunks(keys, chunk_size)
        if _is_dask_client(executor):
            futures = [executor.submit(_run_chunk, runner, make_simulator, output, final_time,
                                       c, pure=False) for c in chunks]
        elif callable(getattr(executor, "submit", None)):
            futures = [executor.submit(_run_chunk, runner, make_simulator, output, final_time,
                                       c) for c in chunks]
        else:
            raise TypeError(f"{label}: executor must be None, a concurrent.futures.Executor or "
                            f"a dask.distributed.Client, got {type(executor).__name__}")
        for c, fut in zip(chunks, futures):  # in order: results come back in sample order
            try:
                part = fut.result()
            except Exception as exc:  # the task itself failed (pickling, a dead worker)
                part = _failed(runner, c, exc)
            for r in part:
                record(r)
        return results
    finally:
        bar.close()


def _check_common(make_simulator: Any, output: Any, final_time: Any, chunk_size: Any,
                  label: str) -> float:
    for name, fn in (("make_simulator", make_simulator), ("output", output)):
        if not callable(fn):
            raise TypeError(f"{label}: {name} must be callable, got {type(fn).__name__}")
    try:
        t = float(final_time)
    except (TypeError, ValueError):
        raise TypeError(f"{label}: final_time must be a number, got "
                        f"{type(final_time).__name__}") from None
    if not np.isfinite(t):
        raise ValueError(f"{label}: final_time must be finite, got {final_time!r}")
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer)) \
            or chunk_size < 1:
        raise ValueError(f"{label}: chunk_size must be a positive integer, got {chunk_size!r}")
    return t


def monte_carlo(make_simulator: Callable[[np.random.Generator], Any],
                output: Callable[[Any], Any], final_time: float, num_samples: int,
                seed: Optional[int] = None, executor: Any = None, *, chunk_size: int = 1,
                progress: Optional[bool] = None) -> list[MonteCarloResult]:
    """Run ``num_samples`` randomized simulations and collect one output from each.

    For sample ``i`` with seed ``s_i`` (:func:`sample_seeds`)::

        sim = make_simulator(numpy.random.default_rng(s_i))
        sim.advance_to(final_time)
        results[i] = MonteCarloResult(s_i, output(sim))

    Parameters
    ----------
    make_simulator : callable
        ``make_simulator(generator: numpy.random.Generator) -> Simulator``: builds the
        diagram (or reuses one), draws every random quantity from ``generator`` and returns
        a simulator whose context holds the initial state. Module-level for a process pool.
    output : callable
        ``output(simulator) -> value`` read after the run (e.g. from
        ``simulator.get_context()``); the value must be picklable for a process pool.
    final_time : float
        Time to advance every simulator to.
    num_samples : int
        Number of samples (>= 0).
    seed : int, optional
        Seed of the whole run; the same seed gives the same per-sample seeds and, for
        deterministic simulators, bitwise identical outputs. None draws fresh entropy.
    executor : None, concurrent.futures.Executor or dask.distributed.Client
        Where the samples run (module docstring): None serially in this process.
    chunk_size : int
        Samples per task sent to an executor (larger chunks cost less scheduling for short
        samples); ignored when serial.
    progress : bool, optional
        Show the progress line (default: on a terminal, after one second).

    Returns
    -------
    list of MonteCarloResult
        In sample order, each with its ``seed``, ``output`` and ``error`` (the exception
        text when the sample raised; such samples do not stop the others).

    Raises
    ------
    NotPicklableError
        ``make_simulator`` or ``output`` cannot be sent to a ``ProcessPoolExecutor``.
    ValueError, TypeError
        A bad ``num_samples``, ``seed``, ``final_time``, ``chunk_size`` or executor.

    Examples
    --------
    >>> import numpy as np
    >>> from systems.analysis import Simulator, monte_carlo
    >>> from systems.primitives import LinearSystem
    >>> def make(gen):
    ...     sys = LinearSystem(A=-np.eye(1))
    ...     ctx = sys.create_default_context()
    ...     ctx.set_continuous_state([gen.uniform(1.0, 2.0)])
    ...     return Simulator(sys, ctx)
    >>> res = monte_carlo(make, lambda s: float(s.get_context().get_continuous_state_vector()[0]),
    ...                   final_time=1.0, num_samples=3, seed=7)
    >>> [r.ok for r in res]
    [True, True, True]
    """
    t = _check_common(make_simulator, output, final_time, chunk_size, "monte_carlo")
    seeds = sample_seeds(seed, num_samples)
    _check_picklable(executor, make_simulator=make_simulator, output=output)
    return _execute(_run_sample, make_simulator, output, t, seeds, executor, int(chunk_size),
                    progress, "monte_carlo")


def _grid_points(grid: Any) -> list[dict]:
    if isinstance(grid, Mapping):
        names = list(grid)
        values = []
        for name in names:
            vals = grid[name]
            vals = list(np.asarray(vals).ravel()) if isinstance(vals, np.ndarray) else \
                list(vals) if isinstance(vals, Iterable) and not isinstance(vals, str) else None
            if not vals:
                raise ValueError(f"sweep: grid entry '{name}' must be a non-empty sequence of "
                                 f"values, got {grid[name]!r}")
            values.append(vals)
        return [dict(zip(names, combo)) for combo in itertools.product(*values)]
    if isinstance(grid, Iterable) and not isinstance(grid, str):
        points = list(grid)
        for i, p in enumerate(points):
            if not isinstance(p, Mapping):
                raise TypeError(f"sweep: grid item {i} must be a dict of parameters, got "
                                f"{type(p).__name__}")
        return [dict(p) for p in points]
    raise TypeError(f"sweep: grid must be a dict of name -> values or a list of parameter "
                    f"dicts, got {type(grid).__name__}")


def sweep(make_simulator: Callable[[dict], Any], grid: Any, output: Callable[[Any], Any],
          final_time: float, executor: Any = None, *, chunk_size: int = 1,
          progress: Optional[bool] = None) -> list[SweepResult]:
    """Simulate every point of a parameter grid and collect one output from each.

    Parameters
    ----------
    make_simulator : callable
        ``make_simulator(params: dict) -> Simulator`` for one grid point.
    grid : dict of name -> sequence, or sequence of dict
        A dict gives the Cartesian product of its values in ``itertools.product`` order
        (the last name varies fastest, as ``numpy.meshgrid(..., indexing="ij")``
        flattened); a list of dicts gives those points in order.
    output : callable
        ``output(simulator) -> value`` after advancing to ``final_time``.
    final_time : float
    executor, chunk_size, progress
        As in :func:`monte_carlo`.

    Returns
    -------
    list of SweepResult
        One per grid point, in grid order (``params``, ``output``, ``error``).

    Examples
    --------
    >>> import numpy as np
    >>> from systems.analysis import Simulator, sweep
    >>> from systems.primitives import LinearSystem
    >>> def make(p):
    ...     sys = LinearSystem(A=[[-p["a"]]])
    ...     ctx = sys.create_default_context()
    ...     ctx.set_continuous_state([1.0])
    ...     return Simulator(sys, ctx)
    >>> res = sweep(make, {"a": [1.0, 2.0]}, lambda s: s.get_context().time, 0.5)
    >>> [(r.params["a"], r.output) for r in res]
    [(1.0, 0.5), (2.0, 0.5)]
    """
    t = _check_common(make_simulator, output, final_time, chunk_size, "sweep")
    points = _grid_points(grid)
    _check_picklable(executor, make_simulator=make_simulator, output=output)
    return _execute(_run_point, make_simulator, output, t, points, executor, int(chunk_size),
                    progress, "sweep")
