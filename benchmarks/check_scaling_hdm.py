"""Segment scaling on the HDM walking trial (``cooper-motion.c3d``): fitted scales and the
marker RMS before and after.

Builds the nominal model (``cooper-skeleton.txt``, ``cooper-markers.txt``), fits segment
scales, marker offsets and poses on ``--frames`` frames spread over the trial
(:func:`multibody.motion.fit_segment_scales`), and compares the per-frame marker fit
(:class:`multibody.motion.MarkerFitter`) on every ``--step``-th frame of the whole trial with

1. the nominal model and nominal marker offsets,
2. the nominal model with the offsets calibrated alone (``MarkerFitter.calibrate``, what
   ``examples/human_walking.py`` does),
3. the nominal model with the offsets calibrated by the joint fit without scales
   (``fit_scales=False``),
4. the scaled model with its calibrated offsets.

Run: ``python benchmarks/check_scaling_hdm.py [--data DIR] [--frames 30] [--step 4]
[--symmetric] [--out DIR]`` (``--out`` writes ``scaling.json`` and ``scaled_model.urdf``).

``--walker`` runs the synthetic check instead: the 25-DOF two-legged walker of
``examples/data`` with known random scales (0.9 to 1.1, seeded) walks the synthetic gait of
``examples/_synthetic_walk.py`` (264 frames at 120 Hz); markers at their nominal places; the
largest bone-length error after the fit, with the default scale prior and with ``1e-3``.
"""
from __future__ import annotations

import json
import os
import sys
import time

import numpy as np

from multibody.models import human_model
from multibody.motion import MarkerFitter, bone_lengths, fit_segment_scales
from sensors import read_c3d

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")
if EXAMPLES not in sys.path:
    sys.path.insert(0, EXAMPLES)
from _cli import script_parser  # noqa: E402


def walker_check() -> dict:
    """The synthetic walker of known scales (module docstring); bone errors in metres."""
    from _synthetic_walk import walk_configurations
    nom = human_model(os.path.join(EXAMPLES, "data", "walker_skeleton.txt"),
                      os.path.join(EXAMPLES, "data", "walker_markers.txt"))
    rng = np.random.default_rng(0)
    true = nom.scaled({n: float(rng.uniform(0.9, 1.1)) for n in nom.skeleton.segments})
    Q = walk_configurations(nom, np.arange(264) / 120.0)     # joint angles of the walk
    fit = MarkerFitter(true.tree, true.markers)
    X = np.array([fit.marker_positions(q) for q in Q])
    out = {}
    for prior in (None, 1e-3):
        t0 = time.perf_counter()
        res = fit_segment_scales(nom, X, **({} if prior is None else {"scale_prior": prior}))
        want, got = bone_lengths(true.tree), res.bone_lengths()
        err = max(abs(got[k] - want[k]) for k in want)
        name = "default" if prior is None else f"{prior:g}"
        out[name] = err
        print(f"walker, scale prior {name}: largest bone-length error {1e3 * err:.3f} mm, "
              f"marker RMS {1e3 * res.marker_rms_initial:.2f} -> {1e3 * res.marker_rms:.4f} mm, "
              f"{res.iterations} iterations, {time.perf_counter() - t0:.1f} s")
    return out


def main(argv=None) -> dict:
    ap = script_parser(__doc__)
    ap.add_argument("--data", default="/work/shared/data/hdm", help="folder of the HDM skeleton, marker set and C3D files")
    ap.add_argument("--frames", type=int, default=30, help="frames of the scaling fit")
    ap.add_argument("--step", type=int, default=4, help="evaluate every N-th frame")
    ap.add_argument("--scale-prior", type=float, default=None, help="lambda_s (m)")
    ap.add_argument("--offset-prior", type=float, default=None, help="lambda_d")
    ap.add_argument("--symmetric", action="store_true", help="one scale per right/left pair")
    ap.add_argument("--walker", action="store_true", help="the synthetic walker check")
    ap.add_argument("--out", default=None, help="folder for scaling.json and scaled_model.urdf")
    args = ap.parse_args(argv)
    if args.walker:
        return walker_check()
    model = human_model(os.path.join(args.data, "cooper-skeleton.txt"),
                        os.path.join(args.data, "cooper-markers.txt"))
    names = [n for n, _, _ in model.markers]
    X = read_c3d(os.path.join(args.data, "cooper-motion.c3d")).select(names).positions
    ev = np.arange(0, X.shape[0], args.step)
    q_ref = model.reference_configuration()
    print(f"{X.shape[0]} frames, {len(names)} markers; scaling on {args.frames} frames, "
          f"evaluation on {ev.size} frames")

    def rms(m, markers):
        return MarkerFitter(m.tree, markers, preferred_q=q_ref).fit(X[ev], progress=False).rms

    opts = {k: v for k, v in (("scale_prior", args.scale_prior),
                              ("offset_prior", args.offset_prior)) if v is not None}
    opts["symmetric"] = args.symmetric
    t0 = time.perf_counter()
    res = fit_segment_scales(model, X, max_frames=args.frames, **opts)
    t_fit = time.perf_counter() - t0
    off = fit_segment_scales(model, X, max_frames=args.frames, fit_scales=False, **opts)
    cal = MarkerFitter(model.tree, model.markers, preferred_q=q_ref).calibrate(X)
    rows = {"nominal": rms(model, model.markers),
            "offsets calibrated (MarkerFitter.calibrate)": rms(
                model, list(zip(names, cal.marker_bodies, cal.marker_offsets))),
            "offsets calibrated (fit_segment_scales, fit_scales=False)": rms(
                off.model, off.model.markers),
            "scaled + offsets (fit_segment_scales)": rms(res.model, res.model.markers)}
    print(f"joint fit: {t_fit:.1f} s, {res.iterations} iterations, converged {res.converged}; "
          f"on its {len(res.frames)} frames marker RMS {1e3 * res.marker_rms_initial:.2f} -> "
          f"{1e3 * res.marker_rms:.2f} mm")
    for k, v in rows.items():
        print(f"  marker RMS over the trial, {k:58s} {1e3 * v:6.2f} mm")
    print("segment scales: " + ", ".join(f"{k} {v:.3f}" for k, v in res.segment_scale.items()))
    print(f"mass {model.mass:.1f} -> {res.model.mass:.1f} kg, height {model.height:.3f} -> "
          f"{res.model.height:.3f} m")
    report = res.report()
    report["scaling"]["trial_marker_rms_m"] = rows
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        res.write_urdf(os.path.join(args.out, "scaled_model.urdf"))
        with open(os.path.join(args.out, "scaling.json"), "w") as fh:
            json.dump(report, fh, indent=1)
    return report


if __name__ == "__main__":
    main()
