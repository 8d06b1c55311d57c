"""Exceptions and warnings of :mod:`solvers`.

Every error is a :class:`SolversError` (so a :class:`dynablocks.errors.DynablocksError`) and
keeps the built-in base callers caught before (``RuntimeError``, ``ValueError``); every
warning is a :class:`SolversWarning` (so a :class:`dynablocks.errors.DynablocksWarning`) and
keeps its category. The hierarchy::

    SolversError
    |-- CompileError (RuntimeError)       code generation, compilation or loading failed
    |   |-- UnsafeCacheError              no private cache directory
    |   |-- ContactStepBuildError         the contact-step kernel could not be built
    |   `-- CollisionBuildError           the narrow-phase library could not be built
    |-- CompilerNotFound (RuntimeError)   no usable C compiler
    |-- LCPSolveError (RuntimeError)      an LCP solve failed and the caller asked to raise
    |-- ShapeDescriptionError (ValueError)
    `-- CollisionQueryError (RuntimeError)
    SolversWarning
    |-- CompilationWarning (UserWarning)
    |-- CacheSecurityWarning (UserWarning)
    `-- LCPFallbackWarning (RuntimeWarning)

The classes are also importable from the modules that raise them (``solvers.compiled``,
``solvers.lcp``, ``solvers.contact_step``, ``solvers.collision``): the same objects.
"""
from __future__ import annotations

from dynablocks.errors import DynablocksError, DynablocksWarning

__all__ = ["SolversError", "SolversWarning", "CompileError", "UnsafeCacheError",
           "ContactStepBuildError", "CollisionBuildError", "CompilerNotFound", "LCPSolveError",
           "ShapeDescriptionError", "CollisionQueryError", "CompilationWarning",
           "CacheSecurityWarning", "LCPFallbackWarning"]


class SolversError(DynablocksError):
    """Root of the errors of :mod:`solvers` (``except SolversError`` catches them all).

    Not raised itself; every subclass also subclasses a built-in exception.
    """


class SolversWarning(DynablocksWarning):
    """Root of the warnings of :mod:`solvers`."""


# ------------------------------------------------------------------ compiled code
class CompileError(SolversError, RuntimeError):
    """Code generation, compilation or loading failed (message says why)."""


class UnsafeCacheError(CompileError):
    """No cache directory that only this user can write is available (message: each
    directory tried and why it was refused)."""


class ContactStepBuildError(CompileError):
    """The contact-step kernel could not be built or loaded: the C compiler failed (message:
    command and output), the cached library could not be rebuilt, or no private cache
    directory is available."""


class CollisionBuildError(CompileError):
    """The narrow-phase library could not be built or loaded (compiler command and output,
    or no private cache directory)."""


class CompilerNotFound(SolversError, RuntimeError):
    """No usable C compiler (raised internally, turned into a warning or an error)."""


class CompilationWarning(SolversWarning, UserWarning):
    """A function is evaluated by CasADi because it could not be compiled."""


class CacheSecurityWarning(SolversWarning, UserWarning):
    """A cache directory that others could write (or that another user owns) was set
    aside; a private per-user directory is used instead."""


# ------------------------------------------------------------------ LCP
class LCPSolveError(SolversError, RuntimeError):
    """An LCP solve failed and the caller asked for an exception.

    Parameters
    ----------
    result : solvers.lcp.LCPResult
        The failed result (its status, method, residual, iterations and message are quoted).
    context : str
        Who solved it (a plant, a time), prefixed to the message; may be empty.

    Attributes
    ----------
    result : LCPResult
    context : str
    """

    def __init__(self, result, context: str = "") -> None:
        where = f"{context}: " if context else ""
        super().__init__(
            f"{where}LCP solve failed with status '{result.status}' "
            f"(method {result.method}, n={result.z.shape[0]}, residual "
            f"{result.residual:.3e}, {result.iterations} iterations): {result.message}")
        self.result = result
        self.context = context

    def __reduce__(self):  # picklable across processes (Monte Carlo workers)
        return (type(self), (self.result, self.context))


class LCPFallbackWarning(SolversWarning, RuntimeWarning):
    """Emitted when a front door falls back to another method."""


# ------------------------------------------------------------------ collision
class ShapeDescriptionError(SolversError, ValueError):
    """A shape description or pose is malformed (the message names the argument and what
    was expected)."""


class CollisionQueryError(SolversError, RuntimeError):
    """The narrow phase refused a pair or gave a non-finite result (names the pair)."""
