"""Exact linearization (CasADi differentiation) and controllability / observability tests.

For a continuous system xdot = f(t, x, u), y = g(t, x, u) at an operating point (x0, u0):

    A = df/dx, B = df/du, C = dg/dx, D = dg/du,

and likewise with the discrete update x[n+1] = update(x[n], u[n]) for a discrete system.
The Jacobians are exact (algorithmic differentiation of the CasADi graph of the whole
diagram), not finite differences.
"""
from __future__ import annotations

from enum import Enum
from typing import Optional, Union

import casadi as ca
import numpy as np

from ..errors import EquilibriumError, NonFiniteMatrixError
from ..primitives.linear import AffineSystem, LinearSystem
from ..symbolic import CasadiSystem, to_casadi, converted_input_ports
from ..system import System

__all__ = ["linearize", "first_order_taylor_approximation", "PortSelection",
           "controllability_matrix", "is_controllable", "observability_matrix", "is_observable",
           "is_stabilizable", "is_detectable", "EquilibriumError"]


class PortSelection(str, Enum):
    """Which input (or output) ports :func:`linearize` differentiates with respect to.

    ``FIRST`` is Drake's default (``InputPortSelection.kUseFirstInputIfItExists`` and
    ``OutputPortSelection.kUseFirstOutputIfItExists``): the first port that takes part in
    the linearization, or none if there is none. Ports that never take part are skipped:
    optional inputs (a plant's applied forces, zero while unconnected) and abstract outputs
    (contact results), so a plant's first selected input is its actuation. ``NONE`` is
    Drake's ``kNoInput`` / ``kNoOutput``. ``ALL`` (not in Drake) stacks every vector port in
    port order. The plain strings ``"first"``, ``"none"`` and ``"all"`` are accepted too
    (they take precedence over a port of that name).
    """

    FIRST = "first"
    NONE = "none"
    ALL = "all"


PortKey = Union[PortSelection, str, int]


def _jacobians(cs: CasadiSystem, which: str):
    s = cs.symbols
    state = s["x"] if which == "continuous" else s["xd"]
    dyn = cs.f(s["t"], s["x"], s["xd"], s["u"], s["p"]) if which == "continuous" else \
        cs.update(s["t"], s["x"], s["xd"], s["u"], s["p"])
    out = cs.g(s["t"], s["x"], s["xd"], s["u"], s["p"])
    mats = [ca.jacobian(dyn, state), ca.jacobian(dyn, s["u"]), ca.jacobian(out, state),
            ca.jacobian(out, s["u"]), dyn, out]
    return ca.Function("linearization", [s["t"], s["x"], s["xd"], s["u"], s["p"]], mats)


def _operating_point(system: System, context, cs: CasadiSystem):
    for port in converted_input_ports(system):
        ctx = context if context.system is system else system.get_my_context_from_root(context)
        if port.size and not port.is_fixed(ctx):
            raise ValueError(f"linearize: input port '{port.full_name()}' must be fixed in the context "
                             f"(the operating point u0); call port.fix_value(context, u0)")
    return cs.from_context(context)


def _evaluate(system: System, context, cs: Optional[CasadiSystem]):
    cs = cs or to_casadi(system)
    if cs.nx and cs.nxd:
        raise ValueError(f"linearize: system '{system.name}' has both continuous ({cs.nx}) and "
                         f"discrete ({cs.nxd}) states; linearize a purely continuous or discrete system")
    which = "discrete" if cs.nxd else "continuous"
    t, x, xd, u, p = _operating_point(system, context, cs)
    A, B, C, D, dyn, y = (np.asarray(ca.DM(m).full(), float) for m in _jacobians(cs, which)(t, x, xd, u, p))
    _check_finite(system, cs, which, A=A, B=B, C=C, D=D)
    return cs, which, (t, x, xd, u, p), A, B, C, D, dyn.ravel(), y.ravel()


def _check_finite(system: System, cs: CasadiSystem, which: str, **mats) -> None:
    """A NonFiniteMatrixError naming the Jacobian, its first NaN/inf entry and the state it
    belongs to, when the dynamics are not differentiable at the operating point."""
    names = cs.state_names if which == "continuous" else cs.discrete_state_names
    rows = {"A": "dynamics", "B": "dynamics", "C": "output", "D": "output"}
    for key, M in mats.items():
        bad = ~np.isfinite(M)
        if not np.any(bad):
            continue
        i, j = (int(k) for k in np.argwhere(bad)[0])
        where = (f"row {i} ({rows[key]}"
                 + (f" of state {names[i]}" if rows[key] == "dynamics" and i < len(names) else "")
                 + f"), column {j} ("
                 + (f"state {names[j]}" if key in "AC" and j < len(names) else f"u[{j}]") + ")")
        raise NonFiniteMatrixError(
            f"linearize: system '{system.name}': {key} has {int(bad.sum())} non-finite "
            f"entr{'y' if bad.sum() == 1 else 'ies'}, the first {key}[{i}, {j}] = {float(M[i, j])} "
            f"at {where}; the system is not differentiable at this operating point")


def linearize(system: System, context, *, input_port_index: PortKey = PortSelection.FIRST,
              output_port_index: PortKey = PortSelection.FIRST, equilibrium_check: bool = True,
              equilibrium_tolerance: float = 1e-6,
              casadi_system: Optional[CasadiSystem] = None) -> LinearSystem:
    """Exact linearization of ``system`` about the state and inputs in ``context``.

    With ``x`` the state (continuous, or discrete for a discrete system), ``u`` the selected
    input port and ``y`` the selected output port, the result is

    .. math:: \\dot{\\delta x} = A\\,\\delta x + B\\,\\delta u, \\quad
              \\delta y = C\\,\\delta x + D\\,\\delta u,

    with :math:`A = \\partial f/\\partial x`, :math:`B = \\partial f/\\partial u`,
    :math:`C = \\partial g/\\partial x`, :math:`D = \\partial g/\\partial u` at
    :math:`(x_0, u_0)` (``x[n+1]`` in place of ``xdot`` for a discrete system), computed by
    algorithmic differentiation of the CasADi graph (exact, not finite differences). Like
    Drake's ``Linearize``.

    Parameters
    ----------
    system : System
        A symbolic-capable leaf system or diagram (continuous or discrete, not both).
    context : Context
        The operating point: state, parameters, and every vector input port fixed to u0.
    input_port_index, output_port_index : PortSelection, int or str
        The port the linearization's ``u`` (``y``) is: an index, a port name, or a
        :class:`PortSelection`. Default ``PortSelection.FIRST``, Drake's
        ``kUseFirstInputIfItExists`` / ``kUseFirstOutputIfItExists``: the first port that
        takes part (optional inputs and abstract outputs are skipped), if there is one.
        ``"none"`` gives no input (``B`` of shape (n, 0)) or no output (no output port);
        ``"all"`` stacks every vector port in port order. Inputs not selected are held at
        their values in ``context``.
    equilibrium_check : bool
        Refuse a point that is not an equilibrium (``|xdot| > equilibrium_tolerance``, or
        ``|x_next - x| >`` tolerance for a discrete system).
    equilibrium_tolerance : float
    casadi_system : CasadiSystem, optional
        A conversion made earlier with :func:`~systems.symbolic.to_casadi` (saves time).

    Returns
    -------
    LinearSystem
        With A (n, n), B (n, m), C (p, n), D (p, m) (and ``time_period`` for a discrete
        system), plus attributes ``x0`` (n,), ``u0`` (m,), ``y0`` (p,) of the operating
        point. Like Drake's, it has no input port when m = 0 and no output port when p = 0.

    Raises
    ------
    EquilibriumError
        When ``equilibrium_check`` and the point is not an equilibrium (the message gives
        the largest derivative and its state).
    NonFiniteMatrixError
        When a Jacobian has NaN or infinite entries (the message names the matrix, the
        entry and its state).
    ValueError
        For an unknown port, or a selected port that is abstract.
    """
    cs, which, (t, x, xd, u, p), A, B, C, D, dyn, y = _evaluate(system, context, casadi_system)
    state = x if which == "continuous" else xd
    residual = dyn if which == "continuous" else dyn - state
    if equilibrium_check and residual.size and np.max(np.abs(residual)) > equilibrium_tolerance:
        i = int(np.argmax(np.abs(residual)))
        names = cs.state_names if which == "continuous" else cs.discrete_state_names
        what = "xdot" if which == "continuous" else "x_next - x"
        raise EquilibriumError(
            f"linearize: system '{system.name}' is not at an equilibrium: {what}[{i}] ({names[i]}) = "
            f"{residual[i]:.3g} exceeds {equilibrium_tolerance:g}; pass equilibrium_check=False to "
            f"linearize anyway (or use first_order_taylor_approximation)")
    B, C, D, u, y = _select_ports(system, cs, input_port_index, output_port_index, B, C, D, u, y)
    period = cs.update_period if which == "discrete" else 0.0
    lin = LinearSystem(A, B, C, D, time_period=period or 0.0, name=f"{system.name}_linearization")
    lin.x0, lin.u0, lin.y0 = state, u, y
    return lin


def _select_ports(system: System, cs: CasadiSystem, input_key, output_key, B, C, D, u, y):
    """Keep the columns of the selected input port and the rows of the selected output port."""
    sl_in = _port_slice(system, cs.input_slices, input_key, "input")
    sl_out = _port_slice(system, cs.output_slices, output_key, "output")
    u, y = np.asarray(u, float).ravel(), np.asarray(y, float).ravel()
    return B[:, sl_in], C[sl_out, :], D[sl_out, sl_in], u[sl_in], y[sl_out]


def _port_slice(system: System, slices: dict, key, kind: str) -> slice:
    """The slice of ``u`` or ``y`` that the selection ``key`` (a :class:`PortSelection`, an
    index or a name) picks, or a ValueError naming the port."""
    if key is None or isinstance(key, bool):
        raise TypeError(f"linearize: {kind}_port_index={key!r}; give an index, a port name, or "
                        f"PortSelection.FIRST / NONE / ALL ('first', 'none', 'all')")
    if isinstance(key, str) and key in {sel.value for sel in PortSelection}:
        key = PortSelection(key)
        if key is PortSelection.ALL:
            return slice(None)
        ports = system.input_ports if kind == "input" else system.output_ports
        first = next((port for port in ports if port.name in slices), None)
        if key is PortSelection.NONE or first is None:
            return slice(0, 0)
        return slices[first.name]
    try:
        port = (system.get_input_port(key) if kind == "input" else system.get_output_port(key))
    except (ValueError, IndexError, TypeError) as exc:
        raise ValueError(f"linearize: {exc}") from None
    if port.name not in slices:
        raise ValueError(f"linearize: {kind} port '{port.full_name()}' is not part of the "
                         f"linearization (abstract or optional); select another with "
                         f"{kind}_port_index")
    return slices[port.name]


def first_order_taylor_approximation(system: System, context, *,
                                     input_port_index: PortKey = PortSelection.FIRST,
                                     output_port_index: PortKey = PortSelection.FIRST
                                     ) -> AffineSystem:
    """Affine model about any point: xdot = A (x - x0) + B (u - u0) + f(x0, u0), likewise y.

    Written in AffineSystem form: f0 = f(x0, u0) - A x0 - B u0, y0 = g(x0, u0) - C x0 - D u0.
    The ports are selected as in :func:`linearize` (default: the first input and the first
    output, as Drake's ``FirstOrderTaylorApproximation``); inputs not selected are held at
    their values in ``context``.
    """
    cs, which, (t, x, xd, u, p), A, B, C, D, dyn, y = _evaluate(system, context, None)
    B, C, D, u, y = _select_ports(system, cs, input_port_index, output_port_index, B, C, D, u, y)
    state = x if which == "continuous" else xd
    f0 = dyn - (A @ state if A.size else 0.0) - (B @ u if B.size else 0.0)
    y0 = y - (C @ state if C.size else 0.0) - (D @ u if D.size else 0.0)
    period = cs.update_period if which == "discrete" else 0.0
    aff = AffineSystem(A, B, f0, C, D, y0, time_period=period or 0.0, name=f"{system.name}_taylor")
    aff.x0, aff.u0 = state, u
    return aff


def _ab(sys_or_a, b=None):
    if b is not None:
        return np.atleast_2d(np.asarray(sys_or_a, float)), np.atleast_2d(np.asarray(b, float))
    return sys_or_a.A, sys_or_a.B


def controllability_matrix(system, B=None) -> np.ndarray:
    """[B, AB, ..., A^(n-1) B] of a LinearSystem (or of matrices ``A``, ``B``), shape (n, n m)."""
    A, B = _ab(system, B)
    n = A.shape[0]
    blocks, blk = [], B
    for _ in range(n):
        blocks.append(blk)
        blk = A @ blk
    return np.hstack(blocks) if blocks else np.zeros((0, 0))


def _pbh_full_rank(A, B, lam, threshold: Optional[float]) -> bool:
    """Popov-Belevitch-Hautus test at one eigenvalue ``lam`` of A: rank [A - lam I, B] == n.

    Each block is scaled before the rank decision so that the verdict does not depend on
    units: ``A - lam I`` by ``||A||`` and every column of ``B`` (one input) by its norm, the
    scalings that leave controllability unchanged. A singular value counts when it exceeds
    ``threshold`` times the largest one (default ``n * eps * 1e3``), as Drake's threshold is
    relative to the largest pivot of its rank-revealing QR.
    """
    n = A.shape[0]
    a_scale = np.linalg.norm(A, 2)
    col = np.linalg.norm(B, axis=0)
    Bn = B / np.where(col > 0, col, 1.0)
    M = np.hstack([(A - lam * np.eye(n)) / (a_scale if a_scale > 0 else 1.0), Bn.astype(complex)])
    sv = np.linalg.svd(M, compute_uv=False)
    if sv.size == 0 or sv[0] == 0:
        return n == 0
    rtol = (n * np.finfo(float).eps * 1e3) if threshold is None else float(threshold)
    return int(np.sum(sv > rtol * sv[0])) == n


def is_controllable(system, B=None, threshold: Optional[float] = None) -> bool:
    """Whether ``(A, B)`` is controllable, like Drake's ``IsControllable``.

    The Popov-Belevitch-Hautus test (Hautus 1969): ``rank [A - lam I, B] = n`` at every
    eigenvalue ``lam`` of A, which is equivalent to the controllability matrix
    ``[B, AB, ..., A^(n-1) B]`` having rank n but does not raise A to powers. The rank is
    decided relative to the largest singular value after scaling ``A`` and each input
    column of ``B`` to unit norm, so the verdict does not change with the units of time or
    of the inputs (``B = 1e-8 [1; 1]`` with ``A = diag(1, 2)`` is controllable, as in Drake).

    Parameters
    ----------
    system : LinearSystem or array_like of shape (n, n)
        A system (its ``A``, ``B``), or the matrix A when ``B`` is given.
    B : array_like of shape (n, m), optional
    threshold : float, optional
        Relative tolerance on the singular values (default ``n * eps * 1e3``).

    Returns
    -------
    bool
    """
    A, B = _ab(system, B)
    return all(_pbh_full_rank(A, B, lam, threshold) for lam in np.linalg.eigvals(A))


def is_stabilizable(system, B=None, threshold: Optional[float] = None) -> bool:
    """Whether every unstable or marginal mode is controllable (PBH test at the eigenvalues
    with ``Re >= 0``, or ``|lam| >= 1`` for a discrete ``system`` with ``time_period > 0``)."""
    discrete = B is None and getattr(system, "time_period", 0.0) > 0
    A, B = _ab(system, B)
    lams = [lam for lam in np.linalg.eigvals(A)
            if (abs(lam) >= 1.0 if discrete else lam.real >= 0.0)]
    return all(_pbh_full_rank(A, B, lam, threshold) for lam in lams)


def observability_matrix(system, C=None) -> np.ndarray:
    """[C; CA; ...; C A^(n-1)] of a LinearSystem (or of matrices ``A``, ``C``), shape (n p, n)."""
    if C is not None:
        A, C = np.atleast_2d(np.asarray(system, float)), np.atleast_2d(np.asarray(C, float))
    else:
        A, C = system.A, system.C
    return controllability_matrix(A.T, C.T).T


def _ac(system, C=None):
    if C is not None:
        return np.atleast_2d(np.asarray(system, float)), np.atleast_2d(np.asarray(C, float))
    return system.A, system.C


def is_observable(system, C=None, threshold: Optional[float] = None) -> bool:
    """Whether ``(A, C)`` is observable, like Drake's ``IsObservable``: the dual test
    :func:`is_controllable` of ``(A^T, C^T)`` (each output row of C scaled to unit norm,
    ``threshold`` relative to the largest singular value).

    Parameters
    ----------
    system : LinearSystem or array_like of shape (n, n)
        A system (its ``A``, ``C``), or the matrix A when ``C`` is given.
    C : array_like of shape (p, n), optional
    threshold : float, optional

    Returns
    -------
    bool
    """
    A, C = _ac(system, C)
    return is_controllable(A.T, C.T, threshold)


def is_detectable(system, C=None, threshold: Optional[float] = None) -> bool:
    """Whether every unstable or marginal mode is observable (dual of
    :func:`is_stabilizable`)."""
    discrete = C is None and getattr(system, "time_period", 0.0) > 0
    A, Cm = _ac(system, C)
    lams = [lam for lam in np.linalg.eigvals(A)
            if (abs(lam) >= 1.0 if discrete else lam.real >= 0.0)]
    return all(_pbh_full_rank(A.T, Cm.T, lam, threshold) for lam in lams)
