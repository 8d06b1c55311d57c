"""A one-line text progress bar for per-frame work (drawn on a terminal only)."""
from __future__ import annotations

import sys
import time
from typing import Optional, TextIO

__all__ = ["FrameProgress"]


class FrameProgress:
    """Progress over ``total`` frames on one line of ``stream`` (default stderr).

    Drawn when ``enabled`` is True, or when it is None and the stream is a terminal; the
    first draw waits ``delay`` seconds of wall time and redraws are at most every
    ``interval`` seconds, so short runs print nothing.
    """

    def __init__(self, total: int, label: str, *, enabled: Optional[bool] = None,
                 stream: Optional[TextIO] = None, delay: float = 0.5, interval: float = 0.2):
        self.stream = sys.stderr if stream is None else stream
        if enabled is None:
            isatty = getattr(self.stream, "isatty", None)
            enabled = bool(isatty and isatty())
        self.enabled = bool(enabled)
        self.total, self.label = max(int(total), 1), label
        self.interval = float(interval)
        self._t0 = time.perf_counter()
        self._next = self._t0 + float(delay)
        self._drawn = False

    def update(self, done: int) -> None:
        """Redraw for ``done`` frames finished, if due."""
        if not self.enabled:
            return
        now = time.perf_counter()
        if now < self._next and done < self.total:
            return
        self._next = now + self.interval
        frac = min(done / self.total, 1.0)
        bar = "#" * int(30 * frac)
        rate = done / max(now - self._t0, 1e-9)
        self.stream.write(f"\r{self.label} [{bar:<30}] {done}/{self.total} frames "
                          f"({rate:.0f}/s)")
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        """Finish the line if anything was drawn."""
        if self.enabled and self._drawn:
            self.update(self.total)
            self.stream.write("\n")
            self.stream.flush()
