"""Model file readers that build a :class:`~multibody.tree.RigidBodyTree`.

Lives here: the URDF reader (:func:`parse_urdf`, :func:`read_urdf_model`, line-numbered
:class:`URDFError`). Future formats (the human skeleton description, SDF, MJCF) go here too.
Readers may import the tree and geometry layers, never the plants or ``systems``. Importing
this package registers the URDF reader with :meth:`RigidBodyTree.from_urdf`.
"""
from __future__ import annotations

from ..tree import register_file_loader
from .urdf import URDFError, parse_urdf, read_urdf_model

register_file_loader("urdf", parse_urdf)

__all__ = ["URDFError", "parse_urdf", "read_urdf_model"]
