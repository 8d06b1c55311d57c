"""A small seeded MJCF fuzzer: only :class:`MJCFError` may escape :func:`read_mjcf_model`.

Hand-written MJCF seeds (the feature fixture with its defaults inlined, and two small
models) are mutated with fixed seeds, so a failure is reproducible from the case id:
elements deleted, duplicated or renamed to other MJCF tags, attributes dropped, copied or
swapped, numbers replaced by odd strings (``1_0``, full-width digits, ``1e400``, ``nan``),
deep nesting, odd encodings and truncated text. Each mutant must give a model or an
:class:`MJCFError`; the only warnings allowed are :class:`MJCFWarning` and the tree's own
"joint moves no mass" warning (numpy overflow warnings would mean a silent inf or NaN).
"""
from __future__ import annotations

import pathlib
import random
import re
import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from multibody.parsing import MJCFError, MJCFWarning, read_mjcf_model

DATA = pathlib.Path(__file__).parent / "data" / "mjcf"
ODD = ["1_0", "\uff11", "\u0661", "1e400", "-1e400", "nan", "inf", "", " ", "0x10", "1,5", "-",
       "1e200", "-1e200", "1e-320", "0", "-0", "\u22121", "1 2 3 4 5 6 7", "True", "1e154"]
TAGS = ["body", "joint", "freejoint", "geom", "site", "inertial", "default", "include",
        "frame", "motor", "position", "compiler", "option", "exclude", "worldbody", "mujoco"]
ATTRS = {"type": ["hinge", "ball", "slide", "free", "box", "plane", "mesh", "capsule", "x"],
         "class": ["main", "limb", "soft", "nope"], "angle": ["radian", "degree", "grad"],
         "limited": ["true", "false", "auto", "maybe"], "eulerseq": ["XYZ", "zzz", "ab"]}


def _seeds() -> dict:
    features = (DATA / "features.xml").read_text()
    defaults = (DATA / "defaults.xml").read_text()
    inner = re.sub(r"</?mujoco>", "", defaults)
    features = features.replace('<include file="defaults.xml"/>', inner)
    chain = ('<mujoco model="chain"><compiler angle="radian"/><option gravity="0 0 -1"/>'
             '<worldbody><body name="a" pos="0 0 1"><joint name="j1" range="-1 1"/>'
             '<joint name="j2" type="slide" axis="1 0 0" pos="0 0 0.1"/>'
             '<geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.05"/>'
             '<body name="b" pos="0 0 -0.5" zaxis="1 0 0"><joint name="j3" type="ball"/>'
             '<geom type="box" size="0.1 0.1 0.1" mass="2"/></body></body></worldbody>'
             '<actuator><motor joint="j1" gear="10" ctrlrange="-1 1"/>'
             '<velocity joint="j2" kv="3"/></actuator></mujoco>')
    ball = ('<mujoco><default><geom friction="0.5"/><default class="c"><geom margin="0.01"/>'
            '</default></default><worldbody><geom type="plane" size="1 1 1"/>'
            '<body name="ball" pos="0 0 1" childclass="c"><freejoint/><geom type="sphere" '
            'size="0.1"/><site name="s" xyaxes="1 0 0 0 1 0"/></body></worldbody>'
            '<contact><exclude body1="world" body2="ball"/></contact></mujoco>')
    return {"features": features, "chain": chain, "ball": ball}


def _mutate(rng: random.Random, root: ET.Element) -> str:
    pairs = [(p, c) for p in root.iter() for c in list(p)]
    if not pairs:
        return "none"
    parent, child = rng.choice(pairs)
    op = rng.choice(["delete", "duplicate", "drop_attr", "odd_number", "nest", "rename",
                     "copy_attr", "swap", "keyword"])
    attrs = [(e, k) for e in root.iter() for k in e.attrib]
    if op == "delete":
        parent.remove(child)
    elif op == "duplicate":
        parent.insert(list(parent).index(child), ET.fromstring(ET.tostring(child)))
    elif op == "drop_attr" and child.attrib:
        del child.attrib[rng.choice(sorted(child.attrib))]
    elif op == "odd_number":
        numeric = [(e, k) for e, k in attrs if re.fullmatch(r"[-+0-9.eE ]+", e.attrib[k] or "x")]
        if numeric:
            e, k = rng.choice(numeric)
            parts = e.attrib[k].split() or ["0"]
            parts[rng.randrange(len(parts))] = rng.choice(ODD)
            e.attrib[k] = " ".join(parts)
    elif op == "nest":
        wrap = child
        for _ in range(rng.choice([2, 20, 300])):
            outer = ET.Element(rng.choice(["body", "frame", "default"]))
            outer.append(wrap)
            wrap = outer
        parent.insert(0, wrap)
        if child in list(parent):
            parent.remove(child)
    elif op == "rename":
        child.tag = rng.choice(TAGS)
    elif op == "copy_attr" and attrs:
        e, k = rng.choice(attrs)
        child.attrib[k] = e.attrib[k]
    elif op == "swap" and len(attrs) >= 2:
        (e1, k1), (e2, k2) = rng.sample(attrs, 2)
        e1.attrib[k1], e2.attrib[k2] = e2.attrib[k2], e1.attrib[k1]
    elif op == "keyword":
        key = rng.choice(sorted(ATTRS))
        child.attrib[key] = rng.choice(ATTRS[key])
    return op


def _mutants(name: str, text: str, n: int):
    for k in range(n):
        rng = random.Random(f"{name}-{k}")
        root = ET.fromstring(text)
        ops = [_mutate(rng, root) for _ in range(rng.choice([1, 2, 3]))]
        body = ET.tostring(root, encoding="unicode")
        r = rng.random()
        if r < 0.1:
            body = body[:rng.randrange(len(body))]
        elif r < 0.15:
            enc = rng.choice(["latin-1", "utf-16", "klingon", "ascii"])
            yield f"{name}-{k}", ops, f'<?xml version="1.0" encoding="{enc}"?>\n'.encode() + \
                body.encode("utf-8")
            continue
        yield f"{name}-{k}", ops, body


CASES = [case for name, text in _seeds().items() for case in _mutants(name, text, 40)]


def test_the_seeds_load():
    for name, text in _seeds().items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MJCFWarning)
            model = read_mjcf_model(text)
        assert model.tree.nv > 0, name


@pytest.mark.parametrize("chunk", range(4))
def test_only_mjcf_errors_escape(chunk):
    for case, ops, data in CASES[chunk::4]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with np.errstate(over="warn", invalid="warn", divide="warn", under="ignore"):
                try:
                    read_mjcf_model(data)
                except MJCFError:
                    pass
                except Exception as exc:  # noqa: BLE001 - the point of the test
                    pytest.fail(f"case {case} ({ops}): {type(exc).__name__}: {exc}")
        bad = [w for w in caught if not issubclass(w.category, MJCFWarning)
               and "move no mass" not in str(w.message)]
        assert not bad, f"case {case} ({ops}): {bad[0].category.__name__}: {bad[0].message}"
