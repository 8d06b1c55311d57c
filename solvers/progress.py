"""One-line text progress for long loops (simulations, per-frame analysis, Monte Carlo batches).

:class:`ProgressLine` is the one progress display of the project: the Simulator (simulated
time), :mod:`multibody.motion` (frames), :func:`systems.analysis.monte_carlo` (samples) all
draw through it. It lives in ``solvers``, the lowest layer every package may import (the
multibody tree and the systems framework both sit above it), next to the other shared
infrastructure (the compiled-call cache).

The line reads ``label [#####-----]  50.0%  <note>  wall 1.2 s`` and is redrawn in place
(carriage return). It is drawn only on a terminal (or when asked), only after ``delay``
seconds of wall time, and at most every ``interval`` seconds, so short runs and test logs
print nothing. It never touches the computation it reports on: results are identical with
and without it.
"""
from __future__ import annotations

import sys
import time
from typing import Optional, TextIO

__all__ = ["ProgressLine"]


class ProgressLine:
    """Progress of ``done`` from ``start`` to ``stop`` on one line of ``stream``.

    The fraction shown is ``(done - start) / (stop - start)``, clipped to [0, 1] (1 when the
    span is empty).

    Parameters
    ----------
    stop : float
        The value of ``done`` at completion (a final time, a number of frames or samples).
    label : str
        Shown first on the line (``"simulating"``, ``"marker fit"``).
    start : float
        The value of ``done`` at the beginning (default 0).
    enabled : bool, optional
        Draw (True: also a short run gets its final line at :meth:`close`), never draw
        (False), or draw when ``stream`` is a terminal (None: a run shorter than ``delay``
        prints nothing).
    stream : text stream, optional
        Where to draw (default ``sys.stderr``).
    delay : float
        Wall-clock seconds before the first draw.
    interval : float
        Minimum wall-clock seconds between two draws.
    width : int
        Characters of the bar.
    note_format : str, optional
        Format of the note drawn after the percentage when :meth:`update` gets none, applied
        to ``done`` (``"t={:.4g} s"``, ``"{:.0f}/20 frames"``); formatted only when drawn, so
        a per-step ``update(t)`` stays cheap.

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> bar = ProgressLine(4, "frames", enabled=True, stream=out, delay=0.0, interval=0.0)
    >>> bar.update(2, "2/4 frames")
    >>> bar.close()
    >>> "50.0%" in out.getvalue() and "100.0%" in out.getvalue()
    True
    """

    def __init__(self, stop: float, label: str, *, start: float = 0.0,
                 enabled: Optional[bool] = None, stream: Optional[TextIO] = None,
                 delay: float = 1.0, interval: float = 0.2, width: int = 30,
                 note_format: Optional[str] = None):
        self.stream = sys.stderr if stream is None else stream
        self._forced = enabled is True
        if enabled is None:
            isatty = getattr(self.stream, "isatty", None)
            enabled = bool(isatty and isatty())
        self.enabled = bool(enabled)
        self.label = str(label)
        self.start, self.stop = float(start), float(stop)
        self.width, self.interval = int(width), float(interval)
        self._wall0 = time.perf_counter()
        self._next_draw = self._wall0 + float(delay)
        self._drawn = False
        self.note_format = note_format
        self._last: tuple[float, Optional[str]] = (self.start, None)

    @property
    def drawn(self) -> bool:
        """True once the line has been drawn at least once."""
        return self._drawn

    def fraction(self, done: float) -> float:
        """``(done - start) / (stop - start)`` clipped to [0, 1] (1 for an empty span)."""
        span = self.stop - self.start
        if span <= 0:
            return 1.0
        return min(1.0, max(0.0, (float(done) - self.start) / span))

    def update(self, done: float, note: Optional[str] = None) -> None:
        """Record progress ``done`` (with an optional ``note`` such as ``"t=0.5 s"``) and
        redraw if a draw is due."""
        self._last = (done, note)
        if not self.enabled:
            return
        now = time.perf_counter()
        if now < self._next_draw:
            return
        self._next_draw = now + self.interval
        self._draw(done, note, now)

    def _draw(self, done: float, note: Optional[str], now: float) -> None:
        if note is None:
            note = self.note_format.format(done) if self.note_format else ""
        frac = self.fraction(done)
        n = int(round(frac * self.width))
        bar = "#" * n + "-" * (self.width - n)
        note = f"  {note}" if note else ""
        self.stream.write(f"\r{self.label} [{bar}] {100 * frac:5.1f}%{note}  "
                          f"wall {now - self._wall0:.1f} s")
        self.stream.flush()
        self._drawn = True

    def close(self, done: Optional[float] = None, note: Optional[str] = None) -> None:
        """Draw the final state (``done``/``note`` default to the last update) and end the
        line, if the line was ever drawn or drawing was asked for (``enabled=True``)."""
        if not (self.enabled and (self._drawn or self._forced)):
            return
        last_done, last_note = self._last
        self._draw(last_done if done is None else done,
                   last_note if note is None else note, time.perf_counter())
        self.stream.write("\n")
        self.stream.flush()
