"""The policy zoo (``zoo:NAME``): learned policies shipped with simjudge, graded in quality.

Each entry of ``zoo_weights/zoo.json`` names a weights file beside it, its SHA-256, the task
it was trained for, its ``kind`` (``bc``, ``sb3`` or ``lerobot``) and its training provenance
(the command, the demonstrations or the RL budget, the seed, the time); ``measured`` holds its
verified success over held-out randomized seeds, with the ``simjudge audit`` command that
measured it. ``simjudge policies list`` prints them.

Example:
    >>> "bc-mlp-PressButton-10" in zoo_entries()
    True
    >>> zoo_entries()["bc-mlp-PressButton-10"]["task"]
    'PressButton-v0'
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from .base import Policy, PolicyError

__all__ = ["ZOO_DIR", "tree_sha256", "zoo_entries", "zoo_path", "zoo_policy"]

ZOO_DIR = Path(__file__).resolve().parent / "zoo_weights"
"""Where the shipped weights and ``zoo.json`` live."""


def tree_sha256(path: str | Path) -> str:
    """SHA-256 of a file, or of a folder: of its files' relative paths and SHA-256s, sorted."""
    import hashlib

    from .bc import file_sha256

    path = Path(path)
    if path.is_file():
        return file_sha256(path)
    lines = [f"{p.relative_to(path).as_posix()} {file_sha256(p)}\n"
             for p in sorted(path.rglob("*")) if p.is_file()]
    return hashlib.sha256("".join(lines).encode()).hexdigest()


@lru_cache(maxsize=1)
def _index() -> dict[str, dict[str, Any]]:
    path = ZOO_DIR / "zoo.json"
    if not path.is_file():
        return {}
    return dict(json.loads(path.read_text())["policies"])


def zoo_entries() -> dict[str, dict[str, Any]]:
    """Zoo name -> its entry (``file``, ``kind``, ``task``, ``sha256``, ``provenance``, ``measured``)."""
    return {name: dict(entry) for name, entry in _index().items()}


def zoo_path(name: str) -> Path:
    """The weights file of zoo policy ``name``, its SHA-256 checked against the index.

    Raises:
        PolicyError: Unknown name (the message lists the zoo), a missing file or a mismatch.
    """
    entries = _index()
    if name not in entries:
        raise PolicyError(f"no zoo policy {name!r}; the zoo has {sorted(entries)} (simjudge policies list)")
    entry = entries[name]
    path = ZOO_DIR / entry["file"]
    if not path.exists():
        raise PolicyError(f"zoo policy {name}: {path} is missing; retrain it with: "
                          f"{entry.get('provenance', {}).get('command', 'simjudge policies train-bc')}")
    if tree_sha256(path) != entry["sha256"]:
        raise PolicyError(f"zoo policy {name}: {path} does not match its SHA-256 in zoo.json; "
                          "reinstall simjudge or retrain it with its recorded command")
    return path


def zoo_policy(name: str) -> Policy:
    """The zoo policy ``name`` (a BC network, an SB3 checkpoint, or a LeRobot checkpoint)."""
    path = zoo_path(name)
    kind = _index()[name].get("kind", "bc")
    if kind == "sb3":
        from .sb3 import SB3Policy

        return SB3Policy(path, name=f"zoo:{name}")
    if kind == "lerobot":
        from .lerobot_policy import make_lerobot_policy

        return make_lerobot_policy(str(path))
    from .bc import BCPolicy

    return BCPolicy(path, name=f"zoo:{name}")
