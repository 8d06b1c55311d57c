"""The README's Python blocks run as printed (the quick start saves its files to a temporary
folder; a missing Graphviz ``dot`` is the one error the quick start may end with)."""
import pathlib
import re

import pytest

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def _blocks():
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_the_quick_start_runs_as_printed(tmp_path, monkeypatch):
    block = _blocks()[0]
    code = [ln.split("#")[0] for ln in block.splitlines()]
    assert "DiagramBuilder" in block and not any(".render(" in ln for ln in code)  # no `dot` needed
    monkeypatch.chdir(tmp_path)
    import matplotlib
    matplotlib.use("Agg")
    exec(compile(block, "README.md", "exec"), {})
    assert (tmp_path / "quickstart.png").is_file()
    assert (tmp_path / "quickstart.dot").read_text().startswith("digraph")


def test_the_leaf_system_example_defines_a_working_block():
    block = next(b for b in _blocks() if "class Pendulum(LeafSystem)" in b)
    ns = {}
    exec(compile(block, "README.md", "exec"), ns)
    from systems.symbolic import to_casadi
    p = ns["Pendulum"]()
    cs = to_casadi(p)
    import numpy as np
    np.testing.assert_allclose(np.ravel(cs.f(0, [0.5, 0.1], [], [0.2], [])),
                               [0.1, -9.81 * np.sin(0.5) + 0.2], atol=1e-12)


def test_the_trajectory_optimization_example_runs(capsys):
    block = next(b for b in _blocks() if "DirectCollocation" in b)
    exec(compile(block, "README.md", "exec"), {})
    out = capsys.readouterr().out.split()
    assert out[0] == "True" and out[-2:] == ["(2,", "4)"]


def test_the_viewer_example_records_and_exports(tmp_path, monkeypatch):
    pytest.importorskip("viser", reason="the viewer needs the [viz] extra (viser)")
    block = next(b for b in _blocks() if "add_visualizer" in b)
    monkeypatch.chdir(tmp_path)
    ns = {}
    exec(compile(block, "README.md", "exec"), ns)
    rec = ns["recording"]
    assert len(rec.times) == 31                        # frames at 0, 1/30, ..., 1 s
    assert (tmp_path / "box_drop.html").stat().st_size > 10_000


def test_readme_links_stay_inside_the_repository():
    text = README.read_text()
    for target in re.findall(r"\]\(([^)]+)\)", text):
        assert not re.match(r"[a-z]+://", target) and not target.startswith(".."), target
        assert (README.parent / target).exists(), target
