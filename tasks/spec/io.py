"""The one way simjudge writes a file: atomically (write a temporary file, then rename).

A kill at any moment leaves either the old file or the new one, never half of one, so a
resumed run can trust every file it finds. This module needs only the standard library and
numpy, so every layer (the LLM clients included) may use it.

Example:
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> write_json(root / "a" / "b.json", {"x": np.float32(0.5), "ids": (1, 2)})
    >>> read_json(root / "a" / "b.json")
    {'x': 0.5, 'ids': [1, 2]}
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from simjudge.envs.bounded_input import (
    MAX_DEPTH,
    MAX_JSON_BYTES,
    InputLimitError,
    json_depth,
    load_json_text,
)
from simjudge.envs.errors import SimjudgeError

__all__ = ["MAX_DEPTH", "MAX_JSON_BYTES", "CorruptFileError", "InputLimitError", "atomic_open",
           "atomic_write", "json_default", "json_depth", "load_json_text", "read_json",
           "write_json"]

class CorruptFileError(SimjudgeError, ValueError):
    """A file simjudge wrote (or was given) cannot be read back: truncated, corrupt, not UTF-8.

    Attributes:
        path: The file.
        problem: What is wrong with it.
        fix: What to do about it.
    """

    def __init__(self, path: str | Path, problem: str, fix: str | None = None) -> None:
        self.path = Path(path)
        self.problem = problem
        self.fix = fix or (f"delete {self.path} to have the step that wrote it redone (rerun "
                           "with --resume), or start over in a new output folder")
        super().__init__(f"{self.path} {problem}; {self.fix}")


@contextlib.contextmanager
def atomic_open(path: str | Path) -> Iterator[BinaryIO]:
    """Open ``path`` for writing in binary mode; it appears only if the block completes.

    Parent folders are created. The temporary file lives beside the target (same file
    system, so the rename is atomic) under a unique name, and is removed if the block
    raises, so streamed writes (a model assembled from chunks, a gzip archive) are as safe
    as :func:`atomic_write`.

    Args:
        path: The file to write.

    Yields:
        A binary file object.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes 0600; files get the usual mode
        with os.fdopen(fd, "wb") as fh:
            yield fh
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    """The process umask (read by setting it and putting it back)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write(path: str | Path, data: str | bytes) -> None:
    """Write ``data`` to ``path`` so a crash never leaves a partial file.

    Args:
        path: The file to write (parent folders are created).
        data: Text (written as UTF-8) or bytes.
    """
    with atomic_open(path) as fh:
        fh.write(data.encode("utf-8") if isinstance(data, str) else data)


def json_default(value: Any) -> Any:
    """``json.dumps(default=...)`` hook: numpy arrays and scalars, sets, paths; else ``str``."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    return str(value)


def write_json(path: str | Path, data: Any, *, indent: int | None = 2) -> None:
    """Write ``data`` as JSON atomically (numpy values converted, trailing newline)."""
    atomic_write(path, json.dumps(data, indent=indent, default=json_default) + "\n")


def read_json(path: str | Path) -> Any:
    """Parse a JSON file within the caps (:data:`MAX_JSON_BYTES`, :data:`MAX_DEPTH`).

    Raises:
        CorruptFileError: The file is not UTF-8 or not valid JSON (e.g. truncated); the
            message names the file and the fix.
        InputLimitError: The file is larger or nests deeper than the caps (its size is
            checked before it is read).
    """
    path = Path(path)
    size = path.stat().st_size
    if size > MAX_JSON_BYTES:
        raise InputLimitError(str(path), f"is {size} bytes, over {MAX_JSON_BYTES // 2**20} MiB",
                              "MAX_JSON_BYTES", "check that this is the right file")
    try:
        return load_json_text(path.read_text(encoding="utf-8"), str(path))
    except UnicodeDecodeError as exc:
        raise CorruptFileError(path, f"is not UTF-8 text ({exc.reason} at byte {exc.start})",
                               ) from None
    except json.JSONDecodeError as exc:
        raise CorruptFileError(path, f"is not valid JSON ({exc.msg}: line {exc.lineno}, "
                               f"column {exc.colno}); it may be truncated") from None
