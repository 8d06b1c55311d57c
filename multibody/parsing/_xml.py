"""XML reading with line numbers and strict attribute parsing for the model readers (private).

The standard library's ``xml.etree.ElementTree`` does not record line numbers, so this module
drives ``xml.parsers.expat`` directly and builds a small tree of :class:`XmlNode` objects, each
remembering the line of its start tag and its text. A :class:`Reader` reads attributes and
children of those nodes and raises the reader's own error class (:class:`URDFError`,
:class:`SDFError`, :class:`MJCFError`) with the file, the line and the owning element
(``link 'forearm'``) on any problem.

Numbers are read strictly: a decimal number in ASCII (``-1.5``, ``2e-3``, ``.5``), never the
wider syntax Python's ``float()`` accepts (``1_0``, full-width or Arabic-Indic digits,
``infinity``); vectors are split on XML white space only (space, tab, CR, LF). Every failure
of the XML layer (malformed text, an unknown or unsupported encoding, elements nested too
deep) becomes the reader's error.
"""
from __future__ import annotations

import math
import os
import pathlib
import re
import sys
import warnings
from typing import Iterator, Sequence, Union
from xml.parsers import expat

import numpy as np

from .errors import ModelParseError, ModelParseWarning

__all__ = ["XmlNode", "Reader", "parse_xml", "read_source", "rpy_to_matrix", "pose_matrix",
           "MAX_DEPTH", "PathOrString"]

MAX_DEPTH = 256
"""Deepest element nesting accepted (real model files need fewer than 20 levels)."""

PathOrString = Union[str, bytes, os.PathLike]

# A decimal number in ASCII, as in the XML Schema ``double`` lexical space (without INF/NaN).
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_XML_SPACE = re.compile(r"[ \t\r\n]+")
_XML_SPACE_CHARS = " \t\r\n"


def read_source(path_or_string: PathOrString, format_name: str, root_tag: str
                ) -> tuple[str | bytes, str, str | None]:
    """Return ``(xml text, source name for messages, directory for relative file names)``.

    Parameters
    ----------
    path_or_string : str, bytes or path-like
        A file path, or the XML itself (a string starting with ``<`` or containing
        ``<root_tag``).
    format_name : str
        The format's name for messages (``"URDF"``).
    root_tag : str
        The root element's tag (``"robot"``), used to tell text from a path.

    Raises
    ------
    TypeError
        Neither a path nor text.
    FileNotFoundError
        A path that is not an existing file.
    """
    if isinstance(path_or_string, bytes):
        return path_or_string, "<string>", None
    if isinstance(path_or_string, str) and (
            path_or_string.lstrip("\ufeff \t\r\n").startswith("<") or f"<{root_tag}" in path_or_string):
        return path_or_string, "<string>", None     # XML text (possibly after a BOM or junk)
    if not isinstance(path_or_string, (str, os.PathLike)):
        raise TypeError(f"expected a file path or a {format_name} XML string, "
                        f"got {type(path_or_string).__name__}")
    path = pathlib.Path(path_or_string)
    try:
        is_file = path.is_file()
    except (OSError, ValueError):   # a name too long for the file system, a NUL byte
        is_file = False
    if not is_file:
        shown = str(path_or_string)
        shown = shown if len(shown) <= 200 else shown[:200] + "..."
        raise FileNotFoundError(f"{format_name} file {shown!r} does not exist (a {format_name} "
                                "string must start with '<')")
    return path.read_bytes(), str(path_or_string), str(path.resolve().parent)


class XmlNode:
    """One XML element: tag, attributes, children and the line of its start tag."""

    __slots__ = ("tag", "attrib", "children", "line", "text")

    def __init__(self, tag: str, attrib: dict[str, str], line: int):
        self.tag = tag
        self.attrib = attrib
        self.children: list[XmlNode] = []
        self.line = line
        self.text = ""   # character data directly inside the element (all chunks joined)

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


def parse_xml(text: str | bytes, source: str,
              error: type[ModelParseError] = ModelParseError) -> XmlNode:
    """Parse XML text into an :class:`XmlNode` tree recording line numbers and text.

    Parameters
    ----------
    text : str or bytes
        The document.
    source : str
        Name used in error messages (file path or ``"<string>"``).
    error : type
        The reader's error class, raised for every failure.

    Raises
    ------
    ModelParseError
        (of class ``error``) If the text is not well-formed XML (with expat's line number), declares an unknown
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

    def data(chunk: str) -> None:
        if stack:
            stack[-1].text += chunk

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = data
    try:
        parser.Parse(text, True)
    except expat.ExpatError as exc:
        raise error(source, exc.lineno, "document",
                        f"not well-formed XML ({expat.errors.messages[exc.code]}, "
                        f"column {exc.offset})") from None
    except _TooDeep as exc:
        raise error(source, exc.args[0], "document",
                        f"elements nested more than {MAX_DEPTH} levels deep "
                        f"(a {error.format_name} file needs far fewer)") from None
    except (LookupError, ValueError, RecursionError, MemoryError) as exc:
        # LookupError: unknown encoding; ValueError/UnicodeError: an encoding expat cannot
        # use (multi-byte, non-text codecs)
        raise error(source, parser.CurrentLineNumber, "document",
                        f"cannot read the XML: {type(exc).__name__}: {exc} (a "
                        f"{error.format_name} file is UTF-8 or another single-byte text encoding)") from None
    if not roots:  # pragma: no cover - expat refuses documents without elements
        raise error(source, None, "document", "no XML element found")
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
    error_class : type
        The reader's error (a :class:`ModelParseError` subclass).
    warning_class : type
        The reader's warning (a :class:`ModelParseWarning` subclass).
    """

    def __init__(self, source: str, error_class: type[ModelParseError] = ModelParseError,
                 warning_class: type[ModelParseWarning] = ModelParseWarning):
        self.source = source
        self.error_class = error_class
        self.warning_class = warning_class

    def error(self, node: XmlNode | None, owner: str, message: str) -> ModelParseError:
        """Build (not raise) the reader's error located at ``node``."""
        return self.error_class(self.source, None if node is None else node.line, owner, message)

    def error_at(self, line: int | None, owner: str, message: str) -> ModelParseError:
        """Build (not raise) the reader's error at a given line."""
        return self.error_class(self.source, line, owner, message)

    def warn(self, node: XmlNode | None, owner: str, message: str) -> None:
        """Issue the reader's warning located at ``node``, attributed to the caller of the
        parser (the first stack frame outside ``multibody/parsing``)."""
        where = self.source if node is None else f"{self.source}, line {node.line}"
        here = os.path.dirname(os.path.abspath(__file__))
        level, frame = 1, sys._getframe(0)
        while frame is not None and os.path.dirname(os.path.abspath(frame.f_code.co_filename)) == here:
            frame = frame.f_back
            level += 1
        warnings.warn(f"{where}: {owner}: {message}", self.warning_class, stacklevel=level)

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

    def numbers(self, node: XmlNode, raw: str, what: str, owner: str,
                sizes: Sequence[int] | None = None) -> np.ndarray:
        """Whitespace-separated finite numbers from ``raw`` (an attribute value or element
        text, named ``what`` in messages), optionally of one of the lengths ``sizes``."""
        stripped = raw.strip(_XML_SPACE_CHARS)
        parts = _XML_SPACE.split(stripped) if stripped else []
        if sizes is not None and len(parts) not in sizes:
            want = " or ".join(str(s) for s in sizes)
            raise self.error(node, owner, f"{what} \"{raw.strip()}\" must hold {want} numbers, "
                                          f"found {len(parts)}")
        return np.array([self._to_float(node, what, owner, p, raw) for p in parts], dtype=float)

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
