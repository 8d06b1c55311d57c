"""Controllers as systems, and controller design from models.

Public names
------------
PidController, InverseDynamicsController, InverseDynamics, LinearQuadraticRegulator, DiscreteTimeLinearQuadraticRegulator,
FiniteHorizonLinearQuadraticRegulator, FiniteHorizonLQRResult, TimeVaryingLQRController.
"""
from .lqr import (DiscreteTimeLinearQuadraticRegulator, FiniteHorizonLinearQuadraticRegulator,
                  FiniteHorizonLQRResult, LinearQuadraticRegulator, TimeVaryingLQRController)
from .inverse_dynamics import ControllerError, InverseDynamics, InverseDynamicsController
from .pid import PidController

__all__ = ["PidController", "InverseDynamicsController", "InverseDynamics", "ControllerError", "LinearQuadraticRegulator", "DiscreteTimeLinearQuadraticRegulator",
           "FiniteHorizonLinearQuadraticRegulator", "FiniteHorizonLQRResult",
           "TimeVaryingLQRController"]
