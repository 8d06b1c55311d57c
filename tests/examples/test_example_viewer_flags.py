"""The --viewer and --html flags of the contact, quadruped and human walking examples: --html
writes one self-contained HTML file of the run without changing its numbers; without the
[viz] extra either flag exits non-zero saying how to install it."""
import sys

import numpy as np
import pytest

from _examples import load_example

pytest.importorskip("multibody.plants",
                    reason="multibody.plants (TimeSteppingRigidBodySystem) not available")


@pytest.mark.parametrize("name, args", [
    ("contact_spheres_boxes", ["--duration", "0.01"]),
    ("quadruped_standing", ["--duration", "0.01"]),
    ("human_walking", ["--no-experiments", "--synthetic-frames", "8"])])
def test_missing_extra_exits_with_the_install_command(name, args, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "viser", None)  # import viser -> ImportError
    ex = load_example(name)
    for flag in (["--viewer"], ["--html", str(tmp_path / "unused.html")]):
        with pytest.raises(SystemExit) as info:
            ex.main(flag + args + ["--no-plot", "--out", str(tmp_path)])
        assert info.value.code not in (0, None)
        assert "pip install 'dynablocks[viz]'" in str(info.value.code)


def test_contact_example_exports_html_without_changing_the_run(tmp_path):
    pytest.importorskip("viser", reason="the viewer needs the [viz] extra (viser)")
    ex = load_example("contact_spheres_boxes")
    plain = ex.main(["--duration", "0.2", "--no-plot"])
    path = str(tmp_path / "contact.html")
    shown = ex.main(["--duration", "0.2", "--no-plot", "--html", path])
    assert shown["html"] == path
    text = open(path, encoding="utf-8").read()
    assert "__VISER_EMBED_DATA__" in text and "<script src=" not in text
    for body in plain["final"]:
        for key in ("position", "velocity", "omega"):
            np.testing.assert_array_equal(shown["final"][body][key], plain["final"][body][key])


def test_quadruped_example_exports_html(tmp_path):
    pytest.importorskip("viser", reason="the viewer needs the [viz] extra (viser)")
    path = str(tmp_path / "quadruped.html")
    r = load_example("quadruped_standing").main(["--duration", "0.1", "--no-plot",
                                                  "--html", path])
    assert r["html"] == path and "__VISER_EMBED_DATA__" in open(path, encoding="utf-8").read()


def test_human_walking_exports_the_fitted_walk(tmp_path):
    pytest.importorskip("viser", reason="the viewer needs the [viz] extra (viser)")
    path = str(tmp_path / "walk.html")
    r = load_example("human_walking").main(["--out", str(tmp_path), "--no-experiments",
                                            "--no-plot", "--synthetic-frames", "24",
                                            "--html", path])
    assert r["report"]["html"] == path
    assert "__VISER_EMBED_DATA__" in open(path, encoding="utf-8").read()
