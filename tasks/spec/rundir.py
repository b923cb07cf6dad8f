"""One run directory: where a run's config, results and checkpoints live, with resume.

Every command that produces results (``execute``, ``acquire``, ``dataset build``,
``judge-bench`` and the audits) writes them under one :class:`RunDir`. Its contract:

- ``config.json`` records the run's full config plus ``provenance`` (versions, time) and is
  written first; a later call on the same folder with ``resume=True`` must carry the same
  config (the keys the caller names as identity, by default all of them) or it is refused
  with a :class:`RunDirError` that says what differs;
- without ``resume`` an existing run is either refused (the caller owns nothing to clear) or
  the entries the caller names in ``clear`` are removed first;
- every file is written atomically (:func:`~simjudge.tasks.spec.io.atomic_write`), so a
  killed run leaves only whole files and resumes with nothing lost or repeated.

Example:
    >>> import tempfile
    >>> run = RunDir(tempfile.mkdtemp())
    >>> run.prepare({"seed": 0, "task": "Open Drawer"}, resume=True)
    False
    >>> path = run.write_json("results/a.json", {"ok": True})
    >>> run.read_json("results/a.json")
    {'ok': True}
    >>> RunDir(run.root).prepare({"seed": 0, "task": "Open Drawer"}, resume=True)
    True
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from simjudge.envs.errors import SimjudgeError

from .io import atomic_write, read_json, write_json
from .provenance import versions

__all__ = ["CONFIG_FILE", "RunDir", "RunDirError"]

CONFIG_FILE = "config.json"
VOLATILE_KEYS: frozenset[str] = frozenset({"provenance", "versions", "resume", "out"})
"""Config keys that never decide whether a run may resume (``out`` is the folder itself,
however it was spelled)."""


class RunDirError(SimjudgeError, ValueError):
    """A run directory conflicts with the requested run; the message says what to do."""


class RunDir:
    """A run's folder.

    Args:
        root: The folder (created on :meth:`prepare` or on the first write).
    """

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def __repr__(self) -> str:
        return f"RunDir({str(self.root)!r})"

    def path(self, *parts: str) -> Path:
        """A path inside the run directory."""
        return self.root.joinpath(*parts)

    def exists(self, *parts: str) -> bool:
        """Whether a file or folder exists inside the run directory."""
        return self.path(*parts).exists()

    @property
    def config(self) -> dict[str, Any] | None:
        """The recorded config, or None if no run was prepared here."""
        path = self.path(CONFIG_FILE)
        return read_json(path) if path.exists() else None

    def prepare(
        self,
        config: Mapping[str, Any],
        *,
        resume: bool,
        identity: Iterable[str] | None = None,
        clear: Iterable[str] | None = None,
    ) -> bool:
        """Start or resume the run recorded here; write ``config.json``.

        Args:
            config: The run's full config (JSON-serialisable).
            resume: Continue a run already in the folder.
            identity: Keys that must match for a resume; None: every key except
                provenance, versions, resume and out.
            clear: Without ``resume``, entries (files or folders) of an existing run to
                remove before starting again. None: an existing run is refused instead.

        Returns:
            True if an existing run is being resumed.

        Raises:
            RunDirError: Resuming with a different config, or starting over a run that
                the caller may not clear.
        """
        previous = self.config
        resuming = previous is not None and resume
        if previous is not None and resume:
            self._check_same(previous, config, identity)
        elif previous is not None:
            if clear is None:
                raise RunDirError(
                    f"{self.root} already holds a run; pass --resume (resume=True) to continue "
                    "it, or choose another output folder"
                )
            for name in clear:
                target = self.path(name)
                if target.is_dir():
                    shutil.rmtree(target)
                else:
                    target.unlink(missing_ok=True)
        record = dict(config)
        record["provenance"] = {"versions": versions(), "time": time.strftime("%Y-%m-%dT%H:%M:%S")}
        self.write_json(CONFIG_FILE, record)
        return resuming

    def _check_same(
        self, previous: Mapping[str, Any], config: Mapping[str, Any], identity: Iterable[str] | None
    ) -> None:
        keys = list(identity) if identity is not None else sorted(
            (set(config) | set(previous)) - VOLATILE_KEYS
        )
        normalise = _normalise
        changed = [k for k in keys if normalise(previous.get(k)) != normalise(config.get(k))]
        if changed:
            diff = {k: {"recorded": previous.get(k), "requested": config.get(k)} for k in changed}
            raise RunDirError(
                f"cannot resume {self.root}: it holds a run with different {', '.join(changed)} "
                f"({diff}); rerun with the same settings, use another output folder, or start "
                "over without resume (--no-resume)"
            )

    def write_json(self, name: str, data: Any) -> Path:
        """Write ``data`` as JSON atomically to ``name`` (relative to the root)."""
        path = self.path(name)
        write_json(path, data)
        return path

    def read_json(self, name: str) -> Any:
        """Parse the JSON file ``name`` (relative to the root)."""
        return read_json(self.path(name))

    def write_text(self, name: str, text: str) -> Path:
        """Write ``text`` atomically to ``name`` (relative to the root)."""
        path = self.path(name)
        atomic_write(path, text)
        return path


def _normalise(value: Any) -> Any:
    """JSON round-trip form, so a tuple in the call matches the list on disk."""
    if isinstance(value, Mapping):
        return {str(k): _normalise(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_normalise(v) for v in value]
    return value
