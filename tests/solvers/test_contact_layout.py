"""The compiled contact step's data layout is declared once (issue 21): the C source's enums
and buffer macros are generated from ``solvers.contact_step.layout`` and agree with it
(parsed back out of the source), no bare table index remains in the C code, the numpy twin
or the plant's table writer, and the kernel's status is a record whose fields the C kernel
and the numpy twin fill alike."""
from __future__ import annotations

import ast
import pathlib
import re
import warnings

import numpy as np
import pytest

from solvers import contact_step as cs
from solvers.contact_step import layout as L

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _enums(source: str) -> dict:
    """``NAME -> value`` of every ``enum { A = 1, B = 2 };`` in ``source``."""
    out = {}
    for body in re.findall(r"enum\s*\{([^}]*)\}", source):
        for item in body.split(","):
            name, _, value = item.partition("=")
            if value.strip():
                out[name.strip()] = int(value)
    return out


def _defines(source: str) -> dict:
    return {m[0]: int(m[1]) for m in re.findall(r"#define (\w+) (\d+)\b", source)}


def _eval_size(expr: str, names: dict) -> int:
    """The value of a C size expression of products and sums of names and ints."""
    tree = ast.parse(expr, mode="eval").body

    def ev(node):
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Add)):
            a, b = ev(node.left), ev(node.right)
            return a * b if isinstance(node.op, ast.Mult) else a + b
        if isinstance(node, ast.Name):
            return names[node.id]
        if isinstance(node, ast.Constant):
            return int(node.value)
        raise ValueError(f"unexpected C size expression {expr!r}")
    return ev(tree)


def test_generated_enums_match_the_python_records():
    src = __import__("solvers._contact_step_source", fromlist=["SOURCE"]).SOURCE
    enums = _enums(src)
    records = list(L.RECORDS)
    for kind in L.CANDIDATE_KINDS:
        records.append(kind.double_record())
        if kind.ints:
            records.append(kind.int_record())
        assert enums[f"KIND_{kind.name.upper()}"] == kind.code
    checked = 0
    for rec in records:
        for name, n in rec.fields:
            assert enums[f"{rec.prefix}_{name.upper()}"] == rec.offsets[name]
            checked += 1
        assert enums[f"{rec.prefix}_SIZE"] == rec.size
    assert checked > 60
    for i, jt in enumerate(L.JOINT_TYPES):
        assert enums[f"JT_{jt.upper()}"] == i
    defines = _defines(src)
    assert defines["CI"] == L.CANDIDATE_INTS and defines["CD"] == L.CANDIDATE_DOUBLES
    # a kind's ints follow the common ones; the widest kind sets the candidate's size
    assert L.CANDIDATE_INTS == L.CANDIDATE_COMMON.size + max(len(k.ints) for k in
                                                            L.CANDIDATE_KINDS)
    assert "/*@LAYOUT@*/" not in src


@pytest.mark.parametrize("dims", [dict(nq=7, nv=6, nb=2, nc=8), dict(nq=2, nv=2, nb=3, nc=1),
                                  dict(nq=21, nv=18, nb=4, nc=0)])
def test_generated_section_macros_match_the_python_offsets(dims):
    src = __import__("solvers._contact_step_source", fromlist=["SOURCE"]).SOURCE
    names = dict(_enums(src), **dims)
    for buf in L.BUFFERS:
        m = re.search(rf"#define {buf.macro}\(base\) \\\n((?:.*\\\n)*.*;)", src)
        assert m, buf.macro
        decls = re.findall(r"(\w+) = ([^;]+);", m.group(1))
        offsets = buf.offsets(**dims)
        assert [d[0] for d in decls] == list(offsets)
        start = {}
        for name, expr in decls:
            if expr.strip() == "(base)":
                start[name] = 0
                continue
            prev, _, size = expr.partition(" + ")
            start[name] = start[prev.strip()] + _eval_size(size, names)
        assert start == {k: a for k, (a, _) in offsets.items()}
        # each macro is used by the entry point
        assert f"{buf.macro}(" in src.split("int dbk_contact_step(")[1]


def test_no_bare_table_index_remains():
    """The C code, the numpy twin and the table writer name every field of the layout."""
    c_src = (__import__("solvers._contact_step_source", fromlist=["_TEMPLATE"])._TEMPLATE
             + "".join(__import__(f"solvers.{m}", fromlist=["SOURCE"]).SOURCE
                       for m in ("_contact_step_c_pgs", "_contact_step_c_steps",
                                 "_contact_step_c_linalg")))
    numpy_src = "\n".join((ROOT / "solvers" / f).read_text()
                          for f in ("_contact_step_numpy.py", "_contact_step_numpy_polish.py"))
    writer = "\n".join((ROOT / "multibody" / "plants" / f).read_text()
                       for f in ("_ts_tables.py", "_ts_compiled.py", "_ts_results.py"))
    bare = {
        "C": (c_src, [r"\bit\[\d", r"\bci\[\d", r"\bcd\[\d", r"\bin\[", r"\bstat\[\d",
                      r"\bwk\[\d", r"\bo\[\d", r"\bjoints\[\d", r"\bfrees\[\d",
                      r"\bblocks\[2", r"\banc\[2", r"\bcc\[2", r"\bI_[A-Z]", r"\bD_[A-Z]",
                      r"1000000", r"#define (CO|CI|CD) \d"]),
        "numpy": (numpy_src, [r"\bit\[\d", r"\bci\[\d", r"\bcd\[\d", r"\binp\[\d",
                              r"\bco\[[^\]]*,\s*\d", r"\bwarm\[[^\]]*,\s*\d", r"\b1e6\b",
                              r"\bCI, CD\b", r"\bdivmod\("]),
        "writer": (writer, [r"\bit\[\d", r"\bd\[\d", r"\bout\[\w+:\w+ ?\+ ?\d+\]",
                            r"\bco\[[^\]]*,\s*\d", r"\bdivmod\(", r"1000000", r"\bo\[\d"]),
    }
    found = []
    for where, (text, patterns) in bare.items():
        for pat in patterns:
            for m in re.finditer(pat, text):
                line = text.count("\n", 0, m.start()) + 1
                found.append(f"{where}:{line}: {text.splitlines()[line - 1].strip()}")
    assert found == []


def test_the_checker_finds_a_bare_index():
    """The patterns above match the kind of line they forbid (so the check can fail)."""
    assert re.search(r"\bit\[\d", "    nq, nv = it[0], it[1]")
    assert re.search(r"\bco\[[^\]]*,\s*\d", "co[kk, 17:19] = s[1:]")
    assert re.search(r"\bo\[\d", "o[14] = wk[0] > 0 ? wk[0] : 0.0;")
    assert re.search(r"\bdivmod\(", "na, sweeps = divmod(int(stat[1]), 1000000)")
    assert re.search(r"\bout\[\w+:\w+ ?\+ ?\d+\]", "stat = out[k:k + 4].tolist()")


def test_a_field_named_size_is_refused():
    with pytest.raises(ValueError, match=r"record X: 'size' names the record's length"):
        L.Record("X", [("a", 1), ("size", 1)])
    r = L.Record("X", [("a", 1), ("b", 3), ("c", 1)], start=2)
    assert (r.A, r.B, r.C, r.size, r.slice("b")) == (2, 3, 6, 7, slice(3, 6))


@pytest.mark.skipif(__import__("solvers.compiled", fromlist=["x"]).find_compiler() is None,
                    reason="no C compiler")
def test_status_record_of_the_c_kernel_and_the_numpy_twin_agree(monkeypatch):
    """Three spheres settling into a pile: per step, the C kernel and its numpy twin report
    the same sweeps and active contacts and residuals within round-off."""
    import solvers._compiled_build as build
    from _time_stepping_models import free_spheres
    from multibody.constraints import PointContactConstraint
    from multibody.plants import TimeSteppingRigidBodySystem
    tree = free_spheres(3, radius=0.05, mass=0.1)
    q = tree.neutral_configuration()
    for i, p in enumerate([(0, 0, 0.05), (0.1001, 0, 0.05), (0.05, 0.03, 0.14)]):
        q[7 * i:7 * i + 7] = [1, 0, 0, 0, *p]

    def statuses(plant):
        ctx = plant.create_default_context()
        plant.set_positions(ctx, q)
        out = []
        for _ in range(40):
            out.append(plant.get_output_port("step").eval(ctx).status)
            plant.advance(ctx, 1)
        return out, np.array(ctx.discrete_state)
    c_plant = TimeSteppingRigidBodySystem(tree, 1e-3, constraints=[PointContactConstraint(
        tree, mu=0.5)])
    sc, xc = statuses(c_plant)
    monkeypatch.setattr(build, "find_compiler", lambda compiler=None: None)
    monkeypatch.setattr(cs, "_LOADED", {})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        n_plant = TimeSteppingRigidBodySystem(tree, 1e-3, constraints=[PointContactConstraint(
            tree, mu=0.5)])
    assert (c_plant.step_method, n_plant.step_method) == ("compiled_pgs", "numpy_pgs")
    sn, xn = statuses(n_plant)
    assert [(s.sweeps, s.active_contacts) for s in sc] == \
        [(s.sweeps, s.active_contacts) for s in sn]
    assert max(s.active_contacts for s in sc) >= 3 and all(s.converged for s in sc + sn)
    np.testing.assert_allclose([s.residual for s in sc], [s.residual for s in sn],
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(xc, xn, rtol=0, atol=1e-12)
