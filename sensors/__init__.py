"""Sensor blocks: systems that map a plant's state (and accelerations, contact forces) to a reading.

:class:`Sensor` is the base; :class:`FullStateSensor` and :class:`JointStateSensor` read
positions and velocities; :class:`Imu` reads specific force and angular velocity;
:class:`Encoder` samples quantized joint positions; :class:`JointForceTorqueSensor`
reads the wrench a joint transmits; :class:`MarkerSensor` gives world positions of
body-fixed markers (:func:`read_c3d` reads recorded ones into :class:`MarkerData`); :class:`ContactForceSensor` sums the contact wrench on a body; :class:`RangeSensor` casts rays at the scene.
"""
from .base import Sensor
from .contact_force import ContactForceSensor
from .encoder import Encoder
from .force_torque import JointForceTorqueSensor
from .imu import Imu
from .imu_noise import ImuNoise
from .markers import MarkerSensor
from .motion_capture import MarkerData, MotionCaptureError, read_c3d, write_c3d
from .range import RangeSensor
from .state import FullStateSensor, JointStateSensor

__all__ = ["Sensor", "FullStateSensor", "JointStateSensor", "Imu", "ImuNoise", "Encoder", "JointForceTorqueSensor", "MarkerSensor", "ContactForceSensor", "RangeSensor"]
__all__ += ["MarkerData", "MotionCaptureError", "read_c3d", "write_c3d"]
