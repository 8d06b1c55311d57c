"""Sensor blocks: systems that map a plant's state (and accelerations, contact forces) to a reading.

:class:`Sensor` is the base; :class:`FullStateSensor` and :class:`JointStateSensor` read
positions and velocities.
"""
from .base import Sensor
from .state import FullStateSensor, JointStateSensor

__all__ = ["Sensor", "FullStateSensor", "JointStateSensor"]
