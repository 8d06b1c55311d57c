"""Viewer flags shared by the examples (``--viewer``, ``--html PATH``; extra [viz])."""
from __future__ import annotations

import argparse
from typing import Optional

from multibody.visualization import ViewerUnavailableError, require_viewer


def add_viewer_arguments(parser: argparse.ArgumentParser, what: str = "the run") -> None:
    """Add ``--viewer`` (watch in a web browser) and ``--html PATH`` (save one HTML file)."""
    parser.add_argument("--viewer", action="store_true",
                        help=f"show {what} in a web browser (needs the [viz] extra)")
    parser.add_argument("--html", metavar="PATH", help=f"save {what} as one HTML file")


def viewer_options(args: argparse.Namespace, contact_force_scale: float) -> Optional[dict]:
    """The ``Visualizer`` keywords the flags ask for, or None without them; exits with the
    install command when viser is missing."""
    if not (args.viewer or args.html):
        return None
    try:
        require_viewer()
    except ViewerUnavailableError as exc:
        raise SystemExit(f"--viewer/--html: {exc}") from None
    return {"publish_period": 1 / 30, "live": args.viewer,
            "contact_force_scale": contact_force_scale}
