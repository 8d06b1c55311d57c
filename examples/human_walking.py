"""Whole-body analysis of a walking trial with the human dynamic model: marker fitting,
inverse dynamics with ground contact, energetic cost, and the HDM experiments.

The pipeline (``multibody.motion``):

1. build the body from an HDM skeleton file and its marker placements
   (``multibody.models.human_model``: 48 DOF for ``cooper-skeleton.txt``);
2. read the capture (``sensors.read_c3d``; markers matched regardless of a subject prefix);
   scale the model (``--scale``, the default: ``fit_segment_scales``, one isotropic factor
   per segment, one per left/right pair, fitted with the marker offsets over 30 frames of
   the trial, the markers of the feet and toes held at their nominal places so the feet
   cannot pitch against them; the subject's mass kept) or, with ``--no-scale``, calibrate the marker offsets
   alone over 20 frames; then fit every frame (``MarkerFitter``: Levenberg-Marquardt with
   exact compiled Jacobians, warm-started, joint limits); with ``--flat-feet`` (the default
   with ``--c3d``) the feet's marker offsets are recalibrated from the frames where each foot
   segment rests, turned flat about its joint (``flat_stance_offsets``), and every frame is
   fitted again (HDM trial: 5.56 -> 5.28 mm, pelvis residual 5.07 -> 3.57 N);
3. smooth ``q(t)`` (6 Hz zero-phase low-pass, quintic splines) into ``v`` and ``vdot``;
4. fit the floor plane to the foot and toe contact points at rest, and solve each frame for
   joint torques, ground forces in friction cones at the contact points on the floor, and a
   minimised residual wrench on the pelvis (``ContactInverseDynamics``);
5. joint powers and work (``joint_work``); the mean vertical ground force over whole strides
   (heel strike to heel strike of one foot) against body weight;
   with ``--consistent`` (the default with ``--c3d``; minutes on a whole trial) the
   dynamically consistent motion (``ConsistentMotion``: one trajectory optimisation of a
   spline motion over the trial, marker error against the pelvis residual, smoothed contact
   at the foot points, warm-started from the fit), checked by ``ContactInverseDynamics``
   re-solved on it; that motion and its torques then replace the per-frame analysis in
   ``fit.npz``, the forward pass and the plots (the experiments keep the per-frame one);
   then (``--rigid-feet``, the default with ``--consistent``) it is re-optimised in two more
   stages with rigid, planted feet, the centre of pressure 2 cm inside the feet and the
   marker offsets refined (``RIGID_STAGES``; a stage that diverges is retried through a
   halfway stage, then dropped), and the forward pass runs with the trajectory LQR, alone
   or on the whole-body balance, whichever follows the capture better from the reference's
   start and three nudged ones (``rigid_forward_options``, ``choose_forward_pass``);
6. the forward pass (``multibody.motion.ForwardPass``, ``_human_experiments.py``): the walk
   re-simulated in a ``TimeSteppingRigidBodySystem`` on the fitted floor (spheres at the foot
   contact points, joint limits) from the inverse-dynamics joint torques plus an implicit
   joint PD and, on the rigid-feet motion, the trajectory LQR (alone or on the whole-body
   balance, step 5b), else (``--no-rigid-feet``, or without ``--consistent``) a pelvis
   feedback through the stance legs (``--balance-gain``, 1 by default); the contact points
   placed from the reference's loads, the pelvis not actuated, compiled to one C run;
   joint-angle and marker tracking errors and the speed against real time; with
   ``--noise-repetitions N`` (20, the paper's, by default with ``--c3d``) the paper's
   noise protocol on it (9 levels 0.1 ... 64 mm, N draws each: refit, inverse dynamics,
   forward pass with joint tracking alone, ``--noise-balance-gain`` 0; mean and standard
   error; Fig. 3 as ``walking_noise_protocol.png``);
7. the experiments of Liu, Cooper and Ballard's HDM: (a) noise sensitivity: markers
   synthesized from the fitted motion with Gaussian noise of 0.1 ... 64 mm, refitted; joint
   angle and torque errors against the noise-free analysis (on a clip of ``--noise-frames``
   frames); (b) arm swing: the same walk with the arm joints held at their standing pose by
   the fit, its cost (absolute joint work over the strides) against the normal walk;
   (c) reduced marker set: only head, hand and foot markers, the joints pulled toward the
   subject's posture (a Gaussian prior from the calibration frames: mean joint angles, a
   stiffness per axis inverse to its spread there), joint angles against the full-set fit.

Outputs in ``--out``: ``model.urdf`` (the scaled model with ``--scale``), ``fit.npz``
(``t``, ``q`` in the URDF's joint order as Pinocchio reads it with a free-flyer root
``[x y z qx qy qz qw, joints]``: the smoothed motion the torques belong to, the consistent
one with ``--consistent``; ``q_fit``: the per-frame marker fit, same order; ``marker_names``,
``marker_links``, ``marker_offsets`` (calibrated, link frames), ``tau`` (Pinocchio's velocity
order: the pelvis residual ``[force; torque]`` first, then the joint torques), ``grf``; also
``v``, ``vdot`` (Pinocchio's order) and ``contact_links``, ``contact_points`` (link frames),
``contact_forces`` (world), so that ``rnea(q, v, vdot) - sum J_c^T f = tau`` can be checked),
``forward.npz`` (the forward pass's ``t``, ``q`` and ``v`` in fit.npz's order),
``report.json`` (among its keys: ``segment_scale`` {segment: factor} and ``scaling`` with
``--scale``; ``residual_force_rms_before_n``, the pelvis residual force RMS over the strides
of the per-frame analysis; with ``--consistent`` ``residual_force_rms_after_n`` (the same on
the consistent motion, from its independent inverse dynamics), ``marker_rms_after_m`` and
``consistent_motion``; ``forward_pass`` {``marker_rms_m``, ``joint_angle_rms_deg``,
``realtime_factor``, ...}, ``noise_study_protocol``, ``reduced_marker_angle_rms_deg``) and the plots ``walking_motion.png`` (joint angles, torques and ground forces
with stance shaded), ``walking_cost.png`` (work per joint), ``walking_stick.png`` (stick
figure frames), ``walking_noise.png`` and ``walking_reduced_markers.png``.

Run: ``python examples/human_walking.py --c3d cooper-motion.c3d --out DIR`` (the skeleton and
marker files are looked for next to the C3D, or give ``--skeleton`` and ``--marker-set``;
the whole trial is analysed). Without ``--c3d`` the script synthesizes a capture of two strides
of a 25-DOF two-legged body (``examples/data/walker_skeleton.txt``) walking at 1.2 m/s
(``_synthetic_walk.py``: feet on the floor in stance, the centre of mass carried by the ground
force) and runs in seconds; ``--markers FILE.npz`` (arrays
``t``, ``labels``, ``positions`` in metres) is another input. ``--viewer`` replays the fitted
walk with its ground forces and markers in a web browser, ``--html PATH`` saves it as one
HTML file and the forward pass as ``<PATH>_forward.html`` (both need ``pip install
'dynablocks[viz]'``).
"""
from __future__ import annotations

import argparse
import json
import os
import time

_BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
if __name__ == "__main__" and not any(k in os.environ for k in _BLAS_THREADS):
    # One BLAS thread, set before numpy and CasADi load their BLAS: the trajectory
    # optimisation's IPOPT grows the last-bit differences that threaded BLAS sums make into
    # different motions (1e-14 in the band solution, millimetres after the rigid stages), so
    # a run is reproducible only with a fixed thread count; the README's figures are this
    # one's. Any of these variables set in the environment overrides it.
    for _name in _BLAS_THREADS:
        os.environ[_name] = "1"

import numpy as np

from multibody.models import human_model
from multibody.visualization import Visualizer, show_run
from multibody.motion import (ContactError, ContactInverseDynamics, Floor, MarkerFitter,
                              estimate_floor, fit_segment_scales, joint_work, smooth_trajectory)
from sensors import MarkerData, read_c3d
from _plotting import pyplot
from _viewer import add_viewer_arguments, viewer_options
from _cli import script_parser
from _synthetic_walk import walk_configurations
from _human_plots import plot_cost, plot_motion, plot_noise, plot_reduced, plot_stick
from _human_reduced import joint_angle_rms_deg, reduced_marker_experiment
from _human_experiments import (RIGID_STAGES, build_forward_pass, choose_forward_pass,
                                consistent_motion, flat_feet_fit,
                                forward_pass, noise_protocol, plot_noise_protocol,
                                residual_force_rms, rigid_forward_options)

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(os.path.dirname(HERE), "tests", "data")
WALKER = os.path.join(HERE, "data")               # the two-legged body of the synthetic walk
NOISE_MM = (0.1, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)
PAPER = {"noise_5mm": "about 1 degree and 5-10 N m", "arm_swing": "+6.1 %"}


# ---------------------------------------------------------------------------- input
def synthetic_capture(model, frames: int, rate: float = 120.0) -> MarkerData:
    """A synthetic capture of ``model`` walking at 1.2 m/s along +y (``_synthetic_walk``: a
    periodic gait cycle of 1.1 s, feet on the floor in stance, the centre of mass moved by the
    ground force through the centre of pressure, arms swinging against the legs); ``frames``
    samples at ``rate`` Hz, markers in metres with a subject prefix."""
    t = np.arange(frames) / rate
    Q = walk_configurations(model, t)
    fitter = MarkerFitter(model.tree, model.markers)
    X = np.array([fitter.marker_positions(q) for q in Q])
    return MarkerData(t, [f"Synth:{n}" for n, _, _ in model.markers], X, rate, "synthetic walk")


def load_capture(args, model) -> MarkerData:
    if args.c3d:
        return read_c3d(args.c3d)
    if args.markers:
        z = np.load(args.markers, allow_pickle=False)
        t = np.asarray(z["t"], float)
        rate = 1.0 / float(np.median(np.diff(t)))
        return MarkerData(t, [str(x) for x in z["labels"]], z["positions"], rate, args.markers)
    return synthetic_capture(model, args.synthetic_frames)


def model_files(args) -> tuple[str, str]:
    if args.skeleton:
        return args.skeleton, args.marker_set
    if args.c3d:
        d = os.path.dirname(os.path.abspath(args.c3d))
        sk, mk = os.path.join(d, "cooper-skeleton.txt"), os.path.join(d, "cooper-markers.txt")
        if os.path.isfile(sk):
            return sk, (args.marker_set or mk)
    return (os.path.join(WALKER, "walker_skeleton.txt"),
            args.marker_set or os.path.join(WALKER, "walker_markers.txt"))


# ---------------------------------------------------------------------------- analysis
def contact_groups(cid) -> dict:
    """Contact-point indices per foot side: 'r' and 'l' from the HDM segment names."""
    groups = {}
    for i, b in enumerate(cid.point_bodies):
        groups.setdefault(b.split("-")[0].split("_")[0], []).append(i)
    return groups


def stride_window(active: np.ndarray, groups: dict) -> tuple[int, int, int]:
    """(start, stop, strides): from the first to the last heel strike (contact onset) of the
    foot with the most whole strides; the whole trial and 0 strides when there is none."""
    best = (0, active.shape[0], 0)
    for idx in groups.values():
        on = active[:, idx].any(axis=1)
        strikes = np.flatnonzero(on[1:] & ~on[:-1]) + 1
        if len(strikes) >= 2 and len(strikes) - 1 > best[2]:
            best = (int(strikes[0]), int(strikes[-1]), len(strikes) - 1)
    return best


def inverse_dynamics(model, t, Q, cutoff, floor=None, progress=None):
    """Smooth, fit the floor (unless given) and solve the contact inverse dynamics."""
    traj = smooth_trajectory(model.tree, t, Q, cutoff_hz=cutoff)
    cid = ContactInverseDynamics(model.tree, model.foot_contact_points, height_threshold=0.04,
                                 speed_threshold=0.5)
    if floor is None:
        P, S = [], []
        for q, v in zip(traj.q, traj.v):
            p, _, pd = cid.contact_kinematics(q, v)
            P.append(p)
            S.append(np.linalg.norm(pd, axis=1))
        try:
            floor = estimate_floor(np.array(P), np.array(S))
        except ContactError as e:          # no foot ever at rest: a level floor under it
            floor = Floor(np.array([0.0, 0.0, 1.0]), np.array([0.0, 0.0, np.min(P)]))
            print(f"  {e}; using the level floor z = {floor.point[2]:.3f} m")
    cid.floor = floor
    return traj, cid.solve(traj, progress=progress), floor, cid


def noise_study(model, fitter, traj, floor, frames, cutoff, seed=0) -> list:
    """Experiment (a): refit markers synthesized from the motion with Gaussian noise."""
    tree = model.tree
    Qt, t = traj.q[:frames], traj.t[:frames]
    X = np.array([fitter.marker_positions(q) for q in Qt])
    ref_fit = fitter.fit(X, q0=Qt[0], progress=False)
    ref_traj, ref, _, _ = inverse_dynamics(model, t, ref_fit.q, cutoff, floor)
    rng = np.random.default_rng(seed)
    inner = slice(6, max(frames - 6, 7))
    rows = []
    for mm in NOISE_MM:
        Xn = X + rng.normal(scale=mm * 1e-3, size=X.shape)
        fit = fitter.fit(Xn, q0=Qt[0], progress=False)
        traj, res, _, _ = inverse_dynamics(model, t, fit.q, cutoff, floor)
        dtau = (res.joint_torques - ref.joint_torques)[inner]
        rows.append({"noise_mm": mm,
                     "joint_angle_error_deg": joint_angle_rms_deg(tree, fit.q, ref_fit.q, inner),
                     "joint_angle_error_filtered_deg": joint_angle_rms_deg(
                         tree, traj.q, ref_traj.q, inner),
                     "torque_error_nm": float(np.sqrt(np.mean(dtau ** 2))),
                     "torque_error_median_nm": float(np.median(np.abs(dtau))),
                     "contact_set_changed_frames": int(np.sum(np.any(
                         res.active[inner] != ref.active[inner], axis=1))),
                     "marker_rms_m": fit.rms})
        print(f"  noise {mm:5.1f} mm: joint angles {rows[-1]['joint_angle_error_deg']:7.3f} deg "
              f"RMS per frame, {rows[-1]['joint_angle_error_filtered_deg']:7.3f} deg filtered; "
              f"torques {rows[-1]['torque_error_nm']:8.3f} N m RMS "
              f"({rows[-1]['contact_set_changed_frames']} frames with another contact set)")
    return rows


# ---------------------------------------------------------------------------- plots
# ---------------------------------------------------------------------------- main
def main(argv=None) -> dict:
    ap = script_parser(__doc__)
    ap.add_argument("--c3d", help="motion capture (C3D); default: a synthetic capture")
    ap.add_argument("--markers", help="marker data as .npz (t, labels, positions in m)")
    ap.add_argument("--skeleton", help="HDM skeleton file (default: next to the C3D)")
    ap.add_argument("--marker-set", help="marker placement file (default: next to the C3D)")
    ap.add_argument("--out", default=".", help="output folder")
    ap.add_argument("--frames", type=int, default=0, help="analyse only the first N frames")
    ap.add_argument("--synthetic-frames", type=int, default=288,
                    help="frames of the synthetic capture at 120 Hz (used without --c3d and "
                         "--markers)")
    ap.add_argument("--noise-frames", type=int, default=120,
                    help="frames of the clip of the noise study")
    ap.add_argument("--cutoff", type=float, default=6.0, help="low-pass cut-off (Hz)")
    ap.add_argument("--prior-weight", type=float, default=0.01,
                    help="pull of the joint angles to the standing pose (m/rad)")
    ap.add_argument("--no-experiments", action="store_true",
                    help="skip the three HDM experiments (noise, arm swing, reduced markers)")
    ap.add_argument("--no-plot", action="store_true", help="skip the plots")
    ap.add_argument("--no-forward-pass", action="store_true",
                    help="skip the forward pass (simulation of the walk from its torques)")
    ap.add_argument("--noise-repetitions", type=int, default=None,
                    help="draws per noise level of the paper's noise protocol on the forward "
                         "pass (the paper: 20; 0 skips it; default: 20 with --c3d, else 0)")
    ap.add_argument("--reduced-prior-scale", type=float, default=0.01,
                    help="experiment (c): marker error (m) worth one standard deviation of a "
                         "joint axis about the calibration posture")
    ap.add_argument("--noise-levels", default=",".join(f"{x:g}" for x in NOISE_MM),
                    help="noise levels of the protocol (mm, comma-separated; default the "
                         "paper's nine)")
    ap.add_argument("--balance-gain", type=float, default=1.0,
                    help="gain of the forward pass's pelvis feedback through the stance legs "
                         "(0: joint tracking alone; 1, the default, kept the HDM walk's "
                         "pelvis within 10 cm of the capture longest with the joints within "
                         "3 deg); not used on the rigid-feet motion (its trajectory LQR "
                         "replaces it)")
    ap.add_argument("--noise-balance-gain", type=float, default=0.0,
                    help="balance gain of the noise protocol's forward pass (default 0: the "
                         "paper's joint tracking alone)")
    ap.add_argument("--place-contacts", action=argparse.BooleanOptionalAction, default=True,
                    help="place the forward pass's floor and contact points from the "
                         "reference motion's loads (ForwardPass contact_reference)")
    ap.add_argument("--placement-quantile", type=float, default=0.18,
                    help="with --place-contacts: each contact point of the forward pass at this "
                         "quantile of its loaded heights (0: its lowest); 0.18 the best median "
                         "over perturbed runs of the HDM walk (benchmarks/bench_forward_pass.py)")
    ap.add_argument("--time-step", type=float, default=0.0,
                    help="time step of the forward pass (s; default a quarter frame)")
    ap.add_argument("--scale", action=argparse.BooleanOptionalAction, default=True,
                    help="fit the segment scales with the marker offsets "
                         "(fit_segment_scales) before the per-frame fit; --no-scale: the "
                         "nominal skeleton, offsets calibrated by MarkerFitter.calibrate")
    ap.add_argument("--scale-symmetric", action=argparse.BooleanOptionalAction, default=True,
                    help="one scale for each left/right pair of segments")
    ap.add_argument("--scale-frames", type=int, default=30,
                    help="frames (evenly spaced over the trial) of the scaling fit")
    ap.add_argument("--consistent", action=argparse.BooleanOptionalAction, default=None,
                    help="optimise the motion for dynamic consistency (ConsistentMotion) and "
                         "run the forward pass on it (default: on with --c3d, off for the "
                         "synthetic capture; minutes on a whole trial)")
    ap.add_argument("--consistent-iterations", type=int, default=100,
                    help="at most this many IPOPT iterations of the consistent motion (it "
                         "stops earlier by IPOPT's tests or ConsistentMotion's stall rule)")
    ap.add_argument("--flat-feet", action=argparse.BooleanOptionalAction, default=None,
                    help="recalibrate the feet's marker offsets from the frames where the "
                         "feet rest, turned flat (flat_stance_offsets), and fit again "
                         "(default: on with --c3d)")
    ap.add_argument("--rigid-feet", action=argparse.BooleanOptionalAction, default=True,
                    help="with --consistent: after the contact band, re-optimise the motion "
                         "with rigid, planted feet, the centre of pressure 2 cm inside the feet "
                         "and the marker offsets refined (RIGID_STAGES), and run the forward "
                         "pass with the trajectory LQR on it, alone or on the whole-body "
                         "balance, whichever follows the capture better from 4 starts (about "
                         "13 min of CPU on the HDM trial, then 2 min for the two controllers' "
                         "gains, compilation and runs; --no-rigid-feet: the contact band's "
                         "motion and the pelvis feedback, README)")
    ap.add_argument("--knot-interval", type=float, default=1 / 30,
                    help="spline knot spacing of the consistent motion (s)")
    add_viewer_arguments(ap, "the fitted walk")
    args = ap.parse_args(argv)
    if args.noise_repetitions is None:
        args.noise_repetitions = 20 if args.c3d else 0
    viewer_options(args, contact_force_scale=0.0)        # exits when viser is missing
    os.makedirs(args.out, exist_ok=True)
    skeleton, marker_set = model_files(args)
    model = human_model(skeleton, marker_set)
    tree = model.tree
    print(f"model {os.path.basename(skeleton)}: {tree.nv} DOF ({tree.nv - 6} joint + 6 base), "
          f"{model.mass:.1f} kg, {len(model.markers)} markers")
    data = load_capture(args, model)
    names = [n for n, _, _ in model.markers]
    cap = data.select(names)
    if args.frames:
        cap = cap.frames(0, args.frames)
    X, t = cap.positions, cap.times
    print(f"capture {cap.source}: {len(t)} frames at {cap.rate_hz:g} Hz, "
          f"{100 * np.isfinite(X[..., 0]).mean():.1f} % of marker samples visible")

    # 1b. scaling: segment sizes and marker offsets fitted together (or the offsets alone)
    scaling = None
    t0 = time.perf_counter()
    if args.scale:
        # the subject's mass kept (the densities rescaled); one scale per left/right pair
        scaling = fit_segment_scales(model, X, max_frames=args.scale_frames, mass=model.mass,
                                     symmetric=args.scale_symmetric)
        model, tree = scaling.model, scaling.model.tree
        print(f"scaling: marker RMS {1e3 * scaling.marker_rms_initial:.2f} -> "
              f"{1e3 * scaling.marker_rms:.2f} mm over {len(scaling.frames)} frames, mass "
              f"{model.mass:.1f} kg, height {model.height:.3f} m ({scaling.seconds:.1f} s)")

    # 2. calibrate the marker offsets (already done by the scaling), then fit every frame
    fitter = MarkerFitter(tree, model.markers, preferred_q=model.reference_configuration(),
                          prior_weight=args.prior_weight)
    if scaling is None:
        fitter = fitter.calibrate(X)
    t_cal = time.perf_counter() - t0
    fit = fitter.fit(X)
    flat_feet = bool(args.c3d) if args.flat_feet is None else args.flat_feet
    flat_report = None
    if flat_feet:        # the feet's marker offsets from the frames where the feet rest flat
        fitter, fit, flat_report = flat_feet_fit(model, fitter, fit, t, X, lambda Q: (
            inverse_dynamics(model, t, Q, args.cutoff, progress=False)[2]))
    fit = fitter.fit(X)                   # timed again with every function compiled
    cpu_rate = len(t) / max(fit.cpu_seconds, 1e-12)
    print(f"fit: marker RMS {1e3 * fit.rms:.2f} mm, {fit.frames_per_second:.0f} frames/s wall, "
          f"{cpu_rate:.0f} frames/s of CPU time ({fit.iterations.mean():.1f} iterations per "
          f"frame; calibration {t_cal:.1f} s)")

    # 3-5. smoothing, contact inverse dynamics, energetics
    traj, res, floor, cid = inverse_dynamics(model, t, fit.q, args.cutoff)
    groups = contact_groups(cid)
    a, b, strides = stride_window(res.active, groups)
    sl = slice(a, b)
    ratio = float(res.grf[sl, 2].mean() / res.weight)
    res_rms = residual_force_rms(res, sl)
    res_trq = float(np.sqrt(np.mean(np.sum(res.residual[sl, :3] ** 2, axis=1))))
    work = joint_work(tree, t[sl], res.tau[sl], traj.v[sl])
    print(f"floor tilt {floor.tilt_degrees:.2f} deg; {strides} whole stride(s) over frames "
          f"{a}-{b}: mean vertical ground force / weight = {ratio:.4f}; pelvis residual force "
          f"RMS {res_rms:.1f} N ({100 * res_rms / res.weight:.2f} % of weight), torque "
          f"{res_trq:.1f} N m; cost (absolute joint work) {work.total_absolute:.1f} J")
    report = {"dof": int(tree.nv), "mass": float(model.mass), "marker_rms_m": fit.rms,
              "fit_frames_per_s": fit.frames_per_second, "fit_frames_per_cpu_s": cpu_rate,
              "capture_rate_hz": float(cap.rate_hz),
              "mean_vertical_grf_over_weight": ratio, "pelvis_residual_rms_n": res_rms,
              "pelvis_residual_over_weight": res_rms / res.weight,
              "pelvis_residual_torque_rms_nm": res_trq, "body_weight_n": res.weight,
              "floor_tilt_deg": floor.tilt_degrees, "stride_frames": [a, b],
              "strides": strides, "frames": int(len(t)),
              "fit_iterations_mean": float(fit.iterations.mean()),
              "cost_absolute_work_j": work.total_absolute, "prior_weight": args.prior_weight,
              "cost_positive_work_j": work.total_positive,
              "work_per_joint_j": {j: w[2] for j, w in work.per_joint().items()},
              "paper": PAPER, "residual_force_rms_before_n": res_rms,
              "flat_feet": flat_report}
    if scaling is not None:
        report.update(scaling.report())
    traj0, res0 = traj, res                  # the per-frame analysis (experiments use it)

    # 5b. the dynamically consistent motion: one trajectory optimisation over the trial
    consistent = bool(args.c3d) if args.consistent is None else args.consistent
    rigid = consistent and args.rigid_feet
    fitter_motion = fitter                   # the marker offsets that go with ``traj``
    force_points = None                      # where res's forces act, if not cid.points
    if consistent:
        traj, res, keys, fitter_motion, force_points = consistent_motion(
            model, fitter, t, X, fit.q, floor, res0, sl, args.knot_interval,
            args.consistent_iterations, rigid_stages=RIGID_STAGES if rigid else ())
        report.update(keys)
        rigid = keys["consistent_motion"]["rigid_feet"]

    # 6. the forward pass: the walk simulated from its torques, the pelvis not actuated
    fwd = None

    def new_model():
        m = human_model(skeleton, marker_set)
        return m if scaling is None else m.scaled(scaling.segment_scale,
                                                  marker_offsets=scaling.marker_offsets,
                                                  mass=m.mass)
    if not args.no_forward_pass:
        placement = ({"contact_reference": traj.q, "contact_forces": res.contact_forces,
                      "placement_quantile": args.placement_quantile}
                     if args.place_contacts else {})
        # the contact points placed from the reference's loads (each at a low quantile of
        # its loaded heights on the stance floor; at its lowest: 1.61 -> 0.62 m marker RMS on
        # the per-frame HDM walk)
        controller, candidates = "pelvis feedback through the stance legs", None
        if rigid:      # on rigid feet: the trajectory LQR, no pelvis feedback, lifted swing
            placement.update(rigid_forward_options(tree, traj, res))
            fp, controller, candidates = choose_forward_pass(
                lambda **extra: build_forward_pass(new_model, traj, floor,
                                                   time_step=args.time_step or None,
                                                   balance_gain=0.0, **placement, **extra),
                traj, res, fitter_motion, X)
        else:
            fp = build_forward_pass(new_model, traj, floor, time_step=args.time_step or None,
                                    balance_gain=args.balance_gain, **placement)
        fwd, report["forward_pass"] = forward_pass(fp, traj, res, fitter_motion, X)
        report["forward_pass"]["controller"] = controller
        if candidates is not None:    # compiled while choosing: the choice's whole time counts
            report["forward_pass"]["controllers_tried"] = candidates
            fpr = report["forward_pass"]
            fpr["realtime_factor_with_compilation"] = fpr["simulated_s"] / (
                sum(r["seconds"] for r in candidates) + fpr["wall_s"])
            print(f"  with the choice of controller (its gains, compilation and runs): "
                  f"{fpr['realtime_factor_with_compilation']:.3f}x real time")
        np.savez(os.path.join(args.out, "forward.npz"), t=fwd.t,
                 q=model.configuration_to_urdf_order(fwd.q),
                 v=model.velocity_to_urdf_order(fwd.v))
        if args.noise_repetitions > 0:
            levels = [float(x) for x in args.noise_levels.split(",")]
            print(f"noise protocol: {len(levels)} levels x {args.noise_repetitions} draws, "
                  "each refitted, inverse dynamics, forward pass")

            def analyse(Q):
                tr, rs, _, _ = inverse_dynamics(model, t, Q, args.cutoff, floor)
                return tr, rs
            # the paper's protocol: joint tracking (feedforward + PD) without the pelvis
            # feedback unless asked (on the HDM walk gain 1 gives 3.1 deg at 4 mm against
            # 0.97 deg without), contacts placed from the per-frame motion the draws perturb
            # (placed from the consistent one: 1.08 deg)
            fp_noise = fp if (traj is traj0 and args.noise_balance_gain == args.balance_gain) \
                else build_forward_pass(new_model, traj0, floor, time_step=args.time_step or None,
                                        balance_gain=args.noise_balance_gain, **(
                                            {"contact_reference": traj0.q,
                                             "contact_forces": res0.contact_forces}
                                            if args.place_contacts else {}))
            report["noise_study_protocol_balance_gain"] = args.noise_balance_gain
            report["noise_study_protocol"] = noise_protocol(
                fitter, traj0, res0, floor, fp_noise, analyse, args.noise_repetitions, levels)

    # 7. experiments
    locked_work = None
    if not args.no_experiments:
        print("(a) noise study")
        frames = min(args.noise_frames, len(t))
        report["noise_study"] = noise_study(model, fitter, traj0, floor, frames, args.cutoff)
        print("(b) arm swing: arms held at the standing pose")
        held = MarkerFitter(tree, model.markers, preferred_q=model.reference_configuration(),
                            prior_weight=args.prior_weight, locked_joints=model.arm_joints
                            ).with_offsets(fitter.marker_offsets)
        fit_h = held.fit(X, q0=None)
        traj_h, res_h, _, _ = inverse_dynamics(model, t, fit_h.q, args.cutoff, floor)
        locked_work = joint_work(tree, t[sl], res_h.tau[sl], traj_h.v[sl])
        report["arm_swing_cost_ratio"] = locked_work.total_absolute / work.total_absolute
        report["arm_swing_positive_work_ratio"] = locked_work.total_positive / work.total_positive
        report["arms_held_marker_rms_m"] = fit_h.rms
        print(f"  cost with arms held / normal = {report['arm_swing_cost_ratio']:.3f} "
              f"(positive work {report['arm_swing_positive_work_ratio']:.3f}; paper +6.1 %)")
        reduced, q_reduced = reduced_marker_experiment(model, fitter, X, t, fit, args)
        report.update(reduced)

    # outputs
    model.write_urdf(os.path.join(args.out, "model.urdf"))
    np.savez(os.path.join(args.out, "fit.npz"), t=t, q=model.configuration_to_urdf_order(traj.q),
             q_fit=model.configuration_to_urdf_order(fit.q),
             marker_names=np.array(names), marker_links=np.array(fitter.marker_bodies),
             marker_offsets=fitter_motion.marker_offsets,
             tau=model.velocity_to_urdf_order(res.tau),
             grf=res.grf, urdf_joint_order=np.array(model.urdf_joint_order()),
             v=model.velocity_to_urdf_order(traj.v), vdot=model.velocity_to_urdf_order(traj.vdot),
             contact_links=np.array(res.point_bodies),
             contact_points=cid.points if force_points is None else force_points,
             contact_forces=res.contact_forces)
    with open(os.path.join(args.out, "report.json"), "w") as fh:
        json.dump(report, fh, indent=1)
    print(f"wrote {os.path.join(args.out, 'report.json')}")
    plt = None if args.no_plot else pyplot()
    if plt is not None:
        plot_motion(plt, args.out, model, traj, res, groups, (a, b))
        plot_stick(plt, args.out, model, fit.q, floor)
        if locked_work is not None:
            plot_cost(plt, args.out, work, locked_work)
            plot_noise(plt, args.out, report["noise_study"])
            if report.get("reduced_marker_angle_rms_deg") is not None:
                plot_reduced(plt, args.out, tree, fit.q, q_reduced)
        if report.get("noise_study_protocol"):
            plot_noise_protocol(plt, os.path.join(args.out, "walking_noise_protocol.png"),
                                report["noise_study_protocol"])
    if args.viewer or args.html:          # the fitted walk, ground forces and markers
        vis = Visualizer(tree, live=args.viewer, contact_force_scale=0.001, markers=list(
            zip(names, fitter_motion.marker_bodies, fitter_motion.marker_offsets)))
        walk = vis.record_trajectory(t, traj.q, res.point_bodies, cid.points if force_points
                                     is None else force_points, res.contact_forces)
        report["html"] = show_run(vis, walk, html=args.html, replay=args.viewer)
        if fwd is not None and args.html:             # the forward pass, recorded too
            vis_f = Visualizer(tree, live=False, markers=list(
                zip(names, fitter_motion.marker_bodies, fitter_motion.marker_offsets)))
            rec = vis_f.record_trajectory(fwd.t, fwd.q)
            report["forward_html"] = show_run(vis_f, rec, html=os.path.splitext(args.html)[0]
                                              + "_forward.html")
    return {"report": report, "fit": fit, "inverse_dynamics": res, "trajectory": traj,
            "model": model, "forward_pass": fwd, "floor": floor, "fitter": fitter,
            "fitter_motion": fitter_motion, "contact_inverse_dynamics": cid,
            "markers": X}


if __name__ == "__main__":
    main()
