"""``Visualizer``: a diagram block that draws a rigid-body tree in a web browser.

The block reads the plant's ``state`` output (``[q; v]``, nq + nv; both rigid-body plants
give it) and, when connected, its ``contact_results`` (an abstract
:class:`~multibody.constraints.ContactResults`). About every ``publish_period`` (see
below) a publish computes the world pose of every body (forward kinematics, Featherstone
2008, sec. 4.1), appends a frame to the :class:`~multibody.visualization.Recording` held in
the block's abstract state (so each context keeps its own recording and a rerun from a copy
of the initial context records the same frames), and, when the viewer is live, moves the
body nodes of a ``viser`` scene (the tree's visual geometry, or its collision geometry for a
body without visuals; contact points and force arrows; optional body axes and marker
points). A publish changes no state the dynamics read.

When frames are taken: by default the block adds no simulator step boundaries. It publishes
per step (a per-step publish event) and records a frame at the end of the first step that
reaches each publish time ``k * publish_period``, stamped with that step's time (the time of
the state it shows). So a diagram simulates to the same numbers with or without the block
*and* a per-step ``LogVectorOutput`` logs the same sample times and values, bitwise. With a
time-stepping plant whose ``time_step`` divides the period (or a fixed-step integrator) the
frames are exactly at ``k * publish_period``; otherwise a frame is at most one step late
(for a discrete plant it shows the same state a publish at ``k * publish_period`` would see:
``x`` is constant between updates). ``exact_times=True`` declares a periodic publish
instead, as Drake's ``MeshcatVisualizer`` does: frames exactly at ``k * publish_period``,
which the Simulator then makes step boundaries (a per-step log gets samples there too; the
dynamics of a time-stepping plant are unchanged).

``replay(recording, speed)`` plays a recording back in the browser; ``export_html(recording,
path)`` writes one self-contained HTML file (viser's own client, built as a single page, with
the scene and its timeline embedded; it opens from ``file://`` without a server or network).
"""
from __future__ import annotations

import contextlib
import io
import math
import os
import socket
import time
from typing import Optional, Sequence

import numpy as np

from systems import LeafSystem
from ..constraints import ContactResults
from ..motion import MarkerSetError, marker_set_arrays
from ._viser_scene import ViserScene, import_viser, start_server
from .errors import VisualizationError
from .recording import Recording
from .scene import BodyPoseFunction, pose_quaternions, visual_items

__all__ = ["Visualizer", "add_visualizer", "require_viewer", "show_run"]


def require_viewer() -> None:
    """Check that the browser viewer can run (``viser`` importable).

    Raises
    ------
    ViewerUnavailableError
        viser is not installed; the message says ``pip install 'dynablocks[viz]'``.
    """
    import_viser()


class FrameClock:
    """Index ``k`` of the next frame due at ``k * publish_period`` (one per context, in the
    Visualizer's abstract state: per-run memory lives in the Context)."""

    __slots__ = ("next",)

    def __init__(self) -> None:
        self.next = 0


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Visualizer(LeafSystem):
    """Draws a tree's bodies, contacts and markers in a browser (module docstring).

    Parameters
    ----------
    tree : RigidBodyTree
        Finalized here.
    publish_period : float
        Seconds between published frames (> 0).
    server : viser.ViserServer, optional
        Draw on this server; by default the block starts one (``host``, ``port`` or the next
        free port) the first time it draws.
    live : bool
        Draw in the browser while simulating; ``False`` only records (no server, no viser
        needed until :meth:`replay` or :meth:`export_html`).
    record : bool
        Keep a :class:`Recording` in the context (one frame per publish).
    show_frames : bool
        Draw each body's axes, ``frame_length`` m long.
    markers : sequence of (name, body, offset)
        Points fixed on bodies (or frames), as for :class:`sensors.MarkerSensor`, drawn as
        spheres of ``marker_radius`` m.
    contact_force_scale : float
        Length of a contact-force arrow per newton (m/N).
    collision_fallback : bool
        Draw the collision geometry of bodies without visual geometry.
    camera : (position (3,), look_at (3,)) or None
        Initial camera of a page (world coordinates, m); ``None``: viser's default.
    exact_times : bool
        ``False`` (default): frames are taken per simulator step, at the first step that
        reaches each ``k * publish_period``, adding no step boundaries (module docstring);
        ``True``: a periodic publish at exactly ``k * publish_period`` (step boundaries).
    name : str

    Ports
    -----
    input ``state`` (nq + nv); input ``contact_results`` (abstract, optional: drawn when
    connected).

    Raises
    ------
    VisualizationError
        A non-positive publish period, a bad marker, a shape that cannot be drawn.
    ViewerUnavailableError
        ``live`` (or a drawing method) without viser installed; says
        ``pip install 'dynablocks[viz]'``.

    Examples
    --------
    >>> vis = builder.add_system(Visualizer(plant.tree, 1 / 30))       # doctest: +SKIP
    >>> builder.connect(plant.get_output_port("state"), vis.get_input_port("state"))
    ... # doctest: +SKIP
    """

    def __init__(self, tree, publish_period: float = 1.0 / 30.0, *, server=None,
                 host: str = "127.0.0.1", port: int = 8080, live: bool = True,
                 record: bool = True, show_frames: bool = False, frame_length: float = 0.1,
                 markers: Sequence = (), marker_radius: float = 0.01,
                 contact_force_scale: float = 0.002, collision_fallback: bool = True,
                 camera=((1.2, -1.6, 0.9), (0.0, 0.0, 0.15)), exact_times: bool = False,
                 name: str = "visualizer") -> None:
        super().__init__(name)
        who = f"Visualizer '{self.name}'"
        try:
            period = float(publish_period)
        except (TypeError, ValueError):
            period = math.nan
        if not (math.isfinite(period) and period > 0.0):
            raise VisualizationError(f"{who}: publish_period must be a positive number of "
                                     f"seconds, got {publish_period!r}")
        for label, value in (("frame_length", frame_length), ("marker_radius", marker_radius),
                             ("contact_force_scale", contact_force_scale)):
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise VisualizationError(f"{who}: {label} must be a positive number, got "
                                         f"{value!r}")
        if live and server is None:
            import_viser()  # fail here, naming the extra, rather than at the first publish
        tree.finalize()
        self.tree = tree
        self.publish_period = period
        self.live, self.record = bool(live), bool(record)
        self.body_names = [b.name for b in tree.bodies]
        self.items = visual_items(tree, collision_fallback)
        self._poses = BodyPoseFunction(tree)
        self.markers = self._check_markers(markers, who)
        self._options = dict(show_frames=bool(show_frames), frame_length=float(frame_length),
                             markers=self.markers, marker_radius=float(marker_radius),
                             force_scale=float(contact_force_scale), camera=camera)
        self._host, self._port = host, int(port)
        self._server, self._scene = server, None
        self.state_port = self.declare_input_port("state", tree.nq + tree.nv)
        self.contact_port = self.declare_abstract_input_port("contact_results",
                                                             ContactResults())
        self._rec_index = self.declare_abstract_state(Recording(self.body_names))
        self.exact_times = bool(exact_times)
        if self.exact_times:
            self.declare_periodic_publish(period, 0.0, self._publish)
        else:
            self._clock_index = self.declare_abstract_state(FrameClock())
            self.declare_per_step_publish(self._publish_if_due)

    def _check_markers(self, markers, who: str) -> list:
        markers = list(markers)
        if not markers:
            return []
        try:
            names, bodies, offsets = marker_set_arrays(self.tree, markers, who)
        except MarkerSetError as exc:
            raise VisualizationError(str(exc)) from None
        return list(zip(names, bodies, offsets))

    # ------------------------------------------------------------------ the browser scene
    @property
    def server(self):
        """The viser server drawn on (started on first use)."""
        if self._server is None:
            self._server = start_server(self._host, self._port)
        return self._server

    @property
    def scene(self) -> ViserScene:
        """The scene nodes of this tree on :attr:`server` (built on first use)."""
        if self._scene is None:
            self._scene = ViserScene(self.server, self.items, self.body_names, **self._options)
        return self._scene

    @property
    def url(self) -> str:
        """Address of the live viewer (starts the server)."""
        srv = self.server
        host = srv.get_host()
        host = "localhost" if host in ("0.0.0.0", "127.0.0.1", "") else host
        return f"http://{host}:{srv.get_port()}"

    def close(self) -> None:
        """Stop the server this block started (a server passed in is left running)."""
        if self._server is not None and self._scene is not None:
            self._scene = None
        if self._server is not None:
            self._server.stop()
            self._server = None

    # ------------------------------------------------------------------ frames
    def frame(self, q, contact_results: Optional[ContactResults] = None) -> tuple:
        """Poses and contacts drawn for ``q``: positions (nb, 3), quaternions ``[w, x, y, z]``
        (nb, 4), contact points (k, 3) and the forces on body B (k, 3)."""
        pos, quat = pose_quaternions(self._poses(q))
        if contact_results is None or len(contact_results) == 0:
            return pos, quat, np.zeros((0, 3)), np.zeros((0, 3))
        cp = np.array([c.point for c in contact_results], dtype=float).reshape(-1, 3)
        cf = np.array([c.force for c in contact_results], dtype=float).reshape(-1, 3)
        return pos, quat, cp, cf

    def draw(self, q, contact_results: Optional[ContactResults] = None) -> None:
        """Draw configuration ``q`` (nq) and optional contact results now."""
        pos, quat, cp, cf = self.frame(q, contact_results)
        self.scene.set_poses(pos, quat)
        self.scene.set_contacts(cp, cf)

    def _publish_if_due(self, context) -> None:
        """The per-step publish: a frame when the step's time has reached the next
        ``k * publish_period`` (within rounding), then the next ``k`` after this time."""
        t = float(context.time)
        clock = context.abstract_state[self._clock_index]
        period = self.publish_period
        tol = 1e-9 * period + 1e-12 * max(1.0, abs(t))
        if t < clock.next * period - tol:
            return
        self._publish(context)
        clock.next = int(math.floor((t + tol) / period)) + 1

    def _publish(self, context) -> None:
        x = self.state_port.eval(context)
        contacts = self.contact_port.eval(context) if self.contact_port.has_value(context) \
            else None
        pos, quat, cp, cf = self.frame(np.asarray(x, dtype=float)[:self.tree.nq], contacts)
        if self.record:
            context.abstract_state[self._rec_index].append(context.time, pos, quat, cp, cf)
        if self.live:
            self.scene.set_poses(pos, quat)
            self.scene.set_contacts(cp, cf)

    def record_trajectory(self, times, q, contact_bodies: Sequence[str] = (),
                          contact_points=None, contact_forces=None) -> Recording:
        """A :class:`Recording` of a motion computed elsewhere (a fit, a planner, a log).

        Parameters
        ----------
        times : array_like, shape (N,)
            Increasing.
        q : array_like, shape (N, nq)
        contact_bodies : sequence of str, length P
            Body of each contact point.
        contact_points : array_like, shape (P, 3), optional
            Contact points in their bodies' frames.
        contact_forces : array_like, shape (N, P, 3), optional
            World force at each point in each frame; points with a zero force are left out
            of that frame.

        Raises
        ------
        VisualizationError
            Shapes that do not fit, an unknown contact body.
        """
        who = f"Visualizer '{self.name}'.record_trajectory"
        t = np.asarray(times, dtype=float).ravel()
        Q = np.asarray(q, dtype=float)
        if Q.ndim != 2 or Q.shape != (t.size, self.tree.nq):
            raise VisualizationError(f"{who}: q has shape {Q.shape}, expected "
                                     f"({t.size}, nq = {self.tree.nq}) for {t.size} times")
        bodies = list(contact_bodies)
        P = len(bodies)
        pts = np.zeros((0, 3)) if contact_points is None else \
            np.asarray(contact_points, dtype=float).reshape(-1, 3)
        F = np.zeros((t.size, 0, 3)) if contact_forces is None else \
            np.asarray(contact_forces, dtype=float)
        if pts.shape[0] != P or F.shape != (t.size, P, 3):
            raise VisualizationError(f"{who}: {P} contact bodies, contact points {pts.shape} "
                                     f"and forces {F.shape}: expected ({P}, 3) and "
                                     f"({t.size}, {P}, 3)")
        unknown = sorted(set(bodies) - set(self.body_names))
        if unknown:
            raise VisualizationError(f"{who}: contact bodies {unknown} are not bodies of tree "
                                     f"'{self.tree.name}'")
        index = [self.body_names.index(b) for b in bodies]
        rec = Recording(self.body_names)
        for k in range(t.size):
            T = self._poses(Q[k])
            pos, quat = pose_quaternions(T)
            world = np.array([T[i, :3, :3] @ p + T[i, :3, 3] for i, p in zip(index, pts)])
            on = np.linalg.norm(F[k], axis=1) > 0.0 if P else np.zeros(0, bool)
            rec.append(t[k], pos, quat, world.reshape(-1, 3)[on], F[k][on])
        return rec

    def get_recording(self, context) -> Recording:
        """The frames published in ``context`` (this block's or an enclosing diagram's)."""
        return self.get_my_context_from_root(context).abstract_state[self._rec_index]

    # ------------------------------------------------------------------ playback and export
    def _check_recording(self, recording) -> None:
        if not isinstance(recording, Recording):
            raise VisualizationError(f"Visualizer '{self.name}': expected a Recording, got "
                                     f"{type(recording).__name__}")
        if tuple(recording.body_names) != tuple(self.body_names):
            raise VisualizationError(f"Visualizer '{self.name}': the recording's bodies "
                                     f"{list(recording.body_names)} are not tree "
                                     f"'{self.tree.name}''s bodies {self.body_names}")
        if recording.num_frames == 0:
            raise VisualizationError(f"Visualizer '{self.name}': the recording has no frames")

    def replay(self, recording: Recording, speed: float = 1.0) -> int:
        """Play ``recording`` in the browser at ``speed`` times real time (``math.inf``: as
        fast as the frames can be sent). Returns the number of frames shown."""
        self._check_recording(recording)
        if not (isinstance(speed, (int, float)) and speed > 0):
            raise VisualizationError(f"Visualizer '{self.name}': replay speed must be "
                                     f"positive, got {speed!r}")
        times = recording.times
        start = time.monotonic()
        for i in range(recording.num_frames):
            if math.isfinite(speed):
                wait = (times[i] - times[0]) / speed - (time.monotonic() - start)
                if wait > 0:
                    time.sleep(wait)
            self.scene.show(recording, i)
        return recording.num_frames

    def export_html(self, recording: Recording, path: str, *, dark_mode: bool = False) -> str:
        """Write ``recording`` as one self-contained HTML file (viser's single-page client
        with the scene and its timeline embedded; opens from ``file://`` with no server).
        Prints nothing (the temporary server's banner is silenced).

        Returns
        -------
        str
            The path written.
        """
        self._check_recording(recording)
        # viser prints a server banner and "Server stopped" to stdout whatever its verbose
        # flag says; an offline export has no server to announce
        with contextlib.redirect_stdout(io.StringIO()):
            server = start_server("127.0.0.1", _free_port())
            try:
                scene = ViserScene(server, self.items, self.body_names, **self._options)
                scene.show(recording, 0)
                serializer = server.get_scene_serializer()
                times = recording.times
                for i in range(1, recording.num_frames):
                    serializer.insert_sleep(float(times[i] - times[i - 1]))
                    scene.show(recording, i)
                html = serializer.as_html(dark_mode=dark_mode)
            finally:
                server.stop()
        folder = os.path.dirname(os.path.abspath(path))
        os.makedirs(folder, exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(html)
        return path


def add_visualizer(builder, plant, publish_period: float = 1.0 / 30.0, *,
                   check_viewer: bool = True, **kwargs) -> Visualizer:
    """Add a :class:`Visualizer` of ``plant.tree`` to ``builder`` and connect the plant's
    ``state`` (and ``contact_results``, when it has one) to it (Drake's ``AddToBuilder``).

    Parameters
    ----------
    builder : DiagramBuilder
    plant : rigid-body plant
        Any system with a ``tree`` and a ``state`` output (nq + nv).
    publish_period : float
    check_viewer : bool
        Check now that viser is installed (default), also with ``live=False``: the
        recording is for :meth:`Visualizer.export_html` or :meth:`Visualizer.replay`, which
        need it, and a missing extra should fail before the simulation, not after it.
        ``False`` for a recording-only block on a machine without the ``[viz]`` extra.
    **kwargs
        Passed to :class:`Visualizer`.

    Returns
    -------
    Visualizer

    Raises
    ------
    ViewerUnavailableError
        viser is not installed (and ``check_viewer``); says ``pip install 'dynablocks[viz]'``.
    VisualizationError
        ``plant`` has no tree or no ``state`` output.
    """
    tree = getattr(plant, "tree", None)
    if tree is None or not plant.has_output_port("state"):
        raise VisualizationError(f"add_visualizer: system '{getattr(plant, 'name', plant)}' "
                                 "has no tree or no 'state' output (expected a rigid-body "
                                 "plant)")
    if check_viewer:
        require_viewer()
    vis = builder.add_system(Visualizer(tree, publish_period, **kwargs))
    builder.connect(plant.get_output_port("state"), vis.get_input_port("state"))
    if plant.has_output_port("contact_results"):
        builder.connect(plant.get_output_port("contact_results"),
                        vis.get_input_port("contact_results"))
    return vis


def show_run(visualizer: Visualizer, run, *, html: Optional[str] = None,
             replay: bool = False) -> Optional[str]:
    """What a script does after a run: write the run (a :class:`Recording`, or the context
    whose recording to take) to the HTML file ``html`` (when given), then, with ``replay``,
    play it in the browser again and again until Ctrl-C. Returns the HTML path (or None)."""
    recording = run if isinstance(run, Recording) else visualizer.get_recording(run)
    if html:
        visualizer.export_html(recording, html)
        print(f"saved {recording.num_frames} frames to {html}")
    if replay:
        print(f"replaying at {visualizer.url} (Ctrl-C to stop)")
        try:
            while True:
                visualizer.replay(recording)
        except KeyboardInterrupt:
            visualizer.close()
    return html
