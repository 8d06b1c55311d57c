"""Controllers as systems.

Public names
------------
PidController.
"""
from .pid import PidController

__all__ = ["PidController"]
