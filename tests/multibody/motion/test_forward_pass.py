"""ForwardPass: an exact motion tracked from its own inverse dynamics; the root is not
actuated (a floating body falls freely whatever the joints do); errors name the culprit."""
import numpy as np
import pytest

from multibody.models import acrobot, quadruped
from multibody.motion import Floor, MotionError
from multibody.motion.forward_pass import ForwardPass


def _exact_motion(tree, times):
    w = np.array([2.0, 3.0])
    a = np.array([0.4, 0.6])
    q = a * np.sin(np.outer(times, w))
    v = a * w * np.cos(np.outer(times, w))
    vd = -a * w ** 2 * np.sin(np.outer(times, w))
    tau = np.array([np.asarray(tree.inverse_dynamics(qi, vi, ai), float).ravel()
                    for qi, vi, ai in zip(q, v, vd)])
    return q, v, tau


def test_exact_motion_is_tracked_to_1e_3_rad():
    tree = acrobot()
    times = np.arange(61) / 120.0                  # 0.5 s at the capture rate
    q, v, tau = _exact_motion(tree, times)
    fp = ForwardPass(tree, times, joint_limits=False, omega=10.0, min_stiffness=0.0,
                     time_step=1 / 480)
    assert not fp.compiled                         # no contact, no limit: interpreted step
    out = fp.run(q, v, tau)
    err = np.abs(out.q - q).max()
    assert err < 1e-3
    assert out.joint_angle_rms_deg < np.degrees(1e-3)
    # without the feedforward the same PD misses by far more: the torques carry the motion
    out0 = ForwardPass(acrobot(), times, joint_limits=False, omega=10.0, min_stiffness=0.0,
                       time_step=1 / 480).run(
        q, v, np.zeros_like(tau))
    assert np.abs(out0.q - q).max() > 10 * err


def _standing_references(frames):
    """A floating quadruped 1 m up, its references standing still: ``(tree, times, Q, V)``."""
    tree = quadruped(floating_base=True)
    times = np.arange(frames) / 120.0
    q0 = tree.neutral_configuration()
    q0[6] = 1.0
    return tree, times, np.repeat(q0[None], len(times), axis=0), np.zeros((len(times), tree.nv))


def test_the_root_is_not_actuated_a_floating_body_falls_freely():
    tree, times, Q, V = _standing_references(25)
    q0 = Q[0]
    tau = np.zeros_like(V)
    tau[:, :6] = 1e4                                 # a root "torque" in the references: ignored
    fp = ForwardPass(tree, times, compiled=True)
    assert not set(range(6)) & set(fp.actuated_velocity_indices.tolist())
    assert fp.actuated_velocity_indices.tolist() == list(range(6, tree.nv))
    out = fp.run(Q, V, tau)
    h, g = fp.time_step, 9.81
    n = np.round((out.t - times[0]) / h).astype(int)
    z = q0[6] - g * h ** 2 * n * (n + 1) / 2          # semi-implicit Euler free fall
    np.testing.assert_allclose(out.q[:, 6], z, atol=1e-9)
    # joints held by the PD alone, the body's attitude untouched
    np.testing.assert_allclose(out.q[:, :4], np.tile([1.0, 0, 0, 0], (len(times), 1)), atol=1e-9)


def test_bad_inputs_name_the_culprit():
    tree = acrobot()
    with pytest.raises(MotionError, match="increasing"):
        ForwardPass(tree, [0.0, 0.0, 0.1])
    tip = tree.bodies[-1].name
    with pytest.raises(MotionError, match="floor"):
        ForwardPass(acrobot(), [0.0, 0.1], contact_points={tip: [np.zeros(3)]})
    with pytest.raises(MotionError, match="'nowhere'"):
        ForwardPass(acrobot(), [0.0, 0.1], contact_points={"nowhere": [np.zeros(3)]},
                    floor=Floor(np.array([0, 0, 1.0]), np.zeros(3)))
    fp = ForwardPass(acrobot(), [0.0, 0.1])
    with pytest.raises(MotionError, match=r"references must be q \(2, 2\)"):
        fp.run(np.zeros((3, 2)), np.zeros((3, 2)), np.zeros((3, 2)))
    floor = Floor(np.array([0, 0, 1.0]), np.array([0, 0, -5.0]))
    used = ForwardPass(acrobot(), [0.0, 0.1], contact_points={tip: [np.zeros(3)]}, floor=floor)
    with pytest.raises(MotionError, match="already serves"):
        ForwardPass(used.tree, [0.0, 0.1], contact_points={tip: [np.zeros(3)]}, floor=floor)


def test_joint_gain_scale_per_axis():
    from multibody.tree import RigidBodyTree
    from multibody.tree.joints import Universal
    t = RigidBodyTree("wrist")
    t.add_body("hand", 1.0, com=(0, 0, -0.1), inertia=np.diag([0.01, 0.02, 0.03]))
    t.add_joint(Universal("wrist", "world", "hand", axis1=(1, 0, 0), axis2=(0, 1, 0)))
    base = ForwardPass(t, [0.0, 0.1])
    fp = ForwardPass(t, [0.0, 0.1], joint_gain_scale={"wrist": (1.0, 0.25)})
    np.testing.assert_allclose(fp.kp, base.kp * [1.0, 0.25])
    np.testing.assert_allclose(fp.kd, base.kd * [1.0, 0.5])
    one = ForwardPass(t, [0.0, 0.1], joint_gain_scale={"wrist": 0.25})
    np.testing.assert_allclose(one.kp, base.kp * 0.25)
    with pytest.raises(MotionError, match="'wrist' has 3 factors, expected 1 or 2"):
        ForwardPass(t, [0.0, 0.1], joint_gain_scale={"wrist": (1.0, 1.0, 1.0)})


def test_compile_flags_reach_the_run_library(monkeypatch):
    """``compile_flags``: the whole run's library (single runs and batches) is built with
    them, and the run is bitwise the one at the default flags."""
    import solvers.compiled as compiled
    built, load = [], compiled.load_c_library

    def spy(source, prefix, *args, **kw):
        built.append(tuple(kw.get("flags") or ()))
        return load(source, prefix, *args, **kw)
    monkeypatch.setattr(compiled, "load_c_library", spy)
    tree, times, Q, V = _standing_references(13)
    out0 = ForwardPass(quadruped(floating_base=True), times).run(Q, V, np.zeros_like(V))
    assert built and ("-O2",) not in built
    fp = ForwardPass(tree, times, compile_flags=["-O2"])
    assert fp.compiled
    out = fp.run(Q, V, np.zeros_like(V))
    assert built[-1] == ("-O2",)
    np.testing.assert_array_equal(out.q, out0.q)
    n = len(built)
    batch = fp.run_batch([(Q, V, np.zeros_like(V))] * 2)
    assert all(f == ("-O2",) for f in built[n:])    # the library built with them is reused
    np.testing.assert_array_equal(batch[1].q, out0.q)


def test_run_batch_skips_runs_that_blow_up_only_when_asked():
    """``run_batch(skip_failed=True)``: a run that blows up (torques of 1e300 on the
    acrobot: the state would stop being finite) is None, the others run as alone; without
    it the blow-up raises, and bad references raise either way."""
    from systems.errors import NonFiniteStateError, PortValueError
    tree = acrobot()
    times = np.arange(13) / 120.0
    q, v, tau = _exact_motion(tree, times)
    fp = ForwardPass(tree, times, joint_limits=False)
    wild = tau.copy()
    wild[3:] = 1e300
    good, lost = fp.run_batch([(q, v, tau), (q, v, wild)], skip_failed=True)
    assert lost is None
    np.testing.assert_array_equal(good.q, fp.run(q, v, tau).q)
    with pytest.raises(NonFiniteStateError, match="would become nan"):
        fp.run_batch([(q, v, tau), (q, v, wild)])
    nan = tau.copy()
    nan[3] = np.nan
    with pytest.raises(PortValueError, match="is nan"):
        fp.run_batch([(q, v, nan)], skip_failed=True)
