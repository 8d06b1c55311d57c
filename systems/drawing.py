"""Graphviz pictures of systems and diagrams.

:func:`to_dot` returns Graphviz source: each leaf system is a record node listing its
input ports (left) and output ports (right), connections are edges between ports, nested
diagrams are clusters, and a diagram's exported ports are small nodes on its border.
:func:`render` writes SVG or PNG through the ``graphviz`` package, which needs the ``dot``
program (Debian/Ubuntu: ``apt-get install graphviz``; macOS: ``brew install graphviz``).
"""
from __future__ import annotations

import os
import re
import shutil
from typing import List, Optional

from .errors import GraphvizNotFoundError

__all__ = ["to_dot", "render", "GraphvizNotFoundError"]


def _esc(text: str) -> str:
    return re.sub(r'([{}|<>"\\ ])', r"\\\1", text)


def _html_esc(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


class _Writer:
    def __init__(self):
        self.lines: List[str] = []
        self.count = 0

    def new_id(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    # Each call returns (input endpoints, output endpoints): lists of Graphviz endpoint ids.
    def system(self, system, indent: str):
        if system.is_diagram():
            return self.diagram(system, indent, top=False)
        return self.leaf(system, indent)

    def leaf(self, system, indent: str):
        nid = self.new_id("s")
        ins = "|".join(f"<i{p.index}> {_esc(p.name)}" for p in system.input_ports)
        outs = "|".join(f"<o{p.index}> {_esc(p.name)}" for p in system.output_ports)
        title = f"{_esc(system.name)}\\n({_esc(type(system).__name__)})"
        parts = ([f"{{{ins}}}"] if ins else []) + [title] + ([f"{{{outs}}}"] if outs else [])
        self.lines.append(f'{indent}{nid} [shape=record, label="{{{"|".join(parts)}}}"];')
        return ([f"{nid}:i{p.index}" for p in system.input_ports],
                [f"{nid}:o{p.index}" for p in system.output_ports])

    def diagram(self, diagram, indent: str, top: bool):
        cid = self.new_id("cluster_")
        inner = indent + "  "
        if not top:
            self.lines.append(f"{indent}subgraph {cid} {{")
            self.lines.append(f'{inner}label="{_html_esc(diagram.name)}"; style=rounded; color=gray40;')
        in_nodes, out_nodes = [], []
        for p in diagram.input_ports:
            nid = self.new_id("in")
            self.lines.append(f'{inner}{nid} [shape=cds, style=filled, fillcolor=lightblue, '
                              f'label="{_html_esc(p.name)}"];')
            in_nodes.append(nid)
        for p in diagram.output_ports:
            nid = self.new_id("out")
            self.lines.append(f'{inner}{nid} [shape=cds, style=filled, fillcolor=lightyellow, '
                              f'label="{_html_esc(p.name)}"];')
            out_nodes.append(nid)
        ends = [self.system(s, inner) for s in diagram.subsystems]
        index = {id(s): k for k, s in enumerate(diagram.subsystems)}
        for out, inp in diagram.connections:
            a = ends[index[id(out.system)]][1][out.index]
            b = ends[index[id(inp.system)]][0][inp.index]
            self.lines.append(f"{inner}{a} -> {b};")
        for e, targets in enumerate(diagram.exported_input_ports):
            for t in targets:
                self.lines.append(f"{inner}{in_nodes[e]} -> {ends[index[id(t.system)]][0][t.index]};")
        for j, (k, b) in enumerate(diagram.output_sources):
            self.lines.append(f"{inner}{ends[k][1][b]} -> {out_nodes[j]};")
        if not top:
            self.lines.append(f"{indent}}}")
        return in_nodes, out_nodes


def to_dot(system, *, rankdir: str = "LR") -> str:
    """Graphviz source of ``system`` (a leaf system or a diagram, nested diagrams as clusters).

    Parameters
    ----------
    system : System
    rankdir : str
        Graphviz layout direction, ``"LR"`` (left to right, default) or ``"TB"``.

    Returns
    -------
    str
        DOT source, e.g. for ``graphviz.Source(text)``.
    """
    w = _Writer()
    header = [f'digraph "{_html_esc(system.name)}" {{',
              f"  rankdir={rankdir}; fontname=Helvetica; node [fontname=Helvetica, fontsize=11];",
              f'  label="{_html_esc(system.name)}"; labelloc=t;']
    if system.is_diagram():
        w.diagram(system, "  ", top=True)
    else:
        w.leaf(system, "  ")
    return "\n".join(header + w.lines + ["}"]) + "\n"


def render(system, path, *, format: Optional[str] = None) -> str:
    """Render ``system`` to ``path`` (format from the extension: ``.svg``, ``.png``, ``.pdf``).

    Returns the written path. Raises :class:`GraphvizNotFoundError` when the ``dot``
    program is missing (install Graphviz: ``apt-get install graphviz``).
    """
    import graphviz
    path = os.fspath(path)
    stem, ext = os.path.splitext(path)
    fmt = format or (ext[1:] if ext else "svg")
    if fmt not in ("svg", "png", "pdf", "dot"):
        raise ValueError(f"render: unsupported format {fmt!r}; use svg, png, pdf or dot")
    source = to_dot(system)
    if fmt == "dot":
        with open(path, "w") as f:
            f.write(source)
        return path
    if shutil.which("dot") is None:
        raise GraphvizNotFoundError(
            "render: the Graphviz 'dot' program was not found on PATH; install Graphviz "
            "(Debian/Ubuntu: apt-get install graphviz, macOS: brew install graphviz) or use "
            "system.to_dot() to get the source")
    data = graphviz.Source(source).pipe(format=fmt)
    with open(path if ext else f"{path}.{fmt}", "wb") as f:
        f.write(data)
    return path if ext else f"{path}.{fmt}"
