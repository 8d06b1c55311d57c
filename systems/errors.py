"""Exceptions of the systems framework.

Each subclasses a built-in exception so that callers may catch the built-in, and each
message names the system and port involved and what was expected.
"""
from __future__ import annotations

__all__ = [
    "DiagramBuildError", "PortSizeError", "AlgebraicLoopError", "InputNotConnectedError",
    "PortValueError", "NonFiniteOutputError", "SymbolicEvaluationError", "SystemCallbackError",
]


class DiagramBuildError(ValueError):
    """A diagram cannot be built as described (unknown system, duplicate name, double connection)."""


class PortSizeError(DiagramBuildError):
    """Two connected ports, or a value and its port, disagree in size or kind."""


class AlgebraicLoopError(DiagramBuildError):
    """A cycle of direct-feedthrough ports; the message lists the cycle as ``system.port`` names."""


class InputNotConnectedError(RuntimeError):
    """An input port was evaluated while neither connected, exported nor fixed."""


class PortValueError(ValueError):
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


class SymbolicEvaluationError(TypeError):
    """A system's callbacks cannot be evaluated on CasADi symbols; the message names the system."""


class SystemCallbackError(RuntimeError):
    """A user callback raised; the message names the system and the callback, the cause is chained."""


class NonFiniteMatrixError(ValueError):
    """A matrix given to a design or analysis function (LQR, Riccati) has NaN or infinite
    entries; the message names the function, the matrix and the first such entry."""


__all__ += ["NonFiniteMatrixError"]
