"""Motion-capture marker data: reading (and, for tests, writing) C3D files.

:func:`read_c3d` returns a :class:`MarkerData`: sample times (s), marker labels, positions
``(T, M, 3)`` in metres (the file's ``POINT:UNITS`` converted) and the frame rate, with occluded
samples (a negative residual, or all-zero coordinates as some systems write) as NaN.
:meth:`MarkerData.select` picks markers by name regardless of a subject prefix
(``"TakeoMonday:RBHD"`` matches ``"RBHD"``) and names the missing ones. C3D input goes through
the maintained ``ezc3d`` library, an optional extra: ``pip install 'dynablocks[mocap]'``.

References
----------
Motion Lab Systems, *The C3D File Format User Guide*, 2008 (POINT group: LABELS, UNITS, RATE).
"""
from __future__ import annotations

import os
import pathlib
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .errors import MotionCaptureError

__all__ = ["MotionCaptureError", "MarkerData", "read_c3d", "write_c3d"]

_UNITS = {"mm": 1e-3, "cm": 1e-2, "m": 1.0, "dm": 0.1, "in": 0.0254}


def _ezc3d():
    try:
        import ezc3d
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("reading C3D files needs the ezc3d library: "
                          "pip install 'dynablocks[mocap]'") from None
    return ezc3d


def _short(label: str) -> str:
    return label.rsplit(":", 1)[-1].strip()


@dataclass
class MarkerData:
    """Marker trajectories.

    Attributes
    ----------
    times : (T,) ndarray
        Sample times (s), starting at 0.
    labels : list of str
        Marker labels as in the source (a subject prefix is kept).
    positions : (T, M, 3) ndarray
        Positions in metres; NaN where a marker is occluded.
    rate_hz : float
        Frame rate (Hz).
    source : str
        File name (or a description) for messages.
    """

    times: np.ndarray
    labels: list
    positions: np.ndarray
    rate_hz: float
    source: str = "<data>"

    def __post_init__(self):
        self.times = np.asarray(self.times, float)
        self.positions = np.asarray(self.positions, float)
        self.labels = [str(x) for x in self.labels]
        if self.times.ndim != 1:
            raise MotionCaptureError(f"{self.source}: times must have shape (T,), got "
                                     f"{self.times.shape}")
        rate = self.rate_hz
        if isinstance(rate, bool) or not isinstance(rate, (int, float, np.number)) \
                or not np.isfinite(rate) or rate <= 0:
            raise MotionCaptureError(f"{self.source}: rate_hz must be a finite number > 0 "
                                     f"(Hz), got {rate!r}")
        self.rate_hz = float(rate)
        T, M = self.times.shape[0], len(self.labels)
        if self.positions.shape != (T, M, 3):
            raise MotionCaptureError(f"{self.source}: positions must have shape (T, M, 3) = "
                                     f"({T}, {M}, 3), got {self.positions.shape}")

    @property
    def names(self) -> list[str]:
        """Labels without a subject prefix (``"Subject:RBHD"`` -> ``"RBHD"``)."""
        return [_short(x) for x in self.labels]

    def visible(self) -> np.ndarray:
        """(T, M) boolean: the marker has a finite position."""
        return np.all(np.isfinite(self.positions), axis=2)

    def select(self, names: Sequence[str]) -> "MarkerData":
        """The markers ``names`` in that order, matched with or without a subject prefix.

        Raises
        ------
        MotionCaptureError
            Markers that are not in the data (all of them listed), or a name that matches
            two labels.
        """
        short = self.names
        idx, missing = [], []
        for n in names:
            exact = [i for i, lab in enumerate(self.labels) if lab == n]
            hits = exact or [i for i, s in enumerate(short) if s == _short(n)]
            if not hits:
                missing.append(n)
            elif len(hits) > 1:
                raise MotionCaptureError(f"{self.source}: marker '{n}' matches several labels: "
                                         f"{', '.join(self.labels[i] for i in hits)}")
            else:
                idx.append(hits[0])
        if missing:
            raise MotionCaptureError(f"{self.source}: {len(missing)} needed marker(s) missing: "
                                     f"{', '.join(missing)} (the data has: "
                                     f"{', '.join(self.labels)})")
        return MarkerData(self.times.copy(), [self.labels[i] for i in idx],
                          self.positions[:, idx, :].copy(), self.rate_hz, self.source)

    def frames(self, start: int = 0, stop: int | None = None, step: int = 1) -> "MarkerData":
        """A slice of the frames (times keep their values; the rate becomes ``rate_hz / step``).

        Raises
        ------
        MotionCaptureError
            ``step`` is not a positive integer.
        """
        if isinstance(step, bool) or not isinstance(step, (int, np.integer)) or step < 1:
            raise MotionCaptureError(f"{self.source}: frames() step must be an integer >= 1, "
                                     f"got {step!r}")
        sl = slice(start, stop, step)
        return MarkerData(self.times[sl].copy(), list(self.labels), self.positions[sl].copy(),
                          self.rate_hz / step, self.source)


def read_c3d(path: str | os.PathLike) -> MarkerData:
    """Read the 3-D points of a C3D file.

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    MarkerData
        Positions in metres (from ``POINT:UNITS``), NaN for occluded samples, times from the
        ``POINT:RATE``.

    Raises
    ------
    FileNotFoundError
        No such file.
    MotionCaptureError
        No points, an unknown unit, or a non-positive rate.
    ImportError
        ezc3d is not installed (the message says ``pip install 'dynablocks[mocap]'``).
    """
    p = pathlib.Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"C3D file '{p}' does not exist")
    ezc3d = _ezc3d()
    try:
        c = ezc3d.c3d(str(p))
    except Exception as exc:  # ezc3d raises RuntimeError/IOError with terse messages
        raise MotionCaptureError(f"{p}: not a readable C3D file ({exc})") from exc
    point = c["parameters"]["POINT"]
    labels = list(point["LABELS"]["value"])
    pts = np.asarray(c["data"]["points"], float)  # (4, M, T)
    if pts.shape[1] == 0 or pts.shape[2] == 0 or not labels:
        raise MotionCaptureError(f"{p}: the file has no 3-D marker points")
    unit = str(point["UNITS"]["value"][0]).strip().lower() if "UNITS" in point else "mm"
    if unit not in _UNITS:
        raise MotionCaptureError(f"{p}: unknown POINT:UNITS {unit!r} (expected one of "
                                 f"{', '.join(_UNITS)})")
    rate = float(np.ravel(point["RATE"]["value"])[0]) if "RATE" in point else \
        float(c["header"]["points"]["frame_rate"])
    if not rate > 0:
        raise MotionCaptureError(f"{p}: frame rate must be positive, got {rate}")
    xyz = np.transpose(pts[:3], (2, 1, 0)) * _UNITS[unit]  # (T, M, 3)
    occluded = np.all(xyz == 0.0, axis=2)
    res = c["data"].get("meta_points", {}).get("residuals")
    if res is not None:
        occluded |= np.transpose(np.asarray(res, float)[0], (1, 0)) < 0
    xyz[occluded] = np.nan
    T = xyz.shape[0]
    return MarkerData(np.arange(T) / rate, labels[:xyz.shape[1]], xyz, rate, str(p))


def write_c3d(path: str | os.PathLike, data: MarkerData) -> None:
    """Write marker positions to a C3D file in millimetres (through ezc3d).

    NaN samples are written as occluded (residual -1). Used to build small test files.

    Parameters
    ----------
    path : str or path-like
        The file to write (overwritten).
    data : MarkerData
        ``positions`` (T, M, 3) in metres, ``labels`` (M,), ``rate_hz``; read back by
        :func:`read_c3d` to the same values (to the file's single-precision floats).

    Raises
    ------
    ImportError
        ezc3d is not installed (the message says ``pip install 'dynablocks[mocap]'``).
    """
    ezc3d = _ezc3d()
    c = ezc3d.c3d()
    c["parameters"]["POINT"]["RATE"]["value"] = [float(data.rate_hz)]
    c["parameters"]["POINT"]["LABELS"]["value"] = list(data.labels)
    c["parameters"]["POINT"]["UNITS"]["value"] = ["mm"]
    xyz = np.transpose(data.positions * 1e3, (2, 1, 0))  # (3, M, T)
    pts = np.ones((4,) + xyz.shape[1:])
    pts[:3] = np.nan_to_num(xyz, nan=0.0)
    c["data"]["points"] = pts
    res = np.zeros((1,) + xyz.shape[1:])
    res[0][np.any(np.isnan(xyz), axis=0)] = -1.0
    c["data"]["meta_points"]["residuals"] = res
    c["data"]["meta_points"]["camera_masks"] = np.zeros((7,) + xyz.shape[1:], dtype=bool)
    c.write(str(path))
