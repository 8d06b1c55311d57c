"""The viewer in a real headless browser (the system's Chromium driven by Selenium).

A hook installed before the page loads (three.js announces every scene it creates to
``window.__THREE_DEVTOOLS__``) lets the test read the page's scene graph: the number of body
boxes, their world positions and sizes. Checked: the live page holds every body at the tree's
poses (pairwise distances, which do not depend on the viewer's choice of world axes), a pose
update moves exactly the body it should by the right distance, and the exported HTML file
opens from ``file://`` with the network switched off and plays its recording.

Skipped, with the reason, without Chromium, chromedriver or the ``selenium`` package.
"""
import math
import os
import shutil
import time

import numpy as np
import pytest

from multibody import Box, Free, RigidBodyTree
from multibody.visualization import Recording, Visualizer

import _viz_scenes as S

pytest.importorskip("viser", reason="the browser viewer needs the [viz] extra (viser)")
webdriver = pytest.importorskip("selenium.webdriver",
                                reason="the browser test needs the selenium package")


def _find(*names):
    for n in names:
        p = shutil.which(n) or (n if os.path.isabs(n) and os.path.exists(n) else None)
        if p:
            return p
    return None


CHROMIUM = _find("chromium", "/usr/bin/chromium", "chromium-browser", "google-chrome")
CHROMEDRIVER = _find("chromedriver", "/usr/bin/chromedriver")

HOOK = """
window.__dbScenes = [];
window.__THREE_DEVTOOLS__ = new EventTarget();
window.__THREE_DEVTOOLS__.addEventListener('observe', (e) => {
  if (e.detail && e.detail.isScene) window.__dbScenes.push(e.detail);
});
"""
# every box mesh: its world position and world scale (a box's scale is its dimensions)
BOXES = """
const out = [];
for (const sc of window.__dbScenes) sc.traverse((o) => {
  if (o.isMesh && o.visible && o.geometry && o.geometry.type === 'BoxGeometry') {
    const V = o.position.constructor;
    const p = o.getWorldPosition(new V()), s = o.getWorldScale(new V());
    out.push([p.x, p.y, p.z, s.x, s.y, s.z]);
  }
});
return out;
"""

SIZES = [(0.10, 0.2, 0.05), (0.12, 0.2, 0.05), (0.14, 0.2, 0.05), (0.16, 0.2, 0.05),
         (0.18, 0.2, 0.05)]


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None or CHROMEDRIVER is None:
        pytest.skip(f"no headless browser: chromium={CHROMIUM}, chromedriver={CHROMEDRIVER} "
                    "(apt-get install chromium chromium-driver)")
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    opts = Options()
    opts.binary_location = CHROMIUM
    for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
              "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--window-size=400,300"):
        opts.add_argument(a)
    try:
        driver = webdriver.Chrome(options=opts, service=Service(CHROMEDRIVER))
    except Exception as exc:  # a driver that cannot start here: say why
        pytest.skip(f"chromium could not be started by selenium: {type(exc).__name__}: {exc}")
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": HOOK})
    yield driver
    driver.quit()


def _blocks_tree():
    tree = RigidBodyTree("blocks")
    for k, size in enumerate(SIZES):
        tree.add_body(f"b{k}", 1.0, inertia=0.01 * np.eye(3))
        tree.add_joint(Free(f"b{k}_free", "world", f"b{k}"))
        tree.add_visual_geometry(f"b{k}", Box(size), name=f"b{k}_box")
    return tree


def _configuration(tree, lift: float = 0.0):
    q = tree.neutral_configuration()
    for k in range(len(SIZES)):
        j = tree.get_joint(f"b{k}_free")
        q[j.q_start + 4:j.q_start + 7] = (0.3 * k, 0.1 * k * k, 0.05 + (lift if k == 2 else 0))
    return q


def _our_boxes(rows):
    """World positions (page axes) of the boxes whose size is one of ours, in SIZES order;
    ``None`` for a size not (yet) on the page."""
    out = []
    for size in SIZES:
        hits = [r[:3] for r in rows if np.allclose(r[3:], size, atol=1e-6)]
        out.append(np.array(hits[0]) if len(hits) == 1 else None)
    return out


def _wait(driver, predicate, timeout=30.0):
    end = time.monotonic() + timeout
    while True:
        boxes = _our_boxes(driver.execute_script(BOXES))
        if predicate(boxes):
            return boxes
        if time.monotonic() > end:
            return boxes
        time.sleep(0.2)


def _distances(points):
    p = np.array(points, float)
    return np.linalg.norm(p[:, None] - p[None], axis=2)


def test_live_page_holds_the_bodies_and_a_pose_update_moves_one(browser):
    tree = _blocks_tree()
    vis = Visualizer(tree, port=S.free_port())
    try:
        q0 = _configuration(tree)
        vis.draw(q0)
        browser.get(vis.url)
        world = np.array([tree.body_pose(f"b{k}", q0)[:3, 3] for k in range(len(SIZES))], float)
        boxes = _wait(browser, lambda b: all(x is not None for x in b) and
                      np.allclose(_distances(b), _distances(world), atol=1e-5))
        assert all(b is not None for b in boxes), "not every body reached the page"
        # exactly one box per body, at the tree's poses (distances are axis-independent)
        rows = browser.execute_script(BOXES)
        assert sum(any(np.allclose(r[3:], s, atol=1e-6) for s in SIZES) for r in rows) == 5
        np.testing.assert_allclose(_distances(boxes), _distances(world), atol=1e-5)
        # a pose update lifts body b2 by 0.25 m: it moves by 0.25, the others stay
        vis.draw(_configuration(tree, lift=0.25))
        moved = _wait(browser, lambda b: abs(np.linalg.norm(b[2] - boxes[2]) - 0.25) < 1e-5)
        assert np.linalg.norm(moved[2] - boxes[2]) == pytest.approx(0.25, abs=1e-5)
        for k in (0, 1, 3, 4):
            np.testing.assert_allclose(moved[k], boxes[k], atol=1e-6)
    finally:
        vis.close()


def test_exported_html_opens_from_file_offline_and_plays(browser, tmp_path):
    """The file opens from file:// with the network off; the page holds every body at a
    recorded pose, its playback clock runs, and b2 shows at least two recorded frames of
    the first pass (10 s long, so a slow page load still sees it)."""
    tree = _blocks_tree()
    vis = Visualizer(tree, live=False)
    rec = Recording(vis.body_names)
    for k, lift in enumerate(np.linspace(0.0, 0.5, 101)):     # b2 rises 0.5 m over 10 s
        pos, quat, _, _ = vis.frame(_configuration(tree, lift))
        rec.append(0.1 * k, pos, quat)
    path = vis.export_html(rec, str(tmp_path / "blocks.html"))
    browser.execute_cdp_cmd("Network.enable", {})
    browser.execute_cdp_cmd("Network.emulateNetworkConditions", {
        "offline": True, "latency": 0, "downloadThroughput": 0, "uploadThroughput": 0})
    # world distances b0-b2 in each recorded frame, and between the bodies that stay put
    d_rec = np.array([np.linalg.norm(rec.positions[i, 3] - rec.positions[i, 1])
                      for i in range(rec.num_frames)])   # body 0 is the world
    still = [0, 1, 3, 4]
    w_still = rec.positions[0, [k + 1 for k in still]]
    clock = "return Array.from(document.querySelectorAll('input')).map(e => e.value);"
    try:
        browser.get("file://" + os.path.abspath(path))
        first = _wait(browser, lambda b: all(x is not None for x in b) and np.allclose(
            _distances([b[k] for k in still]), _distances(w_still), atol=1e-5))
        assert all(b is not None for b in first), "the exported page shows no bodies"
        np.testing.assert_allclose(_distances([first[k] for k in still]),
                                   _distances(w_still), atol=1e-5)
        # playback: b2 is always at a recorded frame, it moves, the clock runs
        frames, clocks = [], []
        end = time.monotonic() + 20
        while time.monotonic() < end:
            b = _our_boxes(browser.execute_script(BOXES))
            d = np.linalg.norm(b[2] - b[0])
            i = int(np.argmin(np.abs(d_rec - d)))
            assert abs(d_rec[i] - d) < 1e-5, f"b2 at {d}, in no recorded frame"
            frames.append(i)
            clocks.append(tuple(browser.execute_script(clock)))
            if len(set(frames)) >= 2 and len(set(clocks)) >= 2:
                break
            time.sleep(0.1)
        assert len(set(clocks)) >= 2, f"the playback clock did not run: {clocks[-3:]}"
        assert len(set(frames)) >= 2, f"the recording did not play (frames seen: {frames})"
    finally:
        browser.execute_cdp_cmd("Network.emulateNetworkConditions", {
            "offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
