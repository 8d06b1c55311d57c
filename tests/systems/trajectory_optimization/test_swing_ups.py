"""The swing-up workflows on rigid-body plants from URDF: collocation, open-loop replay,
TVLQR, and the hand-over to LQR."""
import numpy as np
import pytest

from _examples import load_example


@pytest.mark.parametrize("knots", [21, 31, 41])
def test_cart_pole_swing_up_lands_on_the_goal(knots, tmp_path):
    ex = load_example("cart_pole_swing_up")
    _, dc = ex.swing_up_problem(knots)
    r = dc.solve()
    assert r.is_success(), r.status
    np.testing.assert_allclose(r.get_solution(dc.final_state()), ex.GOAL, atol=1e-6)
    assert np.max(np.abs(dc.defects(r))) < 1e-7            # IPOPT's constraint tolerance
    u = dc.reconstruct_input_trajectory(r)
    assert np.max(np.abs(u.vector_values(dc.sample_times(r)))) <= ex.FORCE_LIMIT + 1e-6
    x = dc.reconstruct_state_trajectory(r)
    if knots >= 31:   # with 21 knots (steps of 0.13 s) the plan is too coarse to replay open loop
        t_open, x_open = ex.simulate(u)
        err = x_open[:, -1] - ex.GOAL
        assert abs(err[0]) < 0.05 and abs(np.degrees(err[1])) < 5.0     # a few cm / degrees
    t_fb, x_fb = ex.simulate(u, x, tvlqr=True)
    assert np.max(np.abs(x_fb[:, -1] - ex.GOAL)) < 1e-3


def test_cart_pole_example_runs_and_saves_its_plot(tmp_path):
    out = load_example("cart_pole_swing_up").main(["--knots", "21", "--out", str(tmp_path)])
    assert out["png"] and (tmp_path / "cart_pole_swing_up.png").is_file()
    assert np.max(np.abs(out["tvlqr_error"])) < 1e-3


def test_acrobot_swing_up_then_tvlqr_then_lqr_balances(tmp_path):
    out = load_example("acrobot_swing_up").main(["--knots", "41", "--hold", "3",
                                                 "--out", str(tmp_path)])
    assert out["result"].is_success()
    assert np.linalg.norm(out["final_error"]) < 1e-3       # still upright 3 s after the plan
    t, x = out["times"], out["states"]
    late = t > t[-1] - 2.0
    assert np.max(np.abs(x[0, late] - np.pi)) < 1e-2       # balanced, not passing through
    assert (tmp_path / "acrobot_swing_up.png").is_file()


def test_pendulum_swing_up_respects_the_torque_limit(tmp_path):
    out = load_example("pendulum_swing_up").main(["--out", str(tmp_path)])
    r, u = out["result"], out["u_traj"]
    assert r.is_success()
    ts = np.linspace(u.start_time(), u.end_time(), 200)
    assert np.max(np.abs(u.vector_values(ts))) <= 3.0 + 1e-6
    # pumping is needed: the plan swings through the bottom before it reaches the top
    theta = out["x_traj"].vector_values(ts)[0]
    assert np.min(theta) < -0.3 and abs(theta[-1] - np.pi) < 1e-6


def test_arm7_move_stays_within_joint_and_effort_limits(tmp_path):
    ex = load_example("arm7_point_to_point")
    out = ex.main(["--knots", "11", "--out", str(tmp_path)])
    assert out["result"].is_success()
    assert 0.1 <= out["duration"] <= 5.0
