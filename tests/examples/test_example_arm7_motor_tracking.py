"""The DC-motor arm example: compiled tracking, and the linearization through the motors
against finite differences."""
import numpy as np

from _examples import load_example


def test_arm_on_motors_tracks_and_saves_a_plot(tmp_path):
    ex = load_example("arm7_motor_tracking")
    out = ex.main(["--duration", "0.6", "--out", str(tmp_path)])
    assert out["max_error"] < 1e-3
    assert np.max(np.abs(out["currents"])) > 0.1                # the motors did the work
    assert (tmp_path / "arm7_motor_tracking.png").is_file()


def test_linearization_through_the_motors_matches_finite_differences():
    ex = load_example("arm7_motor_tracking")
    A, B, plant, ctx = ex.open_loop_linearization()
    pctx = plant.get_my_context_from_root(ctx)
    x0 = np.array(pctx.continuous_state, float)
    u0 = np.array(plant.get_input_port("motors").eval(ctx), float)

    def f(x, u):
        pctx.set_continuous_state(x)
        plant.get_input_port("motors").fix_value(ctx, u)
        return np.asarray(plant.eval_time_derivatives(pctx), float).ravel()

    eps = 1e-6
    fd_A = np.column_stack([(f(x0 + eps * e, u0) - f(x0 - eps * e, u0)) / (2 * eps)
                            for e in np.eye(x0.size)])
    fd_B = np.column_stack([(f(x0, u0 + eps * e) - f(x0, u0 - eps * e)) / (2 * eps)
                            for e in np.eye(u0.size)])
    np.testing.assert_allclose(A, fd_A, rtol=1e-5, atol=1e-5 * np.max(np.abs(A)))
    np.testing.assert_allclose(B, fd_B, rtol=1e-5, atol=1e-6)
    # the motors' electrical poles are in A: di/dt = -R/L i on the current block
    np.testing.assert_allclose(np.diag(A)[14:], -ex.MOTOR["resistance"] / ex.MOTOR["inductance"])
