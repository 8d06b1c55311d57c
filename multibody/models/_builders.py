"""Small closed-chain and contact models (built in code) shared by the RigidBodySystem
tests and examples."""
from __future__ import annotations

import numpy as np

from ..tree.joints import Free, Prismatic, Revolute
from ..tree import RigidBodyTree

G = 9.81


def _rod(tree, name, mass, length, along):
    """Uniform thin rod of ``length`` from the body origin along unit vector ``along``."""
    a = np.asarray(along, float)
    I = mass * length ** 2 / 12.0 * (np.eye(3) - np.outer(a, a))
    tree.add_body(name, mass, com=0.5 * length * a, inertia=I + 1e-9 * np.eye(3))


def parallelogram_four_bar(l=0.5, d=0.8, m1=1.0, m2=2.0, m3=1.5):
    """Planar (x-z) parallelogram four-bar hanging from pivots (0,0,0) and (d,0,0).

    Crank 1 (length l, mass m1) from the world pivot, coupler (length d, mass m2), crank 2
    (length l, mass m3) whose tip frame ``tip`` closes on the world frame ``pivot_b``.
    q = (theta, -theta, theta) keeps the loop closed; the coupler translates.
    """
    t = RigidBodyTree("four_bar")
    _rod(t, "crank1", m1, l, (0, 0, -1))
    _rod(t, "coupler", m2, d, (1, 0, 0))
    _rod(t, "crank2", m3, l, (0, 0, 1))
    E = np.eye(4)
    t.add_joint(Revolute("j1", "world", "crank1", axis=(0, 1, 0)))
    X = E.copy(); X[2, 3] = -l
    t.add_joint(Revolute("j2", "crank1", "coupler", origin=X, axis=(0, 1, 0)))
    X = E.copy(); X[0, 3] = d
    t.add_joint(Revolute("j3", "coupler", "crank2", origin=X, axis=(0, 1, 0)))
    X = E.copy(); X[2, 3] = l
    t.add_frame("tip", "crank2", X)
    X = E.copy(); X[0, 3] = d
    t.add_frame("pivot_b", "world", X)
    return t


def four_bar_frequency(l=0.5, d=0.8, m1=1.0, m2=2.0, m3=1.5, g=G):
    """Small-oscillation angular frequency of :func:`parallelogram_four_bar` about hanging:
    M_eff = (m1 + m3) l^2 / 3 + m2 l^2 (+ the tiny 1e-9 inertias), K_eff = g l ((m1+m3)/2 + m2)."""
    M = (m1 + m3) * l ** 2 / 3.0 + m2 * l ** 2 + 2e-9
    K = g * l * ((m1 + m3) / 2.0 + m2)
    return np.sqrt(K / M)


def slider_crank(r=0.2, L=0.6, m_crank=1.0, m_rod=0.5, m_slider=2.0):
    """Slider-crank in the x-z plane: crank (length r) about the world y axis, rod (length
    L), slider on a prismatic x joint; the rod tip frame ``rod_tip`` closes on the slider."""
    t = RigidBodyTree("slider_crank")
    _rod(t, "crank", m_crank, r, (1, 0, 0))
    _rod(t, "rod", m_rod, L, (1, 0, 0))
    t.add_body("slider", m_slider, inertia=0.01 * np.eye(3))
    E = np.eye(4)
    t.add_joint(Revolute("crank_joint", "world", "crank", axis=(0, 1, 0)))
    X = E.copy(); X[0, 3] = r
    t.add_joint(Revolute("rod_joint", "crank", "rod", origin=X, axis=(0, 1, 0)))
    t.add_joint(Prismatic("slider_joint", "world", "slider", axis=(1, 0, 0)))
    X = E.copy(); X[0, 3] = L
    t.add_frame("rod_tip", "rod", X)
    return t


def slider_crank_guess(theta, r=0.2, L=0.6):
    """Closed configuration (crank angle ``theta``) of :func:`slider_crank`: q = (theta,
    rod angle relative to the crank, slider x). Rotation about y by a maps x to (cos a, 0, -sin a)."""
    phi = np.arcsin(-r * np.sin(theta) / L)  # absolute rod angle with tip z = 0
    return np.array([theta, phi - theta, r * np.cos(theta) + L * np.cos(phi)])


_BALL_INERTIA = 0.02 * np.eye(3)


def revolute_pendulum(l=0.7, m=1.5):
    """Pendulum about the world y axis, point-like bob (inertia 0.02 I) at distance l."""
    t = RigidBodyTree("revolute_pendulum")
    t.add_body("bob", m, com=(0, 0, -l), inertia=_BALL_INERTIA)
    t.add_joint(Revolute("hinge", "world", "bob", axis=(0, 1, 0)))
    return t


def free_pendulum(l=0.7, m=1.5):
    """The same pendulum as a free body (origin at its COM) with a frame ``pivot`` at
    (0, 0, l): closed with ``BallConstraint(tree, "world", "pivot")``."""
    t = RigidBodyTree("free_pendulum")
    t.add_body("bob", m, inertia=_BALL_INERTIA)
    t.add_joint(Free("float", "world", "bob"))
    X = np.eye(4); X[2, 3] = l
    t.add_frame("pivot", "bob", X)
    return t


def free_pendulum_state(theta, l=0.7):
    """q of :func:`free_pendulum` rotated by ``theta`` about y with the pivot at the origin."""
    c, s = np.cos(theta), np.sin(theta)
    R = np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])
    p = -R @ np.array([0.0, 0.0, l])
    return np.concatenate([[np.cos(theta / 2), 0.0, np.sin(theta / 2), 0.0], p])


def ball_on_ground(radius=0.1, mass=1.0):
    """A free sphere (solid-sphere inertia) above a ground halfspace (z <= 0)."""
    from ..geometry import Halfspace, Sphere
    t = RigidBodyTree("ball")
    t.add_body("ball", mass, inertia=0.4 * mass * radius ** 2 * np.eye(3))
    t.add_joint(Free("float", "world", "ball"))
    t.add_collision_geometry("ball", Sphere(radius), name="ball_sphere")
    t.add_collision_geometry("world", Halfspace(), name="ground")
    return t


def box_on_ground(size=(0.4, 0.3, 0.2), mass=2.0):
    """A free box (solid-box inertia) above a ground halfspace."""
    from ..geometry import Box, Halfspace
    lx, ly, lz = size
    I = mass / 12.0 * np.diag([ly ** 2 + lz ** 2, lx ** 2 + lz ** 2, lx ** 2 + ly ** 2])
    t = RigidBodyTree("box")
    t.add_body("box", mass, inertia=I)
    t.add_joint(Free("float", "world", "box"))
    t.add_collision_geometry("box", Box(size), name="box_geom")
    t.add_collision_geometry("world", Halfspace(), name="ground")
    return t


def leaning_rod(theta=np.pi / 6, half_length=0.5, mass=1.0):
    """A thin free rod (a 2L x 0.01 x 0.01 box) tilted by ``theta`` about y over the ground;
    place it with :func:`place_on_ground`. Its lower end is at +x."""
    from ..geometry import Box, Halfspace
    L = half_length
    t = RigidBodyTree("rod")
    t.add_body("rod", mass, inertia=np.diag([1e-5, mass * L ** 2 / 3, mass * L ** 2 / 3]))
    t.add_joint(Free("float", "world", "rod"))
    t.add_collision_geometry("rod", Box((2 * L, 0.01, 0.01)), name="rod_box")
    t.add_collision_geometry("world", Halfspace(), name="ground")
    q = np.array([np.cos(theta / 2), 0.0, np.sin(theta / 2), 0.0, 0.0, 0.0, 1.0])
    return t, q
