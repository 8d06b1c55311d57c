"""A small seeded SDFormat fuzzer: only :class:`SDFError` may escape the parser.

Each hand-written fixture in ``data/sdf`` is mutated a few dozen times (fixed seeds, so a
failure is reproducible from the case id): elements deleted, duplicated or renamed, attributes
dropped or copied, element texts replaced by odd numbers (``1_0``, full-width digits, ``1e400``,
``nan``, wrong counts), elements wrapped in deep nesting, and the document truncated, re-encoded
or given a corrupted byte. For each mutant ``parse_sdf`` must return a tree that finalizes or
raise :class:`SDFError`; the only warnings it may issue are :class:`SDFWarning` (numpy
overflow or invalid-value warnings would mean a silent inf or NaN).
"""
from __future__ import annotations

import pathlib
import random
import sys
import warnings
import xml.etree.ElementTree as ET

import pytest

from multibody.parsing import SDFError, SDFWarning, parse_sdf

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import _fuzz as F  # noqa: E402

CASES_PER_SEED = 30
DATA = pathlib.Path(__file__).parent / "data" / "sdf"
SEEDS = sorted(p.name for p in DATA.glob("*.sdf"))
ODD = ["1_0", "\uff11", "\u0661", "1e400", "-1e400", "nan", "inf", "", " ", "0x10", "1,5",
       "-", "1e", "1e200", "-1e200", "1e-320", "0", "-0", "-1", "1 2", "1 2 3 4 5 6 7 8",
       "0 0 0 0 0 0 0", "true", "\u221e", "1e154", "0 0 0"]
TAGS = ["link", "joint", "frame", "pose", "inertial", "mass", "axis", "xyz", "limit", "child",
        "parent", "model", "geometry", "box", "plane", "sphere", "world", "include", "static"]
ATTRS = [("relative_to", ["a", "world", "__model__", "nope", "f", "l1", "upper"]),
         ("degrees", ["true", "maybe"]), ("rotation_format", ["quat_xyzw", "euler"]),
         ("attached_to", ["a", "nope", "g"]), ("type", ["ball", "revolute2", "fixed", "x"]),
         ("expressed_in", ["__model__", "nope"]), ("name", ["world", "a", "__x"])]

def _ns(text: str) -> str:
    # ElementTree needs the drake: prefix declared; the parser sees the same document
    return text if "xmlns:drake" in text else text.replace("<sdf ", '<sdf xmlns:drake="d" ', 1)


def _texts(root: ET.Element) -> list[ET.Element]:
    return [e for e in root.iter() if (e.text or "").strip()]


def _odd_text(rng, root, parent, child, nested):
    texts = _texts(root)
    if texts:
        e = rng.choice(texts)
        e.text = F.odd_words(rng, e.text, ODD, keep_words=0.7)


def _set_attr(rng, root, parent, child, nested):
    k, values = rng.choice(ATTRS)
    child.attrib[k] = rng.choice(values)


def _swap_text(rng, root, parent, child, nested):
    texts = _texts(root)
    if len(texts) >= 2:
        a, b = rng.sample(texts, 2)
        a.text, b.text = b.text, a.text


OPERATIONS = ["delete", "duplicate", "drop_attr", "odd_text", "odd_text", "rename", "set_attr",
              "nest", "swap_text"]
OWN_OPERATIONS = {
    "odd_text": _odd_text, "set_attr": _set_attr, "swap_text": _swap_text,
    "rename": lambda rng, root, parent, child, nested: setattr(child, "tag", rng.choice(TAGS)),
    "nest": lambda rng, root, parent, child, nested: F.nest_by_splicing(
        parent, child, nested, rng.choice([2, 20, 400]), child.tag),
}


def _mutate(rng: random.Random, root: ET.Element, nested: list) -> str:
    return F.mutate(rng, root, nested, OPERATIONS, OWN_OPERATIONS)


def _serialize(rng: random.Random, root: ET.Element, nested: list) -> bytes | str:
    body = F.splice(root, nested)
    data = ('<?xml version="1.0"?>\n' + body).encode("utf-8")
    r = rng.random()
    if r < 0.08:
        return F.declared(rng.choice(["latin-1", "utf-16", "klingon", "ascii"]),
                          body.encode("utf-8"))
    if r < 0.16:
        return F.truncated(rng, data)
    if r < 0.20:
        return F.one_byte_changed(rng, data)
    if r < 0.45:
        return data.decode("utf-8")
    return data


def _mutants(seed: str, n: int):
    return F.mutants(seed, _ns((DATA / seed).read_text()), n, _mutate, _serialize)


def _check_one(case: str, ops: list, data) -> str:
    return F.check_one(case, ops, data, parse=parse_sdf, error=SDFError, warning=SDFWarning)


# (nq, nv, bodies with the world) of each seed; pydrake 1.51 parses the first three to the
# same sizes. shapes_drake: a free body (7, 6), continuous (1, 1), universal (2, 2), ball
# (4, 3) and screw (1, 1) joints, six links in two models.
SEED_SIZES = {"arm.sdf": (3, 3, 5), "double_pendulum.sdf": (2, 2, 3), "frames.sdf": (8, 7, 3),
              "shapes_drake.sdf": (15, 13, 7)}


def test_every_seed_has_its_sizes_written_down():
    assert sorted(SEED_SIZES) == SEEDS


@pytest.mark.parametrize("seed", SEEDS)
def test_seeds_load(seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SDFWarning)
        tree = parse_sdf(DATA / seed)
    tree.finalize()
    assert (tree.nq, tree.nv, len(tree.bodies)) == SEED_SIZES[seed]


@pytest.mark.parametrize("seed", SEEDS)
def test_mutated_fixtures_raise_only_sdf_errors(seed):
    outcomes = [_check_one(c, ops, d) for c, ops, d in _mutants(seed, CASES_PER_SEED)]
    assert outcomes.count("SDFError") >= 5      # not vacuous: some rejected, some load
    assert outcomes.count("ok") >= 1


def test_fuzzer_is_deterministic():
    first = [d for *_, d in _mutants(SEEDS[0], 5)]
    assert first == [d for *_, d in _mutants(SEEDS[0], 5)]
    assert len({d if isinstance(d, bytes) else d.encode() for d in first}) == 5   # 5 mutants


def test_fuzzer_check_fails_on_an_escaping_exception(monkeypatch):
    def broken(data):
        raise KeyError("x")
    monkeypatch.setitem(globals(), "parse_sdf", broken)
    with pytest.raises(pytest.fail.Exception, match="KeyError escaped"):
        _check_one("synthetic", ["none"], b"<sdf/>")
