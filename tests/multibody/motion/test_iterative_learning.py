"""Iterative learning of the forward pass's feedforward (multibody.motion.iterative_learning):
an arm whose forearm is heavier than the inverse dynamics assumed learns the missing torques
(against the heavier arm's own inverse dynamics), an exact feedforward learns nothing, and a
leaning one-legged body on the floor learns the ankle torque that holds it (against the
statics), rerunning its compiled simulation without converting it again."""
from types import SimpleNamespace

import numpy as np
import pytest

from multibody.motion import Floor, MotionError
from multibody.motion.forward_pass import ForwardPass
from multibody.motion.iterative_learning import (body_position_error, feedback_effort,
                                                 learn_feedforward)
from multibody.motion.smoothing import zero_phase_lowpass
from multibody.motion.trajectory_lqr import LQRWeights
from multibody.tree import RigidBodyTree
from multibody.tree.joints import Revolute
from systems.analysis.compiled import reuse_statistics
from test_forward_pass_balance import FOOT, _monopod, _standing

TIMES = np.arange(241) / 120.0                        # 2 s at the capture rate


def _arm(forearm=1.0):
    """A planar two-link arm hanging from the world; ``forearm`` its second link's mass."""
    t = RigidBodyTree("arm")
    t.add_body("upper", 2.0, com=(0, 0, -0.25), inertia=np.diag([0.04, 0.04, 0.002]))
    t.add_joint(Revolute("shoulder", "world", "upper", axis=(0, 1, 0)))
    X = np.eye(4)
    X[2, 3] = -0.5
    t.add_body("fore", forearm, com=(0, 0, -0.2),
               inertia=forearm * np.diag([0.015, 0.015, 0.001]))
    t.add_joint(Revolute("elbow", "upper", "fore", axis=(0, 1, 0), origin=X))
    return t


def _swing(tree):
    """A swing of both joints and its inverse dynamics on ``tree``."""
    w, a = np.array([2.0, 3.0]), np.array([0.8, 1.0])
    q = a * np.sin(np.outer(TIMES, w))
    v = a * w * np.cos(np.outer(TIMES, w))
    vd = -a * w ** 2 * np.sin(np.outer(TIMES, w))
    tau = np.array([np.asarray(tree.inverse_dynamics(*x), float).ravel()
                    for x in zip(q, v, vd)])
    return q, v, tau


def _arm_pass(forearm):
    return ForwardPass(_arm(forearm), TIMES, joint_limits=False, omega=10.0,
                       min_stiffness=0.0)


@pytest.mark.parametrize("backtrack", [True, False])
def test_a_heavier_forearm_is_learned_as_its_inverse_dynamics_torques(backtrack):
    q, v, tau = _swing(_arm(1.0))
    _, _, tau_true = _swing(_arm(1.5))                    # what the heavier arm needs
    out = learn_feedforward(_arm_pass(1.5), q, v, tau, iterations=6, rate=1.0,
                            backtrack=backtrack)
    before, after = out.joint_angle_rms_deg[0], out.result.joint_angle_rms_deg
    assert before > 1.0                                   # 2.25 deg off without learning
    assert after < 0.1 * before                           # 0.10 deg after
    assert out.best_iteration >= 4 and out.scores[out.best_iteration] < 0.2 * out.scores[0]
    missing = tau_true - tau
    err = np.sqrt(np.mean((out.correction - missing) ** 2, axis=0))
    assert np.all(err < 0.05 * np.sqrt(np.mean(missing ** 2, axis=0)))   # 2 % measured
    np.testing.assert_array_equal(out.tau, tau + out.correction)
    np.testing.assert_allclose([out.torque_change_rms[j] for j in ("shoulder", "elbow")],
                               np.sqrt(np.mean(out.correction ** 2, axis=0)), rtol=1e-12)
    assert out.cpu_seconds > 0 and out.failure is None


def test_learning_on_several_starts_takes_the_medians():
    q, v, tau = _swing(_arm(1.0))
    fp = _arm_pass(1.5)
    starts = v[[0, 0, 0]] + np.array([[0.0, 0.0], [0.2, 0.0], [0.0, -0.3]])
    out = learn_feedforward(fp, q, v, tau, iterations=3, rate=1.0, starts=starts)
    assert out.best_iteration == 3 and out.scores[3] < 0.5 * out.scores[0]
    np.testing.assert_array_equal(fp.run(q, v, out.tau).q, out.result.q)  # the first start
    runs = []
    for v0 in starts:
        vr = v.copy()
        vr[0] = v0
        runs.append(fp.run(q, vr, out.tau))
    np.testing.assert_allclose(out.scores[3], np.median([body_position_error(
        fp.tree, q, r.q) for r in runs]), rtol=1e-12)
    with pytest.raises(MotionError, match="starts must be \\(R, 2\\)"):
        learn_feedforward(fp, q, v, tau, starts=v[0])


def test_an_exact_feedforward_learns_nothing():
    q, v, tau = _swing(_arm(1.0))
    fp = _arm_pass(1.0)
    out = learn_feedforward(fp, q, v, tau, iterations=3, patience=3, rate=1.0)
    scale = np.sqrt(np.mean(tau ** 2))                    # 3.1 N m
    assert max(out.feedback_rms) < 0.005 * scale          # what would be learned
    assert np.sqrt(np.mean(out.correction ** 2)) < 0.005 * scale
    assert min(out.scores) > 0.9 * out.scores[0]          # no better run to learn
    np.testing.assert_array_equal(fp.run(q, v, out.tau).q, out.result.q)   # deterministic


def _leaning(lean=0.05, frames=121):
    """The one-legged body standing still on its flat foot with its leg tilted by ``lean``
    (rad) about y: its centre of mass ahead of the ankle."""
    tree = _monopod()
    times, Q, V = _standing(tree, frames)
    q = Q[0].copy()
    names = [j.name for j in tree.joints[1:]]
    q[7 + names.index("r-hip_y")] = lean
    q[7 + names.index("r-ankle_y")] = -lean
    T = np.asarray(tree.body_pose("r-foot", q), float)
    P = np.asarray(FOOT) @ T[:3, :3].T + T[:3, 3]
    q[6] -= P[:, 2].min()
    return tree, times, np.repeat(q[None], frames, 0), V


def test_a_leaning_body_on_its_foot_learns_the_ankle_torque_that_holds_it():
    tree, times, Q, V = _leaning()
    zero = np.zeros_like(V)                               # no feedforward: a wrong one
    floor = Floor(np.array([0.0, 0.0, 1.0]), np.zeros(3))
    fp = ForwardPass(tree, times, {"r-foot": FOOT}, floor, time_step=1 / 240,
                     lqr=LQRWeights(), lqr_reference=(Q, V, zero))
    assert fp.compiled
    before = reuse_statistics()
    out = learn_feedforward(fp, Q, V, zero, iterations=6, rate=0.5)
    # the table is a parameter of the run's context: the first run converts the diagram, the
    # others reuse it (one more conversion when the tree's background compilation of a
    # function it evaluates lands in between), and a rerun is the same run
    after = reuse_statistics()
    runs = len(out.scores)
    assert runs >= 5 and after["misses"] - before["misses"] <= 2
    assert after["hits"] - before["hits"] >= runs - 2
    np.testing.assert_array_equal(fp.run(Q, V, out.tau).q, out.result.q)
    assert out.scores[0] > 2e-3                           # 3.2 mm: it sags, then sways
    assert out.result is not None and out.scores[out.best_iteration] < 0.25 * out.scores[0]
    np.testing.assert_allclose(body_position_error(tree, Q, out.result.q),
                               out.scores[out.best_iteration], rtol=1e-12)
    # the statics: the ankle carries the weight above it at its lever arm about the ankle
    q = Q[0]
    ankle = np.asarray(tree.body_pose("r-ankle", q), float)[:3, 3]
    above = [b for b in tree.bodies[1:] if b.name not in ("r-foot", "r-ankle")]
    arm = sum(b.mass * (np.asarray(tree.body_pose(b.name, q), float)[:3, :3] @ b.com
                        + np.asarray(tree.body_pose(b.name, q), float)[:3, 3])[0]
              for b in above) - sum(b.mass for b in above) * ankle[0]
    k = fp.joint_names.index("r-ankle_y")
    held = np.mean(out.correction[-30:, k])               # the last quarter second
    np.testing.assert_allclose(abs(held), 9.81 * abs(arm), rtol=0.15)


def test_feedback_effort_is_the_pd_at_the_end_of_the_step_plus_the_lqr():
    tree, times, Q, V = _leaning(frames=25)
    zero = np.zeros_like(V)
    floor = Floor(np.array([0.0, 0.0, 1.0]), np.zeros(3))
    fp = ForwardPass(tree, times, {"r-foot": FOOT}, floor, time_step=1 / 240,
                     lqr=LQRWeights(), lqr_reference=(Q, V, zero), compiled=False)
    run = fp.run(Q, V, zero)
    pd = feedback_effort(fp, Q, V, run, ("pd",))
    lqr = feedback_effort(fp, Q, V, run, ("lqr",))
    np.testing.assert_allclose(feedback_effort(fp, Q, V, run), pd + lqr, rtol=1e-12)
    qi, vi = fp.q_indices, fp.actuated_velocity_indices
    k = 6                                                 # the state at t + h: frames 6, 7
    mid_q, mid_v = 0.5 * (run.q[k] + run.q[k + 1]), 0.5 * (run.v[k] + run.v[k + 1])
    np.testing.assert_allclose(pd[k], fp.kp * (Q[k, qi] - mid_q[qi]) - fp.kd * mid_v[vi],
                               rtol=1e-10, atol=1e-12)
    fn = fp.controller.feedback
    np.testing.assert_allclose(lqr[k], np.asarray(fn(times[k], run.q[k], run.v[k]),
                                                  float).ravel(), rtol=1e-10, atol=1e-12)
    root = feedback_effort(fp, Q, V, run, ("lqr_root",))  # joints at the reference
    qr, vr = Q[k].copy(), V[k].copy()
    qr[:7], vr[:6] = run.q[k, :7], run.v[k, :6]
    np.testing.assert_allclose(root[k], np.asarray(fn(times[k], qr, vr), float).ravel(),
                               rtol=1e-10, atol=1e-12)
    assert np.abs(root[k] - lqr[k]).max() > 1e-6         # the joints' error counts in lqr
    with pytest.raises(MotionError, match="parts must be among 'pd', 'lqr' and 'lqr_root'"):
        feedback_effort(fp, Q, V, run, ("balance",))


def test_the_q_filter_is_zero_phase_and_passes_slow_signals():
    t = np.arange(241) / 120.0
    slow, fast = np.sin(2 * np.pi * 0.5 * t), np.sin(2 * np.pi * 30.0 * t)
    y = zero_phase_lowpass(t, np.c_[slow + fast], 6.0)[:, 0]
    inner = slice(40, -40)
    np.testing.assert_allclose(y[inner], slow[inner], atol=2e-3)   # no lag, no 30 Hz
    with pytest.raises(MotionError, match="Nyquist"):
        zero_phase_lowpass(t, np.c_[slow], 60.0)
    with pytest.raises(MotionError, match="uniformly spaced"):
        zero_phase_lowpass(np.r_[t[:-1], t[-1] + 0.1], np.c_[slow], 6.0)
    np.testing.assert_array_equal(zero_phase_lowpass(t, np.c_[slow], None)[:, 0], slow)


def test_bad_options_are_named():
    q, v, tau = _swing(_arm(1.0))
    fp = _arm_pass(1.0)
    with pytest.raises(MotionError, match="rate must lie in \\(0, 2\\]"):
        learn_feedforward(fp, q, v, tau, rate=0.0)
    with pytest.raises(MotionError, match="patience >= 1"):
        learn_feedforward(fp, q, v, tau, patience=0)
    with pytest.raises(MotionError, match="references must be q"):
        learn_feedforward(fp, q[:5], v, tau)
    with pytest.raises(MotionError, match="cutoff_hz must lie"):
        learn_feedforward(fp, q, v, tau, cutoff_hz=-1.0)
    # the arm has no LQR and a fixed root: the LQR's parts would learn nothing, silently
    for parts in (("lqr",), ("pd", "lqr_root")):
        with pytest.raises(MotionError, match="need the forward pass's LQR .*it has none"):
            learn_feedforward(fp, q, v, tau, parts=parts)
    fixed = SimpleNamespace(controller=SimpleNamespace(feedback=object()), floating=False,
                            tree=fp.tree)                 # an LQR on a fixed root
    with pytest.raises(MotionError, match="'lqr_root' needs a free root; tree 'arm'"):
        feedback_effort(fixed, q, v, None, ("lqr_root",))
    run = fp.run(q, v, tau)
    with pytest.raises(MotionError, match="feedback_effort: parts \\('lqr_root',\\) need"):
        feedback_effort(fp, q, v, run, ("lqr_root",))
    np.testing.assert_array_equal(feedback_effort(fp, q, v, run),          # the PD alone
                                  feedback_effort(fp, q, v, run, ("pd",)))
