"""Where an interpreted run's time goes: the users' callbacks against the rest.

:func:`callback_time` runs a simulation once with every leaf's ``time_derivatives`` and every
leaf output's ``calc`` counted, then times each callback alone on a context where its inputs
are already cached (the least of repeated timings: a callback's own cost, not the
machine's load); the product of counts and times is what the
run spends in the blocks' own Python code, which no simulator can remove. The rest of the
run's time is the framework (port evaluation, cache bookkeeping, the derivative function),
the integrator and the event loop.
"""
from __future__ import annotations

import time
from typing import Callable, Tuple

__all__ = ["callback_time"]


def _wrap(counts: dict, key, fn: Callable) -> Callable:
    def counted(*args):
        counts[key] += 1
        return fn(*args)
    return counted


def callback_time(diagram, run: Callable[[], object], context_at: Callable[[], object],
                  repeats: int = 2000, clock: Callable[[], float] = time.perf_counter
                  ) -> Tuple[float, int, dict]:
    """Seconds the blocks' own callbacks take in one ``run()``.

    Parameters
    ----------
    diagram : Diagram
        The simulated diagram.
    run : callable
        One simulation of ``diagram`` (counted once).
    context_at : callable
        Returns a root context of ``diagram`` at a typical state (its inputs get cached by
        a first evaluation before the timing).
    repeats : int
        Calls per callback timing.
    clock : callable
        The clock of the timings (the benchmark's: wall or process CPU time).

    Returns
    -------
    (seconds, derivative evaluations, {callback name: (calls per run, seconds per call)})
    """
    counts: dict = {}
    saved = []
    for system in diagram.leaf_systems():
        if system.num_continuous_states():
            key = f"{system.name}.time_derivatives"
            counts[key] = 0
            saved.append((system, "time_derivatives", system.time_derivatives))
            system.time_derivatives = _wrap(counts, key, system.time_derivatives)
        for port in system.output_ports:
            if port.calc is not None:
                key = f"{system.name}.{port.name}"
                counts[key] = 0
                saved.append((port, "calc", port.calc))
                port.calc = _wrap(counts, key, port.calc)
    try:
        run()
    finally:
        for obj, attr, fn in saved:
            if attr == "time_derivatives":
                del obj.time_derivatives   # back to the class's method
            else:
                obj.calc = fn
    ctx = context_at()
    diagram.eval_time_derivatives(ctx)   # caches every input the callbacks read
    leaf_ctx = {id(s): c for s, c in zip(diagram.leaf_systems(), ctx.leaf_contexts())}
    per = {}
    total = 0.0
    for system in diagram.leaf_systems():
        c = leaf_ctx[id(system)]
        items = []
        if system.num_continuous_states():
            items.append((f"{system.name}.time_derivatives", lambda s=system, c=c: s.time_derivatives(c)))
        for port in system.output_ports:
            if port.calc is not None:
                items.append((f"{system.name}.{port.name}", lambda p=port, c=c: p.calc(c)))
        for key, fn in items:
            n = counts[key]
            if not n:
                continue
            samples = []
            for _ in range(7):
                t0 = clock()
                for _ in range(repeats):
                    fn()
                samples.append((clock() - t0) / repeats)
            dt = min(samples)
            per[key] = (n, dt)
            total += n * dt
    nfev = max((n for k, n in counts.items() if k.endswith(".time_derivatives")), default=0)
    return total, nfev, per
