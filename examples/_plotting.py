"""Plotting helpers shared by the examples (matplotlib is an optional dependency)."""
from __future__ import annotations

from typing import Optional


def pyplot():
    """``matplotlib.pyplot`` on the non-interactive Agg backend, or None (with a message)
    when matplotlib is not installed."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (pip install matplotlib)")
        return None
    return plt


def save_figure(fig, path: str) -> Optional[str]:
    """Save ``fig`` to ``path`` at 100 dpi, close it, say so, and return the path."""
    import matplotlib.pyplot as plt
    fig.savefig(path, dpi=100)
    plt.close(fig)
    print(f"wrote {path}")
    return path
