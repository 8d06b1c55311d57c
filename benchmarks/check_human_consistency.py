"""Dynamically consistent motion on the HDM walking trial: pelvis residual and marker RMS before
and after :class:`multibody.motion.ConsistentMotion`.

"Before" is the pipeline of ``examples/human_walking.py``: the model scaled with the marker
offsets (``fit_segment_scales``, the feet's markers at their nominal places; ``--no-scale``:
the nominal skeleton with calibrated offsets, the 10.6 N RMS of issue 23), the per-frame
marker fit, ``q`` smoothed at 6 Hz, the floor fitted, :class:`ContactInverseDynamics`. "After" is the trajectory optimisation warm-started from the same
fit, checked by :class:`ContactInverseDynamics` on the optimised motion (its own forces). RMS
values are over the whole trial and over the whole strides (``stride_window`` of the
example); the wall and CPU time of the optimisation, its iterations and its stopping
reason (IPOPT's, or ``Stalled``: the stall rule of :class:`ConsistentMotion`) are printed.

Run: ``.venv/bin/python benchmarks/check_human_consistency.py [--c3d C] [--frames N]
[--json OUT]`` (default: the HDM files in ``/work/shared/data/hdm``; exits with a message
when they are missing).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np
from threadpoolctl import threadpool_limits

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.append(os.path.join(HERE, "..", "examples"))

from multibody.models import human_model  # noqa: E402
from multibody.motion import ConsistentMotion, MarkerFitter, fit_segment_scales  # noqa: E402
from sensors import read_c3d  # noqa: E402
from human_walking import contact_groups, inverse_dynamics, stride_window  # noqa: E402
from _cli import script_parser  # noqa: E402

HDM = "/work/shared/data/hdm"


def force_rms(res, sl=slice(None)) -> float:
    return float(np.sqrt(np.mean(np.sum(res.residual[sl, 3:] ** 2, axis=1))))


def main(argv=None) -> dict:
    ap = script_parser(__doc__)
    ap.add_argument("--c3d", default=os.path.join(HDM, "cooper-motion.c3d"),
                    help="the capture (skeleton and marker files next to it)")
    ap.add_argument("--frames", type=int, default=0, help="only the first N frames (0: all)")
    ap.add_argument("--knot-interval", type=float, default=1 / 30,
                    help="spacing of the spline knots (s)")
    ap.add_argument("--max-iterations", type=int, default=100,
                    help="at most this many IPOPT iterations")
    ap.add_argument("--scale", action=argparse.BooleanOptionalAction, default=True,
                    help="scale the segments with the offsets first (as the example)")
    ap.add_argument("--json", help="write the numbers to this file")
    args = ap.parse_args(argv)
    if not os.path.isfile(args.c3d):
        print(f"{args.c3d} not found: nothing to check")
        return {}
    d = os.path.dirname(args.c3d)
    model = human_model(os.path.join(d, "cooper-skeleton.txt"),
                        os.path.join(d, "cooper-markers.txt"))
    names = [n for n, _, _ in model.markers]
    cap = read_c3d(args.c3d).select(names)
    if args.frames:
        cap = cap.frames(0, args.frames)
    X, t = cap.positions, cap.times
    with threadpool_limits(1):
        if args.scale:
            model = fit_segment_scales(model, X, max_frames=30, mass=model.mass,
                                       symmetric=True).model
        tree = model.tree
        fitter = MarkerFitter(tree, model.markers, preferred_q=model.reference_configuration(),
                              prior_weight=0.01)
        if not args.scale:
            fitter = fitter.calibrate(X)
        fit = fitter.fit(X, progress=False)
        traj, res, floor, cid = inverse_dynamics(model, t, fit.q, 6.0, progress=False)
        a, b, strides = stride_window(res.active, contact_groups(cid))
        sl = slice(a, b)
        markers = list(zip(fitter.marker_names, fitter.marker_bodies, fitter.marker_offsets))
        cm = ConsistentMotion(tree, markers, model.foot_contact_points, floor=floor,
                              knot_interval=args.knot_interval,
                              max_iterations=args.max_iterations)
        t0, c0 = time.perf_counter(), time.process_time()
        out = cm.solve(t, X, fit.q, progress=True)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    after = out.inverse_dynamics
    nums = {"frames": int(len(t)), "stride_frames": [a, b], "strides": strides,
            "marker_rms_before_m": fit.rms,
            "residual_force_rms_before_n": force_rms(res, sl),
            "residual_force_rms_before_whole_n": force_rms(res),
            "residual_torque_rms_before_nm": float(np.sqrt(np.mean(np.sum(
                res.residual[sl, :3] ** 2, axis=1)))),
            "residual_force_rms_after_n": force_rms(after, sl),
            "residual_force_rms_after_whole_n": force_rms(after),
            "residual_torque_rms_after_nm": float(np.sqrt(np.mean(np.sum(
                after.residual[sl, :3] ** 2, axis=1)))),
            "optimiser_residual_force_rms_n": float(np.sqrt(np.mean(np.sum(
                out.residual[:, 3:] ** 2, axis=1)))),
            "marker_rms_after_m": out.marker_rms, "marker_rms_warm_start_m": out.marker_rms_before,
            "joint_angle_change_rms_deg": float(np.degrees(np.sqrt(np.mean(np.array(
                [tree.difference(p, q) for p, q in zip(fit.q, out.trajectory.q)])[:, 6:] ** 2)))),
            "status": out.status, "iterations": out.iterations, "seconds": wall,
            "cpu_seconds": cpu, "scaled": bool(args.scale),
            "body_weight_n": res.weight}
    for k, v in nums.items():
        print(f"  {k}: {v}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(nums, fh, indent=1)
    return nums


if __name__ == "__main__":
    main()
