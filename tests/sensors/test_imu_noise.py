"""IMU noise: white-noise variance sigma_n^2 / h, bias increments of variance sigma_b^2 h lag,
zero mean, seeded (same seed, same samples)."""
import numpy as np

from multibody import Free, RigidBodyTree
from sensors import Imu, ImuNoise
from systems import DiagramBuilder
from systems.analysis import Simulator
from systems.primitives import ConstantVectorSource, LogVectorOutput

H = 0.01


def _samples(noise, T=40.0):
    t = RigidBodyTree("puck")
    t.add_body("puck", 1.0, inertia=np.eye(3))
    t.add_joint(Free("float", "world", "puck"))
    imu = Imu(t, "puck", noise=noise)
    b = DiagramBuilder()
    b.add_system(imu)
    x = b.add_system(ConstantVectorSource(np.concatenate([[1, 0, 0, 0, 0, 0, 0], np.zeros(6)])))
    a = b.add_system(ConstantVectorSource(np.zeros(6), name="accel"))
    b.connect(x.get_output_port(), imu.get_input_port("state"))
    b.connect(a.get_output_port(), imu.get_input_port("generalized_acceleration"))
    acc = LogVectorOutput(imu.get_output_port("acceleration"), b, publish_period=H)
    gyr = LogVectorOutput(imu.get_output_port("angular_velocity"), b, publish_period=H)
    d = b.build()
    sim = Simulator(d)
    sim.advance_to(T)
    ctx = sim.get_context()
    return acc.find_log(ctx).data()[:, 2:], gyr.find_log(ctx).data()[:, 2:]


def test_white_noise_has_the_variance_of_its_density():
    acc, gyr = _samples(ImuNoise(accel_noise_density=0.02, gyro_noise_density=0.003,
                                 sampling_period=H, seed=1))
    m = acc.shape[1]
    for data, true_mean, sn in ((acc, [0, 0, 9.81], 0.02), (gyr, [0, 0, 0], 0.003)):
        var = sn ** 2 / H
        dev = data - np.asarray(true_mean)[:, None]
        assert np.all(np.abs(dev.mean(axis=1)) < 4 * np.sqrt(var / m))
        assert np.all(np.abs(dev.var(axis=1) / var - 1) < 4 * np.sqrt(2 / m))


def test_bias_random_walk_increments_grow_linearly_with_the_lag():
    sb = 0.05
    acc, _ = _samples(ImuNoise(accel_bias_random_walk=sb, sampling_period=H, seed=2), T=60.0)
    bias = acc[0]                                # no white noise: the reading is the bias
    for lag in (1, 10, 50):
        inc = bias[lag::lag] - bias[:-lag:lag]
        n = inc.size
        var = sb ** 2 * H * lag
        assert abs(inc.var() / var - 1) < 5 * np.sqrt(2 / n)
    # an Allan-type check: averaging does not beat a random walk down
    assert np.std(bias[-1000:]) > 0


def test_same_seed_same_samples():
    n = ImuNoise(accel_noise_density=0.01, gyro_bias_random_walk=0.01, sampling_period=H, seed=7)
    a1, g1 = _samples(n, T=1.0)
    a2, g2 = _samples(n, T=1.0)
    assert np.array_equal(a1, a2) and np.array_equal(g1, g2)
