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
import sys
import warnings
import xml.etree.ElementTree as ET

import pytest

from multibody.parsing import MJCFError, MJCFWarning, read_mjcf_model

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import _fuzz as F  # noqa: E402

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


def _odd_number(rng, root, parent, child, nested):
    numeric = F.numeric_attributes(root, blank_counts=True)
    if numeric:
        e, k = rng.choice(numeric)
        e.attrib[k] = F.odd_words(rng, e.attrib[k], ODD)


def _nest(rng, root, parent, child, nested):
    """Real elements: MJCF bodies, frames and defaults nest."""
    wrap = child
    for _ in range(rng.choice([2, 20, 300])):
        outer = ET.Element(rng.choice(["body", "frame", "default"]))
        outer.append(wrap)
        wrap = outer
    parent.insert(0, wrap)
    if child in list(parent):
        parent.remove(child)


def _keyword(rng, root, parent, child, nested):
    key = rng.choice(sorted(ATTRS))
    child.attrib[key] = rng.choice(ATTRS[key])


OPERATIONS = ["delete", "duplicate", "drop_attr", "odd_number", "nest", "rename", "copy_attr",
              "swap", "keyword"]
OWN_OPERATIONS = {
    "odd_number": _odd_number, "nest": _nest, "keyword": _keyword,
    "rename": lambda rng, root, parent, child, nested: setattr(child, "tag", rng.choice(TAGS)),
    "swap": lambda rng, root, *_: F.swap_attribute_values(rng, root),
}


def _mutate(rng: random.Random, root: ET.Element, nested: list) -> str:
    return F.mutate(rng, root, nested, OPERATIONS, OWN_OPERATIONS, operation_first=False)


def _serialize(rng: random.Random, root: ET.Element, nested: list) -> bytes | str:
    body = ET.tostring(root, encoding="unicode")
    r = rng.random()
    if r < 0.1:
        return F.truncated(rng, body)
    if r < 0.15:
        return F.declared(rng.choice(["latin-1", "utf-16", "klingon", "ascii"]),
                          body.encode("utf-8"))
    return body


CASES = [case for name, text in _seeds().items()
         for case in F.mutants(name, text, 40, _mutate, _serialize, n_ops=(1, 2, 3))]


# (nq, nv) of each seed, as MuJoCo compiles it (mujoco.MjModel.from_xml_string): the chain
# has a hinge, a slide and a ball joint (1 + 1 + 4, 1 + 1 + 3), the ball a free joint (7, 6)
SEED_SIZES = {"features": (14, 12), "chain": (6, 5), "ball": (7, 6)}


def test_the_seeds_load():
    seeds = _seeds()
    assert sorted(seeds) == sorted(SEED_SIZES)
    for name, text in seeds.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MJCFWarning)
            model = read_mjcf_model(text)
        assert (model.tree.nq, model.tree.nv) == SEED_SIZES[name], name


@pytest.mark.parametrize("chunk", range(4))
def test_only_mjcf_errors_escape(chunk):
    outcomes = [F.check_one(case, ops, data, parse=read_mjcf_model, error=MJCFError,
                            warning=MJCFWarning, finalize=False)
                for case, ops, data in CASES[chunk::4]]
    # the fuzzer is not vacuous: some mutants are rejected and some still load
    assert outcomes.count("MJCFError") >= 5 and outcomes.count("ok") >= 1
