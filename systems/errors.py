"""Exceptions and warnings of the systems framework.

Every error is a :class:`SystemsError` (so a :class:`dynablocks.errors.DynablocksError`) and
also subclasses the built-in exception callers caught before (``ValueError``,
``RuntimeError``, ``TypeError``); each message names the system and port involved and what
was expected. Every warning is a :class:`SystemsWarning` (so a
:class:`dynablocks.errors.DynablocksWarning`) and keeps its category.

The classes are also importable from the modules that raise them (``systems.drawing``,
``systems.analysis``, ``systems.controllers``, ...): the same objects.
"""
from __future__ import annotations

from dynablocks.errors import DynablocksError, DynablocksWarning, TrajectoryError

__all__ = [
    "SystemsError", "SystemsWarning",
    "DiagramBuildError", "PortSizeError", "AlgebraicLoopError", "InputNotConnectedError",
    "PortValueError", "NonFiniteOutputError", "SymbolicEvaluationError", "SystemCallbackError",
    "NonFiniteMatrixError", "GraphvizNotFoundError", "FeedthroughInferenceWarning",
    "CompiledFallbackWarning",
    "TrajectoryError", "TrajectoryOptimizationError", "ControllerError",
    "SimulationError", "NonFiniteStateError", "StepSizeError", "EquilibriumError",
    "BatchShapeError", "NotPicklableError",
]


class SystemsError(DynablocksError):
    """Root of the errors of :mod:`systems` (``except SystemsError`` catches them all).

    Not raised itself; every subclass also subclasses a built-in exception.
    """


class SystemsWarning(DynablocksWarning):
    """Root of the warnings of :mod:`systems`."""


# ------------------------------------------------------------------ building and ports
class DiagramBuildError(SystemsError, ValueError):
    """A diagram cannot be built as described (unknown system, duplicate name, double connection)."""


class PortSizeError(DiagramBuildError):
    """Two connected ports, or a value and its port, disagree in size or kind."""


class AlgebraicLoopError(DiagramBuildError):
    """A cycle of direct-feedthrough ports; the message lists the cycle as ``system.port`` names."""


class InputNotConnectedError(SystemsError, RuntimeError):
    """An input port was evaluated while neither connected, exported nor fixed."""


class PortValueError(SystemsError, ValueError):
    """A value of the wrong size, kind, or a non-finite value was given for a port or state."""


class NonFiniteOutputError(PortValueError):
    """An output port evaluated to NaN or infinity where a finite value is required.

    Raised by :meth:`OutputPort.eval <systems.ports.OutputPort.eval>` (unless called with
    ``allow_non_finite=True``) and by the Simulator when a publish (a log sink's sample, a
    visualizer, any publish reading an input port) reads a non-finite value (unless the
    Simulator was made with ``allow_non_finite_outputs=True``). The message names the leaf
    system and output port that produced the value, the entry, the time and the reader.
    A :class:`PortValueError` (so a ``ValueError``), which the framework's calc and event
    wrappers pass through unchanged.
    """


class SymbolicEvaluationError(SystemsError, TypeError):
    """A system's callbacks cannot be evaluated on CasADi symbols; the message names the system."""


class SystemCallbackError(SystemsError, RuntimeError):
    """A user callback raised; the message names the system and the callback, the cause is chained."""


class FeedthroughInferenceWarning(SystemsWarning, UserWarning):
    """Direct feedthrough could not be inferred symbolically; every input is assumed to feed through."""


class GraphvizNotFoundError(SystemsError, RuntimeError):
    """The Graphviz ``dot`` program is not installed."""


# ------------------------------------------------------------------ design and analysis
class NonFiniteMatrixError(SystemsError, ValueError):
    """A matrix given to a design or analysis function (LQR, Riccati) has NaN or infinite
    entries; the message names the function, the matrix and the first such entry."""


class EquilibriumError(SystemsError, ValueError):
    """The operating point given to :func:`linearize` is not an equilibrium."""


class BatchShapeError(SystemsError, ValueError):
    """A batch of states or inputs does not have the shape ``(N, n)`` the system needs."""


class NotPicklableError(SystemsError, TypeError):
    """A function given to :func:`monte_carlo`/:func:`sweep` cannot be sent to worker
    processes (it is a lambda, a closure or a local function)."""


class ControllerError(SystemsError, ValueError):
    """A controller built with arguments that do not fit its tree (names the controller and
    what was expected)."""


class TrajectoryOptimizationError(SystemsError, ValueError):
    """A trajectory optimization problem set up wrongly (the message names the argument, the
    system or port, and what was expected)."""


# ------------------------------------------------------------------ simulation
class SimulationError(SystemsError, RuntimeError):
    """The simulation cannot continue (monitor failure, step size underflow, bad state)."""


class NonFiniteStateError(SimulationError):
    """A state or time derivative became NaN or infinite; the message names the system,
    the state index and the time. The context keeps the last finite state."""


class StepSizeError(SystemsError, RuntimeError):
    """The error-controlled step size fell below the resolution of time."""


class CompiledFallbackWarning(SystemsWarning, UserWarning):
    """``Simulator(..., compiled="auto")`` runs a diagram interpreted; the message names the
    block or option that keeps it out of compiled code."""
