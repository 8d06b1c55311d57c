"""MuJoCo's soft constraints (``solref``, ``solimp``) as the softening of time-stepping rows.

MuJoCo gives every scalar constraint row ``i`` (violation ``r_i``, negative when violated;
velocity ``(J v)_i``) a regularizer and a reference acceleration (MuJoCo documentation,
chapter "Computation", sections "Soft constraints" and "Solver parameters"; Todorov 2014):

.. math::

    R_i = \\frac{1 - d_i}{d_i} \\hat A_i, \\qquad
    a_{ref,i} = -b\\,(J v)_i - k\\, d_i\\, r_i ,

* ``solref = (timeconst, dampratio)`` with ``timeconst > 0``: ``b = 2 / (dmax timeconst)``,
  ``k = 1 / (dmax^2 timeconst^2 dampratio^2)``; MuJoCo's "refsafe" raises ``timeconst`` to
  at least ``2 h``;
* ``solref = (-stiffness, -damping)``: ``b = damping / dmax``, ``k = stiffness / dmax^2``;
* the impedance ``d_i = d(r_i)`` of ``solimp = (dmin, dmax, width, midpoint, power)``:
  ``x = min(|r| / width, 1)``, ``y = x^p / m^(p-1)`` for ``x <= m`` and
  ``1 - (1 - x)^p / (1 - m)^(p-1)`` above, ``d = dmin + y (dmax - dmin)`` (``dmin``, ``dmax``
  and ``m`` clipped to ``[1e-4, 0.9999]``, ``p >= 1``, as MuJoCo does);
* ``Ahat_i`` the diagonal of the Delassus operator ``J M^-1 J^T`` -- MuJoCo uses a constant
  approximation computed at ``qpos0`` (``dof_invweight0`` for joint rows, the bodies'
  translational ``body_invweight0`` for contacts, :func:`mujoco_invweights`); here either
  those constants (``MuJoCoSoftening.invweight``) or the row's own diagonal of
  ``J M(q)^{-1} J^T`` at every step (``M`` with armature, without the plant's implicit
  damping ``h D``, as MuJoCo's ``A``).

The constraint force ``f >= 0`` of a unilateral row then solves ``J a + R f - a_ref >= 0``
complementary to ``f`` (an LCP over ``A + R``). With the semi-implicit Euler step
``v_{n+1} = v + h a`` and the impulse ``p = h f`` this is exactly the time-stepping row
``w = J v_{n+1} + bias + cfm/h p`` (:mod:`multibody.constraints.base`) with

.. math::

    \\mathrm{cfm}_i = h R_i, \\qquad \\mathrm{bias}_i = -(J v)_i - h\\, a_{ref,i} .

A row exists only while its constraint is violated (``r < 0``: a contact closer than its
margin, a joint past its limit), as in MuJoCo. At rest (``v = 0``, ``J a = 0``) a row holds
``R f = -k d r``: the resting violation is ``r = -(1 - d) Ahat f dmax^2 timeconst^2
dampratio^2 / d^2``.

Contacts: MuJoCo's default pyramidal cone has ``2 (condim - 1)`` soft edge rows
``J_n +- mu J_t`` with ``Ahat = 2 mu^2 (1 + mu^2) Ahat_n / impratio`` each, so that the
normal force of a contact at rest sees the regularizer ``R_n = c R(Ahat_n)`` with
``c = mu^2 (1 + mu^2) / (impratio (condim - 1))`` (``c = 1`` for the elliptic cone). Our
normal row takes that ``R_n``; our friction stays hard (Coulomb, no regularization), which is
what MuJoCo's ``noslip`` post-processing makes of its friction rows.

References
----------
E. Todorov, "Convex and analytically-invertible dynamics with contacts and constraints:
theory and implementation in MuJoCo", ICRA 2014.
MuJoCo documentation, "Computation" (https://mujoco.readthedocs.io/en/stable/computation/).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional

import numpy as np

__all__ = ["MuJoCoSoftening", "DEFAULT_SOLREF", "DEFAULT_SOLIMP", "impedance",
           "reference_gains", "soft_rows", "mix_solref", "mix_solimp", "mujoco_invweights"]

DEFAULT_SOLREF = (0.02, 1.0)
"""MuJoCo's default ``solref``: time constant 0.02 s, damping ratio 1."""

DEFAULT_SOLIMP = (0.9, 0.95, 0.001, 0.5, 2.0)
"""MuJoCo's default ``solimp``: ``dmin, dmax, width, midpoint, power``."""

_MINIMP, _MAXIMP = 1e-4, 0.9999
_MINVAL = 1e-15


def check_solref(value, what: str) -> np.ndarray:
    """``solref`` as a finite (2,) array, or ValueError naming ``what``."""
    a = np.asarray(value, float).ravel()
    if a.shape != (2,) or not np.all(np.isfinite(a)):
        raise ValueError(f"{what}: solref must be two finite numbers, got {value!r}")
    return a


def check_solimp(value, what: str) -> np.ndarray:
    """``solimp`` as a finite (5,) array with ``width >= 0`` (MuJoCo's clipping of the other
    entries is applied by :func:`impedance`), or ValueError naming ``what``."""
    a = np.asarray(value, float).ravel()
    if a.shape != (5,) or not np.all(np.isfinite(a)) or a[2] < 0:
        raise ValueError(f"{what}: solimp must be five finite numbers (dmin, dmax, width >= 0, "
                         f"midpoint, power), got {value!r}")
    return a


@dataclass(frozen=True)
class MuJoCoSoftening:
    """MuJoCo softening of a constraint block (module docstring).

    Parameters
    ----------
    solref : (2,) sequence
        The block's ``solref`` (default MuJoCo's ``(0.02, 1)``).
    solimp : (5,) sequence
        The block's ``solimp`` (default ``(0.9, 0.95, 0.001, 0.5, 2)``).
    element_solref, element_solimp : mapping of str to sequence
        Per joint (limits) or per collision geometry (contacts) values replacing the block's;
        a contact mixes its two geometries' values with :func:`mix_solref`/:func:`mix_solimp`.
    element_solmix : mapping of str to float
        Per geometry ``solmix`` weights (default 1).
    invweight : mapping of str to float, optional
        MuJoCo's constant ``Ahat``: per joint (``dof_invweight0``, limits) or per body (the
        translational ``body_invweight0``, contacts: a pair uses the sum of its two bodies;
        bodies not listed count 0, e.g. the world). None: the row's own Delassus diagonal at
        every step.
    cone : str
        ``"pyramidal"`` (MuJoCo's default) or ``"elliptic"``: the normal-row factor ``c`` of
        the module docstring.
    impratio : float
        MuJoCo's ``impratio`` (> 0).
    condim : int
        Contact dimensionality for the pyramidal factor (3: sliding friction).
    refsafe : bool
        MuJoCo's ``timeconst >= 2 h`` (on unless MuJoCo's ``refsafe`` flag is disabled).
    """

    solref: tuple = DEFAULT_SOLREF
    solimp: tuple = DEFAULT_SOLIMP
    element_solref: Mapping[str, tuple] = field(default_factory=dict)
    element_solimp: Mapping[str, tuple] = field(default_factory=dict)
    element_solmix: Mapping[str, float] = field(default_factory=dict)
    invweight: Optional[Mapping[str, float]] = None
    cone: str = "pyramidal"
    impratio: float = 1.0
    condim: int = 3
    refsafe: bool = True

    def __post_init__(self) -> None:
        check_solref(self.solref, "MuJoCo softening")
        check_solimp(self.solimp, "MuJoCo softening")
        for k, v in self.element_solref.items():
            check_solref(v, f"MuJoCo softening of {k!r}")
        for k, v in self.element_solimp.items():
            check_solimp(v, f"MuJoCo softening of {k!r}")
        if self.cone not in ("pyramidal", "elliptic"):
            raise ValueError(f"MuJoCo softening: cone must be 'pyramidal' or 'elliptic', got "
                             f"{self.cone!r}")
        if not (np.isfinite(self.impratio) and self.impratio > 0):
            raise ValueError(f"MuJoCo softening: impratio must be > 0, got {self.impratio}")
        if int(self.condim) not in (1, 3, 4, 6):
            raise ValueError(f"MuJoCo softening: condim must be 1, 3, 4 or 6, got {self.condim}")

    def normal_factor(self, mu: float) -> float:
        """``c`` of the module docstring: the normal row's share of MuJoCo's pyramid."""
        if self.cone == "elliptic" or self.condim == 1:
            return 1.0
        return mu * mu * (1.0 + mu * mu) / (self.impratio * (self.condim - 1))

    def element_values(self, names, base_ref: np.ndarray, base_imp: np.ndarray):
        """``(solref (m, 2), solimp (m, 5))`` of rows naming one element each."""
        ref = np.array([self.element_solref.get(n, base_ref) for n in names], float)
        imp = np.array([self.element_solimp.get(n, base_imp) for n in names], float)
        return ref.reshape(-1, 2), imp.reshape(-1, 5)

    def pair_values(self, pairs, base_ref: np.ndarray, base_imp: np.ndarray):
        """``(solref (m, 2), solimp (m, 5))`` of contacts between geometry pairs (names)."""
        ref, imp = np.empty((len(pairs), 2)), np.empty((len(pairs), 5))
        for i, (a, b) in enumerate(pairs):
            ra = np.asarray(self.element_solref.get(a, base_ref), float)
            rb = np.asarray(self.element_solref.get(b, base_ref), float)
            ia = np.asarray(self.element_solimp.get(a, base_imp), float)
            ib = np.asarray(self.element_solimp.get(b, base_imp), float)
            ma, mb = self.element_solmix.get(a, 1.0), self.element_solmix.get(b, 1.0)
            ref[i], imp[i] = mix_solref(ra, rb, ma, mb), mix_solimp(ia, ib, ma, mb)
        return ref, imp


def _mix_weight(mix_a: float, mix_b: float) -> float:
    if mix_a < _MINVAL and mix_b < _MINVAL:
        return 0.5
    if mix_a < _MINVAL:
        return 0.0
    if mix_b < _MINVAL:
        return 1.0
    return mix_a / (mix_a + mix_b)


def mix_solref(a: np.ndarray, b: np.ndarray, mix_a: float = 1.0, mix_b: float = 1.0) -> np.ndarray:
    """MuJoCo's ``solref`` of a geom pair: the ``solmix``-weighted mean ``w a + (1 - w) b``,
    ``w = mix_a / (mix_a + mix_b)``, when both are of the standard form (positive time
    constant), else the element-wise minimum (MuJoCo XML reference, ``geom/solmix``)."""
    if a[0] > 0 and b[0] > 0:
        w = _mix_weight(mix_a, mix_b)
        return w * np.asarray(a, float) + (1 - w) * np.asarray(b, float)
    return np.minimum(a, b)


def mix_solimp(a: np.ndarray, b: np.ndarray, mix_a: float = 1.0, mix_b: float = 1.0) -> np.ndarray:
    """MuJoCo's ``solimp`` of a geom pair: the ``solmix``-weighted mean."""
    w = _mix_weight(mix_a, mix_b)
    return w * np.asarray(a, float) + (1 - w) * np.asarray(b, float)


def impedance(r, solimp) -> np.ndarray:
    """Impedance ``d(r)`` (module docstring) of violations ``r`` (m,) with ``solimp`` (5,) or
    (m, 5); MuJoCo's sigmoid with its clipping of ``dmin``, ``dmax``, ``midpoint``,
    ``power``."""
    r = np.atleast_1d(np.asarray(r, float))
    s = np.broadcast_to(np.asarray(solimp, float), r.shape + (5,))
    dmin = np.clip(s[:, 0], _MINIMP, _MAXIMP)
    dmax = np.clip(s[:, 1], _MINIMP, _MAXIMP)
    width, mid = s[:, 2], np.clip(s[:, 3], _MINIMP, _MAXIMP)
    power = np.maximum(s[:, 4], 1.0)
    flat = (dmin == dmax) | (width <= _MINVAL)
    x = np.where(flat, 1.0, np.abs(r) / np.where(flat, 1.0, width))
    x = np.minimum(x, 1.0)
    lo = x ** power / mid ** (power - 1)
    hi = 1.0 - (1.0 - x) ** power / (1.0 - mid) ** (power - 1)
    y = np.where(power == 1.0, x, np.where(x <= mid, lo, hi))
    d = dmin + y * (dmax - dmin)
    return np.where(flat, 0.5 * (dmin + dmax), d)


def reference_gains(solref, solimp, h: float, refsafe: bool = True):
    """``(k, b)`` (m,) with ``a_ref = -b J v - k d r`` (module docstring) for ``solref``
    (2,) or (m, 2) and ``solimp`` (5,) or (m, 5)."""
    ref = np.atleast_2d(np.asarray(solref, float))
    imp = np.atleast_2d(np.asarray(solimp, float))
    m = max(ref.shape[0], imp.shape[0])
    ref, imp = np.broadcast_to(ref, (m, 2)), np.broadcast_to(imp, (m, 5))
    dmax = np.clip(imp[:, 1], _MINIMP, _MAXIMP)
    std = ref[:, 0] > 0
    tc = np.where(std, ref[:, 0], 1.0)
    if refsafe:
        tc = np.maximum(tc, 2.0 * h)
    zeta = np.where(std, ref[:, 1], 1.0)
    k = np.where(std, 1.0 / (dmax * dmax * tc * tc * zeta * zeta), -ref[:, 0] / (dmax * dmax))
    b = np.where(std, 2.0 / (dmax * tc), -ref[:, 1] / dmax)
    return k, b


def soft_rows(r, vel, diag, solref, solimp, h: float, refsafe: bool = True):
    """``(cfm, bias)`` (m,) of MuJoCo-softened rows (module docstring).

    Parameters
    ----------
    r : ndarray, shape (m,)
        Violations (negative: violated).
    vel : ndarray, shape (m,)
        Row velocities ``J v`` at the start of the step.
    diag : ndarray, shape (m,)
        ``Ahat`` (MuJoCo's approximation or the row's Delassus diagonal; a pyramidal
        contact's factor already applied).
    solref, solimp : ndarray, shapes (m, 2)/(2,) and (m, 5)/(5,)
    h : float
        Time step.
    """
    r = np.asarray(r, float)
    d = impedance(r, solimp)
    k, b = reference_gains(solref, solimp, h, refsafe)
    R = np.maximum((1.0 - d) / d * np.asarray(diag, float), _MINVAL)
    aref = -b * vel - k * d * r
    return h * R, -np.asarray(vel, float) - h * aref


def mujoco_invweights(tree, q0) -> tuple[dict, dict]:
    """MuJoCo's constant Delassus approximations at ``q0``: ``(joint, body)`` dictionaries,
    ``joint[name]`` = ``dof_invweight0`` of one-DOF joints, the diagonal ``(M^-1)_jj`` of the
    mass matrix (armature included), and ``body[name]`` = the translational
    ``body_invweight0``, ``trace(J_c M^-1 J_c^T) / 3`` with ``J_c`` (3 x nv) the world
    Jacobian of the body's centre of mass (MuJoCo's ``mj_setConst``). Bodies without mass
    are left out (MuJoCo has no such bodies; our massless links carry no geometry)."""
    tree.finalize()
    q0 = np.asarray(q0, float)
    Minv = np.linalg.inv(np.asarray(tree.mass_matrix(q0), float))
    joints = {j.name: float(Minv[j.v_start, j.v_start]) for j in tree.joints if j.nv == 1}
    bodies = {}
    for body in tree.bodies:
        if body.name == "world" or not body.mass > 0:
            continue
        J = np.asarray(tree.jacobian(body.name, q0, np.asarray(body.com, float)), float)[3:6]
        bodies[body.name] = float(np.trace(J @ Minv @ J.T)) / 3.0
    return joints, bodies
