"""The root of simjudge's exceptions.

Every error simjudge raises on purpose derives from :class:`SimjudgeError`, so a caller can
catch them all in one clause; each also keeps the builtin base its callers relied on
(``ValueError`` for bad input, ``LookupError`` for unknown names, ``RuntimeError`` for a
failed run step, ``ImportError`` for a missing optional dependency). This module imports
nothing, so every layer may use it.

Example:
    >>> from simjudge.envs.scene import SceneConfigError
    >>> issubclass(SceneConfigError, SimjudgeError) and issubclass(SceneConfigError, ValueError)
    True
"""

from __future__ import annotations

__all__ = ["SimjudgeError"]


class SimjudgeError(Exception):
    """Base class of every exception simjudge raises on purpose; the message says the fix."""
