"""Imu: at rest, in free fall, spinning, tilted and offset (against the rigid-body formula),
inside both rigid-body plants."""
import numpy as np
import pytest

from multibody import Free, Revolute, RigidBodyTree, spatial
from multibody.plants import RigidBodySystem, TimeSteppingRigidBodySystem
from sensors import Imu


def _free_body():
    t = RigidBodyTree("puck")
    t.add_body("puck", 1.0, inertia=np.diag([0.1, 0.2, 0.3]))
    t.add_joint(Free("float", "world", "puck"))
    return t


def _read(imu, x, vdot):
    ctx = imu.create_default_context()
    imu.get_input_port("state").fix_value(ctx, x)
    imu.get_input_port("generalized_acceleration").fix_value(ctx, vdot)
    return (np.asarray(imu.get_output_port("acceleration").eval(ctx), float).ravel(),
            np.asarray(imu.get_output_port("angular_velocity").eval(ctx), float).ravel())


@pytest.mark.parametrize("angle", [0.0, 0.7, 2.0])
def test_at_rest_reads_minus_gravity_in_the_sensor_frame(angle):
    t = _free_body()
    R = spatial.axis_angle_to_rotation([1.0, 2.0, 0.5], angle)
    X = np.eye(4)
    X[:3, :3] = spatial.rotation_z(0.3)
    imu = Imu(t, "puck", X_BS=X)
    q = np.concatenate([spatial.rotation_to_quaternion(R), [0.2, -0.1, 1.0]])
    acc, w = _read(imu, np.concatenate([q, np.zeros(6)]), np.zeros(6))
    R_WS = R @ X[:3, :3]
    np.testing.assert_allclose(acc, R_WS.T @ [0, 0, 9.81], atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(acc), 9.81, atol=1e-12)
    np.testing.assert_allclose(w, 0.0, atol=1e-14)


def test_free_fall_reads_zero_and_a_spin_reads_the_spin_rate():
    t = _free_body()
    imu = Imu(t, "puck")
    q = np.concatenate([[1, 0, 0, 0], [0, 0, 3.0]])
    v = np.array([0.0, 0.0, 1.5, 0.0, 0.0, 0.0])      # spinning about z (body frame)
    vdot = t.forward_dynamics(q, v, np.zeros(6))        # free fall
    acc, w = _read(imu, np.concatenate([q, v]), vdot)
    np.testing.assert_allclose(acc, 0.0, atol=1e-12)
    np.testing.assert_allclose(w, [0, 0, 1.5], atol=1e-14)


def test_offset_sensor_on_a_spinning_arm_reads_the_centripetal_acceleration():
    t = RigidBodyTree("arm")
    t.add_body("link", 1.0, com=(0.5, 0, 0), inertia=np.eye(3) * 0.01)
    t.add_joint(Revolute("j", "world", "link", axis=(0, 0, 1)))
    X = np.eye(4)
    X[0, 3] = 0.8                                       # 0.8 m out along the link
    imu = Imu(t, "link", X_BS=X)
    w, wd = 3.0, 0.5
    acc, gyro = _read(imu, np.array([0.4, w]), np.array([wd]))
    # rigid-body formula in the link frame: a = -w^2 r x_hat + wd r y_hat; minus g (up +9.81)
    np.testing.assert_allclose(acc, [-w * w * 0.8, wd * 0.8, 9.81], atol=1e-12)
    np.testing.assert_allclose(gyro, [0, 0, w], atol=1e-14)


@pytest.mark.parametrize("kind", ["continuous", "time_stepping"])
def test_imu_inside_both_plants(kind):
    t = RigidBodyTree("pendulum")
    t.add_body("link", 1.0, com=(0, 0, -0.5), inertia=np.eye(3) * 0.01)
    t.add_joint(Revolute("j", "world", "link", axis=(0, 1, 0)))
    imu = Imu(t, "link", name="imu")
    plant = (RigidBodySystem(t, sensors=[imu]) if kind == "continuous"
             else TimeSteppingRigidBodySystem(t, 1e-3, sensors=[imu]))
    ctx = plant.create_default_context()
    acc = np.asarray(plant.get_output_port("imu_acceleration").eval(ctx), float)
    np.testing.assert_allclose(acc, [0, 0, 9.81], atol=1e-9)          # hanging at rest
    plant.set_positions(ctx, [0.5])                                      # released at 0.5 rad
    acc = np.asarray(plant.get_output_port("imu_acceleration").eval(ctx), float)
    vdot = np.asarray(plant.get_output_port("generalized_acceleration").eval(ctx), float)
    # at the pivot (sensor origin) the acceleration is zero: the reading is -g in the link frame
    R = spatial.rotation_y(0.5)
    np.testing.assert_allclose(acc, R.T @ [0, 0, 9.81], atol=1e-9)
    expected = t.forward_dynamics([0.5], [0.0], [0.0])
    tol = 1e-9 if kind == "continuous" else 1e-2 * abs(expected[0])    # one step's (v+ - v)/h
    np.testing.assert_allclose(vdot, expected, atol=tol)


def test_bad_arguments_are_named():
    t = _free_body()
    with pytest.raises(ValueError, match="has no body or frame named 'wheel'"):
        Imu(t, "wheel")
    with pytest.raises(ValueError, match="X_BS must be a 4 x 4 rigid transform"):
        Imu(t, "puck", X_BS=np.eye(4) * 2)
    with pytest.raises(ValueError, match="noise must be an ImuNoise"):
        Imu(t, "puck", noise={"accel": 0.1})
    from sensors import ImuNoise
    with pytest.raises(ValueError, match="accel_noise_density must be finite and >= 0"):
        Imu(t, "puck", noise=ImuNoise(accel_noise_density=-1.0))
