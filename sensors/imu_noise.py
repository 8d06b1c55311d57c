"""``ImuNoise``: the noise model of an :class:`~sensors.Imu` (white noise and bias random walk).

Per axis of the accelerometer and the gyroscope, the reading sampled every ``h`` is the true
value plus a bias and white noise (the standard discrete IMU model, e.g. the Kalibr / IEEE
Std 952 conventions):

.. math::

    b_{k+1} = b_k + \\sigma_b \\sqrt{h}\\, \\xi_k, \\qquad
    n_k = \\frac{\\sigma_n}{\\sqrt{h}}\\, \\eta_k,

with ``xi``, ``eta`` standard normal, ``sigma_n`` the white-noise density
(m/s^2/sqrt(Hz), rad/s/sqrt(Hz)) and ``sigma_b`` the bias random walk (m/s^3/sqrt(Hz),
rad/s^2/sqrt(Hz)). Draw ``k`` comes from the generator seeded with ``(seed, k)``, and ``k``
and the biases are the sensor's discrete state: same seed, same samples; reruns bitwise.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ImuNoise"]


@dataclass(frozen=True)
class ImuNoise:
    """IMU noise parameters (module docstring); all >= 0, ``sampling_period`` > 0.

    Attributes
    ----------
    accel_noise_density, gyro_noise_density : float
        White-noise densities ``sigma_n``.
    accel_bias_random_walk, gyro_bias_random_walk : float
        Bias random walks ``sigma_b``.
    sampling_period : float
        ``h`` (s): the readings are sampled and held.
    seed : int
    """

    accel_noise_density: float = 0.0
    gyro_noise_density: float = 0.0
    accel_bias_random_walk: float = 0.0
    gyro_bias_random_walk: float = 0.0
    sampling_period: float = 0.005
    seed: int = 0

    def check(self, who: str) -> None:
        """Raise ValueError naming ``who`` for a negative parameter or a bad period/seed."""
        for name in ("accel_noise_density", "gyro_noise_density", "accel_bias_random_walk",
                     "gyro_bias_random_walk"):
            v = getattr(self, name)
            if not (np.isfinite(v) and v >= 0):
                raise ValueError(f"{who}: noise parameter {name} must be finite and >= 0, got {v!r}")
        if not (np.isfinite(self.sampling_period) and self.sampling_period > 0):
            raise ValueError(f"{who}: noise sampling_period must be finite and > 0, got "
                             f"{self.sampling_period!r}")
        if int(self.seed) != self.seed or self.seed < 0:
            raise ValueError(f"{who}: noise seed must be a whole number >= 0, got {self.seed!r}")

    def step(self, bias: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """``(bias_{k+1}, white_k)`` for the 6 axes (accelerometer then gyroscope)."""
        rng = np.random.default_rng([int(self.seed), int(k)])
        xi, eta = rng.standard_normal(6), rng.standard_normal(6)
        h = self.sampling_period
        sb = np.repeat([self.accel_bias_random_walk, self.gyro_bias_random_walk], 3)
        sn = np.repeat([self.accel_noise_density, self.gyro_noise_density], 3)
        return bias + sb * np.sqrt(h) * xi, sn / np.sqrt(h) * eta
