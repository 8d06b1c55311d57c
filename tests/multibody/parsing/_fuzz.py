"""Shared parts of the seeded XML fuzzers of the URDF, SDFormat and MJCF parsers.

Each fuzzer (``test_urdf_fuzz.py``, ``test_sdf_fuzz.py``, ``test_mjcf_fuzz.py``) keeps its own
seeds, its own mix of operations and their odds, and its own assertions; this module holds the
operations themselves, the mutant generator and the check of one mutant. Every function draws
from the ``random.Random`` it is given in a fixed order, so a case id (``<seed>-<k>``) names
the same mutant on every run.
"""
from __future__ import annotations

import random
import re
import warnings
import xml.etree.ElementTree as ET
from typing import Callable, Iterator, Sequence

import numpy as np
import pytest

_NUMBER = re.compile(r"[-+0-9.eE ]+")

#: the message of the tree's own warning about joints that move nothing (a mutant without
#: inertia); allowed from ``finalize()``, as it is no silent inf or NaN
NO_MASS_WARNING = "move no mass or inertia"


def element_pairs(root: ET.Element) -> list[tuple[ET.Element, ET.Element]]:
    """(parent, child) pairs of the document, in document order."""
    return [(p, c) for p in root.iter() for c in list(p)]


def attributes(root: ET.Element) -> list[tuple[ET.Element, str]]:
    """(element, attribute name) pairs of the document, in document order."""
    return [(e, k) for e in root.iter() for k in e.attrib]


def numeric_attributes(root: ET.Element, *, blank_counts: bool = False) -> list:
    """(element, attribute name) pairs whose value looks like numbers (``[-+0-9.eE ]+``);
    with ``blank_counts`` a value of spaces only counts too."""
    return [(e, k) for e, k in attributes(root)
            if _NUMBER.fullmatch((e.attrib[k] if blank_counts else e.attrib[k].strip()) or "x")]


#: operations the fuzzers share (each draws its own subset), applied by :func:`apply_common`
COMMON_OPERATIONS = ("delete", "duplicate", "drop_attr", "copy_attr")


def apply_common(op: str, rng: random.Random, root: ET.Element, parent: ET.Element,
                 child: ET.Element) -> None:
    """Apply one of :data:`COMMON_OPERATIONS` to ``child`` (whose parent is ``parent``):
    delete it, insert a copy before it, drop one of its attributes, or give it a copy of a
    random attribute of the document."""
    if op == "delete":
        parent.remove(child)
    elif op == "duplicate":
        duplicate(parent, child)
    elif op == "drop_attr":
        drop_attribute(rng, child)
    elif op == "copy_attr":
        copy_attribute(rng, root, child)
    else:
        raise ValueError(f"apply_common: {op!r} is not one of {COMMON_OPERATIONS}")


def mutate(rng: random.Random, root: ET.Element, nested: list, operations: Sequence[str],
           own: dict, *, operation_first: bool = True) -> str:
    """Apply one operation to the document; its name, or ``"none"`` for a document without
    children.

    The operation is drawn from ``operations`` (repeat a name to weight it) and applied to a
    random (parent, child) pair: :data:`COMMON_OPERATIONS` by :func:`apply_common`, the others
    by ``own[op](rng, root, parent, child, nested)``. With ``operation_first`` the operation
    is drawn before the pair (even when there is none), else after it.
    """
    pairs = element_pairs(root)
    op = rng.choice(list(operations)) if operation_first else None
    if not pairs:
        return "none"
    parent, child = rng.choice(pairs)
    op = op or rng.choice(list(operations))
    if op in COMMON_OPERATIONS:
        apply_common(op, rng, root, parent, child)
    else:
        own[op](rng, root, parent, child, nested)
    return op


def duplicate(parent: ET.Element, child: ET.Element) -> None:
    """Insert a deep copy of ``child`` just before it."""
    parent.insert(list(parent).index(child), ET.fromstring(ET.tostring(child)))


def drop_attribute(rng: random.Random, child: ET.Element) -> None:
    """Delete one attribute of ``child`` (none drawn when it has none)."""
    if child.attrib:
        del child.attrib[rng.choice(sorted(child.attrib))]


def copy_attribute(rng: random.Random, root: ET.Element, child: ET.Element) -> None:
    """Give ``child`` a copy of a random attribute of the document (name and value)."""
    attrs = attributes(root)
    if attrs:
        e, k = rng.choice(attrs)
        child.attrib[k] = e.attrib[k]


def swap_attribute_values(rng: random.Random, root: ET.Element) -> None:
    """Swap the values of two random attributes of the document."""
    attrs = attributes(root)
    if len(attrs) >= 2:
        (e1, k1), (e2, k2) = rng.sample(attrs, 2)
        e1.attrib[k1], e2.attrib[k2] = e2.attrib[k2], e1.attrib[k1]


def odd_words(rng: random.Random, value: str, odd: Sequence[str],
              keep_words: float | None = None) -> str:
    """``value`` with one whitespace-separated word replaced by an odd string; with
    ``keep_words`` = p, the whole value is instead one odd string with probability 1 - p."""
    parts = value.split() or ["0"]
    parts[rng.randrange(len(parts))] = rng.choice(odd)
    if keep_words is None:
        return " ".join(parts)
    return " ".join(parts) if rng.random() < keep_words else rng.choice(odd)


def nest_by_splicing(parent: ET.Element, child: ET.Element, nested: list, depth: int,
                     tag: str) -> None:
    """Replace ``child`` by a marker element that :func:`splice` turns into ``child`` wrapped
    in ``depth`` ``<tag>`` elements (as text: ElementTree itself would recurse that deep)."""
    inner = ET.tostring(child, encoding="unicode")
    marker = ET.Element(f"NEST{len(nested)}")
    nested.append((f"<NEST{len(nested)} />", f"<{tag}>" * depth + inner + f"</{tag}>" * depth))
    parent.insert(list(parent).index(child), marker)
    parent.remove(child)


def splice(root: ET.Element, nested: list) -> str:
    """The document as text, with the deep nestings of :func:`nest_by_splicing` spliced in."""
    body = ET.tostring(root, encoding="unicode")
    for marker, text in nested:
        body = body.replace(marker, text)
    return body


def truncated(rng: random.Random, data):
    """``data`` cut at a random point."""
    return data[:rng.randrange(len(data))]


def one_byte_changed(rng: random.Random, data: bytes) -> bytes:
    """``data`` with one random byte replaced by a random value."""
    i = rng.randrange(len(data))
    return data[:i] + bytes([rng.randrange(256)]) + data[i + 1:]


def declared(encoding: str, data: bytes) -> bytes:
    """``data`` after an XML declaration naming ``encoding`` (which may be wrong or unknown)."""
    return f'<?xml version="1.0" encoding="{encoding}"?>\n'.encode() + data


def mutants(name: str, text: str, n: int, mutate: Callable, serialize: Callable,
            n_ops: Sequence[int] = (1, 1, 2, 3)) -> Iterator[tuple[str, list, bytes | str]]:
    """``n`` mutants of the document ``text``: (case id, operations, document).

    Case ``k`` draws from ``random.Random(f"{name}-{k}")``: a count from ``n_ops``, that many
    ``mutate(rng, root, nested)`` (each returns its operation's name), then
    ``serialize(rng, root, nested)``.
    """
    for k in range(n):
        rng = random.Random(f"{name}-{k}")
        root = ET.fromstring(text)
        nested: list = []
        ops = [mutate(rng, root, nested) for _ in range(rng.choice(list(n_ops)))]
        yield f"{name}-{k}", ops, serialize(rng, root, nested)


def check_one(case: str, ops: list, data, *, parse: Callable, error: type, warning: type,
              finalize: bool = True) -> str:
    """Parse one mutant: ``"ok"`` or the name of ``error``; fails the test on anything else.

    Any other exception escaping ``parse`` fails the test (the defect the fuzzers look for),
    as does a tree that the parser accepted but that does not finalize, and any warning other
    than ``warning`` while parsing or the tree's "moves no mass" warning while finalizing
    (numpy's overflow or invalid-value warnings would mean a silent inf or NaN). With
    ``finalize=False`` the parser finalizes the tree itself (MJCF's model reader), so the
    "moves no mass" warning is allowed from ``parse``.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with np.errstate(over="warn", invalid="warn", divide="warn", under="ignore"):
            try:
                tree = parse(data)
                outcome = "ok"
            except error:
                outcome = error.__name__
            except Exception as exc:  # noqa: BLE001 - the defect this check looks for
                pytest.fail(f"case {case} ({ops}): {type(exc).__name__} escaped: {exc}")
            n_parse = len(caught)
            if outcome == "ok" and finalize:   # the tree accepts what the parser accepted
                try:
                    tree.finalize()
                except Exception as exc:  # noqa: BLE001
                    pytest.fail(f"case {case} ({ops}): the parsed tree does not finalize: "
                                f"{type(exc).__name__}: {exc}")
    foreign = [w for w in caught[:n_parse] if not issubclass(w.category, warning)
               and (finalize or NO_MASS_WARNING not in str(w.message))]
    foreign += [w for w in caught[n_parse:] if NO_MASS_WARNING not in str(w.message)]
    assert not foreign, (f"case {case} ({ops}): foreign warnings "
                         f"{[(w.category.__name__, str(w.message)) for w in foreign]}")
    return outcome
