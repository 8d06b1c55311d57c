"""The URDF reader's view of the shared XML layer (private).

:mod:`._xml` reads XML with line numbers for every model reader; here it is bound to the
URDF reader's error and warning classes, so that every failure of a URDF becomes a
:class:`URDFError` (file, line, element) and every accepted change a :class:`URDFWarning`.
"""
from __future__ import annotations

from ._xml import MAX_DEPTH, XmlNode, pose_matrix, rpy_to_matrix
from ._xml import Reader as _XmlReader
from ._xml import parse_xml as _parse_xml
from .errors import URDFError, URDFWarning

__all__ = ["URDFError", "URDFWarning", "XmlNode", "Reader", "parse_xml", "rpy_to_matrix",
           "pose_matrix", "MAX_DEPTH"]


def parse_xml(text: str | bytes, source: str) -> XmlNode:
    """Parse URDF text into an :class:`XmlNode` tree; every XML failure is a
    :class:`URDFError` (see :func:`multibody.parsing._xml.parse_xml`)."""
    return _parse_xml(text, source, URDFError)


class Reader(_XmlReader):
    """A :class:`multibody.parsing._xml.Reader` raising :class:`URDFError` and warning with
    :class:`URDFWarning`."""

    def __init__(self, source: str):
        super().__init__(source, URDFError, URDFWarning)
