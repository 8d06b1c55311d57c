"""Test helper: static checks of the package layering (ARCHITECTURE.md), from the source text.

Each check returns a list of human-readable violations; ``tests/test_layering.py`` asserts
they are empty on the project and non-empty on small synthetic trees (so the checks can fail).
"""
from __future__ import annotations

import ast
import pathlib
from typing import Dict, Iterable, List, Set

PACKAGES = ("dynablocks", "systems", "multibody", "sensors", "actuators", "solvers")

LOWEST = "dynablocks"
"""The lowest layer: every package may import it; it imports no other project package."""


def module_files(root: pathlib.Path, packages: Iterable[str] = PACKAGES) -> Dict[str, pathlib.Path]:
    """Dotted module name -> file, for every ``.py`` file of the packages under ``root``."""
    out = {}
    for top in packages:
        for p in sorted((root / top).rglob("*.py")):
            parts = p.relative_to(root).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            out[name] = p
    return out


def _package_of(name: str, path: pathlib.Path) -> str:
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _imports(name: str, path: pathlib.Path):
    """Yield ``(target_module, imported_name_or_None, lineno)`` for every import in the file
    (function-level imports included), relative imports resolved."""
    tree = ast.parse(path.read_text(), str(path))
    pkg = _package_of(name, path)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = pkg.split(".")
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            for a in node.names:
                yield base, a.name, node.lineno
        elif isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, None, node.lineno


def import_graph(root: pathlib.Path, packages: Iterable[str] = PACKAGES) -> Dict[str, Set[str]]:
    """Module -> modules it imports (project modules only; ``from pkg import mod`` counts as an
    import of ``pkg.mod`` when that is a module, else of ``pkg``)."""
    mods = module_files(root, packages)
    graph: Dict[str, Set[str]] = {m: set() for m in mods}
    for m, p in mods.items():
        for base, nm, _ in _imports(m, p):
            for cand in ((f"{base}.{nm}", base) if nm else (base,)):
                if cand in graph:
                    if cand != m:
                        graph[m].add(cand)
                    break
    return graph


def import_cycles(root: pathlib.Path, packages: Iterable[str] = PACKAGES) -> List[List[str]]:
    """Strongly connected components of more than one module in the import graph, where a
    package's ``__init__`` (which re-exports its modules) is left out of the cycle test."""
    graph = import_graph(root, packages)
    mods = module_files(root, packages)
    inits = {m for m, p in mods.items() if p.name == "__init__.py"}
    g = {m: {w for w in ws if w not in inits} for m, ws in graph.items() if m not in inits}
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on: Set[str] = set()
    cycles: List[List[str]] = []
    counter = [0]

    def visit(v0: str) -> None:                      # iterative Tarjan
        work = [(v0, iter(sorted(g[v0])))]
        index[v0] = low[v0] = counter[0]; counter[0] += 1
        stack.append(v0); on.add(v0)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]; counter[0] += 1
                    stack.append(w); on.add(w)
                    work.append((w, iter(sorted(g[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    x = stack.pop(); on.discard(x); comp.append(x)
                    if x == v:
                        break
                if len(comp) > 1:
                    cycles.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return cycles


def lowest_layer_imports(root: pathlib.Path, packages: Iterable[str] = PACKAGES,
                         lowest: str = LOWEST) -> List[str]:
    """Imports of another project package from the lowest layer (``dynablocks``)."""
    others = tuple(p for p in packages if p != lowest)
    bad = []
    for m, p in module_files(root, (lowest,)).items():
        for base, nm, line in _imports(m, p):
            if base.split(".")[0] in others:
                bad.append(f"{p.relative_to(root)}:{line}: the lowest layer '{lowest}' "
                           f"imports '{base}'")
    return bad


BELOW_MULTIBODY = ("dynablocks", "solvers", "systems")
"""The layers below ``multibody`` (and ``actuators``, ``sensors``): they import none of those."""

HEAVY_SYSTEMS = ("systems.analysis", "systems.controllers", "systems.primitives",
                 "systems.trajectory_optimization", "systems.symbolic", "systems.drawing")
"""What ``import multibody.tree`` must not load: the tree builds on the System base only."""


def upward_imports(root: pathlib.Path, lower: Iterable[str] = BELOW_MULTIBODY,
                   upper: Iterable[str] = ("multibody", "actuators", "sensors")) -> List[str]:
    """Imports (function-level ones included) of an ``upper`` package from a module of a
    ``lower`` one: ``systems`` sits below ``multibody``, never the other way round."""
    bad = []
    for m, p in module_files(root, tuple(lower)).items():
        for base, nm, line in _imports(m, p):
            if base.split(".")[0] in tuple(upper):
                bad.append(f"{p.relative_to(root)}:{line}: '{m.split('.')[0]}' (a lower layer) "
                           f"imports '{base}'")
    return bad


def _is_private(segment: str) -> bool:
    return segment.startswith("_") and not segment.startswith("__")


def private_imports_across_packages(root: pathlib.Path,
                                    packages: Iterable[str] = PACKAGES) -> List[str]:
    """Imports of a private module or name (``_x``) from outside the package that owns it."""
    mods = module_files(root, packages)
    tops = tuple(packages)
    bad = []
    for m, p in mods.items():
        pkg = _package_of(m, p)
        for base, nm, line in _imports(m, p):
            if not base.split(".")[0] in tops:
                continue
            full = f"{base}.{nm}" if nm and nm != "*" else base
            parts = full.split(".")
            for i, seg in enumerate(parts):
                if _is_private(seg):
                    owner = ".".join(parts[:i])
                    if owner != pkg:
                        bad.append(f"{p.relative_to(root)}:{line}: imports private "
                                   f"'{full}' owned by package '{owner}'")
                    break
    return bad


def private_imports_in_scripts(root: pathlib.Path, folder: str,
                               packages: Iterable[str] = PACKAGES) -> List[str]:
    """Scripts (examples) importing a private module or name of the project packages."""
    bad = []
    for p in sorted((root / folder).rglob("*.py")):
        for base, nm, line in _imports("", p):
            if base.split(".")[0] not in tuple(packages):
                continue
            full = f"{base}.{nm}" if nm and nm != "*" else base
            if any(_is_private(seg) for seg in full.split(".")):
                bad.append(f"{p.relative_to(root)}:{line}: imports private '{full}'")
    return bad


def private_attribute_access(root: pathlib.Path,
                             packages: Iterable[str] = PACKAGES) -> List[str]:
    """``obj._name`` where ``obj`` is not ``self``/``cls`` and the module does not itself own an
    attribute ``_name`` (assigned as ``self._name`` or declared in a class body there): a read
    or write of another module's private attribute."""
    mods = module_files(root, packages)
    bad = []
    for m, p in mods.items():
        tree = ast.parse(p.read_text(), str(p))
        own: Set[str] = set()
        outside: Set[str] = set()      # names bound to modules of other distributions (sys, ...)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.split(".")[0] not in tuple(packages):
                        outside.add(a.asname or a.name.split(".")[0])
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                    and node.value.id in ("self", "cls") and isinstance(node.ctx, ast.Store):
                own.add(node.attr)
            elif isinstance(node, ast.ClassDef):
                for st in node.body:
                    if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        own.add(st.name)
                    elif isinstance(st, (ast.Assign, ast.AnnAssign)):
                        for t in (st.targets if isinstance(st, ast.Assign) else [st.target]):
                            if isinstance(t, ast.Name):
                                own.add(t.id)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and _is_private(node.attr):
                v = node.value
                if isinstance(v, ast.Name) and (v.id in ("self", "cls") or v.id in outside):
                    continue
                if node.attr in own:
                    continue
                bad.append(f"{p.relative_to(root)}:{node.lineno}: "
                           f"{ast.unparse(v)[:40]}.{node.attr}")
    return bad
