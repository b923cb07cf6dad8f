"""Typed command configs: one documented dataclass per command, read from flags or YAML.

Each ``simjudge`` command's options are one dataclass whose class docstring documents every
field in a Google-style ``Attributes:`` section. This module reads such a class (its
fields, types, defaults and documentation) so that the command line
(:mod:`simjudge.cli_configs` generates the parser from it), YAML files
(:func:`load_config`) and run directories (:func:`config_to_dict`, recorded in
``config.json``) all use the one definition.

Field types: ``bool``, ``int``, ``float``, ``str``, ``Literal[...]`` of strings,
``X | None`` and ``tuple[X, ...]`` (a comma list on the command line, a list or a comma
string in YAML). Command-line details that the type cannot say (a flag spelled apart from
the field, a positional argument, a repeatable flag) go in :func:`option`.

Example:
    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Settings:
    ...     '''Settings of a run.
    ...
    ...     Attributes:
    ...         seed: Seed of everything.
    ...         ks: K values, a comma list.
    ...     '''
    ...     seed: int = 0
    ...     ks: tuple[int, ...] = (1, 3)
    >>> config_from_dict(Settings, {"seed": 2, "ks": "1,5"})
    Settings(seed=2, ks=(1, 5))
    >>> try:
    ...     config_from_dict(Settings, {"sed": 2}, source="run.yaml")
    ... except ConfigError as exc:
    ...     print(exc)
    run.yaml: unknown key 'sed' (did you mean 'seed'?); valid keys: seed, ks
"""

from __future__ import annotations

import dataclasses
import difflib
import inspect
import re
import shlex
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import MISSING, dataclass
from pathlib import Path
from typing import Any, Literal, Union

from simjudge.envs.errors import SimjudgeError

__all__ = [
    "CLI_METADATA",
    "ConfigError",
    "ConfigField",
    "command_line",
    "config_fields",
    "config_from_dict",
    "config_to_dict",
    "describe_type",
    "field_docs",
    "load_config",
    "option",
    "parse_text",
    "read_config_file",
]

CLI_METADATA = "simjudge.cli"
"""Key of a dataclass field's ``metadata`` that holds its :func:`option` settings."""

_NONE_WORDS = frozenset({"none", "null"})
_TRUE_WORDS = frozenset({"true", "yes", "on", "1"})
_FALSE_WORDS = frozenset({"false", "no", "off", "0"})


class ConfigError(SimjudgeError, ValueError):
    """A config value or key is invalid; the message names it and what is allowed."""


def option(
    default: Any = MISSING,
    *,
    default_factory: Any = MISSING,
    flag: str | None = None,
    aliases: tuple[str, ...] = (),
    negative: str | None = None,
    positional: bool = False,
    repeat: bool = False,
    shown_default: str | None = None,
) -> Any:
    """A dataclass field with command-line settings that its type cannot express.

    Args:
        default: The default (omit both defaults for a required option).
        default_factory: A callable giving the default.
        flag: The flag's spelling when it differs from ``--field-name``.
        aliases: Further spellings of the flag (old names kept working).
        negative: For a bool, the spelling of its "off" flag (default ``--no-<flag>``).
        positional: A positional argument instead of a flag.
        repeat: For a tuple, one value per repeated flag (``--judge a --judge b``) instead
            of a comma list.
        shown_default: How help text shows the default, when the value itself is long.

    Returns:
        A :func:`dataclasses.field`.
    """
    cli = {"flag": flag, "aliases": tuple(aliases), "negative": negative,
           "positional": positional, "repeat": repeat, "shown_default": shown_default}
    cli = {k: v for k, v in cli.items() if v}
    return dataclasses.field(default=default, default_factory=default_factory,
                             metadata={CLI_METADATA: cli})


@dataclass(frozen=True)
class ConfigField:
    """One field of a config class, as the command line and YAML loader see it.

    Attributes:
        name: The field name (also the YAML key).
        type: The resolved type annotation.
        doc: Its text in the class docstring's ``Attributes:`` section.
        default: The default value, or :data:`dataclasses.MISSING` if required.
        cli: The :func:`option` settings (empty for a plain field).
    """

    name: str
    type: Any
    doc: str
    default: Any
    cli: Mapping[str, Any]

    @property
    def required(self) -> bool:
        """Whether the field has no default."""
        return self.default is MISSING


def field_docs(cls: type) -> dict[str, str]:
    """Field name -> documentation, from the ``Attributes:`` sections of ``cls`` and its bases.

    Example:
        >>> field_docs(ConfigField)["name"]
        'The field name (also the YAML key).'
    """
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        doc = klass.__dict__.get("__doc__")
        if isinstance(doc, str):
            docs.update(_parse_attributes(inspect.cleandoc(doc)))
    return docs


def _parse_attributes(doc: str) -> dict[str, str]:
    docs: dict[str, str] = {}
    lines = doc.splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip() == "Attributes:"), None)
    if start is None:
        return docs
    base = _indent(lines[start])
    entry_indent: int | None = None
    current: str | None = None
    for line in lines[start + 1:]:
        if not line.strip():
            continue
        indent = _indent(line)
        if indent <= base:
            break
        match = re.match(r"(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$", line.strip())
        if match and (entry_indent is None or indent == entry_indent):
            entry_indent = indent
            current = match.group(1)
            docs[current] = match.group(2).strip()
        elif current is not None:
            docs[current] = f"{docs[current]} {line.strip()}".strip()
    return docs


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def config_fields(cls: type) -> tuple[ConfigField, ...]:
    """The init fields of config dataclass ``cls``, each with type, default and documentation.

    Raises:
        ConfigError: ``cls`` is not a dataclass, or a field is not documented in its
            ``Attributes:`` section (every option's help comes from there).
    """
    if not dataclasses.is_dataclass(cls) or not isinstance(cls, type):
        raise ConfigError(f"{cls!r} is not a config dataclass")
    hints = typing.get_type_hints(cls)
    docs = field_docs(cls)
    found = []
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        if f.name not in docs:
            raise ConfigError(
                f"{cls.__name__}.{f.name} is not documented: add it to the Attributes: "
                f"section of the {cls.__name__} docstring"
            )
        if f.default is not MISSING:
            default = f.default
        elif f.default_factory is not MISSING:
            default = f.default_factory()
        else:
            default = MISSING
        found.append(ConfigField(f.name, hints[f.name], docs[f.name], default,
                                 dict(f.metadata.get(CLI_METADATA, {}))))
    return tuple(found)


# ----------------------------------------------------------------------------------
# types
# ----------------------------------------------------------------------------------
def _optional(tp: Any) -> tuple[Any, bool]:
    """``(X, True)`` for ``X | None``, else ``(tp, False)``."""
    if typing.get_origin(tp) in (Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1 and len(args) < len(typing.get_args(tp)):
            return args[0], True
    return tp, False


def _element(tp: Any) -> Any | None:
    """The element type of ``tuple[X, ...]``, else None."""
    if typing.get_origin(tp) is tuple:
        args = typing.get_args(tp)
        return args[0] if args else str
    return None


def describe_type(tp: Any) -> str:
    """What a value of type ``tp`` must be, in words (for error messages)."""
    inner, optional = _optional(tp)
    suffix = " or null" if optional else ""
    element = _element(inner)
    if element is not None:
        return f"a list (or comma list) of {describe_type(element)}{suffix}"
    if typing.get_origin(inner) is Literal:
        return "one of " + ", ".join(repr(c) for c in typing.get_args(inner)) + suffix
    names = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}
    return names.get(inner, getattr(inner, "__name__", str(inner))) + suffix


def parse_text(text: str, tp: Any) -> Any:
    """A command-line string as a value of type ``tp`` (a tuple from a comma list).

    Raises:
        ValueError: The text is not a valid value; the message says what is expected.

    Example:
        >>> parse_text("0.01,0.05", tuple[float, ...]), parse_text("none", int | None)
        ((0.01, 0.05), None)
    """
    inner, optional = _optional(tp)
    if optional and text.strip().lower() in _NONE_WORDS:
        return None
    element = _element(inner)
    if element is not None:
        return tuple(parse_text(part.strip(), element) for part in text.split(",")
                     if part.strip())
    if inner is bool:
        word = text.strip().lower()
        if word in _TRUE_WORDS | _FALSE_WORDS:
            return word in _TRUE_WORDS
    elif inner is int:
        try:
            return int(text)
        except ValueError:
            pass
    elif inner is float:
        try:
            return float(text)
        except ValueError:
            pass
    elif typing.get_origin(inner) is Literal:
        if text in typing.get_args(inner):
            return text
    else:
        return text
    raise ValueError(f"expected {describe_type(tp)}, got {text!r}")


def _coerce(value: Any, tp: Any, where: str) -> Any:
    """A YAML (or Python) value as type ``tp``; strings are parsed as on the command line."""
    inner, optional = _optional(tp)
    if value is None:
        if optional:
            return None
        raise ConfigError(f"{where} must be {describe_type(tp)}, got null")
    element = _element(inner)
    if isinstance(value, str) and inner is not str and typing.get_origin(inner) is not Literal:
        try:
            return parse_text(value, tp)
        except ValueError as exc:
            raise ConfigError(f"{where}: {exc}") from None
    if element is not None and isinstance(value, list | tuple):
        return tuple(_coerce(v, element, f"{where}[{i}]") for i, v in enumerate(value))
    ok = {
        bool: isinstance(value, bool),
        int: isinstance(value, int) and not isinstance(value, bool),
        float: isinstance(value, int | float) and not isinstance(value, bool),
        str: isinstance(value, str),
    }.get(inner)
    if typing.get_origin(inner) is Literal:
        ok = value in typing.get_args(inner)
    if ok:
        return float(value) if inner is float else value
    raise ConfigError(f"{where} must be {describe_type(tp)}, got {value!r}")


# ----------------------------------------------------------------------------------
# dicts and files
# ----------------------------------------------------------------------------------
def _check_keys(cls: type, data: Mapping[str, Any], source: str) -> dict[str, Any]:
    """``data`` with keys normalised (``budget-steps`` -> ``budget_steps``); unknown ones refused."""
    names = [f.name for f in config_fields(cls)]
    checked: dict[str, Any] = {}
    for key, value in data.items():
        name = str(key).replace("-", "_")
        if name not in names:
            close = difflib.get_close_matches(name, names, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(
                f"{source}: unknown key {key!r}{hint}; valid keys: {', '.join(names)}"
            )
        checked[name] = value
    return checked


def config_from_dict(cls: type, data: Mapping[str, Any], *, source: str = "config") -> Any:
    """An instance of config class ``cls`` from a mapping; missing keys take the defaults.

    Args:
        cls: The config dataclass.
        data: Field name -> value (``-`` in a key is read as ``_``); values are checked
            against the field types (strings parsed as on the command line).
        source: Where the values come from, for error messages (a file name).

    Raises:
        ConfigError: An unknown key (the message lists the valid ones), a value of the
            wrong type, or a required field without a value.
    """
    values = _check_keys(cls, data, source)
    fields = {f.name: f for f in config_fields(cls)}
    missing = [name for name, f in fields.items() if f.required and name not in values]
    if missing:
        raise ConfigError(f"{source}: missing required key(s) {', '.join(missing)}")
    typed = {name: _coerce(value, fields[name].type, f"{source}: {name}")
             for name, value in values.items()}
    return cls(**typed)


def read_config_file(path: str | Path, cls: type, *, source: str | None = None) -> dict[str, Any]:
    """The mapping in a YAML (or JSON) file, its keys checked against config class ``cls``.

    ``source`` names the file in error messages (default: its path).

    Raises:
        ConfigError: The file is missing, is not a mapping, or has an unknown key.
    """
    import yaml

    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"config file {path} does not exist")
    try:
        from .bounded import read_yaml

        data = read_yaml(path) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path} is not valid YAML: {exc}") from None
    if not isinstance(data, Mapping):
        raise ConfigError(f"{path} must hold a mapping of option names to values, "
                          f"got {type(data).__name__}")
    return _check_keys(cls, data, source or str(path))


def load_config(cls: type, path: str | Path, **overrides: Any) -> Any:
    """Config class ``cls`` from a YAML file; ``overrides`` win over the file's values.

    Raises:
        ConfigError: See :func:`config_from_dict` and :func:`read_config_file`.
    """
    data = {**read_config_file(path, cls), **overrides}
    return config_from_dict(cls, data, source=str(path))


def command_line(command: Sequence[str], config: Any, always: Sequence[str] = ()) -> str:
    """The shell command that runs ``command`` with ``config`` (provenance of trained weights).

    Fields at their default are left out, except those named in ``always``; None is left out.

    Example:
        >>> from dataclasses import dataclass
        >>> @dataclass(frozen=True)
        ... class Train:
        ...     task: str = "OpenDrawer-v0"
        ...     batch_size: int = 256
        ...     seed: int = 0
        >>> command_line(["simjudge", "train"], Train(batch_size=64), always=("task",))
        'simjudge train --task OpenDrawer-v0 --batch-size 64'
    """
    args = list(command)
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        if value is None or (f.name not in always and value == f.default):
            continue
        args += [f"--{f.name.replace('_', '-')}", str(value)]
    return shlex.join(args)


def config_to_dict(config: Any) -> dict[str, Any]:
    """The config's fields as a JSON-ready dict (tuples as lists), for ``config.json``."""
    return {f.name: _plain(getattr(config, f.name)) for f in dataclasses.fields(config)
            if f.init}


def _plain(value: Any) -> Any:
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, Path):
        return str(value)
    return value
