"""Exceptions of the sensor blocks.

Every error is a :class:`SensorsError` (so a :class:`dynablocks.errors.DynablocksError`) and
keeps the built-in base callers caught before. Bad constructor arguments of the sensor
blocks raise plain ``ValueError`` naming the sensor and the argument.
"""
from __future__ import annotations

from dynablocks.errors import DynablocksError

__all__ = ["SensorsError", "MotionCaptureError"]


class SensorsError(DynablocksError):
    """Root of the errors of :mod:`sensors` (``except SensorsError`` catches them all)."""


class MotionCaptureError(SensorsError, ValueError):
    """Bad or incomplete motion-capture data (names the file and what is missing)."""
