"""Iterative learning of the forward pass's feedforward torques (:func:`learn_feedforward`).

A :class:`~multibody.motion.forward_pass.ForwardPass` is deterministic: it simulates the same
walk from the same start every time, so the part of its tracking error that comes from the
model (a rigid floor under a reference optimised with a smoothed contact, the model's
approximations) repeats from run to run. Iterative learning control (ILC) removes such a
repeating error by correcting the feedforward between runs. Here the learning signal is what
the feedback had to add in a run, its *feedback effort* (:func:`feedback_effort`): the joint
PD's torque on the simulated states, the LQR's correction when the forward pass has one, or
the part of that correction that answers the root's error (``parts``). With ``tau_0`` the
given (inverse-dynamics) torques and ``d_0 = 0``,

.. math::

    d_{k+1} = Q\\big(d_k + \\gamma\\, u_{fb,k}\\big), \\qquad \\tau_{k+1} = \\tau_0 + d_{k+1},

``u_{fb,k}(t)`` the feedback effort of run ``k`` at frame ``t`` (the PD taken at the end of
the step the frame's table entry drives, ``t + h``; the LQR at ``t``), ``gamma`` the learning
rate (``rate``) and ``Q`` a zero-phase low-pass filter (second-order Butterworth, forward
and backward, at ``cutoff_hz``), applied to the learned correction only, not to ``tau_0``.
The feedback itself is the learning operator (feedback-error learning, Kawato et al. 1987):
with the sensitivity ``S = (1 + P C)^{-1}`` of the closed loop and its complement ``T = 1 -
S``, the error of the next run is ``e_{k+1} = Q (1 - gamma T) e_k`` for a linear plant, so
the error shrinks at the frequencies where the feedback acts (``T`` near 1), and ``Q`` stops
the learning where it does not and where the runs are not repeatable (Bristow et al. 2006,
the Q-filter). Every run is scored (default: the RMS distance of the bodies' origins from the
reference's, :func:`body_position_error`; the benchmark passes the marker error) and the best
is kept. A walk on rigid feet is far from linear: a small change of the feedforward can move
the outcome by centimetres either way. So by default (``backtrack``) each iteration starts
from the best run so far (``k`` above is the best run), a run that does not improve on it
halves ``gamma``, and the learning stops after ``patience`` such runs in a row; without it,
plain ILC from the last run, stopped by a run that fails or by ``patience``.

The feedforward table is a numeric parameter of the controller, set in the run's context,
so every iteration reruns the compiled simulation without converting or compiling it again
(an iteration of the 48-velocity walk: 0.2 s of CPU for the run, 0.3-0.5 s in all).

What to learn from. The joint PD's effort is the signal for a plant whose joints alone
carry the error (the tests: an arm heavier than its inverse dynamics, a leaning body on
one foot). On the HDM walk it does not shrink from run to run (23 N m RMS): with both
feet on the floor the legs close a loop, and the PD's effort is partly an internal force
between them that no feedforward removes; learned, it makes the walk worse. The LQR's whole
correction improves the reference ``G`` but not ``G2`` (``benchmarks/bench_forward_pass.py``);
the part that answers the pelvis's drift (``parts=("lqr_root",)``: the correction with the
joints at the reference) improves both unperturbed runs (``G`` 18.1 to 14.5 mm markers,
``G2`` 73.7 to 17.3 mm), because the drift is the error that repeats. What one run learns
does not carry over to a run started 2 cm/s faster or slower: ``G2``'s perturbed runs
fall (median 188 mm). Learned on 16 runs at once (``starts``, ``aggregate=np.mean``) it
does better than no learning where it was already robust (``G``: perturbed median 17 mm,
14-20, against 20 mm, 15-23) and helps ``G2`` (36 mm against 67 mm) without keeping every
run up. The learned torques depart from the inverse dynamics (25 N m RMS) by 2.6-13 N m
RMS, most on the thighs and the ankles.

To a user of OpenSim: this is not Computed Muscle Control (Thelen and Anderson 2006), which
computes the controls at each instant from the tracking error (feedback to desired
accelerations, then a static optimisation). The learning keeps the feedback as it is and
changes the feedforward between whole runs; the learned torques depart from the inverse
dynamics by what the rigid simulation needs to follow the reference
(:attr:`LearningResult.torque_change_rms`, N m RMS per joint), a measure of how far the
reference is from what this model can do on a rigid floor.

References
----------
S. Arimoto, S. Kawamura, F. Miyazaki, "Bettering operation of robots by learning", J. Robotic
Systems 1(2), 1984.
D. A. Bristow, M. Tharayil, A. G. Alleyne, "A survey of iterative learning control", IEEE
Control Systems Magazine 26(3), 2006 (the Q-filter and its robustness).
M. Kawato, K. Furukawa, R. Suzuki, "A hierarchical neural-network model for control and
learning of voluntary movement", Biological Cybernetics 57, 1987 (feedback-error learning).
D. G. Thelen, F. C. Anderson, "Using computed muscle control to generate forward dynamic
simulations of human walking from experimental data", J. Biomechanics 39, 2006.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Optional

import casadi as ca
import numpy as np

from dynablocks.errors import DynablocksError

from .errors import MotionError
from .smoothing import zero_phase_lowpass

__all__ = ["LearningResult", "learn_feedforward", "feedback_effort", "body_position_error"]


@dataclass
class LearningResult:
    """The outcome of :func:`learn_feedforward`.

    Attributes
    ----------
    tau : (K, nv) ndarray
        The best iteration's torques (tree order; the root's entries as given): the
        references' ``tau`` plus ``correction`` on the actuated velocities.
    correction : (K, n) ndarray
        The learned addition on ``fp.actuated_velocity_indices`` (N m).
    result : ForwardPassResult
        The best iteration's run.
    best_iteration : int
        Its number (0: the given torques were best).
    scores : list of float
        The score of every iteration, the given torques first (over ``starts``: their
        aggregate; ``inf``: a failed run).
    joint_angle_rms_deg : list of float
        The joints' RMS error of every iteration's (first) run (deg).
    feedback_rms : list of float
        RMS over frames and joints of the feedback effort learned from, once per run
        learned from (the given torques' run, then each new best; N m).
    torque_change_rms : dict
        ``{joint: RMS of correction}`` over the frames and the joint's axes (N m).
    cpu_seconds : float
        CPU time of the whole learning (runs, feedback evaluation, filtering, scores).
    failure : str, optional
        The last run's error, if a run failed (``backtrack``: the learning went on from the
        best run; otherwise it stopped there).
    """

    tau: np.ndarray
    correction: np.ndarray
    result: object
    best_iteration: int
    scores: list
    joint_angle_rms_deg: list
    feedback_rms: list
    torque_change_rms: dict
    cpu_seconds: float
    failure: Optional[str] = field(default=None)


def feedback_effort(fp, q, v, result, parts=("pd", "lqr")) -> np.ndarray:
    """What the feedback of ``fp`` added to the feedforward in the run ``result`` (K, n) (N m,
    ``fp.actuated_velocity_indices`` order), per frame of ``fp.times``: the joint PD

    .. math:: K_p\\,(q_d(t + h) - q(t + h)) + K_d\\,(\\dot q_d(t + h) - v(t + h))

    on the (swing-lifted) reference ``q`` (K, nq), ``v`` (K, nv) and the simulated states
    (``result.q``, ``result.v`` interpolated linearly between frames to ``t + h``: the end of
    the step whose command the frame's table entry sets, where the implicit PD acts), plus
    the LQR correction ``fp.controller.feedback(t, q(t), v(t))`` when there is one; ``parts``
    the terms taken: ``"pd"``, ``"lqr"``, or ``"lqr_root"`` (the LQR's correction of the
    root's error alone: its feedback on the simulated root with the joints at the lifted
    reference). The pelvis balance feedback (``balance_gain``) and the other options are
    not included; ``"lqr"`` adds nothing without an LQR (the default parts then learn from
    the PD alone).

    Raises
    ------
    MotionError
        An unknown part; ``"lqr_root"`` without an LQR or a free root, or only ``"lqr"``
        without an LQR (nothing to learn from).
    """
    _check_parts(fp, parts, "feedback_effort")
    fb = fp.controller.feedback
    times = np.asarray(fp.times, float)
    qi, vi = fp.q_indices, fp.actuated_velocity_indices
    ql, vl = fp.lifted_reference(q, v)
    Qs, Vs = np.asarray(result.q, float), np.asarray(result.v, float)
    ts = np.minimum(times + fp.time_step, times[-1])
    lerp = (lambda tab: np.array([np.interp(ts, times, c) for c in tab.T]).T)
    out = np.zeros((len(times), len(vi)))
    if "pd" in parts:
        out += (fp.kp * (lerp(ql[:, qi]) - lerp(Qs[:, qi]))
                + fp.kd * (lerp(vl[:, vi]) - lerp(Vs[:, vi])))
    if fb is not None and "lqr" in parts:
        many = fb.map(len(times))
        out = out + np.asarray(many(times[None], Qs.T, Vs.T), float).T
    if "lqr_root" in parts:
        Qr, Vr = ql.copy(), vl.copy()
        Qr[:, :7], Vr[:, :6] = Qs[:, :7], Vs[:, :6]
        many = fb.map(len(times))
        out = out + np.asarray(many(times[None], Qr.T, Vr.T), float).T
    return out


def _check_parts(fp, parts, who: str) -> None:
    """Raise a :class:`MotionError` for parts unknown or that ``fp`` cannot give."""
    unknown = set(parts) - {"pd", "lqr", "lqr_root"}
    if unknown:
        raise MotionError(f"{who}: parts must be among 'pd', 'lqr' and 'lqr_root', "
                          f"got {sorted(unknown)}")
    if fp.controller.feedback is None and ("lqr_root" in parts or not set(parts) - {"lqr"}):
        raise MotionError(f"{who}: parts {tuple(parts)} need the forward pass's LQR "
                          "(ForwardPass(lqr=...)); it has none")
    if "lqr_root" in parts and not fp.floating:
        raise MotionError(f"{who}: part 'lqr_root' needs a free root; tree '{fp.tree.name}' "
                          "has a fixed one")


def body_position_error(tree, q_ref, q) -> float:
    """RMS over frames and bodies of the distance (m) between every body's origin in the
    configurations ``q`` (K, nq) and in ``q_ref`` (K, nq): a marker error without markers."""
    many = _origins_function(tree, len(q))
    return _rms_distance(np.asarray(many(np.asarray(q, float).T), float)
                         - np.asarray(many(np.asarray(q_ref, float).T), float))


def _origins_function(tree, frames: int) -> ca.Function:
    """``(nq, frames) -> (3 bodies, frames)``: the world positions of the bodies' origins."""
    qs = ca.SX.sym("q", tree.nq)
    f = ca.Function("origins", [qs], [ca.vertcat(*[tree.body_pose(b.name, qs)[:3, 3]
                                                   for b in tree.bodies[1:]])])
    return f.map(frames)


def _rms_distance(d) -> float:
    """RMS over bodies and frames of the length of ``d`` (3 bodies, frames)."""
    d = np.asarray(d, float).reshape(-1, 3, d.shape[-1])
    return float(np.sqrt(np.mean(np.sum(d ** 2, axis=1))))


def learn_feedforward(fp, q, v, tau, *, iterations: int = 10, rate: float = 0.5,
                      cutoff_hz: Optional[float] = 6.0, patience: int = 2,
                      score: Optional[Callable] = None, parts=("pd", "lqr"),
                      backtrack: bool = True, starts=None,
                      aggregate: Callable = np.median,
                      failed_score: float = float("inf")) -> LearningResult:
    """Learn the feedforward torques of the forward pass ``fp`` on the references ``(q, v,
    tau)`` by iterative learning control (module docstring).

    Parameters
    ----------
    fp : ForwardPass
        The forward pass (built once; its compiled simulation is reused by every run).
    q, v, tau : (K, nq), (K, nv), (K, nv) array_like
        The references of :meth:`~multibody.motion.forward_pass.ForwardPass.run`; ``tau``
        the torques to start from (e.g. the inverse dynamics').
    iterations : int
        Learning runs at most (after the run on the given torques).
    rate : float
        ``gamma`` (0 < gamma <= 2; 1: the whole feedback effort moved into the feedforward
        per iteration).
    cutoff_hz : float, optional
        The Q-filter's cutoff (Hz; :func:`~multibody.motion.smoothing.zero_phase_lowpass`);
        None: no filter.
    patience : int
        Stop after this many iterations in a row that do not improve on the best score.
    score : callable, optional
        ``score(result) -> float`` of a :class:`~multibody.motion.forward_pass.
        ForwardPassResult`, lower is better; default :func:`body_position_error` against
        ``q``.
    parts : sequence of str
        The feedback terms learned from (:func:`feedback_effort`).
    backtrack : bool
        Each iteration starts from the best run so far, and a run that does not improve on
        it halves the rate (module docstring); false: plain ILC from the last run, stopped
        by a failed run or after ``patience`` runs that do not improve.
    starts : (R, nv) array_like, optional
        Learn on R runs per iteration (one compiled batch,
        :meth:`~multibody.motion.forward_pass.ForwardPass.run_batch`) from these initial
        velocities instead of the one run from ``v[0]``: the iteration's score is
        ``aggregate`` of the runs' scores and its feedback effort the median over the runs,
        per frame and joint (a feedforward learned on one run can fit that run alone; a
        fallen run does not steer the median; a run that fails scores ``failed_score``).
        :attr:`LearningResult.result` is the best iteration's first run.
    aggregate : callable
        ``aggregate(scores) -> float`` over the runs of an iteration (default the median;
        ``np.mean`` counts a fall in full).
    failed_score : float
        The score of a run that fails (blows up) among ``starts`` (default ``inf``; with
        ``np.mean`` a finite one, e.g. a fall's, keeps one failure from hiding the rest).

    Returns
    -------
    LearningResult

    Raises
    ------
    MotionError
        ``iterations`` < 0, ``patience`` < 1, ``rate`` outside (0, 2], references of the
        wrong shape (named by the forward pass), a bad ``cutoff_hz``, ``starts`` not
        (R, nv), ``parts`` that the forward pass cannot give (:func:`feedback_effort`).
    """
    if int(iterations) < 0 or int(patience) < 1:
        raise MotionError(f"learn_feedforward: iterations must be >= 0 and patience >= 1, got "
                          f"{iterations!r} and {patience!r}")
    if not (np.isfinite(rate) and 0.0 < rate <= 2.0):
        raise MotionError(f"learn_feedforward: rate must lie in (0, 2], got {rate!r}")
    q, v, tau = (np.asarray(a, float) for a in (q, v, tau))
    fp.feedforward(q, v, tau)                           # names references of a wrong shape
    zero_phase_lowpass(fp.times, np.zeros((len(fp.times), 1)), cutoff_hz,  # a bad cutoff
                       "learn_feedforward")
    _check_parts(fp, parts, "learn_feedforward")
    if score is None:
        origins = _origins_function(fp.tree, len(q))
        ref = np.asarray(origins(q.T), float)
        score = (lambda res: _rms_distance(np.asarray(origins(res.q.T), float) - ref))
    if starts is not None:
        starts = np.asarray(starts, float)
        if starts.ndim != 2 or len(starts) == 0 or starts.shape[1] != fp.tree.nv:
            raise MotionError(f"learn_feedforward: starts must be (R, {fp.tree.nv}) initial "
                              f"velocities, got shape {starts.shape}")
    vi = fp.actuated_velocity_indices
    c0 = time.thread_time()

    def run(correction) -> list:
        t = tau.copy()
        t[:, vi] += correction
        if starts is None:
            return [fp.run(q, v, t)]
        refs = []
        for v0 in starts:
            vr = v.copy()
            vr[0] = v0
            refs.append((q, vr, t))
        # the first run's blow-up raises (the iteration fails), the others' are None
        return [fp.run(*refs[0])] + fp.run_batch(refs[1:], skip_failed=True)

    def judge(outs) -> float:
        s = float(aggregate([float(failed_score) if o is None else score(o) for o in outs]))
        return s if np.isfinite(s) else float("inf")

    d = np.zeros((len(fp.times), len(vi)))
    outs = run(d)
    best = (judge(outs), 0, d, outs)
    scores, joints, fb_rms, failure = [best[0]], [outs[0].joint_angle_rms_deg], [], None
    worse, gamma, fb = 0, float(rate), None
    for k in range(1, int(iterations) + 1):
        if backtrack:                                   # from the best run so far
            _, _, d, outs = best
        if fb is None or not backtrack or worse == 0:
            fb = np.median([feedback_effort(fp, q, v, o, parts) for o in outs
                            if o is not None], axis=0)
            fb_rms.append(float(np.sqrt(np.mean(fb ** 2))))
        d = zero_phase_lowpass(fp.times, d + gamma * fb, cutoff_hz)
        try:
            outs = run(d)
            s = judge(outs)
        except DynablocksError as err:                  # a run that blew up
            failure, s = f"iteration {k}: {type(err).__name__}: {err}", float("inf")
            if not backtrack:
                scores.append(s)
                break
        scores.append(s)
        joints.append(outs[0].joint_angle_rms_deg if np.isfinite(s) else float("nan"))
        if s < best[0]:
            best, worse = (s, k, d, outs), 0
        else:
            worse += 1
            gamma *= 0.5 if backtrack else 1.0
            if worse >= int(patience):
                break
    _, k_best, d_best, outs_best = best
    out_best = outs_best[0]
    tau_best = tau.copy()
    tau_best[:, vi] += d_best
    change = {}
    for j in fp.joint_names:
        joint = fp.tree.get_joint(j)
        pos = np.searchsorted(vi, np.arange(joint.v_start, joint.v_start + joint.nv))
        change[j] = float(np.sqrt(np.mean(d_best[:, pos] ** 2)))
    return LearningResult(tau_best, d_best, out_best, k_best, scores, joints, fb_rms, change,
                          time.thread_time() - c0, failure)
