"""Coulomb friction is the same in every direction in the time-stepping plant: a box launched
at eight headings slides the same distance (v^2 / (2 mu g) up to the step's discretization),
and on slopes turned about the vertical by 0..90 degrees a box slides at g (sin a - mu cos a)
straight downhill, or sticks when tan a < mu."""
import numpy as np
import pytest

from _time_stepping_models import free_boxes
from multibody.constraints import PointContactConstraint
from multibody.plants import TimeSteppingRigidBodySystem

G, MU, H = 9.81, 0.5, 1e-3


def _box_system(gravity=(0, 0, -G), friction="cone"):
    tree = free_boxes(1, gravity=gravity)
    return TimeSteppingRigidBodySystem(
        tree, H, constraints=[PointContactConstraint(tree, MU, friction=friction)])


def _slide_distance(heading, friction="cone", v0=1.0):
    s = _box_system(friction=friction)
    ctx = s.create_default_context()
    s.set_positions(ctx, [1, 0, 0, 0, 0, 0, 0.1])
    s.set_velocities(ctx, [0, 0, 0, v0 * np.cos(heading), v0 * np.sin(heading), 0])
    s.advance(ctx, 40)                          # settle the contact
    for _ in range(30):
        s.advance(ctx, 10)
        if np.linalg.norm(s.get_velocities(ctx)[3:5]) < 1e-12:
            break
    q = s.get_positions(ctx)
    return q[4:6]


@pytest.mark.parametrize("friction", ["cone", "box"])
def test_a_box_slides_the_same_distance_at_every_heading(friction):
    headings = np.arange(8) * np.pi / 4 + 0.1
    ends = [_slide_distance(a, friction) for a in headings]
    dist = np.array([np.linalg.norm(e) for e in ends])
    np.testing.assert_allclose(dist, dist[0], rtol=1e-6)
    # straight along the launch heading
    for e, a in zip(ends, headings):
        np.testing.assert_allclose(e / np.linalg.norm(e), [np.cos(a), np.sin(a)], atol=1e-9)
    assert dist[0] == pytest.approx(1.0 / (2 * MU * G), rel=1e-2)     # v^2 / (2 mu g)


def _slope(angle, azimuth):
    """Gravity of a slope of ``angle`` whose downhill direction has ``azimuth`` about z."""
    down = np.array([np.cos(azimuth), np.sin(azimuth), 0.0])
    return G * (np.sin(angle) * down - np.cos(angle) * np.array([0, 0, 1.0])), down


@pytest.mark.parametrize("azimuth_deg", [0, 20, 45, 70, 90])
def test_slide_acceleration_on_slopes_turned_about_the_vertical(azimuth_deg):
    angle = np.deg2rad(35.0)                         # tan 35 = 0.70 > mu: slides
    g, down = _slope(angle, np.deg2rad(azimuth_deg))
    s = _box_system(gravity=g)
    ctx = s.create_default_context()
    s.set_positions(ctx, [1, 0, 0, 0, 0, 0, 0.1])
    s.advance(ctx, 50)
    v1 = s.get_velocities(ctx)[3:6].copy()
    s.advance(ctx, 200)
    v2 = s.get_velocities(ctx)[3:6]
    a = (v2 - v1) / (200 * H)
    expected = G * (np.sin(angle) - MU * np.cos(angle))
    np.testing.assert_allclose(a[:2], expected * down[:2], atol=1e-6 * G)


@pytest.mark.parametrize("azimuth_deg", [0, 30, 45, 60, 90])
def test_a_box_sticks_below_the_friction_angle_at_every_azimuth(azimuth_deg):
    angle = np.deg2rad(25.0)                         # tan 25 = 0.466 < mu: sticks
    g, _ = _slope(angle, np.deg2rad(azimuth_deg))
    s = _box_system(gravity=g)
    ctx = s.create_default_context()
    s.set_positions(ctx, [1, 0, 0, 0, 0, 0, 0.1])
    s.advance(ctx, 500)
    assert np.linalg.norm(s.get_positions(ctx)[4:6]) < 1e-6
