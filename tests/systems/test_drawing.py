"""Graphviz: DOT source structure and rendering (or the clear error when dot is missing)."""
import shutil

import pytest

from systems import DiagramBuilder
from systems.drawing import GraphvizNotFoundError, render
from systems.primitives import ConstantVectorSource, Gain, Integrator


def _nested():
    ib = DiagramBuilder("controller")
    g = ib.add_system(Gain(2.0, size=1, name="kp"))
    ib.export_input(g.get_input_port(), "error")
    ib.export_output(g.get_output_port(), "command")
    inner = ib.build()
    b = DiagramBuilder("loop")
    src = b.add_system(ConstantVectorSource([1.0], name="reference"))
    b.add_system(inner)
    plant = b.add_system(Integrator(1, name="plant"))
    b.connect(src.get_output_port(), inner.get_input_port("error"))
    b.connect(inner.get_output_port("command"), plant.get_input_port())
    b.export_output(plant.get_output_port(), "x")
    return b.build()


def test_dot_source_lists_systems_ports_edges_and_clusters():
    dot = _nested().to_dot()
    assert dot.startswith('digraph "loop"')
    assert "subgraph cluster_" in dot and 'label="controller"' in dot
    for text in ("reference", "kp", "plant", "<i0> u", "<o0> y", 'label="x"', 'label="error"',
                 'label="command"'):
        assert text in dot, text
    # reference.y -> controller.error (border node) -> kp.u; kp.y -> command -> plant.u; plant.y -> x
    assert dot.count("->") == 5


def test_leaf_system_dot():
    dot = Gain(1.0, size=2, name="k").to_dot()
    assert "k\\n(Gain)" in dot and "->" not in dot


def test_render_svg_or_clear_error(tmp_path, monkeypatch):
    d = _nested()
    if shutil.which("dot"):
        path = d.render(tmp_path / "loop.svg")
        assert open(path).read().lstrip().startswith(("<?xml", "<svg"))
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(GraphvizNotFoundError, match="apt-get install graphviz"):
        render(d, tmp_path / "loop.png")
    assert render(d, tmp_path / "loop.dot").endswith("loop.dot")
    with pytest.raises(ValueError, match="unsupported format 'jpg'"):
        render(d, tmp_path / "loop.jpg")
