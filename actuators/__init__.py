"""Actuator blocks: systems that map a plant's state and a command to a generalized force."""

__all__: list[str] = []
