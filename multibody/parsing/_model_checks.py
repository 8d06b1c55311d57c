"""Value checks shared by the model readers (URDF, SDFormat; private to the parsing package).

* :func:`check_inertia`: a rotational inertia positive semidefinite, repaired when its principal
  moments violate the triangle inequality (with a warning beyond rounding).
* :func:`inertia_in_link_frame`: an inertia given in an inertial frame (rotation ``R``, centre of
  mass ``c`` in the link frame) re-expressed in link axes, refusing values that overflow.
* :func:`check_scale`: refuses models whose mass matrix would overflow in double precision.
* :func:`resolve_filename`: ``package://`` and relative mesh file names.

Each takes the reader's :class:`~multibody.parsing._xml.Reader`, so every failure is the reader's
own error (``URDFError``, ``SDFError``) with file, line and element.
"""
from __future__ import annotations

import os
from typing import Mapping, Sequence

import numpy as np

from ._xml import Reader, XmlNode

__all__ = ["ROUNDING", "VISIBLE", "MAX_INERTIA", "inertia_entries", "check_inertia",
           "inertia_in_link_frame", "resolve_filename", "check_scale", "owner_name"]

ROUNDING = 1e-9      # relative to the largest moment: negative moments tolerated as rounding
VISIBLE = 1e-6       # relative triangle-inequality deficit repaired with a warning


def owner_name(kind: str, name: str | None) -> str:
    """``"link 'arm'"`` (or the bare kind when the name is unknown)."""
    return f"{kind} '{name}'" if name is not None else kind


def inertia_entries(I: np.ndarray) -> str:
    return "(ixx, ixy, ixz, iyy, iyz, izz) = ({:g}, {:g}, {:g}, {:g}, {:g}, {:g})".format(
        I[0, 0], I[0, 1], I[0, 2], I[1, 1], I[1, 2], I[2, 2])


def check_inertia(I: np.ndarray, rd: Reader, node: XmlNode, owner: str) -> np.ndarray:
    """The rotational inertia ``I`` (3, 3), checked and if need be repaired.

    Positive semidefinite (to a relative rounding tolerance of 1e-9) or a
    reader's error. Principal moments ``I1 <= I2 <= I3`` violating the triangle
    inequality ``I1 + I2 >= I3`` (no rigid mass distribution has them; exporters write such
    values for dummy links, e.g. ANYmal B's 1e-6 entries) are repaired with a
    reader's warning, as Pinocchio and Drake load these files: the deficit
    ``d = I3 - I1 - I2`` is split between the two smaller moments,
    ``I1 + d/2, I2 + d/2, I3`` (same principal axes), the smallest change to them that
    makes the inertia physical and keeps it nonsingular. Rounding-level defects (a moment
    down to ``-1e-9`` of the largest, a deficit up to ``1e-6`` of it, as from decimals
    printed by an exporter) are repaired the same way without a warning, so that the tree's
    own strict check accepts the result. Returns ``I`` unchanged when it is physical.
    """
    scale = float(np.abs(I).max())
    if scale == 0.0:
        return I
    eig, axes = np.linalg.eigh(I / scale)     # scaled: no overflow for huge finite entries
    if eig[0] < -ROUNDING:
        raise rd.error(node, owner, "rotational inertia is not positive semidefinite "
                                    f"(principal moments {(eig * scale).tolist()})")
    clamped = np.maximum(eig, 0.0)
    deficit = clamped[2] - clamped[0] - clamped[1]
    if eig[0] >= 0.0 and deficit <= 0.0:
        return I                               # physical as written: kept bit for bit
    fixed = clamped + max(deficit, 0.0) * np.array([0.5, 0.5, 0.0])
    if deficit > VISIBLE * clamped[2]:        # beyond the rounding of printed decimals
        rd.warn(node, owner, f"principal moments of inertia {(eig * scale).tolist()} violate "
                             "the triangle inequality I1 + I2 >= I3 (no rigid body has them); "
                             f"repaired to {(fixed * scale).tolist()} by raising the two "
                             "smaller moments")
    J = (axes * fixed) @ axes.T * scale
    return 0.5 * (J + J.T)

def inertia_in_link_frame(mass: float, I: np.ndarray, com: np.ndarray, R: np.ndarray,
                          rd: Reader, node: XmlNode, owner: str) -> np.ndarray:
    """The rotational inertia about the centre of mass in link axes, ``R I R^T`` (3, 3).

    Parameters
    ----------
    mass : float
        Mass (kg), >= 0.
    I : ndarray, shape (3, 3)
        Rotational inertia about the centre of mass in the inertial frame's axes.
    com : ndarray, shape (3,)
        Centre of mass in the link frame.
    R : ndarray, shape (3, 3)
        Orientation of the inertial frame in the link frame.
    rd, node, owner
        The reader, the element and its owner named in errors and warnings.

    Raises
    ------
    ModelParseError
        (the reader's) When the inertia about the link origin, ``R I R^T + m (|c|^2 1 - c c^T)``,
        or the first moment ``m c`` is not finite, or ``I`` is not positive semidefinite.
    """
    xyz = np.asarray(com, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):
        I_link = R @ I @ R.T     # inertia frame -> link frame (about the COM)
        I_link = 0.5 * (I_link + I_link.T)
        # what the algorithms form from it: the inertia about the link origin (parallel axis
        # theorem) and the first moment m c
        I_origin = I_link + mass * (float(xyz @ xyz) * np.eye(3) - np.outer(xyz, xyz))
        finite = bool(np.all(np.isfinite(I_origin)) and np.all(np.isfinite(mass * xyz)))
    if not finite:
        raise rd.error(node, owner, f"mass {mass:g}, centre of mass {xyz.tolist()} and "
                                    f"inertia {inertia_entries(I)} overflow: the inertia about "
                                    "the link frame is not finite in double precision")
    I = check_inertia(I, rd, node, owner)
    return 0.5 * ((R @ I @ R.T) + (R @ I @ R.T).T)


def resolve_filename(filename: str, node: XmlNode, rd: Reader, owner: str,
                      package_map: Mapping[str, str] | None, base_dir: str | None) -> str:
    if filename.startswith("package://"):
        if package_map is None:
            return filename
        pkg, _, rest = filename[len("package://"):].partition("/")
        if pkg not in package_map:
            raise rd.error(node, owner, f"mesh '{filename}': package '{pkg}' is not in package_map "
                                        f"(known: {sorted(package_map)})")
        return os.path.join(os.fspath(package_map[pkg]), rest)
    if "://" in filename or os.path.isabs(filename) or base_dir is None:
        return filename
    return os.path.normpath(os.path.join(base_dir, filename))


MAX_INERTIA = 1e300


def check_scale(robot_name: str, links: Sequence, joints: Sequence, rd: Reader,
                 root_node: XmlNode) -> None:
    """Refuse models whose mass matrix would overflow in double precision.

    Every entry of the joint-space mass matrix is bounded by
    ``sum_k (|I_k| + m_k R^2)`` (Featherstone 2008, eq. 6.2: ``H_ij = S_i^T I^c_i S_j``
    with the composite inertias ``I^c`` about points at most ``R`` from every COM), where
    ``R`` is the reach, the sum of all joint offsets and the largest COM offset. Huge
    finite lengths (``xyz="1e200 0 0"``) would otherwise give inf and NaN at the first
    dynamics call.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        offsets = [float(np.linalg.norm(j.origin[:3, 3])) for j in joints]
        reach = sum(offsets) + max([float(np.linalg.norm(lk.com)) for lk in links] or [0.0])
        mass = sum(lk.mass for lk in links)
        inertia = sum(float(np.abs(lk.inertia).max()) for lk in links)
        bound = inertia + 3.0 * mass * reach * reach
    if np.isfinite(bound) and bound <= MAX_INERTIA:
        return
    if joints and max(offsets) > 1e100:
        j = joints[int(np.argmax(offsets))]
        raise rd.error_at(j.line, owner_name("joint", j.name),
                          f"<origin> offset {j.origin[:3, 3].tolist()} is so large that the "
                          f"mass matrix may overflow in double precision (bound "
                          f"{MAX_INERTIA:g} on sum(|I| + 3 m R^2))")
    heavy = max(links, key=lambda lk: lk.mass * (1.0 + float(np.linalg.norm(lk.com))) ** 2)
    raise rd.error_at(heavy.line, owner_name("link", heavy.name),
                      f"total mass {mass:g} kg at a reach of {reach:g} m may make the mass "
                      f"matrix overflow in double precision (bound {MAX_INERTIA:g} on "
                      "sum(|I| + 3 m R^2))")
