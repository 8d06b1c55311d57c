"""A compiled time step for rigid-body trees with point contacts: contact detection of every
geometry pair (the narrow phase of :mod:`solvers.collision` compiled into the kernel: closed
forms, box-box manifolds, GJK/EPA with flat-face manifolds), rows, Delassus blocks, block
projected Gauss-Seidel with the friction disc, and the integration, in one C call.

Given the tree's dynamics terms at the start of a step (mass matrix ``H``, ``c = C -
tau_passive``, body poses and the world-axes motion columns ``S = [W; U]``, one compiled
CasADi call of the plant), :class:`ContactStepKernel` computes

.. math::

    (H + h D)(v_n - v_{free}) = J^T p ,\\qquad
    v_{free} = v + h (H + h D)^{-1} (\\tau - c) ,

with, for every active contact ``k`` (rows ``J_k`` = normal, two tangents; 3 x nv),
``w_k = J_k v_n + b_k + (cfm/h) p_k`` and the Coulomb conditions of the friction *disc*

.. math::

    0 \\le p_{n} \\perp w_{n} \\ge 0 ,\\qquad
    \\|p_t\\| \\le \\mu p_n ,\\qquad
    w_t = -s\\, p_t / \\|p_t\\|,\\ s \\ge 0 \\text{ when } \\|p_t\\| = \\mu p_n,
    \\ w_t = 0 \\text{ inside},

by block projected Gauss-Seidel over contacts in velocity form
(``v = v_free + sum_k M^-1 J_k^T p_k``, so bodies touch only their own contacts):
the normal impulse is projected on ``p_n >= 0`` with step ``1/G_nn`` (``G_k = J_k
M^-1 J_k^T`` the contact's 3 x 3 Delassus block), then the tangent pair takes the exact
2 x 2 sticking solve when it lies inside the disc and otherwise the projection of
``p_t - w_t / lambda_max(G_tt)`` on the disc. A fixed point of that map satisfies the
conditions above (the projection with an isotropic step is the normal cone condition of
the disc), so friction is isotropic by construction. The iteration stops when no impulse
changes by more than ``it_tol`` (velocity units, times ``max(1, |J v_free + b|)``), or
after ``max_iter`` sweeps; the natural-map residual of the result (velocity units) then
decides acceptance against ``tol`` (the caller falls back to a pivoting LCP when it fails).

With the header's ``friction_box`` (``PointContactConstraint(friction="box")``) the friction
set is ODE's box ``|p_t1| <= mu p_n``, ``|p_t2| <= mu p_n`` instead of the disc (t1 against
the free slip, as the pivoting step's tangents): the same sweeps with each tangent impulse
clamped to its bounds (the exact projection on the box for the isotropic step), the box in
the residual, and a polish whose modes hold each tangent row free (``w_t = 0``), at
``+mu p_n`` (``w_t <= 0``) or at ``-mu p_n`` (``w_t >= 0``): the boxed LCP with ODE's
friction index, solved exactly on its active set.

Candidates are geometry pairs; each step the narrow phase gives a pair's contact points at
the current poses within the speculative margin (as ``multibody.geometry.contact_points``
does for the pivoting step), each filling one of the pair's contact slots.

Warm start: the previous step's normal impulse and world-frame friction impulse per contact
slot (``warm``, 4 per slot, by pair and point index; projected on the new tangents and into
the disc).

Data layout (int32 table ``it``, float64 table ``dt``, the input, output and work buffers):
declared once, by name, in the private module :mod:`solvers._contact_layout`; the C source's
enums and section macros are generated from it, the numpy twin and the plant's table writer
(private module ``multibody.plants._ts_tables``) index by the same names. The C code is
compiled once per machine with the system C compiler into the disk cache of
:mod:`solvers.compiled`, and loaded through the same verified loader as every compiled
library (a manifest with the sha256 of the library checked before loading, the cache key
compiled into it checked after, the cache directory and files private to the user): a
truncated, bit-flipped or foreign library is compiled again, never loaded.
:func:`load_kernel` returns the numpy twin (or None) when no compiler is found.

References
----------
M. Anitescu and F. A. Potra, "Formulating dynamic multi-rigid-body contact problems with
friction as solvable linear complementarity problems", Nonlinear Dynamics 14 (1997).
A. Tasora and M. Anitescu, "A matrix-free cone complementarity approach for solving
large-scale, nonsmooth, rigid body dynamics", CMAME 200 (2011) (velocity-form projected
Gauss-Seidel). E. Catto, "Iterative dynamics with temporal coherence", GDC 2005 (warm
starts).
"""
from __future__ import annotations

import ctypes
from pathlib import Path
from typing import Optional

import numpy as np

from . import _compiled_build as _build
from . import _contact_step_numpy as _numpy
from . import _contact_layout as layout
from ._contact_layout import CANDIDATE_DOUBLES, CANDIDATE_INTS, CANDIDATE_OUT, HEADER, SCALARS
from ._contact_step_source import SOURCE, VERSION
from .errors import ContactStepBuildError

__all__ = ["ContactStepKernel", "NumpyContactStepKernel", "ContactStepBuildError", "load_kernel", "layout", "CANDIDATE_INTS", "CANDIDATE_DOUBLES",
           "CANDIDATE_OUTPUTS", "HEADER_INTS", "NUM_SCALARS"]

CANDIDATE_OUTPUTS = CANDIDATE_OUT.size
"""Outputs per candidate (fields: ``solvers._contact_layout.CANDIDATE_OUT``)."""
HEADER_INTS = HEADER.size
"""Ints of the table header (fields: ``solvers._contact_layout.HEADER``)."""
NUM_SCALARS = SCALARS.size
"""Per-step scalars (fields: ``solvers._contact_layout.SCALARS``)."""

_LOADED: dict = {}


class ContactStepKernel:
    """The loaded C step (module docstring); call :meth:`step` with the tables and
    preallocated buffers.

    Parameters
    ----------
    path : pathlib.Path
        The shared library.
    library : ctypes.CDLL
        The library loaded from ``path`` by the verified loader (:func:`load_kernel`).
    """

    compiled = True
    """The C kernel (:class:`NumpyContactStepKernel` has ``compiled = False``)."""

    def __init__(self, path: Path, library: ctypes.CDLL) -> None:
        self.path = Path(path)
        lib = library
        fn = lib.dbk_contact_step
        fn.argtypes = [ctypes.c_void_p] * 6
        fn.restype = ctypes.c_int
        self._lib = lib
        self._fn = fn

    def step(self, it: np.ndarray, dt: np.ndarray, inp: np.ndarray, out: np.ndarray,
             work: np.ndarray, iwork: np.ndarray) -> int:
        """Run one step; every argument is a C-contiguous buffer (int32 ``it``, ``iwork``;
        float64 others) of the sizes given by the plant's tables. Returns 0, or 1 when the
        mass matrix is not positive definite."""
        return self._fn(it.ctypes.data, dt.ctypes.data, inp.ctypes.data, out.ctypes.data,
                        work.ctypes.data, iwork.ctypes.data)

    def pointer_call(self, ptrs: tuple) -> int:
        """:meth:`step` with the six buffer addresses given as ints (cheaper per call)."""
        return self._fn(*ptrs)

    def __repr__(self) -> str:
        return f"ContactStepKernel({str(self.path)!r})"


class NumpyContactStepKernel:
    """The same step in numpy (the fallback without a C compiler, and an independent
    implementation the C kernel is tested against): :meth:`step` takes the same buffers."""

    compiled = False

    def step(self, it: np.ndarray, dt: np.ndarray, inp: np.ndarray, out: np.ndarray,
             work: np.ndarray, iwork: np.ndarray) -> int:
        """As :meth:`ContactStepKernel.step` (``work`` and ``iwork`` are not used)."""
        return _numpy.contact_step(it, dt, inp, out)

    def __repr__(self) -> str:
        return "NumpyContactStepKernel()"


_KERNEL_FLAGS = ("-O3", "-fno-tree-loop-vectorize")
"""The kernel's optimisation flags (with the build's ``-ffp-contract=off``): -O3's loop
peeling and unswitching without its loop vectoriser (which slowed the quadruped's 18-velocity
block 15 %); the same bits as ``-O2`` on the box, pile and quadruped, kernel time 0.86x
(pile), 0.95x (quadruped) of ``-O2``."""


def load_kernel(compiler: Optional[str] = None, cache_dir: Optional[Path] = None,
                numpy_fallback: bool = True):
    """The compiled kernel (built once per machine into the disk cache, loaded once per
    process); where no C compiler is found, a :class:`NumpyContactStepKernel` (or None with
    ``numpy_fallback=False``).

    Raises
    ------
    ContactStepBuildError
        When the kernel cannot be compiled (or a damaged cached library cannot be rebuilt),
        or no private cache directory is available.
    """
    cc = _build.find_compiler(compiler)
    if cc is None:
        return NumpyContactStepKernel() if numpy_fallback else None
    try:
        return _build.load_c_source_library(
            "dbk_contact_step", f"contact-step-v{VERSION}", SOURCE, cc, _KERNEL_FLAGS, cache_dir,
            _kernel, _LOADED)
    except (_build.CompileError, OSError) as exc:
        raise ContactStepBuildError(f"the contact-step kernel: {exc}") from exc


def _kernel(path: Path, lib: ctypes.CDLL) -> ContactStepKernel:
    try:
        return ContactStepKernel(path, lib)
    except AttributeError as exc:          # no dbk_contact_step symbol
        raise _build.CompileError(f"{path} has no contact-step entry point ({exc})") from exc
