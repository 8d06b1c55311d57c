"""Per-pair time of the compiled narrow phase (solvers.collision) against multibody.geometry's numpy contact_points and MuJoCo's mj_collision.

For every shape pair, the same seeded random poses (random rotations; B near A, or above
the plane), margin 0.01 m, full contact manifolds:

* ``C``: ``dbk_collide_pairs`` over all poses in one call (the form the contact kernel
  will use), time per pair (one Python call of about 15 us spread over the poses);
* ``numpy``: ``multibody.geometry.contact_points`` (no convex hulls there: ``-``);
* ``MuJoCo``: ``mujoco.mj_collision`` on a model holding just the two geoms (plane, sphere,
  box, capsule, cylinder, ellipsoid, mesh), called from Python with the kinematics done
  beforehand (so it includes MuJoCo's broad phase of two geoms and the binding's call;
  ``MJ-floor`` subtracts the time of the same call on a model without geoms).

Rounds are interleaved (every method once per round, in turn), each reports the median
of its rounds; times are wall-clock per pair in microseconds; BLAS one thread. The last
columns give the mean number of contacts per pose of C and MuJoCo (MuJoCo's manifolds are
its own, e.g. up to 4 box-plane points).

Run ``python benchmarks/bench_collision.py`` (about 30 s); ``--quick`` for a smoke run.
"""
from __future__ import annotations

import os
import sys
import time

sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
from _cli import script_parser  # noqa: E402

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
from scipy.spatial.transform import Rotation  # noqa: E402

import multibody.geometry as G  # noqa: E402
from solvers import collision as C  # noqa: E402

try:
    import mujoco
except ImportError:       # optional
    mujoco = None

MARGIN = 0.01
_rng = np.random.default_rng(1)
HULL = _rng.normal(size=(20, 3)) * [0.25, 0.2, 0.15]

# name: (solvers.collision description, multibody.geometry shape or None, MJCF geom attributes)
SHAPES = {
    "halfspace": (("halfspace",), G.Halfspace(), 'type="plane" size="0 0 1"'),
    "sphere": (("sphere", 0.2), G.Sphere(0.2), 'type="sphere" size="0.2"'),
    "box": (("box", (0.3, 0.2, 0.1)), G.Box((0.6, 0.4, 0.2)), 'type="box" size="0.3 0.2 0.1"'),
    "capsule": (("capsule", 0.1, 0.2), G.Capsule(0.1, 0.4), 'type="capsule" size="0.1 0.2"'),
    "cylinder": (("cylinder", 0.15, 0.15), G.Cylinder(0.15, 0.3),
                 'type="cylinder" size="0.15 0.15"'),
    "ellipsoid": (("ellipsoid", (0.25, 0.15, 0.1)), G.Ellipsoid((0.25, 0.15, 0.1)),
                  'type="ellipsoid" size="0.25 0.15 0.1"'),
    "convex": (("convex", HULL), None, 'type="mesh" mesh="hull"'),
}
PAIRS = [("halfspace", b) for b in ("sphere", "box", "capsule", "cylinder", "ellipsoid", "convex")] + [
    ("sphere", "sphere"), ("box", "sphere"), ("sphere", "capsule"), ("capsule", "capsule"),
    ("box", "capsule"), ("box", "box"), ("cylinder", "sphere"), ("box", "cylinder"),
    ("cylinder", "cylinder"), ("capsule", "cylinder"), ("ellipsoid", "sphere"),
    ("box", "ellipsoid"), ("ellipsoid", "ellipsoid"), ("cylinder", "ellipsoid"),
    ("box", "convex"), ("convex", "convex"), ("convex", "sphere")]


def poses(a: str, n: int, seed: int):
    """``n`` pose pairs: B near A (about half overlapping), or 0-0.3 m above the plane."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        Xa, Xb = np.eye(4), np.eye(4)
        Xb[:3, :3] = Rotation.random(random_state=rng).as_matrix()
        if a == "halfspace":
            Xb[:3, 3] = [*rng.uniform(-1, 1, 2), rng.uniform(0.0, 0.3)]
        else:
            Xa[:3, :3] = Rotation.random(random_state=rng).as_matrix()
            Xa[:3, 3] = rng.uniform(-0.3, 0.3, 3)
            Xb[:3, 3] = rng.uniform(-0.3, 0.3, 3)
        out.append((Xa, Xb))
    return out


def mujoco_case(a: str, b: str, pose_list):
    """(model, data, qpos per pose) of the two geoms (A fixed in the world for a plane)."""
    ga, gb = SHAPES[a][2], SHAPES[b][2]
    mesh = " ".join(f"{x:.17g}" for x in HULL.reshape(-1))
    body_a = (f'<geom {ga} margin="{MARGIN / 2}"/>' if a == "halfspace" else
              f'<body name="a"><freejoint/><geom {ga} margin="{MARGIN / 2}"/></body>')
    xml = f"""<mujoco><asset><mesh name="hull" vertex="{mesh}"/></asset>
      <option><flag gravity="disable"/></option>
      <worldbody>{body_a}<body name="b"><freejoint/><geom {gb} margin="{MARGIN / 2}"/></body>
      </worldbody></mujoco>"""
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    qs = []
    for Xa, Xb in pose_list:
        q = []
        for X in ((Xb,) if a == "halfspace" else (Xa, Xb)):
            x, y, z, w = Rotation.from_matrix(X[:3, :3]).as_quat()
            q += [*X[:3, 3], w, x, y, z]
        qs.append(np.array(q))
    return m, d, qs


def main(argv: list[str] | None = None) -> None:
    parser = script_parser(__doc__)
    parser.add_argument("--quick", action="store_true", help="few poses and rounds")
    parser.add_argument("--poses", type=int, default=200, help="poses per pair")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds")
    args = parser.parse_args(argv)
    n, rounds = (20, 2) if args.quick else (args.poses, args.rounds)
    lib = C.load_narrow_phase()
    print(f"narrow phase: {lib!r}; {n} poses per pair, {rounds} interleaved rounds, "
          f"margin {MARGIN} m; MuJoCo {mujoco.__version__ if mujoco else 'not installed'}")
    rows = []
    for idx, (a, b) in enumerate(PAIRS):
        (sa, ga, _), (sb, gb, _) = SHAPES[a], SHAPES[b]
        plist = poses(a, n, idx)
        pa, pb = C.parse_shape(sa), C.parse_shape(sb)
        X = np.array([[C.parse_pose(Xa), C.parse_pose(Xb)] for Xa, Xb in plist])
        kinds = np.array([[pa[0], pb[0]]] * n, np.int32)
        nv = np.array([[pa[2], pb[2]]] * n, np.int32)
        arrays = [pa[1], pb[1]] * n
        params = C.pointer_table(arrays)
        out = np.zeros((n, C.MAX_CONTACTS, C.CONTACT_DOUBLES))
        count = np.zeros(n, np.int32)
        methods = {}
        if lib.compiled:
            methods["C"] = lambda: lib.collide_pairs(kinds, params, nv, X, MARGIN, out, count)
        if ga is not None and gb is not None:
            def numpy_calls():
                for Xa, Xb in plist:
                    G.contact_points(ga, Xa, gb, Xb, MARGIN)
            methods["numpy"] = numpy_calls
        mj_contacts = None
        if mujoco is not None:
            m, d, qs = mujoco_case(a, b, plist)
            ncon = []
            for q in qs:
                d.qpos[:] = q
                mujoco.mj_kinematics(m, d)
                mujoco.mj_collision(m, d)
                ncon.append(d.ncon)
            mj_contacts = float(np.mean(ncon))
            reps = 10

            def mujoco_calls():
                total = 0.0
                for q in qs:
                    d.qpos[:] = q
                    mujoco.mj_kinematics(m, d)
                    t0 = time.perf_counter()
                    for _ in range(reps):
                        mujoco.mj_collision(m, d)
                    total += time.perf_counter() - t0
                return total / reps
            methods["MuJoCo"] = mujoco_calls
        times = {k: [] for k in methods}
        for _ in range(rounds):
            for name, fn in methods.items():
                t0 = time.perf_counter()
                inner = fn()
                dt = inner if name == "MuJoCo" else time.perf_counter() - t0
                times[name].append(dt / n)
        if lib.compiled:
            lib.collide_pairs(kinds, params, nv, X, MARGIN, out, count)
        c_contacts = float(np.mean(count)) if lib.compiled else float("nan")
        rows.append((f"{a}-{b}", {k: float(np.median(v)) for k, v in times.items()},
                     c_contacts, mj_contacts))
    floor = mujoco_floor() if mujoco is not None else float("nan")
    print(f"MuJoCo call floor (mj_collision of a model without geoms, from Python): "
          f"{1e6 * floor:.2f} us; MuJoCo-floor is what remains of a pair")
    cols = ["C", "numpy", "MuJoCo"]
    print(f"{'pair':<22}" + "".join(f"{c + ' us':>11}" for c in cols)
          + f"{'MJ-floor':>10}{'numpy/C':>9}{'(MJ-fl)/C':>10}{'C pts':>7}{'MJ pts':>8}")
    for name, t, cc, mc in rows:
        cells = "".join(f"{1e6 * t[c]:>11.3f}" if c in t else f"{'-':>11}" for c in cols)
        net = t["MuJoCo"] - floor if "MuJoCo" in t else float("nan")
        ratio_np = f"{t['numpy'] / t['C']:.0f}x" if "numpy" in t and "C" in t else "-"
        ratio_mj = f"{net / t['C']:.1f}x" if "C" in t and np.isfinite(net) else "-"
        print(f"{name:<22}{cells}{1e6 * net:>10.3f}{ratio_np:>9}{ratio_mj:>10}{cc:>7.2f}"
              f"{(f'{mc:.2f}' if mc is not None else '-'):>8}")


def mujoco_floor(reps: int = 20000) -> float:
    """Median time of one ``mj_collision`` call from Python on a model without geoms."""
    m = mujoco.MjModel.from_xml_string("<mujoco><worldbody/></mujoco>")
    d = mujoco.MjData(m)
    ts = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(reps):
            mujoco.mj_collision(m, d)
        ts.append((time.perf_counter() - t0) / reps)
    return float(np.median(ts))


if __name__ == "__main__":
    main()
