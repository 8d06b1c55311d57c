"""Wall time of issue 21's "new user" scene: five 1 kg boxes (0.2 m cubes) and a ball
(r = 0.1 m) dropped onto a 20 degree slope (a fixed box on the world) above the ground,
mu = 0.3, h = 1 ms, simulated for ``--seconds`` (2 s: 2000 steps) by ``Simulator.advance_to``
on a diagram holding the ``TimeSteppingRigidBodySystem`` (default ``contact_solver="auto"``).
The issue asks for 2 s simulated in under 1 s of wall time (it took 48 s on the pivoting
step).

Printed: the plant's step method, which method took the steps (with fallbacks), the wall
time of the run (median of ``--repeats`` runs, construction excluded), and the ball's
travel down the slope (m), so the physics is seen. With ``--lcp`` the pivoting step runs the
same scene for comparison (slow: tens of seconds).

Run: ``.venv/bin/python benchmarks/bench_five_boxes.py [--seconds 2] [--repeats 3] [--lcp]``
"""
from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")   # before numpy loads

import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from collections import Counter  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
for _p in (os.path.join(os.path.dirname(HERE), "examples"), HERE):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import numpy as np  # noqa: E402

from _cli import script_parser  # noqa: E402
from multibody import Free, RigidBodyTree, TimeSteppingRigidBodySystem  # noqa: E402
from multibody.constraints import PointContactConstraint  # noqa: E402
from multibody.geometry import Box, Halfspace, Sphere  # noqa: E402
from systems import DiagramBuilder  # noqa: E402
from systems.analysis import Simulator  # noqa: E402

H = 1e-3
SLOPE_DEG = 20.0


def _quat(axis, angle: float) -> np.ndarray:
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    return np.concatenate([[np.cos(angle / 2)], np.sin(angle / 2) * axis])


def _rot_y(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])


def scene():
    """``(tree, q0)``: the boxes ``b0..b4`` and the ball ``b5`` on their free joints, the
    ground and the slope (top 1.2 m up at the origin)."""
    a, top = np.radians(SLOPE_DEG), np.array([0.0, 0.0, 1.2])
    Rs = _rot_y(a)
    Xs = np.eye(4)
    Xs[:3, :3], Xs[:3, 3] = Rs, top - 0.5 * Rs[:, 2]
    tree = RigidBodyTree("five_boxes_and_a_ball")
    shapes = [Box((0.2, 0.2, 0.2))] * 5 + [Sphere(0.1)]
    for i, s in enumerate(shapes):
        inertia = (np.eye(3) * 1.0 * 0.2 ** 2 / 6 if isinstance(s, Box)
                   else np.eye(3) * 0.4 * 0.1 ** 2)
        tree.add_body(f"b{i}", 1.0, inertia=inertia)
        tree.add_joint(Free(f"f{i}", "world", f"b{i}"))
        tree.add_collision_geometry(f"b{i}", s, name=f"g{i}")
    tree.add_collision_geometry("world", Halfspace(), name="ground")
    tree.add_collision_geometry("world", Box((6.0, 2.0, 1.0)), pose=Xs, name="slope")
    q = []
    for i in range(5):
        q += [*_quat((0, 1, 0), a), *(top + Rs @ [-2.0 + 0.45 * i, 0.0, 0.11 + 0.02 * i])]
    q += [1, 0, 0, 0, *(top + Rs @ [0.5, 0.0, 0.12])]
    return tree, np.array(q, float)


def run(solver: str, seconds: float, repeats: int) -> dict:
    """Build the diagram once, then time ``repeats`` runs of ``seconds`` from the same start."""
    tree, q0 = scene()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plant = TimeSteppingRigidBodySystem(tree, H, constraints=[
            PointContactConstraint(tree, mu=0.3)], contact_solver=solver, name="plant")
    b = DiagramBuilder("five_boxes")
    b.add_system(plant)
    diagram = b.build()
    ctx = diagram.create_default_context()
    pc = plant.get_my_context_from_root(ctx)
    sim = Simulator(diagram, ctx)
    steps = int(round(seconds / H))
    times, census = [], Counter()
    ball_x = 4 + 7 * 5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for r in range(repeats):
            ctx.set_time(0.0)
            plant.set_positions(pc, q0)
            plant.set_velocities(pc, np.zeros(tree.nv))
            t0 = time.perf_counter()
            if r == 0:           # the first run also counts which method took each step
                port = plant.get_output_port("step")
                for k in range(steps):
                    st = port.eval(pc).status
                    census[st.method + (f" (fallback from {st.fallback_from})"
                                        if st.fallback_from else "")] += 1
                    sim.advance_to((k + 0.5) * H)
            else:
                sim.advance_to((steps - 0.5) * H)
            times.append(time.perf_counter() - t0)
    q = np.asarray(plant.get_positions(pc), float)
    return {"method": plant.step_method, "census": census,
            "wall": statistics.median(times[1:] or times),
            "travel": float(q[ball_x] - q0[ball_x]), "steps": steps}


def main(argv=None) -> dict:
    ap = script_parser(__doc__)
    ap.add_argument("--seconds", type=float, default=2.0, help="simulated time (s)")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs (median)")
    ap.add_argument("--lcp", action="store_true", help="also run the pivoting step")
    args = ap.parse_args(argv)
    out = {}
    for solver in ("auto", "lcp") if args.lcp else ("auto",):
        r = out[solver] = run(solver, args.seconds, max(1, args.repeats if solver == "auto"
                                                        else 1))
        steps = ", ".join(f"{n} {m}" for m, n in r["census"].most_common())
        print(f"contact_solver={solver!r}: step method {r['method']} ({steps}); "
              f"{args.seconds:g} s simulated in {r['wall']:.3f} s wall "
              f"({1e3 * r['wall'] / r['steps']:.3f} ms/step); ball travelled "
              f"{r['travel']:+.3f} m along x")
    return out


if __name__ == "__main__":
    main()
