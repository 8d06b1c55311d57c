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
import re
import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from multibody.models import available_models, model_path
from multibody.parsing import URDFError, URDFWarning, parse_urdf

CASES_PER_MODEL = 45
ODD_NUMBERS = [
    "1_0", "\uff11", "\u0661", "\u0663.\u0665", "1e400", "-1e400", "1e-400", "nan", "NaN",
    "inf", "-Infinity", "", " ", "0x10", "1,5", "+", "-", ".", "e5", "1e", "1..2",
    "1e200", "-1e200", "1.7976931348623157e308", "-1.7976931348623157e308", "1e-320", "0",
    "-0", "1\u00a02", "\u22121", "1 2 3 4", "True", "\u221e", "1e154", "3e-300",
]
ENCODINGS = ["utf-8", "latin-1", "utf-16", "utf-32", "klingon", "ascii", "cp1252", "rot13",
             "idna", "utf-7", "shift_jis", "hex", ""]


def _elements(root: ET.Element) -> list[tuple[ET.Element, ET.Element]]:
    """(parent, child) pairs of the document."""
    return [(p, c) for p in root.iter() for c in list(p)]


def _mutate_tree(rng: random.Random, root: ET.Element, nested: list) -> str:
    pairs = _elements(root)
    op = rng.choice(["delete", "duplicate", "drop_attr", "odd_number", "nest", "swap_values",
                     "rename_tag", "copy_attr"])
    if not pairs:
        return "none"
    parent, child = rng.choice(pairs)
    if op == "delete":
        parent.remove(child)
    elif op == "duplicate":
        parent.insert(list(parent).index(child), ET.fromstring(ET.tostring(child)))
    elif op == "drop_attr" and child.attrib:
        del child.attrib[rng.choice(sorted(child.attrib))]
    elif op == "odd_number":
        numeric = [(e, k) for e in root.iter() for k, v in e.attrib.items()
                   if re.fullmatch(r"[-+0-9.eE ]+", v.strip() or "x")]
        if numeric:
            e, k = rng.choice(numeric)
            parts = e.attrib[k].split()
            parts[rng.randrange(len(parts))] = rng.choice(ODD_NUMBERS)
            e.attrib[k] = " ".join(parts) if rng.random() < 0.8 else rng.choice(ODD_NUMBERS)
    elif op == "nest":   # spliced in as text after serialization (ElementTree recurses)
        depth = rng.choice([2, 10, 300, 5000])
        tag = child.tag if rng.random() < 0.5 else "wrap"
        inner = ET.tostring(child, encoding="unicode")
        marker = ET.Element(f"NEST{len(nested)}")
        nested.append((f"<NEST{len(nested)} />", f"<{tag}>" * depth + inner + f"</{tag}>" * depth))
        parent.insert(list(parent).index(child), marker)
        parent.remove(child)
    elif op == "swap_values":
        attrs = [(e, k) for e in root.iter() for k in e.attrib]
        if len(attrs) >= 2:
            (e1, k1), (e2, k2) = rng.sample(attrs, 2)
            e1.attrib[k1], e2.attrib[k2] = e2.attrib[k2], e1.attrib[k1]
    elif op == "rename_tag":
        child.tag = rng.choice(["link", "joint", "inertial", "origin", "axis", "limit", "mass",
                                "geometry", "box", "mimic", "robot", "xacro:macro"])
    elif op == "copy_attr":
        attrs = [(e, k) for e in root.iter() for k in e.attrib]
        e, k = rng.choice(attrs)
        child.attrib[k] = e.attrib[k]
    return op


def _serialize(rng: random.Random, root: ET.Element, nested: list) -> bytes:
    body = ET.tostring(root, encoding="unicode")
    for marker, text in nested:
        body = body.replace(marker, text)
    r = rng.random()
    if r < 0.15:
        enc = rng.choice(ENCODINGS)
        try:
            data = body.encode(enc if enc not in ("", "klingon", "rot13", "hex", "idna") else "utf-8")
        except (LookupError, UnicodeError):
            data = body.encode("utf-8")
        return f'<?xml version="1.0" encoding="{enc}"?>\n'.encode() + data
    data = ('<?xml version="1.0"?>\n' + body).encode("utf-8")
    if r < 0.25:
        return data[:rng.randrange(len(data))]                     # truncated
    if r < 0.30:
        i = rng.randrange(len(data))                                # one byte changed
        return data[:i] + bytes([rng.randrange(256)]) + data[i + 1:]
    if r < 0.33:
        return data.replace(b'name="', b'name="x" name="', 1)     # duplicate attribute
    return data


DATA = pathlib.Path(__file__).parent / "data" / "urdf"
# hand-written seeds in the shape of real files that must load (zero mass with a nonzero
# inertia: pybullet's cart-pole and KUKA arm); each is valid, with one URDFWarning per link
EXTRA_SEEDS = {p.stem: p for p in sorted(DATA.glob("*.urdf"))}
SEEDS = list(available_models()) + list(EXTRA_SEEDS)


def _seed_text(model: str) -> str:
    return (EXTRA_SEEDS[model] if model in EXTRA_SEEDS else model_path(model)).read_text()


def _mutants(model: str, n: int):
    text = _seed_text(model)
    for k in range(n):
        rng = random.Random(f"{model}-{k}")
        root = ET.fromstring(text)
        nested: list = []
        ops = [_mutate_tree(rng, root, nested) for _ in range(rng.choice([1, 1, 2, 3]))]
        data = _serialize(rng, root, nested)
        if rng.random() < 0.3:              # the same document given as a str
            try:
                data = data.decode("utf-8")
            except UnicodeDecodeError:
                pass
        yield f"{model}-{k}", ops, data


def _check_one(case: str, ops: list[str], data: bytes | str) -> str:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with np.errstate(over="warn", invalid="warn", divide="warn", under="ignore"):
            try:
                tree = parse_urdf(data)
                outcome = "ok"
            except URDFError:
                outcome = "URDFError"
            except Exception as exc:  # the defect this test looks for
                pytest.fail(f"case {case} ({ops}): {type(exc).__name__} escaped: {exc}")
            n_parse = len(caught)
            if outcome == "ok":   # the tree accepts what the parser accepted
                try:
                    tree.finalize()
                except Exception as exc:
                    pytest.fail(f"case {case} ({ops}): the parsed tree does not finalize: "
                                f"{type(exc).__name__}: {exc}")
    foreign = [w for w in caught[:n_parse] if not issubclass(w.category, URDFWarning)]
    # finalize() may warn that a joint moves no mass (a mutant without inertia); anything
    # else (numpy overflow/invalid value) would be a silent inf or NaN
    foreign += [w for w in caught[n_parse:] if "move no mass or inertia" not in str(w.message)]
    assert not foreign, f"case {case} ({ops}): foreign warnings {[str(w.message) for w in foreign]}"
    return outcome


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
