"""Command-line parsers generated from config dataclasses.

A command is a config class (see :mod:`simjudge.tasks.spec.config`) and a handler that
takes an instance of it. :func:`build_command_parser` turns a table of them into one
:mod:`argparse` parser with nested subcommands; every flag, its type, choices, default and
help come from the config class (fields, annotations, defaults and the docstring's
``Attributes:`` section), so they are written once.

How fields become arguments:

- ``field_name`` -> ``--field-name`` (one-letter names: ``-k``), or the spelling given by
  :func:`~simjudge.tasks.spec.config.option` (``flag=``, ``aliases=``), or a positional
  argument (``positional=True``);
- ``bool`` -> a pair ``--x`` / ``--no-x`` (so a YAML value can be overridden either way);
- ``Literal[...]`` -> choices; ``X | None`` -> also accepts ``none``;
- ``tuple[X, ...]`` -> a comma list, or one value per repeated flag (``repeat=True``);
- a field without a default is required (from the command line or the YAML file).

Every command also takes ``--config FILE.yaml``: values from the file (keys are the field
names), overridden by the flags given on the command line.
"""

from __future__ import annotations

import argparse
import re
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from simjudge.tasks.spec.config import (
    ConfigField,
    config_fields,
    config_from_dict,
    config_to_dict,
    parse_text,
    read_config_file,
)

__all__ = [
    "CONFIG_DEST",
    "Command",
    "add_config_arguments",
    "build_command_parser",
    "command_summary",
    "config_from_args",
    "flag_of",
    "leaf_parsers",
    "record",
]

CONFIG_DEST = "_config_file"
"""Namespace attribute of ``--config FILE.yaml``."""
RESERVED = frozenset({"config"})
"""Field names a config may not use (they would clash with ``--config``)."""


@dataclass(frozen=True)
class Command:
    """One leaf command of the command line.

    Attributes:
        config: The config dataclass holding the command's options.
        handler: ``handler(config) -> exit code``.
    """

    config: type
    handler: Callable[[Any], int]


def _plain_text(text: str) -> str:
    """Docstring text for a terminal: reST roles and literals unwrapped, whitespace folded."""
    text = re.sub(r":\w+:`~?([^`]+)`", r"\1", text).replace("``", "")
    return " ".join(text.split())


def record(command: str, config: Any) -> dict[str, Any]:
    """What a run directory records of a command's config: its name and every field."""
    return {"command": command, **config_to_dict(config)}


def command_summary(cls: type) -> tuple[str, str]:
    """(help, description) of a command, from its config class docstring.

    The help is the docstring's first paragraph, the description all of it up to the
    ``Attributes:`` section.
    """
    head = (cls.__doc__ or "").split("Attributes:")[0].strip()
    first = _plain_text(head.split("\n\n")[0]) if head else cls.__name__
    return first.rstrip("."), _plain_text(head)


def flag_of(field: ConfigField) -> str:
    """The main spelling of a field's argument (its name if positional)."""
    if field.cli.get("positional"):
        return field.name
    if field.cli.get("flag"):
        return str(field.cli["flag"])
    dash = "-" if len(field.name) == 1 else "--"
    return dash + field.name.replace("_", "-")


class _Toggle(argparse.Action):
    """``--x`` sets True, ``--no-x`` (or the given negative spellings) sets False."""

    def __init__(self, option_strings: Sequence[str], dest: str, negatives: Sequence[str] = (),
                 **kwargs: Any) -> None:
        self.negatives = tuple(negatives)
        super().__init__(option_strings, dest, nargs=0, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        setattr(namespace, self.dest, option_string not in self.negatives)

    def format_usage(self) -> str:
        return " | ".join(self.option_strings)


def _shown(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple | list):
        return ",".join(_shown(v) for v in value) or "none"
    return str(value)


def _help(field: ConfigField) -> str:
    text = _plain_text(field.doc)
    if field.required:
        if not field.cli.get("positional"):
            text += " (required)"
    elif not re.search(r"\(default\b", text):
        shown = field.cli.get("shown_default") or _shown(field.default)
        text += f" (default: {shown})"
    return text.replace("%", "%%")


def _converter(tp: Any, name: str) -> Callable[[str], Any]:
    def convert(text: str) -> Any:
        try:
            return parse_text(text, tp)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = name
    return convert


def add_config_arguments(parser: argparse.ArgumentParser, cls: type) -> None:
    """Add one argument per field of config class ``cls``, plus ``--config FILE.yaml``.

    Every argument defaults to "not given" (:data:`argparse.SUPPRESS`), so that
    :func:`config_from_args` can layer defaults, the YAML file and the flags.

    Raises:
        ValueError: A field is named like a reserved option, or is undocumented.
    """
    for field in config_fields(cls):
        if field.name in RESERVED:
            raise ValueError(f"{cls.__name__}.{field.name}: the name is reserved by the CLI")
        _add_field(parser, field)
    parser.add_argument(
        "--config", dest=CONFIG_DEST, metavar="FILE.yaml", default=argparse.SUPPRESS,
        help="read options from a YAML file (keys: the option names with _ for -); flags "
        "given on the command line override it",
    )
    parser.set_defaults(_config_cls=cls, _parser=parser)


def _add_field(parser: argparse.ArgumentParser, field: ConfigField) -> None:
    inner, _ = _optional(field.type)
    help_text = _help(field)
    names = [flag_of(field), *field.cli.get("aliases", ())]
    common: dict[str, Any] = {"default": argparse.SUPPRESS, "help": help_text}
    if typing.get_origin(inner) is Literal:
        common["choices"] = typing.get_args(inner)
    elif not field.cli.get("positional") and inner is not bool:
        common["metavar"] = names[0].lstrip("-").replace("-", "_").upper()
    if field.cli.get("positional"):
        parser.add_argument(field.name, nargs="?", type=_converter(field.type, field.name),
                            **common)
        return
    if inner is bool:
        negative = field.cli.get("negative") or "--no-" + names[0].lstrip("-")
        parser.add_argument(*names, negative, dest=field.name, action=_Toggle,
                            negatives=(negative,), **common)
        return
    element = typing.get_origin(inner) is tuple and typing.get_args(inner)[0]
    if element and field.cli.get("repeat"):
        parser.add_argument(*names, dest=field.name, action="append",
                            type=_converter(element, field.name), **common)
        return
    parser.add_argument(*names, dest=field.name, type=_converter(field.type, field.name),
                        **common)


def _optional(tp: Any) -> tuple[Any, bool]:
    args = typing.get_args(tp)
    if type(None) in args and len(args) == 2:
        return next(a for a in args if a is not type(None)), True
    return tp, False


def config_from_args(args: argparse.Namespace) -> Any:
    """The config of the parsed command: defaults, then ``--config`` file, then flags.

    Raises:
        ConfigError: The YAML file has an unknown key or a bad value, or a value is
            invalid for the config class (its own checks).
        SystemExit: A required option has no value (argparse's usage error).
    """
    cls: type = args._config_cls
    parser: argparse.ArgumentParser = args._parser
    values: dict[str, Any] = {}
    source = "command line"
    if getattr(args, CONFIG_DEST, None):
        path = str(getattr(args, CONFIG_DEST))
        source = f"{path} (config of `simjudge {args._command}`)"
        values.update(read_config_file(path, cls, source=source))
    fields = config_fields(cls)
    given = {f.name: getattr(args, f.name) for f in fields if hasattr(args, f.name)}
    values.update(given)
    missing = [flag_of(f) for f in fields if f.required and f.name not in values]
    if missing:
        parser.error(f"the following arguments are required: {', '.join(missing)}")
    return config_from_dict(cls, values, source=source)


def build_command_parser(
    prog: str,
    description: str,
    commands: Mapping[tuple[str, ...], Command],
    groups: Mapping[tuple[str, ...], str],
) -> argparse.ArgumentParser:
    """The parser of a command tree.

    Args:
        prog: Program name.
        description: Program description.
        commands: Command path (``("pool", "search")``) -> :class:`Command`, in display order.
        groups: Path of a command group (``("pool",)``) -> its one-line help.

    Returns:
        A parser whose namespace has ``_handler``, ``_config_cls`` and ``_command`` (the
        path joined by spaces) for the chosen leaf; see :func:`config_from_args`.
    """
    from simjudge.cli_table import add_command_tree

    parser = argparse.ArgumentParser(prog=prog, description=description)
    leaves = add_command_tree(
        parser, ((path, *command_summary(command.config)) for path, command in commands.items()),
        groups)
    for path, command in commands.items():
        leaf = leaves[path]
        add_config_arguments(leaf, command.config)
        leaf.set_defaults(_handler=command.handler, _command=" ".join(path))
    return parser


def leaf_parsers(parser: argparse.ArgumentParser) -> dict[tuple[str, ...], argparse.ArgumentParser]:
    """Command path -> the leaf parser of that command (for documentation and tests)."""
    found: dict[tuple[str, ...], argparse.ArgumentParser] = {}

    def walk(p: argparse.ArgumentParser, path: tuple[str, ...]) -> None:
        subs = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            found[path] = p
            return
        for name, child in subs[0].choices.items():
            walk(child, (*path, name))

    walk(parser, ())
    return found
