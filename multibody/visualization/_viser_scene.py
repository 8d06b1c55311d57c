"""The browser scene on a viser server (private to :mod:`multibody.visualization`).

``ViserScene`` turns :class:`~multibody.visualization.scene.VisualItem` lists into viser
scene nodes: one frame node per body (``<root>/bodies/<body>``), its geometry as children at
their body-frame poses, optional axes and marker spheres; contact points (a point cloud) and
contact-force arrows (``<root>/contact_forces``, each ending at its point, pushing on body
B). A frame of poses moves only the body nodes. viser is imported here, on first use, with a
named error when it is missing.
"""
from __future__ import annotations

import numpy as np

from .errors import INSTALL_HINT, ViewerUnavailableError
from .scene import capsule_mesh, mesh_arrays, pose_quaternions


def import_viser():
    """The ``viser`` module, or :class:`ViewerUnavailableError` naming the extra to install."""
    try:
        import viser
    except ImportError:
        raise ViewerUnavailableError("the browser viewer needs the optional library viser: "
                                     f"{INSTALL_HINT}") from None
    return viser


def start_server(host: str = "127.0.0.1", port: int = 8080):
    """A new viser server (``port`` taken or the next free one)."""
    viser = import_viser()
    return viser.ViserServer(host=host, port=port, verbose=False)


def _node(name: str) -> str:
    return name.replace("/", "_").replace(" ", "_")


class ViserScene:
    """Scene nodes of one tree on one server (module docstring).

    Parameters
    ----------
    server : viser.ViserServer
    items : list of VisualItem
    body_names : sequence of str
        All bodies, ``tree.bodies`` order (world first).
    root : str
        Prefix of every node name.
    show_frames : bool
        Draw each body's axes (``frame_length`` long).
    markers : list of (name, body, offset (3,))
    marker_radius : float
    force_scale : float
        Arrow length per newton (m/N).
    camera : (position (3,), look_at (3,)), optional
        Initial camera of new pages (world coordinates).
    """

    def __init__(self, server, items, body_names, *, root: str = "/dynablocks",
                 show_frames: bool = False, frame_length: float = 0.1, markers=(),
                 marker_radius: float = 0.01, force_scale: float = 0.002,
                 camera=None) -> None:
        self.server = server
        self.root = root.rstrip("/")
        self.body_names = list(body_names)
        self.force_scale = float(force_scale)
        sc = server.scene
        if camera is not None:
            server.initial_camera.position = tuple(float(x) for x in camera[0])
            server.initial_camera.look_at = tuple(float(x) for x in camera[1])
        self.body_nodes = {}
        self.geometry_nodes = {}
        self.marker_nodes = {}
        self.contact_nodes = {"arrows": None, "points": None}
        for b in self.body_names:
            self.body_nodes[b] = sc.add_frame(self.body_path(b), show_axes=bool(show_frames),
                                              axes_length=frame_length,
                                              axes_radius=frame_length / 25.0)
        for it in items:
            self.geometry_nodes[(it.body, it.name)] = self._add_item(sc, it)
        for mname, body, offset in markers:
            self.marker_nodes[mname] = sc.add_icosphere(
                f"{self.body_path(body)}/marker_{_node(mname)}", radius=marker_radius,
                color=(240, 40, 40), position=tuple(float(x) for x in offset))

    def body_path(self, body: str) -> str:
        """Scene-node name of a body's frame."""
        return f"{self.root}/bodies/{_node(body)}"

    def _add_item(self, sc, it):
        name = f"{self.body_path(it.body)}/{_node(it.name)}"
        pos, quat = pose_quaternions(it.pose[None])
        kw = dict(position=tuple(pos[0]), wxyz=tuple(quat[0]))
        opacity = None if it.opacity >= 1.0 else it.opacity
        if it.kind == "box":
            return sc.add_box(name, color=it.color, dimensions=it.size, opacity=opacity, **kw)
        if it.kind == "sphere":
            return sc.add_icosphere(name, radius=it.size[0], color=it.color, opacity=opacity,
                                    **kw)
        if it.kind == "cylinder":
            return sc.add_cylinder(name, radius=it.size[0], height=it.size[1], color=it.color,
                                   opacity=opacity, **kw)
        if it.kind == "capsule":
            v, f = capsule_mesh(*it.size)
            return sc.add_mesh_simple(name, v, f, color=it.color, opacity=opacity, **kw)
        if it.kind == "mesh":
            v, f = mesh_arrays(it)
            return sc.add_mesh_simple(name, v, f, color=it.color, opacity=opacity,
                                      side="double", **kw)
        # halfspace: its boundary plane z = 0 drawn as a grid
        return sc.add_grid(name, width=4.0, height=4.0, plane="xy", cell_size=0.25,
                           section_size=1.0, plane_color=it.color, plane_opacity=0.5, **kw)

    def set_poses(self, positions: np.ndarray, quaternions: np.ndarray) -> None:
        """Move the body nodes: positions (nb, 3), quaternions ``[w, x, y, z]`` (nb, 4)."""
        with self.server.atomic():
            for b, p, q in zip(self.body_names, positions, quaternions):
                node = self.body_nodes[b]
                node.position = np.asarray(p, dtype=float)
                node.wxyz = np.asarray(q, dtype=float)

    def set_contacts(self, points: np.ndarray, forces: np.ndarray) -> None:
        """Draw contact points (k, 3) and the forces on body B (k, 3) as arrows from
        ``point - force_scale * force`` to ``point``."""
        sc = self.server.scene
        for key in ("arrows", "points"):
            if self.contact_nodes[key] is not None:
                self.contact_nodes[key].remove()
                self.contact_nodes[key] = None
        points = np.asarray(points, dtype=float).reshape(-1, 3)
        if points.shape[0] == 0:
            return
        forces = np.asarray(forces, dtype=float).reshape(-1, 3)
        # each arrow ends at its contact point, pushing on body B (outside both bodies)
        seg = np.stack([points - self.force_scale * forces, points], axis=1)
        self.contact_nodes["points"] = sc.add_point_cloud(
            f"{self.root}/contact_points", points=points.astype(np.float32),
            colors=(20, 20, 20), point_size=0.015, point_shape="circle", precision="float32")
        self.contact_nodes["arrows"] = sc.add_arrows(
            f"{self.root}/contact_forces", points=seg.astype(np.float32), colors=(220, 30, 30),
            shaft_radius=0.004, head_radius=0.01, head_length=0.02)

    def show(self, recording, i: int) -> None:
        """Draw frame ``i`` of a recording."""
        _t, pos, quat, cp, cf = recording.frame(i)
        self.set_poses(pos, quat)
        self.set_contacts(cp, cf)
