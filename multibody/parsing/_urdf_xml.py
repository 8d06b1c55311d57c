"""XML reading with line numbers and attribute parsing for the URDF parser (private).

The standard library's ``xml.etree.ElementTree`` does not record line numbers,
so this module drives ``xml.parsers.expat`` directly and builds a small tree of
:class:`XmlNode` objects, each remembering the line of its start tag.  The
helpers below read attributes of those nodes and raise :class:`URDFError` with
the file, the line and the owning URDF element (``link 'forearm'``) on any
problem.

Numbers are read strictly: a decimal number in ASCII (``-1.5``, ``2e-3``, ``.5``), never the
wider syntax Python's ``float()`` accepts (``1_0``, full-width or Arabic-Indic digits,
``infinity``); vectors are split on XML white space only (space, tab, CR, LF). Every
failure of the XML layer (malformed text, an unknown or unsupported encoding, elements
nested too deep) becomes a :class:`URDFError`.
"""
from __future__ import annotations

import math
import os
import re
import sys
import warnings
from typing import Iterator, Sequence
from xml.parsers import expat

import numpy as np

from ..errors import MultibodyError

__all__ = ["URDFError", "URDFWarning", "XmlNode", "Reader", "parse_xml", "rpy_to_matrix",
           "pose_matrix", "MAX_DEPTH"]

MAX_DEPTH = 256
"""Deepest element nesting accepted (a URDF needs 6 levels; deeper is a damaged file)."""

# A decimal number in ASCII, as in the XML Schema ``double`` lexical space (without INF/NaN).
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_XML_SPACE = re.compile(r"[ \t\r\n]+")
_XML_SPACE_CHARS = " \t\r\n"


class URDFError(MultibodyError):
    """A URDF document that cannot be turned into a model (a ``ValueError``).

    The message reads ``"<source>, line <n>: <element>: <what is wrong>"``.

    Attributes
    ----------
    source : str
        The file path as given, or ``"<string>"`` for XML text.
    line : int or None
        Line number (1-based) of the offending XML element.
    element : str
        The URDF element concerned, e.g. ``"joint 'elbow'"`` or ``"link 'forearm'"``.
    """

    def __init__(self, source: str, line: int | None, element: str, message: str):
        self.source = source
        self.line = line
        self.element = element
        self.reason = message
        where = source if line is None else f"{source}, line {line}"
        super().__init__(f"{where}: {element}: {message}")


URDFError.__module__ = "multibody.parsing"


class URDFWarning(UserWarning):
    """A URDF accepted with a change the user should know about.

    Issued (``warnings.warn``) for real-robot files that Pinocchio and Drake load: an
    ``<inertial>`` on the world link (ignored) and a rotational inertia whose principal
    moments violate the triangle inequality (repaired). The message gives the file, the
    line, the element and what was done, as :class:`URDFError` does.
    """


URDFWarning.__module__ = "multibody.parsing"


class XmlNode:
    """One XML element: tag, attributes, children and the line of its start tag."""

    __slots__ = ("tag", "attrib", "children", "line")

    def __init__(self, tag: str, attrib: dict[str, str], line: int):
        self.tag = tag
        self.attrib = attrib
        self.children: list[XmlNode] = []
        self.line = line

    def findall(self, tag: str) -> list["XmlNode"]:
        """Direct children with the given tag, in document order."""
        return [c for c in self.children if c.tag == tag]

    def iter(self) -> Iterator["XmlNode"]:
        """This node and all its descendants, depth first (iterative: no recursion limit)."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"XmlNode(<{self.tag}>, line {self.line})"


class _TooDeep(Exception):
    """Raised inside the expat handler when the nesting exceeds MAX_DEPTH (args: line)."""


def parse_xml(text: str | bytes, source: str) -> XmlNode:
    """Parse XML text into an :class:`XmlNode` tree recording line numbers.

    Raises
    ------
    URDFError
        If the text is not well-formed XML (with expat's line number), declares an unknown
        or unsupported encoding, or nests elements deeper than :data:`MAX_DEPTH`.
    """
    parser = expat.ParserCreate()
    stack: list[XmlNode] = []
    roots: list[XmlNode] = []

    def start(tag: str, attrib: dict[str, str]) -> None:
        node = XmlNode(tag, dict(attrib), parser.CurrentLineNumber)
        if len(stack) >= MAX_DEPTH:
            raise _TooDeep(node.line)
        if stack:
            stack[-1].children.append(node)
        else:
            roots.append(node)
        stack.append(node)

    def end(tag: str) -> None:
        stack.pop()

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    try:
        parser.Parse(text, True)
    except expat.ExpatError as exc:
        raise URDFError(source, exc.lineno, "document",
                        f"not well-formed XML ({expat.errors.messages[exc.code]}, "
                        f"column {exc.offset})") from None
    except _TooDeep as exc:
        raise URDFError(source, exc.args[0], "document",
                        f"elements nested more than {MAX_DEPTH} levels deep "
                        f"(a URDF needs at most 6)") from None
    except (LookupError, ValueError, RecursionError, MemoryError) as exc:
        # LookupError: unknown encoding; ValueError/UnicodeError: an encoding expat cannot
        # use (multi-byte, non-text codecs)
        raise URDFError(source, parser.CurrentLineNumber, "document",
                        f"cannot read the XML: {type(exc).__name__}: {exc} (a URDF file is "
                        f"UTF-8 or another single-byte text encoding)") from None
    if not roots:  # pragma: no cover - expat refuses documents without elements
        raise URDFError(source, None, "document", "no XML element found")
    return roots[0]


def rpy_to_matrix(rpy: Sequence[float]) -> np.ndarray:
    """Rotation matrix of URDF roll-pitch-yaw angles, ``R = Rz(yaw) Ry(pitch) Rx(roll)``.

    Parameters
    ----------
    rpy : sequence of 3 floats
        Roll, pitch, yaw (rad): fixed-axis rotations about x, then y, then z.

    Returns
    -------
    ndarray, shape (3, 3)
    """
    r, p, y = (float(a) for a in rpy)
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    return np.array([
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ])


def pose_matrix(xyz: Sequence[float], rpy: Sequence[float]) -> np.ndarray:
    """4x4 homogeneous pose from a URDF ``<origin xyz=... rpy=...>``."""
    X = np.eye(4)
    X[:3, :3] = rpy_to_matrix(rpy)
    X[:3, 3] = np.asarray(xyz, dtype=float)
    return X


class Reader:
    """Attribute and child-element access that reports errors with their location.

    Parameters
    ----------
    source : str
        Name used in error messages (file path or ``"<string>"``).
    """

    def __init__(self, source: str):
        self.source = source

    def error(self, node: XmlNode | None, owner: str, message: str) -> URDFError:
        """Build (not raise) a :class:`URDFError` located at ``node``."""
        return URDFError(self.source, None if node is None else node.line, owner, message)

    def error_at(self, line: int | None, owner: str, message: str) -> URDFError:
        """Build (not raise) a :class:`URDFError` at a given line."""
        return URDFError(self.source, line, owner, message)

    def warn(self, node: XmlNode | None, owner: str, message: str) -> None:
        """Issue a :class:`URDFWarning` located at ``node``, attributed to the caller of the
        parser (the first stack frame outside ``multibody/parsing``)."""
        where = self.source if node is None else f"{self.source}, line {node.line}"
        here = os.path.dirname(os.path.abspath(__file__))
        level, frame = 1, sys._getframe(0)
        while frame is not None and os.path.dirname(os.path.abspath(frame.f_code.co_filename)) == here:
            frame = frame.f_back
            level += 1
        warnings.warn(f"{where}: {owner}: {message}", URDFWarning, stacklevel=level)

    # -- children ---------------------------------------------------------------
    def child(self, node: XmlNode, tag: str, owner: str, *, required: bool = False) -> XmlNode | None:
        """The single child ``<tag>`` of ``node`` (None if absent and not required)."""
        found = node.findall(tag)
        if len(found) > 1:
            raise self.error(found[1], owner,
                             f"more than one <{tag}> in <{node.tag}> (first at line {found[0].line})")
        if not found:
            if required:
                raise self.error(node, owner, f"<{node.tag}> has no <{tag}> element")
            return None
        return found[0]

    # -- attributes -------------------------------------------------------------
    def text(self, node: XmlNode, attr: str, owner: str, default: str | None = None) -> str:
        """A string attribute; required when ``default`` is None."""
        value = node.attrib.get(attr)
        if value is None:
            if default is None:
                raise self.error(node, owner, f"<{node.tag}> is missing the required attribute '{attr}'")
            return default
        return value

    def number(self, node: XmlNode, attr: str, owner: str, default: float | None = None) -> float:
        """A finite float attribute; required when ``default`` is None."""
        raw = node.attrib.get(attr)
        if raw is None:
            if default is None:
                raise self.error(node, owner, f"<{node.tag}> is missing the required attribute '{attr}'")
            return float(default)
        return self._to_float(node, attr, owner, raw.strip(_XML_SPACE_CHARS), raw)

    def vector(self, node: XmlNode | None, attr: str, owner: str, size: int,
               default: Sequence[float] | None = None) -> np.ndarray:
        """A whitespace-separated vector attribute of ``size`` finite floats."""
        raw = None if node is None else node.attrib.get(attr)
        if raw is None:
            if default is None:
                raise self.error(node, owner, f"<{node.tag}> is missing the required attribute '{attr}'")
            return np.array(default, dtype=float)
        stripped = raw.strip(_XML_SPACE_CHARS)
        parts = _XML_SPACE.split(stripped) if stripped else []
        if len(parts) != size:
            raise self.error(node, owner, f"<{node.tag}> attribute {attr}=\"{raw}\" must hold "
                                          f"{size} numbers, found {len(parts)}")
        return np.array([self._to_float(node, attr, owner, p, raw) for p in parts])

    def _to_float(self, node: XmlNode, attr: str, owner: str, token: str, raw: str) -> float:
        if _NUMBER.fullmatch(token) is None:
            if token.lower().lstrip("+-") in ("inf", "infinity", "nan"):
                raise self.error(node, owner, f"<{node.tag}> attribute {attr}=\"{raw}\" is not finite")
            raise self.error(node, owner, f"<{node.tag}> attribute {attr}=\"{raw}\" is not a number "
                                          f"(expected a decimal number in ASCII such as -1.5e-3)")
        value = float(token)
        if not math.isfinite(value):
            raise self.error(node, owner, f"<{node.tag}> attribute {attr}=\"{raw}\" is not finite")
        return value

    def origin(self, node: XmlNode, owner: str) -> np.ndarray:
        """The 4x4 pose of the optional ``<origin>`` child of ``node`` (identity if absent)."""
        o = self.child(node, "origin", owner)
        if o is None:
            return np.eye(4)
        return pose_matrix(self.vector(o, "xyz", owner, 3, (0, 0, 0)),
                           self.vector(o, "rpy", owner, 3, (0, 0, 0)))
