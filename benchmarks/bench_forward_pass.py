"""The forward pass of ``examples/human_walking.py`` against real time.

The walk of the example (the synthetic 25-DOF walker, or ``--c3d`` a capture with the HDM
body) is analysed once (marker fit, smoothing, contact inverse dynamics); then
:class:`multibody.motion.ForwardPass` re-simulates it from its torques ``rounds`` times
(the compiled whole run in C, built and compiled once before the rounds). Timing: wall and
process CPU time of each run, medians over the rounds, BLAS limited to one thread; the
realtime factor is the trial's duration over the median time. Also printed: the joint-angle
tracking (deg RMS) and how many steps fell back to the pivoting step.

Run: ``.venv/bin/python benchmarks/bench_forward_pass.py [--c3d C] [--rounds 5]``
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings

from threadpoolctl import threadpool_limits

sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
import human_walking as hw  # noqa: E402
from _human_experiments import build_forward_pass  # noqa: E402
from _cli import script_parser  # noqa: E402
from multibody.models import human_model  # noqa: E402


def main(argv=None) -> dict:
    ap = script_parser(__doc__)
    ap.add_argument("--c3d", help="capture (default: the synthetic walk)")
    ap.add_argument("--rounds", type=int, default=5, help="timed runs (median taken)")
    args = ap.parse_args(argv)
    run = ["--out", "/tmp/bench_forward_pass", "--no-plot", "--no-experiments",
           "--no-forward-pass"] + (["--c3d", args.c3d] if args.c3d else [])
    r = hw.main(run)
    traj, res = r["trajectory"], r["inverse_dynamics"]
    files = hw.model_files(argparse.Namespace(skeleton=None, marker_set=None, c3d=args.c3d))
    fp = build_forward_pass(lambda: human_model(*files), traj, r["floor"])
    span = float(traj.t[-1] - traj.t[0])
    walls, cpus, outs = [], [], []
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fp.run(traj.q, traj.v, res.tau)                  # compile once
        for _ in range(args.rounds):
            out = fp.run(traj.q, traj.v, res.tau)
            cpus.append(span / out.realtime_factor)
            walls.append(out.wall_seconds)
            outs.append(out)
    w, c = statistics.median(walls), statistics.median(cpus)
    print(f"forward pass of {span:.2f} s ({fp.tree.nv} DOF, h = {1e3 * fp.time_step:.2f} ms, "
          f"{fp.plant.step_method}): median wall {w:.3f} s ({span / w:.1f}x real time), "
          f"median CPU {c:.3f} s ({span / c:.1f}x); joint angles "
          f"{outs[0].joint_angle_rms_deg:.2f} deg RMS; {len(outs[0].fallback_steps)} steps "
          "fell back to the pivoting step")
    return {"realtime_factor_wall": span / w, "realtime_factor_cpu": span / c}


if __name__ == "__main__":
    main()
