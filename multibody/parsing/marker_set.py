"""Reader of a marker-placement file (pagoda's ``cooper-markers.txt``).

One marker per line, ``#`` starts a comment::

    TakeoMonday:RBHD head  0.70710678 -0.70710678 0

``NAME SEGMENT X Y Z``: the marker's name (a subject prefix ``Subject:`` is kept here; see
:meth:`MarkerPlacement.short_name`), the segment it is attached to, and its position as
fractions of the segment's half extents (as the skeleton's joint anchors, so ``(0 0 -1)`` is the
centre of the segment's -z face). :func:`marker_offsets` converts them to metres in the body
frames of a tree built by :func:`~multibody.parsing.skeleton_tree`.
"""
from __future__ import annotations

import os
import pathlib
import re
from dataclasses import dataclass

import numpy as np

from .skeleton import Skeleton, SkeletonError

__all__ = ["MarkerPlacement", "parse_marker_set", "read_marker_set", "marker_offsets"]

_NUMBER = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")


@dataclass
class MarkerPlacement:
    """A marker: ``name``, ``segment``, ``fraction`` (3,) of the half extents, file ``line``."""

    name: str
    segment: str
    fraction: np.ndarray
    line: int = 0

    @property
    def short_name(self) -> str:
        """The name without a subject prefix (``"Subject:RBHD"`` -> ``"RBHD"``)."""
        return self.name.rsplit(":", 1)[-1]


def parse_marker_set(text: str, source: str = "<string>") -> list[MarkerPlacement]:
    """Parse marker-placement text (module docstring for the format).

    Parameters
    ----------
    text : str
    source : str
        Name used in error messages.

    Returns
    -------
    list of MarkerPlacement
        In file order.

    Raises
    ------
    SkeletonError
        A line that is not ``NAME SEGMENT X Y Z`` (file, line, what was expected) or a
        duplicate marker name.
    """
    out: list[MarkerPlacement] = []
    seen: dict[str, int] = {}
    for lineno, raw in enumerate(text.splitlines(), start=1):
        body = raw.split("#", 1)[0].strip()
        if not body:
            continue
        tok = body.split()
        where = f"{source}, line {lineno}"
        if len(tok) != 5 or not all(_NUMBER.match(t) for t in tok[2:]):
            raise SkeletonError(f"{where}: expected 'NAME SEGMENT X Y Z' (X Y Z fractions of "
                                f"the segment's half extents), got {body!r}")
        if tok[0] in seen:
            raise SkeletonError(f"{where}: duplicate marker '{tok[0]}' (first on line "
                                f"{seen[tok[0]]})")
        seen[tok[0]] = lineno
        out.append(MarkerPlacement(tok[0], tok[1], np.array([float(t) for t in tok[2:]]), lineno))
    if not out:
        raise SkeletonError(f"{source}: no markers found (expected lines 'NAME SEGMENT X Y Z')")
    return out


def read_marker_set(path: str | os.PathLike) -> list[MarkerPlacement]:
    """Read a marker-placement file: :func:`parse_marker_set` of its text, with the file
    named in the errors (``FileNotFoundError`` when there is no such file)."""
    p = pathlib.Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"marker file '{p}' does not exist")
    return parse_marker_set(p.read_text(), str(path))


def marker_offsets(placements, skeleton: Skeleton, *, source: str = "<markers>",
                   strip_prefix: bool = True) -> list[tuple[str, str, np.ndarray]]:
    """Markers as ``(name, body, offset)`` with the offset in metres in the body frame.

    Parameters
    ----------
    placements : list of MarkerPlacement
    skeleton : Skeleton
        The skeleton whose tree was built by :func:`skeleton_tree` (its segments' ``center``
        locate the segment in the body frame).
    source : str
        Name of the marker file for error messages.
    strip_prefix : bool
        Drop a subject prefix ``"Subject:"`` from the names.

    Raises
    ------
    SkeletonError
        A marker on a segment the skeleton does not have (names marker, segment, line).
    """
    out = []
    for m in placements:
        seg = skeleton.segments.get(m.segment)
        if seg is None:
            raise SkeletonError(f"{source}, line {m.line}: marker '{m.name}' is attached to "
                                f"unknown segment '{m.segment}' (segments: "
                                f"{', '.join(skeleton.segments)})")
        out.append((m.short_name if strip_prefix else m.name, m.segment, seg.point(m.fraction)))
    return out
