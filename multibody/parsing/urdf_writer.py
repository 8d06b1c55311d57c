"""URDF export of a :class:`~multibody.tree.RigidBodyTree` and the coordinate map to the
exported model.

URDF has only one-axis joints, so multi-axis joints are written as chains of revolute joints
through massless links (exactly zero mass and inertia, which our URDF reader and Pinocchio
accept, so the exported dynamics equal the tree's):

* ``Universal`` ``j`` -> ``j_1`` (``axis1``) - link ``j_link1`` - ``j_2`` (``axis2``);
* ``Euler`` ``j`` with axes ``"zyx"`` -> ``j_z``, ``j_y``, ``j_x`` through ``j_link1``, ``j_link2``.

An Euler joint's coordinates are rotation angles about fixed axes applied in sequence with
``v = qdot`` (:class:`~multibody.tree.Euler`), which is exactly what the revolute chain is, so
configuration and velocity coordinates carry over one to one: no quaternion to Euler
conversion is needed. A ``Ball`` joint (quaternion) has no exact one-to-one export and is
refused; build the model with ``Euler`` joints instead (as :func:`skeleton_tree` does).

The root joint: a ``Free`` joint from the world is left out (load the file with a free-flyer
root: ``parse_urdf(path, floating_base=True)`` or Pinocchio's
``buildModelFromUrdf(path, JointModelFreeFlyer())``); a ``Weld`` to the world is left out too
when its origin is the identity. Effort and velocity limits that are infinite are written as
``1e9`` (URDF requires numbers).

:func:`urdf_joint_order` lists the exported one-DOF joints in the order Pinocchio's URDF reader
numbers them (depth first from the root link, children sorted by joint name, as urdfdom stores
them), and :func:`configuration_to_urdf_order` / :func:`velocity_to_urdf_order` map our ``q``,
``v`` (or ``tau``) to that order with Pinocchio's free-flyer convention first:
``q = [x, y, z, qx, qy, qz, qw, joints...]``, ``v = [v; omega, joints...]`` (both local frame).
"""
from __future__ import annotations

import math
import os
import pathlib
from typing import Any
from xml.sax.saxutils import quoteattr

import numpy as np

from ..errors import InputSizeError, JointError

__all__ = ["write_urdf", "urdf_joint_order", "configuration_to_urdf_order",
           "velocity_to_urdf_order", "configuration_from_urdf_order", "velocity_from_urdf_order"]

_BIG = 1e9


def _fmt(x: float) -> str:
    return repr(float(x))


def _vec(v) -> str:
    return " ".join(_fmt(x) for x in np.ravel(v))


def _rpy(R: np.ndarray) -> np.ndarray:
    """URDF roll-pitch-yaw of a rotation (``R = Rz(yaw) Ry(pitch) Rx(roll)``)."""
    pitch = math.asin(max(-1.0, min(1.0, -R[2, 0])))
    if abs(R[2, 0]) < 1 - 1e-12:
        roll = math.atan2(R[2, 1], R[2, 2])
        yaw = math.atan2(R[1, 0], R[0, 0])
    else:  # gimbal lock: put everything in yaw
        roll = 0.0
        yaw = math.atan2(-R[0, 1], R[1, 1])
    return np.array([roll, pitch, yaw])


def _origin(T: np.ndarray) -> str:
    return f'<origin xyz="{_vec(T[:3, 3])}" rpy="{_vec(_rpy(T[:3, :3]))}"/>'


def _root_joint(tree):
    roots = [j for j in tree.joints if j.parent == "world"]
    if len(roots) != 1:
        raise JointError(f"tree '{tree.name}': URDF export needs exactly one joint from the "
                         f"world, found {len(roots)}")
    return roots[0]


def _expand(joint) -> list[tuple[str, np.ndarray, int]]:
    """One-DOF pieces ``(name, axis, coordinate index)`` of a joint, parent side first."""
    t = joint.type
    if t == "revolute":
        return [(joint.name, joint.axis, 0)]
    if t == "prismatic":
        return [(joint.name, joint.axis, 0)]
    if t == "universal":
        return [(f"{joint.name}_1", joint.axis1, 0), (f"{joint.name}_2", joint.axis2, 1)]
    if t == "euler":
        eye = {"x": np.array([1.0, 0, 0]), "y": np.array([0, 1.0, 0]), "z": np.array([0, 0, 1.0])}
        return [(f"{joint.name}_{a}" if joint.axes.count(a) == 1 else f"{joint.name}_{k + 1}",
                 eye[a], k) for k, a in enumerate(joint.axes)]
    if t == "weld":
        return []
    raise JointError(f"joint '{joint.name}': URDF export supports revolute, prismatic, "
                     f"universal, euler and weld joints (and a free or weld root), not '{t}'"
                     + (" (use an Euler joint instead of a Ball)" if t == "ball" else ""))


def write_urdf(tree, path: str | os.PathLike | None = None, *, name: str | None = None,
               geometry: bool = True) -> str:
    """Write a tree as URDF (module docstring for the mapping of multi-axis joints).

    Parameters
    ----------
    tree : RigidBodyTree
        Finalized or not; one joint from the world (Free or Weld).
    path : str or path-like, optional
        File to write; ``None`` only returns the text.
    name : str, optional
        Robot name (default ``tree.name``).
    geometry : bool
        Write box, sphere and cylinder visual geometry (capsules as cylinders of the full
        length, since URDF has no capsule).

    Returns
    -------
    str
        The URDF document.

    Raises
    ------
    JointError
        A joint type with no exact URDF form (Ball, Planar, ...), or a root joint other than
        Free or Weld.
    """
    from .. import geometry as G

    tree.finalize()
    root = _root_joint(tree)
    if root.type not in ("free", "weld"):
        raise JointError(f"joint '{root.name}': the root joint must be free or weld for URDF "
                         f"export, got '{root.type}'")
    lines = [f'<?xml version="1.0"?>', f'<robot name={quoteattr(name or tree.model_name)}>']
    has_world = root.type == "weld" and not np.allclose(root.origin, np.eye(4))
    if has_world:
        lines.append('  <link name="world"/>')
        lines += [f'  <joint name={quoteattr(root.name)} type="fixed">',
                  '    <parent link="world"/>', f'    <child link={quoteattr(root.child)}/>',
                  f'    {_origin(root.origin)}', '  </joint>']
    for body in tree.bodies:
        if body.name == "world":
            continue
        lines.append(f'  <link name={quoteattr(body.name)}>')
        I = body.inertia
        lines += ['    <inertial>', f'      <origin xyz="{_vec(body.com)}" rpy="0 0 0"/>',
                  f'      <mass value="{_fmt(body.mass)}"/>',
                  f'      <inertia ixx="{_fmt(I[0, 0])}" ixy="{_fmt(I[0, 1])}" '
                  f'ixz="{_fmt(I[0, 2])}" iyy="{_fmt(I[1, 1])}" iyz="{_fmt(I[1, 2])}" '
                  f'izz="{_fmt(I[2, 2])}"/>', '    </inertial>']
        if geometry:
            for g in body.visual_geometries:
                s = g.shape
                if isinstance(s, G.Box):
                    geo = f'<box size="{_vec(s.size)}"/>'
                elif isinstance(s, G.Sphere):
                    geo = f'<sphere radius="{_fmt(s.radius)}"/>'
                elif isinstance(s, (G.Cylinder, G.Capsule)):
                    length = s.length + (2 * s.radius if isinstance(s, G.Capsule) else 0.0)
                    geo = f'<cylinder radius="{_fmt(s.radius)}" length="{_fmt(length)}"/>'
                else:
                    continue
                lines += ['    <visual>', f'      {_origin(np.asarray(g.pose))}',
                          f'      <geometry>{geo}</geometry>', '    </visual>']
        lines.append('  </link>')
    for joint in tree.joints:
        if joint is root:
            continue
        pieces = _expand(joint)
        if not pieces:
            lines += [f'  <joint name={quoteattr(joint.name)} type="fixed">',
                      f'    <parent link={quoteattr(joint.parent)}/>',
                      f'    <child link={quoteattr(joint.child)}/>', f'    {_origin(joint.origin)}',
                      '  </joint>']
            continue
        parent = joint.parent
        for n, (jname, axis, k) in enumerate(pieces):
            last = n == len(pieces) - 1
            child = joint.child if last else f"{joint.name}_link{n + 1}"
            if not last:
                lines += [f'  <link name={quoteattr(child)}>', '    <inertial>',
                          '      <origin xyz="0 0 0" rpy="0 0 0"/>', '      <mass value="0"/>',
                          '      <inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/>',
                          '    </inertial>', '  </link>']
            lo, hi = joint.lower[k], joint.upper[k]
            vmax = joint.velocity_limit[k] if np.isfinite(joint.velocity_limit[k]) else _BIG
            emax = joint.effort_limit[k] if np.isfinite(joint.effort_limit[k]) else _BIG
            kind = joint.type if joint.type == "prismatic" else "revolute"
            if kind == "revolute" and not (np.isfinite(lo) and np.isfinite(hi)):
                kind = "continuous"
            T = joint.origin if n == 0 else np.eye(4)
            lines += [f'  <joint name={quoteattr(jname)} type="{kind}">',
                      f'    <parent link={quoteattr(parent)}/>',
                      f'    <child link={quoteattr(child)}/>', f'    {_origin(T)}',
                      f'    <axis xyz="{_vec(axis)}"/>']
            if kind == "continuous":
                lines.append(f'    <limit effort="{_fmt(emax)}" velocity="{_fmt(vmax)}"/>')
            else:
                lines.append(f'    <limit lower="{_fmt(lo)}" upper="{_fmt(hi)}" '
                             f'effort="{_fmt(emax)}" velocity="{_fmt(vmax)}"/>')
            d, f = joint.damping[k], joint.friction[k]
            if d or f:
                lines.append(f'    <dynamics damping="{_fmt(d)}" friction="{_fmt(f)}"/>')
            lines.append('  </joint>')
            parent = child
    lines.append('</robot>')
    text = "\n".join(lines) + "\n"
    if path is not None:
        pathlib.Path(path).write_text(text)
    return text


def _urdf_layout(tree):
    """[(urdf joint name, our q index, our v index)] in Pinocchio's order."""
    tree.finalize()
    root = _root_joint(tree)
    children: dict[str, list] = {}
    for joint in tree.joints:
        if joint is root:
            continue
        pieces = _expand(joint)
        # sort key of a joint in its parent's child list: its first URDF joint name
        key = pieces[0][0] if pieces else joint.name
        children.setdefault(joint.parent, []).append((key, joint, pieces))
    out = []

    def visit(link):
        for _, joint, pieces in sorted(children.get(link, []), key=lambda e: e[0]):
            # a chain j_a -> j_link1 -> j_b ...: the intermediate links have one child each
            for jname, _, k in pieces:
                out.append((jname, joint.q_start + k, joint.v_start + k))
            visit(joint.child)

    visit(root.child)
    return root, out


def urdf_joint_order(tree) -> list[str]:
    """Names of the exported one-DOF joints in the order Pinocchio's URDF reader gives them
    (after the free-flyer root): depth first from the root link, the children of a link sorted
    by joint name (urdfdom keeps joints in a name-sorted map)."""
    return [n for n, _, _ in _urdf_layout(tree)[1]]


def _urdf_index(tree, kind: str) -> np.ndarray:
    """Index array ``idx`` with ``x_urdf = x[..., idx]`` for ``kind`` "q" or "v"."""
    root, layout = _urdf_layout(tree)
    idx = []
    if root.type == "free":
        if kind == "q":   # ours [qw, qx, qy, qz, x, y, z] -> [x, y, z, qx, qy, qz, qw]
            s = root.q_start
            idx += [s + 4, s + 5, s + 6, s + 1, s + 2, s + 3, s]
        else:             # ours [omega; v] -> [v; omega]
            s = root.v_start
            idx += [s + 3, s + 4, s + 5, s, s + 1, s + 2]
    idx += [qi if kind == "q" else vi for _, qi, vi in layout]
    return np.array(idx, dtype=int)


def _checked(tree, x: Any, kind: str, who: str) -> np.ndarray:
    x = np.asarray(x, float)
    n = tree.nq if kind == "q" else tree.nv
    if x.ndim == 0 or x.shape[-1] != n:
        raise InputSizeError(f"{who}: {kind} must have shape ({n},) or (T, {n}) for tree "
                             f"'{tree.name}' (n{kind} = {n}), got shape {x.shape}")
    return x


def configuration_to_urdf_order(tree, q: Any) -> np.ndarray:
    """Our configuration ``q`` (nq,) or (T, nq) -> the exported URDF's, Pinocchio's order.

    With a Free root (ours ``[qw, qx, qy, qz, x, y, z]``) the result starts with Pinocchio's
    free-flyer ``[x, y, z, qx, qy, qz, qw]``; then one angle per exported joint in
    :func:`urdf_joint_order` (Euler and Universal angles carry over unchanged).

    Raises
    ------
    InputSizeError
        ``q`` whose last axis is not ``nq`` long.
    """
    q = _checked(tree, q, "q", "configuration_to_urdf_order")
    return q[..., _urdf_index(tree, "q")]


def velocity_to_urdf_order(tree, v: Any) -> np.ndarray:
    """Our ``v`` (or ``vdot``, or ``tau``) (nv,) or (T, nv) -> Pinocchio's order: a Free root's
    ``[omega; v]`` becomes ``[v; omega]`` (both in the root link frame; for ``tau``, our
    ``[torque; force]`` becomes ``[force; torque]``), then the joints in
    :func:`urdf_joint_order`.

    Raises
    ------
    InputSizeError
        ``v`` whose last axis is not ``nv`` long.
    """
    v = _checked(tree, v, "v", "velocity_to_urdf_order")
    return v[..., _urdf_index(tree, "v")]


def configuration_from_urdf_order(tree, q_urdf: Any) -> np.ndarray:
    """Inverse of :func:`configuration_to_urdf_order`: Pinocchio's ``q`` (nq,) or (T, nq) ->
    ours."""
    q_urdf = _checked(tree, q_urdf, "q", "configuration_from_urdf_order")
    return q_urdf[..., np.argsort(_urdf_index(tree, "q"))]


def velocity_from_urdf_order(tree, v_urdf: Any) -> np.ndarray:
    """Inverse of :func:`velocity_to_urdf_order`: Pinocchio's ``v`` (or ``tau``) (nv,) or
    (T, nv) -> ours."""
    v_urdf = _checked(tree, v_urdf, "v", "velocity_from_urdf_order")
    return v_urdf[..., np.argsort(_urdf_index(tree, "v"))]
