"""Analysis of systems: simulation (interpreted and compiled) and linearization.

Public names
------------
Simulator, SimulatorStatus, EventStatus, SimulationError, NonFiniteStateError,
NonFiniteOutputError (defined in :mod:`systems.errors`), ButcherTableau, INTEGRATOR_NAMES
(the integrator names the Simulator accepts),
CompiledSimulator, COMPILED_INTEGRATORS, linearize, first_order_taylor_approximation,
controllability_matrix, is_controllable, observability_matrix, is_observable,
is_stabilizable, is_detectable, EquilibriumError, monte_carlo, sweep, sample_seeds,
MonteCarloResult, SweepResult, NotPicklableError (Monte Carlo runs and parameter sweeps),
BatchedDynamics, batched_time_derivatives, BatchShapeError (time derivatives on N states),
WholeRunSimulator, simulate_batch, BatchResult (whole runs of a time-stepping diagram in C,
one world or many), PortSelection (which ports ``linearize`` uses), CompiledFallbackWarning
(``Simulator(..., compiled="auto")`` runs a diagram interpreted and names the block).
"""
from .integrators import INTEGRATOR_NAMES, ButcherTableau, StepSizeError
from .compiled import (COMPILED_INTEGRATORS, BatchResult, CompiledFallbackWarning,
                       CompiledSimulator, WholeRunSimulator, simulate_batch)
from .linearize import (EquilibriumError, PortSelection, controllability_matrix, first_order_taylor_approximation,
                        is_controllable, is_detectable, is_observable, is_stabilizable,
                        linearize, observability_matrix)
from .simulator import (EventStatus, NonFiniteOutputError, NonFiniteStateError, SimulationError,
                        Simulator, SimulatorStatus)
from .batched import BatchedDynamics, BatchShapeError, batched_time_derivatives
from .monte_carlo import (MonteCarloResult, NotPicklableError, SweepResult, monte_carlo,
                          sample_seeds, sweep)

__all__ = [
    "Simulator", "SimulatorStatus", "EventStatus", "SimulationError", "NonFiniteStateError",
    "NonFiniteOutputError", "ButcherTableau", "INTEGRATOR_NAMES", "StepSizeError",
    "CompiledSimulator", "COMPILED_INTEGRATORS", "linearize", "first_order_taylor_approximation",
    "controllability_matrix", "is_controllable", "is_stabilizable", "is_detectable", "observability_matrix", "is_observable",
    "EquilibriumError",
    "monte_carlo", "sweep", "sample_seeds", "MonteCarloResult", "SweepResult",
    "NotPicklableError", "BatchedDynamics", "BatchShapeError", "batched_time_derivatives",
    "WholeRunSimulator", "simulate_batch", "BatchResult", "PortSelection",
    "CompiledFallbackWarning",
]
