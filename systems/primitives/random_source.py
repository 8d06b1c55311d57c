"""``RandomSource``: seeded random samples held between periodic updates (Drake's block).

Every ``sampling_interval`` a periodic discrete update draws ``num_outputs`` independent
samples, standard normal (``"gaussian"``) or uniform on [0, 1) (``"uniform"``), and the output
holds them until the next update (a zero-order hold of white noise). The draw for update
``k`` comes from the generator seeded with ``(seed, k)``, and ``k`` is part of the discrete
state: the same seed and context give the same samples, a rerun from a copy of a context is
bitwise identical, and two contexts never share a random stream. Scale and shift the output
with a ``Gain``/``Adder`` (or in the consuming block) for other means and variances.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..leaf_system import LeafSystem

__all__ = ["RandomSource"]


class RandomSource(LeafSystem):
    """Held random samples (module docstring).

    Parameters
    ----------
    distribution : {"gaussian", "uniform"}
    num_outputs : int
        Size of the output ``y`` (>= 1).
    sampling_interval : float
        Period of the draws (s), > 0.
    seed : int
        Seed of the stream (>= 0).
    name : str, optional

    Raises
    ------
    ValueError
        An unknown distribution, a non-positive size or interval, a negative seed.
    """

    DISTRIBUTIONS = ("gaussian", "uniform")

    def __init__(self, distribution: str, num_outputs: int, sampling_interval: float,
                 seed: int = 0, name: Optional[str] = None):
        super().__init__(name)
        who = f"RandomSource '{self.name}'"
        if distribution not in self.DISTRIBUTIONS:
            raise ValueError(f"{who}: distribution must be 'gaussian' or 'uniform', got "
                             f"{distribution!r}")
        if int(num_outputs) != num_outputs or num_outputs < 1:
            raise ValueError(f"{who}: num_outputs must be a whole number >= 1, got {num_outputs!r}")
        h = float(sampling_interval)
        if not (np.isfinite(h) and h > 0):
            raise ValueError(f"{who}: sampling_interval must be finite and > 0, got "
                             f"{sampling_interval!r}")
        if int(seed) != seed or seed < 0:
            raise ValueError(f"{who}: seed must be a whole number >= 0, got {seed!r}")
        self.distribution, self.n, self.sampling_interval = distribution, int(num_outputs), h
        self.seed = int(seed)
        self.declare_discrete_state(np.concatenate([self._draw(0), [0.0]]))
        self.declare_output_port("y", self.n, lambda c: c.discrete_state[:self.n],
                                 feedthrough=False, prerequisites=["discrete_state"])
        self.declare_periodic_discrete_update(h, 0.0, self._update)

    def _draw(self, k: int) -> np.ndarray:
        rng = np.random.default_rng([self.seed, int(k)])
        if self.distribution == "gaussian":
            return rng.standard_normal(self.n)
        return rng.random(self.n)

    def _update(self, context):
        k = int(context.discrete_state[self.n]) + 1
        return np.concatenate([self._draw(k), [float(k)]])
