"""The :class:`Sensor` base block: plant state (and optional signals) -> reading.

A sensor has input ``state`` (nq + nv) and, when it asks for them, the optional inputs a
plant can provide: ``generalized_acceleration`` (nv) and ``contact_results`` (abstract).
Its output port carries the reading. Subclasses declare their output in ``__init__``.
"""
from __future__ import annotations

from typing import Optional

from systems import LeafSystem

__all__ = ["Sensor"]


class Sensor(LeafSystem):
    """Base sensor block for a rigid-body tree.

    Parameters
    ----------
    tree : RigidBodyTree
    needs_acceleration : bool
        Declare the ``generalized_acceleration`` input.
    needs_contact_results : bool
        Declare the abstract ``contact_results`` input.
    """

    def __init__(self, tree, *, needs_acceleration: bool = False, needs_contact_results: bool = False,
                 name: Optional[str] = None):
        super().__init__(name)
        tree.finalize()
        self.tree = tree
        self.nq, self.nv = tree.nq, tree.nv
        self.state_port = self.declare_input_port("state", self.nq + self.nv)
        self.acceleration_port = (self.declare_input_port("generalized_acceleration", self.nv)
                                  if needs_acceleration else None)
        self.contact_port = (self.declare_abstract_input_port("contact_results", [])
                             if needs_contact_results else None)
