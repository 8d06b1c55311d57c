"""``Simulator(system, compiled="auto")``: the compiled simulators where the diagram allows,
the interpreted Simulator otherwise (private part of :mod:`systems.analysis.compiled`).

:func:`auto_compiled` maps the interpreted Simulator's options onto a compiled simulator's:

* an error-controlled integrator (``runge_kutta2``/``runge_kutta3`` without ``fixed_step``,
  ``runge_kutta5``, scipy's ``RK45``, ``Radau``, ...) becomes CVODES with the same relative
  tolerance ``accuracy``, the same absolute tolerance (``atol``, default ``1e-3 *
  accuracy`` as in the interpreted Simulator) and the same largest step ``max_step``;
* a fixed-step scheme (``explicit_euler``, ``runge_kutta2/3`` with ``fixed_step=True``,
  ``runge_kutta4``) stays that scheme with step ``max_step``, compiled;
* a diagram holding a time-stepping plant with a compiled step runs as a whole run in C
  (:class:`~systems.analysis.WholeRunSimulator`).

It returns ``None`` -- and the caller builds the interpreted Simulator -- when the diagram
cannot run compiled: a block that cannot be evaluated on CasADi symbols, witness
functions, publishes other than log sinks, unrestricted updates, a scheme without a
compiled twin (``semi_explicit_euler``), or no C compiler for a whole run. It then emits
one :class:`CompiledFallbackWarning` naming the block or option, once per message (Python's
warning filter). The structure's verdict is kept with its conversion
(:mod:`._compiled_reuse`), so a diagram that does not convert costs its failed conversion
once per structure, not at every construction.

Whether a diagram runs compiled is decided once, at construction. The compiled simulators
offer the run API (``advance_to``, ``initialize``, ``get_context``, ``reset_context``,
``get_num_steps_taken``) but not the interpreted Simulator's monitor, realtime rate or
progress bar; they log per-step sinks on the ``output_period`` grid (default
``max_step``) instead of at every integrator step.
"""
from __future__ import annotations

import math
import warnings
from typing import Any, Optional

from solvers.errors import CompileError, CompilerNotFound
from ..errors import SymbolicEvaluationError
from ._compiled_reuse import CompiledFallbackWarning
from .compiled import CompiledSimulator
from ._simulator_events import check_options
from .integrators import INTEGRATOR_NAMES

__all__ = ["CompiledFallbackWarning", "auto_compiled", "compiled_options"]

_FIXED_ALWAYS = ("explicit_euler", "runge_kutta4")
_FIXED_OPTIONAL = ("runge_kutta2", "runge_kutta3")


def compiled_options(kwargs: dict) -> tuple[Optional[dict], str]:
    """The compiled simulator's keyword arguments for the interpreted Simulator's
    ``kwargs``, or ``(None, reason)`` when an option has no compiled twin.

    Raises
    ------
    ValueError
        An option the interpreted Simulator refuses too (``accuracy``, ``atol``,
        ``max_step``, ``witness_tolerance``), with the same message.
    """
    integrator = kwargs.get("integrator", "runge_kutta3")
    accuracy = kwargs.get("accuracy", 1e-4)
    max_step = kwargs.get("max_step", 0.1)
    atol = kwargs.get("atol")
    if integrator not in INTEGRATOR_NAMES:
        return None, f"integrator {integrator!r} is unknown"
    check_options(integrator, accuracy, atol, max_step, kwargs.get("fixed_step", False),
                  kwargs.get("witness_tolerance", 1e-10))
    fixed = integrator in _FIXED_ALWAYS or (kwargs.get("fixed_step", False)
                                            and integrator in _FIXED_OPTIONAL)
    out: dict[str, Any] = {"allow_non_finite_outputs": kwargs.get("allow_non_finite_outputs", False)}
    if kwargs.get("flags") is not None:
        out["flags"] = kwargs["flags"]
    if fixed:
        if not (isinstance(max_step, (int, float)) and math.isfinite(max_step) and max_step > 0):
            return None, f"fixed-step integrator '{integrator}' needs a finite max_step"
        out.update(integrator=integrator, max_step=float(max_step))
        return out, ""
    if integrator == "semi_explicit_euler" or kwargs.get("fixed_step", False):
        return None, f"integrator '{integrator}' has no compiled twin"
    out.update(integrator="cvodes", accuracy=accuracy, max_step=max_step,
               atol=1e-3 * accuracy if atol is None else atol)
    return out, ""


def auto_compiled(system, context, kwargs: dict, interpreted: type):
    """A compiled simulator of ``system`` for ``Simulator(system, context, compiled="auto",
    **kwargs)``, or None after a :class:`CompiledFallbackWarning` (module docstring).
    ``interpreted`` is the Simulator class the compiled one switches to when asked for a
    monitor, a realtime rate or a progress bar (``InterpretedFallback``)."""
    options, reason = compiled_options(kwargs)
    name = getattr(system, "name", "?")
    if options is None:
        _note(name, reason)
        return None
    try:
        sim = CompiledSimulator(system, context, **options)
        sim.switch_when_asked(interpreted, kwargs)
        return sim
    except (SymbolicEvaluationError, CompilerNotFound, CompileError) as exc:
        _note(name, str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
        return None


def _note(name: str, reason: str) -> None:
    warnings.warn(f"Simulator(compiled='auto'): '{name}' runs interpreted: {reason}",
                  CompiledFallbackWarning, stacklevel=4)
