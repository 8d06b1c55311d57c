"""The forward pass and the HDM paper's noise protocol for ``human_walking.py``.

* :func:`forward_pass` re-simulates the analysed walk in a
  :class:`~multibody.plants.TimeSteppingRigidBodySystem` on the fitted floor
  (:class:`multibody.motion.forward_pass.ForwardPass`: foot spheres, joint limits, the
  inverse-dynamics joint torques plus an implicit joint PD and a pelvis feedback carried by
  the stance legs; the pelvis itself is not actuated) and measures how closely the simulated
  body follows the capture: joint angles against the analysed motion and markers against the
  captured ones, over the whole trial, and the speed against real time. The analysed motion
  is the dynamically consistent one (``ConsistentMotion``'s trajectory, its spline
  derivatives as they are, and the torques of its independent inverse dynamics) when the
  example runs with ``--consistent``, else the smoothed per-frame fit. On the motion of
  the rigid-feet stages (:data:`RIGID_STAGES`, the default with ``--consistent``) its
  controller is the trajectory LQR, alone or on the whole-body balance
  (:func:`choose_forward_pass`): on the HDM trial 17.5 mm markers, 0.92 deg, 22x real time
  (README). Measured on the contact band's motion (``--no-rigid-feet``; scaled model,
  flat feet, pelvis residual 0.07 N; pelvis feedback gain 1; contacts placed at the 0.18
  quantile of their loaded heights, that path's defaults): the joints follow to 0.46 deg
  RMS at 17.7x real time and the unactuated body stays up over both strides, but it
  drifts: the pelvis is within 2 cm of the capture for 0.51 s, 5 cm for 1.04 s, 10 cm for
  1.30 s, 23 cm off at the end (95 mm RMS); markers 0.118 m RMS, not 2 cm. That run is one
  of the better ones: over runs with the initial pelvis velocity perturbed by 2 cm/s the
  marker RMS has a median of 0.20-0.22 m
  (0.12-0.9 m); with the points at their lowest loaded height 0.97 m (the body falls after
  1.25 s). What is left is the contact: the reference's feet push within the consistent
  motion's 4-7 cm band (load-weighted 17 mm above the floor), the rigid stance foot settles
  3-5 deg from the reference's pose and the leg carries it to the pelvis
  (``multibody.motion.forward_pass`` limits, ``benchmarks/bench_forward_pass.py``).
* :func:`consistent_motion` runs :class:`multibody.motion.ConsistentMotion` on the fitted
  walk and gives the report's ``residual_force_rms_after_n`` and ``marker_rms_after_m``
  (HDM trial, scaled model: 5.07 -> 0.05 N over the strides, markers 6.8 mm; stopped by the
  stall rule after 31 IPOPT iterations, 112 s of CPU time; with flat feet 3.57 -> 0.07 N,
  6.80 mm, 24 iterations, 83 s).
* Noise protocol at 4 mm on the HDM trial (scaled model, 20 draws): 0.96 +- 0.02 deg, torques
  4.9 +- 0.2 N m. The error is spread over the joints the markers see least (hands, toes,
  head and neck, upper-arm twist: the ten worst coordinates carry 57 % of its mean square),
  white fit noise through the 6 Hz filter; a 5 Hz cut-off gives 0.89 deg and 3.8 N m but
  raises the per-frame analysis's pelvis residual from 5.1 to 7.1 N, so 6 Hz is kept.
* :func:`noise_protocol` is the paper's noise study (Fig. 3): markers synthesized from the
  analysed motion with Gaussian noise of ``sigma`` (9 levels, 0.1 to 64 mm), ``repetitions``
  draws each, every draw refitted, its inverse dynamics solved and its forward pass run
  (all draws of a level in one compiled batch); joint-angle errors of the forward pass
  against the noise-free forward pass and joint-torque errors of the driving torques against
  the noise-free ones, mean and standard error over the draws.
"""
from __future__ import annotations

import time

import numpy as np

from multibody.motion import ConsistentMotion
from multibody.motion.contact_allocation import WholeBodyGains
from multibody.motion.foot_calibration import flat_stance_offsets
from multibody.motion.forward_pass import RUN_FAILURES, ForwardPass
from multibody.motion.trajectory_lqr import LQRWeights
from systems.errors import SimulationError

NOISE_MM = (0.1, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0)


def marker_rms(fitter, Q, X) -> float:
    """RMS distance (m) between the markers of ``Q`` and the captured ``X`` (visible ones)."""
    P = np.array([fitter.marker_positions(q) for q in Q])
    d = np.linalg.norm(P - X, axis=2)
    return float(np.sqrt(np.nanmean(d ** 2)))


def residual_force_rms(res, sl=slice(None)) -> float:
    """RMS over the frames ``sl`` of the pelvis residual force (N): columns 3:6 of the
    residual wrench ``[torque; force]`` of an inverse-dynamics result."""
    return float(np.sqrt(np.mean(np.sum(res.residual[sl, 3:] ** 2, axis=1))))


RIGID_STAGES = (
    dict(contact_band=(0.002, 0.01), contact_height_scale=0.004, penetration_scale=0.002,
         slip_speed_scale=0.03, residual_force_scale=4.0, residual_torque_scale=15.0,
         support_margin=0.02, offset_scale=0.01, max_iterations=100,
         ipopt_options={"mu_strategy": "adaptive"}),
    dict(contact_band=(0.002, 0.01), contact_height_scale=0.003, penetration_scale=0.002,
         slip_speed_scale=0.02, residual_force_scale=2.0, residual_torque_scale=8.0,
         support_margin=0.02, offset_scale=0.01, max_iterations=40,
         ipopt_options={"mu_strategy": "adaptive"}))
"""The rigid-feet stages after the band solution (``--rigid-feet``): loads within 2-10 mm of
the floor, loaded points pulled onto it (``contact_height_scale``), none in it
(``penetration_scale``), touching points still (``slip_speed_scale``), the centre of pressure
20 mm inside the feet's edges (``support_margin``) and the marker offsets refined
(``offset_scale``). The first stage weighs the residual loosely (4 N, 15 N m), the second
tightens it (2 N, 8 N m): from the band solution in one step the tight stage diverges.
IPOPT's barrier parameter is adaptive in these stages (the band solution keeps the fixed
``mu = 1e-6``): the band solution is far from a rigid stage's optimum (objective 125 at the
start, about 2.4 at the end on the HDM walk), and at the fixed small barrier the iterates
crept along the bounds (step lengths of 1e-2) while the contact violation grew to 20 N, until
the line search failed after 47 iterations and IPOPT's restoration phase carried the motion to
180 mm and 7 kN -- or, from a warm start 2e-9 away, did not (the two outcomes of the HDM
walk's first stage that sessions 7 and 8 could not tell apart). With the adaptive barrier the
same stage reaches 9.6 mm and 1.1 N in its first 100 iterations without a restoration step
(before its offset round); both stages: markers 8.47 mm, residual 0.58 N (8.73 mm and 0.32 N
from the other warm start and in an example run; 9.25 mm and 0.37 N in the example's run
with one BLAS thread, where stage 1 uses all its 200 iterations; centre of pressure >= 18.5
mm inside the side edges, loads within 10 mm of the floor, 1.4-1.5 mm load-weighted). The
forward pass on these references: :data:`RIGID_CONTROLLERS`. Not solved: a loaded foot
stands on one edge across its sole (in 83-90 % of the frames where a foot carries half the
weight less than 15 % of its load is on its other half; ``force_weight=0.3`` does not change
that). A stage that still diverges is run again
through :func:`halfway_stage` (:func:`consistent_motion`)."""


def halfway_stage(previous: dict, stage: dict) -> dict:
    """A stage between two rigid-feet stages (:data:`RIGID_STAGES`; ``previous`` ``{}`` for
    the band solution, whose contact terms are off and whose scales are
    :class:`ConsistentMotion`'s defaults): the contact band's ends, the contact-height,
    penetration and slip scales the geometric means of the two stages' (a term the previous
    stage did not have at four times the new scale: a quarter of its weight), the residual
    scales the looser of the new stage's and the geometric mean, everything else the new
    stage's. :func:`consistent_motion` runs it when a stage diverges and then the stage again.

    Parameters
    ----------
    previous, stage : dict
        Keyword arguments of :class:`ConsistentMotion`.

    Returns
    -------
    dict
        The halfway stage's keyword arguments.
    """
    defaults = {"contact_band": (0.04, 0.07), "slip_speed_scale": 0.1,
                "residual_force_scale": 0.5, "residual_torque_scale": 2.0}
    out = dict(stage)
    for key in ("contact_band", "contact_height_scale", "penetration_scale",
                "slip_speed_scale", "residual_force_scale", "residual_torque_scale"):
        new = stage.get(key)
        old = previous.get(key, defaults.get(key))
        if new is None:
            continue
        if old is None:
            out[key] = 4.0 * float(new)
        elif key == "contact_band":
            out[key] = tuple(float(np.sqrt(a * b)) for a, b in zip(old, new))
        else:
            mean = float(np.sqrt(float(old) * float(new)))
            out[key] = max(mean, float(new)) if key.startswith("residual") else mean
    return out


def _markers(fitter) -> list:
    return list(zip(fitter.marker_names, fitter.marker_bodies, fitter.marker_offsets))


def _stage_summary(out, res, sl, label="") -> dict:
    return {"stage": label, "marker_rms_m": out.marker_rms,
            "residual_force_rms_n": residual_force_rms(res, sl), "status": out.status,
            "iterations": int(out.iterations), "cpu_seconds": out.cpu_seconds}


def _stage_holds(new, old, sl) -> bool:
    """Whether a rigid-feet stage kept the motion: markers within 1.5 times its warm start's
    (and 15 mm) and a pelvis residual force RMS within 2 N (or 1.5 times the warm start's).
    IPOPT can leave the tight contact terms in a far worse point (with a fixed barrier
    parameter a stage from a warm start 2e-9 away from one that held gave 184 mm and 7 kN,
    :data:`RIGID_STAGES`): :func:`consistent_motion` then tries the stage again through
    :func:`halfway_stage`, and goes back to the band solution if that fails too (the
    forward pass's rigid-feet settings need every stage)."""
    r = residual_force_rms(new.inverse_dynamics, sl)
    r0 = residual_force_rms(old.inverse_dynamics, sl)
    return bool(np.isfinite(new.marker_rms) and new.marker_rms <= max(1.5 * old.marker_rms, 0.015)
                and np.isfinite(r) and r <= max(2.0, 1.5 * r0))


def consistent_motion(model, fitter, t, X, q_fit, floor, res0, sl, knot_interval,
                      iterations, rigid_stages=()) -> tuple:
    """The dynamically consistent motion (:class:`ConsistentMotion`, warm-started from the
    per-frame fit ``q_fit`` on ``floor``; friction 0.8, contact band 4-7 cm), then each of
    ``rigid_stages`` (keyword arguments of :class:`ConsistentMotion`, e.g.
    :data:`RIGID_STAGES`; their ``max_iterations`` capped at ``iterations``) warm-started
    from the one before with the marker offsets it refined: ``(trajectory, check, report
    keys, fitter, force_points)``, ``check`` the :class:`ContactInverseDynamics` re-solved on the last
    motion, whose pelvis residual force RMS over the frames ``sl`` (the strides) is
    ``residual_force_rms_after_n`` (``res0``: the per-frame analysis's, before), ``fitter``
    the marker fitter with the last stage's offsets (``fitter`` itself without stages),
    ``force_points`` where the check's contact forces act (body frames; the contact points
    inset by ``support_margin``, else None: the true points). A stage that diverges
    (:func:`_stage_holds`) is run again from the same warm start through a stage halfway to
    it (:func:`halfway_stage`; both runs judged against that warm start; the report's
    ``stages`` list every run, labelled); if the
    halfway stage or the stage after it diverges too, all the rigid stages are dropped: the
    band solution is returned and the report says ``rigid_feet`` false and which stage
    diverged."""
    cm = ConsistentMotion(model.tree, _markers(fitter), model.foot_contact_points, floor=floor,
                          friction=0.8, knot_interval=knot_interval, contact_band=(0.04, 0.07),
                          max_iterations=iterations)
    out = first = cm.solve(t, X, q_fit)
    stages = [_stage_summary(out, out.inverse_dynamics, sl, "band")]
    offsets0, fitter0 = np.asarray(fitter.marker_offsets, float), fitter
    previous = {}

    def run(options, start, fitter_start, label, judge):
        options = dict(options)
        options["max_iterations"] = min(int(options.get("max_iterations", iterations)),
                                        int(iterations))
        cm = ConsistentMotion(model.tree, _markers(fitter_start), model.foot_contact_points,
                              floor=floor, friction=0.8, knot_interval=knot_interval,
                              **options)
        new = cm.solve(t, X, start.trajectory.q)
        stages.append(_stage_summary(new, new.inverse_dynamics, sl, label))
        holds = _stage_holds(new, judge, sl)
        fitter_new = (fitter_start.with_offsets(new.marker_offsets)
                      if new.marker_offsets is not None else fitter_start)
        if not holds:
            print(f"  rigid feet, stage {label}: diverged (markers {1e3 * new.marker_rms:.1f} "
                  f"mm, residual {stages[-1]['residual_force_rms_n']:.1f} N)")
        return holds, new, fitter_new

    dropped = None
    for k, options in enumerate(rigid_stages):
        print(f"  rigid feet, stage {k + 1} of {len(rigid_stages)}: markers "
              f"{1e3 * out.marker_rms:.2f} mm so far")
        holds, new, fitter_new = run(options, out, fitter, f"{k + 1}", out)
        if not holds:              # again, through a halfway stage (both judged against out)
            holds, mid, fitter_mid = run(halfway_stage(previous, options), out, fitter,
                                         f"{k + 1} halfway", out)
            if holds:
                holds, new, fitter_new = run(options, mid, fitter_mid, f"{k + 1} again", out)
        if not holds:
            print("  rigid feet: the rigid stages are dropped")
            dropped = k + 1
            break
        out, fitter, previous = new, fitter_new, options
    if dropped is not None:                      # back to the band solution and its offsets
        out, fitter = first, fitter0
    res = out.inverse_dynamics                   # the independent check's forces and torques
    before, after = residual_force_rms(res0, sl), residual_force_rms(res, sl)
    change = np.linalg.norm(np.asarray(fitter.marker_offsets) - offsets0, axis=1)
    keys = {"residual_force_rms_after_n": after, "marker_rms_after_m": out.marker_rms,
            "consistent_motion": {
                "residual_force_rms_after_whole_n": residual_force_rms(res),
                "residual_force_rms_before_whole_n": residual_force_rms(res0),
                "optimiser_residual_force_rms_n": float(np.sqrt(np.mean(np.sum(
                    out.residual[:, 3:] ** 2, axis=1)))),
                "residual_torque_rms_after_nm": float(np.sqrt(np.mean(np.sum(
                    res.residual[sl, :3] ** 2, axis=1)))),
                "marker_rms_warm_start_m": first.marker_rms_before,
                "mean_vertical_grf_over_weight": float(res.grf[sl, 2].mean() / res.weight),
                "status": out.status, "iterations": int(out.iterations),
                "seconds": out.seconds, "cpu_seconds": out.cpu_seconds,
                "knot_interval_s": float(knot_interval),
                "stages": stages,
                "rigid_feet": bool(rigid_stages) and dropped is None,
                "rigid_stage_diverged": dropped,
                "rigid_stages": [{k: (list(v) if isinstance(v, tuple) else v)
                                  for k, v in s.items()} for s in rigid_stages],
                "marker_offset_change_rms_m": float(np.sqrt(np.mean(change ** 2))),
                "marker_offset_change_max_m": float(change.max()),
                "stall_rule": {"tolerance": cm.stall_tolerance,
                               "iterations": cm.stall_iterations,
                               "violation_n": cm.stall_violation},
                "objective_history": [float(f) for f in out.objective_history],
                "violation_history_n": [float(v) for v in out.violation_history]}}
    f = out.objective_history
    print("  objective every 5 iterations: " + ", ".join(f"{f[k]:.4g}" for k in
                                                          range(0, len(f), 5)))
    print(f"consistent motion ({out.status}, {out.iterations} iterations, {out.seconds:.0f} s "
          f"wall, {out.cpu_seconds:.0f} s CPU in the last stage):"
          f" pelvis residual force RMS over the strides {before:.2f} -> {after:.2f} N, marker "
          f"RMS {1e3 * out.marker_rms:.2f} mm")
    points = None if out.force_points is None else np.asarray(out.force_points, float)
    return out.trajectory, res, keys, fitter, points


def flat_feet_fit(model, fitter, fit, t, X, floor_of) -> tuple:
    """The feet's marker offsets recalibrated where the feet rest flat
    (:func:`~multibody.motion.foot_calibration.flat_stance_offsets` on the fit ``fit``,
    ``floor_of(q)`` the floor fitted to a motion) and the motion fitted again: ``(fitter,
    fit, report dict)``."""
    offsets, rest = flat_stance_offsets(
        model.tree, list(zip(fitter.marker_names, fitter.marker_bodies, fitter.marker_offsets)),
        model.foot_contact_points, t, fit.q, X, floor_of(fit.q),
        model.reference_configuration())
    rms0 = fit.rms
    fitter = fitter.with_offsets(offsets)
    fit = fitter.fit(X)
    print(f"flat feet: foot marker offsets from {rest} resting frames; marker RMS "
          f"{1e3 * rms0:.2f} -> {1e3 * fit.rms:.2f} mm")
    return fitter, fit, {"marker_rms_before_m": rms0, "marker_rms_after_m": fit.rms,
                         "resting_frames": rest}


ANKLE_GAIN = 0.40
"""The ankles' share of the PD gains in the forward pass on rigid feet (both axes): softer
ankles let the stance foot settle flat instead of levering the leg. Measured with
:data:`RIGID_LQR` on the example's reference and on one from another warm start
(``benchmarks/bench_forward_pass.py``, 8 runs with the start nudged): 0.40 gives medians of
18 and 16 mm; 0.35 and 0.45 each give 13 mm on one reference and 21-29 mm on the other."""

RIGID_LQR = LQRWeights(hold_body=True, max_torque=150.0)
"""The trajectory LQR of the forward pass on rigid feet: every point of a foot held in its
model once one is loaded (a foot is not pivoted about the one edge the reference loads) and
each correction clamped at 150 N m (:class:`LQRWeights`; the default weights gave 18-22 mm on
the same references)."""

RIGID_CONTROLLERS = (
    ("trajectory LQR", {}),
    ("trajectory LQR + whole-body balance",
     {"whole_body": WholeBodyGains(kp_translation=25.0, kd_translation=10.0,
                                   kp_rotation=100.0, kd_rotation=20.0)}),
)
"""The forward pass's controllers on rigid feet, tried in turn on the example's reference
(:func:`choose_forward_pass`); each adds to :func:`rigid_forward_options`. The second
replaces the replayed torques by the whole-body balance's (:mod:`multibody.motion.
contact_allocation`: floating-base inverse dynamics at the simulated state with the pelvis's
acceleration fed back at 25/10 and 100/20 and the ground forces allocated in friction cones
10 mm inside the loaded feet), the LQR's correction on top. Neither walks every reference
(``benchmarks/bench_forward_pass.py``; markers RMS of the run from the reference's start,
then the median over 8 runs with the start nudged): on two references of
:data:`RIGID_STAGES` (an example run with two BLAS threads, and one from another warm start)
the LQR alone gives 17.1 and 16.4 mm (medians 18 and 16 mm) where the whole-body balance
gives 124 and 549 mm; on a third (the example's run with one BLAS thread, its default: stage
1 uses all its 200 iterations; the band solution equal to the other run's to 1e-14, the
difference grown in IPOPT) the LQR alone leaves the capture after 1.8-2.2 s (177-254 mm
with the ankles at 0.35-0.45, 75 mm after iterative learning of its feedforward,
:mod:`multibody.motion.iterative_learning`) where the whole-body balance gives 17.5 mm
(median 20 mm, one of the 8 runs blowing up after the body fell; 18.6 mm over the
example's 4 starts)."""

NUDGES = 3
"""Runs with the pelvis's initial velocity nudged that judge each controller besides the
unperturbed one (:func:`choose_forward_pass`, :func:`nudged_starts`)."""

def nudged_starts(v, n: int, seed: int = 0, speed: float = 0.02) -> list:
    """``1 + n`` velocity references: ``v`` (K, nv) itself, then ``n`` copies with the
    pelvis's initial linear velocity (``v[0, 3:6]``, the free joint's) nudged by Gaussian
    noise of ``speed`` (m/s) per axis, drawn with ``seed``."""
    rng = np.random.default_rng(seed)
    starts = [v]
    for _ in range(n):
        w = np.array(v, float)
        w[0, 3:6] += rng.normal(scale=speed, size=3)
        starts.append(w)
    return starts


def choose_forward_pass(build, traj, res, fitter, X, candidates=RIGID_CONTROLLERS,
                        nudges: int = NUDGES) -> tuple:
    """The forward pass whose controller follows the capture best on this reference.

    Each candidate ``(name, options)`` is built (``build(**options)`` -> :class:`ForwardPass`)
    and run from the reference's start and from ``nudges`` starts with the pelvis's initial
    velocity nudged (:func:`nudged_starts`); its score is the median marker RMS of those
    runs, a run that blows up (``RUN_FAILURES`` of :mod:`multibody.motion.forward_pass`)
    counting as infinitely far, so a
    controller that walks this reference only from its exact start is not chosen; one that
    blows up from the exact start is never chosen. Returns ``(fp, name, table)``: the
    chosen forward pass, its name and per candidate ``{name, marker_rms_m,
    marker_rms_m_median, marker_rms_m_max, failed_runs, joint_angle_rms_deg, seconds}``
    (the unperturbed run's marker and joint RMS; None for what is infinite or was not
    run; the seconds of building, compiling and running).

    Raises
    ------
    SimulationError
        Every candidate blew up from the reference's start.
    """
    starts = nudged_starts(traj.v, nudges)
    best, table, error = None, [], None
    for name, options in candidates:
        t0 = time.perf_counter()
        fp = build(**options)
        try:                            # the start's own error kept for the message below
            outs = [fp.run(traj.q, starts[0], res.tau)]
        except RUN_FAILURES as exc:
            outs, error = [None], error or exc
        outs += fp.run_batch([(traj.q, v, res.tau) for v in starts[1:]], skip_failed=True)
        mk = [float("inf") if o is None else marker_rms(fitter, o.q, X) for o in outs]
        joints = None if outs[0] is None else outs[0].joint_angle_rms_deg
        failed = sum(o is None for o in outs)
        score = float(np.median(mk)) if np.isfinite(mk[0]) else float("inf")
        finite = [float(x) if np.isfinite(x) else None for x in (mk[0], score, np.max(mk))]
        row = {"name": name, "marker_rms_m": finite[0], "marker_rms_m_median": finite[1],
               "marker_rms_m_max": finite[2], "failed_runs": failed,
               "joint_angle_rms_deg": joints, "seconds": time.perf_counter() - t0}
        table.append(row)
        print(f"  forward-pass controller '{name}': markers {1e3 * mk[0]:.1f} mm RMS, "
              f"median {1e3 * np.median(mk):.1f} mm over {len(mk)} starts (worst "
              f"{1e3 * np.max(mk):.1f}, {failed} blew up), {row['seconds']:.0f} s", flush=True)
        if best is None or score < best[2]:
            best = (fp, name, score)
    if not np.isfinite(best[2]):
        raise SimulationError("choose_forward_pass: every controller blew up from the "
                              "reference's start: " + ", ".join(n for n, _ in candidates)
                              + f" (first: {error})") from error
    return best[0], best[1], table


def rigid_forward_options(tree, traj, res) -> dict:
    """:class:`ForwardPass` keyword arguments for a reference on rigid feet
    (:data:`RIGID_STAGES`): the contact points at their lowest loaded height, the swing feet
    lifted 15 mm where the reference skims the floor faster than 0.2 m/s, the ankles at
    :data:`ANKLE_GAIN` of their PD gains, and the finite-horizon LQR (:data:`RIGID_LQR`)
    around the reference ``(q, v, tau)`` in place of the pelvis feedback (pass
    ``balance_gain=0``); the run's library compiled at ``-O1`` (about a minute once, then
    cached; the runs 2.5x faster than at the default ``-O0`` of such long code)."""
    ankles = {j.name: ANKLE_GAIN for j in tree.joints
              if j.name in ("r-foot_joint", "l-foot_joint")}
    return {"placement_quantile": 0.0, "swing_clearance": 0.015,
            "swing_clearance_speed": 0.2, "joint_gain_scale": ankles, "lqr": RIGID_LQR,
            "lqr_reference": (traj.q, traj.v, res.tau), "compile_flags": ("-O1",)}


def build_forward_pass(new_model, traj, floor, **options) -> ForwardPass:
    """A :class:`ForwardPass` on a fresh model (``new_model()``: the forward pass owns its
    tree) at the frames of ``traj``."""
    m = new_model()
    return ForwardPass(m.tree, traj.t, m.foot_contact_points, floor,
                       reference_q=m.reference_configuration(), **options)


def forward_pass(fp: ForwardPass, traj, res, fitter, X) -> tuple:
    """Run the forward pass of the analysed walk; ``(result, report dict)``."""
    t0 = time.perf_counter()
    out = fp.run(traj.q, traj.v, res.tau)
    total = time.perf_counter() - t0
    span = float(traj.t[-1] - traj.t[0])
    root = fp.tree.joints[0]
    drift = out.q[:, root.q_start + 4:root.q_start + 7] - traj.q[:, root.q_start + 4:root.q_start + 7]
    rep = {"marker_rms_m": marker_rms(fitter, out.q, X),
           "joint_angle_rms_deg": out.joint_angle_rms_deg,
           "realtime_factor": out.realtime_factor,
           "realtime_factor_wall": out.realtime_factor_wall,
           "realtime_factor_with_compilation": span / total,
           "pelvis_position_rms_m": float(np.sqrt(np.mean(np.sum(drift ** 2, axis=1)))),
           "pelvis_actuated": False,
           "actuated_velocity_indices": [int(i) for i in fp.actuated_velocity_indices],
           "time_step_s": fp.time_step, "step_method": fp.plant.step_method,
           "fallback_steps": len(out.fallback_steps), "simulated_s": span,
           "wall_s": out.wall_seconds}
    print(f"forward pass ({fp.plant.step_method}, h = {1e3 * fp.time_step:.2f} ms, pelvis not "
          f"actuated): joint angles {rep['joint_angle_rms_deg']:.2f} deg RMS, markers "
          f"{1e3 * rep['marker_rms_m']:.1f} mm RMS, pelvis {1e3 * rep['pelvis_position_rms_m']:.1f}"
          f" mm RMS from the capture; {rep['realtime_factor']:.1f}x real time in CPU time, "
          f"{rep['realtime_factor_wall']:.1f}x in wall time "
          f"({rep['realtime_factor_with_compilation']:.2f}x with compilation; "
          f"{rep['fallback_steps']} steps fell back to the pivoting step)")
    return out, rep


def noise_protocol(fitter, traj, res, floor, fp: ForwardPass, analyse, repetitions: int,
                   levels=NOISE_MM, seed: int = 0) -> list:
    """The paper's noise study (module docstring). ``analyse(Q) -> (traj, res)`` smooths a
    fitted ``Q`` and solves its inverse dynamics on ``floor``; ``fp`` a forward pass at the
    frames of ``traj``. Rows: ``sigma_mm``, ``angle_err_deg_mean``, ``angle_err_deg_se``,
    ``torque_err_nm_mean``, ``torque_err_nm_se``, ``repetitions``.

    Every level perturbs the markers with the same ``repetitions`` unit Gaussian draws
    (seeded by ``seed``) scaled to its sigma (common random numbers): the levels are paired,
    so the curve over them is not jittered by independent draws, and a level's row is the
    same whichever other levels run (a level run alone gives the row it has in the study).
    The mean over 20 draws is itself a sample: at 4 mm on the HDM trial, four independent
    sets of 20 gave 0.962-1.007 deg (0.979 +- 0.009 deg over the 80)."""
    tree = fitter.tree
    X = np.array([fitter.marker_positions(q) for q in traj.q])
    fit0 = fitter.fit(X, q0=traj.q[0], progress=False)
    tr0, re0 = analyse(fit0.q)
    base = fp.run(tr0.q, tr0.v, re0.tau)
    K = len(traj.t)
    inner = slice(6, max(K - 6, 7))
    vi = fp.actuated_velocity_indices
    rng = np.random.default_rng(seed)
    unit = [rng.standard_normal(X.shape) for _ in range(repetitions)]
    rows = []
    t_start = time.perf_counter()
    for li, mm in enumerate(levels):
        refs, terr = [], []
        for z in unit:
            Xn = X + (mm * 1e-3) * z
            fit = fitter.fit(Xn, q0=traj.q[0], progress=False)
            tr, re = analyse(fit.q)
            refs.append((tr.q, tr.v, re.tau))
            d = (re.tau[:, vi] - re0.tau[:, vi])[inner]
            terr.append(float(np.sqrt(np.mean(d ** 2))))
        outs = fp.run_batch(refs)
        aerr = []
        for o in outs:
            d = np.array([tree.difference(a, b) for a, b in zip(base.q[inner], o.q[inner])])
            aerr.append(float(np.degrees(np.sqrt(np.mean(d[:, 6:] ** 2)))))
        n = len(aerr)
        se = (lambda a: float(np.std(a, ddof=1) / np.sqrt(n)) if n > 1 else 0.0)
        rows.append({"sigma_mm": mm, "angle_err_deg_mean": float(np.mean(aerr)),
                     "angle_err_deg_se": se(aerr), "torque_err_nm_mean": float(np.mean(terr)),
                     "torque_err_nm_se": se(terr), "repetitions": n})
        r = rows[-1]
        print(f"  [{li + 1}/{len(levels)}, {time.perf_counter() - t_start:5.0f} s] sigma "
              f"{mm:5.1f} mm: joint angles {r['angle_err_deg_mean']:.3f} +- "
              f"{r['angle_err_deg_se']:.3f} deg, torques {r['torque_err_nm_mean']:.2f} +- "
              f"{r['torque_err_nm_se']:.2f} N m ({n} draws)", flush=True)
    return rows


def plot_noise_protocol(plt, path, rows, paper=(5.0, 1.0)):
    """The paper's Fig. 3: joint-angle and torque errors against the marker noise (log-log,
    mean and standard error)."""
    fig, ax = plt.subplots(1, 2, figsize=(10, 4))
    mm = [r["sigma_mm"] for r in rows]
    ax[0].errorbar(mm, [r["angle_err_deg_mean"] for r in rows],
                   yerr=[r["angle_err_deg_se"] for r in rows], fmt="o-", capsize=3)
    ax[1].errorbar(mm, [r["torque_err_nm_mean"] for r in rows],
                   yerr=[r["torque_err_nm_se"] for r in rows], fmt="o-", capsize=3)
    for a, lab in zip(ax, ("joint angle error (deg)", "joint torque error (N m)")):
        a.set_xscale("log")
        a.set_yscale("log")
        a.set_xlabel("marker noise sigma (mm)")
        a.set_ylabel(lab)
        a.axvline(paper[0], color="gray", ls=":", lw=0.8)
    ax[0].axhline(paper[1], color="gray", ls="--", lw=0.8, label="paper: ~1 deg at 5 mm")
    ax[1].axhspan(5, 10, color="gray", alpha=0.2, label="paper: 5-10 N m at 5 mm")
    ax[0].legend()
    ax[1].legend()
    ax[0].set_title(f"forward pass, {rows[0]['repetitions']} draws per level")
    fig.tight_layout()
    from _plotting import save_figure
    return save_figure(fig, path)
