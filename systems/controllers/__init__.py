"""Controllers as systems, and controller design from models.

Public names
------------
PidController, LinearQuadraticRegulator, DiscreteTimeLinearQuadraticRegulator,
FiniteHorizonLinearQuadraticRegulator, FiniteHorizonLQRResult, TimeVaryingLQRController.
"""
from .lqr import (DiscreteTimeLinearQuadraticRegulator, FiniteHorizonLinearQuadraticRegulator,
                  FiniteHorizonLQRResult, LinearQuadraticRegulator, TimeVaryingLQRController)
from .pid import PidController

__all__ = ["PidController", "LinearQuadraticRegulator", "DiscreteTimeLinearQuadraticRegulator",
           "FiniteHorizonLinearQuadraticRegulator", "FiniteHorizonLQRResult",
           "TimeVaryingLQRController"]
