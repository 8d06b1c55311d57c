"""Analysis of systems: simulation (and, later, linearization and friends).

Public names
------------
Simulator, SimulatorStatus, EventStatus, SimulationError, NonFiniteStateError,
ButcherTableau, INTEGRATOR_NAMES (the integrator names the Simulator accepts).
"""
from .integrators import INTEGRATOR_NAMES, ButcherTableau, StepSizeError
from .simulator import (EventStatus, NonFiniteStateError, SimulationError, Simulator,
                        SimulatorStatus)

__all__ = [
    "Simulator", "SimulatorStatus", "EventStatus", "SimulationError", "NonFiniteStateError",
    "ButcherTableau", "INTEGRATOR_NAMES", "StepSizeError",
]
