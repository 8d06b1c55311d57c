"""MJCF document layer (private): ``<include>`` expansion, ``<compiler>`` settings and
``<default>`` classes.

:func:`load_document` reads the main file, splices every ``<include file=...>`` in place (the
children of the included file's ``<mujoco>`` root; file names relative to the including
file's directory; cycles refused) and remembers which file every element came from, so that
errors name the right file and line. :class:`Defaults` holds the default classes (MuJoCo
XML reference, "default"): the top-level ``<default>`` is the class ``main``; a nested
``<default class="c">`` starts from its parent's values; an element takes the attributes of
the class named by its own ``class`` attribute, else of the innermost ``childclass`` of its
enclosing bodies and frames, else of ``main``, and its own attributes override them.

Reference: MuJoCo XML reference, https://mujoco.readthedocs.io/en/stable/XMLreference.html
(sections compiler, default, include).
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass

from ._xml import PathOrString, Reader, XmlNode, parse_xml, read_source
from .errors import MJCFError, MJCFWarning

__all__ = ["Document", "Compiler", "Defaults", "load_document", "ACTUATOR_TAGS"]

ACTUATOR_TAGS = ("general", "motor", "position", "velocity", "intvelocity", "damper",
                 "cylinder", "muscle", "adhesion")
"""Actuator element kinds; their defaults share one record, as in MuJoCo."""

_MAX_INCLUDES = 64


class Document:
    """The expanded MJCF tree with, for every element, the reader of the file it came from.

    Attributes
    ----------
    root : XmlNode
        The ``<mujoco>`` element with every include spliced in.
    model_name : str
    base_dir : str or None
        Directory of the main file (None for text).
    """

    def __init__(self, root: XmlNode, main: Reader, base_dir: str | None):
        self.root = root
        self.main = main
        self.base_dir = base_dir
        self._readers: dict[int, Reader] = {}
        self._warned: set[str] = set()
        self._keep: list[XmlNode] = []   # resolved copies stay alive: their ids stay unique

    def rd(self, node: XmlNode | None) -> Reader:
        """The reader (file name for messages) of ``node``."""
        return self.main if node is None else self._readers.get(id(node), self.main)

    def same_file(self, copy: XmlNode, node: XmlNode) -> None:
        """Record that ``copy`` (a resolved element) comes from the file of ``node``."""
        if id(node) in self._readers:
            self._readers[id(copy)] = self._readers[id(node)]
        self._keep.append(copy)

    def error(self, node: XmlNode | None, owner: str, message: str) -> MJCFError:
        """Build (not raise) an :class:`MJCFError` at ``node`` in its own file."""
        return self.rd(node).error(node, owner, message)

    def warn(self, node: XmlNode | None, owner: str, message: str) -> None:
        """An :class:`MJCFWarning` at ``node``."""
        self.rd(node).warn(node, owner, message)

    def warn_once(self, key: str, node: XmlNode | None, owner: str, message: str) -> None:
        """One warning per ``key`` (an unsupported element or attribute kind) per document."""
        if key not in self._warned:
            self._warned.add(key)
            self.warn(node, owner, message + " (warned once per document)")


def load_document(path_or_string: PathOrString) -> Document:
    """Read an MJCF file or string and expand its includes.

    Raises
    ------
    MJCFError
        Malformed XML, a root other than ``<mujoco>``, a missing, unreadable or cyclic
        include.
    FileNotFoundError
        ``path_or_string`` is neither an existing file nor XML text.
    """
    text, source, base_dir = read_source(path_or_string, "MJCF", "mujoco")
    main = Reader(source, MJCFError, MJCFWarning)
    root = parse_xml(text, source, MJCFError)
    if root.tag != "mujoco":
        raise main.error(root, "document", f"no <mujoco> element: the root element is <{root.tag}>")
    doc = Document(root, main, base_dir)
    here = os.path.abspath(source) if base_dir is not None else None
    _expand(doc, root, main, base_dir, [here] if here else [], [0])
    return doc


def _expand(doc: Document, node: XmlNode, rd: Reader, directory: str | None,
            chain: list[str], count: list[int]) -> None:
    """Splice includes under ``node`` (iterative over siblings, recursive per file)."""
    stack = [node]
    while stack:
        parent = stack.pop()
        out: list[XmlNode] = []
        for child in parent.children:
            if rd is not doc.main:
                doc._readers[id(child)] = rd
            if child.tag != "include":
                out.append(child)
                stack.append(child)
                continue
            spliced = _read_include(doc, child, rd, directory, chain, count)
            out.extend(spliced)
        parent.children = out


def _read_include(doc: Document, node: XmlNode, rd: Reader, directory: str | None,
                  chain: list[str], count: list[int]) -> list[XmlNode]:
    name = rd.text(node, "file", "include")
    owner = f"include '{name}'"
    if directory is None and not os.path.isabs(name):
        raise rd.error(node, owner, "a relative include needs a model file (the model was "
                                    "given as text): give the path of the file")
    path = os.path.abspath(name if os.path.isabs(name) else os.path.join(directory, name))
    if path in chain:
        cycle = " -> ".join(os.path.basename(p) for p in chain + [path])
        raise rd.error(node, owner, f"include cycle {cycle}")
    count[0] += 1
    if count[0] > _MAX_INCLUDES:
        raise rd.error(node, owner, f"more than {_MAX_INCLUDES} includes")
    try:
        with open(path, "rb") as fh:
            text = fh.read()
    except OSError as exc:
        raise rd.error(node, owner, f"cannot read the included file {path!r}: "
                                    f"{exc.strerror or exc}") from None
    sub = Reader(path, MJCFError, MJCFWarning)
    root = parse_xml(text, sub.source, MJCFError)
    if root.tag != "mujoco":
        raise sub.error(root, "document", f"an included file has the root <mujoco>, found "
                                          f"<{root.tag}>")
    doc._readers[id(root)] = sub
    _expand(doc, root, sub, os.path.dirname(path), chain + [path], count)
    for child in root.iter():
        doc._readers.setdefault(id(child), sub)
    return list(root.children)


@dataclass
class Compiler:
    """The ``<compiler>`` settings used by the reader (MuJoCo's defaults)."""

    degree: bool = True
    eulerseq: str = "xyz"
    inertiafromgeom: str = "auto"       # "auto" | "true" | "false"
    autolimits: bool = True
    settotalmass: float = -1.0
    boundmass: float = 0.0
    boundinertia: float = 0.0
    inertiagrouprange: tuple = (0, 5)

    def angle(self, value: float) -> float:
        """An angle attribute in radians."""
        return value * math.pi / 180.0 if self.degree else value


def _choice(doc: Document, node: XmlNode, attr: str, options: tuple[str, ...], owner: str,
            default: str) -> str:
    value = node.attrib.get(attr, default)
    if value not in options:
        raise doc.error(node, owner, f"{attr}=\"{value}\" must be one of {', '.join(options)}")
    return value


def read_compiler(doc: Document) -> Compiler:
    """Merge every ``<compiler>`` element (document order) into a :class:`Compiler`.

    Raises
    ------
    MJCFError
        Bad values; ``coordinate="global"`` (removed from MuJoCo 2.3.3 on and not read
        here: convert the file to local coordinates).
    """
    c = Compiler()
    for node in doc.root.findall("compiler"):
        rd, own = doc.rd(node), "compiler"
        if "angle" in node.attrib:
            c.degree = _choice(doc, node, "angle", ("degree", "radian"), own, "degree") == "degree"
        if "eulerseq" in node.attrib:
            seq = node.attrib["eulerseq"]
            if len(seq) != 3 or any(ch not in "xyzXYZ" for ch in seq):
                raise doc.error(node, own, f"eulerseq=\"{seq}\" must be three of the letters "
                                           "x, y, z (rotating axes) or X, Y, Z (fixed axes)")
            c.eulerseq = seq
        if "inertiafromgeom" in node.attrib:
            c.inertiafromgeom = _choice(doc, node, "inertiafromgeom", ("auto", "true", "false"),
                                        own, "auto")
        if _choice(doc, node, "coordinate", ("local", "global"), own, "local") == "global":
            raise doc.error(node, own, "coordinate=\"global\" is not supported (MuJoCo dropped "
                                       "it in 2.3.3): give body, joint and geom poses in local "
                                       "coordinates")
        if "autolimits" in node.attrib:
            c.autolimits = _choice(doc, node, "autolimits", ("true", "false"), own, "true") == "true"
        c.settotalmass = rd.number(node, "settotalmass", own, c.settotalmass)
        c.boundmass = rd.number(node, "boundmass", own, c.boundmass)
        c.boundinertia = rd.number(node, "boundinertia", own, c.boundinertia)
        if "inertiagrouprange" in node.attrib:
            lo, hi = rd.vector(node, "inertiagrouprange", own, 2)
            c.inertiagrouprange = (lo, hi)
        if node.attrib.get("balanceinertia", "false") == "true":
            doc.warn_once("balanceinertia", node, own, "balanceinertia=\"true\" is ignored")
        if node.attrib.get("fitaabb", "false") == "true":
            doc.warn_once("fitaabb", node, own, "fitaabb is ignored (it concerns meshes)")
    return c


class Defaults:
    """Default classes: ``attributes(tag, node, active_class)`` merges a class's values for
    an element kind with the element's own attributes (module docstring)."""

    def __init__(self, doc: Document):
        self.doc = doc
        self.classes: dict[str, dict[str, dict[str, str]]] = {"main": {}}
        self.lines: dict[str, int] = {}
        for node in doc.root.findall("default"):
            self._read(node, None)

    def _read(self, top: XmlNode, parent_cls: str | None) -> None:
        stack = [(top, parent_cls)]
        while stack:
            node, parent = stack.pop()
            if parent is None:
                name = node.attrib.get("class", "main")
            else:
                if "class" not in node.attrib:
                    raise self.doc.error(node, "default", "a nested <default> needs a 'class' "
                                                          "attribute")
                name = node.attrib["class"]
            if name in self.lines and name != "main":
                raise self.doc.error(node, f"default class '{name}'", "defined twice (first "
                                     f"at line {self.lines[name]})")
            base = self.classes.get(parent, {}) if parent is not None else self.classes.get(name, {})
            record = {tag: dict(attrs) for tag, attrs in base.items()}
            for child in node.children:
                if child.tag == "default":
                    continue
                key = "actuator" if child.tag in ACTUATOR_TAGS else child.tag
                record.setdefault(key, {}).update(child.attrib)
                if "class" in child.attrib:
                    raise self.doc.error(child, f"default class '{name}'",
                                         f"<{child.tag}> inside <default> cannot have a class")
            self.classes[name] = record
            self.lines[name] = node.line
            for child in reversed(node.findall("default")):
                stack.append((child, name))

    def check_class(self, node: XmlNode, name: str, owner: str) -> str:
        """``name`` if it is a declared class, else an :class:`MJCFError`."""
        if name not in self.classes:
            raise self.doc.error(node, owner, f"unknown default class '{name}' (declared: "
                                              f"{', '.join(sorted(self.classes))})")
        return name

    def resolve(self, node: XmlNode, active: str, owner: str) -> XmlNode:
        """A copy of ``node`` whose attributes are its default class's values overridden by
        its own (same tag, line and file; children not copied)."""
        cls = self.check_class(node, node.attrib.get("class", active), owner)
        key = "actuator" if node.tag in ACTUATOR_TAGS else node.tag
        merged = dict(self.classes[cls].get(key, {}))
        merged.update(node.attrib)
        out = XmlNode(node.tag, merged, node.line)
        self.doc.same_file(out, node)
        return out
