"""Up-front checks of command configs: counts, text sizes and paths, by field name.

Every ``simjudge`` command's config goes through :func:`check_values` (and, on the command
line, :func:`check_paths`) before any work starts, so a bad value is one clear
:class:`~simjudge.tasks.spec.config.ConfigError` naming the option and the fix instead of a
traceback (or, worse, silent acceptance: ``--candidates 0`` ran an empty loop, a 100 KB
task name was stored in the pool and pasted into prompts). The rules go by field name, so
they hold for every command, those added later included:

- counts (:data:`AT_LEAST`, :data:`AT_MOST`): ``candidates``, ``workers``, ``horizon``,
  ``pairs``, ``matches``, ``seeds`` ... at least 1; ``top_k``, ``repair_rounds``, ``seed`` ...
  at least 0; ``port`` in 1..65535;
- text (:data:`MAX_CHARS`): a task name (``task``, ``name``, ``object``) at most
  :data:`MAX_NAME_CHARS` characters on one line, a description at most
  :data:`MAX_DESCRIPTION_CHARS`;
- paths: ``out`` (an output folder, or a file when it has a file suffix) must be creatable
  and writable, and the run folder of a command whose config says ``OUT_IS_RUN = True``
  must be new, empty or a simjudge run (it holds ``config.json``), never the user's files; input files (``solution`` when it names a file, ``tasks_from``, ``--config``)
  must exist and be UTF-8 text, and YAML/JSON ones must parse.

Example:
    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Run:
    ...     '''A run.
    ...
    ...     Attributes:
    ...         candidates: How many.
    ...     '''
    ...     candidates: int = 4
    >>> try:
    ...     check_values(Run(candidates=0))
    ... except ConfigError as exc:
    ...     print(exc)
    --candidates must be at least 1, got 0; pass --candidates 1 or more
"""

from __future__ import annotations

import dataclasses
import math
import os
import tempfile
from pathlib import Path
from typing import Any

from .config import ConfigError

__all__ = ["AT_LEAST", "AT_MOST", "MAX_CHARS", "MAX_DESCRIPTION_CHARS", "MAX_NAME_CHARS",
           "PathError", "check_input_file", "check_out", "check_paths",
           "check_run_folder", "check_values"]

AT_LEAST: dict[str, int] = {
    "candidates": 1, "workers": 1, "n_envs": 1, "base": 1, "k": 1, "epochs": 1,
    "max_tokens": 1, "budget_steps": 1, "horizon": 1, "pairs": 1, "matches": 1, "seeds": 1,
    "port": 1, "max_connections": 1,
    "top_k": 0, "repair_rounds": 0, "propose_tasks": 0, "completions": 0, "n": 0, "seed": 0,
}
"""Smallest allowed value of integer options, by field name (None values are not checked)."""
AT_MOST: dict[str, int] = {"port": 65535}
"""Largest allowed value of integer options, by field name."""
MAX_NAME_CHARS = 200
MAX_DESCRIPTION_CHARS = 2000
MAX_CHARS: dict[str, int] = {"task": MAX_NAME_CHARS, "name": MAX_NAME_CHARS,
                             "object": MAX_NAME_CHARS, "description": MAX_DESCRIPTION_CHARS,
                             "text": MAX_DESCRIPTION_CHARS}
"""Longest allowed text options, by field name."""
ONE_LINE = frozenset({"task", "name", "object"})
"""Text options that must be one line (they become file names, keys and prompt headings)."""
FILE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".mp4", ".yaml", ".yml", ".json",
                           ".jsonl", ".html", ".md", ".csv", ".txt", ".npz", ".pt", ".sqlite"})
"""An ``out`` with one of these suffixes is an output file, else an output folder."""
INPUT_FILES = ("tasks_from",)
"""Fields that always name an input file."""


class PathError(ConfigError):
    """A path option is unusable; ``path`` is the file or folder, the message has the fix."""

    def __init__(self, path: str | Path, message: str) -> None:
        self.path = Path(path)
        super().__init__(message)


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _fields(config: Any) -> dict[str, Any]:
    return {f.name: getattr(config, f.name) for f in dataclasses.fields(config) if f.init}


def check_values(config: Any) -> None:
    """Check a config's counts and text sizes (see the module docstring).

    Raises:
        ConfigError: The first bad value: the option, what it was and the fix.
    """
    for name, value in _fields(config).items():
        if name in AT_LEAST and isinstance(value, int) and not isinstance(value, bool):
            least = AT_LEAST[name]
            if value < least:
                raise ConfigError(f"{_flag(name)} must be at least {least}, got {value}; pass "
                                  f"{_flag(name)} {least} or more")
        if name in AT_MOST and isinstance(value, int) and value > AT_MOST[name]:
            raise ConfigError(f"{_flag(name)} must be in {AT_LEAST.get(name, 0)}..{AT_MOST[name]}, "
                              f"got {value}")
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(f"{_flag(name)} must be a finite number, got {value}")
        if name == "temperature" and isinstance(value, float) and not 0.0 <= value <= 2.0:
            raise ConfigError(f"--temperature must be between 0 and 2, got {value}")
        if name in MAX_CHARS and isinstance(value, str):
            _check_text(name, value)


def _check_text(name: str, value: str) -> None:
    limit = MAX_CHARS[name]
    if name in ONE_LINE and not value.strip():
        raise ConfigError(f"{_flag(name)} is empty; give a name such as \"Open Drawer\"")
    if len(value) > limit:
        hint = (f" (put details in --description, at most {MAX_DESCRIPTION_CHARS})"
                if name in ONE_LINE else "")
        raise ConfigError(f"{_flag(name)} is {len(value)} characters long; at most {limit} "
                          f"are allowed{hint}")
    if name in ONE_LINE and any(c in value for c in "\n\r\x00"):
        raise ConfigError(f"{_flag(name)} must be one line of text (it has a line break or NUL "
                          "character); put longer text in --description")


def _nearest_existing(path: Path) -> Path:
    for parent in (path, *path.parents):
        if parent.exists():
            return parent
    return Path(".")


def _writable(folder: Path) -> bool:
    """Whether files can be created in ``folder`` (tried, so read-only mounts count too)."""
    if not os.access(folder, os.W_OK | os.X_OK):
        return False
    try:
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def check_out(value: str, flag: str = "--out", *, is_file: bool | None = None) -> None:
    """Check an output path: a folder (or file) that exists writable or can be created.

    Args:
        value: The path.
        flag: The option, for the message.
        is_file: Whether it names a file (None: a file when it has a file suffix).

    Raises:
        ConfigError: It is a file where a folder is needed (or the reverse), lies under a
            file, or its folder is not writable.
    """
    path = Path(value).expanduser()
    file = path.suffix.lower() in FILE_SUFFIXES if is_file is None else is_file
    if not str(value).strip():
        raise PathError(value, f"{flag} is empty; give a folder path, e.g. {flag} runs/x")
    if file and path.is_dir():
        raise PathError(value, f"{flag} {value} is a folder; give a file path (e.g. "
                          f"{path / ('out' + (path.suffix or '.png'))})")
    if not file and path.exists() and not path.is_dir():
        raise PathError(value, f"{flag} {value} is a file, not a folder; give a folder path (it is "
                          "created if missing), or remove the file")
    folder = path.parent if file else path
    base = _nearest_existing(folder)
    if not base.is_dir():
        raise PathError(value, f"{flag} {value} lies under {base}, which is a file, not a folder; "
                          "choose a path in a folder")
    if not _writable(base):
        where = "is" if base == folder else f"would be created in {base}, which is"
        raise PathError(value, f"{flag} {value} {where} not writable; choose a folder you can "
                          "write to, or change its permissions")


def check_run_folder(value: str, flag: str = "--out") -> None:
    """Refuse a run folder that holds files but no simjudge run (no ``config.json``).

    Raises:
        ConfigError: The folder, what is in it and the fix (one line: the folder is named).
    """
    path = Path(value).expanduser()
    if not path.is_dir() or (path / "config.json").is_file():
        return
    entries = sorted(p.name for p in path.iterdir())
    if entries:
        shown = ", ".join(entries[:3]) + (", ..." if len(entries) > 3 else "")
        raise ConfigError(f"{flag} {value} is a folder with {len(entries)} other entr"
                        f"{'y' if len(entries) == 1 else 'ies'} ({shown}) and no simjudge run in "
                        "it (no config.json); give a new or empty folder (e.g. "
                        f"{path / 'run'}), or move those files away")


def check_input_file(value: str, flag: str) -> None:
    """Check an input file: it exists, is UTF-8 text, and (YAML/JSON) parses.

    Raises:
        ConfigError: Missing, not a file, unreadable, not UTF-8, or a YAML/JSON syntax error
            (with the line and column).
    """
    import yaml

    path = Path(value).expanduser()
    if not path.exists():
        raise PathError(value, f"{flag} {value} does not exist; check the path")
    if not path.is_file():
        raise PathError(value, f"{flag} {value} is not a file")
    limit = _INPUT_CAPS.get(path.suffix.lower())
    if limit is not None and path.stat().st_size > limit[0]:
        raise PathError(value, f"{flag} {value} is {path.stat().st_size} bytes, over the cap "
                        f"{limit[1]} ({limit[0] // 2**20} MiB); check that this is the right file")
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise PathError(value, f"{flag} {value} cannot be read ({exc.strerror}); check its "
                          "permissions") from None
    except UnicodeDecodeError as exc:
        raise PathError(value, f"{flag} {value} is not UTF-8 text (byte {exc.start}: {exc.reason}); "
                          "save it as UTF-8") from None
    if path.suffix.lower() in {".yaml", ".yml", ".json"}:
        from .bounded import InputLimitError, load_yaml

        try:
            load_yaml(text, f"{flag} {value}")
        except InputLimitError as exc:
            raise PathError(value, str(exc)) from None
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise PathError(value, f"{flag} {value} is not valid YAML{where}: {problem}; fix the "
                              "syntax (indentation, a missing ':', an unclosed bracket or "
                              "quote)") from None



def _input_caps() -> dict[str, tuple[int, str]]:
    from .bounded import MAX_JSON_BYTES, MAX_YAML_BYTES

    yaml_cap = (MAX_YAML_BYTES, "MAX_YAML_BYTES")
    return {".yaml": yaml_cap, ".yml": yaml_cap, ".json": (MAX_JSON_BYTES, "MAX_JSON_BYTES")}


_INPUT_CAPS = _input_caps()

def check_paths(config: Any, config_file: str | None = None) -> None:
    """Check a config's paths before a command runs (see the module docstring).

    ``out`` is an output folder unless it has a file suffix or the config class says
    ``OUT_IS_FILE = True``; ``solution`` is checked as a file only when it names one (it may
    be a built-in task id or a folder).

    Raises:
        ConfigError: The first bad path, with the fix.
    """
    if config_file:
        check_input_file(config_file, "--config")
    values = _fields(config)
    out = values.get("out")
    if isinstance(out, str):
        check_out(out, is_file=getattr(type(config), "OUT_IS_FILE", None))
        if getattr(type(config), "OUT_IS_RUN", False):
            check_run_folder(out)
    for name in INPUT_FILES:
        if isinstance(values.get(name), str):
            check_input_file(values[name], _flag(name))
    solution = values.get("solution")
    if isinstance(solution, str) and Path(solution).suffix.lower() in {".yaml", ".yml"}:
        check_input_file(solution, "SOLUTION")
    pool = values.get("pool")
    if isinstance(pool, str) and pool.strip():
        check_out(pool, "--pool", is_file=True)
