"""Regression tests for the URDF robustness defects found by fuzzing (issue 13 C).

Each defect is reproduced on a small document and the expected outcome checked: a
:class:`URDFError` naming the file, line and element; or, for real-robot quirks that
Pinocchio and Drake load, a :class:`URDFWarning` and a model with the documented values.
"""
from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest

from multibody.parsing import URDFError, URDFWarning, parse_urdf, read_urdf_model

ONE_LINK = """<?xml version="1.0"?>
<robot name="one">
  <link name="base"/>
  <link name="arm">
    <inertial>
      <origin xyz="{com}" rpy="{rpy}"/>
      <mass value="{mass}"/>
      <inertia ixx="{ixx}" ixy="{ixy}" ixz="{ixz}" iyy="{iyy}" iyz="{iyz}" izz="{izz}"/>
    </inertial>
  </link>
  <joint name="hinge" type="continuous">
    <parent link="base"/>
    <child link="arm"/>
    <origin xyz="{offset}"/>
    <axis xyz="{axis}"/>
  </joint>
</robot>
"""
DEFAULTS = dict(com="0 0 -1", rpy="0 0 0", mass="2", ixx="0.1", ixy="0", ixz="0", iyy="0.1",
                iyz="0", izz="0.02", offset="0 0 0", axis="0 1 0")
MASS_LINE = 7
INERTIA_LINE = 8
JOINT_LINE = 11


def doc(**kw) -> str:
    return ONE_LINK.format(**{**DEFAULTS, **kw})


def error_of(text, source="<string>") -> URDFError:
    with pytest.raises(URDFError) as info:
        parse_urdf(text)
    assert info.value.source == source
    return info.value


def load_quietly(text):
    """Parse with every warning turned into an error (no numpy overflow, no URDFWarning)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="raise", under="ignore"):
            return read_urdf_model(text)[0]


# ------------------------------------------------------------------ XML layer
def test_deep_nesting_is_a_urdf_error_not_a_recursion_error(tmp_path):
    depth = 200_000                        # far beyond Python's recursion limit
    text = doc().replace("</robot>", "<a>" * depth + "</a>" * depth + "\n</robot>")
    path = tmp_path / "deep.urdf"
    path.write_text(text)
    err = error_of(path, source=str(path))
    assert err.element == "document" and "nested more than 256 levels" in str(err)
    assert err.line == text.count("\n", 0, text.index("<a>")) + 1


@pytest.mark.parametrize("encoding, reason", [
    ("klingon", "unknown encoding"),                 # LookupError before
    ("rot13", "not a text encoding"),                # LookupError before
    ("utf-32", "multi-byte encodings"),              # ValueError before
    ("idna", "idna"),                                # UnicodeError before
])
def test_unusable_encoding_is_a_urdf_error_with_the_file(tmp_path, encoding, reason):
    path = tmp_path / f"enc_{encoding}.urdf"
    path.write_bytes(doc().replace('<?xml version="1.0"?>',
                                   f'<?xml version="1.0" encoding="{encoding}"?>').encode())
    err = error_of(path, source=str(path))
    assert err.line == 1 and err.element == "document"
    assert reason in str(err) and str(err).startswith(f"{path}, line 1: document: cannot read")


def test_latin1_document_is_read():
    text = doc().replace('<?xml version="1.0"?>', '<?xml version="1.0" encoding="latin-1"?>')
    text = text.replace('name="one"', 'name="caf\u00e9"')
    model = load_quietly(text.encode("latin-1"))
    assert model.name == "caf\u00e9"


def test_text_with_a_byte_order_mark_or_leading_junk_is_read_as_xml():
    model = load_quietly("\ufeff" + doc())                 # BOM before the declaration
    assert model.name == "one"
    err = error_of("junk " + doc())                        # was: OSError, file name too long
    assert err.line == 1 and "not well-formed" in str(err)


@pytest.mark.parametrize("name", ["x" * 5000, "model\0.urdf"])
def test_unusable_file_names_are_file_not_found(name):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        parse_urdf(name)


# ------------------------------------------------------------------ numbers
@pytest.mark.parametrize("token", [
    "1_0",                  # float() accepts digit separators
    "\uff12",               # full-width 2
    "\u0662",               # Arabic-Indic 2
    "\u0661.\u0665",        # Arabic-Indic 1.5
    "2\u00a0",              # trailing non-breaking space (str.strip() removes it)
    "0x2", "2,5", "2.5.1", "e3", "1e", "+-2", "\u22122", "",
])
def test_numbers_are_parsed_strictly(token):
    err = error_of(doc(mass=token))
    assert err.element == "link 'arm'" and err.line == MASS_LINE
    assert f'attribute value="{token}" is not a number' in str(err)


@pytest.mark.parametrize("vector", ["0 1_0 0", "0\u00a01 0", "0 \uff11 0", "0\u30001 0"])
def test_vectors_split_on_xml_white_space_only(vector):
    err = error_of(doc(axis=vector))
    assert err.element == "joint 'hinge'" and ("is not a number" in str(err)
                                               or "must hold 3 numbers" in str(err))


@pytest.mark.parametrize("token, value", [
    ("2", 2.0), ("+2.", 2.0), ("-0", 0.0), (".5", 0.5), ("2.5e-1", 0.25), ("25E-1", 2.5),
    ("\t 2.0\n", 2.0), ("1e-400", 0.0),
])
def test_decimal_numbers_are_accepted(token, value):
    text = doc(mass="1", com=f"0 0 {token}")
    model = load_quietly(text)
    assert model.links[1].com[2] == value


@pytest.mark.parametrize("token", ["inf", "-Infinity", "nan", "1e400"])
def test_non_finite_numbers(token):
    assert "is not finite" in str(error_of(doc(mass=token)))


# ------------------------------------------------------------------ overflow
def test_inertia_that_overflows_about_the_link_frame_is_rejected():
    err = error_of(doc(mass="1e300", com="1e5 0 0"))     # m c^2 = 1e310
    assert err.element == "link 'arm'" and err.line == INERTIA_LINE
    assert "overflow" in str(err)


def test_rotated_huge_inertia_is_rejected_without_numpy_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        err = error_of(doc(ixx="1.7e308", iyy="1.7e308", izz="1.7e308", ixy="1.7e308",
                           rpy="0.3 0.2 0.1"))
    assert err.element == "link 'arm'" and "overflow" in str(err)


def test_joint_offset_that_overflows_the_mass_matrix_is_rejected():
    err = error_of(doc(offset="1e200 0 0"))
    assert err.element == "joint 'hinge'" and err.line == JOINT_LINE
    assert "mass matrix may overflow" in str(err)


def test_heavy_link_far_away_is_rejected():
    err = error_of(doc(mass="1e290", offset="1e6 0 0"))   # 1e290 kg * (1e6 m)^2
    assert err.element == "link 'arm'" and "overflow" in str(err)


def test_huge_geometry_is_rejected():
    text = doc().replace("<link name=\"base\"/>", '<link name="base"><collision><geometry>'
                         '<box size="1 1 1.7e308"/></geometry></collision></link>')
    err = error_of(text)
    assert err.element == "link 'base'" and "overflow" in str(err)


def test_huge_but_representable_model_gives_a_finite_mass_matrix():
    """mass 1e299 kg at 1 m: H = m l^2 + I_yy = 1e299 + 0.1, finite."""
    tree = parse_urdf(doc(mass="1e299"))
    H = tree.mass_matrix(np.zeros(1))
    assert np.isfinite(H).all() and H[0, 0] == pytest.approx(1e299, rel=1e-15)


# ------------------------------------------------------------------ inertia values
def test_zero_mass_with_nonzero_inertia_loads_with_one_warning_and_keeps_the_inertia():
    """pybullet's cartpole.urdf and kuka_iiwa/model.urdf have such links; Pinocchio keeps the
    inertia, and so do we (one URDFWarning naming the link and the line)."""
    with pytest.warns(URDFWarning) as caught:
        model = read_urdf_model(doc(mass="0"))[0]
    assert len(caught) == 1
    assert re.search(rf"<string>, line {INERTIA_LINE}: link 'arm': zero mass with a nonzero "
                     r"rotational inertia .*kept", str(caught[0].message))
    arm = model.links[1]
    assert arm.mass == 0.0
    np.testing.assert_array_equal(np.diag(arm.inertia), [0.1, 0.1, 0.02])


@pytest.mark.parametrize("inertial", [
    '<mass value="0"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/>',
    '<mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="3"/>',  # triangle
    '<mass value="2"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/>',
])
def test_world_inertial_gives_exactly_one_warning(inertial):
    """Whatever the world link's inertial holds (zero mass with inertia, moments to repair), it
    is ignored with one warning, not a 'repaired' or 'kept' warning and then an 'ignored' one."""
    text = doc().replace('<link name="base"/>', f'<link name="world"><inertial>{inertial}'
                         '</inertial></link>').replace('<parent link="base"/>',
                                                       '<parent link="world"/>')
    with pytest.warns(URDFWarning) as caught:
        model = read_urdf_model(text)[0]
    assert [str(w.message).split(": ", 2)[2] for w in caught] == [
        "the world link is fixed: its <inertial> is ignored"]
    assert model.world.mass == 0.0


def test_zero_mass_zero_inertia_is_a_massless_link():
    model = load_quietly(doc(mass="0", ixx="0", iyy="0", izz="0"))
    assert model.links[1].mass == 0.0 and not model.links[1].inertia.any()


def test_huge_axis_is_normalised_without_overflow():
    model = load_quietly(doc(axis="1e200 -1e200 0"))
    np.testing.assert_allclose(model.joints[0].axis, [math.sqrt(0.5), -math.sqrt(0.5), 0.0],
                               rtol=0, atol=1e-15)
    model = load_quietly(doc(axis="1.7e308 0 1.7e308"))
    np.testing.assert_allclose(model.joints[0].axis, [math.sqrt(0.5), 0.0, math.sqrt(0.5)],
                               rtol=0, atol=1e-15)


def test_dummy_link_inertia_of_anymal_b_is_repaired_with_a_warning():
    """ANYmal B's dummy links: ixx = iyy = izz = iyz = 1e-6 kg m^2, mass 1 g. The principal
    moments (0, 1e-6, 2e-6) violate I1 + I2 >= I3; Pinocchio and Drake load the file.
    The repair raises the two smaller moments by half the deficit each: (0.5, 1.5, 2) e-6,
    same principal axes."""
    text = doc(mass="0.001", com="0 0 0", ixx="0.000001", iyy="0.000001", izz="0.000001",
               iyz="0.000001")
    with pytest.warns(URDFWarning) as rec:
        model, _ = read_urdf_model(text)
    assert len(rec) == 1
    msg = str(rec[0].message)
    assert msg.startswith(f"<string>, line {INERTIA_LINE}: link 'arm': principal moments")
    assert "triangle inequality" in msg and "repaired" in msg
    assert rec[0].filename == __file__               # attributed to the caller
    I0 = np.array([[1, 0, 0], [0, 1, 1], [0, 1, 1]]) * 1e-6
    I = model.links[1].inertia
    np.testing.assert_allclose(np.linalg.eigvalsh(I), [0.5e-6, 1.5e-6, 2e-6], rtol=0, atol=1e-18)
    np.testing.assert_allclose(I @ I0, I0 @ I, rtol=0, atol=1e-24)   # same principal axes
    # the tree (which refuses non-physical inertias) accepts the repaired one
    with pytest.warns(URDFWarning):
        tree = parse_urdf(text)
    np.testing.assert_allclose(tree.get_body("arm").inertia, I, rtol=0, atol=0)


def test_physical_inertia_is_kept_bit_for_bit():
    model = load_quietly(doc(ixx="0.25", iyy="0.2", izz="0.1", ixy="0.01"))
    I = model.links[1].inertia
    assert I[0, 0] == 0.25 and I[1, 1] == 0.2 and I[2, 2] == 0.1 and I[0, 1] == 0.01


def test_boundary_of_the_triangle_inequality_is_accepted_silently():
    """A thin rod: moments (0, J, J) lies on the boundary; rounding must not warn, and the
    principal moments are kept."""
    model = load_quietly(doc(ixx="0.1", iyy="0.1", izz="0", rpy="0.3 0.2 0.1"))
    moments = np.linalg.eigvalsh(np.asarray(model.links[1].inertia, float))
    np.testing.assert_allclose(moments, [0.0, 0.1, 0.1], atol=1e-12)


@pytest.mark.parametrize("izz, ixy", [("2.0000000005", "0"), ("2", "-1e-10"),
                                      ("2.0000005", "0")])
def test_rounding_level_defects_are_repaired_silently(izz, ixy):
    """Deficits of rounding size, relative to I3 below 1e-6 (as from an exporter's printed
    decimals): (1, 1, 2 + 5e-10), which the tree alone refuses (its tolerance is 1e-12);
    (1 - 1e-10, 1 + 1e-10, 2) on the boundary; (1, 1, 2 + 5e-7). Repaired without a
    warning, moments moved by at most the deficit."""
    text = doc(ixx="1", iyy="1", izz=izz, ixy=ixy, com="0 0 0")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tree = parse_urdf(text)
    ev = np.linalg.eigvalsh(tree.get_body("arm").inertia)
    assert ev[0] + ev[1] >= ev[2] - 1e-15
    np.testing.assert_allclose(ev, np.linalg.eigvalsh(np.array(
        [[1, float(ixy), 0], [float(ixy), 1, 0], [0, 0, float(izz)]])), rtol=0, atol=5e-7)


def test_not_positive_semidefinite_is_still_an_error():
    err = error_of(doc(ixy="0.5"))
    assert "not positive semidefinite" in str(err) and err.element == "link 'arm'"


def test_world_inertial_warning_names_the_file(tmp_path):
    text = doc().replace('<link name="base"/>', '<link name="world"><inertial><mass value="0.5"/>'
                         '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>'
                         '</link>').replace('<parent link="base"/>', '<parent link="world"/>')
    path = tmp_path / "pendulum_like.urdf"
    path.write_text(text)
    with pytest.warns(URDFWarning, match=rf"{path}, line 3: link 'world': the world link is fixed"):
        tree = parse_urdf(path)
    assert tree.joints[0].parent == "world" and tree.get_body("arm").mass == 2.0
