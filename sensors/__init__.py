"""Sensor blocks: systems that map a plant's state (and accelerations, contact forces) to a reading."""

__all__: list[str] = []
