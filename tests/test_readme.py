"""The README's Python blocks run as printed (the quick start saves its files to a temporary
folder; a missing Graphviz ``dot`` is the one error the quick start may end with)."""
import pathlib
import re
import numpy as np

import pytest

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def _blocks():
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_the_quick_start_runs_as_printed(tmp_path, monkeypatch):
    block = _blocks()[0]
    code = [ln.split("#")[0] for ln in block.splitlines()]
    assert "DiagramBuilder" in block and not any(".render(" in ln for ln in code)  # no `dot` needed
    monkeypatch.chdir(tmp_path)
    import matplotlib
    matplotlib.use("Agg")
    exec(compile(block, "README.md", "exec"), {})
    assert (tmp_path / "quickstart.png").is_file()
    assert (tmp_path / "quickstart.dot").read_text().startswith("digraph")


def test_the_leaf_system_example_defines_a_working_block():
    block = next(b for b in _blocks() if "class Pendulum(LeafSystem)" in b)
    ns = {}
    exec(compile(block, "README.md", "exec"), ns)
    from systems.symbolic import to_casadi
    p = ns["Pendulum"]()
    cs = to_casadi(p)
    np.testing.assert_allclose(np.ravel(cs.f(0, [0.5, 0.1], [], [0.2], [])),
                               [0.1, -9.81 * np.sin(0.5) + 0.2], atol=1e-12)


def test_the_trajectory_optimization_example_runs(capsys):
    block = next(b for b in _blocks() if "DirectCollocation" in b)
    exec(compile(block, "README.md", "exec"), {})
    out = capsys.readouterr().out.split()
    assert out[0] == "True" and out[-2:] == ["(2,", "4)"]


def test_the_viewer_example_records_and_exports(tmp_path, monkeypatch):
    pytest.importorskip("viser", reason="the viewer needs the [viz] extra (viser)")
    block = next(b for b in _blocks() if "add_visualizer" in b)
    monkeypatch.chdir(tmp_path)
    ns = {}
    exec(compile(block, "README.md", "exec"), ns)
    rec = ns["recording"]
    assert len(rec.times) == 31                        # frames at 0, 1/30, ..., 1 s
    assert (tmp_path / "box_drop.html").stat().st_size > 10_000


def test_readme_links_stay_inside_the_repository():
    text = README.read_text()
    for target in re.findall(r"\]\(([^)]+)\)", text):
        assert not re.match(r"[a-z]+://", target) and not target.startswith(".."), target
        assert (README.parent / target).exists(), target


def test_the_model_loading_example_matches_mujoco_or_the_closed_form():
    """The MJCF snippet's mass matrix: against MuJoCo where installed; always against the
    two-link closed form (capsule by MuJoCo's density formula, the box's 1.5 kg, armature)."""
    import numpy as np
    block = next(b for b in _blocks() if "from_mjcf" in b)
    ns = {}
    exec(compile(block, "README.md", "exec"), ns)
    tree, q = ns["tree"], ns["q"]
    H = tree.mass_matrix(q)
    # closed form: link 1 capsule along x from 0 to 0.5 (r 0.05, rho 1000), joint axes y
    r, L, rho = 0.05, 0.5, 1000.0
    m_cyl, m_hemi = rho * np.pi * r * r * L, rho * 2.0 / 3.0 * np.pi * r ** 3
    m1 = m_cyl + 2 * m_hemi
    # inertia of the capsule about its centre, axis perpendicular to the segment
    i_cyl = m_cyl * (3 * r * r + L * L) / 12
    d = 3 * r / 8 + L / 2                         # hemisphere centroid from the capsule centre
    i_hemi = 83 / 320 * m_hemi * r * r + m_hemi * d * d
    I1 = i_cyl + 2 * i_hemi + m1 * (L / 2) ** 2   # about the shoulder
    m2, a, b2 = 1.5, 0.2, (0.4 ** 2 + 0.06 ** 2) / 12 * 1.5   # box: COM 0.2 along its x
    th = np.radians(30) + q[1]                    # box x axis angle from link 1's x axis
    c = 0.5 * a * np.cos(th)                      # |p_elbow| |COM offset| cos(angle)
    H22 = b2 + m2 * a * a
    H12 = H22 + m2 * c
    H11 = I1 + 0.01 + H22 + m2 * (0.25 + 2 * c)
    np.testing.assert_allclose(H, [[H11, H12], [H12, H22]], rtol=1e-12)
    mujoco = pytest.importorskip("mujoco", reason="MuJoCo is a [bench] extra")
    m = mujoco.MjModel.from_xml_string(ns["mjcf"])
    data = mujoco.MjData(m)
    data.qpos[:] = q
    mujoco.mj_forward(m, data)
    M = np.zeros((2, 2))
    try:                                          # mujoco >= 4: (m, d, dst)
        mujoco.mj_fullM(m, data, M)
    except TypeError:                             # mujoco 3: (m, dst, qM)
        mujoco.mj_fullM(m, M, data.qM)
    np.testing.assert_allclose(H, M, rtol=1e-12, atol=1e-14)


def test_the_tree_block_example_settles_where_asked_and_matches_the_plant_block():
    block = next(b for b in _blocks() if "the tree is the plant block" in b)
    ns = {}
    exec(compile(block, "README.md", "exec"), ns)
    tree, ctx = ns["tree"], ns["context"]
    x = tree.get_output_port("state").eval(tree.get_my_context_from_root(ctx))
    np.testing.assert_allclose(x[:2], [0.5, -0.5], atol=0.02)     # the PID's integral acts
    # the same diagram with RigidBodyPlant(tree) in place of the tree block: bitwise equal
    from multibody.plants import RigidBodyPlant
    src = block.replace("builder.add_system(tree)", "tree = builder.add_system(RigidBodyPlant(tree))")
    ns2 = {"RigidBodyPlant": RigidBodyPlant}
    exec(compile(src, "README.md", "exec"), ns2)
    plant, ctx2 = ns2["tree"], ns2["context"]
    assert isinstance(plant, RigidBodyPlant)
    np.testing.assert_array_equal(plant.get_output_port("state").eval(
        plant.get_my_context_from_root(ctx2)), x)
