"""Runs of error-controlled steps on Python floats, their source written out once per state
size (private to the float steppers of :mod:`systems.analysis.integrators`: the
Bogacki-Shampine ``runge_kutta3`` and the Dormand-Prince ``RK45``).

For a handful of states the integrator's own Python is a large part of a simulation's time:
loops over the entries, lists, zips and one call per step. :func:`make_run` generates the
function ``run(t, x, k0, t_limit, h, t_event, t_final, check)`` with every entry a local
variable (``x0, x1, ...``; the stages ``p0, q0, ...``) around a scheme's step (its *body*,
given as source lines by the scheme's module), which takes accepted steps until one ends
where the caller has something to do:

* ``t >= t_final``, or an event due at ``t_event`` within the simulator's merge tolerance
  ``1e-12 max(1, |t|)``, or ``t_limit`` within time's resolution (``4 ulp``) -- the stops
  of the :class:`~systems.analysis.Simulator`'s loop (``t_final = -inf``: one step);
* each accepted state is checked for finiteness first (``check(t_new, x_new, t)`` when the
  sum of its entries is not finite: the simulator's locator, which raises naming the leaf).

Whatever happens (a stop, a callback's exception, a non-finite state, a step size below
time's resolution), ``save(t, x, k0, t_prev, x_prev, k0_prev, h, steps)`` hands the last
accepted step back to the stepper on the way out, so its state is what step-by-step
stepping would have left. The arithmetic is the scheme's, expression for expression, so the
numbers are the same bits as the per-step paths.
"""
from __future__ import annotations

import math
import struct
from typing import Callable, Dict, List

import numpy as np

from ..errors import StepSizeError

__all__ = ["make_run", "entries", "finite", "evaluate", "checked"]

_CODE: Dict[tuple, object] = {}   # (body, n, form of the inlined source) -> code of its run
_PACK: Dict[int, Callable] = {}


def entries(fmt: str, n: int) -> str:
    """``fmt`` formatted for ``i = 0 .. n-1``, comma-separated (``"x{i}"`` -> ``x0, x1``)."""
    return ", ".join(fmt.format(i=i) for i in range(n))


def finite(k: str, n: int, indent: str = "    ") -> List[str]:
    """Body lines testing the entries ``k0..`` of a stage just evaluated at time ``ts``:
    ``report(ts, [k0, ...])`` when their sum is not finite (the derivative function's own
    check, moved here; see :func:`checked`)."""
    return [f"{indent}if not isfinite({' + '.join(f'{k}{i}' for i in range(n))}):",
            f"{indent}    report(ts, [{entries(k + '{i}', n)}])"]


def evaluate(k: str, x: str, keep: str = "") -> str:
    """A body line (indented by 4) evaluating the derivative at time ``ts`` and the frozen
    state ``x`` (an expression) into the entries ``k0..``, checked for finiteness as
    :func:`finite` does; with ``keep``, also the list of the entries under that name.
    :func:`make_run` writes it out: ``f(ts, x)``, or the derivative function's own source
    when it offers it (``f.inline``, see :func:`make_run`)."""
    return f"    EVAL {k} {keep or '-'} {x}"


def _expand(lines: List[str], n: int, inline) -> List[str]:
    """``lines`` with each :func:`evaluate` line written out."""
    out = []
    for line in lines:
        if not line.lstrip().startswith("EVAL "):
            out.append(line)
            continue
        ind = line[:len(line) - len(line.lstrip())]
        _, k, keep, x = line.strip().split(" ", 3)
        ks = entries(k + "{i}", n)
        if inline is None:
            out += [f"{ind}{keep} = f(ts, {x})", f"{ind}{ks}, = {keep}"] if keep != "-" else \
                [f"{ind}{ks}, = f(ts, {x})"]
        else:
            if not x.isidentifier():
                out.append(f"{ind}d_x = {x}")
                x = "d_x"
            out += [ind + stmt for stmt in inline.lines(k, x)]
            if keep != "-":
                out.append(f"{ind}{keep} = [{ks}]")
        out += finite(k, n, ind)
    return out


def _source(n: int, body: List[str]) -> str:
    ys, us = entries("y{i}", n), entries("u{i}", n)
    lines = [
        "def run(t, x, k0, t_limit, hn, t_event, t_final, check):",
        f"    {entries('x{i}', n)}, = x.tolist()",
        f"    {entries('p{i}', n)}, = k0",
        "    steps = 0",
        "    tp = xp = kp = None",
        "    try:",
        "        while True:",
        *("            " + line for line in body),
        f"            if not isfinite({' + '.join(f'y{i}' for i in range(n))}):",
        "                check(t_new, x_new, t)",
        "            steps += 1",
        "            tp, xp, kp, t, x, k0 = t, x, k0, t_new, x_new, k_new",
        f"            {entries('x{i}', n)}, = {ys},",
        f"            {entries('p{i}', n)}, = {us},",
        "            if t >= t_final:",
        "                return",
        "            s = t if t > 1.0 else -t if t < -1.0 else 1.0   # max(1, |t|)",
        "            if t_event <= t + 1e-12 * s or t_limit - t <= 1e-12 * s and \\",
        "                    t_limit - t <= 4.0 * ulp(s):   # (4 ulp(s) < 1e-12 s: ulp rarely)",
        "                return",
        "    finally:",
        "        save(t, x, k0, tp, xp, kp, hn, steps)",
    ]
    return "\n".join(lines) + "\n"


def _unchecked(t, values) -> None:
    """No check (a derivative function without a list form of its own checks nothing)."""


def checked(f) -> tuple:
    """``(g, report)``: ``f.unchecked`` when ``f`` has it (``g`` is ``f`` without its
    finiteness check, ``report(t, values)`` raises what ``f`` would have for ``values``),
    else ``f`` itself and a report that does nothing."""
    return getattr(f, "unchecked", None) or (f, _unchecked)


def make_run(scheme: str, n: int, body: Callable[[int], List[str]], scope: dict, inline=None):
    """The run function of ``scheme`` for ``n`` entries (see the module docstring).

    Parameters
    ----------
    scheme : str
        Names the generated code (its key in the cache of compiled sources).
    n : int
        Entries of the state.
    body : callable
        ``body(n) -> lines``: one accepted step from ``(t, x0.., p0..)`` with proposal
        ``hn``, leaving ``t_new``, ``x_new`` (frozen array), ``y0..`` (its entries),
        ``k_new`` (the derivative there, a list), ``u0..`` (its entries) and the next
        proposal in ``hn``; it may use ``pk`` (pack n doubles), ``fb`` (``np.frombuffer``),
        ``ulp``, ``sqrt``, ``isfinite``, ``nextafter``, ``inf``, ``StepSizeError``.
    scope : dict
        The body's other names (``f``, ``save``, ``rejected``, the scheme's constants).
    inline : object, optional
        The derivative function's own source (``f.inline`` of the Simulator's list form,
        :mod:`systems.analysis._derivatives`): ``inline.lines(k, x)`` are statements
        (unindented) that do what ``k0, k1, ..., = f(ts, x)`` does for a name ``x`` but the
        finiteness check, over the names (``d_*``, ``ld_*``) of ``inline.scope``;
        ``inline.key`` names their form. Each :func:`evaluate` line of the body becomes
        them (no call of ``f``, of its loader, no list made and unpacked).

    Returns
    -------
    callable
        ``run(t, x, k0, t_limit, h, t_event, t_final, check)``.
    """
    key = (body, n, None if inline is None else inline.key)   # the body function itself
    code = _CODE.get(key)
    if code is None:
        code = _CODE[key] = compile(_source(n, _expand(body(n), n, inline)),
                                    f"<{scheme} run, {n} states>", "exec")
    pk = _PACK.get(n)
    if pk is None:
        pk = _PACK[n] = struct.Struct(f"{n}d").pack
    scope = dict(scope, pk=pk, fb=np.frombuffer, ulp=math.ulp, sqrt=math.sqrt,
                 isfinite=math.isfinite, nextafter=math.nextafter, inf=math.inf,
                 StepSizeError=StepSizeError, **({} if inline is None else inline.scope))
    exec(code, scope)   # noqa: S102 - our own generated source (above), no user text
    return scope["run"]
