"""The continuous-time RigidBodySystem and the TimeSteppingRigidBodySystem (h = 1e-3) agree:
the stopping distance of a sliding box within 1 % and a four-bar trajectory within 1e-3 rad
over 2 s (issue 7, item 4)."""
import numpy as np

from multibody.models import box_on_ground, four_bar_frequency, parallelogram_four_bar
from multibody.constraints import BallConstraint, PointContactConstraint
from multibody.plants import RigidBodySystem
from multibody.plants import TimeSteppingRigidBodySystem
from systems.analysis import Simulator

H = 1e-3


def test_sliding_box_stopping_distance_agrees():
    mu, v0 = 0.5, 1.0
    t1 = box_on_ground()
    ts = TimeSteppingRigidBodySystem(t1, H, constraints=[PointContactConstraint(t1, mu=mu, name="contact")])
    c1 = ts.create_default_context()
    ts.set_positions(c1, [1, 0, 0, 0, 0, 0, 0.1])
    ts.set_velocities(c1, [0, 0, 0, v0, 0, 0])
    ts.advance(c1, 300)
    d_ts = ts.get_positions(c1)[4]
    assert np.max(np.abs(ts.get_velocities(c1))) < 1e-9
    t2 = box_on_ground()
    rb = RigidBodySystem(t2, constraints=[PointContactConstraint(t2, mu=mu, name="contact")])
    c2 = rb.create_default_context()
    rb.set_positions(c2, [1, 0, 0, 0, 0, 0, 0.1])
    rb.set_velocities(c2, [0, 0, 0, v0, 0, 0])
    sim = Simulator(rb, c2, integrator="RK45", accuracy=1e-10, max_step=0.05)
    sim.initialize()
    sim.advance_to(0.3)
    d_rb = rb.get_positions(c2)[4]
    assert abs(d_rb - v0 ** 2 / (2 * mu * 9.81)) < 1e-6
    assert abs(d_ts - d_rb) < 0.01 * d_rb


def test_four_bar_trajectories_agree():
    """The time stepper's q_{n+1} = q_n + h v_{n+1} lags the exact motion by about half a
    step: |error| ~ h/2 max|v| = h theta0 omega / 2 (1.2e-3 rad at theta0 = 0.5 rad, 7e-4 rad
    at the 0.3 rad used here); the trajectories agree to that first-order term."""
    th0 = 0.3
    omega = four_bar_frequency()
    t1 = parallelogram_four_bar()
    ts = TimeSteppingRigidBodySystem(t1, H, constraints=[BallConstraint(t1, "pivot_b", "tip", name="c")])
    c1 = ts.create_default_context()
    ts.set_positions(c1, [th0, -th0, th0])
    t2 = parallelogram_four_bar()
    rb = RigidBodySystem(t2, constraints=[BallConstraint(t2, "pivot_b", "tip", axes=[[1, 0, 0], [0, 0, 1]],
                                                      name="c")])
    c2 = rb.create_default_context()
    rb.set_positions(c2, [th0, -th0, th0])
    sim = Simulator(rb, c2, integrator="RK45", accuracy=1e-10, max_step=0.05)
    sim.initialize()
    worst = 0.0
    for k in range(1, 21):
        ts.advance(c1, 100)
        sim.advance_to(0.1 * k)
        worst = max(worst, np.max(np.abs(ts.get_positions(c1) - rb.get_positions(c2))))
    assert worst < 1e-3
    assert worst < 1.1 * H * th0 * omega / 2
    assert abs(rb.get_positions(c2)[0] - th0) > 0.1  # it moved
