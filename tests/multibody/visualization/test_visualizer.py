"""The Visualizer block on a viser server (without a browser): the scene holds one node per
geometry with the right shape and size, body nodes sit at the tree's body poses, contact
arrows are the contact results' forces in both plants, recordings replay and export."""
import math

import numpy as np
import pytest

from multibody import Capsule, spatial
from multibody.visualization import (Recording, VisualizationError, Visualizer,
                                     add_visualizer, show_run)
from systems import DiagramBuilder
from systems.analysis import Simulator

import _viz_scenes as S

viser = pytest.importorskip("viser", reason="the browser viewer needs the [viz] extra (viser)")


@pytest.fixture
def live():
    """Visualizers made through ``live(tree, ...)`` on a free port, closed afterwards."""
    made = []

    def make(tree, *args, **kw):
        vis = Visualizer(tree, *args, port=S.free_port(), **kw)
        made.append(vis)
        return vis
    yield make
    for v in made:
        v.close()


def _rotation(wxyz):
    return np.asarray(spatial.quaternion_to_rotation(np.asarray(wxyz, float)), float)


# ---------------------------------------------------------------- scene contents
def test_one_node_per_geometry_with_shape_and_size(live, tmp_path):
    mesh = S.write_tetrahedron(str(tmp_path / "tetra.stl"))
    tree = S.shapes_tree(mesh)
    vis = live(tree)
    nodes = vis.scene.geometry_nodes
    # one node per visual geometry, the collision box for the link (no visuals), the ground
    expected = {(b, f"{b}_visual") for b in S.SHAPES} | {("link", "link_collision"),
                                                         ("world", "ground"),
                                                         ("tetra", "tetra_mesh")}
    assert set(nodes) == expected
    assert type(nodes[("crate", "crate_visual")]).__name__ == "BoxHandle"
    assert nodes[("crate", "crate_visual")].dimensions == (0.3, 0.2, 0.1)
    assert type(nodes[("ball", "ball_visual")]).__name__ == "IcosphereHandle"
    assert nodes[("ball", "ball_visual")].radius == 0.07
    drum = nodes[("drum", "drum_visual")]
    assert type(drum).__name__ == "CylinderHandle" and (drum.radius, drum.height) == (0.05, 0.2)
    assert nodes[("link", "link_collision")].dimensions == (0.02, 0.02, 0.5)
    assert type(nodes[("world", "ground")]).__name__ == "GridHandle"
    # the capsule mesh: every vertex on the capsule's surface
    pill = nodes[("pill", "pill_visual")]
    d = [Capsule(0.04, 0.15).distance_to_point(p) for p in pill.vertices]
    assert np.max(np.abs(d)) < 1e-6
    # the mesh file, scaled by 2: the tetrahedron's corners at 0 and 2 along each axis
    tet = np.asarray(nodes[("tetra", "tetra_mesh")].vertices, float)
    np.testing.assert_allclose(np.sort(tet.max(axis=0)), [2, 2, 2], atol=1e-6)
    assert len(tet) >= 4 and np.allclose(tet.min(axis=0), 0, atol=1e-6)
    # geometry poses in the body frame as declared (rotation 0.3 k about z, offset)
    for k, b in enumerate(S.SHAPES):
        h = nodes[(b, f"{b}_visual")]
        np.testing.assert_allclose(h.position, (0.01 * k, -0.02, 0.03), atol=1e-15)
        np.testing.assert_allclose(_rotation(h.wxyz), spatial.rotation_z(0.3 * k), atol=1e-12)
    # a URDF material colour (rgba in 0-1) becomes RGB 0-255
    assert nodes[("crate", "crate_visual")].color == (0, 128, 230)


def test_urdf_mesh_visuals_are_read_through_trimesh(live, tmp_path):
    """Meshes named in a URDF (a path relative to the file, and a package:// URI with a
    package map) are drawn from the file; an unresolved one is a named error."""
    from multibody import parse_urdf
    S.write_tetrahedron(str(tmp_path / "tetra.stl"))
    urdf = tmp_path / "robot.urdf"
    urdf.write_text("""<robot name="meshy">
      <link name="base"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1"
        ixy="0" ixz="0" iyz="0"/></inertial>
        <visual name="rel"><geometry><mesh filename="tetra.stl" scale="2 2 2"/></geometry>
        </visual>
        <visual name="pkg"><origin xyz="0 0 1"/>
          <geometry><mesh filename="package://things/tetra.stl"/></geometry></visual>
      </link></robot>""")
    tree = parse_urdf(str(urdf), package_map={"things": str(tmp_path)})
    vis = live(tree)
    rel = np.asarray(vis.scene.geometry_nodes[("base", "rel")].vertices, float)
    pkg = vis.scene.geometry_nodes[("base", "pkg")]
    np.testing.assert_allclose(rel.max(axis=0), [2, 2, 2], atol=1e-6)
    np.testing.assert_allclose(np.asarray(pkg.vertices, float).max(axis=0), [1, 1, 1], atol=1e-6)
    np.testing.assert_allclose(pkg.position, [0, 0, 1])
    unresolved = parse_urdf(str(urdf))     # no package map: the URI stays as written
    with pytest.raises(VisualizationError, match="body 'base' geometry 'pkg': mesh file "
                                                 "'package://things/tetra.stl' not found"):
        live(unresolved).scene


def test_body_nodes_at_the_tree_body_poses_at_a_random_configuration(live):
    """The scene's body nodes against the tree's compiled ``body_pose`` (an independent
    evaluation path: CasADi functions, not the numpy forward kinematics the viewer uses)."""
    tree = S.shapes_tree()
    vis = live(tree, show_frames=True)
    rng = np.random.default_rng(7)
    for _ in range(3):
        q = tree.random_configuration(rng)
        vis.draw(q)
        for b in tree.bodies:
            T = np.asarray(tree.body_pose(b.name, q), float)
            node = vis.scene.body_nodes[b.name]
            np.testing.assert_allclose(node.position, T[:3, 3], atol=1e-12)
            np.testing.assert_allclose(_rotation(node.wxyz), T[:3, :3], atol=1e-12)


def test_markers_are_drawn_on_their_bodies(live):
    tree = S.shapes_tree()
    vis = live(tree, markers=[("tip", "link", (0, 0, -0.5)), ("top", "crate", (0, 0, 0.05))])
    assert set(vis.scene.marker_nodes) == {"tip", "top"}
    np.testing.assert_array_equal(vis.scene.marker_nodes["tip"].position, (0, 0, -0.5))
    with pytest.raises(VisualizationError, match="'nowhere'.*not a body or frame of tree 'shapes'"):
        Visualizer(tree, live=False, markers=[("m", "nowhere", (0, 0, 0))])
    with pytest.raises(VisualizationError, match="marker 'm' offset must be 3 finite"):
        Visualizer(tree, live=False, markers=[("m", "link", (0, np.nan, 0))])


# ---------------------------------------------------------------- contacts
def test_contact_arrows_are_the_contact_results_forces(live):
    """Two balls resting on the ground: the arrows end at each contact point and run along
    ``scale * force`` (the force on B), exactly the plant's contact results, and the recorded normal forces
    carry each ball's weight m g (statics)."""
    tree, plant, masses = S.resting_balls()
    b = DiagramBuilder("balls")
    b.add_system(plant)
    vis = add_visualizer(b, plant, 0.02, port=S.free_port(), contact_force_scale=0.01)
    diagram = b.build()
    try:
        ctx = diagram.create_default_context()
        S.place_balls(tree, plant, ctx)
        Simulator(diagram, ctx).advance_to(0.4)
        results = plant.get_output_port("contact_results").eval(ctx)
        assert len(results) == 2
        arrows = np.asarray(vis.scene.contact_nodes["arrows"].points, float)
        for k, c in enumerate(results):
            np.testing.assert_allclose(arrows[k, 0], c.point - 0.01 * c.force, atol=1e-6)
            np.testing.assert_allclose(arrows[k, 1], c.point, atol=1e-6)
        rec = vis.get_recording(ctx)
        points, forces = rec.contacts(rec.num_frames - 1)
        np.testing.assert_array_equal(points, results.points())
        for name, m in masses.items():
            fz = sum(c.force[2] for c in results if name in (c.body_a, c.body_b))
            assert fz == pytest.approx(m * 9.81, rel=1e-3)
        np.testing.assert_allclose(forces[:, 2].sum(), sum(masses.values()) * 9.81, rtol=1e-3)
    finally:
        vis.close()


def test_continuous_plant_contacts_are_drawn(live):
    """A box resting on the ground in the continuous RigidBodySystem (acceleration-level
    contact): its corner contacts are drawn as arrows that are the contact results' forces
    and carry the box's weight m g."""
    from multibody.constraints import PointContactConstraint
    from multibody.models import box_on_ground
    from multibody.plants import RigidBodySystem
    m = 2.0
    tree = box_on_ground(mass=m)
    plant = RigidBodySystem(tree, constraints=[PointContactConstraint(tree, mu=0.5,
                                                                      name="contact")])
    b = DiagramBuilder("box")
    b.add_system(plant)
    vis = add_visualizer(b, plant, 0.05, port=S.free_port(), contact_force_scale=0.01)
    diagram = b.build()
    try:
        ctx = diagram.create_default_context()
        plant.set_positions(ctx, [1, 0, 0, 0, 0, 0, 0.1])
        Simulator(diagram, ctx, integrator="RK45", accuracy=1e-8).advance_to(0.1)
        results = plant.get_output_port("contact_results").eval(ctx)
        assert len(results) == 4
        arrows = np.asarray(vis.scene.contact_nodes["arrows"].points, float)
        for k, c in enumerate(results):
            np.testing.assert_allclose(arrows[k], [c.point - 0.01 * c.force, c.point],
                                       atol=1e-6)
        _, forces = vis.get_recording(ctx).contacts(-1)
        assert forces[:, 2].sum() == pytest.approx(m * 9.81, rel=1e-9)
    finally:
        vis.close()


# ---------------------------------------------------------------- recordings
def _recording(vis, n=20):
    tree = vis.tree
    rec = Recording(vis.body_names)
    q = tree.neutral_configuration()
    j = tree.get_joint("crate_free")
    for k in range(n):
        q[j.q_start + 6] = 0.1 * k
        pos, quat, _, _ = vis.frame(q)
        rec.append(0.05 * k, pos, quat, [[0, 0, 0]] if k % 2 else None,
                   [[0, 0, 10.0 * k]] if k % 2 else None)
    return rec


def test_recording_save_load_and_replay(live, tmp_path):
    tree = S.shapes_tree()
    vis = live(tree)
    rec = _recording(vis)
    back = Recording.load(rec.save(str(tmp_path / "run.npz")))
    assert back.body_names == rec.body_names
    np.testing.assert_array_equal(back.times, rec.times)
    np.testing.assert_array_equal(back.positions, rec.positions)
    for i in (0, 1, 19):
        for a, b in zip(back.contacts(i), rec.contacts(i)):
            np.testing.assert_array_equal(a, b)
    assert vis.replay(back, speed=math.inf) == 20
    np.testing.assert_array_equal(vis.scene.body_nodes["crate"].position,
                                  rec.body_position("crate")[-1])
    arrows = np.asarray(vis.scene.contact_nodes["arrows"].points, float)
    np.testing.assert_allclose(arrows[0], [[0, 0, -0.002 * 190], [0, 0, 0]], atol=1e-6)
    # a frame at the last frame's time replaces it; an earlier one is refused
    n = rec.num_frames
    rec.append(rec.times[-1], *vis.frame(tree.neutral_configuration())[:2])
    assert rec.num_frames == n
    with pytest.raises(VisualizationError, match="before the last frame"):
        rec.append(0.0, *vis.frame(tree.neutral_configuration())[:2])


def test_show_run_exports_then_replays_until_interrupted(tmp_path, monkeypatch):
    """What an example's --html/--viewer does after its run: the HTML file, then replays
    until Ctrl-C (here: the third replay is interrupted)."""
    tree, plant, _ = S.resting_balls()
    b = DiagramBuilder("balls")
    b.add_system(plant)
    vis = add_visualizer(b, plant, 0.05, port=S.free_port())
    diagram = b.build()
    ctx = diagram.create_default_context()
    S.place_balls(tree, plant, ctx)
    Simulator(diagram, ctx).advance_to(0.1)
    calls = []

    def replay(recording, speed=1.0):
        calls.append(recording.num_frames)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return recording.num_frames
    monkeypatch.setattr(vis, "replay", replay)
    path = str(tmp_path / "run.html")
    assert show_run(vis, ctx, html=path, replay=True) == path
    assert calls == [3, 3, 3]                       # frames at t = 0, 0.05, 0.1
    assert "__VISER_EMBED_DATA__" in open(path, encoding="utf-8").read()
    vis.close()


def test_export_html_is_one_self_contained_file(tmp_path, capfd):
    tree = S.shapes_tree()
    vis = Visualizer(tree, live=False)
    capfd.readouterr()
    path = vis.export_html(_recording(vis), str(tmp_path / "run.html"))
    out, err = capfd.readouterr()
    assert out == "" and "viser" not in err           # no server banner for an offline export
    text = open(path, encoding="utf-8").read()
    assert "__VISER_EMBED_DATA__" in text
    # nothing is fetched: no script or stylesheet loaded from elsewhere
    assert "<script src=" not in text and 'rel="stylesheet"' not in text


