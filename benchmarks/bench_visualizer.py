"""What the browser viewer costs a simulation: the standing quadruped with and without a
:class:`~multibody.visualization.Visualizer`.

Scene: ``examples/quadruped_standing.py`` (floating-base quadruped, 12 PD-controlled joints,
frictional point contact, ``TimeSteppingRigidBodySystem`` at h = 1 ms) simulated for
``--duration`` seconds from the same initial context. Variants, all in one diagram each:

* ``none``: no visualizer;
* ``record``: a Visualizer publishing at 30 Hz that only records (``live=False``);
* ``live``: the same, also drawing on a viser server (no browser connected: the cost of
  computing and queueing the scene updates, not of a browser rendering them).

Rounds are interleaved (each round runs every variant once, in turn) and each variant's
time is the median over rounds; the ratio is against ``none``. ``--cpu-time`` counts process
CPU time (all threads, the viser server's included) instead of wall-clock time. BLAS is
pinned to one thread (threadpoolctl). After the table: the cost of one published frame on
its own (forward kinematics of all 17 bodies, poses to quaternions) and the time and size of
an HTML export of the recorded run.

Run: ``.venv/bin/python benchmarks/bench_visualizer.py [--duration 1] [--rounds 5] [--cpu-time]``
"""
from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from typing import Optional

from threadpoolctl import threadpool_limits

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "examples"))
import quadruped_standing as _quad  # noqa: E402
from systems.analysis import Simulator  # noqa: E402
from _cli import script_parser  # noqa: E402

VARIANTS = {"none": None, "record": {"live": False}, "live": {"live": True}}
PERIOD = 1 / 30


def _build(variant: str) -> dict:
    opts = VARIANTS[variant]
    viewer = None if opts is None else dict(opts, publish_period=PERIOD)
    sc = _quad.build_quadruped(log_period=None, viewer=viewer)
    sc["initial"] = sc["context"].clone()
    return sc


def _run(sc: dict, duration: float, clock) -> float:
    ctx = sc["initial"].clone()
    sim = Simulator(sc["diagram"], ctx)
    t0 = clock()
    sim.advance_to(duration)
    sc["context"] = ctx
    return clock() - t0


def main(argv: Optional[list] = None) -> dict:
    parser = script_parser(__doc__)
    parser.add_argument("--duration", type=float, default=1.0, help="simulated time per run (s)")
    parser.add_argument("--rounds", type=int, default=5,
                        help="interleaved timing rounds (the median is reported)")
    parser.add_argument("--cpu-time", action="store_true",
                        help="time with process CPU time instead of wall time")
    parser.add_argument("--frames", type=int, default=2000,
                        help="frames timed for the per-frame cost")
    args = parser.parse_args(argv)
    clock = time.process_time if args.cpu_time else time.perf_counter
    out: dict = {}
    with threadpool_limits(1):
        scenes = {v: _build(v) for v in VARIANTS}
        for sc in scenes.values():            # warm up (compiled functions, caches)
            _run(sc, min(args.duration, 0.02), clock)
        times = {v: [] for v in VARIANTS}
        for r in range(args.rounds):
            for v, sc in scenes.items():
                times[v].append(_run(sc, args.duration, clock))
            print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
        base = statistics.median(times["none"])
        what = "CPU" if args.cpu_time else "wall"
        print(f"quadruped standing, {args.duration} s simulated (h = 1 ms), Visualizer at "
              f"{1 / PERIOD:.0f} Hz; median of {args.rounds} interleaved rounds, {what} time")
        print(f"{'variant':<8} {'seconds':>9} {'ratio':>7} {'frames':>7}")
        for v, sc in scenes.items():
            med = statistics.median(times[v])
            vis = sc.get("visualizer")
            frames = vis.get_recording(sc["context"]).num_frames if vis is not None else 0
            out[v] = {"seconds": med, "ratio": med / base, "frames": frames}
            print(f"{v:<8} {med:9.4f} {med / base:7.3f} {frames:7d}")

        vis = scenes["record"]["visualizer"]
        q = scenes["record"]["system"].get_positions(scenes["record"]["context"])
        t0 = clock()
        for _ in range(args.frames):
            vis.frame(q)
        per_frame = (clock() - t0) / args.frames
        out["frame_seconds"] = per_frame
        print(f"one frame (poses of {len(vis.body_names)} bodies): {1e6 * per_frame:.1f} us")
        rec = vis.get_recording(scenes["record"]["context"])
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "run.html")
            t0 = time.perf_counter()
            vis.export_html(rec, path)
            out["export_seconds"] = time.perf_counter() - t0
            out["export_bytes"] = os.path.getsize(path)
        print(f"HTML export of {rec.num_frames} frames: {out['export_seconds']:.2f} s wall, "
              f"{out['export_bytes'] / 1e6:.2f} MB")
        scenes["live"]["visualizer"].close()
    return out


if __name__ == "__main__":
    main()
