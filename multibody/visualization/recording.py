"""A :class:`Recording`: the frames a :class:`~multibody.visualization.Visualizer` published.

One frame per publish: the time, every body's world pose (position and ``[w, x, y, z]``
quaternion) and the contact points with their forces (the force on body B of each contact,
world axes). A recording lives in the abstract state of the visualizer's context (per run,
cloned with the context), is read with ``Visualizer.get_recording(context)``, replayed in the
browser (``Visualizer.replay``), exported to one HTML file (``Visualizer.export_html``) and
saved to / loaded from a ``.npz`` file (:meth:`Recording.save`, :meth:`Recording.load`).
"""
from __future__ import annotations

import copy
import os
from typing import Sequence

import numpy as np

from .errors import VisualizationError

__all__ = ["Recording"]


class Recording:
    """Frames of body poses and contact forces (module docstring).

    Parameters
    ----------
    body_names : sequence of str
        The bodies, in the order of the pose arrays (``tree.bodies`` order, world first).

    Notes
    -----
    A frame at the time of the last one replaces it (as a log sink does), so a publish that
    runs twice at one time leaves one frame.
    """

    def __init__(self, body_names: Sequence[str]) -> None:
        self.body_names = tuple(body_names)
        self._t: list = []
        self._pos: list = []
        self._quat: list = []
        self._cp: list = []
        self._cf: list = []

    # ------------------------------------------------------------------ writing
    def append(self, t: float, positions, quaternions, contact_points=None,
               contact_forces=None) -> None:
        """Add a frame.

        Parameters
        ----------
        t : float
        positions : array_like, shape (nb, 3)
        quaternions : array_like, shape (nb, 4)
            ``[w, x, y, z]`` per body.
        contact_points, contact_forces : array_like, shape (k, 3), optional
            World contact points and the force on body B at each (N).

        Raises
        ------
        VisualizationError
            Arrays of the wrong shape, or a time before the last frame's.
        """
        nb = len(self.body_names)
        p = np.array(positions, dtype=float).reshape(-1, 3) if np.size(positions) else None
        q = np.array(quaternions, dtype=float).reshape(-1, 4) if np.size(quaternions) else None
        if p is None or q is None or p.shape[0] != nb or q.shape[0] != nb:
            raise VisualizationError(f"Recording.append: expected positions ({nb}, 3) and "
                                     f"quaternions ({nb}, 4) for bodies {list(self.body_names)}"
                                     f", got shapes {np.shape(positions)} and "
                                     f"{np.shape(quaternions)}")
        cp = np.zeros((0, 3)) if contact_points is None else \
            np.array(contact_points, dtype=float).reshape(-1, 3)
        cf = np.zeros((0, 3)) if contact_forces is None else \
            np.array(contact_forces, dtype=float).reshape(-1, 3)
        if cp.shape != cf.shape:
            raise VisualizationError(f"Recording.append: {cp.shape[0]} contact points but "
                                     f"{cf.shape[0]} contact forces")
        t = float(t)
        if self._t and t < self._t[-1]:
            raise VisualizationError(f"Recording.append: time {t} is before the last frame's "
                                     f"time {self._t[-1]} (frames are in time order)")
        if self._t and t == self._t[-1]:
            for lst in (self._t, self._pos, self._quat, self._cp, self._cf):
                lst.pop()
        self._t.append(t)
        self._pos.append(p)
        self._quat.append(q)
        self._cp.append(cp)
        self._cf.append(cf)

    def clear(self) -> None:
        """Forget every frame."""
        for lst in (self._t, self._pos, self._quat, self._cp, self._cf):
            lst.clear()

    def __deepcopy__(self, memo) -> "Recording":
        new = Recording(self.body_names)
        new._t = list(self._t)
        new._pos = [a.copy() for a in self._pos]
        new._quat = [a.copy() for a in self._quat]
        new._cp = [a.copy() for a in self._cp]
        new._cf = [a.copy() for a in self._cf]
        return new

    def copy(self) -> "Recording":
        """An independent copy."""
        return copy.deepcopy(self)

    # ------------------------------------------------------------------ reading
    def __len__(self) -> int:
        return len(self._t)

    @property
    def num_frames(self) -> int:
        """Number of frames."""
        return len(self._t)

    @property
    def times(self) -> np.ndarray:
        """Frame times, shape (N,)."""
        return np.array(self._t, dtype=float)

    @property
    def positions(self) -> np.ndarray:
        """Body positions, shape (N, nb, 3)."""
        return np.array(self._pos, dtype=float).reshape(len(self._t), len(self.body_names), 3)

    @property
    def quaternions(self) -> np.ndarray:
        """Body orientations ``[w, x, y, z]``, shape (N, nb, 4)."""
        return np.array(self._quat, dtype=float).reshape(len(self._t), len(self.body_names), 4)

    def frame(self, i: int) -> tuple:
        """Frame ``i``: time, positions (nb, 3), quaternions (nb, 4), contact points (k, 3)
        and contact forces (k, 3)."""
        return (self._t[i], self._pos[i].copy(), self._quat[i].copy(), self._cp[i].copy(),
                self._cf[i].copy())

    def contacts(self, i: int) -> tuple:
        """Contact points (k, 3) and forces on body B (k, 3) of frame ``i``."""
        return self._cp[i].copy(), self._cf[i].copy()

    def body_position(self, body: str) -> np.ndarray:
        """Positions (N, 3) of one body over the recording."""
        if body not in self.body_names:
            raise VisualizationError(f"Recording: no body '{body}' (bodies: "
                                     f"{list(self.body_names)})")
        return self.positions[:, self.body_names.index(body)]

    def __repr__(self) -> str:
        span = f", t = {self._t[0]:g} .. {self._t[-1]:g}" if self._t else ""
        return f"Recording({len(self._t)} frames, {len(self.body_names)} bodies{span})"

    # ------------------------------------------------------------------ files
    def save(self, path: str) -> str:
        """Write the recording to a ``.npz`` file; returns the path."""
        counts = np.array([c.shape[0] for c in self._cp], dtype=np.int64)
        np.savez_compressed(
            path, body_names=np.array(self.body_names, dtype=str), times=self.times,
            positions=self.positions, quaternions=self.quaternions, contact_counts=counts,
            contact_points=np.concatenate(self._cp) if self._cp else np.zeros((0, 3)),
            contact_forces=np.concatenate(self._cf) if self._cf else np.zeros((0, 3)))
        return path if str(path).endswith(".npz") else f"{path}.npz"

    @classmethod
    def load(cls, path: str) -> "Recording":
        """Read a recording written by :meth:`save`.

        Raises
        ------
        VisualizationError
            The file is missing or is not a recording (names the file).
        """
        if not os.path.isfile(path):
            raise VisualizationError(f"Recording.load: file '{path}' not found")
        keys = ("body_names", "times", "positions", "quaternions", "contact_counts",
                "contact_points", "contact_forces")
        try:
            with np.load(path, allow_pickle=False) as data:
                d = {k: data[k] for k in keys}
        except (KeyError, ValueError, OSError) as exc:
            raise VisualizationError(f"Recording.load: '{path}' is not a recording saved by "
                                     f"Recording.save ({type(exc).__name__}: {exc})") from exc
        rec = cls([str(n) for n in d["body_names"]])
        ends = np.cumsum(d["contact_counts"])
        starts = ends - d["contact_counts"]
        for i, t in enumerate(d["times"]):
            rec.append(t, d["positions"][i], d["quaternions"][i],
                       d["contact_points"][starts[i]:ends[i]],
                       d["contact_forces"][starts[i]:ends[i]])
        return rec
