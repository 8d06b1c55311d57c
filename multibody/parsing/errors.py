"""Exceptions and warnings of the model-file readers (URDF, SDFormat, MJCF).

Every reader raises only its own named error, each a subclass of :class:`ModelParseError`
(itself a :class:`~multibody.errors.MultibodyError`, so a ``ValueError``); its message reads
``"<source>, line <n>: <element>: <what is wrong>"``. A file accepted with a change the user
should know about gives one warning per change, a subclass of :class:`ModelParseWarning`
(itself a :class:`~multibody.errors.MultibodyWarning` and a ``UserWarning``). The readers of
the skeleton and marker-placement formats raise :class:`SkeletonError`.
"""
from __future__ import annotations

from ..errors import MultibodyError, MultibodyWarning

__all__ = ["ModelParseError", "URDFError", "SDFError", "MJCFError",
           "ModelParseWarning", "URDFWarning", "SDFWarning", "MJCFWarning", "SkeletonError"]


class ModelParseError(MultibodyError):
    """A model file (or string) that cannot be turned into a model (a ``ValueError``).

    The message reads ``"<source>, line <n>: <element>: <what is wrong>"``.

    Parameters
    ----------
    source : str
        The file path as given, or ``"<string>"`` for text.
    line : int or None
        Line number (1-based) of the offending element, None when it has no single line.
    element : str
        The element concerned, e.g. ``"joint 'elbow'"`` or ``"body 'torso'"``.
    message : str
        What is wrong and what was expected.

    Attributes
    ----------
    source, line, element : as above
    reason : str
        The ``message`` argument alone.
    """

    format_name = "model"

    def __init__(self, source: str, line: int | None, element: str, message: str):
        self.source = source
        self.line = line
        self.element = element
        self.reason = message
        where = source if line is None else f"{source}, line {line}"
        super().__init__(f"{where}: {element}: {message}")

    def __reduce__(self):  # picklable across processes (Monte Carlo workers)
        return (type(self), (self.source, self.line, self.element, self.reason))


class URDFError(ModelParseError):
    """A URDF document that cannot be turned into a model."""

    format_name = "URDF"


class SDFError(ModelParseError):
    """An SDFormat document that cannot be turned into a model."""

    format_name = "SDFormat"


class MJCFError(ModelParseError):
    """An MJCF (MuJoCo XML) document that cannot be turned into a model."""

    format_name = "MJCF"


class ModelParseWarning(MultibodyWarning, UserWarning):
    """A model file accepted with a change the user should know about (what was done, with
    the file, line and element, as :class:`ModelParseError` gives them)."""


class URDFWarning(ModelParseWarning):
    """A URDF accepted with a change: an ``<inertial>`` on the world link (ignored), a zero
    mass with a nonzero inertia, principal moments violating the triangle inequality
    (repaired)."""


class SDFWarning(ModelParseWarning):
    """An SDFormat file accepted with a change or with an element that is not supported
    (ignored, one warning per element kind)."""


class MJCFWarning(ModelParseWarning):
    """An MJCF file accepted with a change or with an element that is not supported
    (ignored, one warning per element kind)."""


class SkeletonError(MultibodyError):
    """A skeleton or marker-placement file that cannot be read; the message names the file,
    the line and what was expected.

    A :class:`~multibody.errors.MultibodyError` (so a ``ValueError``) made from one message
    string, not a :class:`ModelParseError` (whose constructor takes the source, line and
    element separately).
    """


for _cls in (ModelParseError, URDFError, SDFError, MJCFError, ModelParseWarning, URDFWarning,
             SDFWarning, MJCFWarning, SkeletonError):
    _cls.__module__ = "multibody.parsing"
del _cls
