"""dynablocks: the project's root package, the lowest layer.

It holds only what every package shares and may import: the root of the project's
exceptions and warnings (:mod:`dynablocks.errors`). It imports none of the other packages
(``systems``, ``multibody``, ``solvers``, ``sensors``, ``actuators``), which build on it.

Every exception the project raises on purpose is a :class:`DynablocksError` (and still the
built-in exception callers caught before, e.g. ``ValueError``), and every warning it issues
is a :class:`DynablocksWarning`::

    try:
        run()
    except DynablocksError as exc:   # anything dynablocks raised on purpose
        report(exc)

Each package has its own root below these (``systems.errors.SystemsError``,
``multibody.errors.MultibodyError``, ``solvers.errors.SolversError``,
``sensors.errors.SensorsError``).
"""
from .errors import DynablocksError, DynablocksWarning, TrajectoryError

__all__ = ["DynablocksError", "DynablocksWarning", "TrajectoryError"]
