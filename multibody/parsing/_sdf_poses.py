"""SDFormat poses and the frame graph of one model (private to the SDFormat reader).

:func:`read_pose` reads a ``<pose>`` element (``x y z roll pitch yaw``, ``degrees="true"``,
``rotation_format="quat_xyzw"``); :class:`FrameGraph` resolves every named frame of a model
(``__model__``, ``world``, links, joints, ``<frame>`` elements) to its pose in the world and
to the link it is attached to, following ``relative_to`` and ``attached_to`` chains with
cycle detection (SDFormat 1.7+ "pose frame semantics", http://sdformat.org/tutorials?tut=pose_frame_semantics_proposal).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._xml import Reader, XmlNode, rpy_to_matrix

__all__ = ["read_pose", "quat_xyzw_to_matrix", "inverse", "FrameEntry", "FrameGraph", "MODEL_FRAME",
           "WORLD"]

MODEL_FRAME = "__model__"
WORLD = "world"


def quat_xyzw_to_matrix(q: np.ndarray) -> np.ndarray:
    """Rotation matrix of a quaternion given as ``(x, y, z, w)`` (normalized here)."""
    big = float(np.abs(q).max())
    x, y, z, w = q / big
    n = math.sqrt(x * x + y * y + z * z + w * w)
    x, y, z, w = x / n, y / n, z / n, w / n
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def read_pose(node: XmlNode | None, rd: Reader, owner: str) -> tuple[np.ndarray, str | None]:
    """``(X, relative_to)`` of a ``<pose>`` element (identity and None when absent).

    The text is ``x y z roll pitch yaw`` (radians, or degrees with ``degrees="true"``,
    SDFormat 1.9+; ``R = Rz(yaw) Ry(pitch) Rx(roll)``) or, with
    ``rotation_format="quat_xyzw"``, ``x y z qx qy qz qw`` (normalized; zero refused).
    """
    if node is None:
        return np.eye(4), None
    if node.attrib.get("frame"):
        raise rd.error(node, owner, f"<pose frame=\"{node.attrib['frame']}\"> is the SDFormat "
                                    "1.5 frame syntax, not supported: use relative_to (1.7+)")
    fmt = node.attrib.get("rotation_format", "euler_rpy").strip()
    degrees = node.attrib.get("degrees", "false").strip().lower()
    if degrees not in ("true", "false", "1", "0"):
        raise rd.error(node, owner, f"<pose degrees=\"{node.attrib['degrees']}\"> must be true "
                                    "or false")
    if fmt not in ("euler_rpy", "quat_xyzw"):
        raise rd.error(node, owner, f"<pose rotation_format=\"{fmt}\"> must be euler_rpy or "
                                    "quat_xyzw")
    size = 7 if fmt == "quat_xyzw" else 6
    text = node.text if node.text.strip() else "0 0 0 " + ("0 0 0 1" if size == 7 else "0 0 0")
    values = rd.numbers(node, text, "<pose>", owner, sizes=(size,))
    if np.any(np.abs(values[:3]) > 1e150):
        raise rd.error(node, owner, f"<pose> offset {values[:3].tolist()} exceeds 1e150 m")
    X = np.eye(4)
    X[:3, 3] = values[:3]
    if size == 7:
        if not np.any(values[3:]):
            raise rd.error(node, owner, "<pose> quaternion (qx qy qz qw) is zero")
        X[:3, :3] = quat_xyzw_to_matrix(values[3:])
    else:
        angles = values[3:]
        if degrees in ("true", "1"):
            angles = np.deg2rad(angles)
        if np.any(np.abs(angles) > 1e9):
            raise rd.error(node, owner, f"<pose> angles {values[3:].tolist()} are too large "
                                        "to be meaningful")
        X[:3, :3] = rpy_to_matrix(angles)
    rel = node.attrib.get("relative_to")
    return X, (rel if rel else None)


def inverse(X: np.ndarray) -> np.ndarray:
    """Inverse of a rigid transform."""
    Y = np.eye(4)
    Y[:3, :3] = X[:3, :3].T
    Y[:3, 3] = -X[:3, :3].T @ X[:3, 3]
    return Y


@dataclass
class FrameEntry:
    """A named frame of the model before resolution.

    ``kind``: "link", "joint" or "frame"; ``pose``: the pose as written, relative to
    ``relative_to`` (None: the kind's default); ``attached_to``: for a frame, the frame it is
    attached to (None: the model frame); for a joint, its child frame name.
    """

    name: str
    kind: str
    pose: np.ndarray
    relative_to: str | None
    attached_to: str | None
    node: XmlNode


class FrameGraph:
    """World poses and attached links of the named frames of one model.

    Parameters
    ----------
    model_name : str
    X_WM : ndarray, shape (4, 4)
        Pose of the model frame in the world.
    canonical_link : str or None
        The link the model frame is attached to (None: the model has no link).
    entries : dict
        ``{name: FrameEntry}`` of the links, joints and frames (names are unique).
    rd : Reader
    """

    def __init__(self, model_name: str, X_WM: np.ndarray, canonical_link: str | None,
                 entries: dict[str, FrameEntry], rd: Reader):
        self.model_name = model_name
        self.X_WM = X_WM
        self.canonical = canonical_link
        self.entries = entries
        self.rd = rd
        self._pose: dict[str, np.ndarray] = {WORLD: np.eye(4), MODEL_FRAME: X_WM}
        self._body: dict[str, str] = {WORLD: WORLD}

    def _entry(self, name: str, node: XmlNode, owner: str, what: str) -> FrameEntry | None:
        if name in (WORLD, MODEL_FRAME):
            return None
        if name not in self.entries:
            known = sorted(self.entries)
            raise self.rd.error(node, owner, f"{what} '{name}' names no frame of model "
                                             f"'{self.model_name}' (known: world, __model__, "
                                             f"{', '.join(known[:20])}{' ...' if len(known) > 20 else ''})")
        return self.entries[name]

    def world_pose(self, name: str, node: XmlNode | None = None, owner: str = "",
                   what: str = "relative_to") -> np.ndarray:
        """``X_WF`` of the frame ``name``, following its relative_to chain.

        Raises
        ------
        SDFError
            An unknown frame name (at ``node``, for ``owner``) or a cycle of relative_to.
        """
        chain: list[str] = []
        cur = name
        while cur not in self._pose:
            if cur in chain:
                loop = " -> ".join(chain[chain.index(cur):] + [cur])
                first = self.entries[cur]
                raise self.rd.error(first.node, f"{first.kind} '{first.name}'",
                                    f"the relative_to chain {loop} is a cycle")
            e = self._entry(cur, node, owner, what)
            chain.append(cur)
            node, owner, what = e.node, f"{e.kind} '{e.name}'", "relative_to"
            cur = self._default_relative(e)
        X = self._pose[cur]
        for n in reversed(chain):
            X = X @ self.entries[n].pose
            self._pose[n] = X
        return self._pose[name]

    def _default_relative(self, e: FrameEntry) -> str:
        if e.relative_to is not None:
            return e.relative_to
        if e.kind == "link":
            return MODEL_FRAME
        if e.kind == "joint":
            return e.attached_to           # the child frame
        return e.attached_to if e.attached_to is not None else MODEL_FRAME

    def body_of(self, name: str, node: XmlNode, owner: str, what: str) -> str:
        """The link (or ``"world"``) the frame ``name`` is attached to."""
        chain: list[str] = []
        while name not in self._body:
            if name == MODEL_FRAME:
                if self.canonical is None:
                    raise self.rd.error(node, owner, f"model '{self.model_name}' has no link, so "
                                                     "its model frame is attached to nothing")
                name = self.canonical
                continue
            e = self._entry(name, node, owner, what)
            if e.kind == "link":
                self._body[name] = name
                break
            if name in chain:
                loop = " -> ".join(chain[chain.index(name):] + [name])
                raise self.rd.error(e.node, f"{e.kind} '{e.name}'",
                                    f"the attached_to chain {loop} is a cycle")
            chain.append(name)
            node, owner, what = e.node, f"{e.kind} '{e.name}'", "attached_to"
            name = e.attached_to if e.attached_to is not None else MODEL_FRAME
        body = self._body[name]
        for n in chain:
            self._body[n] = body
        return body

    def relative_pose(self, X: np.ndarray, relative_to: str | None, default: str,
                      node: XmlNode, owner: str) -> np.ndarray:
        """World pose of an element written as ``X`` relative to ``relative_to``."""
        return self.world_pose(relative_to or default, node, owner) @ X
