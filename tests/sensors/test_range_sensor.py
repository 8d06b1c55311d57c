"""RangeSensor and ray casting: distances to the ground, a sphere, a box, a cylinder and a
capsule against closed forms, from a moving body, at any heading."""
import numpy as np
import pytest

from multibody import Free, RigidBodyTree, spatial
from multibody.geometry import Box, Capsule, Cylinder, Halfspace, Sphere, ray_cast
from sensors import RangeSensor


def test_ray_cast_closed_forms():
    I = np.eye(4)
    down = np.array([0, 0, -1.0])
    assert ray_cast(Halfspace(), I, [0, 0, 2.0], down) == pytest.approx(2.0)
    tilt = np.array([np.sin(0.3), 0, -np.cos(0.3)])
    assert ray_cast(Halfspace(), I, [0, 0, 2.0], tilt) == pytest.approx(2.0 / np.cos(0.3))
    assert ray_cast(Halfspace(), I, [0, 0, 2.0], [1.0, 0, 0]) == np.inf
    X = np.eye(4); X[:3, 3] = [3.0, 0, 0]
    assert ray_cast(Sphere(0.5), X, [0, 0, 0], [1.0, 0, 0]) == pytest.approx(2.5)
    assert ray_cast(Box((1.0, 2.0, 2.0)), X, [0, 0, 0], [1.0, 0, 0]) == pytest.approx(2.5)
    assert ray_cast(Cylinder(0.5, 2.0), X, [0, 0, 0], [1.0, 0, 0]) == pytest.approx(2.5)
    assert ray_cast(Cylinder(0.5, 2.0), X, [3.0, 0, 5.0], down) == pytest.approx(4.0)  # cap
    assert ray_cast(Capsule(0.5, 2.0), X, [3.0, 0, 5.0], down) == pytest.approx(3.5)   # end
    Xr = np.eye(4); Xr[:3, :3] = spatial.rotation_z(0.7); Xr[:3, 3] = [0, 3.0, 0]
    # a unit square turned by 0.7 rad: along its centre line the half width is 0.5 / cos 0.7
    assert ray_cast(Box((1.0, 1.0, 1.0)), Xr, [0, 0, 0], [0, 1.0, 0]) == pytest.approx(
        3.0 - 0.5 / np.cos(0.7), rel=1e-12)
    assert ray_cast(Sphere(0.5), X, [3.0, 0, 0], [1.0, 0, 0]) == 0.0          # from inside


@pytest.mark.parametrize("heading", [0.0, 0.8, 2.0])
def test_a_flying_body_measures_its_height_and_a_wall(heading):
    t = RigidBodyTree("drone")
    t.add_body("drone", 1.0, inertia=np.eye(3) * 0.01)
    t.add_joint(Free("float", "world", "drone"))
    t.add_collision_geometry("drone", Sphere(0.1), name="hull")          # own body: ignored
    t.add_collision_geometry("world", Halfspace(), name="ground")
    Xw = np.eye(4); Xw[:3, 3] = [5.0, 0, 1.0]
    t.add_collision_geometry("world", Box((0.2, 20.0, 2.0)), Xw, name="wall")
    s = RangeSensor(t, "drone", [[0, 0, -1.0], [1.0, 0, 0]], max_range=10.0, name="lidar")
    ctx = s.create_default_context()
    quat = spatial.rotation_to_quaternion(spatial.rotation_z(heading))
    q = np.concatenate([quat, [0.0, 0.0, 1.5]])
    s.get_input_port("state").fix_value(ctx, np.concatenate([q, np.zeros(6)]))
    d = s.get_output_port("distances").eval(ctx)
    assert d[0] == pytest.approx(1.5, abs=1e-12)                          # height
    hit = 4.9 / np.cos(heading) if np.cos(heading) > 0 and abs(4.9 * np.tan(heading)) < 10 else None
    if hit is not None and hit < 10.0:
        assert d[1] == pytest.approx(hit, rel=1e-9)
    else:
        assert d[1] == 10.0                                               # max range


def test_bad_arguments_are_named():
    t = RigidBodyTree("x")
    t.add_body("b", 1.0, inertia=np.eye(3))
    t.add_joint(Free("f", "world", "b"))
    with pytest.raises(ValueError, match="no body or frame named 'lens'"):
        RangeSensor(t, "lens", [[1, 0, 0]], 5.0)
    with pytest.raises(ValueError, match="directions must be nonzero"):
        RangeSensor(t, "b", [[0, 0, 0]], 5.0)
    with pytest.raises(ValueError, match="max_range must be finite and > 0"):
        RangeSensor(t, "b", [[1, 0, 0]], 0.0)
