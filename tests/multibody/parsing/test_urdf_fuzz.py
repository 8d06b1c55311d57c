"""A small seeded URDF fuzzer: only :class:`URDFError` may escape the parser.

Every shipped model is mutated a few dozen times (fixed seeds, so a failure is reproducible
from the case id): elements and attributes deleted or duplicated, numbers replaced by odd
strings (``1_0``, full-width and Arabic-Indic digits, ``1e400``, ``nan``, non-breaking
spaces), elements wrapped in deep nesting, the document re-encoded or declared in an unknown
encoding, and the text truncated; some are given as ``str`` rather than bytes. For each
mutant ``parse_urdf`` must either return a tree that finalizes or raise :class:`URDFError`;
the only warnings the parser may issue are
:class:`URDFWarning` (numpy's overflow or invalid-value warnings would mean a silent inf/NaN);
``finalize()`` may add the tree's "joint moves no mass" warning.
"""
from __future__ import annotations

import pathlib
import random
import sys
import xml.etree.ElementTree as ET

import pytest

from multibody.models import available_models, model_path
from multibody.parsing import URDFError, URDFWarning, parse_urdf

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import _fuzz as F  # noqa: E402

CASES_PER_MODEL = 45
ODD_NUMBERS = [
    "1_0", "\uff11", "\u0661", "\u0663.\u0665", "1e400", "-1e400", "1e-400", "nan", "NaN",
    "inf", "-Infinity", "", " ", "0x10", "1,5", "+", "-", ".", "e5", "1e", "1..2",
    "1e200", "-1e200", "1.7976931348623157e308", "-1.7976931348623157e308", "1e-320", "0",
    "-0", "1\u00a02", "\u22121", "1 2 3 4", "True", "\u221e", "1e154", "3e-300",
]
ENCODINGS = ["utf-8", "latin-1", "utf-16", "utf-32", "klingon", "ascii", "cp1252", "rot13",
             "idna", "utf-7", "shift_jis", "hex", ""]



def _odd_number(rng, root, parent, child, nested):
    numeric = F.numeric_attributes(root)
    if numeric:
        e, k = rng.choice(numeric)
        e.attrib[k] = F.odd_words(rng, e.attrib[k], ODD_NUMBERS, keep_words=0.8)


def _nest(rng, root, parent, child, nested):
    depth = rng.choice([2, 10, 300, 5000])
    F.nest_by_splicing(parent, child, nested, depth, child.tag if rng.random() < 0.5 else "wrap")


def _rename_tag(rng, root, parent, child, nested):
    child.tag = rng.choice(["link", "joint", "inertial", "origin", "axis", "limit", "mass",
                            "geometry", "box", "mimic", "robot", "xacro:macro"])


OPERATIONS = ["delete", "duplicate", "drop_attr", "odd_number", "nest", "swap_values",
              "rename_tag", "copy_attr"]
OWN_OPERATIONS = {"odd_number": _odd_number, "nest": _nest, "rename_tag": _rename_tag,
                  "swap_values": lambda rng, root, *_: F.swap_attribute_values(rng, root)}


def _mutate_tree(rng: random.Random, root: ET.Element, nested: list) -> str:
    return F.mutate(rng, root, nested, OPERATIONS, OWN_OPERATIONS)


def _serialize(rng: random.Random, root: ET.Element, nested: list) -> bytes | str:
    body = F.splice(root, nested)
    r = rng.random()
    if r < 0.15:
        enc = rng.choice(ENCODINGS)
        try:
            data = body.encode(enc if enc not in ("", "klingon", "rot13", "hex", "idna") else "utf-8")
        except (LookupError, UnicodeError):
            data = body.encode("utf-8")
        data = F.declared(enc, data)
    else:
        data = ('<?xml version="1.0"?>\n' + body).encode("utf-8")
        if r < 0.25:
            data = F.truncated(rng, data)
        elif r < 0.30:
            data = F.one_byte_changed(rng, data)
        elif r < 0.33:
            data = data.replace(b'name="', b'name="x" name="', 1)     # duplicate attribute
    if rng.random() < 0.3:              # the same document given as a str
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError:
            pass
    return data


DATA = pathlib.Path(__file__).parent / "data" / "urdf"
# hand-written seeds in the shape of real files that must load (zero mass with a nonzero
# inertia: pybullet's cart-pole and KUKA arm); each is valid, with one URDFWarning per link
EXTRA_SEEDS = {p.stem: p for p in sorted(DATA.glob("*.urdf"))}
SEEDS = list(available_models()) + list(EXTRA_SEEDS)


def _seed_text(model: str) -> str:
    return (EXTRA_SEEDS[model] if model in EXTRA_SEEDS else model_path(model)).read_text()


def _mutants(model: str, n: int):
    return F.mutants(model, _seed_text(model), n, _mutate_tree, _serialize)


def _check_one(case: str, ops: list[str], data: bytes | str) -> str:
    return F.check_one(case, ops, data, parse=parse_urdf, error=URDFError, warning=URDFWarning)


@pytest.mark.parametrize("model", sorted(EXTRA_SEEDS))
def test_extra_seeds_are_valid_with_one_warning_per_zero_mass_link(model):
    """The seeds themselves load: one URDFWarning (zero mass, nonzero inertia kept), no error."""
    with pytest.warns(URDFWarning) as caught:
        tree = parse_urdf(EXTRA_SEEDS[model])
    messages = [str(w.message) for w in caught if issubclass(w.category, URDFWarning)]
    assert len(messages) == 1 and "zero mass with a nonzero rotational inertia" in messages[0]
    tree.finalize()


@pytest.mark.parametrize("model", SEEDS)
def test_mutated_shipped_models_raise_only_urdf_errors(model):
    outcomes = [_check_one(case, ops, data) for case, ops, data in _mutants(model, CASES_PER_MODEL)]
    # the fuzzer is not vacuous: some mutants are rejected and some still load
    assert outcomes.count("URDFError") >= 5
    assert outcomes.count("ok") >= 1


def test_fuzzer_is_deterministic():
    a = [d for _, _, d in _mutants("acrobot", 5)]
    b = [d for _, _, d in _mutants("acrobot", 5)]
    assert a == b


def test_fuzzer_check_fails_on_an_escaping_exception(monkeypatch):
    """The check itself can fail: a parser raising a bare exception is reported."""
    import multibody.parsing as parsing_pkg

    def broken(data):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setitem(globals(), "parse_urdf", broken)
    with pytest.raises(pytest.fail.Exception, match="RecursionError escaped"):
        _check_one("synthetic", ["none"], b"<robot/>")
    assert parsing_pkg.parse_urdf is not broken
