"""The README's Python blocks run as printed (the quick start saves its files to a temporary
folder; a missing Graphviz ``dot`` is the one error the quick start may end with)."""
import pathlib
import re

import pytest

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def _blocks():
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_the_trajectory_optimization_example_runs(capsys):
    block = next(b for b in _blocks() if "DirectCollocation" in b)
    exec(compile(block, "README.md", "exec"), {})
    out = capsys.readouterr().out.split()
    assert out[0] == "True" and out[-2:] == ["(2,", "4)"]


def test_readme_links_stay_inside_the_repository():
    text = README.read_text()
    for target in re.findall(r"\]\(([^)]+)\)", text):
        assert not re.match(r"[a-z]+://", target) and not target.startswith(".."), target
        assert (README.parent / target).exists(), target
