"""Every example's and benchmark's ``--help``: a whole-sentence description (the docstring's
first paragraph, not its first line cut mid-sentence), help text on every option, and the
defaults shown."""
import argparse
import importlib.util
import os
import pathlib
import subprocess
import sys

import pytest

from _examples import EXAMPLES, load_example

ROOT = pathlib.Path(EXAMPLES).parent
SCRIPTS = sorted(p for p in pathlib.Path(EXAMPLES).glob("*.py") if not p.name.startswith("_"))
BENCHMARKS = sorted(p for p in (ROOT / "benchmarks").glob("*.py")
                    if "argparse" in p.read_text() or "script_parser" in p.read_text())


class _Parsed(Exception):
    """Raised by the patched ``parse_args`` to stop ``main`` once its parser is built."""

    def __init__(self, parser):
        super().__init__()
        self.parser = parser


def _parser_of(path: pathlib.Path, monkeypatch) -> argparse.ArgumentParser:
    """The ArgumentParser that ``main`` of the script at ``path`` builds (``main`` stops at
    ``parse_args``)."""
    def stop(self, args=None, namespace=None):
        raise _Parsed(self)
    if path.parent.name == "examples":
        module = load_example(path.stem)
    else:
        spec = importlib.util.spec_from_file_location(f"bench_help_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", stop)
    with pytest.raises(_Parsed) as info:
        module.main([])
    return info.value.parser


def _assert_complete(parser: argparse.ArgumentParser, name: str) -> None:
    desc = parser.description or ""
    assert desc.endswith((".", "?")), f"{name}: --help description is not a whole sentence: {desc!r}"
    assert len(desc.split()) >= 5, f"{name}: --help description too short: {desc!r}"
    assert issubclass(parser.formatter_class, argparse.ArgumentDefaultsHelpFormatter), \
        f"{name}: --help does not show the defaults"
    text = parser.format_help()
    for action in parser._actions:                       # argparse has no public list
        if isinstance(action, argparse._HelpAction) or action.help == argparse.SUPPRESS:
            continue
        opt = "/".join(action.option_strings) or action.dest
        assert action.help and action.help.strip(), f"{name}: option {opt} has no help text"
        if action.default not in (None, False):
            shown = "".join(f"(default: {action.default})".split())
            assert shown in "".join(text.split()), \
                f"{name}: option {opt} does not show its default {action.default!r}"
    assert "".join(desc.split()) in "".join(text.split())      # wrapped, but all of it


@pytest.mark.parametrize("path", SCRIPTS + BENCHMARKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_help_has_a_whole_description_and_help_for_every_option(path, monkeypatch):
    _assert_complete(_parser_of(path, monkeypatch), f"{path.parent.name}/{path.name}")


def test_every_example_and_benchmark_with_a_command_line_is_checked():
    names = {p.name for p in SCRIPTS}
    assert {"human_walking.py", "quickstart.py", "acrobot_lqr.py"} <= names
    assert {"bench_acrobot_lqr.py", "bench_monte_carlo.py"} <= {p.name for p in BENCHMARKS}


def test_human_walking_help_as_printed():
    """The printed ``--help`` of one example, run as a user runs it: the description's last
    sentence is whole and defaults are shown."""
    out = subprocess.run([sys.executable, os.path.join(EXAMPLES, "human_walking.py"), "--help"],
                         capture_output=True, text=True, timeout=300, cwd=ROOT, check=True).stdout
    flat = " ".join(out.split())
    assert "energetic cost, and the HDM experiments." in flat
    assert "(default: 6.0)" in flat                        # --cutoff
    assert "(default: False)" not in flat and "(default: None)" not in flat
