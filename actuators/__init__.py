"""Actuator blocks: systems that map a plant's state and a command to a generalized force.

:class:`Actuator` is the base (inputs ``state`` and ``command``, output
``generalized_force``); :class:`GeneralizedForceActuator` commands selected joint DOFs with a
gear ratio and effort limits; :class:`DcMotor` drives joints through gears from a voltage,
with its current as state and its rotor inertia reflected to the joints.
"""
from .base import Actuator
from .dc_motor import DcMotor
from .joint import GeneralizedForceActuator

__all__ = ["Actuator", "GeneralizedForceActuator", "DcMotor"]
