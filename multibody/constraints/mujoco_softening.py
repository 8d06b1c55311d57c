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

MuJoCo's two-stage contact solve (``MuJoCoSoftening(noslip=True)``, pyramidal cone, condim
3): MuJoCo's own rows instead (``mj_instantiateContact``, ``mj_makeImpedance``, ``mj_solNoSlip``
in MuJoCo's ``engine_core_constraint.c`` and ``engine_solver.c``):

1. every contact gives the ``2 (condim - 1)`` pyramid edges ``J_n + mu J_{t_i}``,
   ``J_n - mu J_{t_i}`` (``t_1, t_2`` MuJoCo's contact frame, :func:`mujoco_frame`), each a
   unilateral soft row (force ``f >= 0``) with the contact's violation and impedance,
   ``a_ref = -b J_e v - k d r`` and ``R = (1 - d)/d Ahat_e``,
   ``Ahat_e = 2 mu^2 (1 + mu^2) Ahat_n / impratio`` (:meth:`MuJoCoSoftening.edge_factor`);
   the normal force is the sum of the edges' forces, the friction along ``t_i`` is
   ``mu (f_{i+} - f_{i-})``. The soft problem (an LCP over ``A + R``, positive definite) has
   one solution, which the pivoting step finds exactly (MuJoCo's PGS/CG/Newton iterate to it);
2. no-slip: every pair's sum ``f_{i+} + f_{i-} = 2 m_i`` and every other row's force held
   at the stage-1 values, the pair differences ``y_i`` (``f_{i+-} = m_i +- y_i``) minimize
   the *unregularized* cost ``1/2 f^T A f + f^T b`` over ``|y_i| <= m_i`` (MuJoCo's noslip
   Gauss-Seidel sweeps converge to this minimum): the boxed LCP of :func:`noslip_impulses`.
   At an interior ``y_i`` the pair's residuals are equal, i.e. ``J_{t_i} a = -b J_{t_i} v``
   (the contact's tangential acceleration takes the reference damping; the stiffness term
   is the same for both edges and cancels).

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
           "reference_gains", "soft_rows", "mix_solref", "mix_solimp", "mujoco_invweights",
           "mujoco_frame", "pyramid_edges", "noslip_impulses"]

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
    noslip : bool
        Contacts: MuJoCo's two-stage solve (module docstring) -- soft pyramid edges, then the
        hard friction with the normal forces fixed (MuJoCo's ``noslip_iterations > 0``,
        iterated to convergence). Needs the pyramidal cone and ``condim`` 1 or 3; only the
        pivoting step takes it. False: soft normals with hard Coulomb friction, one solve.
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
    noslip: bool = False

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
        if self.noslip and (self.cone != "pyramidal" or int(self.condim) not in (1, 3)):
            raise ValueError(f"MuJoCo softening: noslip needs the pyramidal cone and condim 1 or "
                             f"3, got cone={self.cone!r}, condim={self.condim}")

    def edge_factor(self, mu: float) -> float:
        """``Ahat_e / Ahat_n = 2 mu^2 (1 + mu^2) / impratio`` of every pyramid edge (MuJoCo's
        diagonal approximation ``(1 + mu^2) Ahat_n`` of an edge, its friction regularizer
        ``R / impratio`` and the pyramid's common ``R_py = 2 mu_reg^2 R``)."""
        return 2.0 * mu * mu * (1.0 + mu * mu) / self.impratio

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


def mujoco_frame(n, hint=None) -> tuple[np.ndarray, np.ndarray]:
    """MuJoCo's contact frame tangents ``(t1, t2)`` (m, 3) of unit normals ``n`` (m, 3)
    (``mju_makeFrame``): ``t1`` the collider's tangent ``hint`` (m, 3) where it has length
    ``>= 0.5`` (MuJoCo's plane-capsule collider gives the capsule axis), else the world y
    axis (the z axis when ``|n_y| >= 0.5``), projected on the tangent plane and normalized
    (``(1, 0, 0)`` if that vanishes); ``t2 = n x t1``."""
    n = np.asarray(n, float).reshape(-1, 3)
    a = np.zeros_like(n)
    use_y = np.abs(n[:, 1]) < 0.5
    a[use_y, 1] = 1.0
    a[~use_y, 2] = 1.0
    if hint is not None:
        hint = np.asarray(hint, float).reshape(-1, 3)
        given = np.sum(hint * hint, axis=1) >= 0.25
        a[given] = hint[given]
    t1 = a - np.sum(a * n, axis=1, keepdims=True) * n
    norm = np.linalg.norm(t1, axis=1)
    tiny = norm < _MINVAL
    t1[tiny], norm[tiny] = (1.0, 0.0, 0.0), 1.0
    t1 /= norm[:, None]
    return t1, np.cross(n, t1)


def pyramid_edges(Jn: np.ndarray, Jt: np.ndarray, mu: float) -> np.ndarray:
    """The pyramid edge rows (module docstring) of ``nc`` contacts: ``Jn`` (nc, nv) normal
    rows, ``Jt`` (nc, k, nv) tangent rows; (nc * 2k, nv), per contact
    ``J_n + mu J_t1, J_n - mu J_t1, J_n + mu J_t2, ...`` (MuJoCo's order)."""
    Jn = np.asarray(Jn, float)
    Jt = np.asarray(Jt, float)
    edges = np.stack([Jn[:, None, :] + mu * Jt, Jn[:, None, :] - mu * Jt], axis=2)
    return edges.reshape(-1, Jn.shape[1])


def noslip_impulses(A: np.ndarray, b: np.ndarray, p: np.ndarray, pairs: np.ndarray,
                    context: str = "no-slip solve", tol: float = 1e-10) -> np.ndarray:
    """MuJoCo's no-slip stage (module docstring), solved exactly.

    With ``S`` (m, k) holding ``+1, -1`` at the two rows of each pair and ``p_0`` the
    impulses ``p`` with each pair's two entries replaced by their mean ``m_i``, the new
    impulses are ``p_0 + S y`` with ``y`` (k,) the solution of the boxed LCP

    .. math::

        (S^T A S)\\,y + S^T (A p_0 + b) = w, \\qquad -m_i \\le y_i \\le m_i,

    (``w_i = 0`` inside, ``>= 0`` at ``-m_i``, ``<= 0`` at ``m_i``): the minimum of
    ``1/2 p^T A p + p^T b`` over the pair differences (MuJoCo's ``mj_solNoSlip``).

    Parameters
    ----------
    A : ndarray, shape (m, m)
        The rows' Delassus operator ``J M^{-1} J^T`` *without* regularization.
    b : ndarray, shape (m,)
        ``J v_free + bias`` (impulse-free row velocities with the rows' bias).
    p : ndarray, shape (m,)
        Stage-1 impulses.
    pairs : ndarray of int, shape (k, 2)
        Row indices of opposing pyramid edges.
    context, tol
        Names the step in errors; residual acceptance of the LCP.

    Returns
    -------
    ndarray, shape (m,)
        The impulses after the no-slip stage (rows outside ``pairs`` unchanged).

    Raises
    ------
    solvers.lcp.LCPSolveError
        Neither Dantzig's method nor Lemke's solves the boxed LCP.
    """
    from solvers.lcp import solve_boxed_lcp

    p = np.array(p, float)
    pairs = np.asarray(pairs, int).reshape(-1, 2)
    mid = 0.5 * (p[pairs[:, 0]] + p[pairs[:, 1]])
    live = mid > 0
    pairs, mid = pairs[live], mid[live]
    if pairs.shape[0] == 0:
        return p
    p[pairs[:, 0]] = p[pairs[:, 1]] = mid
    S = np.zeros((p.shape[0], pairs.shape[0]))
    S[pairs[:, 0], np.arange(pairs.shape[0])] = 1.0
    S[pairs[:, 1], np.arange(pairs.shape[0])] = -1.0
    A2 = S.T @ A @ S
    b2 = S.T @ (A @ p + b)
    res = solve_boxed_lcp(A2, b2, -mid, mid, method="dantzig", residual_tol=tol,
                          context=context)
    if not res.success:           # e.g. a singular S^T A S (more pairs than free directions)
        res = solve_boxed_lcp(A2, b2, -mid, mid, method="lemke", raise_on_failure=True,
                              residual_tol=tol, context=context)
    return p + S @ np.clip(res.x, -mid, mid)
