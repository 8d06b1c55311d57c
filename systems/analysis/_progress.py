"""A one-line text progress bar for long simulations (shown on a terminal only)."""
from __future__ import annotations

import sys
import time
from typing import Optional, TextIO

__all__ = ["ProgressBar"]


class ProgressBar:
    """Progress of simulated time from ``t_start`` to ``t_end`` on one terminal line.

    Silent unless ``enabled`` is True, or ``enabled`` is None and ``stream`` is a TTY. It
    appears only once the run has lasted ``delay`` seconds of wall time and redraws at
    most every ``interval`` seconds, so short runs print nothing.
    """

    def __init__(self, t_start: float, t_end: float, *, enabled: Optional[bool] = None,
                 stream: Optional[TextIO] = None, delay: float = 1.0, interval: float = 0.1,
                 width: int = 30):
        self.stream = sys.stderr if stream is None else stream
        if enabled is None:
            isatty = getattr(self.stream, "isatty", None)
            enabled = bool(isatty and isatty())
        self.enabled = enabled
        self.t_start, self.t_end = float(t_start), float(t_end)
        self.width, self.interval = int(width), float(interval)
        self._wall0 = time.perf_counter()
        self._next_draw = self._wall0 + float(delay)
        self._drawn = False

    def update(self, t: float) -> None:
        """Redraw for simulated time ``t`` if due."""
        if not self.enabled:
            return
        now = time.perf_counter()
        if now < self._next_draw:
            return
        self._next_draw = now + self.interval
        self._draw(t, now)

    def _draw(self, t: float, now: float) -> None:
        span = self.t_end - self.t_start
        frac = 1.0 if span <= 0 else min(1.0, max(0.0, (t - self.t_start) / span))
        n = int(round(frac * self.width))
        bar = "#" * n + "-" * (self.width - n)
        self.stream.write(f"\rsimulating [{bar}] {100 * frac:5.1f}%  t={t:.4g} s  "
                          f"wall {now - self._wall0:.1f} s")
        self.stream.flush()
        self._drawn = True

    def close(self, t: float) -> None:
        """Draw the final state and end the line (only if the bar was ever shown)."""
        if self.enabled and self._drawn:
            self._draw(t, time.perf_counter())
            self.stream.write("\n")
            self.stream.flush()
