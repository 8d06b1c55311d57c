"""Sensor blocks: systems that map a plant's state (and accelerations, contact forces) to a reading.

:class:`Sensor` is the base; :class:`FullStateSensor` and :class:`JointStateSensor` read
positions and velocities; :class:`Imu` reads specific force and angular velocity.
"""
from .base import Sensor
from .imu import Imu
from .state import FullStateSensor, JointStateSensor

__all__ = ["Sensor", "FullStateSensor", "JointStateSensor", "Imu"]
