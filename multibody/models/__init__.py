"""Shipped models: URDF files (``model_path``) and small builders made in code.

Lives here: the URDF files of this folder (``pendulum``, ``acrobot``, ``arm7``,
``branching``, ``humanoid``, ``quadruped``, ...), :func:`model_path` and
:func:`available_models` to find them, and builders that return a
:class:`~multibody.tree.RigidBodyTree`: :func:`pendulum`, :func:`acrobot`,
:func:`cart_pole`, :func:`quadruped` (from the URDF files), :func:`four_bar`, :func:`slider_crank`,
:func:`bouncing_ball`, :func:`box_on_ground`, :func:`leaning_rod`, the free and revolute
pendulums used to check closures; the human dynamic model (:func:`human_model`, a
:class:`HumanModel` from an HDM skeleton file). May import the tree, geometry and parsing
layers, never ``systems``.
"""
from __future__ import annotations

import pathlib

from ..parsing import parse_urdf
from ._builders import (G, ball_on_ground, box_on_ground, four_bar_frequency, free_pendulum,
                        free_pendulum_state, leaning_rod, parallelogram_four_bar,
                        revolute_pendulum, slider_crank, slider_crank_guess)
from .human import HumanModel, human_model, skeleton_height

__all__ = ["model_path", "available_models", "pendulum", "acrobot", "cart_pole", "quadruped",
           "four_bar",
           "parallelogram_four_bar", "four_bar_frequency", "slider_crank", "slider_crank_guess",
           "bouncing_ball", "ball_on_ground", "box_on_ground", "leaning_rod", "free_pendulum",
           "free_pendulum_state", "revolute_pendulum", "G"]
__all__ += ["HumanModel", "human_model", "skeleton_height"]

_MODELS_DIR = pathlib.Path(__file__).resolve().parent

def available_models() -> list[str]:
    """Names of the URDF models shipped in ``multibody/models`` (sorted)."""
    return sorted(p.stem for p in _MODELS_DIR.glob("*.urdf"))


def model_path(name: str) -> pathlib.Path:
    """Path of a shipped URDF model.

    Parameters
    ----------
    name : str
        Model name, e.g. ``"acrobot"`` (a trailing ``".urdf"`` is accepted).

    Returns
    -------
    pathlib.Path

    Raises
    ------
    ValueError
        If there is no such model; the message lists the available names.

    Examples
    --------
    >>> from multibody.models import model_path
    >>> model_path("acrobot").name
    'acrobot.urdf'
    """
    stem = name[:-5] if name.endswith(".urdf") else name
    path = _MODELS_DIR / f"{stem}.urdf"
    if not path.is_file():
        raise ValueError(f"no shipped URDF model named '{name}'; available: {', '.join(available_models())}")
    return path



def pendulum():
    """The shipped simple pendulum (``pendulum.urdf``)."""
    return parse_urdf(model_path("pendulum"))


def acrobot():
    """The shipped acrobot (``acrobot.urdf``, Spong's parameters as in Drake)."""
    return parse_urdf(model_path("acrobot"))


def cart_pole():
    """The shipped cart-pole (``cart_pole.urdf``): Drake's standard parameters, cart 10 kg on
    a rail along x, a 1 kg point mass at the end of a 0.5 m pole, tip at ``x + 0.5 sin(theta)`` (``theta = 0``
    hanging down, ``pi`` upright), rail force limit 100 N."""
    return parse_urdf(model_path("cart_pole"))


def quadruped(floating_base: bool = True):
    """The shipped quadruped (``quadruped.urdf``), with a free base by default."""
    return parse_urdf(model_path("quadruped"), floating_base=floating_base)


def four_bar(**kwargs):
    """Planar parallelogram four-bar (:func:`parallelogram_four_bar`): a tree of three rods
    whose frame ``tip`` closes on the world frame ``pivot_b``."""
    return parallelogram_four_bar(**kwargs)


def bouncing_ball(radius: float = 0.1, mass: float = 1.0):
    """A free sphere above a ground halfspace (:func:`ball_on_ground`)."""
    return ball_on_ground(radius=radius, mass=mass)
