"""Versions and provenance recorded with every result.

Example:
    >>> v = versions()
    >>> "python" in v and "numpy" in v
    True
"""

from __future__ import annotations

import functools
import platform
from importlib.metadata import PackageNotFoundError, version

__all__ = ["OPTIONAL_PACKAGES", "package_version", "versions"]

CORE_PACKAGES: tuple[str, ...] = ("simjudge", "numpy", "gymnasium", "pybullet")
OPTIONAL_PACKAGES: tuple[str, ...] = ("torch", "stable-baselines3", "ompl", "mujoco", "sapien")
"""Recorded whenever installed (not only when imported: a result must not depend on which
process wrote it, e.g. a worker that never imported torch)."""


def package_version(name: str) -> str | None:
    """The installed version of distribution ``name``, or None if it is not installed."""
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def versions() -> dict[str, str]:
    """Python, platform and library versions: the core ones, plus the optional ones installed.

    Returns:
        ``{"python": ..., "platform": ..., "simjudge": ..., "numpy": ..., ...}``; a
        package that is not installed is left out. Read once per process (scanning the
        installed packages costs ~36 ms): each call returns a fresh copy.
    """
    return dict(_installed_versions())


@functools.lru_cache(maxsize=1)
def _installed_versions() -> dict[str, str]:
    found = {"python": platform.python_version(), "platform": platform.platform(terse=True)}
    for name in CORE_PACKAGES:
        v = package_version(name)
        if v is not None:
            found[name] = v
    for name in OPTIONAL_PACKAGES:
        v = package_version(name)
        if v is not None:
            found[name] = v
    return found
