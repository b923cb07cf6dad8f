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
  killed run leaves only whole files and resumes with nothing lost or repeated;
- every file written through the run directory has its SHA-256 and size recorded first
  (``.checksums/<name>.sha256``), and is checked when read back: a file truncated or
  changed since (a full disk, a copy cut short, an edit) raises :class:`RunDirCorruptError`
  naming the file and the fix. A resumable step reads its checkpoint with :meth:`RunDir.load`,
  which sets a bad file aside (``<name>.corrupt``), says so (a :class:`RunDirRepairWarning`,
  and a line in ``repairs.jsonl``) and returns None, so the step is redone.

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
    >>> _ = run.path("results/a.json").write_text('{"ok": tr')  # truncated behind our back
    >>> import warnings
    >>> with warnings.catch_warnings(record=True):
    ...     run.load("results/a.json", run.read_json) is None
    True
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
import warnings
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from simjudge.envs.backends import default_backend
from simjudge.envs.errors import SimjudgeError

from .io import CorruptFileError, atomic_write, json_default
from .provenance import versions

__all__ = ["CHECKSUM_DIR", "CONFIG_FILE", "RunDir", "RunDirCorruptError", "RunDirError",
           "RunDirRepairWarning"]

T = TypeVar("T")

CONFIG_FILE = "config.json"
CHECKSUM_DIR = ".checksums"
"""Folder (inside the run directory) of the recorded checksums, ``<name>.sha256``."""
REPAIRS_FILE = "repairs.jsonl"
"""One line per file set aside because it was truncated or corrupt."""
VOLATILE_KEYS: frozenset[str] = frozenset({"provenance", "versions", "resume", "out"})
"""Config keys that never decide whether a run may resume (``out`` is the folder itself,
however it was spelled)."""


class RunDirError(SimjudgeError, ValueError):
    """A run directory conflicts with the requested run; the message says what to do."""


class RunDirCorruptError(CorruptFileError, RunDirError):
    """A file of a run directory is truncated or corrupt (checksum, UTF-8, JSON or schema)."""


class RunDirRepairWarning(UserWarning):
    """A truncated or corrupt run-directory file was set aside and its step is redone."""


def _digest(data: bytes) -> str:
    return f"{hashlib.sha256(data).hexdigest()} {len(data)}"


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
        """The recorded config, or None if no run was prepared here.

        Raises:
            RunDirCorruptError: ``config.json`` is truncated or corrupt.
        """
        if not self.exists(CONFIG_FILE):
            return None
        recorded: dict[str, Any] = self.read_json(CONFIG_FILE, check=_is_mapping)
        return recorded

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
        # the backend every env of the run is built on: recorded, and part of its identity
        config = {**config, "backend": config.get("backend") or default_backend()}
        try:
            previous = self.config
        except RunDirCorruptError as exc:
            if not resume:  # a run is there, whatever its config said
                previous = {}
            else:  # the config step is redone: the current config is recorded
                self.set_aside(CONFIG_FILE, exc)
                previous = None
        resuming = previous is not None and resume
        if previous is not None and resume:
            # a run recorded before backends were recorded: its backend is not compared
            same = config if "backend" in previous else {
                k: v for k, v in config.items() if k != "backend"}
            self._check_same(previous, same, identity)
        elif previous is not None:
            if clear is None:
                raise RunDirError(
                    f"{self.root} already holds a run; pass --resume (resume=True) to continue "
                    "it, or choose another output folder"
                )
            for name in clear:
                for target in (self.path(name), self._checksum_path(name),
                               self.root / CHECKSUM_DIR / name):  # a folder's checksums
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

    # -- files: written atomically with a checksum, checked when read ----------------
    def _checksum_path(self, name: str) -> Path:
        return self.root / CHECKSUM_DIR / f"{name}.sha256"

    def write_bytes(self, name: str, data: bytes) -> Path:
        """Write ``data`` atomically to ``name`` (relative to the root), checksum first.

        The checksum is recorded before the file, so a kill between the two leaves a file
        that is missing or fails its check (its step is redone), never one that passes
        unchecked.
        """
        atomic_write(self._checksum_path(name), _digest(data) + "\n")
        path = self.path(name)
        atomic_write(path, data)
        return path

    def write_text(self, name: str, text: str) -> Path:
        """Write ``text`` (UTF-8) atomically to ``name`` (relative to the root)."""
        return self.write_bytes(name, text.encode("utf-8"))

    def write_json(self, name: str, data: Any) -> Path:
        """Write ``data`` as JSON atomically to ``name`` (relative to the root)."""
        return self.write_text(name, json.dumps(data, indent=2, default=json_default) + "\n")

    def read_bytes(self, name: str) -> bytes:
        """The bytes of ``name``, checked against the checksum recorded when it was written.

        Raises:
            RunDirCorruptError: The file does not match its recorded checksum (truncated or
                changed); files written without one (by older versions) are not checked.
            FileNotFoundError: The file does not exist.
        """
        path = self.path(name)
        data = path.read_bytes()
        sidecar = self._checksum_path(name)
        if sidecar.exists():
            recorded = sidecar.read_text(encoding="utf-8", errors="replace").strip()
            if recorded != _digest(data):
                size = recorded.rpartition(" ")[2]
                short = size.isdigit() and len(data) < int(size)
                problem = (f"is truncated ({len(data)} of the {size} bytes written)" if short
                           else "is corrupt (its content does not match the checksum recorded "
                           "when it was written)")
                raise RunDirCorruptError(path, problem)
        return data

    def read_text(self, name: str) -> str:
        """The checked text of ``name`` (see :meth:`read_bytes`).

        Raises:
            RunDirCorruptError: Checksum mismatch, or not UTF-8.
        """
        data = self.read_bytes(name)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise RunDirCorruptError(
                self.path(name), f"is not UTF-8 text ({exc.reason} at byte {exc.start})"
            ) from None

    def read_json(self, name: str, check: Callable[[Any], object] | None = None) -> Any:
        """Parse the checked JSON file ``name``; ``check(data)`` validates its schema.

        Raises:
            RunDirCorruptError: Checksum mismatch, not UTF-8, not JSON, or ``check``
                raised ``KeyError``, ``TypeError`` or ``ValueError`` (the message says
                what was wrong).
        """
        text = self.read_text(name)
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise RunDirCorruptError(
                self.path(name), f"is not valid JSON ({exc.msg}: line {exc.lineno}, column "
                f"{exc.colno}); it may be truncated") from None
        if check is not None:
            validate(self.path(name), check, data)
        return data

    def load(self, name: str, read: Callable[[str], T]) -> T | None:
        """A step's checkpoint: ``read(name)``, or None when the step must be (re)done.

        None when ``name`` does not exist, and when ``read`` raises
        :class:`RunDirCorruptError`: the bad file is then set aside (:meth:`set_aside`) so
        the step that wrote it runs again.

        Args:
            name: The checkpoint file (relative to the root).
            read: Reads and validates it, e.g. ``run.read_json`` or a function using
                :meth:`read_text` / :meth:`read_json` with a ``check``.
        """
        if not self.exists(name):
            return None
        try:
            return read(name)
        except RunDirCorruptError as exc:
            self.set_aside(name, exc)
            return None

    def set_aside(self, name: str, error: CorruptFileError) -> Path:
        """Move a bad file to ``<name>.corrupt`` (kept for inspection); report it.

        The report is a :class:`RunDirRepairWarning` naming the file, what was wrong and
        where it went, and a line in ``repairs.jsonl``.

        Returns:
            Where the file went.
        """
        path = self.path(name)
        target = path.with_name(path.name + ".corrupt")
        n = 1
        while target.exists():
            n += 1
            target = path.with_name(f"{path.name}.corrupt{n}")
        os.replace(path, target)
        self._checksum_path(name).unlink(missing_ok=True)
        message = (f"{path} {error.problem}; moved it to {target.name} and redoing the step "
                   "that wrote it")
        warnings.warn(message, RunDirRepairWarning, stacklevel=3)
        line = json.dumps({"file": name, "problem": error.problem, "moved_to": target.name,
                           "time": time.strftime("%Y-%m-%dT%H:%M:%S")})
        log = self.path(REPAIRS_FILE)
        before = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
        atomic_write(log, before + line + "\n")
        return target


def validate(path: Path, check: Callable[[Any], object], data: Any) -> None:
    """Run a schema ``check`` on data read from ``path``; its errors become corrupt-file errors.

    Raises:
        RunDirCorruptError: ``check`` raised ``KeyError``, ``TypeError`` or ``ValueError``.
    """
    try:
        check(data)
    except (KeyError, TypeError, ValueError) as exc:
        what = f"missing key {exc}" if isinstance(exc, KeyError) else str(exc)
        raise RunDirCorruptError(path, f"does not hold what it should ({what})") from None


def _is_mapping(data: Any) -> None:
    if not isinstance(data, Mapping):
        raise TypeError(f"expected a JSON object, got {type(data).__name__}")


def _normalise(value: Any) -> Any:
    """JSON round-trip form, so a tuple in the call matches the list on disk."""
    if isinstance(value, Mapping):
        return {str(k): _normalise(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_normalise(v) for v in value]
    return value
