"""Test helper: small trees and diagrams for the viewer tests."""
from __future__ import annotations

import socket

import numpy as np

from multibody import (Box, Capsule, Cylinder, Free, Halfspace, PointContactConstraint,
                       Revolute, RigidBodyTree, Sphere, TimeSteppingRigidBodySystem)
from multibody.geometry import Mesh

# body: (shape, mass); one visual geometry each, sizes all different
SHAPES = {
    "crate": (Box((0.3, 0.2, 0.1)), 2.0),
    "ball": (Sphere(0.07), 1.0),
    "drum": (Cylinder(0.05, 0.2), 1.5),
    "pill": (Capsule(0.04, 0.15), 0.8),
}


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def shapes_tree(mesh_file: str | None = None) -> RigidBodyTree:
    """Four free bodies (box, sphere, cylinder, capsule as visuals at offset poses), a
    pendulum link with collision geometry only, a ground halfspace; optionally a mesh."""
    tree = RigidBodyTree("shapes")
    tree.add_collision_geometry("world", Halfspace(), name="ground")
    for k, (name, (shape, mass)) in enumerate(SHAPES.items()):
        tree.add_body(name, mass, inertia=0.01 * np.eye(3))
        tree.add_joint(Free(f"{name}_free", "world", name))
        pose = np.eye(4)
        pose[:3, 3] = (0.01 * k, -0.02, 0.03)
        c, s = np.cos(0.3 * k), np.sin(0.3 * k)
        pose[:3, :3] = [[c, -s, 0], [s, c, 0], [0, 0, 1]]
        tree.add_visual_geometry(name, shape, pose, name=f"{name}_visual",
                                 material={"rgba": (0.1 * k, 0.5, 0.9, 1.0)})
    tree.add_body("link", 1.0, com=(0, 0, -0.25), inertia=0.02 * np.eye(3))
    tree.add_joint(Revolute("hinge", "crate", "link", axis=(1, 0, 0)))
    tree.add_collision_geometry("link", Box((0.02, 0.02, 0.5)),
                                pose=np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, -0.25],
                                               [0, 0, 0, 1.0]]), name="link_collision")
    if mesh_file is not None:
        tree.add_body("tetra", 0.5, inertia=0.01 * np.eye(3))
        tree.add_joint(Free("tetra_free", "world", "tetra"))
        tree.add_visual_geometry("tetra", Mesh(mesh_file, (2.0, 2.0, 2.0)), name="tetra_mesh")
    return tree


def write_tetrahedron(path: str) -> str:
    """A unit right tetrahedron as an ASCII STL file."""
    v = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], float)
    faces = [(0, 2, 1), (0, 1, 3), (0, 3, 2), (1, 2, 3)]
    lines = ["solid tetra"]
    for f in faces:
        n = np.cross(v[f[1]] - v[f[0]], v[f[2]] - v[f[0]])
        lines.append(f"facet normal {n[0]} {n[1]} {n[2]}\nouter loop")
        lines += [f"vertex {v[i][0]} {v[i][1]} {v[i][2]}" for i in f]
        lines.append("endloop\nendfacet")
    lines.append("endsolid tetra")
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    return path


def resting_balls(time_step: float = 2e-3):
    """Two free balls (collision geometry only) dropped 1 cm onto a ground halfspace, time
    stepping with frictional contact. Returns ``(tree, plant, masses)``."""
    tree = RigidBodyTree("balls")
    tree.add_collision_geometry("world", Halfspace(), name="ground")
    masses = {"b1": 1.0, "b2": 2.5}
    for k, (name, m) in enumerate(masses.items()):
        r = 0.05 + 0.02 * k
        tree.add_body(name, m, inertia=0.4 * m * r ** 2 * np.eye(3))
        tree.add_joint(Free(f"{name}_free", "world", name))
        tree.add_collision_geometry(name, Sphere(r), name=f"{name}_geom")
    contact = PointContactConstraint(tree, mu=0.5, name="contact")
    plant = TimeSteppingRigidBodySystem(tree, time_step, constraints=[contact], name="plant")
    return tree, plant, masses


def place_balls(tree, plant, context, drop: float = 0.01, vx: float = 0.0) -> None:
    q = tree.neutral_configuration()
    v = np.zeros(tree.nv)
    for k, name in enumerate(("b1", "b2")):
        j = tree.get_joint(f"{name}_free")
        q[j.q_start + 4:j.q_start + 7] = (0.0, 0.4 * k, 0.05 + 0.02 * k + drop)
        v[j.v_start + 3] = vx
    plant.set_positions(context, q)
    plant.set_velocities(context, v)
