"""Command-line parser shared by the examples and the benchmarks: the description is the
script docstring's whole first paragraph, and every option's help shows its default."""
from __future__ import annotations

import argparse
import re

__all__ = ["HelpFormatter", "description", "script_parser"]


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """``(default: X)`` after every option's help, except for flags (default False) and
    options without a default (None): there it would only say ``False`` or ``None``."""

    def _get_help_string(self, action: argparse.Action) -> str:
        if action.default is None or action.default is False:
            return action.help or ""
        return super()._get_help_string(action)


def description(doc: str) -> str:
    """The first paragraph of a docstring as one line, reStructuredText literals and roles
    unquoted (``x`` -> x, :class:`a.B` -> a.B).

    Raises
    ------
    ValueError
        An empty docstring, or a first paragraph that does not end with a full stop (a
        sentence cut in the middle: the paragraph must be a whole sentence).
    """
    para = (doc or "").strip().split("\n\n")[0]
    text = re.sub(r"``([^`]*)``", r"\1", " ".join(para.split()))
    text = re.sub(r":[a-z]+:`~?([^`]*)`", r"\1", text)          # :class:`~a.B` -> a.B
    if not text.endswith((".", "?", "!")):
        raise ValueError(f"script docstring's first paragraph is not a complete sentence "
                         f"(expected a full stop at its end): {text!r}")
    return text


def script_parser(doc: str, **kwargs) -> argparse.ArgumentParser:
    """An ``ArgumentParser`` described by ``doc``'s first paragraph (:func:`description`)
    whose help shows the defaults (:class:`HelpFormatter`)."""
    return argparse.ArgumentParser(description=description(doc), formatter_class=HelpFormatter,
                                   **kwargs)
